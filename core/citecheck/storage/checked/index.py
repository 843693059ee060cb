"""The review page's index of a store's answers, made a slice of lines at a time.

One row per answer in log order (``pos``: 0, 1, ... over the logs in store order, then byte
offset), with only the columns navigation and reading back need.  Made by one query over the
whole store, the window over a million rows (its sort holds every row's columns) took about
350 MB of memory beyond the index's own 95 MB; made by a DuckDB window over slices of each log,
3 to 4 s at a million answers.  Now each log's parts are read with pyarrow a slice at a time, in the
order they were written (line order, so no sort unless a log's offsets say otherwise), and the
slices are appended in ``pos`` order (so a lookup by ``pos`` reads one row group).

The columns are kept narrow (about 75 bytes an answer in DuckDB's memory instead of 95): the log
as its place in ``sources`` (``log``, not its 16-character id), the line's hash as one 128-bit
integer (``line_hash``; ``hash_int`` gives the same of a digest), and whether the answer has
anything to review (``items``: a sentence that is not the refusal sentence, ``sentences > 0``; the
review page's "unlabelled" filter joined every sentence of the store to find that).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

if TYPE_CHECKING:
    import duckdb

    from citecheck.storage.checked.folder import Store

SLICE = 100_000  # lines of one log sorted at a time
INDEX_VERSION = 2  # of the saved index (its columns and their order): another version is made again
FOLDER = "review"  # DIR/review/index-<key>.duckdb: the index saved when the store is written
# Saved from this many lines up: below it the page makes the index in a few tenths of a second at
# most, less than DuckDB's import and the save cost ``check --store`` (0.34 s at 50,000 answers).
SAVE_FROM = 250_000

_CREATE = ('CREATE {temp} TABLE {name} (pos BIGINT, answer_id VARCHAR, log INTEGER, line BIGINT, '
           '"offset" BIGINT, line_hash UHUGEINT, failing BOOLEAN, failed BIGINT, refused BOOLEAN, items BOOLEAN)')


def hash_int(digest: bytes) -> int:
    """A line hash (``batch.line_hash``) as the index keeps it."""
    return int.from_bytes(digest, "big")


def make_index(con: duckdb.DuckDBPyConnection, logs: Sequence[Sequence[str]], name: str = "nav",
               slice_lines: int = SLICE, temp: bool = True) -> int:
    """Create the temp table ``name``: the answers of ``logs`` (each log's answers Parquet parts, the
    logs in store order; ``log`` is the place of a row's log in ``logs``) in log order; returns its
    number of rows.  Read with pyarrow, ``slice_lines`` rows at a time, and inserted as they come:
    a log's parts are written in line order, so no sort is needed unless its offsets say otherwise
    (checked first, on the offset column alone; then that log is sorted by offset)."""
    con.execute(_CREATE.format(temp="TEMP" if temp else "", name=name))
    pos = 0
    for log, files in enumerate(logs):
        for batch in _in_log_order(files, slice_lines):
            pos += _insert(con, name, batch, log, pos)
    return pos


_READ = ["answer_id", "line", "offset", "line_hash", "failing", "failed", "refused", "sentences"]


def _in_log_order(files: Sequence[str], slice_lines: int) -> Iterator[pa.RecordBatch]:
    if not files:
        return
    offsets = np.concatenate([pq.read_table(f, columns=["offset"]).column(0).to_numpy() for f in files])
    if len(offsets) < 2 or bool(np.all(offsets[1:] > offsets[:-1])):
        for f in files:
            yield from pq.ParquetFile(f).iter_batches(batch_size=slice_lines, columns=_READ)
        return
    whole = pa.concat_tables([pq.read_table(f, columns=_READ) for f in files]).sort_by("offset")
    yield from whole.to_batches(max_chunksize=slice_lines)


def _insert(con: duckdb.DuckDBPyConnection, name: str, batch: pa.RecordBatch, log: int, pos: int) -> int:
    n = batch.num_rows
    if not n:
        return 0
    columns = {"pos": pa.array(np.arange(pos, pos + n, dtype=np.int64)), "answer_id": batch.column("answer_id"),
               "line": batch.column("line"), "offset": batch.column("offset"), "failing": batch.column("failing"),
               "failed": batch.column("failed"),
               "refused": batch.column("refused"), "items": pc.greater(batch.column("sentences"), 0)}
    halves = _hash_halves(batch.column("line_hash"))
    if halves is not None:  # the usual 16-byte hashes: as two 64-bit halves, joined in DuckDB
        columns["hi"], columns["lo"] = pa.array(halves[0]), pa.array(halves[1])
        line_hash = "(hi::UHUGEINT << 64) | lo::UHUGEINT"
    else:
        columns["raw"] = batch.column("line_hash")
        line_hash = "('0x' || hex(raw))::UHUGEINT"
    con.register("_nav_slice", pa.table(columns))
    try:
        con.execute(f'INSERT INTO {name} SELECT pos, answer_id, {int(log)}, line, "offset", {line_hash}, failing, '
                    "failed, refused, items FROM _nav_slice ORDER BY pos")
    finally:
        con.unregister("_nav_slice")
    return n


def _hash_halves(hashes: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """The big-endian high and low 64 bits of each 16-byte hash (``hash_int`` of each), or None when
    not every hash is 16 bytes long."""
    if hashes.null_count:
        return None
    if pa.types.is_fixed_size_binary(hashes.type) and hashes.type.byte_width == 16:
        start = hashes.offset * 16
        data = np.frombuffer(hashes.buffers()[1], dtype=np.uint8)[start:start + 16 * len(hashes)].reshape(-1, 16)
    elif pa.types.is_binary(hashes.type) and bool(pc.all(pc.equal(pc.binary_length(hashes), 16)).as_py()):
        bounds = np.frombuffer(hashes.buffers()[1], dtype=np.int32)[hashes.offset:hashes.offset + len(hashes) + 1]
        data = np.frombuffer(hashes.buffers()[2], dtype=np.uint8)[bounds[0]:bounds[-1]].reshape(-1, 16)
    else:
        return None
    return (data[:, :8].copy().view(">u8").ravel().astype(np.uint64),
            data[:, 8:].copy().view(">u8").ravel().astype(np.uint64))


# --- the index saved beside the store -------------------------------------------------------------
#
# Making the index reads every answer's row (about 0.7 to 2.5 s at a million answers), and a freshly
# started server's first Review view waited on it (issue #36).  ``check --store`` now saves it when it
# writes a store of ``SAVE_FROM`` lines or more, as a DuckDB file named by a key of what it was made
# from (the index version and each log's parts, digests and options, in store order): the page
# attaches it read-only when the key is the store's, and makes the index in memory as before when it
# is not (a smaller store, a store written by an older citecheck, a failed save, a read-only folder).
# A saved index never decides anything the store's parts do not: it is a copy of their columns, made
# again whenever they change.


def index_key(store: Store) -> str:
    """What the saved index of ``store`` was made from, as a short hex key."""
    logs = [[e["source"], e["parts"], e.get("digests") or {}, e.get("options") or {}] for e in store.logs]
    text = json.dumps([INDEX_VERSION, logs], sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:24]


def saved_index(store: Store) -> Path:
    """Where the index of the store as it is now is saved (whether or not it is)."""
    return store.root / FOLDER / f"index-{index_key(store)}.duckdb"


def worth_saving(store: Store) -> bool:
    """Whether the store holds enough lines (``SAVE_FROM``) for a saved index to spare its page time."""
    return sum(int(e.get("lines") or 0) for e in store.logs) >= SAVE_FROM


def save_index(store: Store) -> Path | None:
    """Save the review index of the store as it is now (``DIR/review/index-<key>.duckdb``), made
    beside it and renamed into place, and remove any older one; None when it could not be saved
    (a full disk, a read-only folder: the page then makes it in memory, as it always did)."""
    import duckdb  # (here: a check --store of a smaller store never starts DuckDB)

    target = saved_index(store)
    if target.is_file():
        return target
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(exist_ok=True)
        con = duckdb.connect(str(tmp))
        try:
            make_index(con, [store.files("answers", [e["source"]]) for e in store.logs], temp=False)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except (OSError, duckdb.Error):
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            try:
                leftover.unlink(missing_ok=True)
            except OSError:
                pass  # (its folder could not be made)
        return None
    for old in [*target.parent.glob("index-*.duckdb"), *target.parent.glob(".index-*")]:
        if old != target:  # (older indexes, and what a save killed midway left)
            old.unlink(missing_ok=True)
    return target


def open_index(con: duckdb.DuckDBPyConnection, store: Store, sources: Sequence[str], name: str = "nav") -> int:
    """The store's review index as ``name`` on ``con`` (the answers of ``sources``, in that order):
    the saved one, attached read-only, when it was made from the store as it is now and from all its
    logs in store order; else made in memory (:func:`make_index`).  Returns its number of rows."""
    import duckdb

    path = saved_index(store) if list(sources) == [e["source"] for e in store.logs] else None
    if path is not None and path.is_file():
        quoted = str(path).replace("'", "''")
        try:
            con.execute(f"ATTACH '{quoted}' AS review_index (READ_ONLY)")
        except duckdb.Error:
            pass  # (unreadable, or of another DuckDB storage version: made in memory)
        else:
            try:
                con.execute(f"CREATE TEMP VIEW {name} AS SELECT * FROM review_index.{name}")
                return int(con.execute(f"SELECT count(*) FROM {name}").fetchone()[0])  # type: ignore[index]
            except duckdb.Error:
                con.execute(f"DROP VIEW IF EXISTS {name}")
                con.execute("DETACH review_index")
    return make_index(con, [store.files("answers", [s]) for s in sources], name)
