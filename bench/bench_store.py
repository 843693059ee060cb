#!/usr/bin/env python3
"""Benchmark the checked store: check into it, check again, report from it, and the dask engine.

    python bench/bench_store.py [--answers 50000] [--workers 1,2] [--rows 1000000,10000000]

Writes a log of bench_check.py's realistic answers (models, prompt versions and days varied) under
bench/out/, then, each in a fresh child process for its peak memory (max RSS of that process):
  - ``citecheck report LOG`` (the in-memory report, the reference) and ``check LOG --quiet``;
  - ``check LOG --store DIR`` (a new store), and again (nothing changed: only hashing);
  - ``report --store DIR`` (DuckDB over the Parquet), with its ratio to the in-memory report;
  - ``check --store --engine dask`` with 1 and 2 LocalCluster workers, side by side with the
    local engine of the same run (throughput ratios; the driver's RSS only, workers apart).
Then the store's size per million answers, and DuckDB query times over answers tables of
``--rows`` rows made by repeating the store's rows (no check needed for 10 M rows).
Targets (issue #14): report --store under 5 s at 1 M answers; dask 2 workers >= 1.7x local.

    python bench/bench_store.py --answers 50000 --side-by-side 3 [--cpu 0]

Issue #36's "Store writes" target: ``check LOG --store DIR`` at most 1.3 times a plain ``check LOG
--quiet`` of the same log on one core, with the store no larger than 0.36 GB per million answers.
Measured side by side in one run: the two commands alternately, each in a fresh process (imports
included) pinned to the one core ``--cpu`` (``sched_setaffinity``: the check and any thread it
starts share it), a new store each time; best of the rounds by the clock and by CPU time, their
ratios, the store's size, and the load average before and after (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)
sys.path.insert(0, str(ROOT / "bench"))

from bench_check import make_answer  # noqa: E402

MODELS = ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1")
PROMPTS = ("answer.v1", "answer.v2")

CHILD = """
import resource, sys, time, os
if {cpu!r} is not None:
    os.sched_setaffinity(0, {{{cpu!r}}})  # one core: the process and every thread it starts
start = time.perf_counter()
sys.path.insert(0, {root!r} + "/core")  # (this checkout's citecheck, whichever one the venv installed)
from citecheck.cli.main import main
with open(os.devnull, "w") as sink:
    code = main({argv!r}, sink, sink)
    elapsed = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
