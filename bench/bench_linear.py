#!/usr/bin/env python3
"""Check time against answer length for the pathological answers of issue #11.

    python bench/bench_linear.py [--rounds 3]

Each family is an answer of 12,000, 24,000, 48,000 and 96,000 characters, checked with
``check_answer`` against the sample log's first marker answer (best of --rounds): thousands of
one-word sentences (``"x.\\nx.\\n..."``, the case that grew with the square of its length),
one-word sentences followed by marker-only lines (``"x.\\n[1]\\n[1]\\n..."``), a run of markers
(``"[1][1]..."``), one sentence of numbers, ordinary prose (the reference), and two that grow the
citation list too: one marker entry per ``[1]``, and one span citation per sentence.  Prints seconds
per size and the ratio of each doubling (1 means linear, 2 means quadratic) and of 96k to 12k
(8 linear, 64 quadratic).  Target: every ratio of 96k to 12k at most 12 (linear, with noise).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)

from citecheck.checking.checker import check_answer  # noqa: E402
from citecheck.contract.log import Citation, parse_answer  # noqa: E402

SIZES = (12_000, 24_000, 48_000, 96_000)
FAMILIES = {
    "prose (reference)": lambda n: "Casual leave is 8 days per year [1]. " * (n // 36),
    "x.\\n sentences": lambda n: "x.\n" * (n // 3),
    "x.\\n[1]\\n lines": lambda n: "x.\n[1]\n" * (n // 7),
    "[1][1]... markers": lambda n: "[1]" * (n // 3),
    "one sentence of numbers": lambda n: " ".join(["1.5"] * (n // 4)) + " [1].",
    "x.[1] no spaces": lambda n: "x.[1]" * (n // 5),
}
# Families that grow the citation list with the answer: one marker entry per [1] (all for the same
# marker), and one span citation per sentence covering it.
CITED = {
    "[1] x n, n entries": lambda n: ("Leave is 8 days [1]. " * (n // 21),
                                     [Citation("marker", marker=1, quote="8 days")] * (n // 21)),
    "n span citations": lambda n: ("Leave is 8 days. " * (n // 17),
                                   [Citation("span", answer_start=17 * i, answer_end=17 * i + 16, chunk_id=CHUNK_ID)
                                    for i in range(n // 17)]),
}
CHUNK_ID = None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    lines = (ROOT / "sample_data" / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    base = next(a for a in map(lambda s: parse_answer(json.loads(s)), lines) if a.citations
                and a.citations[0].kind == "marker")
    print(f"{'family':<26}" + "".join(f"{n // 1000:>7}k" for n in SIZES) + "   doubling ratios    96k/12k")
    global CHUNK_ID
    CHUNK_ID = base.chunks[0].chunk_id
    worst = 0.0
    families = {**{k: (lambda n, f=f: (f(n), None)) for k, f in FAMILIES.items()}, **CITED}
    for name, make in families.items():
        times = []
        for n in SIZES:
            text, citations = make(n)
            answer = dataclasses.replace(base, answer=text, citations=base.citations if citations is None
                                         else tuple(citations))
            best = float("inf")
            for _ in range(args.rounds):
                started = time.perf_counter()
                check_answer(answer)
                best = min(best, time.perf_counter() - started)
            times.append(best)
        ratios = [b / a for a, b in zip(times, times[1:])]
        total = times[-1] / times[0]
        worst = max(worst, total)
        print(f"{name:<26}" + "".join(f"{t:>7.3f}s" for t in times) + "   "
              + " ".join(f"{r:4.1f}" for r in ratios) + f"   {total:6.1f}")
    print(f"\nworst 96k/12k ratio {worst:.1f} (linear 8, quadratic 64; target <= 12)")


if __name__ == "__main__":
    main()
