#!/usr/bin/env python3
"""Time reading ``[n]`` as the prompt numbered the documents (``trace_citations.as_prompted``, issue #33).

    python bench/bench_prompt_numbers.py [--rounds 5]

First one request of ``bench_import_otel.py``'s traces (five documents of about 850 characters, a
prompt of about 4,400 that shows them after their ``[n]`` and title): microseconds a request, best
of --rounds, beside the search it replaced on 2026-12-07 (each document's first 80 characters,
whitespace aside, looked for with ``str.find``; timed from a copy of that search kept here).

Then prompts of 12,000 to 96,000 characters that would cost the square of their length to a
search measuring, at every place a document's opening is found, how far the document runs: one
word over and over with a document of that word (one document, and two copies of it), and as many
documents sharing a 30-word opening as fill the prompt, shown in a random order; and two documents
numbered 1 and 3 with the label of a source 2 that matches neither repeated to fill the prompt (the
path that reads documents shown in numbered parts).  Prints seconds per size and the
ratio of 96k to 12k (8 linear, 64 quadratic).  Target: at most 12, as ``bench_linear.py``'s.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)
sys.path.insert(0, str(ROOT / "bench"))

from bench_check import make_answer  # noqa: E402
from citecheck.contract.log import Chunk  # noqa: E402
from citecheck.importers.trace_citations import as_prompted  # noqa: E402


def chunk(i: int, text: str) -> Chunk:
    return Chunk(chunk_id=f"c{i}", document_id=None, source=None, title=None, section=None, text=text,
                 start=None, end=None, checksum=None, retrieval_score=None, rerank_score=None)


def first_80(chunks: tuple[Chunk, ...], prompt: str) -> list[int]:
    """Where each document's first 80 characters (whitespace aside) are in the prompt: the older search."""
    flat = " ".join(prompt.split())
    return [flat.find(" ".join(c.text.split())[:80]) for c in chunks]


def best(rounds: int, work, number: int = 1) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(number):
            work()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from citecheck.text.compiled import build_kind

    answer = make_answer(0, random.Random(20261202))
    chunks = tuple(chunk(k, c["text"]) for k, c in enumerate(answer["chunks"]))
    prompt = ("Answer from the sources below; cite each claim with its source's number, as [1].\n\n"
              + "\n\n".join(f"[{k}] {c['title']}\n{c['text']}" for k, c in enumerate(answer["chunks"], start=1))
              + "\n" + answer["question"])
    now = best(args.rounds, lambda: as_prompted(chunks, prompt, None), 500)
    before = best(args.rounds, lambda: first_80(chunks, prompt), 500)
    print(f"{build_kind()}; one request ({len(chunks)} documents, a prompt of {len(prompt):,} characters): "
          f"{now * 1e6:.0f} µs (the first-80-characters search alone: {before * 1e6:.0f} µs)")

    rng = random.Random(7)
    families = {
        "one word over and over, its document": lambda n: ((chunk(0, "a " * (n // 4)),), "[1] " + "a " * (n // 2)),
        "the same, the document twice": lambda n: ((chunk(0, "a " * (n // 4)), chunk(1, "a " * (n // 4))),
                                                    "[1] " + "a " * (n // 2)),
        "documents sharing a 30-word opening": lambda n: alike(n, rng),
        "more numbered sources than documents, an unmatched number's label over and over": lambda n: (
            (chunk(0, "alpha beta gamma delta " * 10), chunk(1, "one two three four " * 10)),
            "Source 1: " + "alpha beta gamma delta " * 10 + "Source 3: " + "one two three four " * 10
            + "Source 2: nothing here at all " * (n // 30)),
    }
    print("seconds per prompt size (12k, 24k, 48k, 96k characters); ratio 96k/12k (8 linear, 64 quadratic)")
    for name, make in families.items():
        seconds = []
        for n in (12_000, 24_000, 48_000, 96_000):
            docs, text = make(n)
            seconds.append(best(args.rounds, lambda: as_prompted(docs, text, None)))
        print(f"  {name}: {' '.join(f'{s:.4f}' for s in seconds)}; ratio {seconds[-1] / seconds[0]:.1f}")


def alike(n: int, rng: random.Random) -> tuple[tuple[Chunk, ...], str]:
    """Documents with one 30-word opening and a few words of their own, as many as fill ``n``
    characters of prompt (each shown once after its number, in a random order)."""
    head = "a " * 30
    count = max(1, n // (len(head) + 20))
    docs = tuple(chunk(i, f"{head}item {i} w{i % 97} x{i % 89}") for i in range(count))
    order = list(range(count))
    rng.shuffle(order)
    return docs, "\n".join(f"[{k}] {docs[i].text}" for k, i in enumerate(order, start=1))


if __name__ == "__main__":
    main()
