"""Who is working on what: assigned items, items held open, and the releases a timeout calls for.

Built once per read of the labels store (:meth:`Work.of`), from the assignment, release and open
events (``labelling.assignments``) and the labels that count; a key press then only asks it
questions, with the time given (so tests use a fake clock).

The rules (docs/labels-format.md, "Assignments"):

- A reviewer's **assigned items** are the keys every assignment gives them, in the order given,
  less those a release took back.  An assigned item is done for them once they hold a label on it.
- An item a reviewer opened is **held** for them from the ``open`` until a label of theirs on it
  or a release of it for them is written after it, or the lock times out (``lock_minutes`` of the assignment that gave it to them,
  else the server's setting, else 30 minutes).
- An item is **claimed** by every reviewer who holds it, and by every reviewer it is assigned to
  who has not labelled it yet.  Another reviewer's queue serves it only while its labels and the
  claims of others are fewer than the overlap asks for; the reviewer it is assigned to is served
  it unless labels and other reviewers' holds already make up the overlap.
- An assigned item whose reviewer opened it and let the lock time out without labelling it
  **goes back to the pool**: whichever session notices writes a ``lock-timeout`` release
  (:func:`notice_timeouts`).  Two sessions noticing at once write two releases, which read as one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from citecheck.contract.item_keys import parse_item_key
from citecheck.labelling import labels as label_store
from citecheck.labelling.assignments import (
    LOCK_MINUTES,
    Assignment,
    Open,
    Release,
    make_open,
    make_release,
    timestamp,
)
from citecheck.labelling.items import Item
from citecheck.review import queue

Place = tuple[str, int]  # (answer id, item position)


@dataclass(frozen=True, slots=True)
class Hold:
    item: str
    reviewer: str
    opened: datetime
    assignments: tuple[str, ...]  # the assignments that give the item to the reviewer (at or before the open)
    lock_minutes: int | None  # from an assignment, None: the server's setting

    def until(self, default_lock: int) -> datetime:
        return self.opened + timedelta(minutes=self.lock_minutes or default_lock)


@dataclass(frozen=True, slots=True)
class Given:
    """What the assignments in effect give, made from the assignments and releases alone (so kept
    while neither changes)."""

    assigned: Mapping[str, tuple[tuple[str, str], ...]]  # reviewer -> (item key, assignment id), queue order
    assignees: Mapping[str, frozenset[str]]  # item key -> the reviewers it is given to
    by: Mapping[tuple[str, str], tuple[Assignment, ...]]  # (item, reviewer) -> the assignments giving it

    @classmethod
    def of(cls, made: Sequence[Assignment], released: Collection[tuple[str, str, str]]) -> Given:
        by: dict[tuple[str, str], list[Assignment]] = {}
        assigned: dict[str, list[tuple[str, str]]] = {}
        for a in made:
            for who, keys in a.items:
                for key in keys:
                    if (a.assignment, key, who) in released:
                        continue
                    if (key, who) not in by:
                        assigned.setdefault(who, []).append((key, a.assignment))
                    by.setdefault((key, who), []).append(a)
        assignees: dict[str, set[str]] = {}
        for key, who in by:
            assignees.setdefault(key, set()).add(who)
        return cls({w: tuple(v) for w, v in assigned.items()}, {k: frozenset(v) for k, v in assignees.items()},
                   {k: tuple(v) for k, v in by.items()})


class Scan:
    """The one pass over the store's events that :meth:`Work.of` needs (assignments, releases, the
    opens no later label or release ended, who has labelled), kept between reads: the store is
    append-only, so a read that holds the events seen before, and more, costs only the events
    appended since, and what the assignments give is made again only when one is added or
    released.  A read that does not start with the events seen (another store, a shorter one) is
    scanned from the start.  Safe to share between sessions (a lock around each feed)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._seen = 0
        self._last: object = None
        self._made: list[Assignment] = []
        self._released: set[tuple[str, str, str]] = set()
        self._opened: dict[tuple[str, str], str] = {}
        self._names: set[str] = set()
        self._given: tuple[tuple[int, int], Given] | None = None

    def feed(self, events: Sequence[object]) -> tuple[tuple[Assignment, ...], Given, dict[tuple[str, str], str],
                                                       frozenset[str]]:
        """(the assignments, what they give, the live opens (item, reviewer) -> at, every labeller's name)."""
        with self._lock:
            if len(events) < self._seen or (self._seen and events[self._seen - 1] != self._last):
                self._reset()  # (not the events seen before: start again)
            for e in events[self._seen:]:  # in the order written: a label ends its reviewer's open before it
                if type(e) is label_store.Label:  # (most events: handled first)
                    self._names.add(e.reviewer)
                    if self._opened:
                        self._opened.pop((e.item, e.reviewer), None)
                elif isinstance(e, Open):
                    self._opened[(e.item, e.reviewer)] = e.at
                elif isinstance(e, Assignment):
                    self._made.append(e)
                elif isinstance(e, Release):
                    self._released.add((e.assignment, e.item, e.reviewer))
                    self._opened.pop((e.item, e.reviewer), None)
            self._seen, self._last = len(events), events[-1] if events else None
            sizes = (len(self._made), len(self._released))
            if self._given is None or self._given[0] != sizes:
                self._given = (sizes, Given.of(self._made, self._released))
            return tuple(self._made), self._given[1], dict(self._opened), frozenset(self._names)


