"""The labels file: append-only JSON lines, the calibration set's source of truth (docs/labels-format.md).

The store also holds retractions (undo) and adjudications (``labelling.events``, records of format
version 2).  :func:`read` gives the labels that count: every label not retracted; :func:`read_events`
gives everything, for the history of an item and for adjudication.

Every record is written with one ``write`` under an exclusive file lock, then flushed and
fsynced, so several reviewers (sessions or processes) can label at once.  Nothing is ever
rewritten: a change of mind is a new record and the latest per (item, reviewer) counts.  A torn
last line (a crash mid-write) is skipped with a warning; the next record starts on a fresh line.

The same records can live in a PostgreSQL database instead (``target`` a ``postgresql://`` URL,
see ``storage.postgres``); everything built on ``append`` and ``read`` is the same for both.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from citecheck import __version__
from citecheck.contract.item_keys import CITATION_LABELS, UNCITED_LABELS, parse_item_key
from citecheck.errors import CitecheckError, FieldError, RecordError
from citecheck.labelling.events import (
    EVENTS_VERSION,
    Adjudication,
    Retraction,
    TeamEvent,
    make_retraction,
    parse_event,
)
from citecheck.labelling.items import LABEL_TEXT, Item
from citecheck.labelling.marked_spans import SPAN_LABELS, Spans, check_label, normalise, parse_spans
from citecheck.storage import streams as event_store
from citecheck.storage.durable import WriteFailed
from citecheck.storage.lines import expect, expect_object, now

LABELS_VERSION = 1  # a label record; retractions and adjudications are version 2 (review.events)
READS = (LABELS_VERSION, EVENTS_VERSION)


class LabelError(CitecheckError, ValueError):
    """A label record that cannot be written as asked."""


@dataclass(frozen=True, slots=True)
class Label:
    labels_version: int
    item: str
    answer_id: str
    sentence: int
    citation: int | None
    chunk_id: str | None
    fingerprint: str
    label: str
    note: str
    reviewer: str
    at: str
    citecheck: str
    sample: str = ""  # the calibration sample the item was labelled from (review/sample.py); "" when none
    guidelines: str = ""  # the version (hash) of the guidelines it was made under (review/guidelines.py); "" when unknown
    spans: Spans = ()  # the words marked as not supported: (start, end) answer offsets (labelling.marked_spans)


def make_label(item: Item, label: str, reviewer: str, note: str = "", at: str | None = None,
               sample: str = "", guidelines: str = "", spans: Spans = ()) -> Label:
    reviewer = reviewer.strip()
    if not reviewer:
        raise LabelError("a reviewer name is required before labelling")
    if label not in item.labels:
        raise LabelError(f"{label!r} is not a label for this item; use one of {', '.join(item.labels)}")
    if spans and label not in SPAN_LABELS:
        raise LabelError(f"a {LABEL_TEXT[label]!r} label marks no words; only {' and '.join(SPAN_LABELS)} labels do")
    return Label(LABELS_VERSION, item.key, item.answer_id, item.sentence, item.citation, item.chunk_id,
                 item.fingerprint, label, note, reviewer, at or now(), __version__, sample, guidelines,
                 normalise(spans))


STREAM = "labels"


def append(target: str | Path, label: Label) -> None:
    """Append one record durably to a labels file or database (see ``storage.streams``): earlier
    records are never touched.  Returns only once the label is stored; raises
    :class:`~citecheck.storage.durable.WriteFailed` (nothing written) when a file cannot take it,
    for example on a full disk.  ``sample`` is written only when set, so a label made outside a
    sample is stored as before; so are ``guidelines`` and ``spans``."""
    record = asdict(label)
    for optional in ("sample", "guidelines", "spans"):
        if not record[optional]:
            del record[optional]
    event_store.append(target, STREAM, [record], what="the label")


def append_event(target: str | Path, event: Retraction | Adjudication | TeamEvent) -> None:
    """Append a retraction, an adjudication or a team event, durably, as :func:`append` does a label."""
    event_store.append(target, STREAM, [event.to_record()], what=f"the {type(event).__name__.lower()}")


def retract_last(target: str | Path, labels: Sequence[Label], reviewer: str) -> Label | None:
    """Undo: withdraw ``reviewer``'s last label that counts (``labels`` as :func:`read` gives
    them) with a retraction appended to the store; the label itself stays.  Returns the
    withdrawn label, or None when the reviewer has none left to withdraw."""
    last = next((lab for lab in reversed(labels) if lab.reviewer == reviewer), None)
    if last is not None:
        append_event(target, make_retraction(last, reviewer))
    return last


def withdrawn_message(withdrawn: Label, labels: Sequence[Label]) -> str:
    """What the review page says once :func:`retract_last` withdrew ``withdrawn`` from ``labels``
    (the labels that counted before it): which of the reviewer's labels of that item counts now, if
    one does, or that the item is theirs to label again."""
    before = next((lab for lab in reversed(labels) if lab is not withdrawn and lab.reviewer == withdrawn.reviewer
                   and lab.item == withdrawn.item), None)
    now = (f"your earlier \u201c{LABEL_TEXT[before.label]}\u201d for it counts again" if before is not None
           else "you have no other label on it, so it is yours to label again")
    return (f"Withdrew your \u201c{LABEL_TEXT[withdrawn.label]}\u201d for sentence {withdrawn.sentence + 1} of "
            f"{withdrawn.answer_id} (a retraction is recorded; {now}).")


def saved_message(label_text: str, sentence: int, answer_id: str) -> str:
    """What the review page says once :func:`append` has returned."""
    return f"Saved \u201c{label_text}\u201d for sentence {sentence + 1} of {answer_id}."


def unchanged_message(label_text: str, sentence: int, answer_id: str) -> str:
    """What the review page says when a label repeats the reviewer's current one (nothing recorded)."""
    return (f"Already “{label_text}” for sentence {sentence + 1} of {answer_id}: "
            "nothing new recorded.")


