"""The checked store on disk: ``store.json`` and the Parquet parts it lists (docs/store-format.md).

Only the parts named in ``store.json`` belong to the store.  A check writes its new parts first and
then replaces ``store.json`` in one rename, so a crash mid-check leaves the store as it was (plus
unlisted files that the next check removes).

Checking a log again checks only its lines whose bytes changed (by hash): the rows of unchanged
lines are kept.  When the log only grew (every old line where it was), its old parts stay as they
are and the new lines become one new part; otherwise the kept rows are copied into a new part,
moved to their new offsets and line numbers.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from citecheck.checking.checker import CheckOptions
from citecheck.contract import reasons
from citecheck.contract.corpus import Corpus
from citecheck.contract.log_identity import log_identity
from citecheck.errors import CheckedStoreError, DamagedStoreError, RecordError
from citecheck.reports.check_report import Summary
from citecheck.storage.checked import schema as store_schema
from citecheck.storage.checked.batch import Batch, check_batches, line_hash
from citecheck.storage.lines import LongLine, is_blank, numbered_lines

META = "store.json"


# The answers columns check's summary adds up (Summary's fields, in this order), then every reason code.
_SUMMED = ("refused", "ok", "invalid_markers", "citations", "failed", "with_quote", "quote_in_source", "sentences",
           "uncited", "multi_claim", "unsupported_number", *reasons.ALL_REASONS, "not_verifiable")


def source_id(path: str) -> str:
    """The id of a log in the store: 16 hex digits of the sha256 of its absolute path (or URL)."""
    return hashlib.sha256(os.fsencode(log_identity(path))).hexdigest()[:16]  # (a name that is not UTF-8: its bytes)


def _fsspec():
    try:
        import fsspec
    except ImportError:
        raise CheckedStoreError("a log given as a URL is read with fsspec: pip install 'citecheck[dask]'") from None
    return fsspec


def open_log(path: str):
    """A log opened for reading bytes: a local path, or any URL fsspec (Dask's filesystem layer) opens."""
    if "://" in path:
        return _fsspec().open(path, "rb").open()
    return open(path, "rb")


def log_size(path: str) -> int:
    if "://" in path:
        fs, p = _fsspec().core.url_to_fs(path)
        return fs.size(p)
    return os.path.getsize(path)


def options_record(options: CheckOptions) -> dict:
    """What the check options are, as stored; the corpus by folder and by a digest of its files,
    so a changed source document means the log is checked again."""
    corpus = options.corpus
    digest = None
    if corpus is not None:
        h = hashlib.sha256()
        for path in sorted(p for p in corpus.root.rglob("*") if p.is_file()):
            h.update(str(path.relative_to(corpus.root)).encode("utf-8") + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
        digest = h.hexdigest()
    return {"casefold": options.casefold, "refusals": list(options.refusals),
            "corpus": None if corpus is None else str(corpus.root), "corpus_digest": digest,
            "reasons": list(reasons.ALL_REASONS)}  # a citecheck with new reason codes checks every line again


def options_from(record: dict) -> CheckOptions:
    corpus = record.get("corpus")
    return CheckOptions(casefold=record["casefold"], refusals=tuple(record["refusals"]),
                        corpus=Corpus(corpus) if corpus else None)


@dataclass(frozen=True)
class LogRun:
    """What checking one log into the store did."""

    file: str
    source: str
    lines: int  # non-blank lines
    checked: int  # lines parsed and checked now
    kept: int  # lines whose rows were kept from the last check
    appended: bool  # the old parts were kept as they are (the log only grew, or is new)
    errors: tuple[RecordError, ...] = field(default=())


def part_path(root: str | Path, table: str, source: str, part: str) -> Path:
    return Path(root) / table / f"log-{source}" / f"{part}.parquet"


def write_tables(root: str | Path, source: str, part: str, batches: Iterable[dict[str, pa.Table]]) -> int:
    """Write ``batches`` as the part ``part`` of the log ``source`` in the store at ``root`` (one file
    per table, written as the batches come, so memory stays flat); the rows written to answers and errors."""
    writers = {}
    rows = 0
    try:
        for table, schema in store_schema.TABLES.items():
            path = part_path(root, table, source, part)
            path.parent.mkdir(parents=True, exist_ok=True)
            writers[table] = pq.ParquetWriter(path, schema, compression="zstd",
                                              use_dictionary=store_schema.dictionary_columns(schema))
        for tables in batches:
            for table, t in tables.items():
                if t.num_rows:
                    writers[table].write_table(t)
                    if table in ("answers", "errors"):
                        rows += t.num_rows
    finally:
        for w in writers.values():
            w.close()
    return rows


@dataclass(frozen=True)
class Damage:
    """A part of a store that cannot be used: its file, the log it belongs to, what is wrong."""

    file: str
    log: str
    problem: str


def _digest(path: Path) -> str:
    """blake2b-128 of a part file's bytes, recorded when it is listed: ``store verify`` and the
    repair of a check find a part whose bytes changed under a sound footer (Parquet's pages carry
    no checksum that the readers test)."""
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _where(file: str, root: Path) -> dict:
    """A local log's absolute path and its path relative to the store, kept beside the path as given,
    so the store reads its logs back from any working folder, and after moving with them."""
    if "://" in file:
        return {}
    path = Path(file).resolve()
    return {"path": str(path), "relative": os.path.relpath(path, root.resolve())}


def _read_meta(meta: Path) -> dict:
    """A store's ``store.json``, of a version this citecheck reads (``schema.LINE_HASHES``)."""
    record = json.loads(meta.read_text(encoding="utf-8"))
    version = record.get("store_version")
    if version not in store_schema.LINE_HASHES:
        known = " and ".join(map(str, store_schema.LINE_HASHES))
        raise CheckedStoreError(f"{meta}: store format version {version!r}; this citecheck reads versions "
                                f"{known}. Check the logs into a new --store folder.")
    return record


def interrupted(root: Path) -> bool:
    """Whether ``root`` holds only what a first check into it leaves when it is killed before its
    ``store.json`` is written: table folders of log folders of Parquet parts (and the lock and
    the record's temporary file).  Nothing else: a folder of other files is never taken for one."""
    if not root.is_dir() or (root / META).exists():
        return False
    found = False
    for entry in root.iterdir():
        if entry.name in (".lock", META + ".tmp"):
            continue
        if entry.name not in store_schema.TABLES or not entry.is_dir():
            return False
        found = True
        for log in entry.iterdir():
            if not (log.is_dir() and log.name.startswith("log-")):
                return False
            if any(not (f.is_file() and f.name.startswith("part-") and f.suffix == ".parquet") for f in log.iterdir()):
                return False
    return found


class Store:
    """A store folder: its ``store.json`` record and its parts."""

    def __init__(self, root: str | Path, create: bool = False):
        self.root = Path(root)
        meta = self.root / META
        if meta.is_file():
            self.meta = _read_meta(meta)
        elif create:
            if interrupted(self.root):  # a first check killed before its store.json: none of it counts
                for table in store_schema.TABLES:
                    shutil.rmtree(self.root / table, ignore_errors=True)
                (self.root / (META + ".tmp")).unlink(missing_ok=True)
            elif self.root.exists() and any(p.name != ".lock" for p in self.root.iterdir()):
                raise CheckedStoreError(f"{self.root} is not empty and has no {META}: give an empty or new folder")
            self.meta = {"store_version": store_schema.STORE_VERSION, "next_part": 1, "logs": []}
        elif interrupted(self.root):
            raise CheckedStoreError(f"{self.root} is an unfinished checked store: the first check into it stopped "
                                    f"before it wrote {META}; run citecheck check LOG... --store {self.root} "
                                    "again to finish it")
        else:
            raise CheckedStoreError(f"{self.root} is not a checked store (no {META}); "
                             "write one with citecheck check LOG... --store DIR")

    # --- reading ---------------------------------------------------------------------------

    @property
    def version(self) -> int:
        """The store's format version (a store is read and checked into as the version it is)."""
        return int(self.meta["store_version"])

    def line_hash(self, raw: bytes | LongLine) -> bytes:
        """The hash this store keeps of a line (``batch.line_hash`` at the store's version): a line
        read back by offset is the one checked when the two agree."""
        return line_hash(raw, self.version)

    @property
    def logs(self) -> list[dict]:
        return self.meta["logs"]

    def log(self, source: str) -> dict | None:
        return next((entry for entry in self.logs if entry["source"] == source), None)

    def source_of(self, path: str) -> str:
        """The id this store knows the log at ``path`` by.  A log's id is made from its absolute path
        (:func:`source_id`); a store that moved with its logs finds them by their paths relative to
        it (:meth:`log_file`), and a log given from there is the log it holds, not a new one (which
        counted every answer twice).  So: the id of ``path`` when the store has it, else that of the
        one log whose place relative to the store is this file, else the id of ``path`` (a new log)."""
        own = source_id(path)
        if "://" in path or self.log(own) is not None:
            return own
        here = log_identity(path)  # (links not resolved: a link to a log is a log of its own, as for check)
        found = [entry["source"] for entry in self.logs
                 if entry.get("relative") and log_identity(os.path.normpath(self.root / entry["relative"])) == here]
        return found[0] if len(found) == 1 else own

    def log_file(self, source: str) -> str:
        """Where the log ``source`` is read back now: the absolute path it was checked at, else the
        same place relative to the store (a store that moved with its logs), else the path as given.
        Raises CheckedStoreError naming the log when it is in none of them."""
        entry = self.log(source)
        if entry is None:
            raise CheckedStoreError(f"{self.root} has no log {source}")
        if "://" in entry["file"]:
            return entry["file"]
        candidates = [entry.get("path"), str(self.root / entry["relative"]) if entry.get("relative") else None,
                      entry["file"]]
        for candidate in candidates:
            if candidate and Path(candidate).is_file():
                return candidate
        tried = ", ".join(dict.fromkeys(c for c in candidates if c))
        raise CheckedStoreError(f"the log {entry['file']} of the store {self.root} is gone (looked at {tried}); "
                                "put it back, or check it into the store again from where it is now")

    # --- damage: parts missing or unreadable --------------------------------------------------

    def damage(self, sources: Iterable[str] | None = None, deep: bool = False) -> list[Damage]:
        """The parts of the logs ``sources`` (default all) that are missing or unreadable, by their
        Parquet footers; ``deep`` also hashes each part against the digest recorded when it was
        listed and adds each log's rows up against its line count (a part's bytes are streamed, its
        rows never held: a store's parts may be far larger than memory)."""
        wanted = None if sources is None else set(sources)
        found = []
        for entry in self.logs:
            if wanted is not None and entry["source"] not in wanted:
                continue
            rows = 0
            for part in entry["parts"]:
                for table in store_schema.TABLES:
                    path = self.part_path(table, entry["source"], part)
                    want = (entry.get("digests") or {}).get(part, {}).get(table)
                    try:
                        if deep and want and _digest(path) != want:
                            found.append(Damage(str(path), entry["file"], "its bytes changed since it was written"))
                            continue
                        n = pq.ParquetFile(path).metadata.num_rows  # (the footer: no rows are read)
                    except FileNotFoundError:
                        found.append(Damage(str(path), entry["file"], "missing"))
                        continue
                    except (OSError, pa.ArrowException) as exc:
                        found.append(Damage(str(path), entry["file"], f"unreadable ({exc})"))
                        continue
                    rows += n if table in ("answers", "errors") else 0
            if deep and not any(d.log == entry["file"] for d in found) and rows != entry.get("lines", rows):
                found.append(Damage(str(self.root), entry["file"],
                                    f"holds {rows} answer and unreadable-line rows for its {entry['lines']} lines"))
        return found

    def damaged(self, found: list[Damage]) -> DamagedStoreError:
        """The error saying what is damaged and the command that repairs it."""
        logs = list(dict.fromkeys(d.log for d in found))
        shown = "; ".join(f"{d.file}: {d.problem}" for d in found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
        return DamagedStoreError(f"the checked store {self.root} is damaged: {shown}. Repair it by checking "
                                 f"its logs again: citecheck check {' '.join(logs)} --store {self.root}")

    def part_path(self, table: str, source: str, part: str) -> Path:
        return part_path(self.root, table, source, part)

    def files(self, table: str, sources: Iterable[str] | None = None) -> list[str]:
        """The Parquet files of ``table`` for the logs ``sources`` (default: every log), in log order."""
        wanted = None if sources is None else set(sources)
        return [str(self.part_path(table, entry["source"], part)) for entry in self.logs
                if wanted is None or entry["source"] in wanted for part in entry["parts"]]

    def errors(self, source: str) -> tuple[RecordError, ...]:
        """The unreadable lines of a log, in line order, as ``citecheck check`` reports them."""
        files = self.files("errors", [source])
        if not files:
            return ()
        t = _read(files, ["file", "line", "field", "message"]).sort_by("line")
        return tuple(RecordError(f, n, fld, m) for f, n, fld, m in zip(*(t.column(c).to_pylist() for c in t.column_names)))

    # --- check's summary, without DuckDB ---------------------------------------------------

    def summary(self, sources: Iterable[str]) -> Summary:
        """``citecheck check``'s running totals over the logs ``sources``, summed from their answers
        and errors parts with pyarrow (the same totals as ``StoreQuery.summary``, which
        ``tests/test_store_speed_paths.py`` compares: ``check --store`` need not start DuckDB).
        A column a part written by an older citecheck lacks (a reason code added since) counts 0."""
        wanted = list(dict.fromkeys(sources))
        found = self.damage(wanted)
        if found:
            raise self.damaged(found)
        sums = dict.fromkeys(_SUMMED, 0)
        answers = unreadable = 0
        with self._damage_said(wanted):
            for path in self.files("answers", wanted):
                part = pq.ParquetFile(path)
                columns = [c for c in _SUMMED if c in part.schema_arrow.names]
                table = part.read(columns=columns)
                answers += table.num_rows
                for name in columns:
                    total = pc.sum(table.column(name).cast(pa.int64())).as_py()
                    sums[name] += total or 0
            for path in self.files("errors", wanted):
                unreadable += pq.ParquetFile(path).metadata.num_rows
        s = Summary()
        s.answers, s.unreadable_lines = answers, unreadable
        (s.refused, s.answers_ok, s.invalid_markers, s.citations, s.failed, s.with_quote, s.quote_in_source,
         s.sentences, s.uncited, s.multi_claim, s.answers_with_unsupported_number) = (
            sums[name] for name in _SUMMED[:11])
        s._reasons = [sums[code] for code in reasons.ALL_REASONS]
        s.not_verifiable = sums["not_verifiable"]  # (0 for parts written before the column was added)
        return s

    def unreadable(self, sources: Iterable[str]) -> list[RecordError]:
        """Every unreadable line of the logs ``sources``, in that order, then by line (a log named
        twice is at its last place, as in ``StoreQuery.unreadable``)."""
        last = {source: k for k, source in enumerate(sources)}
        wanted = sorted(last, key=last.__getitem__)
        with self._damage_said(wanted):
            return [e for source in wanted for e in self.errors(source)]

    @contextlib.contextmanager
    def _damage_said(self, sources: list[str]):
        """A part whose rows cannot be read (garbage under a sound footer): the store's damage,
        named with the command that repairs it."""
        try:
            yield
        except (OSError, pa.ArrowException) as exc:
            found = self.damage(sources, deep=True)
            if found:
                raise self.damaged(found) from exc
            raise

    # --- writing ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self):
        """Hold the store's write lock (``DIR/.lock``, flock) and read store.json again under it, so
        two checks into one store run one after the other instead of overwriting each other's record."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                meta = self.root / META
                if meta.is_file():  # (written meanwhile by another check, of whatever version: its version counts)
                    self.meta = _read_meta(meta)
                yield self
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def new_part(self) -> str:
        n = self.meta["next_part"]
        self.meta["next_part"] = n + 1
        return f"part-{n:06d}"

    def _save(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / (META + ".tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(self.meta, handle, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.root / META)

    def write_part(self, source: str, batches: Iterable[dict[str, pa.Table]]) -> str:
        """Write ``batches`` (``Batch.tables()``) as one new part of the log ``source``; its name."""
        part = self.new_part()
        write_tables(self.root, source, part, batches)
        return part

    def commit(self, source: str, file: str, options: dict, parts: list[str], stats: dict) -> None:
        """Make ``parts`` the log's parts (one rename of store.json), then remove what is no longer listed."""
        entry = self.log(source)
        old = [] if entry is None else [p for p in entry["parts"] if p not in parts]
        digests = {} if entry is None else entry.get("digests", {})
        digests = {part: digests.get(part) or {table: _digest(self.part_path(table, source, part))
                                                for table in store_schema.TABLES} for part in parts}
        record = {"source": source, "file": file, **_where(file, self.root), "options": options, "parts": parts,
                  "digests": digests, **stats}
        if entry is None:
            self.logs.append(record)
        else:
            entry.clear()
            entry.update(record)
        self._save()
        for part in old:
            for table in store_schema.TABLES:
                self.part_path(table, source, part).unlink(missing_ok=True)
        self._sweep(source, parts)

    def unlisted(self) -> list[str]:
        """Files in the store's table folders that store.json does not list: what a crashed check
        left (harmless: never read, and the next check of their log removes them)."""
        listed = {str(self.part_path(table, e["source"], part)) for e in self.logs for part in e["parts"]
                  for table in store_schema.TABLES}
        return sorted(str(f) for table in store_schema.TABLES if (self.root / table).is_dir()
                      for f in (self.root / table).rglob("*") if f.is_file() and str(f) not in listed)

    def _sweep(self, source: str, parts: list[str]) -> None:
        """Remove files a crashed check left in the log's folders (not listed in store.json)."""
        keep = {f"{p}.parquet" for p in parts}
        for table in store_schema.TABLES:
            folder = self.root / table / f"log-{source}"
            if folder.is_dir():
                for path in folder.iterdir():
                    if path.name not in keep:
                        path.unlink(missing_ok=True)

    # --- checking a local log ---------------------------------------------------------------

    def check_log(self, path: str, options: CheckOptions, rows: int = 5_000) -> LogRun:
        """Check one log into the store, re-checking only the lines that changed since its last check."""
        source = self.source_of(path)
        opts = options_record(options)
        entry = self.log(source)
        if entry is not None and self.damage([source], deep=True):  # repair: a damaged log is checked again in full
            entry["options"] = {}  # (so none of its old rows is kept; commit removes its old parts)
        try:
            old = _old_lines(self, source) if entry is not None and entry["options"] == opts else {}
        except (OSError, pa.ArrowException):  # a part whose footer reads but whose rows do not
            if entry is not None:
                entry["options"] = {}
            old = {}
        kept: list[tuple[int, int, int]] = []  # (old offset, new offset, new line)
        lines = 0

        def changed():
            nonlocal lines
            with open_log(path) as handle:
                for line in numbered_lines(handle):
                    if is_blank(line):
                        continue
                    lines += 1
                    same = old.get(self.line_hash(line.raw)) if old else None
                    if same:
                        kept.append((same.popleft(), line.offset, line.number))
                    else:
                        yield line

        fresh = self.write_part(source, check_batches(source, path, changed(), options, self.version, rows))
        left_over = sum(len(q) for q in old.values())
        in_place = bool(kept) and all(o == n for o, n, _ in kept) and not left_over and entry is not None and \
            _same_lines(self, source, kept)
        if entry is None or not kept:
            parts = [fresh]
            appended = entry is None
        elif in_place:  # the log only grew: its old parts stay, the new lines are a new part
            parts = [*entry["parts"], fresh] if lines > len(kept) else list(entry["parts"])
            appended = True
        else:
            parts = [self._keep(source, entry["parts"], kept), fresh]
            appended = False
        self.commit(source, path, opts, parts, {"lines": lines, "size": log_size(path)})
        return LogRun(path, source, lines, lines - len(kept), len(kept), appended, self.errors(source))

    def _keep(self, source: str, parts: list[str], kept: list[tuple[int, int, int]]) -> str:
        """A new part holding the rows of the kept lines, at their new offsets and line numbers."""
        order = sorted(kept)
        old_offsets = np.array([k[0] for k in order], dtype=np.int64)
        new_offsets = np.array([k[1] for k in order], dtype=np.int64)
        new_lines = np.array([k[2] for k in order], dtype=np.int64)

        def moved():
            for part in parts:
                for table in store_schema.TABLES:
                    f = pq.ParquetFile(self.part_path(table, source, part))
                    for rb in f.iter_batches(batch_size=50_000):
                        t = pa.Table.from_batches([rb])
                        offsets = t.column("offset").to_numpy()
                        at = np.searchsorted(old_offsets, offsets)
                        at = np.minimum(at, len(old_offsets) - 1)
                        mask = old_offsets[at] == offsets
                        if not mask.any():
                            continue
                        t = t.filter(pa.array(mask))
                        at = at[mask]
                        t = t.set_column(t.schema.get_field_index("offset"), "offset", pa.array(new_offsets[at]))
                        t = t.set_column(t.schema.get_field_index("line"), "line", pa.array(new_lines[at]))
                        yield {table: t.cast(store_schema.TABLES[table])}

        return self.write_part(source, moved())


def _read(files: list[str], columns: list[str]) -> pa.Table:
    """The columns of Parquet files, one file at a time (``pq.read_table`` of a list of files
    imports pyarrow.dataset, and with it pandas: 0.3 s of a ``check --store``)."""
    return pa.concat_tables([pq.ParquetFile(f).read(columns=columns) for f in files])


def _old_lines(store: Store, source: str) -> dict[bytes, deque]:
    """Line hash -> the old offsets of lines with those bytes (answers and unreadable lines), in order."""
    out: dict[bytes, deque] = {}
    for table in ("answers", "errors"):
        files = store.files(table, [source])
        if not files:
            continue
        t = _read(files, ["offset", "line_hash"]).sort_by("offset")
        for offset, h in zip(t.column("offset").to_pylist(), t.column("line_hash").to_pylist()):
            out.setdefault(h, deque()).append(offset)
    return out


def _same_lines(store: Store, source: str, kept: list[tuple[int, int, int]]) -> bool:
    """True when every kept line also kept its line number (so the old parts can stay)."""
    files = store.files("answers", [source]) + store.files("errors", [source])
    lines: dict[int, int] = {}  # offset -> line number
    for path in files:
        t = pq.read_table(path, columns=["offset", "line"])
        lines.update(zip(t.column("offset").to_pylist(), t.column("line").to_pylist()))
    return all(lines.get(o) == n for o, _, n in kept)


__all__ = ["Batch", "LogRun", "Store", "options_from", "options_record", "source_id"]
