#!/usr/bin/env python3
"""Where the app's memory goes on a checked store, step by step (RSS after each step, and the peak).

    python bench/probe_store_memory.py STORE [--steps failures,review,unlabelled] [--tracemalloc]

Runs, in this process, what the Failures and review pages ask of a store, without Streamlit's
rendering: the imports the app makes, the Failures page's figures (``StoreSource.of``), its first
failing-answers table (the worst ``TABLE_LIMIT``), the review page's index of the answers
(``StoreAnswers``), the team's item total, and the review page's "unlabelled" filter (its count).
Prints the process's RSS (``/proc/self/statm``) and peak RSS (``ru_maxrss``) after each, and
DuckDB's own accounting (``duckdb_memory()``).  With ``--tracemalloc``, Python's own allocations
too (DuckDB's and Arrow's buffers are not Python allocations, so they show only in the RSS).
Make a store of a million answers with ``bench/bench_app_store.py --copies 34 --keep``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def peak() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("--steps", default="failures,review,unlabelled")
    parser.add_argument("--tracemalloc", action="store_true")
    args = parser.parse_args()
    steps = args.steps.split(",")
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start()
    last = [rss()]

    def report(what: str, started: float) -> None:
        if os.environ.get("PROBE_TRIM"):
            import ctypes

            ctypes.CDLL("libc.so.6").malloc_trim(0)
        now = rss()
        extra = ""
        if args.tracemalloc:
            import tracemalloc

            current, top = tracemalloc.get_traced_memory()
            extra = f"  python {current / 2**20:6.1f} MB (peak {top / 2**20:6.1f})"
            tracemalloc.reset_peak()
        print(f"{what:<46} {time.perf_counter() - started:6.2f} s  rss {now:6.0f} MB ({now - last[0]:+5.0f})  "
              f"peak {peak():6.0f} MB{extra}", flush=True)
        last[0] = now

    print(f"{'start':<46} {'':8}  rss {rss():6.0f} MB", flush=True)
    t = time.perf_counter()
    import altair  # noqa: F401  (what the pages import)
    import duckdb
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401
    import streamlit  # noqa: F401
    from citecheck.reports import figures
    from citecheck.storage.checked.answers import StoreAnswers, filtered_ids
    from citecheck.storage.checked.sources import TABLE_LIMIT, StoreSource

    report("imports", t)

    def duck(con) -> None:
        rows = con.execute("SELECT tag, memory_usage_bytes FROM duckdb_memory() WHERE memory_usage_bytes > 0 "
                           "ORDER BY 2 DESC").fetchall()
        print("    duckdb_memory(): " + (", ".join(f"{tag} {b / 2**20:.0f} MB" for tag, b in rows) or "nothing"))

    if "failures" in steps:
        t = time.perf_counter()
        src, _ = StoreSource.of(args.store, None, {})
        report("Failures figures (StoreSource.of)", t)
        t = time.perf_counter()
        shown = src.failing(figures.Filters())
        report(f"failing table (worst {TABLE_LIMIT:,}: {len(shown):,} rows)", t)
        duck(src.query.con)
        t = time.perf_counter()
        models = src.values("model")
        src.failing(figures.Filters(model=models[0]))
        report("failing table, one model", t)
        del shown
    if "review" in steps or "unlabelled" in steps:
        t = time.perf_counter()
        data = StoreAnswers(args.store)
        report(f"review index ({len(data):,} answers)", t)
        duck(data.query.con)
        t = time.perf_counter()
        total = data.item_total()
        report(f"item total ({total:,} items)", t)
        t = time.perf_counter()
        ids = filtered_ids(data, "All answers", {}, "bench")
        first = data.get(ids[0])
        report(f"first answer read back ({first.answer.answer_id})", t)
    if "unlabelled" in steps:
        t = time.perf_counter()
        ids = filtered_ids(data, "Not yet labelled by me", {}, "bench")
        n = len(ids)
        report(f"'unlabelled' filter counted ({n:,})", t)
        duck(data.query.con)
        t = time.perf_counter()
        ids.index(ids[n // 2])
        report("'unlabelled': the middle answer's place", t)
    print(f"duckdb {duckdb.__version__}; peak RSS {peak():.0f} MB")


if __name__ == "__main__":
    main()
