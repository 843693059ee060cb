"""`citecheck check --store DIR --engine dask`: the logs checked on a real Dask LocalCluster (worker
processes) give the store the single-process engine gives, also when a worker dies mid-run."""

from __future__ import annotations

import io
import os
import signal
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from citecheck.checking.checker import CheckOptions
from citecheck.cli.main import main
from citecheck.contract.corpus import Corpus
from citecheck.storage.checked import schema
from citecheck.storage.checked.cluster import check_on_dask, check_range, count_lines, partitions
from citecheck.storage.checked.folder import Store
from citecheck.storage.checked.query import StoreQuery
from helpers import figures_only
from hypothesis import given, settings
from hypothesis import strategies as hs
from test_store import generated_log

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed (pip install -e .[dask])")

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "sample_data" / "corpus"


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
        yield c


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs")
    return [str(generated_log(folder / "a.jsonl", 300)), str(generated_log(folder / "b.jsonl", 120, seed=3))]


def rows(store: Store, table: str) -> list[dict]:
    out = pq.read_table(store.files(table)).to_pylist()
    return sorted(out, key=lambda r: (r["source"], r["offset"], r.get("index") or 0))


def new_store(folder: Path, version: int = schema.STORE_VERSION) -> Store:
    store = Store(folder, create=True)
    store.meta["store_version"] = version  # (a version 1 store, as citecheck 0.2 made it: its line hash differs)
    return store


def local_store(folder: Path, paths, options, version: int = schema.STORE_VERSION) -> Store:
    store = new_store(folder, version)
    for p in paths:
        store.check_log(p, options)
    return store


@settings(max_examples=200, deadline=None)
@given(data=hs.binary(max_size=300).map(lambda b: b.replace(b"\r", b"\n")) | hs.text("ab\n", max_size=300).map(str.encode),
       block=hs.integers(1, 64), chunk=hs.integers(1, 16))
def test_line_counts_of_the_byte_ranges_add_up_to_the_file_lines(data, block, chunk):
    import fsspec
    from citecheck.storage.checked import cluster as dask_cluster

    path = "memory://count/log.jsonl"
    fsspec.filesystem("memory").pipe_file("/count/log.jsonl", data)
    old, dask_cluster._CHUNK = dask_cluster._CHUNK, chunk  # (read a few bytes at a time, as a large file is read in 4 MB chunks)
    try:
        counts = [count_lines(path, s, e) for s, e in partitions(path, block=block)]
    finally:
        dask_cluster._CHUNK = old
    assert sum(counts) == data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))
    assert all(n >= 0 for n in counts)


def test_partitions_cover_every_line_once(logs):
    options = CheckOptions()
    size = Path(logs[0]).stat().st_size
    whole = check_range(logs[0], "x", 0, size, options, version=schema.STORE_VERSION)
    ranges = partitions(logs[0], block=3000)
    assert len(ranges) > 10 and ranges[-1][1] == size
    counts = [count_lines(logs[0], s, e) for s, e in ranges]
    assert sum(counts) == len(Path(logs[0]).read_bytes().splitlines())
    parts = []
    before = 0
    for (s, e), n in zip(ranges, counts):
        parts += check_range(logs[0], "x", s, e, options, before, version=schema.STORE_VERSION)
        before += n
    for table in ("answers", "errors"):
        got = [(o, n) for t in parts for o, n in zip(t[table].column("offset").to_pylist(), t[table].column("line").to_pylist())]
        assert got == [(o, n) for t in whole for o, n in zip(t[table].column("offset").to_pylist(),
                                                               t[table].column("line").to_pylist())]


@pytest.mark.parametrize("version", [1, 2])
def test_dask_engine_stores_what_the_local_engine_stores(tmp_path, cluster, logs, version):
    options = CheckOptions(corpus=Corpus(CORPUS))
    local = local_store(tmp_path / "local", logs, options, version)
    with distributed.Client(cluster) as client:
        dask = new_store(tmp_path / "dask", version)
        runs = check_on_dask(dask, logs, options, client=client, block=65536)
    assert Store(tmp_path / "dask").version == Store(tmp_path / "local").version == version
    assert [r.lines for r in runs] == [e["lines"] for e in local.logs]
    for table in schema.TABLES:
        assert rows(dask, table) == rows(local, table), table
    assert StoreQuery(dask).summary() == StoreQuery(local).summary()
    assert [str(e) for e in StoreQuery(dask).unreadable()] == [str(e) for e in StoreQuery(local).unreadable()]


def test_cli_dask_engine_on_an_existing_scheduler(tmp_path, cluster, logs):
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", *logs, "--store", str(tmp_path / "s"), "--engine", "dask", "--scheduler",
                 cluster.scheduler_address, "--corpus", str(CORPUS)], out, err)
    out2, err2 = io.StringIO(), io.StringIO()
    code2 = main(["check", *logs, "--store", str(tmp_path / "l"), "--corpus", str(CORPUS)], out2, err2)
    assert code == code2 == 4
    assert err.getvalue() == err2.getvalue()  # every unreadable line said as by the local engine
    # the summary (its inputs name each store, and differ by that alone)
    assert figures_only(out.getvalue()).split("\n\n", 1)[1] == figures_only(out2.getvalue()).split("\n\n", 1)[1]


def test_memory_paths_through_fsspec(tmp_path, logs):
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe("/citecheck/log.jsonl", Path(logs[1]).read_bytes())
    url = "memory:///citecheck/log.jsonl"
    options = CheckOptions()
    local = Store(tmp_path / "local", create=True)
    local.check_log(url, options)
    # memory:// lives in one process: a cluster of threads in this process reads it
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as c, \
            distributed.Client(c) as client:
        dask = Store(tmp_path / "dask", create=True)
        check_on_dask(dask, [url], options, client=client, block=16384)
    for table in schema.TABLES:
        assert rows(dask, table) == rows(local, table), table
    assert rows(local, "answers")[0]["file"] == url


def test_a_worker_killed_mid_run_loses_nothing(tmp_path, cluster, logs):
    options = CheckOptions()
    local = local_store(tmp_path / "local", logs, options)
    killed = []
    with distributed.Client(cluster) as client:
        pids = client.run(os.getpid)

        def kill_one(done: int) -> None:
            if done == 1 and not killed:  # a partition came back; the others are queued or running
                pid = next(iter(pids.values()))
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

        dask = Store(tmp_path / "dask", create=True)
        check_on_dask(dask, logs, options, client=client, block=32768, on_result=kill_one)
        client.wait_for_workers(2, timeout=60)
    assert killed
    for table in schema.TABLES:
        assert rows(dask, table) == rows(local, table), table


def _busy(seconds: float = 0.4) -> int:
    import time

    until, n = time.monotonic() + seconds, 0
    while time.monotonic() < until:
        n += 1
    return n


def test_the_local_cluster_citecheck_starts_runs_its_checks_unprofiled():
    """A Dask worker samples its running task's stack every 10 ms by default (for the dashboard),
    which slowed two checking workers on two cores by about 1.4 times (bench/bench_dask.py): the
    LocalCluster of ``--engine dask`` has it off, and a worker there takes no sample of a task."""
    from citecheck.storage.checked.cluster import client_for

    client, own = client_for(None, workers=1)
    try:
        client.submit(_busy, pure=False).result()
        assert list(client.run(lambda dask_worker: dask_worker.profile_recent["count"]).values()) == [0]
    finally:
        client.close()
        own.close()
