#!/usr/bin/env python3
"""Benchmark ``citecheck check`` on a synthetic log.

    python bench/bench_check.py [--answers 100000]

Generates a log (5 chunks of ~800 characters, ~6 sentences and ~8 citations per answer) under
bench/out/, then in one run: times a plain ``json.loads`` of every line (the reference), times
``citecheck check`` (text --quiet, and --format json) in child processes, and reports answers/s,
the ratio of check time to parse time and each child's peak memory (max RSS).
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

from core.log import checksum  # noqa: E402

WORDS = ("refund invoice policy travel leave days employee manager approval booking hotel limit "
         "incident runbook credential rotate customer notice report export plan dashboard data "
         "retention month year business payment method original within after before").split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(10, 16))]
    words[rng.randrange(len(words))] = str(rng.randint(1, 90))
    return " ".join(words).capitalize() + "."


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
        n = rng.randrange(5)
        src = chunks[n]["text"]
        # quote part of one sentence of the chunk, as a model would
        sentence_starts = [0] + [j + 2 for j in range(len(src) - 2) if src[j] == "." and src[j + 1] == " "]
        first = rng.choice(sentence_starts[:-1])
        stop = src.index(".", first)
        qs = first + rng.randint(0, 10)
        qe = min(stop, qs + rng.randint(25, 60))
        quote = src[qs:qe]
        k = 2 if s < 2 else 1  # 8 citations over 6 sentences
        text = f"The source says {quote.strip()}"
        markers = []
        for _ in range(k):
            m = rng.randrange(5) if _ else n
            markers.append(f"[{m + 1}]")
        text = text + " " + "".join(markers) + "."
        at = pos + text.index("[")
        citations.append({"kind": "marker", "marker": n + 1, "at": at, "quote": quote, "quote_start": qs,
                          "quote_end": qe})
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
sys.path.insert(0, {root!r})
from core.cli import main
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
    args = parser.parse_args()
    path = ROOT / "bench" / "out" / f"synthetic-{args.answers}.jsonl"
    if not path.exists():
        t = time.perf_counter()
        generate(path, args.answers)
        print(f"generated {path.name} in {time.perf_counter() - t:.1f}s")
    size_mb = path.stat().st_size / 1e6
    n = args.answers
    print(f"log: {n} answers, {size_mb:.0f} MB")
    parse = min(parse_only(path) for _ in range(2))
    print(f"json.loads only: {parse:.2f}s ({n / parse:,.0f} lines/s)")
    for label, argv in (("check (text, --quiet)", ["check", str(path), "--quiet"]),
                        ("check --format json", ["check", str(path), "--format", "json"])):
        elapsed, rss = check_child(argv)
        print(f"{label}: {elapsed:.2f}s = {n / elapsed:,.0f} answers/s; ratio to json.loads {elapsed / parse:.2f}; "
              f"peak RSS {rss:.0f} MB")
    print(f"cpu count {os.cpu_count()}; the check runs on one core")


if __name__ == "__main__":
    main()
