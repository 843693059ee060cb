"""Choosing what a reviewer sees next: answer filters, the labelling queue and the team's progress.

The queue follows Prodigy's ``annotations_per_task`` and Argilla's minimum submitted responses:
with an overlap of K, an item is *done* once K different reviewers hold a current (not stale)
label on it.  A reviewer's queue skips items they have labelled and items already done, and
prefers items other reviewers have started, so double-labelled items accumulate first.  Nothing
wraps silently: when no item is left the queue says so (``None``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from citecheck.contract.item_keys import parse_item_key
from citecheck.labelling.dataset import AnswerSource, Dataset
from citecheck.labelling.items import Item
from citecheck.labelling.labels import Label, is_done
from citecheck.labelling.sample import Sample

FILTERS = {
    "All answers": "all",
    "Failing answers": "failing",  # (the Failures page's: a failed citation, uncited sentence or unsupported text)
    "With failed citations": "failed",
    "Refused": "refused",
    "Not yet labelled by me": "unlabelled",
}


def answer_ids(data: Dataset, filter_name: str, current: dict[tuple[str, str], Label], reviewer: str) -> list[str]:
    """Ids of the answers that pass the filter, in log order."""
    kind = FILTERS.get(filter_name, "all")
    if kind == "all":  # needs no check at all; one list per dataset, not one per rerun
        return data.memo("answer_ids", lambda: data.answer_ids)
    if kind in ("failing", "failed", "refused"):  # fixed by the log: walked once per dataset
        return data.memo(f"answer_ids:{kind}", lambda: _matching(data, kind, current, reviewer))
    if kind == "unlabelled":  # found from the reviewer's labels, not by checking every answer
        # every answer with an item to label whose id this reviewer has not labelled through (the
        # items of an id are its first line's): the store's rule too (answers.filtered_ids).  An
        # answer with no item, only a refusal, never hides another logged with the same id.
        with_items = data.memo("answer_ids:with_items", lambda: _matching(data, "with_items", current, reviewer))
        touched = {label.answer_id for (_, who), label in current.items() if who == reviewer}
        finished = {a for a in touched if data.items(a) and all(is_done(i, current, reviewer) for i in data.items(a))}
        return [a for a in with_items if a not in finished]
    return _matching(data, kind, current, reviewer)


def _matching(data: Dataset, kind: str, current: dict[tuple[str, str], Label], reviewer: str) -> list[str]:
    out = []
    for r, items in zip(data.results, data.items_by_answer):
        if kind == "failing" and not r.tally.problems:  # (answer_row's "failing": one definition)
            continue
        if kind == "failed" and not r.failed_citations:
            continue
        if kind == "refused" and not r.refused:
            continue
        if kind == "unlabelled" and all(is_done(i, current, reviewer) for i in items):
            continue
        if kind == "with_items" and not items:
            continue
        out.append(r.answer.answer_id)
    return out


def labellers(current: dict[tuple[str, str], Label]) -> dict[str, dict[str, str]]:
    """Per item key, each reviewer's current label's fingerprint (to tell stale labels apart)."""
    out: dict[str, dict[str, str]] = {}
    for (key, who), label in current.items():
        out.setdefault(key, {})[who] = label.fingerprint
    return out


def count(item: Item, team: dict[str, dict[str, str]]) -> int:
    """How many reviewers hold a current (not stale) label on ``item``."""
    return sum(fp == item.fingerprint for fp in team.get(item.key, {}).values())


def mine(item: Item, team: dict[str, dict[str, str]], reviewer: str) -> bool:
    return team.get(item.key, {}).get(reviewer) == item.fingerprint


def next_in_queue(answers: Sequence[tuple[str, Sequence[Item]]], team: dict[str, dict[str, str]], reviewer: str,
                  overlap: int = 1, after: tuple[str, int] | None = None,
                  claimed: Mapping[str, int] | None = None) -> tuple[str, int] | None:
    """(answer id, item position) of the reviewer's next item after ``after`` (from the start when
    None), walking ``answers`` in order and then round from the start to reach items passed over;
    an item others have started comes before an untouched one.  None when the queue is finished.
    ``claimed``: item key -> reviewers other than this one who hold it or have it assigned
    (``review.holds``); their claims count as labels to come."""
    claimed = claimed or {}
    flat = [(aid, n, item) for aid, items in answers for n, item in enumerate(items)]
    start = 0
    if after is not None:
        start = next((i + 1 for i, (aid, n, _) in enumerate(flat) if (aid, n) == after), 0)
    untouched = None
    for i in range(len(flat)):
        aid, n, item = flat[(start + i) % len(flat)]
        if mine(item, team, reviewer):
            continue
        have = count(item, team)
        if have + claimed.get(item.key, 0) >= overlap:
            continue
        if have > 0:
            return aid, n
        if untouched is None:
            untouched = (aid, n)
    return untouched


@dataclass(frozen=True, slots=True)
class TeamProgress:
    mine: int  # items this reviewer holds a current label on
    done: int  # items with at least ``overlap`` current labels
    total: int
    overlap: int


def team_progress(items: Sequence[Item], team: dict[str, dict[str, str]], reviewer: str,
                  overlap: int = 1) -> TeamProgress:
    own = done = 0
    for item in items:
        own += mine(item, team, reviewer)
        done += count(item, team) >= overlap
    return TeamProgress(own, done, len(items), overlap)


def first_unlabelled(data: Dataset, current: dict[tuple[str, str], Label], reviewer: str) -> tuple[str, int] | None:
    """(answer id, item position) of the first item this reviewer has no current label for."""
    for r, items in zip(data.results, data.items_by_answer):
        for n, item in enumerate(items):
            if not is_done(item, current, reviewer):
                return r.answer.answer_id, n
    return None


# --- working through a calibration sample -------------------------------------------------------


def sample_answer_ids(data: AnswerSource, sample: Sample) -> list[str]:
    """The answers holding sampled items, in the sample's (random) order; items not in the loaded
    logs are skipped."""
    out: dict[str, None] = {}
    for key in sample.items:
        answer_id = parse_item_key(key).answer_id
        if data.get(answer_id) is not None:
            out[answer_id] = None
    return list(out)


def next_in_sample(data: AnswerSource, sample: Sample, current: dict[tuple[str, str], Label],
                   reviewer: str) -> tuple[str, int] | None:
    """(answer id, item position) of the first sampled item, in sample order, this reviewer has
    no current label for; None when the sample is done."""
    for key in sample.items:
        answer_id = parse_item_key(key).answer_id
        if data.get(answer_id) is None:
            continue
        for n, item in enumerate(data.items(answer_id)):
            if item.key == key and not is_done(item, current, reviewer):
                return answer_id, n
    return None


def sample_progress(data: AnswerSource, sample: Sample, current: dict[tuple[str, str], Label],
                    reviewer: str) -> tuple[int, int]:
    """(sampled items this reviewer has a current label for, sampled items in the loaded logs)."""
    wanted = set(sample.items)
    done = total = 0
    for answer_id in sample_answer_ids(data, sample):
        for item in data.items(answer_id):
            if item.key in wanted:
                total += 1
                done += is_done(item, current, reviewer)
    return done, total
