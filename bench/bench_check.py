#!/usr/bin/env python3
"""Benchmark ``citecheck check`` on a synthetic log.

    python bench/bench_check.py [--answers 100000]

Generates a log (5 chunks of ~800 characters, 6 sentences and 8 quoted citations per answer,
one answer in ten with an invented quote) under bench/out/, then times a plain ``json.loads``
of every line (the reference) and ``citecheck check --quiet`` alternately in this process (best
of --rounds each), and reports answers/s and their ratio; then runs ``check`` (text, and
--format json) in fresh child processes for their peak memory (max RSS).
Targets: >= 5,000 answers/s on one core, ratio <= 5, peak memory < 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)

from citecheck.contract.log import checksum  # noqa: E402

WORDS = ("refund invoice policy travel leave days employee manager approval booking hotel limit "
         "incident runbook credential rotate customer notice report export plan dashboard data "
         "retention month year business payment method original within after before").split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(10, 16))]
    words[rng.randrange(len(words))] = str(rng.randint(1, 90))
    return " ".join(words).capitalize() + "."


def pick_quote(src: str, rng: random.Random) -> tuple[str, int, int]:
    """Part of one sentence of a chunk, with its offsets, as a model would quote it."""
    sentence_starts = [0] + [j + 2 for j in range(len(src) - 2) if src[j] == "." and src[j + 1] == " "]
    first = rng.choice(sentence_starts[:-1])
    stop = src.index(".", first)
    qs = first + rng.randint(0, 10)
    qe = min(stop, qs + rng.randint(25, 60))
    return src[qs:qe], qs, qe


def make_answer(i: int, rng: random.Random) -> dict:
    chunks = []
    for c in range(5):
        parts = []
        while sum(len(p) + 1 for p in parts) < 800:
            parts.append(sentence(rng))
        text = " ".join(parts)
        chunks.append({"chunk_id": f"doc{c}-{i}", "document_id": f"doc{c}", "source": f"doc{c}.md",
                       "title": f"Document {c}", "section": "Body", "text": text, "start": 0, "end": len(text),
                       "checksum": checksum(text), "retrieval_score": 10.0 - c, "rerank_score": 5.0 - c})
    sentences, citations = [], []
    pos = 0
    for s in range(6):
        k = 2 if s < 2 else 1  # 8 citations over 6 sentences, every one with its quote, as a model gives them
        cited = [rng.randrange(5) for _ in range(k)]
        quotes = [pick_quote(chunks[n]["text"], rng) for n in cited]
        text = f"The source says {quotes[0][0].strip()} "
        for n, (quote, qs, qe) in zip(cited, quotes):
            citations.append({"kind": "marker", "marker": n + 1, "at": pos + len(text), "quote": quote,
                              "quote_start": qs, "quote_end": qe})
            text += f"[{n + 1}]"
        text += "."
        sentences.append(text)
        pos += len(text) + 1
    if i % 10 == 0:  # some failures, so the failure paths are timed too
        citations[0]["quote"] = "an invented quotation that is nowhere"
    return {"log_version": 1, "answer_id": f"b-{i}", "timestamp": "2026-11-01T00:00:00Z", "model": "m",
            "prompt_version": "answer.v1", "index_snapshot": "s", "question": "What does the policy say?",
            "refused": False, "chunks": chunks, "answer": " ".join(sentences), "citations": citations}


def generate(path: Path, n: int) -> None:
    rng = random.Random(20261202)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            out.write(json.dumps(make_answer(i, rng)) + "\n")


def parse_only(path: Path) -> float:
    start = time.perf_counter()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            json.loads(line)
    return time.perf_counter() - start


CHILD = """
import resource, sys, time, os
sys.path.insert(0, {root!r} + "/core")  # (this checkout's citecheck, whichever one the venv installed)
from citecheck.cli.main import main
with open(os.devnull, "w") as sink:
    start = time.perf_counter()
    code = main({argv!r}, sink, sink)
    elapsed = time.perf_counter() - start
print(elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, code)
"""


def check_child(argv: list[str]) -> tuple[float, float]:
    proc = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT), argv=argv)],
                          capture_output=True, text=True, check=True)
    elapsed, rss_mb, _code = proc.stdout.split()
    return float(elapsed), float(rss_mb)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3, help="alternating timing rounds (best of each)")
    args = parser.parse_args()
    path = ROOT / "bench" / "out" / f"synthetic-v2-{args.answers}.jsonl"
    if not path.exists():
        t = time.perf_counter()
        generate(path, args.answers)
        print(f"generated {path.name} in {time.perf_counter() - t:.1f}s")
    size_mb = path.stat().st_size / 1e6
    n = args.answers
    print(f"log: {n} answers, {size_mb:.0f} MB")
    # The ratio: json.loads and the check alternate in this process, best of --rounds each, so a
    # slow spell of this shared machine does not fall on one side only.
    sys.path.insert(0, str(ROOT))
    from citecheck.cli.main import main as cli

    parses, checks = [], []
    with open(os.devnull, "w") as sink:
        for _ in range(args.rounds):
            parses.append(parse_only(path))
            start = time.perf_counter()
            cli(["check", str(path), "--quiet"], sink, sink)
            checks.append(time.perf_counter() - start)
    parse, check = min(parses), min(checks)
    print(f"json.loads only: {parse:.2f}s ({n / parse:,.0f} lines/s); rounds {', '.join(f'{t:.2f}' for t in parses)}")
    print(f"check (text, --quiet): {check:.2f}s = {n / check:,.0f} answers/s (target >= 5,000); "
          f"ratio to json.loads {check / parse:.2f} (target <= 5); rounds {', '.join(f'{t:.2f}' for t in checks)}")
    # Peak memory (and one more timing) of each output format in a fresh process.
    for label, argv in (("check (text, --quiet)", ["check", str(path), "--quiet"]),
                        ("check --format json", ["check", str(path), "--format", "json"])):
        elapsed, rss = check_child(argv)
        print(f"child {label}: {elapsed:.2f}s = {n / elapsed:,.0f} answers/s; peak RSS {rss:.0f} MB (target < 300)")
    print(f"cpu count {os.cpu_count()}; the check runs on one core")


if __name__ == "__main__":
    main()
