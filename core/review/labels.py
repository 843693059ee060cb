"""The labels file: append-only JSON lines, the calibration set's source of truth (docs/labels-format.md).

Every record is written with one ``write`` under an exclusive file lock, then flushed and
fsynced, so several reviewers (sessions or processes) can label at once.  Nothing is ever
rewritten: a change of mind is a new record and the latest per (item, reviewer) counts.  A torn
last line (a crash mid-write) is skipped with a warning; the next record starts on a fresh line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from .. import __version__
from ..contract.jsonl import append_records, read_parsed
from .items import CITATION_LABELS, UNCITED_LABELS, Item

LABELS_VERSION = 1
ALL_LABELS = CITATION_LABELS + UNCITED_LABELS


class LabelError(ValueError):
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


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def make_label(item: Item, label: str, reviewer: str, note: str = "", at: str | None = None) -> Label:
    reviewer = reviewer.strip()
    if not reviewer:
        raise LabelError("a reviewer name is required before labelling")
    if label not in item.labels:
        raise LabelError(f"{label!r} is not a label for this item; use one of {', '.join(item.labels)}")
    return Label(LABELS_VERSION, item.key, item.answer_id, item.sentence, item.citation, item.chunk_id,
                 item.fingerprint, label, note, reviewer, at or now(), __version__)


def append(path: str | Path, label: Label) -> None:
    """Append one record durably (see ``jsonl.append_records``): earlier records are never touched."""
    append_records(path, [asdict(label)])


_SURROGATE = re.compile("[\ud800-\udfff]")
# The type each field must have (``type(x) in ...``, so a bool is not taken for an integer).
_FIELD_TYPES = {
    "item": (str,), "answer_id": (str,), "sentence": (int,), "citation": (int, type(None)),
    "chunk_id": (str, type(None)), "fingerprint": (str,), "label": (str,), "note": (str,), "reviewer": (str,),
    "at": (str,), "citecheck": (str,),
}


def _parse(obj: object) -> Label:
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    if obj.get("labels_version") != LABELS_VERSION:
        raise ValueError(f"labels_version {obj.get('labels_version')!r}; this citecheck reads {LABELS_VERSION}")
    try:
        label = Label(**{name: obj[name] for name in Label.__dataclass_fields__})
    except KeyError as exc:
        raise ValueError(f"missing field {exc.args[0]}") from None
    for name, types in _FIELD_TYPES.items():
        value = getattr(label, name)
        if type(value) not in types:
            want = " or ".join("null" if t is type(None) else {"str": "a string", "int": "an integer"}[t.__name__]
                               for t in types)
            raise ValueError(f"field {name}: expected {want}, got {type(value).__name__}")
        if type(value) is str and _SURROGATE.search(value):
            raise ValueError(f"field {name}: holds a lone surrogate, which is not Unicode text")
    if label.label not in ALL_LABELS:
        raise ValueError(f"unknown label {label.label!r}")
    return label


def read(path: str | Path) -> tuple[list[Label], list[str]]:
    """Every readable record in file order, and a warning for each line that was skipped."""
    return read_parsed(path, _parse)


def latest(labels: Iterable[Label]) -> dict[tuple[str, str], Label]:
    """The record that counts for each (item key, reviewer): the last one written."""
    out: dict[tuple[str, str], Label] = {}
    for label in labels:
        out[(label.item, label.reviewer)] = label
    return out


@dataclass(frozen=True, slots=True)
class Progress:
    labelled: int
    total: int
    stale: int


def progress(items: list[Item], current: dict[tuple[str, str], Label], reviewer: str) -> Progress:
    """How many items this reviewer has a current (not stale) label for."""
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
