"""The events of the labels store besides labels: retractions (undo) and adjudications (docs/labels-format.md).

Both are records of version 2 of the labels format, appended to the same store as the labels
(a file or a database) and never rewritten.  A label record is still version 1, so a citecheck
that knows only version 1 reads every label and reports each event as a record it cannot read.

- A **retraction** withdraws one label of its reviewer, named by its item, ``at`` (a label is
  written once, with its own millisecond timestamp) and value.  Readers drop the retracted label and apply
  latest-wins to the rest, so undoing a changed label brings back the one before it.
- An **adjudication** is a lead's label for an item whose reviewers disagreed: who adjudicated,
  when, and which labels (reviewer, label, ``at``) it resolved.  The latest per item counts;
  calibration prefers it to the reviewers' labels (``labelling.consensus``).

The team's events are read here too, each by its own module: assignments, releases and opened
items (``labelling.assignments``), comments and resolved threads (``labelling.comments``).
A reader that does not use a kind passes over it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from citecheck import __version__
from citecheck.contract.item_keys import ALL_LABELS, CITATION_LABELS, UNCITED_LABELS, parse_item_key
from citecheck.errors import CitecheckError, FieldError
from citecheck.labelling import assignments, comments
from citecheck.labelling.assignments import Assignment, Open, Release
from citecheck.labelling.comments import Comment, Resolve
from citecheck.labelling.items import Item
from citecheck.storage.lines import expect, now


class Label(Protocol):
    """What an event needs of a label (``labels.Label``, which imports this module): read-only
    fields, as a label record is never changed once made (``labels.Label`` is frozen)."""

    @property
    def item(self) -> str: ...
    @property
    def reviewer(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def at(self) -> str: ...


EVENTS_VERSION = 2  # the labels_version of the records below
RETRACTION = "retraction"
ADJUDICATION = "adjudication"
# the team's events, each read by its own module (labelling.assignments, labelling.comments)
TeamEvent = Assignment | Release | Open | Comment | Resolve
TEAM_READERS: dict[str, Callable[[dict], TeamEvent]] = {
    assignments.ASSIGNMENT: assignments.parse_assignment, assignments.RELEASE: assignments.parse_release,
    assignments.OPEN: assignments.parse_open, comments.COMMENT: comments.parse_comment,
    comments.RESOLVE: comments.parse_resolve}
KINDS = (RETRACTION, ADJUDICATION, *TEAM_READERS)


class EventError(CitecheckError, ValueError):
    """An event that cannot be made as asked (the message says what to do)."""


@dataclass(frozen=True, slots=True)
class Retraction:
    item: str
    reviewer: str  # who withdrew the label: always the label's own reviewer
    retracts: str  # the ``at`` of the withdrawn label
    label: str  # the withdrawn label's value, so the history reads without a lookup
    at: str
    citecheck: str = ""

    def to_record(self) -> dict:
        return {"labels_version": EVENTS_VERSION, "event": RETRACTION, "item": self.item, "reviewer": self.reviewer,
                "retracts": self.retracts, "label": self.label, "at": self.at, "citecheck": self.citecheck}


@dataclass(frozen=True, slots=True)
class Resolved:
    """One label an adjudication resolved."""
    reviewer: str
    label: str
    at: str


@dataclass(frozen=True, slots=True)
class Adjudication:
    item: str
    answer_id: str
    sentence: int
    citation: int | None
    chunk_id: str | None
    fingerprint: str
    label: str
    note: str
    adjudicator: str
    resolves: tuple[Resolved, ...]
    at: str
    citecheck: str = ""
    guidelines: str = ""  # the guidelines' version (review.guidelines) it was made under; "" when unknown

    def to_record(self) -> dict:
        record = {"labels_version": EVENTS_VERSION, "event": ADJUDICATION, "item": self.item,
                  "answer_id": self.answer_id, "sentence": self.sentence, "citation": self.citation,
                  "chunk_id": self.chunk_id, "fingerprint": self.fingerprint, "label": self.label,
                  "note": self.note, "adjudicator": self.adjudicator,
                  "resolves": [{"reviewer": r.reviewer, "label": r.label, "at": r.at} for r in self.resolves],
                  "at": self.at, "citecheck": self.citecheck}
        if self.guidelines:
            record["guidelines"] = self.guidelines
        return record


def make_retraction(label: Label, reviewer: str, at: str | None = None) -> Retraction:
    """Withdraw ``label``; only its own reviewer may (a lead adjudicates instead)."""
    if reviewer.strip() != label.reviewer:
        raise EventError(f"only {label.reviewer} can withdraw their own label; a lead records an adjudication instead")
    return Retraction(label.item, label.reviewer, label.at, label.label, at or now(), __version__)


def make_adjudication(item: Item, label: str, adjudicator: str, resolves: Sequence[Label], note: str = "",
                      guidelines: str = "", at: str | None = None) -> Adjudication:
    adjudicator = adjudicator.strip()
    if not adjudicator:
        raise EventError("a name is required before adjudicating: enter yours in the sidebar")
    if label not in item.labels:
        raise EventError(f"{label!r} is not a label for this item; use one of {', '.join(item.labels)}")
    done = tuple(Resolved(lab.reviewer, lab.label, lab.at) for lab in sorted(resolves, key=lambda x: x.reviewer))
    return Adjudication(item.key, item.answer_id, item.sentence, item.citation, item.chunk_id, item.fingerprint,
                        label, note, adjudicator, done, at or now(), __version__, guidelines)


def _name(obj: dict, field: str) -> str:
    value = expect(obj, field, str)
    if not value.strip():
        raise FieldError(field, "is empty")
    return value


def _label_value(obj: dict, citation: int | None = None, known: bool = False) -> str:
    value = expect(obj, "label", str)
    allowed = ALL_LABELS if known else (UNCITED_LABELS if citation is None else CITATION_LABELS)
    if value not in allowed:
        raise FieldError("label", f"{value!r} is not one of {', '.join(allowed)}")
    return value


def parse_event(obj: dict) -> Retraction | Adjudication | TeamEvent:
    """A version 2 record (its version already checked), field by field."""
    kind = expect(obj, "event", str)
    if kind in TEAM_READERS:
        return TEAM_READERS[kind](obj)
    item = expect(obj, "item", str)
    try:
        key = parse_item_key(item)
    except ValueError as exc:
        raise FieldError("item", str(exc)) from None
    if kind == RETRACTION:
        return Retraction(item, _name(obj, "reviewer"), expect(obj, "retracts", str), _label_value(obj, known=True),
                          expect(obj, "at", str), expect(obj, "citecheck", str, optional=True, default=""))
    if kind != ADJUDICATION:
        raise FieldError("event", f"{kind!r} is not one of {', '.join(KINDS)}; upgrade citecheck to read newer events")
    raw = expect(obj, "resolves", list)
    resolves = []
    for n, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise FieldError(f"resolves[{n}]", "must be an object with reviewer, label and at")
        try:
            resolves.append(Resolved(_name(entry, "reviewer"), _label_value(entry, known=True), expect(entry, "at", str)))
        except FieldError as exc:
            raise FieldError(f"resolves[{n}].{exc.field}", exc.message) from None
    adj = Adjudication(
        item, expect(obj, "answer_id", str), expect(obj, "sentence", int), expect(obj, "citation", int, optional=True),
        expect(obj, "chunk_id", str, optional=True), expect(obj, "fingerprint", str),
        _label_value(obj, key.citation), expect(obj, "note", str, optional=True, default=""),
        _name(obj, "adjudicator"), tuple(resolves), expect(obj, "at", str),
        expect(obj, "citecheck", str, optional=True, default=""),
        expect(obj, "guidelines", str, optional=True, default=""))
    if (adj.answer_id, adj.sentence, adj.citation) != (key.answer_id, key.sentence, key.citation):
        raise FieldError("item", f"{item!r} names another item than answer_id, sentence and citation")
    return adj
