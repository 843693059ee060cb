#!/usr/bin/env python3
"""Benchmark the two label stores: the JSON-lines file and PostgreSQL.

    python bench/bench_stores.py [--labels 2000] [--existing 10000] [--repeat 3]

Starts a throwaway PostgreSQL cluster with the server's default durability (fsync on, unlike
the test cluster) and prints, for each store: labels saved per second by 1 writer process and
by 8 at once (each save one ``labels.append`` that returns once the label is durable), and the
review page's Next (server time of one AppTest rerun on the sample log, reviewer set) with
``--existing`` labels already in the store.  The ratio PostgreSQL / file is measured in the
same run, so it means more than either figure on a shared machine.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)
sys.path.insert(0, str(ROOT / "tests"))

import label_writer  # noqa: E402
import pgcluster  # noqa: E402


def _write(target: str, worker: str, count: int, ready, go, done) -> None:
    from citecheck.labelling import labels

    labels.append(target, label_writer.label(worker, -1))  # connect (and pool) before the clock starts
    ready.wait()
    go.wait()
    for n in range(count):
        labels.append(target, label_writer.label(worker, n))
    done.put(time.perf_counter())


def rate(target: str, writers: int, count: int) -> float:
    """Labels per second: writers x count saves, from the common start to the last save returned."""
    ctx = multiprocessing.get_context("fork")
    ready, go, done = ctx.Barrier(writers + 1), ctx.Barrier(writers + 1), ctx.Queue()
    procs = [ctx.Process(target=_write, args=(target, f"b{writers}-{w}", count, ready, go, done))
             for w in range(writers)]
    for p in procs:
        p.start()
    ready.wait()
    start = time.perf_counter()
    go.wait()
    ends = [done.get() for _ in procs]
    for p in procs:
        p.join()
    return writers * count / (max(ends) - start)


def next_time(target: str, existing: int) -> float:
    """Median server time of the review page's Next, with ``existing`` labels in the store."""
    from citecheck.labelling import labels
    from citecheck.storage import streams

    streams.append(target, labels.STREAM, [asdict(label_writer.label(f"old-{n % 20}", n)) for n in range(existing)])
    os.environ["CITECHECK_LABELS"] = target
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.sidebar.text_input[0].input("bench").run()
    steps = []
    for _ in range(10):
        start = time.perf_counter()
        next(b for b in at.button if b.label == "Next").click().run()
        steps.append(time.perf_counter() - start)
    assert not at.exception, at.exception
    return statistics.median(steps)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--labels", type=int, default=2000, help="labels per writer")
    parser.add_argument("--existing", type=int, default=10_000, help="labels in the store for the Next timing")
    parser.add_argument("--repeat", type=int, default=3, help="alternating runs per store (the median is shown)")
    args = parser.parse_args()
    os.environ.update(CITECHECK_LOGS=str(ROOT / "sample_data" / "answers.jsonl"),
                      CITECHECK_CORPUS=str(ROOT / "sample_data" / "corpus"))
    cluster = pgcluster.start(durable=True)
    tmp = Path(tempfile.mkdtemp())
    try:
        stores = {"file": lambda name: str(tmp / f"{name}-{time.monotonic_ns()}.jsonl"),
                  "postgresql": lambda name: cluster.create_database()}
        runs: dict[str, dict[str, list[float]]] = {k: {"1 writer": [], "8 writers": [], "next_ms": []} for k in stores}
        for _ in range(args.repeat):  # the stores alternate, so a busy spell on the machine hits both
            for kind, make in stores.items():
                runs[kind]["1 writer"].append(rate(make("one"), 1, args.labels))
                runs[kind]["8 writers"].append(rate(make("eight"), 8, args.labels // 4))
        for kind, make in stores.items():
            runs[kind]["next_ms"].append(next_time(make("next"), args.existing) * 1000)
        figures = {k: {name: statistics.median(v) for name, v in f.items()} for k, f in runs.items()}
        print(f"labels per writer: {args.labels} (1 writer), {args.labels // 4} (each of 8); median of "
              f"{args.repeat} alternating runs; PostgreSQL fsync on, default settings; {os.cpu_count()} CPU(s)")
        for kind, f in figures.items():
            spread = ", ".join(f"{x:.0f}" for x in runs[kind]["1 writer"]) + " / " + \
                ", ".join(f"{x:.0f}" for x in runs[kind]["8 writers"])
            print(f"{kind:>10}: {f['1 writer']:8.0f} labels/s with 1 writer, {f['8 writers']:8.0f} labels/s with 8 "
                  f"(runs: {spread}); review Next with {args.existing} labels: {f['next_ms']:.0f} ms (median of 10)")
        pg, fl = figures["postgresql"], figures["file"]
        print(f"ratio postgresql/file: 1 writer {pg['1 writer'] / fl['1 writer']:.2f}, "
              f"8 writers {pg['8 writers'] / fl['8 writers']:.2f}, Next time {pg['next_ms'] / fl['next_ms']:.2f}")
    finally:
        from citecheck.storage import postgres

        postgres.close_all()
        cluster.stop()


if __name__ == "__main__":
    main()
