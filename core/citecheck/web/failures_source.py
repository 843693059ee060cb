"""Where the Failures page's figures come from, made once and kept while their inputs stay the same.

The figures of a log in memory (``TableSource``) are kept with its ``Dataset``: a changed log is a
new ``Dataset`` (the app re-reads a log whose path, size or modification time changed), and an
uploaded log is one of its own.  The figures of a checked store (``StoreSource``) are kept under
the identity of the store's manifest (path, size, modification time: ``citecheck check --store``
rewrites it whenever it adds answers).  Either is made again when the labels that count or the
golden set differ from those it was made with (both are read on every run: other sessions label).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from citecheck.errors import StoreError
from citecheck.labelling.labels import Label
from citecheck.reports import figures
from citecheck.reports.failures import build
from citecheck.reports.golden import GoldenQuestion
from citecheck.reports.inputs import Inputs
from citecheck.storage.checked.folder import META
from citecheck.storage.checked.sources import StoreSource, TableSource
from citecheck.web.notices import page_inputs, unreadable_lines
from citecheck.web.stamps import stamp

_NOTHING = object()


class Slot:
    """One value and the inputs it was made from: ``get`` makes it again only when they differ
    (by ``==``).  Thread-safe: a slot kept with a shared dataset is used by several sessions."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: object = _NOTHING
        self._value: object = None

    def get(self, key: object, make: Callable[[], object]):
        with self._lock:
            if self._key is _NOTHING or self._key != key:
                self._value, self._key = make(), key
            return self._value


def table_source(data, golden: Sequence[GoldenQuestion] | None, labels: Mapping[tuple[str, str], Label],
                 k: int = 5) -> TableSource:
    """The figures of the answers of ``data`` (a ``Dataset``) with the current ``labels``."""

    def make() -> TableSource:
        base = figures.dataset_table(data)
        table = figures.with_labels(base, data.results, labels) if labels else base
        runs = [figures.retrieval_run(r) for r in data.results] if golden is not None else []
        return TableSource(table, build(table, golden, runs, k))

    return data.memo("failures.source", Slot).get((dict(labels), golden, k), make)


@dataclass(frozen=True)
class Opened:
    """The figures' source as the page opened it: None when it cannot be (``notices`` say why),
    the notices (kind, text) to show first, the caption naming what is loaded, and whether part of
    the logs could not be read (the all-clear then says so)."""

    source: TableSource | StoreSource | None
    notices: list[tuple[str, str]]
    inputs: Inputs | None = None  # what the figures come from: said above them
    unreadable: bool = False


def open_log(data, golden: Sequence[GoldenQuestion] | None, labels: Mapping[tuple[str, str], Label], settings,
             uploaded: str | None, k: int = 5) -> Opened:
    """The figures of a log in memory (the configured logs, or ``uploaded``: the name of the
    reviewer's upload in use)."""
    src = table_source(data, golden, labels, k)
    inputs = page_inputs(settings, src.answers, unreadable_lines(data.errors), uploaded, golden=settings.golden,
                         labels=settings.labels)
    return Opened(src, [], inputs, bool(data.errors))


def open_store(settings, golden: Sequence[GoldenQuestion] | None, labels: Mapping[tuple[str, str], Label],
               slot: Slot | None = None, k: int = 5) -> Opened:
    """The figures of the checked store ``settings.store``, with a warning per labelled answer
    whose line changed in its log; the store's error (it never shows a password) when the folder
    is not one."""
    try:
        src, warnings = store_source(settings.store, golden, labels, slot, k)
    except StoreError as exc:
        return Opened(None, [("error", str(exc))])
    inputs = page_inputs(settings, src.answers, src.report.unreadable, store_logs=src.query.store.logs,
                         golden=settings.golden, labels=settings.labels)
    return Opened(src, [("warning", w) for w in warnings], inputs, bool(src.report.unreadable))


_SHARED: dict[str, Slot] = {}  # store folder -> its figures, shared by every session of the server
_SHARED_LOCK = threading.Lock()


def store_source(folder: str | Path, golden: Sequence[GoldenQuestion] | None,
                 labels: Mapping[tuple[str, str], Label], slot: Slot | None = None,
                 k: int = 5) -> tuple[StoreSource, list[str]]:
    """The figures of the checked store ``folder`` and the warnings of reading its labelled answers
    back, made once per server for each state of the store, labels, golden set and ``k`` and shared
    by its sessions (a second reviewer's first view of a million answers costs nothing; the
    source's queries take turns on its connection).  ``slot``: a slot of the caller's own instead
    (a test's).  Raises ``StoreError`` for a folder that is not a store."""
    key = (stamp(Path(folder) / META), dict(labels), golden, k)
    if slot is None:
        with _SHARED_LOCK:
            slot = _SHARED.setdefault(str(Path(folder).resolve()), Slot())
    return slot.get(key, lambda: StoreSource.of(folder, golden, labels, k))