class Claims(Mapping[str, int]):
    """Item key -> how many reviewers other than one claim it at a time: found per key as the queue
    asks (it asks only of the items it walks past), not made for every item on each run."""

    def __init__(self, work: Work, reviewer: str, now: datetime, lock_minutes: int) -> None:
        self._work, self._reviewer, self._now, self._lock = work, reviewer, now, lock_minutes

    def __getitem__(self, key: str) -> int:
        found = len(self._work.claimants(key, self._now, self._lock) - {self._reviewer})
        if not found:
            raise KeyError(key)
        return found

    def get(self, key: str, default=None):
        found = len(self._work.claimants(key, self._now, self._lock) - {self._reviewer})
        return found if found else default

    def __iter__(self) -> Iterator[str]:
        keys = dict.fromkeys([*self._work.given.assignees, *self._work.holds])
        return iter([k for k in keys if k in self])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        return True  # (without counting: the queue takes "no claims" as an empty dict)


@dataclass(frozen=True)
class Work:
    """The team's work as one read of the store says."""

    assignments: tuple[Assignment, ...]
    given: Given
    holds: Mapping[str, tuple[Hold, ...]]  # item key -> live holds (not ended by a label or a release)
    labelled: Collection[tuple[str, str]]  # (item key, reviewer) with a label that counts (the keys of ``current``)
    names: frozenset[str]  # everyone who has labelled

    @classmethod
    def of(cls, events: Sequence[object], current: Mapping[tuple[str, str], label_store.Label] | None = None,
           scan: Scan | None = None) -> Work:
        """``events`` as read (every kind, in the order written); ``current``: the labels that count
        per (item, reviewer), when the caller has them already (``labels.latest``); ``scan``: the
        pass over the events kept from the previous read of the same store, so only the events
        appended since are looked at (:class:`Scan`)."""
        if current is None:
            current = label_store.latest(label_store.effective(
                e for e in events if isinstance(e, label_store.Label | label_store.Retraction)))
        made, given, opened, names = (scan or Scan()).feed(events)
        holds: dict[str, list[Hold]] = {}
        for (key, who), at in opened.items():  # the opens no later label or release ended
            giving = [a for a in given.by.get((key, who), ()) if a.at <= at]
            locks = [a.lock_minutes for a in giving if a.lock_minutes]
            holds.setdefault(key, []).append(Hold(key, who, timestamp(at), tuple(a.assignment for a in giving),
                                                  max(locks) if locks else None))
        return cls(made, given, {k: tuple(v) for k, v in holds.items()}, current.keys(), names)

    @property
    def assigned(self) -> Mapping[str, tuple[tuple[str, str], ...]]:
        """Reviewer -> (item key, assignment id) of every item assigned to them, in queue order."""
        return self.given.assigned

    def assignees_left(self, key: str) -> frozenset[str]:
        """The reviewers ``key`` is assigned to who have not labelled it."""
        return frozenset(w for w in self.given.assignees.get(key, ()) if (key, w) not in self.labelled)

    def claimants(self, key: str, now: datetime, lock_minutes: int = LOCK_MINUTES) -> frozenset[str]:
        """Who claims ``key`` at ``now``: its holders and the reviewers it is assigned to who have not labelled it."""
        return self.assignees_left(key) | self.holders(key, now, lock_minutes)

    def labels_on(self, key: str) -> int:
        """How many reviewers hold a label on ``key`` that counts (any version of the item)."""
        return sum((key, who) in self.labelled for who in self.names)

    def holders(self, key: str, now: datetime, lock_minutes: int = LOCK_MINUTES) -> frozenset[str]:
        """The reviewers holding ``key`` at ``now``."""
        return frozenset(h.reviewer for h in self.holds.get(key, ()) if now < h.until(lock_minutes))

    def claimed_by_others(self, reviewer: str, now: datetime, lock_minutes: int = LOCK_MINUTES) -> Mapping[str, int]:
        """Item key -> how many reviewers other than ``reviewer`` claim it (hold it, or have it assigned
        and unlabelled) at ``now``: what the queue adds to an item's labels before it serves it.
        Found per key as asked (:class:`Claims`)."""
        return Claims(self, reviewer, now, lock_minutes)

    def timeouts(self, now: datetime, lock_minutes: int = LOCK_MINUTES) -> list[tuple[str, str, str]]:
        """(assignment id, item, reviewer) of every assigned item whose reviewer opened it and let
        the lock time out without labelling it: each to be released back to the pool."""
        return sorted({(aid, h.item, h.reviewer) for holds in self.holds.values() for h in holds
                       if h.assignments and now >= h.until(lock_minutes) for aid in h.assignments})


