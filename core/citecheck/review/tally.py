"""Progress and the next item, counted from the labels rather than from the log.

The review page runs again on every key press.  Walking every item of the log on each run to
count a reviewer's progress cost 59 ms at 20,000 answers and 297 ms at 100,000, so the work per
key press grew with the log.  Here the log is indexed once per data load (item key ->
fingerprints, answer id -> position), and each run only walks the current labels, which the page
has read anyway: a key press costs the same on a log of any size.

The results are those of :func:`.queue.team_progress` and :func:`.queue.next_in_queue` (tests
compare them on random queues).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from citecheck.contract.item_keys import parse_item_key
from citecheck.labelling.dataset import Dataset, _long_lived
from citecheck.labelling.items import Item
from citecheck.review.queue import TeamProgress


def fingerprints(data: Dataset) -> dict[str, tuple[str, ...]]:
    """Item key -> the fingerprint of each item with that key (one, unless an answer id is
    repeated in the logs), computed once per dataset."""

    def build() -> dict[str, tuple[str, ...]]:
        # (built, with the items, as the dataset's own long-lived objects: out of later collections)
        with _long_lived():
            out: dict[str, tuple[str, ...]] = {}
            for item in data.all_items:
                out[item.key] = out.get(item.key, ()) + (item.fingerprint,)
        return out

    return data.memo("tally:fingerprints", build)


def team_progress(index: Mapping[str, tuple[str, ...]], total: int, team: dict[str, dict[str, str]],
                  reviewer: str, overlap: int = 1) -> TeamProgress:
    """The reviewer's own count and the team's done count over ``total`` items, from the labels
    (``team``, see :func:`.queue.labellers`) and the items' fingerprints (``index``)."""
    own = done = 0
    for key, who in team.items():
        for fp in index.get(key, ()):
            own += who.get(reviewer) == fp
            done += sum(f == fp for f in who.values()) >= overlap
    return TeamProgress(own, done, total, overlap)


def positions(ids: Sequence[str]) -> dict[str, int]:
    """Answer id -> its first position in ``ids``."""
    out: dict[str, int] = {}
    for n, answer_id in enumerate(ids):
        out.setdefault(answer_id, n)
    return out


KEPT_LISTS = ("answer_ids", "answer_ids:failing", "answer_ids:failed", "answer_ids:refused")  # memo keys of queue.answer_ids


def positions_in(data: Dataset, ids: Sequence[str]) -> dict[str, int]:
    """:func:`positions` of ``ids``, computed once per dataset when ``ids`` is one of the lists
    the dataset keeps (:func:`.queue.answer_ids` of a filter the log alone decides)."""
    for key in KEPT_LISTS:
        if data._memo.get(key) is ids:  # that very list, which lives as long as the dataset
            return data.memo(f"tally:positions:{key}", lambda: positions(ids))
    return positions(ids)


def next_item(ids: Sequence[str], where: Mapping[str, int], items_of: Callable[[str], Sequence[Item]],
              team: dict[str, dict[str, str]], reviewer: str, overlap: int = 1,
              after: tuple[str, int] | None = None, claimed: Mapping[str, int] | None = None) -> tuple[str, int] | None:
    """(answer id, item position) of the reviewer's next item after ``after``, as
    :func:`.queue.next_in_queue` over the answers ``ids`` (``where`` maps an id to its position
    in ``ids``; ``items_of`` gives an answer's items).  Items others have started are found from
    the labels; untouched ones by walking on from ``after``, which stops at the first one.
    ``claimed``: as for :func:`.queue.next_in_queue`."""
    if not ids:
        return None
    claimed = claimed or {}
    start = (0, 0)
    if after is not None and after[0] in where and 0 <= after[1] < len(items_of(after[0])):
        start = (where[after[0]], after[1] + 1)

    def order(place: tuple[int, int]) -> tuple[int, int, int]:
        return (0 if place >= start else 1, *place)

    started = []
    for key, who in (team.items() if overlap > 1 else ()):  # (with one reviewer an item is untouched or done)
        answer_id = parse_item_key(key).answer_id
        if answer_id not in where:
            continue
        for n, item in enumerate(items_of(answer_id)):
            if item.key != key or who.get(reviewer) == item.fingerprint:
                continue
            have = sum(fp == item.fingerprint for fp in who.values())
            if 0 < have and have + claimed.get(key, 0) < overlap:
                started.append(order((where[answer_id], n)))
    if started:
        _, p, n = min(started)
        return ids[p], n

    for step in range(len(ids) + 1):  # round once: the last step is the start answer's first items
        p = (start[0] + step) % len(ids)
        items = items_of(ids[p])
        first = start[1] if step == 0 else 0
        last = start[1] if step == len(ids) else len(items)
        for n in range(first, min(last, len(items))):
            who = team.get(items[n].key, {})
            fp = items[n].fingerprint
            if who.get(reviewer) != fp and sum(f == fp for f in who.values()) + claimed.get(items[n].key, 0) < overlap:
                return ids[p], n
    return None
