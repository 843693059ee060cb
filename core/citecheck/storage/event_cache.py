"""An append-only stream (labels, verdicts) read incrementally: kept between reads, each read
costs only what was appended since the last one.

:meth:`EventCache.read` gives exactly what ``streams.read_all`` gives (every record ``parse``
accepts, in the order written, and one error per record it refused), but reads only:

- from a **file**, the bytes after the last *final* position (``lines.read_jsonl``'s ``reached``:
  the end of the last record whose line ended with no append group open).  What follows it (a
  torn last line, a group a writer may still be appending) is reported as a full read reports it
  and read again next time, so it is never kept as an error while it may still be completed.
  The file is read again from the start when it was replaced (another inode), truncated (shorter
  than the position) or rewritten before the position (the last :data:`CHECKED_BYTES` bytes
  before it changed).
- from **PostgreSQL**, the rows with a ``seq`` over the last one settled.  Rows are numbered when
  inserted, not when committed, so a row read is settled only once every transaction running
  when it was read has ended (``postgres.read_since``); until then it is read again.  The stream
  is read again from the start when the last settled row is no longer there as it was.

One cache per target is shared by every session of a server: each read runs under a lock.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citecheck.errors import RecordError
from citecheck.storage import lines, postgres, streams

CHECKED_BYTES = 4096  # the bytes before the position whose hash tells a rewritten file from a grown one


@dataclass(frozen=True)
class Snapshot:
    """One read of a stream: what ``streams.read_all`` gives, and what a caller keeping its own
    figures needs to tell what changed since the read it last saw."""

    records: list  # every record parse accepted, in the order written (the caller's own list)
    errors: list[RecordError]
    generation: int  # the same while the stream was read on from the previous read; changes when read from the start
    settled: int  # the first ``settled`` records are final: later reads of this generation start with them

    @property
    def version(self) -> tuple[int, int, int, int]:
        """Changes whenever what was read changes (within a generation, records and errors only grow)."""
        return self.generation, len(self.records), len(self.errors), self.settled


class EventCache:
    """The records of one stream of one target, read on from where the last read left off."""

    def __init__(self, target: streams.Target, stream: str, parse: Callable[[Any], Any]) -> None:
        self.target, self.stream, self.parse = target, stream, parse
        self._lock = threading.Lock()
        self._generation = 0
        self._derived: dict[Hashable, tuple[tuple[int, int, int, int], Any]] = {}
        self._reset()

    def _reset(self) -> None:
        self._generation += 1
        self._records: list = []
        self._errors: list[RecordError] = []
        # a file: its identity, the position read to, the hash of the bytes before it
        self._file: tuple[int, int] | None = None
        self._at = lines.START
        self._before = b""
        # a database: the last settled row (seq, its hash), and the rows read but not settled yet
        self._seq, self._sha = 0, ""
        self._waiting: list[tuple[int, str, int]] = []  # (seq, hash, xmax of the read that saw it last)

    def read(self) -> Snapshot:
        """Every record and error of the stream as it is now (see the module's docstring)."""
        with self._lock:
            if streams.is_database(self.target):
                tail = self._read_database(str(self.target))
            else:
                tail = self._read_file(Path(self.target))
            records, errors = list(self._records), list(self._errors)
            settled = len(records)
            for _, value in tail:
                (errors if isinstance(value, RecordError) else records).append(value)
            return Snapshot(records, errors, self._generation, settled)

    def derived(self, snap: Snapshot, key: Hashable, make: Callable[[Snapshot], Any]) -> Any:
        """``make(snap)``, kept under ``key`` until the stream changes (figures made from every record
        on every run, such as the latest verdict per item).  The value is shared: do not change it."""
        with self._lock:
            found = self._derived.get(key)
            if found is not None and found[0] == snap.version:
                return found[1]
        value = make(snap)
        with self._lock:
            if len(self._derived) > 64:
                self._derived.clear()
            self._derived[key] = (snap.version, value)
        return value

    def _keep(self, values: list[tuple[int, Any]]) -> None:
        for _, value in values:
            (self._errors if isinstance(value, RecordError) else self._records).append(value)

    # --- a file ---------------------------------------------------------------------------------

    def _read_file(self, path: Path) -> list[tuple[int, Any]]:
        """Read on; keep what is final and return the rest (the tail read again next time)."""
        streams.refuse_folder(path, self.stream)
        for _ in range(3):  # (a file replaced while it was read: read the new one)
            try:
                before = os.stat(path)
            except FileNotFoundError:
                if self._file is not None or self._records or self._errors:
                    self._reset()
                return []
            identity = (before.st_dev, before.st_ino)
            if identity != self._file or before.st_size < self._at.offset or self._hash(path) != self._before:
                self._reset()
                self._file = identity
            reached: list[lines.Position] = []
            try:
                values = list(lines.read_jsonl(path, self.parse, self._at, reached))
            except FileNotFoundError:  # (removed since: look again)
                continue
            try:
                after = os.stat(path)
            except FileNotFoundError:
                continue
            if (after.st_dev, after.st_ino) != identity:
                continue
            if reached:
                final = reached[-1]
                kept = [v for v in values if v[0] < final.line]
                self._keep(kept)
                values = values[len(kept):]
                self._at = final
                self._before = self._hash(path)
            return values
        self._reset()  # replaced on every try: report the file as it is, keeping nothing of it
        return list(lines.read_jsonl(path, self.parse)) if path.exists() else []

    def _hash(self, path: Path) -> bytes:
        """The hash of the :data:`CHECKED_BYTES` bytes before the position (empty at the start)."""
        if not self._at.offset:
            return b""
        start = max(0, self._at.offset - CHECKED_BYTES)
        try:
            with open(path, "rb") as handle:
                handle.seek(start)
                data = handle.read(self._at.offset - start)
        except FileNotFoundError:
            return b"gone"
        return hashlib.sha256(data).digest()

    # --- a database -----------------------------------------------------------------------------

    def _read_database(self, url: str) -> list[tuple[int, Any]]:
        since = postgres.read_since(url, self.stream, self._seq, self._sha)
        if not since.known:
            self._reset()
        name = streams.where(url, self.stream)
        # a row read before is settled once every transaction running when it was read has ended
        # (a row of a lower seq committed late would be in this read); a row read now, only when
        # none was running
        seen = {seq: xmax for seq, _, xmax in self._waiting}
        settled_upto = 0
        for seq, _, _ in since.rows:
            xmax = seen.get(seq, since.xmax)
            if xmax > since.xmin or (seq not in seen and since.xmin != since.xmax):
                break
            settled_upto = seq
        kept = [(seq, sha, streams.parsed(name, seq, record, self.parse)) for seq, record, sha in since.rows
                if seq <= settled_upto]
        if kept:
            self._keep([(seq, value) for seq, _, value in kept])
            self._seq, self._sha = kept[-1][0], kept[-1][1]
        rest = since.rows[len(kept):]
        self._waiting = [(seq, sha, seen.get(seq, since.xmax)) for seq, _, sha in rest]
        return [(seq, streams.parsed(name, seq, record, self.parse)) for seq, record, _ in rest]