def assigned_text(left: int, total: int, covered: int = 0) -> str:
    """The review page's line on a reviewer's assigned work ("" when nothing is assigned to them).
    ``left``: the assigned items their queue will still serve them; ``covered``: those they have not
    labelled that it will not, because other reviewers' labels and open items make up the overlap
    there (the queue never doubles up: :func:`next_assigned`)."""
    if not total:
        return ""
    also = (f" ({covered:,} more of them already {'has' if covered == 1 else 'have'} enough labels from others, "
            "so your queue skips them)") if covered else ""
    if not left:
        if covered:
            return f"None of the {total:,} items assigned to you is left for you{also}."
        return f"All {total:,} items assigned to you are labelled."
    return f"{left:,} of {total:,} assigned to you left{also}"


def progress_text(work: Work, reviewer: str, team: dict[str, dict[str, str]],
                  items_of: Callable[[str], Sequence[Item]], now: datetime, overlap: int = 1,
                  lock_minutes: int = LOCK_MINUTES) -> str:
    """"12 of 40 assigned to you left": the one place the review page's assignment line is made,
    counted by the rule that serves them (:func:`servable`)."""
    mine = work.assigned.get(reviewer, ())
    left = covered = 0
    for key, _ in mine:
        if (key, reviewer) in work.labelled:
            continue
        others = team.get(key, {})
        if reviewer not in others and len(others) + len(work.holders(key, now, lock_minutes) - {reviewer}) < overlap:
            left += 1  # (served whatever the item's version: no lookup of its answer's items, which on a
            continue  # store is a query the first time; as before, an item gone from the logs counts as left)
        found = locate(items_of, key)
        if found is None or queue.mine(found[1], team, reviewer):
            continue  # (an item gone from the logs is neither left nor covered)
        if serves(work, found[1], reviewer, team, now, overlap, lock_minutes):
            left += 1
        else:
            covered += 1  # (others' labels and holds make up the overlap)
    return assigned_text(left, len(mine), covered)


def notice_timeouts(target: str | Path, work: Work, now: datetime, by: str,
                    lock_minutes: int = LOCK_MINUTES) -> list[Release]:
    """Write a ``lock-timeout`` release for every assigned item whose lock ran out (:meth:`Work.timeouts`),
    noticed by ``by``'s session; returns them (read the store again to see them in a new :class:`Work`)."""
    out = [make_release(aid, item, who, by or who, "lock-timeout") for aid, item, who in work.timeouts(now, lock_minutes)]
    for release in out:  # (another session may write the same release now: two read as one)
        label_store.append_event(target, release)
    return out


def open_item(target: str | Path, work: Work, key: str, reviewer: str, now: datetime,
              lock_minutes: int = LOCK_MINUTES, overlap: int = 1) -> Open | None:
    """The review page showed ``key`` to ``reviewer``: write an ``open`` (the item is now held for
    them) unless they hold it already or have labelled it, or, when it is not assigned to them,
    its labels and other reviewers' claims already make up the overlap (a reviewer looking at
    someone else's item does not take it from them).  Returns the event written, or None."""
    if not reviewer or (key, reviewer) in work.labelled or reviewer in work.holders(key, now, lock_minutes):
        return None
    if reviewer not in work.assignees_left(key):
        others = work.claimants(key, now, lock_minutes) - {reviewer}
        if work.labels_on(key) + len(others) >= overlap:
            return None
    event = make_open(key, reviewer)
    label_store.append_event(target, event)
    return event


def served(target: str | Path, work: Work, key: str, reviewer: str, now: datetime,
           lock_minutes: int = LOCK_MINUTES, overlap: int = 1) -> Open | None:
    """The review page's call for the item it shows: held for ``reviewer`` (:func:`open_item`) once
    the team works from assignments (the store holds one); a store without any is worked as before,
    with no ``open`` written."""
    return open_item(target, work, key, reviewer, now, lock_minutes, overlap) if work.assignments else None


def locate(items_of: Callable[[str], Sequence[Item]], key: str) -> tuple[Place, Item] | None:
    """Where the item ``key`` is among its answer's items, and the item; None when not loaded."""
    answer_id = parse_item_key(key).answer_id
    for n, item in enumerate(items_of(answer_id)):
        if item.key == key:
            return (answer_id, n), item
    return None


