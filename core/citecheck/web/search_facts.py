"""What the review page's item filters are decided from (``review.search.Facts``), gathered from
what the page has read: the labels that count, the verdicts (unstable items across repeated runs
too), the comment threads of the labels store and the team's assignments."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set

from citecheck.judging.consistency import unstable_keys
from citecheck.labelling.comments import threads
from citecheck.labelling.labels import Label
from citecheck.review.search import Facts, verdicts_by_run


def facts_of(current: Mapping[tuple[str, str], Label], verdicts: Iterable, events: Iterable[object],
             assignees: Mapping[str, Set[str]] | None = None,
             given_by: Mapping[tuple[str, str], Sequence[object]] | None = None) -> Facts:
    """``current``: the labels that count; ``verdicts``: every verdict record; ``events``: the
    labels store's records in the order written; ``assignees`` (item key -> reviewers) and
    ``given_by`` ((item, reviewer) -> the assignments giving it) from ``review.holds.Given``."""
    verdicts = list(verdicts)
    assignment_of: dict[str, str] = {}
    for (key, _), made in (given_by or {}).items():
        if made and key not in assignment_of:
            assignment_of[key] = str(getattr(made[0], "assignment", ""))
    return Facts(labels=current, verdicts=verdicts_by_run(verdicts), assigned=dict(assignees or {}),
                 assignment_of=assignment_of,
                 threads={key: "open" if t.open else "resolved" for key, t in threads(events).items()},
                 unstable=unstable_keys(verdicts))
