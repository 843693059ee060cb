#!/usr/bin/env python3
"""Benchmark ``check --store --engine dask``: 1 and 2 LocalCluster workers against the local
engine, side by side in one process, the cluster start left out (issue #14: 2 workers >= 1.7x;
issue #36: 2 workers >= 1.9x on an idle moment, with the line counting folded into the partition
tasks: the driver submits every task at once and reads no byte of the log).

    python bench/bench_dask.py [--answers 30000] [--rounds 2] [--profile]

Each cluster is started and its workers warmed (citecheck imported in each) before the clock
starts; then, alternately, the local engine (``Store.check_log``, a fresh store) and
``check_on_dask`` on the 1-worker and the 2-worker cluster (a fresh store each).  Best of
--rounds each; ratios are local time / dask time.  The load average is printed before and
after: on a shared 2-core machine the workers do not get two cores when others are busy.
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
    times: dict[str, list[float]] = {"local": [], "dask 1 worker": [], "dask 2 workers": []}
    work = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    try:
        for r in range(args.rounds):
            for name in times:
                folder = work / f"{name.replace(' ', '-')}-{r}"
                start = time.perf_counter()
                if name == "local":
                    store = Store(folder, create=True)
                    with store.locked():
                        store.check_log(str(log), options)
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


if __name__ == "__main__":
    main()
