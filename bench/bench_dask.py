#!/usr/bin/env python3
"""Benchmark ``check --store --engine dask``: 1 and 2 LocalCluster workers against the local
engine, side by side in one process, the cluster start left out (issue #14: 2 workers >= 1.7x;
issue #36: 2 workers >= 1.9x on an idle moment, with the line counting folded into the partition
tasks: the driver submits every task at once and reads no byte of the log).

    python bench/bench_dask.py [--answers 30000] [--rounds 2] [--profile]

Each cluster is started and its workers warmed (citecheck imported in each) before the clock
starts; then, alternately, the local engine (``Store.check_log``, a fresh store, in a process of
its own started and warmed before the clock, as ``check --store`` runs: this process holds the
clusters' scheduler, whose thread slowed a check run here by up to a fifth) and
``check_on_dask`` on the 1-worker and the 2-worker cluster (a fresh store each).  Best of
--rounds each; ratios are local time / dask time.  The load average is printed before and
after: on a shared 2-core machine the workers do not get two cores when others are busy.
The machine's own ceiling is timed in the same rounds: the two halves of the log checked by the
local engine in two processes at once ("two local processes", a pool started and warmed before
the clock), against the whole log in one.  That is what two cores give this workload at that
moment, with no scheduler, no partitions and no Dask at all; the Dask figure is read against it.
``--profile`` asks each worker of the 2-worker cluster for the time its tasks spent in each
step (Dask's task stream: reading and checking vs writing Parquet, and the scheduler's gaps).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)
sys.path.insert(0, str(ROOT / "bench"))

from bench_check import generate  # noqa: E402
from citecheck.checking.checker import CheckOptions  # noqa: E402
from citecheck.storage.checked.cluster import check_on_dask, client_for  # noqa: E402
from citecheck.storage.checked.folder import Store  # noqa: E402


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def warm() -> bool:
    import citecheck.storage.checked.cluster  # noqa: F401  (the imports a first task would pay for)
    import pyarrow as pa

    pa.array([], pa.int64())  # (pyarrow's first conversion imports pandas: a start-up cost too)
    return True


def check_half(args: tuple[str, str]) -> float:
    """In a pool process: a log (the whole, or a half) into a fresh store by the local engine; its seconds."""
    log, folder = args
    start = time.perf_counter()
    store = Store(Path(folder), create=True)
    with store.locked():
        store.check_log(log, CheckOptions())
    return time.perf_counter() - start


def halves(log: Path, work: Path) -> list[str]:
    """The log's first and second half (by lines) as two files."""
    lines = log.read_bytes().splitlines(keepends=True)
    paths = [work / "half-1.jsonl", work / "half-2.jsonl"]
    paths[0].write_bytes(b"".join(lines[:len(lines) // 2]))
    paths[1].write_bytes(b"".join(lines[len(lines) // 2:]))
    return [str(p) for p in paths]


def main() -> None:
    # The scheduler in this process says INFO on every client and worker it closes: with a cluster
    # made and closed per round, that buried the figures (the command line closes one, once).
    logging.getLogger("distributed").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=30_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--parts", type=int, default=0,
                        help="partitions per worker (default: check_on_dask's own choice, PARTS_PER_WORKER)")
    args = parser.parse_args()
    log = ROOT / "bench" / "out" / f"synthetic-v2-{args.answers}.jsonl"
    if not log.exists():
        generate(log, args.answers)
    n = args.answers
    print(f"log: {n:,} answers, {log.stat().st_size / 1e6:.0f} MB; load average before {load()}")
    options = CheckOptions()
    clusters = {}
    for w in (1, 2):
        client, cluster = client_for(None, w)
        client.wait_for_workers(w)
        client.run(warm)
        clusters[w] = (client, cluster)
    times: dict[str, list[float]] = {"local": [], "dask 1 worker": [], "dask 2 workers": [],
                                     "two local processes": []}
    work = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    import multiprocessing

    pool = multiprocessing.get_context("spawn").Pool(2)
    pool.starmap(warm, [(), ()])  # (each process imports what a check needs before the clock)
    parts = halves(log, work)
    try:
        for r in range(args.rounds):
            for name in times:
                folder = work / f"{name.replace(' ', '-')}-{r}"
                start = time.perf_counter()
                if name == "local":  # (in a process of its own, as a user runs it: this one holds
                    # the clusters' scheduler, whose thread takes the GIL from a check run here)
                    pool.apply(check_half, ((str(log), str(folder)),))
                elif name == "two local processes":
                    pool.map(check_half, [(parts[0], str(folder) + "-a"), (parts[1], str(folder) + "-b")])
                    for half in ("-a", "-b"):
                        shutil.rmtree(str(folder) + half)
                    times[name].append(time.perf_counter() - start)
                    continue
                else:
                    w = 1 if "1" in name else 2
                    block = -(-log.stat().st_size // (args.parts * w)) if args.parts else None
                    check_on_dask(Store(folder, create=True), [str(log)], options, client=clusters[w][0],
                                  block=block)
                times[name].append(time.perf_counter() - start)
                shutil.rmtree(folder)
        if args.profile:
            client = clusters[2][0]
            folder = work / "profiled"
            from distributed import get_task_stream

            t0 = time.time()
            with get_task_stream(client) as recorded:
                check_on_dask(Store(folder, create=True), [str(log)], options, client=client)
            wall = time.time() - t0
            stream = recorded.data
            busy: dict[tuple[str, str], float] = {}
            for task in stream:
                kind = str(task["key"]).strip("('").split("-")[0]
                for step in task["startstops"]:
                    key = (task["worker"], f"{kind} {step['action']}")
                    busy[key] = busy.get(key, 0.0) + step["stop"] - step["start"]
            print(f"profiled run (2 workers): {wall:.2f} s wall")
            for (worker, what), seconds in sorted(busy.items()):
                print(f"  worker {worker}: {what} {seconds:.2f} s ({seconds / wall:.0%} of the wall time)")
    finally:
        pool.close()
        for client, cluster in clusters.values():
            client.close()
            cluster.close()
        shutil.rmtree(work, ignore_errors=True)
    local = min(times["local"])
    for name, ts in times.items():
        best = min(ts)
        print(f"{name}: {best:.2f} s = {n / best:,.0f} answers/s ({local / best:.2f}x local); rounds "
              + ", ".join(f"{t:.2f}" for t in ts))
    print(f"2 workers / 1 worker: {min(times['dask 1 worker']) / min(times['dask 2 workers']):.2f}x; "
          f"load average after {load()}; cpu count {os.cpu_count()}")
    ceiling = local / min(times["two local processes"])
    print(f"this machine's ceiling for two processes (two local checks of the halves at once): {ceiling:.2f}x local; "
          f"dask 2 workers reach {local / min(times['dask 2 workers']) / ceiling:.0%} of it")


if __name__ == "__main__":
    main()
