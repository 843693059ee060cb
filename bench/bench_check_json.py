#!/usr/bin/env python3
"""Benchmark ``citecheck check --format json`` against orjson merely parsing the same log (issues #14, #36).

    python bench/bench_check_json.py [--answers 100000] [--rounds 3] [--profile]

The log is bench_check.py's generator (5 chunks, 6 sentences, 8 quoted citations per answer).
In this process, alternately (best of --rounds of each and of the --rounds + 1 parses around them,
so a slow spell of the shared machine does not fall on one side only): ``orjson.loads`` of every
line (read with ``for line in file``), and ``check LOG --format json`` with its output written

- to a pipe that a child process (``cat > /dev/null``) drains as it is written, as a consumer of
  the report reads it: the output is a text stream over the pipe's write end, as ``sys.stdout``
  is when it is piped (block buffered, UTF-8); this is the figure of issue #36's target;
- to /dev/null (the figure of issue #14, and the cost of the work without the pipe's).

Both are timed in CPU seconds of this process (``time.process_time``: the writes' system time
included, the draining child's not) and in wall seconds; the ratio is check / parse.
Target (issue #36, "the parse floor"): the check to a pipe <= 3 times the parse at 100,000 answers.
``--profile`` prints the top of a cProfile of one check (to /dev/null).
The hot modules run compiled when ``python3 dev.py`` has built them (core/citecheck/text/compiled.py); the
first line says which; ``CITECHECK_PURE_PYTHON=1`` measures the pure-Python modules instead.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)
sys.path.insert(0, str(ROOT / "bench"))

import orjson  # noqa: E402
from bench_check import generate  # noqa: E402
from citecheck.checking import checker  # noqa: E402
from citecheck.cli.main import main as cli  # noqa: E402

TARGET = 3.0


def timed(work) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    work()
    return time.process_time() - cpu, time.perf_counter() - wall


def parse(path: Path) -> None:
    with open(path, "rb") as handle:
        for line in handle:
            orjson.loads(line)


def check_to_devnull(path: Path) -> None:
    with open(os.devnull, "w", encoding="utf-8") as sink:
        cli(["check", str(path), "--format", "json"], sink, sink)


def check_to_pipe(path: Path) -> None:
    """The report to a pipe a child drains (as ``citecheck check ... | consumer``); errors to /dev/null."""
    reader = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert reader.stdin is not None
    fd = os.dup(reader.stdin.fileno())
    reader.stdin.close()
    try:
        with open(fd, "w", encoding="utf-8") as out, open(os.devnull, "w") as err:
            cli(["check", str(path), "--format", "json"], out, err)
    finally:
        reader.wait()


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    path = ROOT / "bench" / "out" / f"synthetic-v2-{args.answers}.jsonl"
    if not path.exists():
        generate(path, args.answers)
    print("hot modules: " + ("pure Python" if checker.__file__.endswith(".py") else "compiled (mypyc)"))
    print(f"log: {args.answers:,} answers, {path.stat().st_size / 1e6:.0f} MB; load average before {load()}")
    parses: list[tuple[float, float]] = []
    checks: dict[str, list[tuple[float, float]]] = {"pipe": [], "devnull": []}
    parses.append(timed(lambda: parse(path)))
    for _ in range(args.rounds):  # every check between two parses: a slow spell falls on both sides
        checks["pipe"].append(timed(lambda: check_to_pipe(path)))
        checks["devnull"].append(timed(lambda: check_to_devnull(path)))
        parses.append(timed(lambda: parse(path)))
    if args.profile:
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.runcall(lambda: check_to_devnull(path))
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)
    p_cpu, p_wall = min(parses)
    n = args.answers
    print(f"orjson.loads only: {p_cpu:.2f} s CPU ({p_wall:.2f} s wall); rounds "
          + ", ".join(f"{c:.2f}" for c, _ in parses))
    for sink, label in (("pipe", "to a pipe a child drains"), ("devnull", "to /dev/null")):
        c_cpu, c_wall = min(checks[sink])
        print(f"check --format json {label}: {c_cpu:.2f} s CPU ({c_wall:.2f} s wall) = "
              f"{c_cpu / n * 1e6:.0f} us per answer; rounds " + ", ".join(f"{c:.2f}" for c, _ in checks[sink]))
        target = f" (target <= {TARGET:g})" if sink == "pipe" else ""
        print(f"  ratio to the orjson parse: {c_cpu / p_cpu:.2f} CPU, {c_wall / p_wall:.2f} wall{target}")
        paired = [c / min(parses[i][0], parses[i + 1][0]) for i, (c, _) in enumerate(checks[sink])]
        print("  each check against the faster parse beside it: " + ", ".join(f"{r:.2f}" for r in paired))
    print(f"load average after {load()}; cpu count {os.cpu_count()}; the check runs on one core")


if __name__ == "__main__":
    main()
