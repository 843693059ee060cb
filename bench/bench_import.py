#!/usr/bin/env python3
"""Benchmark ``citecheck import PROVIDER --pairs`` against ``citecheck check`` on the log it writes.

    python bench/bench_import.py [--exchanges 100000] [--providers openai,gemini,cohere] [--rounds 2]

For each provider, generates a pairs file (one ``{"request", "response"}`` exchange a line) under
bench/out/: answers of 6 sentences with non-ASCII text (°, curly quotes, CJK, emoji), 5 sources of
~600 characters and 4 citations each, in the provider's own shape and offset unit.  Then times,
alternately in this process (best of --rounds each), the import to a log and ``check --quiet``
of that log, and reports exchanges/s and the ratio import time / check time.
Target (issue 18): import within 3 times the check's time (ratio <= 3).
"""

from __future__ import annotations

import argparse
import io
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)

from citecheck.cli.main import main as cli  # noqa: E402

WORDS = ("refund invoice policy travel leave days employee manager approval booking hotel limit "
         "incident runbook credential rotate customer notice report export plan café “SEV-1” "
         "retention month year °C 好奇号 🚀 payment method original within after before").split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(10, 16))]
    words[rng.randrange(len(words))] = str(rng.randint(1, 90))
    return " ".join(words).capitalize() + "."


def exchange(provider: str, k: int, rng: random.Random) -> dict:
    sources = [" ".join(sentence(rng) for _ in range(6)) for _ in range(5)]
    sentences = [sentence(rng) for _ in range(6)]
    answer = " ".join(sentences)
    cited = rng.sample(range(6), 4)
    spans = []
    for i in cited:
        start = sum(len(s) + 1 for s in sentences[:i])
        spans.append((start, start + len(sentences[i]), rng.randrange(5)))
    question = f"Question {k}: what does the policy say?"
    if provider == "cohere":
        docs = [{"id": f"doc-{j}", "data": {"title": f"Doc {j}", "text": t}} for j, t in enumerate(sources)]
        cits = [{"start": s, "end": e, "text": answer[s:e], "type": "TEXT_CONTENT",
                 "sources": [{"type": "document", "id": f"doc-{j}", "document": {"id": f"doc-{j}"}}]}
                for s, e, j in spans]
        return {"request": {"model": "command-a-03-2025", "messages": [{"role": "user", "content": question}],
                            "documents": docs},
                "response": {"id": f"c-{k}", "message": {"role": "assistant", "content": [{"type": "text", "text": answer}],
                                                         "citations": cits}, "finish_reason": "COMPLETE"}}
    if provider == "gemini":
        def nbytes(i: int) -> int:
            return len(answer[:i].encode("utf-8"))
        chunks = [{"retrievedContext": {"uri": f"gs://b/doc-{j}.txt", "title": f"doc-{j}", "text": t}}
                  for j, t in enumerate(sources)]
        supports = [{"segment": {"startIndex": nbytes(s), "endIndex": nbytes(e), "text": answer[s:e]},
                     "groundingChunkIndices": [j], "confidenceScores": [0.9]} for s, e, j in spans]
        return {"request": {"contents": [{"role": "user", "parts": [{"text": question}]}]},
                "response": {"responseId": f"g-{k}", "modelVersion": "gemini-2.5-flash", "candidates": [
                    {"content": {"role": "model", "parts": [{"text": answer}]}, "finishReason": "STOP",
                     "groundingMetadata": {"groundingChunks": chunks, "groundingSupports": supports}}]}}
    # openai: a file search with its results and file citations at the end of each cited sentence
    results = [{"file_id": f"file-{j}", "filename": f"doc-{j}.md", "score": 0.8, "text": t} for j, t in enumerate(sources)]
    notes = [{"type": "file_citation", "file_id": f"file-{j}", "filename": f"doc-{j}.md", "index": e}
             for _, e, j in spans]
    return {"request": {"model": "gpt-4.1", "input": question, "include": ["file_search_call.results"]},
            "response": {"id": f"resp-{k}", "object": "response", "model": "gpt-4.1", "output": [
                {"type": "file_search_call", "id": f"fs-{k}", "status": "completed", "results": results},
                {"type": "message", "id": f"msg-{k}", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": answer, "annotations": notes}]}]}}


def generate(provider: str, n: int, path: Path) -> None:
    rng = random.Random(18)
    with open(path, "w", encoding="utf-8") as out:
        for k in range(n):
            out.write(json.dumps(exchange(provider, k, rng), ensure_ascii=False) + "\n")


def timed(argv: list[str]) -> float:
    sink = io.StringIO()
    start = time.perf_counter()
    code = cli(argv, sink, sink)
    elapsed = time.perf_counter() - start
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {code}: {sink.getvalue()[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=100_000)
    parser.add_argument("--providers", default="openai,gemini,cohere")
    parser.add_argument("--rounds", type=int, default=2, help="alternating timing rounds (best of each)")
    args = parser.parse_args()
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    n = args.exchanges
    for provider in args.providers.split(","):
        pairs, log = out / f"pairs_{provider}_{n}.jsonl", out / f"imported_{provider}_{n}.jsonl"
        if not pairs.exists():
            t = time.perf_counter()
            generate(provider, n, pairs)
            print(f"generated {pairs.name} in {time.perf_counter() - t:.1f}s")
        imports, checks = [], []
        for _ in range(args.rounds):
            imports.append(timed(["import", provider, "--pairs", str(pairs), "--out", str(log)]))
            checks.append(timed(["check", str(log), "--quiet"]))
        imp, chk = min(imports), min(checks)
        print(f"{provider}: import --pairs {imp:.2f}s = {n / imp:,.0f} exchanges/s; check {chk:.2f}s = "
              f"{n / chk:,.0f} answers/s; ratio import/check {imp / chk:.2f} (target <= 3); "
              f"rounds import {', '.join(f'{t:.2f}' for t in imports)}, check {', '.join(f'{t:.2f}' for t in checks)}")


if __name__ == "__main__":
    main()