def not_saved_message(exc: OSError, label_text: str, sentence: int) -> str:
    """What the review page says when :func:`append` failed: plainly that the label is not saved,
    and why (a full disk said as such, never a raw ``[Errno 28]``)."""
    head = f"\u201c{label_text}\u201d for sentence {sentence + 1} was NOT saved"
    if isinstance(exc, WriteFailed):
        reason = "the disk is full" if exc.disk_full else f"writing failed ({exc.cause.strerror or exc.cause})"
        advice = "Free some disk space, then click the label again." if exc.disk_full else "Click the label again."
        return f"{head}: {reason} ({exc.path}). {advice}"
    return f"{head}: could not write the labels file ({exc.strerror or exc}). Click the label again."


def parse_label(value: object) -> Label:
    """One labels-file label record, validated field by field (:class:`FieldError` names the field)."""
    obj = expect_object(value)
    if _version(obj) != LABELS_VERSION:
        raise FieldError("labels_version", f"a label record is version {LABELS_VERSION}")
    item = expect(obj, "item", str)
    try:
        key = parse_item_key(item)
    except ValueError as exc:
        raise FieldError("item", str(exc)) from None
    label = Label(
        LABELS_VERSION, item,
        answer_id=expect(obj, "answer_id", str),
        sentence=expect(obj, "sentence", int),
        citation=expect(obj, "citation", int, optional=True),
        chunk_id=expect(obj, "chunk_id", str, optional=True),
        fingerprint=expect(obj, "fingerprint", str),
        label=expect(obj, "label", str),
        note=expect(obj, "note", str, optional=True, default=""),
        reviewer=expect(obj, "reviewer", str),
        at=expect(obj, "at", str),
        citecheck=expect(obj, "citecheck", str, optional=True, default=""),
        sample=expect(obj, "sample", str, optional=True, default=""),
        guidelines=expect(obj, "guidelines", str, optional=True, default=""),
        spans=parse_spans(obj["spans"]) if obj.get("spans") is not None else (),
    )
    if (label.answer_id, label.sentence, label.citation) != (key.answer_id, key.sentence, key.citation):
        raise FieldError("item", f"{item!r} names another item than answer_id, sentence and citation")
    allowed = UNCITED_LABELS if label.citation is None else CITATION_LABELS
    if label.label not in allowed:
        raise FieldError("label", f"{label.label!r} is not one of {', '.join(allowed)}")
    if not label.reviewer.strip():
        raise FieldError("reviewer", "is empty")
    check_label(label.label, label.spans)
    return label


def _version(obj: dict) -> int:
    version = obj.get("labels_version")
    if version is None:
        raise FieldError("labels_version", f"is required: add \"labels_version\": {LABELS_VERSION}")
    if type(version) is not int or version not in READS:
        raise FieldError("labels_version", f"{version!r} is not a version this citecheck reads "
                                           f"({', '.join(map(str, READS))}); upgrade citecheck to read newer files")
    return version


Event = Label | Retraction | Adjudication | TeamEvent  # (team events: labelling.assignments, labelling.comments)


def parse_record(value: object) -> Event:
    """A label (version 1) or an event (version 2) of the labels store."""
    obj = expect_object(value)
    if _version(obj) != EVENTS_VERSION:
        return parse_label(obj)
    if "event" not in obj:
        raise FieldError("labels_version", f"{EVENTS_VERSION} is the version of events (a retraction or an "
                                           f"adjudication, named in \"event\"); a label record is version {LABELS_VERSION}")
    return parse_event(obj)