def next_assigned(work: Work, reviewer: str, team: dict[str, dict[str, str]], items_of: Callable[[str], Sequence[Item]],
                  now: datetime, overlap: int = 1, lock_minutes: int = LOCK_MINUTES) -> Place | None:
    """The reviewer's first assigned item (in assignment order) they have not labelled, whose labels
    and other reviewers' holds do not already make up the overlap; None when there is none."""
    for key, _ in work.assigned.get(reviewer, ()):
        if (key, reviewer) in work.labelled:
            continue
        place = servable(work, key, reviewer, team, items_of, now, overlap, lock_minutes)
        if place is not None:
            return place
    return None


def servable(work: Work, key: str, reviewer: str, team: dict[str, dict[str, str]],
             items_of: Callable[[str], Sequence[Item]], now: datetime, overlap: int = 1,
             lock_minutes: int = LOCK_MINUTES) -> Place | None:
    """Where the assigned item ``key`` is, when the reviewer's queue would serve it to them: it is in
    the logs, they have no current label on it, and its labels and other reviewers' holds do not
    already make up the overlap; None otherwise."""
    found = locate(items_of, key)
    return found[0] if found is not None and serves(work, found[1], reviewer, team, now, overlap, lock_minutes) else None


def serves(work: Work, item: Item, reviewer: str, team: dict[str, dict[str, str]], now: datetime, overlap: int = 1,
           lock_minutes: int = LOCK_MINUTES) -> bool:
    """Whether the reviewer's queue serves them ``item``: they have no current label on it, and its
    labels and other reviewers' holds do not already make up the overlap."""
    if queue.mine(item, team, reviewer):
        return False
    held = len(work.holders(item.key, now, lock_minutes) - {reviewer})
    return queue.count(item, team) + held < overlap


def next_place(work: Work, reviewer: str, team: dict[str, dict[str, str]], items_of: Callable[[str], Sequence[Item]],
               now: datetime, pool: Callable[[Mapping[str, int]], Place | None], overlap: int = 1,
               lock_minutes: int = LOCK_MINUTES) -> Place | None:
    """The reviewer's next item: their first assigned one (:func:`next_assigned`), else what
    ``pool`` (the ordinary queue, given the claims of others to count as labels to come) serves."""
    place = next_assigned(work, reviewer, team, items_of, now, overlap, lock_minutes)
    return place if place is not None else pool(work.claimed_by_others(reviewer, now, lock_minutes))


def assignment_rows(work: Work) -> list[dict[str, object]]:
    """One row per (assignment, reviewer) for the lead's table: what was given, what is still
    theirs (not released) and what of that is left to label."""
    rows: list[dict[str, object]] = []
    for a in work.assignments:
        for who, keys in a.items:
            kept = {k for k, aid in work.assigned.get(who, ()) if aid == a.assignment}
            left = sum((k, who) not in work.labelled for k in kept)
            rows.append({"assignment": a.assignment, "lead": a.lead, "source": a.source, "due": a.due or "none",
                         "reviewer": who, "given": len(keys), "released": len(set(keys)) - len(kept), "left": left,
                         "made": a.at})
    return rows


def unlabelled_of(work: Work, assignment: str, reviewer: str) -> list[str]:
    """The items of ``assignment`` still with ``reviewer`` that they have not labelled (what a lead's release takes back)."""
    return [k for k, aid in work.assigned.get(reviewer, ()) if aid == assignment and (k, reviewer) not in work.labelled]


def release_all(target: str | Path, work: Work, assignment: str, reviewer: str, by: str,
                reason: str = "lead") -> list[Release]:
    """A lead takes back what ``reviewer`` has left of ``assignment``: one release per item, back to the pool."""
    out = [make_release(assignment, key, reviewer, by, reason) for key in unlabelled_of(work, assignment, reviewer)]
    for release in out:
        label_store.append_event(target, release)
    return out


def for_run(target: str | Path, events: Sequence[object], current: Mapping[tuple[str, str], label_store.Label],
            reviewer: str, now: datetime, lock_minutes: int = LOCK_MINUTES, scan: Scan | None = None) -> Work:
    """The review page's one call per run: the team's work from the events it read (``scan``: as
    for :meth:`Work.of`), with the timeouts noticed now released (by this session's reviewer) and
    taken into account."""
    work = Work.of(events, current, scan)
    if reviewer and work.timeouts(now, lock_minutes):
        released = notice_timeouts(target, work, now, reviewer, lock_minutes)
        work = Work.of([*events, *released], current)  # (not kept: the next read has them in the store's order)
    return work
