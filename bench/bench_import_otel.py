#!/usr/bin/env python3
"""Benchmark ``citecheck import otel`` against ``citecheck check`` on the same answers (issue #33).

    python bench/bench_import_otel.py [--answers 20000] [--rounds 3] [--no-prompts]

Target (issue #33): ``import otel`` at least as fast as ``check`` on the same answers, measured as
the ratio import/check of the best of --rounds alternating runs in this process (<= 1).

Generates bench_check.py's answers (5 chunks of ~800 characters, 6 sentences, 8 citations each)
as OpenInference traces: one OTLP export per request, a CHAIN root holding the question and the
answer (its citations as ``[n]`` markers), a RETRIEVER span with the five documents (JSON-string
metadata) and an LLM span, one export a line, under bench/out/.  The LLM span records its prompt
as the OpenInference instrumentations do (``llm.input_messages``: a system message with the five
documents, each after its ``[n]`` and title, and the question), which the importer reads to number
the documents as the model was shown them; ``--no-prompts`` leaves it out, the shape measured
before 2026-12-07.  Then, alternating in this
process: the import of the traces into a log (``--out``, renamed into place and fsynced as the
command does), and ``check --quiet`` of that log.  Each is timed by the wall clock and by this
process's CPU time (the machine's 2 cores are shared: the CPU ratio is the steadier figure);
the load average before and after, and whether the checker runs compiled (mypyc, ``citecheck
--version``: a pure-Python checker makes the check several times slower, and the ratio
meaningless), are printed with them.  Then the import's peak memory (RSS) as a command of its own,
of the first quarter of the traces and of all of them: a file of one export a line is read as a
stream, so the two should be about the same.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_check import make_answer  # noqa: E402


def _attrs(values: dict) -> list[dict]:
    out = []
    for key, value in values.items():
        if isinstance(value, float):
            out.append({"key": key, "value": {"doubleValue": value}})
        else:
            out.append({"key": key, "value": {"stringValue": value}})
    return out


def export_of(i: int, answer: dict, prompts: bool = True) -> dict:
    """One request as an OTLP export, as the OpenInference LangChain instrumentation records it."""
    trace = f"{i:032x}"
    text = answer["answer"]  # its markers already say [n]
    t0 = 1_764_547_200_000_000_000 + i * 10_000_000_000
    retrieval = {"openinference.span.kind": "RETRIEVER", "input.value": answer["question"]}
    for k, chunk in enumerate(answer["chunks"]):
        retrieval[f"retrieval.documents.{k}.document.id"] = chunk["chunk_id"]
        retrieval[f"retrieval.documents.{k}.document.content"] = chunk["text"]
        retrieval[f"retrieval.documents.{k}.document.score"] = chunk["retrieval_score"]
        retrieval[f"retrieval.documents.{k}.document.metadata"] = json.dumps(
            {"document_id": chunk["document_id"], "source": chunk["source"], "title": chunk["title"]})
    llm = {"openinference.span.kind": "LLM", "llm.model_name": "claude-sonnet-4-5",
           "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": text}
    if prompts:
        sources = "\n\n".join(f"[{k}] {chunk['title']}\n{chunk['text']}"
                               for k, chunk in enumerate(answer["chunks"], start=1))
        llm.update({"llm.input_messages.0.message.role": "system",
                    "llm.input_messages.0.message.content": "Answer from the sources below; cite each claim "
                                                            f"with its source's number, as [1].\n\n{sources}",
                    "llm.input_messages.1.message.role": "user",
                    "llm.input_messages.1.message.content": answer["question"]})
    spans = [
        {"traceId": trace, "spanId": f"{i:012x}0001", "name": "RetrievalQA", "kind": 1,
         "startTimeUnixNano": str(t0), "endTimeUnixNano": str(t0 + 3_000_000_000),
         "attributes": _attrs({"openinference.span.kind": "CHAIN", "input.value": answer["question"],
                               "output.value": text})},
        {"traceId": trace, "spanId": f"{i:012x}0002", "parentSpanId": f"{i:012x}0001", "name": "retrieve", "kind": 1,
         "startTimeUnixNano": str(t0 + 1_000_000), "endTimeUnixNano": str(t0 + 200_000_000),
         "attributes": _attrs(retrieval)},
        {"traceId": trace, "spanId": f"{i:012x}0003", "parentSpanId": f"{i:012x}0001", "name": "ChatAnthropic",
         "kind": 1, "startTimeUnixNano": str(t0 + 300_000_000), "endTimeUnixNano": str(t0 + 2_900_000_000),
         "attributes": _attrs(llm)},
    ]
    return {"resourceSpans": [{"resource": {"attributes": _attrs({"service.name": "bench"})},
                               "scopeSpans": [{"scope": {"name": "openinference"}, "spans": spans}]}]}


def generate(path: Path, n: int, prompts: bool = True) -> None:
    rng = random.Random(20261202)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            out.write(json.dumps(export_of(i, make_answer(i, rng), prompts)) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3, help="alternating timing rounds (best of each)")
    parser.add_argument("--no-prompts", action="store_true", help="LLM spans without their prompt (the older shape)")
    args = parser.parse_args()
    shape = "-bare" if args.no_prompts else ""
    traces = ROOT / "bench" / "out" / f"otel-{args.answers}{shape}.jsonl"
    log = ROOT / "bench" / "out" / f"otel-{args.answers}{shape}-imported.jsonl"
    if not traces.exists():
        t = time.perf_counter()
        generate(traces, args.answers, prompts=not args.no_prompts)
        print(f"generated {traces.name} in {time.perf_counter() - t:.1f}s")
    n = args.answers
    print(f"traces: {n} requests, 3 spans each, {'LLM spans without' if args.no_prompts else 'LLM spans with'} "
          f"their prompt, {traces.stat().st_size / 1e6:.0f} MB")
    from citecheck.cli.main import main as cli
    from citecheck.text.compiled import build_kind

    print(f"checker: {build_kind()}; load average before {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    imports, checks = [], []
    with open(os.devnull, "w") as sink:
        for _ in range(args.rounds):
            start, cpu = time.perf_counter(), time.process_time()
            code = cli(["import", "otel", str(traces), "--out", str(log)], sink, io.StringIO())
            imports.append((time.perf_counter() - start, time.process_time() - cpu))
            assert code == 0, code
            start, cpu = time.perf_counter(), time.process_time()
            cli(["check", str(log), "--quiet"], sink, sink)
            checks.append((time.perf_counter() - start, time.process_time() - cpu))
    imported, checked = min(t for t, _ in imports), min(t for t, _ in checks)
    imported_cpu, checked_cpu = min(c for _, c in imports), min(c for _, c in checks)
    print(f"import otel: {imported:.2f}s = {n / imported:,.0f} requests/s (CPU {imported_cpu:.2f}s); rounds "
          f"{', '.join(f'{t:.2f}' for t, _ in imports)}")
    print(f"check --quiet of the imported log: {checked:.2f}s = {n / checked:,.0f} answers/s (CPU {checked_cpu:.2f}s); "
          f"rounds {', '.join(f'{t:.2f}' for t, _ in checks)}")
    print(f"ratio import/check {imported / checked:.2f} by the clock, {imported_cpu / checked_cpu:.2f} by CPU time "
          f"(target <= 1); log {log.stat().st_size / 1e6:.0f} MB; cpu count {os.cpu_count()}; load average after "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    quarter = traces.with_name(f"otel-{n // 4}{shape}-head.jsonl")
    with open(traces, "rb") as source, open(quarter, "wb") as head:
        head.writelines(line for _, line in zip(range(n // 4), source))
    peaks = [f"{rows:,} requests {peak_rss_mb(path, log):.0f} MB" for rows, path in ((n // 4, quarter), (n, traces))]
    print(f"import otel peak RSS, as a command: {'; '.join(peaks)}")


def peak_rss_mb(traces: Path, log: Path) -> float:
    """The peak resident memory of ``citecheck import otel TRACES --out LOG`` run as a process of its own."""
    child = subprocess.Popen([sys.executable, "-c", "import sys; from citecheck.cli.main import main; "
                              "sys.exit(main(sys.argv[1:], sys.stdout, sys.stderr))",
                              "import", "otel", str(traces), "--out", str(log)],
                             env={**os.environ, "PYTHONPATH": str(ROOT / "core")},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    assert child.returncode == 0, child.returncode
    return usage.ru_maxrss / 1024


if __name__ == "__main__":
    main()
