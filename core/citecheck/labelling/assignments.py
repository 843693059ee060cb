"""Work given out by a lead: assignments, releases and opened items (docs/labels-format.md, "Assignments").

Three kinds of version 2 records of the labels store, appended beside the labels and never rewritten:

- An **assignment** gives item keys to reviewers (``items``: reviewer -> keys, in the order their
  queue serves them), made by a ``lead`` from a ``source`` (a sample, a filter, answer ids), with
  an optional ``due`` date and lock timeout (``lock_minutes``).
- An **open** says a reviewer opened an item: it is held for them (the queue serves it to nobody
  else unless overlap asks for another label) until they label it or the lock times out.
- A **release** ends a reviewer's hold on an item and takes it out of their assignment: the
  item goes back to the pool.  Releases are idempotent: two sessions noticing the same timeout
  write two releases, and reading both is the same as reading one.

:func:`split` shares item keys among reviewers, evenly or by share, the same way every time.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone

from citecheck import __version__
from citecheck.contract.item_keys import parse_item_key
from citecheck.errors import CitecheckError, FieldError
from citecheck.storage.lines import expect, now

EVENTS_VERSION = 2  # the labels_version of these records (as labelling.events)
ASSIGNMENT = "assignment"
RELEASE = "release"
OPEN = "open"
REASONS = ("lock-timeout", "lead", "reassigned")
LOCK_MINUTES = 30  # an opened item is held this long unless the setting or the assignment says otherwise
MAX_LOCK_MINUTES = 7 * 24 * 60  # a week


class AssignmentError(CitecheckError, ValueError):
    """An assignment that cannot be made as asked (the message says what to do)."""


@dataclass(frozen=True, slots=True)
class Assignment:
    assignment: str  # its id, unique in the store
    lead: str
    items: tuple[tuple[str, tuple[str, ...]], ...]  # (reviewer, item keys in queue order), reviewers in order
    due: str  # "YYYY-MM-DD" or ""
    source: str  # "sample:<id>", "filter:<...>", "answers"
    at: str
    citecheck: str = ""
    lock_minutes: int | None = None

    def to_record(self) -> dict:
        record = {"labels_version": EVENTS_VERSION, "event": ASSIGNMENT, "assignment": self.assignment,
                  "lead": self.lead, "items": {who: list(keys) for who, keys in self.items}, "due": self.due,
                  "source": self.source, "at": self.at, "citecheck": self.citecheck}
        if self.lock_minutes is not None:
            record["lock_minutes"] = self.lock_minutes
        return record

    @property
    def total(self) -> int:
        return sum(len(keys) for _, keys in self.items)


@dataclass(frozen=True, slots=True)
class Release:
    assignment: str  # the assignment's id, "" for a hold that was not assigned
    item: str
    reviewer: str  # whose hold ends
    by: str  # a lead, or the reviewer whose session noticed the timeout
    reason: str  # one of REASONS
    at: str
    citecheck: str = ""

    def to_record(self) -> dict:
        return {"labels_version": EVENTS_VERSION, "event": RELEASE, "assignment": self.assignment, "item": self.item,
                "reviewer": self.reviewer, "by": self.by, "reason": self.reason, "at": self.at,
                "citecheck": self.citecheck}


@dataclass(frozen=True, slots=True)
class Open:
    item: str
    reviewer: str
    at: str
    citecheck: str = ""

    def to_record(self) -> dict:
        return {"labels_version": EVENTS_VERSION, "event": OPEN, "item": self.item, "reviewer": self.reviewer,
                "at": self.at, "citecheck": self.citecheck}


# --- splitting work -------------------------------------------------------------------------------


def parse_shares(text: str) -> tuple[tuple[str, int], ...]:
    """``"alice,bob:2"`` or ``"alice=1, bob=2"`` as (reviewer, share) pairs, in the order given;
    a reviewer without a share has 1.  AssignmentError says what is wrong."""
    out: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        found = re.fullmatch(r"(.*?)\s*[:=]\s*(\d+)", part)
        name, share = (found.group(1).strip(), found.group(2)) if found else (part, "1")
        if len(share) > 4 or not 1 <= int(share) <= 1000:
            raise AssignmentError(f"{name}: a share must be a whole number from 1 to 1000, not {share}")
        if not name:
            raise AssignmentError(f"{part!r} names no reviewer; write reviewers as alice,bob:2")
        if name in out:
            raise AssignmentError(f"{name} is named twice; name each reviewer once")
        out[name] = int(share)
    if not out:
        raise AssignmentError("name at least one reviewer, for example alice,bob:2")
    return tuple(out.items())


def split(keys: Sequence[str], shares: Sequence[tuple[str, int]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``keys`` (in order, each once) shared among the reviewers in proportion to their shares:
    counts by the largest remainder (ties to the reviewer named first), then consecutive runs in
    order, so the items of one answer mostly stay with one reviewer.  The same input gives the same split."""
    keys = list(dict.fromkeys(keys))
    total = sum(s for _, s in shares)
    exact = [len(keys) * s / total for _, s in shares]
    counts = [int(x) for x in exact]
    for n in sorted(range(len(shares)), key=lambda n: (-(exact[n] - counts[n]), n))[:len(keys) - sum(counts)]:
        counts[n] += 1
    out, start = [], 0
    for (who, _), k in zip(shares, counts):
        out.append((who, tuple(keys[start:start + k])))
        start += k
    return tuple(out)


