"""``citecheck check --store DIR --engine dask``: the logs checked on a Dask cluster.

The logs are split into partitions: whole files, and byte ranges of large files.  A partition
``[start, end)`` holds the lines that start inside it (a range that starts inside a line skips to
the next line start, so every line is in exactly one partition).  Each partition is read and
checked by a worker exactly as the single-process engine does (``batch.Batch``) and comes back as
Arrow tables with line numbers counted from the partition's first line; here the numbers are made
absolute (the lines of the partitions before it) and the tables are written in partition order,
so the store holds the same rows as after ``--engine local``.

Paths are anything fsspec (Dask's filesystem layer) opens: local paths, ``memory://``, ``s3://``...
(the workers must be able to read them).  A partition whose worker dies is run again by the
scheduler on another worker; one that raises is retried (``RETRIES``) before the check fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ..checking.checker import CheckOptions
from .batch import Batch, read_lines
from .store import LogRun, Store, options_record, source_id

BLOCK = 64 * 2**20  # bytes per partition of a large file
RETRIES = 2


def _fs(path: str):
    import fsspec

    return fsspec.core.url_to_fs(path)


def partitions(path: str, block: int = BLOCK) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` of ``block`` bytes covering the file (one for a small file)."""
    fs, p = _fs(path)
    size = fs.size(p)
    return [(start, min(start + block, size)) for start in range(0, max(size, 1), block)]


def check_range(path: str, source: str, start: int, end: int, options: CheckOptions,
                rows: int = 20_000) -> tuple[list[dict[str, pa.Table]], int]:
    """Check the lines that start in ``[start, end)`` of the log; their tables (line numbers from 1
    at the partition's first line) and how many lines (blank ones too) the partition holds."""
    fs, p = _fs(path)
    out: list[dict[str, pa.Table]] = []
    count = 0
    with fs.open(p, "rb") as handle:
        if start:
            handle.seek(start - 1)
            if handle.read(1) != b"\n":
                start += len(handle.readline())  # the line started before: it is the previous partition's
        batch = Batch(source, path)
        if start < end:
            handle.seek(start)
            for number, offset, raw in read_lines(handle, start, end):
                count = number
                batch.add(number, offset, raw, options)
                if batch.rows >= rows:
                    out.append(batch.tables())
                    batch = Batch(source, path)
        if batch.rows:
            out.append(batch.tables())
    return out, count


def _shift(tables: dict[str, pa.Table], lines_before: int) -> dict[str, pa.Table]:
    if not lines_before:
        return tables
    out = {}
    for name, t in tables.items():
        at = t.schema.get_field_index("line")
        out[name] = t.set_column(at, t.schema.field(at), pc.add(t.column("line"), lines_before))
    return out


def client_for(scheduler: str | None, workers: int = 2):
    """A ``distributed.Client`` of the scheduler at ``scheduler``, or of a new LocalCluster of
    ``workers`` single-threaded worker processes; and the cluster to close (None for a scheduler)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SystemExit("--engine dask needs Dask: pip install 'citecheck[dask]'") from None
    if scheduler:
        return Client(scheduler), None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
    return Client(cluster), cluster


def check_on_dask(store: Store, paths: Sequence[str], options: CheckOptions, scheduler: str | None = None,
                  workers: int = 2, block: int = BLOCK, client=None,
                  on_result: Callable[[int], None] | None = None) -> list[LogRun]:
    """Check ``paths`` into ``store`` on a Dask cluster (``client``, or one for ``scheduler``);
    every line is checked (no line is kept from an earlier check).  ``on_result(n)`` is called
    after the n-th partition (from 1) came back."""
    own = None
    if client is None:
        client, own = client_for(scheduler, workers)
    try:
        jobs = []
        for path in paths:
            source = source_id(path)
            futures = [client.submit(check_range, path, source, start, end, options, retries=RETRIES, pure=False)
                       for start, end in partitions(path, block)]
            jobs.append((path, source, futures))
        runs = []
        done = 0
        opts = options_record(options)
        for path, source, futures in jobs:
            lines = 0
            counted = {"lines": 0}

            def batches(futures=futures):
                nonlocal lines, done
                for future in futures:
                    tables, count = future.result()
                    future.release()
                    done += 1
                    if on_result:
                        on_result(done)
                    for t in tables:
                        counted["lines"] += t["answers"].num_rows + t["errors"].num_rows
                        yield _shift(t, lines)
                    lines += count

            part = store.write_part(source, batches())
            fs, p = _fs(path)
            store.commit(source, path, opts, [part], {"lines": counted["lines"], "size": fs.size(p)})
            n = counted["lines"]
            runs.append(LogRun(path, source, n, n, 0, True, store.errors(source)))
        return runs
    finally:
        if own is not None:
            client.close()
            own.close()
