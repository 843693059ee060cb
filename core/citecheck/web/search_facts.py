"""What the review page's item filters are decided from (``review.search.Facts``), gathered from
what the page has read: the labels that count, the verdicts (unstable items across repeated runs
too), the comment threads of the labels store and the team's assignments.

The parts that change rarely (:func:`verdict_facts`, :func:`thread_states`) are made by their own
functions, so a page can keep each until its source changes; :func:`facts_of` only puts them together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import replace

from citecheck.judging.consistency import unstable_keys
from citecheck.labelling.comments import threads
from citecheck.labelling.labels import Label
from citecheck.review.search import Facts, verdicts_by_run


def verdict_facts(verdicts: Iterable) -> tuple[dict[str, dict[str, str]], frozenset[str]]:
    """From every verdict record: each judge run's verdict per item (ordinary runs), and the items
    whose verdict changed across repeated runs."""
    verdicts = list(verdicts)
    return verdicts_by_run(verdicts), unstable_keys(verdicts)


def thread_states(events: Iterable[object]) -> dict[str, str]:
    """Thread key (an item key or an answer id) -> "open" or "resolved", from the labels store's events."""
    return {key: "open" if t.open else "resolved" for key, t in threads(events).items()}


def facts_of(current: Mapping[tuple[str, str], Label], verdicts: tuple[Mapping[str, Mapping[str, str]], Set[str]],
             threads_state: Mapping[str, str], assignees: Mapping[str, Set[str]] | None = None,
             given_by: Mapping[tuple[str, str], Sequence[object]] | None = None) -> Facts:
    """``current``: the labels that count; ``verdicts``: :func:`verdict_facts`; ``threads_state``:
    :func:`thread_states`; ``assignees`` (item key -> reviewers) and ``given_by`` ((item, reviewer) ->
    the assignments giving it) from ``review.holds.Given``."""
    assignment_of: dict[str, str] = {}
    for (key, _), made in (given_by or {}).items():
        if made and key not in assignment_of:
            assignment_of[key] = str(getattr(made[0], "assignment", ""))
    by_run, unstable = verdicts
    return Facts(labels=current, verdicts=by_run, assigned=assignees or {}, assignment_of=assignment_of,
                 threads=threads_state, unstable=unstable)


def as_seen_by(facts: Facts, reviewer: str) -> Facts:
    """What blind mode lets ``reviewer`` search by: on an item they have not labelled, nothing of the
    other reviewers' labels or notes, the judges' verdicts or its comment thread, as the item itself
    shows none of them until then; threads on a whole answer not at all.  Their own labels, the
    assignments and the answers' own text stay.  (Searched in full, a filter such as "Labelled by
    ana" or a word of her note told a blind reviewer what the item hid.)"""
    mine = {key for key, who in facts.labels if who == reviewer} if reviewer else set()
    return replace(facts, labels={k: v for k, v in facts.labels.items() if k[0] in mine},
                   verdicts={run: {k: v for k, v in by_item.items() if k in mine}
                             for run, by_item in facts.verdicts.items()},
                   threads={k: v for k, v in facts.threads.items() if k in mine},
                   unstable=frozenset(k for k in facts.unstable if k in mine))
