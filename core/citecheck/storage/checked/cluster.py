"""``citecheck check --store DIR --engine dask``: the logs checked on a Dask cluster.

The logs are split into partitions: whole files, and byte ranges of large files.  A partition
``[start, end)`` holds the lines that start inside it (a range that starts inside a line skips to
the next line start, so every line is in exactly one partition).  Each partition is read, checked
exactly as the single-process engine does (``batch.Batch``) and written by its worker as one part
of the store (so the store folder must be one every worker can write: a LocalCluster's is).  Its
first line number is the sum of the line counts of the partitions before it: small counting tasks
(a numpy pass over the bytes) that the checking tasks depend on, so the scheduler hands them out
first and starts each check as soon as the counts before it are in.  The driver reads no byte of
a log and waits for nothing before every task is submitted (it used to gather every count first,
issue #36); it only lists the parts in store.json: the store holds the same rows as after
``--engine local``.

Paths are anything fsspec (Dask's filesystem layer) opens: local paths, ``memory://``, ``s3://``...
(the workers must be able to read them).  A partition whose worker dies is run again by the
scheduler on another worker; one that raises is retried (``RETRIES``) before the check fails.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from citecheck.checking.checker import CheckOptions
from citecheck.storage.checked.batch import check_batches
from citecheck.storage.checked.folder import LogRun, Store, log_size, options_record, write_tables
from citecheck.storage.lines import line_ends, next_line_start, numbered_lines

BLOCK = 64 * 2**20  # at most this many bytes per partition of a large file
MIN_BLOCK = 2**20
# Partitions per worker when the size is not given.  Eight, not four: on a shared machine a worker
# gets less CPU than the other, and with four the faster one sat idle at the end (busy 82% of the
# run against 95%; eight: 89% and 97%, bench/bench_dask.py --profile, docs/scale.md).
PARTS_PER_WORKER = 8
RETRIES = 2


def _fs(path: str):
    import fsspec

    return fsspec.core.url_to_fs(path)


def partitions(path: str, block: int = BLOCK) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` of ``block`` bytes covering the file (one for a small file)."""
    fs, p = _fs(path)
    size = fs.size(p)
    return [(start, min(start + block, size)) for start in range(0, max(size, 1), block)]


_CHUNK = 2**22


def _line_start(fs, p: str, at: int, size: int) -> int:
    """The first line start at or after byte ``at`` (a line that starts before belongs to the range
    before), by the line rules of every reader (``storage.lines.next_line_start``).  Ranges are read
    with ``cat_file``: no file handle is shared between tasks (fsspec's memory filesystem hands
    every opener the same file object)."""
    return next_line_start(lambda start, end: fs.cat_file(p, start=start, end=end), at, size)


class _Range:
    """Bytes ``[first, stop)`` of a file as a binary stream, read in chunks with ``cat_file``."""

    def __init__(self, fs, p: str, first: int, stop: int):
        self.fs, self.p, self.pos, self.stop = fs, p, first, stop

    def read(self, size: int = -1) -> bytes:
        end = self.stop if size < 0 else min(self.pos + size, self.stop)
        if end <= self.pos:
            return b""
        data = self.fs.cat_file(self.p, start=self.pos, end=end)
        self.pos += len(data)
        return data


def _bounds(path: str, start: int, end: int):
    fs, p = _fs(path)
    size = fs.size(p)
    return fs, p, _line_start(fs, p, start, size), _line_start(fs, p, min(end, size), size) if end < size else size


def count_lines(path: str, start: int, end: int) -> int:
    """How many lines (blank ones too) start in ``[start, end)``: the line numbers a partition takes,
    counted by the line rules of every reader (``storage.lines.line_ends``)."""
    fs, p, first, stop = _bounds(path, start, end)
    count, last = 0, b"\n"
    for pos in range(first, stop, _CHUNK):
        until = min(pos + _CHUNK, stop)
        data = fs.cat_file(p, start=pos, end=until)
        # (numpy compares 32 bytes at a time: 2.7 times as fast as bytes.count, which was 5-6% of
        # a worker's time on a log split in byte ranges, bench/bench_dask.py --profile)
        newlines = int(np.count_nonzero(np.frombuffer(data, np.uint8) == 10))
        follows = fs.cat_file(p, start=until, end=until + 1) if data.endswith(b"\r") else b""
        count += line_ends(data, follows, newlines)
        last = data[-1:] or last
    return count + (last not in (b"\n", b"\r"))


def range_batches(path: str, source: str, start: int, end: int, options: CheckOptions, lines_before: int = 0,
                  rows: int = 5_000, *, version: int) -> Iterator[dict[str, pa.Table]]:
    """The tables of the lines that start in ``[start, end)`` of the log, numbered after ``lines_before``
    lines, checked exactly as the single-process engine checks them (for a store of ``version``)."""
    fs, p, first, stop = _bounds(path, start, end)
    lines = numbered_lines(_Range(fs, p, first, stop), first, lines_before + 1, _CHUNK)  # type: ignore[arg-type]
    return check_batches(source, path, lines, options, version, rows)


