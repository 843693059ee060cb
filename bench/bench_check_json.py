#!/usr/bin/env python3
"""Benchmark ``citecheck check --format json`` against orjson merely parsing the same log (issue #14).

    python bench/bench_check_json.py [--answers 100000] [--rounds 3] [--profile]

The log is bench_check.py's generator (5 chunks, 6 sentences, 8 quoted citations per answer).
In this process, alternately (best of --rounds checks and of the --rounds + 1 parses around them,
so a slow spell of the shared machine does not fall on one side only): ``orjson.loads`` of every
line (read with ``for line in file``), and ``check LOG --format json`` with its output written to
/dev/null.  Both are timed in CPU seconds of this process
(``time.process_time``) and in wall seconds; the ratio is check / parse.
Target: ratio <= 7 at 100,000 answers.  ``--profile`` prints the top of a cProfile of one check.
The hot modules run compiled when ``python3 dev.py`` has built them (core/citecheck/text/compiled.py); the
first line says which; ``CITECHECK_PURE_PYTHON=1`` measures the pure-Python modules instead.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import orjson  # noqa: E402
from bench_check import generate  # noqa: E402
from citecheck.checking import checker  # noqa: E402
from citecheck.cli.main import main as cli  # noqa: E402


def timed(work) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    work()
    return time.process_time() - cpu, time.perf_counter() - wall


def parse(path: Path) -> None:
    with open(path, "rb") as handle:
        for line in handle:
            orjson.loads(line)


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
    print(f"log: {args.answers:,} answers, {path.stat().st_size / 1e6:.0f} MB; load average before "
          f"{os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    parses, checks = [], []
    with open(os.devnull, "w") as sink:
        def check() -> None:
            cli(["check", str(path), "--format", "json"], sink, sink)

        parses.append(timed(lambda: parse(path)))
        for _ in range(args.rounds):  # every check between two parses: a slow spell falls on both sides
            checks.append(timed(check))
            parses.append(timed(lambda: parse(path)))
        if args.profile:
            import cProfile
            import pstats

            profile = cProfile.Profile()
            profile.runcall(check)
            pstats.Stats(profile).sort_stats("tottime").print_stats(25)
    (p_cpu, p_wall), (c_cpu, c_wall) = min(parses), min(checks)
    n = args.answers
    print(f"orjson.loads only: {p_cpu:.2f} s CPU ({p_wall:.2f} s wall); rounds "
          + ", ".join(f"{c:.2f}" for c, _ in parses))
    print(f"check --format json: {c_cpu:.2f} s CPU ({c_wall:.2f} s wall) = {c_cpu / n * 1e6:.0f} us per answer; "
          "rounds " + ", ".join(f"{c:.2f}" for c, _ in checks))
    print(f"ratio to the orjson parse: {c_cpu / p_cpu:.2f} CPU, {c_wall / p_wall:.2f} wall (target <= 7)")
    paired = [c / min(parses[i][0], parses[i + 1][0]) for i, (c, _) in enumerate(checks)]
    print("each check against the faster parse beside it: " + ", ".join(f"{r:.2f}" for r in paired))
    print(f"load average after {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; "
          f"cpu count {os.cpu_count()}; the check runs on one core")


if __name__ == "__main__":
    main()