print(elapsed, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, code)
"""


def child(argv: list[str], cpu: int | None = None) -> tuple[float, float]:
    """(seconds on the clock, peak RSS in MB) of ``citecheck ARGV`` in a fresh process, imports included."""
    elapsed, rss, _ = child_cpu(argv, cpu)
    return elapsed, rss


def child_cpu(argv: list[str], cpu: int | None = None) -> tuple[float, float, float]:
    """(seconds on the clock, peak RSS in MB, CPU seconds) of ``citecheck ARGV`` in a fresh process
    (imports included), on the one core ``cpu`` when given."""
    proc = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT), argv=argv, cpu=cpu)],
                          capture_output=True, text=True, check=True)
    elapsed, rss, used, _ = proc.stdout.split()[-4:]
    return float(elapsed), float(rss), float(used)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def side_by_side(log: Path, store: Path, n: int, rounds: int, cpu: int) -> None:
    """``check LOG --quiet`` and ``check LOG --store DIR`` (a new store each time), alternately in
    fresh processes pinned to the one core ``cpu``; best of ``rounds`` each, by the clock and by CPU
    time, and their ratios (issue #36: check --store at most 1.3 times check)."""
    print(f"side by side on core {cpu}, {rounds} rounds; load average before {load()}")
    best: dict[str, list[float]] = {"check": [9e9, 9e9], "check --store": [9e9, 9e9]}
    for r in range(rounds):
        for name in best:
            argv = ["check", str(log), "--quiet"]
            if name != "check":
                shutil.rmtree(store, ignore_errors=True)
                argv = ["check", str(log), "--store", str(store)]
            t, rss, used = child_cpu(argv, cpu)
            print(f"  round {r + 1}: {name}: {t:.2f} s, {used:.2f} s CPU, peak RSS {rss:.0f} MB")
            best[name] = [min(best[name][0], t), min(best[name][1], used)]
    (t0, c0), (t1, c1) = best["check"], best["check --store"]
    size = size_of(store)
    print(f"check: {t0:.2f} s ({c0:.2f} s CPU); check --store: {t1:.2f} s ({c1:.2f} s CPU); "
          f"check --store / check = {t1 / t0:.2f} by the clock, {c1 / c0:.2f} by CPU time (target <= 1.3)")
    print(f"store: {size / 1e6:.1f} MB = {size / n * 1e6 / 1e9:.3f} GB per million answers (target <= 0.36); "
          f"load average after {load()}")


def generate(path: Path, n: int) -> None:
    rng = random.Random(20261203)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            obj = make_answer(i, rng)
            obj.update(model=MODELS[i % 3], prompt_version=PROMPTS[(i // 3) % 2],
                       timestamp=f"2026-{9 + (i % 3):02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z")
            out.write(json.dumps(obj) + "\n")


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def query_times(store_dir: Path, rows: list[int]) -> None:
    import duckdb
    import pyarrow.parquet as pq
    from citecheck.reports import figures
    from citecheck.storage.checked.folder import Store
    from citecheck.storage.checked.query import StoreQuery

    store = Store(store_dir)
    base = pq.read_table(store.files("answers"))
    scratch = ROOT / "bench" / "out" / "store-rows"
    for n in rows:
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        con = duckdb.connect()
        con.register("base", base)
        reps = -(-n // base.num_rows)
        con.execute(f"COPY (SELECT base.* REPLACE (\"offset\" + r * 1000000000000 AS \"offset\") FROM base, "
                    f"range({reps}) t(r) LIMIT {n}) TO '{scratch}/answers.parquet' (FORMAT parquet)")
        con.close()
        q = StoreQuery(store)
        q.con.execute(f"CREATE OR REPLACE VIEW answers AS SELECT * FROM read_parquet('{scratch}/answers.parquet')")
        q.con.execute("CREATE OR REPLACE VIEW a AS SELECT *, 0::BIGINT AS labelled, 0::BIGINT AS not_supported "
                      "FROM answers")
        q.con.unregister("logs")
        q.con.execute("CREATE OR REPLACE TEMP TABLE logs AS SELECT DISTINCT source, 0 AS seq FROM answers")
        t = time.perf_counter()
        report = q.overview()
        every = time.perf_counter() - t
        t = time.perf_counter()
        worst = q.failing(figures.Filters(model="claude-haiku-4-5"), limit=100)
        table = time.perf_counter() - t
        print(f"duckdb at {n:>11,} answer rows: every report figure {every:.2f} s, failing table (top 100, "
              f"one model) {table:.2f} s; answers {len(report.table):,}, worst {len(worst)}")
        q.close()
    shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=50_000)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--rows", default="1000000,10000000")
    parser.add_argument("--skip-memory-report", action="store_true", help="skip the in-memory reference")
    parser.add_argument("--side-by-side", type=int, default=0, metavar="ROUNDS",
                        help="only check and check --store, alternately on one core, best of ROUNDS (issue #36)")
    parser.add_argument("--cpu", type=int, default=0, help="the core --side-by-side pins both to")
    args = parser.parse_args()
    n = args.answers
    out = ROOT / "bench" / "out"
    log = out / f"store-log-{n}.jsonl"
    if not log.exists():
        generate(log, n)
    print(f"log: {n:,} answers, {log.stat().st_size / 1e6:.0f} MB; cpu count {os.cpu_count()}")
    store = out / f"store-{n}"
    shutil.rmtree(store, ignore_errors=True)
    if args.side_by_side:
        side_by_side(log, store, n, args.side_by_side, args.cpu)
        return

    if not args.skip_memory_report:
        t, rss = child(["report", str(log)])
        print(f"report LOG (in memory, reference): {t:.2f} s, peak RSS {rss:.0f} MB")
        report_ref = t
    t, rss = child(["check", str(log), "--quiet"])
    print(f"check LOG --quiet (no store): {t:.2f} s = {n / t:,.0f} answers/s, peak RSS {rss:.0f} MB")
    t, rss = child(["check", str(log), "--store", str(store)])
    local = t
    print(f"check --store (new store, local engine): {t:.2f} s = {n / t:,.0f} answers/s, peak RSS {rss:.0f} MB")
    t, rss = child(["check", str(log), "--store", str(store)])
    print(f"check --store again (no line changed): {t:.2f} s ({t / local:.2f} of the first check), "
          f"peak RSS {rss:.0f} MB")
    t, rss = child(["report", "--store", str(store)])
    ratio = f", {t / report_ref:.3f} of the in-memory report" if not args.skip_memory_report else ""
    print(f"report --store (DuckDB): {t:.2f} s{ratio}, peak RSS {rss:.0f} MB")
    size = size_of(store)
    print(f"store: {size / 1e6:.1f} MB = {size / n * 1e6 / 1e9:.2f} GB per million answers "
          f"(log {log.stat().st_size / n * 1e6 / 1e9:.2f} GB per million)")

    for w in [int(x) for x in args.workers.split(",") if x]:
        d = out / f"store-{n}-dask{w}"
        shutil.rmtree(d, ignore_errors=True)
        t, rss = child(["check", str(log), "--store", str(d), "--engine", "dask", "--workers", str(w)])
        print(f"check --store --engine dask, {w} worker(s): {t:.2f} s = {n / t:,.0f} answers/s, "
              f"{local / t:.2f}x the local engine (cluster start included), driver peak RSS {rss:.0f} MB")
        shutil.rmtree(d, ignore_errors=True)

    rows = [int(x) for x in args.rows.split(",") if x]
    if rows:
        query_times(store, rows)


if __name__ == "__main__":
    main()