def check_range(path: str, source: str, start: int, end: int, options: CheckOptions,
                lines_before: int = 0, *, version: int) -> list[dict[str, pa.Table]]:
    return list(range_batches(path, source, start, end, options, lines_before, version=version))


def check_part(root: str, path: str, source: str, part: str, start: int, end: int, options: CheckOptions,
               lines_before: int | Sequence[int], *, version: int) -> int:
    """On a worker: check one partition and write it as the part ``part`` of the store at ``root``
    (a folder every worker can write); the non-blank lines written.  ``lines_before``: the lines of
    the log before ``start``, or the line counts (``count_lines``) of the partitions before it;
    ``version``: the store's (which ``line_hash``).
    Run again, it writes the same file."""
    before = lines_before if isinstance(lines_before, int) else sum(lines_before)
    return write_tables(root, source, part, range_batches(path, source, start, end, options, before,
                                                          version=version))


# Dask settings of the LocalCluster ``client_for`` starts.  A worker's statistical profiler (on by
# default: the dashboard's Profile tab) samples the running task's stack every 10 ms from another
# thread, and takes the GIL to do so: with two checking workers on two cores it made each check
# about 1.4 times slower (bench/bench_dask.py: 2 workers 1.44x the local engine with it, about 1.9x
# without).  citecheck's LocalCluster shows no dashboard to anyone, so it is off; a scheduler given
# with --scheduler keeps its workers' own settings.
LOCAL_CLUSTER_CONFIG = {"distributed.worker.profile.enabled": False}


def client_for(scheduler: str | None, workers: int = 2):
    """A ``distributed.Client`` of the scheduler at ``scheduler``, or of a new LocalCluster of
    ``workers`` single-threaded worker processes (:data:`LOCAL_CLUSTER_CONFIG`); and the cluster to
    close (None for a scheduler)."""
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise SystemExit("--engine dask needs Dask: pip install 'citecheck[dask]'") from None
    if scheduler:
        return Client(scheduler), None
    with dask.config.set(LOCAL_CLUSTER_CONFIG):  # (a nanny hands its config to the worker it starts)
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
    return Client(cluster), cluster


def _for_workers(path: str) -> str:
    """A log's path as a worker reads it: a URL as it is, a file by its absolute path (a cluster
    given by ``--scheduler`` runs its workers in a folder of its own)."""
    return path if "://" in path else os.path.abspath(path)


def check_on_dask(store: Store, paths: Sequence[str], options: CheckOptions, scheduler: str | None = None,
                  workers: int = 2, block: int | None = None, client=None,
                  on_result: Callable[[int], None] | None = None) -> list[LogRun]:
    """Check ``paths`` into ``store`` on a Dask cluster (``client``, or one for ``scheduler``).

    Each partition is checked and written by its worker as a part of the store, once the line
    counts of the partitions before it (small tasks, submitted first) are in.  Every line is
    checked (none is kept from an earlier check).  ``on_result(n)`` is called after the n-th
    partition was written."""
    own, made = None, client is None
    if made:
        client, own = client_for(scheduler, workers)
    try:
        root = str(store.root.resolve())
        store.root.mkdir(parents=True, exist_ok=True)
        if block is None:  # several partitions per worker, so a slow one holds the others up little
            total = sum(log_size(p) for p in paths)
            n = max(1, len(client.scheduler_info().get("workers", {})))
            block = min(BLOCK, max(MIN_BLOCK, -(-total // (PARTS_PER_WORKER * n))))
        split = [(path, store.source_of(path), partitions(path, block)) for path in paths]
        # Every partition's line count but the last's, submitted first (the scheduler runs tasks
        # in the order they were submitted when it can): each check takes the counts before it.
        # (a worker reads a log by its absolute path: its working folder need not be this one's)
        counts = [[client.submit(count_lines, _for_workers(path), s, e, retries=RETRIES, pure=False)
                   for s, e in ranges[:-1]] for path, _, ranges in split]
        jobs = []
        for (path, source, ranges), futures in zip(split, counts):
            names, writes = [], []
            for k, (start, end) in enumerate(ranges):
                part = store.new_part()
                names.append(part)
                writes.append(client.submit(check_part, root, _for_workers(path), source, part, start, end, options,
                                            futures[:k], version=store.version, retries=RETRIES, pure=False))
            jobs.append((path, source, names, writes))
        runs = []
        done = 0
        opts = options_record(options)
        for path, source, names, writes in jobs:
            lines = 0
            for future in writes:
                lines += future.result()
                done += 1
                if on_result:
                    on_result(done)
            store.commit(source, path, opts, names, {"lines": lines, "size": log_size(path)})
            runs.append(LogRun(path, source, lines, lines, 0, True, store.errors(source)))
        return runs
    finally:
        if made:
            client.close()
        if own is not None:
            own.close()
