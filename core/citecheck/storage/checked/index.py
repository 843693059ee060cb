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

from collections.abc import Iterator, Sequence

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

SLICE = 100_000  # lines of one log sorted at a time

_CREATE = ('CREATE TEMP TABLE {name} (pos BIGINT, answer_id VARCHAR, log INTEGER, line BIGINT, '
           '"offset" BIGINT, line_hash UHUGEINT, failed BIGINT, refused BOOLEAN, items BOOLEAN)')


def hash_int(digest: bytes) -> int:
    """A line hash (``batch.line_hash``) as the index keeps it."""
    return int.from_bytes(digest, "big")


def make_index(con: duckdb.DuckDBPyConnection, logs: Sequence[Sequence[str]], name: str = "nav",
               slice_lines: int = SLICE) -> int:
    """Create the temp table ``name``: the answers of ``logs`` (each log's answers Parquet parts, the
    logs in store order; ``log`` is the place of a row's log in ``logs``) in log order; returns its
    number of rows.  Read with pyarrow, ``slice_lines`` rows at a time, and inserted as they come:
    a log's parts are written in line order, so no sort is needed unless its offsets say otherwise
    (checked first, on the offset column alone; then that log is sorted by offset)."""
    con.execute(_CREATE.format(name=name))
    pos = 0
    for log, files in enumerate(logs):
        for batch in _in_log_order(files, slice_lines):
            pos += _insert(con, name, batch, log, pos)
    return pos


_READ = ["answer_id", "line", "offset", "line_hash", "failed", "refused", "sentences"]


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
               "line": batch.column("line"), "offset": batch.column("offset"), "failed": batch.column("failed"),
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
        con.execute(f'INSERT INTO {name} SELECT pos, answer_id, {int(log)}, line, "offset", {line_hash}, failed, '
                    "refused, items FROM _nav_slice ORDER BY pos")
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
