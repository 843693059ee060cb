#!/usr/bin/env python3
"""Benchmark the failed-answers figures (core.figures / core.overview) on a synthetic log.

    python bench/bench_report.py [--answers 100000]

Checks every answer of the synthetic log of bench_check.py (generated if missing; models,
prompt versions, days and questions varied per answer), then times, after the check, what the Failures page and ``citecheck report``
compute: the per-answer table, every figure of the report (headline, reasons, breakdowns, weeks,
refusals and retrieval against a golden set), the failing-answers table with a filter, its CSV,
and a comparison of two prompt versions.  Target: under 2 s for 100,000 answers.  The check
time of the same run is printed as the reference the figures are measured against.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)
sys.path.insert(0, str(ROOT / "bench"))

from bench_check import generate  # noqa: E402
from citecheck.contract.log import parse_line  # noqa: E402
from citecheck.labelling import dataset  # noqa: E402
from citecheck.reports import failures as overview  # noqa: E402
from citecheck.reports import figures  # noqa: E402
from citecheck.reports.golden import GoldenQuestion  # noqa: E402

MODELS = ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1")
PROMPTS = ("answer.v1", "answer.v2")
QUESTIONS = [f"What does policy {i} say?" for i in range(200)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=100_000)
    args = parser.parse_args()
    path = ROOT / "bench" / "out" / f"synthetic-v2-{args.answers}.jsonl"
    if not path.exists():
        generate(path, args.answers)
    answers = []
    with open(path, encoding="utf-8") as handle:
        for i, line in enumerate(handle):
            answers.append(dataclasses.replace(
                parse_line(line), model=MODELS[i % 3], prompt_version=PROMPTS[(i // 3) % 2],
                timestamp=f"2026-{9 + (i % 3):02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z",
                question=QUESTIONS[i % len(QUESTIONS)]))
    start = time.perf_counter()
    results = dataset.build(answers).results  # as the app checks: see dataset._long_lived
    checked = time.perf_counter() - start
    # golden: each question's right chunk is the first chunk of its first answer (hit at rank 1 there)
    first_chunk = {}
    for a in answers:
        first_chunk.setdefault(a.question, a.chunks[0].chunk_id)
    golden = [GoldenQuestion(q, i % 10 != 0, (first_chunk[q],) if i % 10 else ()) for i, q in enumerate(QUESTIONS)]

    timings = {}
    t0 = time.perf_counter()
    table = figures.answer_table(results)
    timings["answer table"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    runs = [figures.retrieval_run(r) for r in results]
    report = overview.build(table, golden, runs, k=5)
    timings["every report figure"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    worst = figures.failing(table, figures.Filters(model="claude-haiku-4-5"))
    csv_text = figures.to_csv(worst)
    timings["failing table + CSV"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    diffs = figures.compare(table, "prompt_version", "answer.v1", "answer.v2")
    timings["compare two prompts"] = time.perf_counter() - t0
    total = sum(timings.values())

    print(f"{len(results):,} answers of {path.name}; check {checked:.2f} s "
          f"({len(results) / checked:,.0f} answers/s) -- the reference")
    for name, seconds in timings.items():
        print(f"  {name:<24} {seconds:6.3f} s")
    print(f"figures after the check: {total:.3f} s (target < 2 s: {'met' if total < 2 else 'MISSED'}); "
          f"{total / checked:.3f} of the check time")
    failing = next(f for f in report.headline if f.key == "failing_answers")
    print(f"sanity: {failing.count:,} of {failing.total:,} answers failing; {len(worst):,} haiku rows, {len(csv_text):,} CSV bytes; "
          f"{len(diffs)} compared figures; {report.retrieval.hits:,} retrieval hits of "
          f"{report.retrieval.answerable:,} answerable (chunk ids are unique per answer)")


if __name__ == "__main__":
    main()
