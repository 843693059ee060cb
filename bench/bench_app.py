#!/usr/bin/env python3
"""Benchmark the review page through AppTest on a 20,000-answer log.

    python bench/bench_app.py [--answers 20000]

Reports: cold first load (nothing cached: every line parsed, the answer shown checked), the
cached first load of a new session, the first view that needs every answer checked (entering a
reviewer name, for progress over all items), and moving to the next answer (server time of one
rerun). Targets: cached page switch under 300 ms; cold load of 20,000 answers under 5 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)
sys.path.insert(0, str(ROOT / "bench"))

import bench_check  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=20_000)
    args = parser.parse_args()
    log = ROOT / "bench" / "out" / f"synthetic-v2-{args.answers}.jsonl"
    if not log.exists():
        bench_check.generate(log, args.answers)
    tmp = tempfile.mkdtemp()
    os.environ.update(CITECHECK_LOGS=str(log), CITECHECK_CORPUS="", CITECHECK_LABELS=f"{tmp}/labels.jsonl")

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    start = time.perf_counter()
    at.run()
    cold = time.perf_counter() - start
    assert not at.exception, at.exception

    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    start = time.perf_counter()
    fresh.run()
    cached = time.perf_counter() - start

    start = time.perf_counter()
    fresh.sidebar.text_input[0].input("bench").run()  # progress over every item: checks the whole log
    full = time.perf_counter() - start
    steps = []
    for _ in range(10):
        start = time.perf_counter()
        next_button = next(b for b in fresh.button if b.label == "Next")
        next_button.click().run()
        steps.append(time.perf_counter() - start)
    assert not fresh.exception
    print(f"log: {args.answers} answers")
    print(f"cold first load (parse every line, check the answer shown, render): {cold:.2f}s  (target < 5 s)")
    print(f"first view that needs every answer checked (reviewer progress): {full:.2f}s")
    print(f"cached first load, new session: {cached * 1000:.0f} ms")
    print(f"next answer, with a reviewer: median {statistics.median(steps) * 1000:.0f} ms, "
          f"max {max(steps) * 1000:.0f} ms  (target < 300 ms)")


if __name__ == "__main__":
    main()
