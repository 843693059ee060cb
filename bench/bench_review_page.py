#!/usr/bin/env python3
"""Benchmark the review page on pathological answers (issue 17): many citations, many markers,
a huge answer, a long quote that is not in its chunk.

    python bench/bench_review_page.py [--sizes 100,400,800,10000] [--markers 100000] [--megabytes 50]

For each case, one answer is written to a log and the review page is opened on it through
AppTest (server time of the first run, data cached separately); also the closest-passage hint for
a 6 KB and a 700 KB quote. Target: no answer's page over 2 s on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)

WORDS = "refunds take five to seven business days once the bank confirms the transfer staff leave".split()


def sentence(n: int) -> str:
    return " ".join(WORDS[(n + k) % len(WORDS)] for k in range(9)).capitalize()


def answer_with_citations(n: int) -> dict:
    """One answer of ``n`` sentences, each citing its own chunk with a quote; every 4th quote is
    not in its chunk (so the closest-passage hint runs)."""
    chunks, parts = [], []
    for i in range(n):
        text = f"{sentence(i)}. {sentence(i + 3)}. {sentence(i + 5)}."
        chunks.append({"chunk_id": f"c{i}", "document_id": f"d{i}", "text": text})
        parts.append(f"{sentence(i)} [{i + 1}].")
    citations = [{"kind": "marker", "marker": i + 1,
                  "quote": sentence(i) if i % 4 else "nothing like this appears anywhere"} for i in range(n)]
    return {"log_version": 1, "answer_id": f"cit-{n}", "question": "q?", "answer": " ".join(parts),
            "chunks": chunks, "citations": citations}


def answer_with_markers(n: int) -> dict:
    chunks = [{"chunk_id": "c0", "document_id": "d0", "text": sentence(0) + "."}]
    return {"log_version": 1, "answer_id": f"markers-{n}", "question": "q?",
            "answer": " ".join(f"Word [{1}]." for _ in range(n)), "chunks": chunks, "citations": []}


def huge_answer(megabytes: int) -> dict:
    chunks = [{"chunk_id": "c0", "document_id": "d0", "text": sentence(0) + "."}]
    text = (sentence(1) + ". ") * (megabytes * 1_000_000 // (len(sentence(1)) + 2))
    return {"log_version": 1, "answer_id": f"huge-{megabytes}mb", "question": "q?", "answer": text,
            "chunks": chunks, "citations": []}


def time_page(record: dict) -> float:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    tmp = Path(tempfile.mkdtemp())
    log = tmp / "log.jsonl"
    log.write_text(json.dumps(record) + "\n")
    os.environ.update(CITECHECK_LOGS=str(log), CITECHECK_CORPUS="", CITECHECK_LABELS=str(tmp / "labels.jsonl"),
                      CITECHECK_VERDICTS=str(tmp / "verdicts.jsonl"))
    st.cache_resource.clear()
    st.cache_data.clear()
    warm = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    warm.run()  # loads and checks the log (cached): what is left is the page itself
    assert not warm.exception, warm.exception
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    at.query_params["answer"] = record["answer_id"]
    start = time.perf_counter()
    at.run()
    took = time.perf_counter() - start
    assert not at.exception, at.exception
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,200,400,800,10000")
    parser.add_argument("--markers", type=int, default=100_000)
    parser.add_argument("--megabytes", type=int, default=50)
    args = parser.parse_args()
    from citecheck.text.highlight import closest_passage

    for size in (6_000, 700_000):
        quote = (" ".join(WORDS) + " ") * (size // 90)
        chunk = (sentence(2) + ". ") * 100
        start = time.perf_counter()
        closest_passage(quote, chunk)
        print(f"closest passage, {len(quote):,}-character quote, {len(chunk):,}-character chunk: "
              f"{time.perf_counter() - start:.3f} s")
    cases = [(f"{n:,} citations", answer_with_citations(n)) for n in map(int, args.sizes.split(","))]
    if args.markers:
        cases.append((f"{args.markers:,} markers", answer_with_markers(args.markers)))
    if args.megabytes:
        cases.append((f"{args.megabytes} MB answer", huge_answer(args.megabytes)))
    for name, record in cases:
        print(f"review page, {name}: {time_page(record):.2f} s", flush=True)


if __name__ == "__main__":
    main()