def make_assignment(keys: Sequence[str], shares: Sequence[tuple[str, int]], lead: str, source: str, due: str = "",
                    lock_minutes: int | None = None, at: str | None = None,
                    assignment_id: str | None = None) -> Assignment:
    lead = lead.strip()
    if not lead:
        raise AssignmentError("a lead's name is required to assign work: sign in, or enter your name")
    if not keys:
        raise AssignmentError("nothing to assign: the sample, filter or answers given hold no item")
    if due:
        _due(due, AssignmentError)
    if lock_minutes is not None and not 1 <= lock_minutes <= MAX_LOCK_MINUTES:
        raise AssignmentError(f"the lock timeout must be 1 to {MAX_LOCK_MINUTES} minutes, not {lock_minutes}")
    return Assignment(assignment_id or f"as-{uuid.uuid4().hex[:12]}", lead, split(keys, shares), due, source,
                      at or now(), __version__, lock_minutes)


def made_text(made: Assignment) -> str:
    """What the Assign page says once an assignment is stored: how many items, its id, the split,
    and the due date it holds (said either way: a date typed but not taken is then seen at once)."""
    split = ", ".join(f"{who} {len(keys):,}" for who, keys in made.items)
    due = f"due {made.due}" if made.due else "no due date"
    return f"Assigned {made.total:,} item(s) as {made.assignment}: {split}; {due}."


def make_release(assignment: str, item: str, reviewer: str, by: str, reason: str, at: str | None = None) -> Release:
    if reason not in REASONS:
        raise AssignmentError(f"{reason!r} is not a release reason; use one of {', '.join(REASONS)}")
    return Release(assignment, item, reviewer, by, reason, at or now(), __version__)


def make_open(item: str, reviewer: str, at: str | None = None) -> Open:
    return Open(item, reviewer, at or now(), __version__)


# --- reading -------------------------------------------------------------------------------------


def timestamp(value: str) -> datetime:
    """A record's ``at`` as an aware datetime (UTC when it names no zone); ValueError when it is none."""
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _due(value: str, error: type[Exception]) -> str:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise error(f"{value!r} is not a date written YYYY-MM-DD")
    try:
        date.fromisoformat(value)
    except ValueError:
        raise error(f"{value!r} is not a date written YYYY-MM-DD") from None
    return value


def _name(obj: dict, field: str) -> str:
    value = expect(obj, field, str)
    if not value.strip():
        raise FieldError(field, "is empty")
    return value


def _at(obj: dict) -> str:
    value = expect(obj, "at", str)
    try:
        timestamp(value)
    except ValueError:
        raise FieldError("at", f"{value[:40]!r} is not a timestamp (ISO 8601, as 2026-01-31T09:00:00.000Z)") from None
    return value


def _item(obj: dict, field: str = "item") -> str:
    value = expect(obj, field, str)
    try:
        parse_item_key(value)
    except ValueError as exc:
        raise FieldError(field, str(exc)) from None
    return value


def _items(obj: dict) -> tuple[tuple[str, tuple[str, ...]], ...]:
    raw = expect(obj, "items", (dict, list, str, int, float, bool))
    if not isinstance(raw, dict):
        raise FieldError("items", f"must be an object of reviewer names to lists of item keys, got {type(raw).__name__}")
    seen: set[str] = set()
    out = []
    for who, keys in raw.items():
        if not who.strip():
            raise FieldError("items", "names a reviewer with an empty name")
        if not isinstance(keys, list):
            raise FieldError(f"items.{who}", f"must be a list of item keys, got {type(keys).__name__}")
        for n, key in enumerate(keys):
            where = f"items.{who}[{n}]"
            if not isinstance(key, str):
                raise FieldError(where, f"must be an item key (a string), got {type(key).__name__}")
            _item({where: key}, where)
            if key in seen:
                raise FieldError(where, f"{key!r} is assigned twice in one assignment")
            seen.add(key)
        out.append((who, tuple(keys)))
    return tuple(out)


def parse_assignment(obj: dict) -> Assignment:
    """An ``assignment`` record (version and event already checked), field by field."""
    due = expect(obj, "due", str, optional=True, default="")
    if due:
        try:
            _due(due, ValueError)
        except ValueError as exc:
            raise FieldError("due", str(exc)) from None
    lock = expect(obj, "lock_minutes", int, optional=True)
    if lock is not None and not 1 <= lock <= MAX_LOCK_MINUTES:
        raise FieldError("lock_minutes", f"must be from 1 to {MAX_LOCK_MINUTES} minutes")
    return Assignment(_name(obj, "assignment"), _name(obj, "lead"), _items(obj), due,
                      expect(obj, "source", str, optional=True, default=""), _at(obj),
                      expect(obj, "citecheck", str, optional=True, default=""), lock)


def parse_release(obj: dict) -> Release:
    """A ``release`` record, field by field."""
    reason = expect(obj, "reason", str)
    if reason not in REASONS:
        raise FieldError("reason", f"{reason[:40]!r} is not one of {', '.join(REASONS)}")
    return Release(expect(obj, "assignment", str), _item(obj), _name(obj, "reviewer"), _name(obj, "by"), reason,
                   _at(obj), expect(obj, "citecheck", str, optional=True, default=""))


def parse_open(obj: dict) -> Open:
    """An ``open`` record, field by field."""
    return Open(_item(obj), _name(obj, "reviewer"), _at(obj), expect(obj, "citecheck", str, optional=True, default=""))