def read_events(target: str | Path) -> tuple[list[Event], list[RecordError]]:
    """Every readable record (labels, retractions, adjudications) in the order written (a file, or
    a ``postgresql://`` URL), and one error (file or database, line or row, field) per skipped record."""
    return event_store.read_all(target, STREAM, parse_record)


def effective(events: Iterable[Event]) -> list[Label]:
    """The labels that count, in the order written: every label no retraction names (by item,
    reviewer, ``at`` and label).  Latest-wins rules apply to these, so a retracted change of mind gives
    back the label before it."""
    events = list(events)
    retracted = {(e.item, e.reviewer, e.retracts, e.label) for e in events if isinstance(e, Retraction)}
    return [e for e in events if isinstance(e, Label) and (e.item, e.reviewer, e.at, e.label) not in retracted]


def adjudications(events: Iterable[Event]) -> dict[str, Adjudication]:
    """The adjudication that counts per item key: the last one written."""
    return {e.item: e for e in events if isinstance(e, Adjudication)}


def read(target: str | Path) -> tuple[list[Label], list[RecordError]]:
    """The labels that count (:func:`effective`: retracted ones left out) in the order written,
    and one error per skipped record."""
    events, errors = read_events(target)
    return effective(events), errors


def latest(labels: Iterable[Label]) -> dict[tuple[str, str], Label]:
    """The record that counts for each (item key, reviewer): the last one written.  Given the
    whole event stream (:func:`read_events`), it leaves retracted labels out first."""
    if not isinstance(labels, list):
        labels = list(labels)
    if any(type(e) is not Label for e in labels):
        labels = effective(labels)
    out: dict[tuple[str, str], Label] = {}
    for label in labels:
        out[(label.item, label.reviewer)] = label
    return out


def others_by_item(current: dict[tuple[str, str], Label], reviewer: str) -> dict[str, list[Label]]:
    """Per item key, the current labels of every reviewer but ``reviewer``: one pass over the
    labels, so a page with many items does not scan every label for each item."""
    out: dict[str, list[Label]] = {}
    for (key, who), label in current.items():
        if who != reviewer:
            out.setdefault(key, []).append(label)
    return out


@dataclass(frozen=True, slots=True)
class Progress:
    labelled: int
    total: int
    stale: int


def progress(items: list[Item], current: dict[tuple[str, str], Label], reviewer: str) -> Progress:
    """How many of ``items`` (an answer's) this reviewer has a current (not stale) label for: a
    look-up per item (a pass over every label, to learn that the reviewer had none, cost 15 ms a key
    press at 100,000 labels)."""
    done = stale = 0
    for item in items:
        label = current.get((item.key, reviewer))
        if label is None:
            continue
        if label.fingerprint == item.fingerprint:
            done += 1
        else:
            stale += 1
    return Progress(done, len(items), stale)


def is_done(item: Item, current: dict[tuple[str, str], Label], reviewer: str) -> bool:
    label = current.get((item.key, reviewer))
    return label is not None and label.fingerprint == item.fingerprint


class OtherLogsError(CitecheckError):
    """No label of a labels file is for an item of the logs given (it was made on other answers)."""


@dataclass(frozen=True, slots=True)
class Matched:
    """The labels (and adjudications) of the items of the logs given, and how many are for other items."""

    labels: list[Label]
    adjudicated: dict[str, Adjudication]
    other: int  # label records for items the logs do not hold

    def note(self, total: int) -> str:
        """The line a command prints when some labels are for other items ("" when none are)."""
        if not self.other:
            return ""
        return (f"{self.other:,} of {total:,} label(s) are for items not in the logs given and are left out "
                "(made on other answers, or on lines since removed)")


def matching(records: Sequence[Label], adjudicated: Mapping[str, Adjudication], keys: Collection[str],
             where: str, logs: Sequence[str | Path]) -> Matched:
    """The labels of items in ``keys`` (the items of ``logs``); raises :class:`OtherLogsError`
    when there are labels but none is for these logs: the labels file is from another log.
    ``where``: the labels store as the message names it."""
    kept = [r for r in records if r.item in keys]
    if records and not kept:
        names = ", ".join(str(p) for p in logs)
        raise OtherLogsError(f"none of the {len(records):,} label(s) in {where} is for an item of {names}: the labels "
                             "were made on other answers. Give the logs they were made on with --log")
    return Matched(kept, {k: a for k, a in adjudicated.items() if k in keys}, len(records) - len(kept))
