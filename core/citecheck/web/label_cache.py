"""The labels store read incrementally, with the labels that count, and the figures the review
page makes from them on every key press, kept up to date as events are appended.

:meth:`LabelCache.state` gives the events and warnings ``labels.read_events`` gives, and the
labels that count (``labels.effective``) and the current label per (item, reviewer)
(``labels.latest``) exactly as those functions would make them from the events, but:

- the events come from a :class:`~citecheck.storage.event_cache.EventCache` (only what was
  appended since the last read is read);
- when only labels and other events were appended (no retraction), the new labels are applied in
  order to the kept ``effective`` and ``latest``; a retraction (which may withdraw any earlier
  label) makes them again from all the events;
- the figures made from the current labels (:meth:`LabelCache.team`, :meth:`LabelCache.others`,
  :meth:`LabelCache.progress`: ``queue.labellers``, ``labels.others_by_item`` and the team's
  progress) are kept, and updated with the labels applied since, the same way.

One cache per labels store is shared by every session of a server; each call runs under a lock.
The ``current`` mapping and the figures are shared by the sessions that read the same events:
they are never changed once handed out (an update makes new ones), and callers must not change
them either.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citecheck.contract.item_keys import parse_item_key
from citecheck.errors import RecordError
from citecheck.labelling import comments, labels
from citecheck.labelling.events import Retraction
from citecheck.labelling.labels import Event, Label
from citecheck.review import queue
from citecheck.storage.event_cache import EventCache, Snapshot
from citecheck.web.answer_walk import progress as team_progress

Current = dict[tuple[str, str], Label]
Team = dict[str, dict[str, str]]  # queue.labellers: item key -> reviewer -> fingerprint of their current label


@dataclass(frozen=True)
class LabelState:
    """One read of the labels store, and the labels that count in it."""

    events: list[Event]
    errors: list[RecordError]
    effective: list[Label]  # labels.effective(events)
    current: Current  # labels.latest(effective); shared, not to be changed
    version: tuple[int, int, int, int]  # ``Snapshot.version``: changes whenever what was read changes
    on_item: Callable[[str], list[Event]] = field(default=lambda key: [], repr=False, compare=False)
    kinds: Mapping[type, int] = field(default_factory=dict, repr=False, compare=False)  # events of each type

    def item_events(self, key: str) -> list[Event]:
        """The events naming item ``key`` (``item``), in the order written: what filtering ``events``
        gives, found in an index kept with the cache."""
        return self.on_item(key)


_epochs = itertools.count(1)


class _Made:
    """``effective`` and ``latest`` of a run of events, and the retractions among them.  ``epoch``
    changes when they are made again (a retraction); within an epoch ``effective`` only grows."""

    def __init__(self, events: Sequence[Event]) -> None:
        self.epoch = next(_epochs)
        self.retracted = {(e.item, e.reviewer, e.retracts, e.label) for e in events if isinstance(e, Retraction)}
        self.effective = [e for e in events if isinstance(e, Label)
                          and (e.item, e.reviewer, e.at, e.label) not in self.retracted]
        self.current: dict[tuple[str, str], Label] = labels.latest(self.effective)

    def add(self, events: Sequence[Event]) -> bool:
        """Apply ``events`` appended after those made; False (nothing changed) when one is a retraction.
        ``current`` is replaced, not changed: one handed out stays as it was."""
        if any(isinstance(e, Retraction) for e in events):
            return False
        new = [e for e in events if isinstance(e, Label) and (e.item, e.reviewer, e.at, e.label) not in self.retracted]
        if new:
            self.effective.extend(new)
            self.current = dict(self.current)
            for e in new:
                self.current[(e.item, e.reviewer)] = e
        return True

    def ahead(self, events: Sequence[Event], everything: Sequence[Event]) -> tuple[list[Label], dict]:
        """(effective, current) with ``events`` applied after those made, leaving these as they are;
        made from ``everything`` when one of ``events`` is a retraction."""
        if any(isinstance(e, Retraction) for e in events):
            made = _Made(everything)
            return made.effective, made.current
        effective, current = list(self.effective), dict(self.current)
        for e in events:
            if isinstance(e, Label) and (e.item, e.reviewer, e.at, e.label) not in self.retracted:
                effective.append(e)
                current[(e.item, e.reviewer)] = e
        return effective, current


class LabelCache:
    """The labels store of one target, read and made incrementally (see the module's docstring)."""

    def __init__(self, target: str | Path, reader: EventCache | None = None) -> None:
        self.reader = reader or EventCache(target, labels.STREAM, labels.parse_record)
        self._lock = threading.Lock()
        self._made: tuple[int, int, _Made] | None = None  # (generation, settled events made, what they make)
        self._handed: OrderedDict[int, tuple[Current, _Made, int]] = OrderedDict()  # id(current) -> its making
        self._figures_lock = threading.Lock()
        self._figures: dict[Hashable, tuple[int, int, Any, Any]] = {}  # key -> (epoch, labels applied, anchor, value)
        self._derived: dict[Hashable, tuple[Hashable, Any]] = {}
        # (generation, events indexed, item key -> (position, event), events of each type)
        self._index: tuple[int, int, dict[str, list[tuple[int, Event]]], dict[type, int]] = (0, 0, {}, {})
        self._names: tuple[int, int, frozenset[str]] = (0, 0, frozenset())  # (generation, events, names)

    def state(self) -> LabelState:
        snap = self.reader.read()
        with self._lock:
            made = self._settled(snap)
            on_item, kinds = self._indexed(snap)
            tail = snap.records[snap.settled:]
            if tail:  # (a tail read again next time: applied to copies, never kept)
                effective, current = made.ahead(tail, snap.records)
                return LabelState(snap.records, snap.errors, effective, current, snap.version, on_item, kinds)
            current = made.current
            self._handed[id(current)] = (current, made, len(made.effective))
            self._handed.move_to_end(id(current))
            while len(self._handed) > 8:
                self._handed.popitem(last=False)
            return LabelState(snap.records, snap.errors, list(made.effective), current, snap.version, on_item, kinds)

    def _indexed(self, snap: Snapshot) -> tuple[Callable[[str], list[Event]], dict[type, int]]:
        """The events of an item in ``snap`` (as ``[e for e in snap.records if e.item == key]``), from
        an index of the settled events kept and extended as they are read."""
        generation, count, index, kinds = self._index
        if generation != snap.generation or count > snap.settled:
            if generation == snap.generation:  # (a read another session's has overtaken: an index for it alone)
                index, count, kinds = {}, 0, {}
            else:
                index, count, kinds = {}, 0, {}
                self._index = (snap.generation, 0, index, kinds)
        for pos in range(count, snap.settled):
            event = snap.records[pos]
            kinds[type(event)] = kinds.get(type(event), 0) + 1
            key = getattr(event, "item", None)
            if key is not None:
                index.setdefault(key, []).append((pos, event))
        if self._index[2] is index:
            self._index = (snap.generation, snap.settled, index, kinds)
        settled, tail = snap.settled, snap.records[snap.settled:]

        def on_item(key: str) -> list[Event]:
            return ([e for pos, e in index.get(key, ()) if pos < settled]
                    + [e for e in tail if getattr(e, "item", None) == key])

        counted = dict(kinds)
        for event in tail:
            counted[type(event)] = counted.get(type(event), 0) + 1
        return on_item, counted

    def _settled(self, snap: Snapshot) -> _Made:
        """What the settled events of ``snap`` make, from the kept one when ``snap`` reads on from it."""
        if self._made is not None:
            generation, count, made = self._made
            if generation == snap.generation and count <= snap.settled:
                if count == snap.settled or made.add(snap.records[count:snap.settled]):
                    self._made = (generation, snap.settled, made)
                    return made
            elif generation == snap.generation:  # (a read that another session's has overtaken: made for it alone)
                return _Made(snap.records[:snap.settled])
        made = _Made(snap.records[:snap.settled])
        self._made = (snap.generation, snap.settled, made)
        return made

    # --- figures made from the current labels -----------------------------------------------------

    def team(self, current: Current) -> Team:
        """``queue.labellers(current)``."""
        return self._figure(current, "team", lambda: queue.labellers(current), _team_with)

    def others(self, current: Current, reviewer: str) -> dict[str, list[Label]]:
        """``labels.others_by_item(current, reviewer)``."""
        return self._figure(current, ("others", reviewer), lambda: labels.others_by_item(current, reviewer),
                            lambda old, new: _others_with(old, new, reviewer))

    def progress(self, data, current: Current, reviewer: str, overlap: int = 1) -> queue.TeamProgress:
        """``web.answer_walk.progress(data, queue.labellers(current), reviewer, overlap)``: the
        reviewer's and the team's progress over every item of ``data``.  Labels applied since it was
        last made change it by what they change in their answers only."""
        team = self.team(current)

        def make() -> tuple[queue.TeamProgress, Team]:
            return team_progress(data, team, reviewer, overlap), team

        def update(old: tuple[queue.TeamProgress, Team], new: Sequence[Label]) -> tuple[queue.TeamProgress, Team]:
            figures, before = old
            keys = {e.item for e in new}
            for answer_id in {parse_item_key(k).answer_id for k in keys}:
                keys.update(item.key for item in data.items(answer_id))
            was = team_progress(data, {k: before[k] for k in keys if k in before}, reviewer, overlap)
            now = team_progress(data, {k: team[k] for k in keys if k in team}, reviewer, overlap)
            return queue.TeamProgress(figures.mine - was.mine + now.mine, figures.done - was.done + now.done,
                                      figures.total, overlap), team

        return self._figure(current, ("progress", id(data), reviewer, overlap), make, update, anchor=data)[0]

    def _figure(self, current: Current, key: Hashable, make: Callable[[], Any], update: Callable[[Any, list], Any],
                anchor: Any = None) -> Any:
        """The figure ``key`` of ``current``: kept, brought up to date with ``update(old, labels
        applied since)``, or made (``make()``) when ``current`` is not one this cache handed out
        with nothing ahead of it, or with another ``anchor`` (the answers a figure counts over)."""
        with self._lock:
            handed = self._handed.get(id(current))
        if handed is None or handed[0] is not current:
            return make()
        _, made, applied = handed
        with self._figures_lock:
            found = self._figures.get(key)
            if found is not None and found[0] == made.epoch and found[2] is anchor:
                if found[1] == applied:
                    return found[3]
                if found[1] > applied:  # (this session is behind the figure kept: made for it alone)
                    return make()
                value = update(found[3], made.effective[found[1]:applied])
            else:
                value = make()
            if len(self._figures) > 64:
                self._figures.clear()
            if anchor is not None:  # (figures over other answers, a store since replaced: not kept alive)
                for other in [k for k, f in self._figures.items() if f[2] is not None and f[2] is not anchor]:
                    del self._figures[other]
            self._figures[key] = (made.epoch, applied, anchor, value)
            return value

    def derived(self, state: LabelState, key: Hashable, make: Callable[[LabelState], Any],
                kinds: tuple[type, ...] = ()) -> Any:
        """``make(state)``, kept under ``key`` until the store changes (the value is shared: do not change
        it); with ``kinds``, a figure made from events of those types only: kept until one of them is
        appended (an ``open`` written on every move does not make the comment threads again)."""
        version: Hashable = state.version
        if kinds and state.version[1] == state.version[3]:  # (nothing unsettled read: counts tell what changed)
            version = (state.version[0], tuple(state.kinds.get(k, 0) for k in kinds))
        with self._figures_lock:
            found = self._derived.get(key)
            if found is not None and found[0] == version:
                return found[1]
        value = make(state)
        with self._figures_lock:
            if len(self._derived) > 64:
                self._derived.clear()
            self._derived[key] = (version, value)
        return value

    def names(self, state: LabelState) -> list[str]:
        """``comments.known_reviewers(state.events)`` (everyone who labelled, commented, resolved,
        adjudicated, opened...), kept and extended with the events appended since."""
        generation, settled = state.version[0], state.version[3]
        with self._figures_lock:
            kept_generation, count, names = self._names
            if kept_generation != generation or count > settled:
                count, names = 0, frozenset()
            names = names | set(comments.known_reviewers(state.events[count:settled]))
            self._names = (generation, settled, names)
        return sorted(names | set(comments.known_reviewers(state.events[settled:])))


def _team_with(old: Team, new: Iterable[Label]) -> Team:
    """``queue.labellers`` of the current labels ``old`` was made from, with ``new`` applied in order."""
    out = dict(old)
    copied: set[str] = set()
    for e in new:
        if e.item not in copied:
            out[e.item] = dict(out.get(e.item, {}))
            copied.add(e.item)
        out[e.item][e.reviewer] = e.fingerprint
    return out


def _others_with(old: dict[str, list[Label]], new: Iterable[Label], reviewer: str) -> dict[str, list[Label]]:
    """``labels.others_by_item`` of the current labels ``old`` was made from, with ``new`` applied in order."""
    out = dict(old)
    copied: set[str] = set()
    for e in new:
        if e.reviewer == reviewer:
            continue
        if e.item not in copied:
            out[e.item] = list(out.get(e.item, []))
            copied.add(e.item)
        found = out[e.item]
        at = next((n for n, lab in enumerate(found) if lab.reviewer == e.reviewer), None)
        if at is None:
            found.append(e)
        else:
            found[at] = e
    return out
