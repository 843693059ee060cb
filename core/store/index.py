"""The review page's index of a store's answers, made a slice of lines at a time.

One row per answer in log order (``pos``: 0, 1, ... over the logs in store order, then byte
offset), with only the columns navigation and reading back need.  Made by one query over the
whole store, the window over a million rows (its sort holds every row's columns) took about
350 MB of memory beyond the index's own 95 MB, and glibc keeps what DuckDB's threads freed; made
``SLICE`` lines of one log at a time, the sort holds one slice, and the rows are appended in
``pos`` order (so a lookup by ``pos`` reads one row group).
"""

from __future__ import annotations

import duckdb

SLICE = 100_000  # lines of one log sorted at a time

COLUMNS = ('answer_id', 'source', 'line', '"offset"', 'line_hash', 'failed', 'refused')
_CREATE = ('CREATE TEMP TABLE {name} (pos BIGINT, answer_id VARCHAR, source VARCHAR, line BIGINT, '
           '"offset" BIGINT, line_hash BLOB, failed BIGINT, refused BOOLEAN)')


def make_index(con: duckdb.DuckDBPyConnection, sources: list[str], name: str = "nav",
               slice_lines: int = SLICE) -> int:
    """Create the temp table ``name`` over the view ``answers`` of ``con``, the logs in the order of
    ``sources``; returns its number of rows."""
    con.execute(_CREATE.format(name=name))
    cols = ", ".join(COLUMNS)
    last = dict(con.execute("SELECT source, max(line) FROM answers GROUP BY source").fetchall())
    pos = 0
    for source in sources:
        top = last.get(source)
        low = 0
        while top is not None and low < top:
            high = low + slice_lines
            (added,) = con.execute(
                f'INSERT INTO {name} SELECT (? + row_number() OVER (ORDER BY "offset") - 1)::BIGINT, {cols} '
                'FROM answers WHERE source = ? AND line > ? AND line <= ? ORDER BY "offset"',
                [pos, source, low, high]).fetchone()
            pos += added
            low = high
    return pos
