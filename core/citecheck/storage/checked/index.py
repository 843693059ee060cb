"""The review page's index of a store's answers, made a slice of lines at a time.

One row per answer in log order (``pos``: 0, 1, ... over the logs in store order, then byte
offset), with only the columns navigation and reading back need.  Made by one query over the
whole store, the window over a million rows (its sort holds every row's columns) took about
350 MB of memory beyond the index's own 95 MB, and glibc keeps what DuckDB's threads freed; made
``SLICE`` lines of one log at a time, the sort holds one slice, and the rows are appended in
``pos`` order (so a lookup by ``pos`` reads one row group).

The columns are kept narrow (about 75 bytes an answer in DuckDB's memory instead of 95): the log
as its place in ``sources`` (``log``, not its 16-character id), the line's hash as one 128-bit
integer (``line_hash``; ``hash_int`` gives the same of a digest), and whether the answer has
anything to review (``items``: a sentence that is not the refusal sentence, ``sentences > 0``; the
review page's "unlabelled" filter joined every sentence of the store to find that).
"""

from __future__ import annotations

from typing import cast

import duckdb

SLICE = 100_000  # lines of one log sorted at a time

COLUMNS = ('answer_id', '?::INTEGER AS log', 'line', '"offset"', "('0x' || hex(line_hash))::UHUGEINT AS line_hash",
           'failed', 'refused', 'sentences > 0 AS items')
_CREATE = ('CREATE TEMP TABLE {name} (pos BIGINT, answer_id VARCHAR, log INTEGER, line BIGINT, '
           '"offset" BIGINT, line_hash UHUGEINT, failed BIGINT, refused BOOLEAN, items BOOLEAN)')


def hash_int(digest: bytes) -> int:
    """A line hash (``batch.line_hash``) as the index keeps it."""
    return int.from_bytes(digest, "big")


def make_index(con: duckdb.DuckDBPyConnection, sources: list[str], name: str = "nav",
               slice_lines: int = SLICE) -> int:
    """Create the temp table ``name`` over the view ``answers`` of ``con``, the logs in the order of
    ``sources`` (``log`` is the place of the row's log in ``sources``); returns its number of rows."""
    con.execute(_CREATE.format(name=name))
    cols = ", ".join(COLUMNS)
    last = dict(con.execute("SELECT source, max(line) FROM answers GROUP BY source").fetchall())
    pos = 0
    for log, source in enumerate(sources):
        top = last.get(source)
        low = 0
        while top is not None and low < top:
            high = low + slice_lines
            inserted = con.execute(
                f'INSERT INTO {name} SELECT (? + row_number() OVER (ORDER BY "offset") - 1)::BIGINT, {cols} '
                'FROM answers WHERE source = ? AND line > ? AND line <= ? ORDER BY "offset"',
                [pos, log, source, low, high]).fetchone()
            (added,) = cast(tuple[int], inserted)  # (an INSERT gives one row: the number of rows inserted)
            pos += added
            low = high
    return pos
