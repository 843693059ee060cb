#!/usr/bin/env python3
"""Benchmark ``citecheck collect``: OTLP/HTTP exports per second, acknowledged once on disk (issue #33).

    python bench/bench_collect.py [--seconds 20] [--senders 8] [--protobuf]

Target (issue #33): at least 2,000 requests per second of 10 spans each from a local exporter,
with memory flat over a 10-minute run (--seconds 600), the guarantees of docs/collect.md intact.

Starts ``citecheck collect`` on a free port of 127.0.0.1, then --senders processes each send, over
one keep-alive ``http.client`` connection, export requests of 10 spans (one trace each: a CHAIN
root with the question and the answer, a RETRIEVER with 3 documents, an LLM and 7 more spans, as
OpenInference writes them) for --seconds, each waiting for its answer before the next.  The bodies
are prepared in advance (JSON, or protobuf with --protobuf); only the trace id is put in per
request.  Prints exports/s and spans/s acknowledged (the ratio to 2,000 exports/s), the CPU time
each export cost the receiver's main process (HTTP, decoding, the spool), its answer builder (the
child process) and the senders themselves, which run on the same 2 cores, so that the figure can
be read apart from the senders' cost and the machine's other load (both load averages are
printed); the receiver's RSS at start, middle and end (flat over a long run); the p50/p99 time
from sending an export to its 200; and how long the receiver took to write the last answers once
the senders stopped (every acknowledged trace must be in the log once).  With k senders each
waiting for its answer, the rate is also bound by k / (the spool's fsync time).
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import multiprocessing
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 2_000  # exports/s
PLACEHOLDER = "f" * 32  # the trace id of a template, replaced per request
ROOT_ID, RETRIEVER_ID = "a" * 16, "b" * 16
WORDS = "leave policy days employee carry over year manager approval travel refund invoice limit".split()


def _kv(key: str, value: str) -> dict:
    return {"key": key, "value": {"stringValue": value}}


def template(k: int, rng: random.Random) -> dict:
    """One export of one 10-span trace (trace id :data:`PLACEHOLDER`)."""
    t0 = 1_733_400_000_000_000_000 + k * 10**9
    docs = [" ".join(rng.choice(WORDS) for _ in range(40)) + "." for _ in range(3)]
    answer = f"{docs[0][:80]} [1]. {docs[1][:60]} [2]."
    spans = [{"traceId": PLACEHOLDER, "spanId": ROOT_ID, "name": "rag", "kind": 1,
              "startTimeUnixNano": str(t0), "endTimeUnixNano": str(t0 + 900_000_000),
              "attributes": [_kv("openinference.span.kind", "CHAIN"), _kv("input.value", f"Question {k}: how many days?"),
                             _kv("output.value", answer)]}]
    for i in range(9):
        attributes = [_kv("openinference.span.kind", ("RETRIEVER", "LLM", "EMBEDDING", "TOOL")[min(i, 3)])]
        if i == 0:
            for d, text in enumerate(docs):
                attributes += [_kv(f"retrieval.documents.{d}.document.id", f"doc-{k}-{d}"),
                               _kv(f"retrieval.documents.{d}.document.content", text)]
        if i == 1:
            attributes += [_kv("llm.model_name", "claude-sonnet-4-5"), _kv("output.value", answer)]
        spans.append({"traceId": PLACEHOLDER, "spanId": RETRIEVER_ID if i == 0 else f"{i:016x}",
                      "parentSpanId": ROOT_ID, "name": f"step-{i}", "kind": 1,
                      "startTimeUnixNano": str(t0 + i * 10**7), "endTimeUnixNano": str(t0 + i * 10**7 + 5 * 10**6),
                      "attributes": attributes})
    return {"resourceSpans": [{"resource": {"attributes": [_kv("service.name", "bench")]},
                               "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]}


def bodies(count: int, protobuf: bool) -> list[bytes]:
    """``count`` export bodies, each of one trace whose id is :data:`PLACEHOLDER` (16 bytes of 0xff
    in protobuf), replaced by the sender."""
    rng = random.Random(7)
    out = []
    for k in range(count):
        request = template(k, rng)
        if protobuf:  # (the protobuf JSON mapping reads ids as base64; OTLP JSON writes them in hex)
            from google.protobuf.json_format import ParseDict
            from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

            for span in request["resourceSpans"][0]["scopeSpans"][0]["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
            out.append(ParseDict(request, ExportTraceServiceRequest()).SerializeToString())
        else:
            out.append(json.dumps(request, separators=(",", ":")).encode())
    return out


def sender(port: int, protobuf: bool, deadline: float, worker: int, results) -> None:
    """Send exports until ``deadline`` over one keep-alive connection; put (count, latencies, errors)."""
    templates = bodies(50, protobuf)
    placeholder = bytes.fromhex(PLACEHOLDER) if protobuf else PLACEHOLDER.encode()
    content_type = "application/x-protobuf" if protobuf else "application/json"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    latencies, errors, n = [], 0, 0
    while time.time() < deadline:
        trace_id = f"{worker:08x}{n:024x}"
        body = templates[n % len(templates)].replace(placeholder,
                                                        bytes.fromhex(trace_id) if protobuf else trace_id.encode())
        started = time.perf_counter()
        connection.request("POST", "/v1/traces", body, {"Content-Type": content_type})
        response = connection.getresponse()
        response.read()
        latencies.append(time.perf_counter() - started)
        if response.status == 200:
            n += 1
        else:
            errors += 1
    connection.close()
    results.put((n, latencies, errors, time.process_time()))


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used (/proc/PID/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"citecheck collect exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("citecheck collect did not start listening")


def count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def percentile(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))] if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--senders", type=int, default=8, help="sender processes, one connection each")
    parser.add_argument("--protobuf", action="store_true", help="send protobuf bodies (default JSON)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-collect-") as tmp:
        log = Path(tmp) / "answers.jsonl"
        port = free_port()
        stderr = open(Path(tmp) / "collect.err", "w+")
        receiver = subprocess.Popen([sys.executable, "-m", "citecheck", "collect", "--log", str(log), "--port", str(port),
                                     "--quiet-seconds", "5"], cwd=ROOT, stderr=stderr)
        try:
            wait_for_port(port, receiver)
            rss = {"start": rss_mb(receiver.pid)}
            builders = children(receiver.pid)  # (the child that builds the answers)
            cpu_before = cpu_seconds(receiver.pid), sum(cpu_seconds(b) for b in builders)
            load_before = os.getloadavg()
            context = multiprocessing.get_context("fork")
            results = context.Queue()
            started = time.time()
            deadline = started + args.seconds
            workers = [context.Process(target=sender, args=(port, args.protobuf, deadline, w, results))
                       for w in range(args.senders)]
            for w in workers:
                w.start()
            time.sleep(args.seconds / 2)
            rss["middle"] = rss_mb(receiver.pid)
            outcomes = [results.get(timeout=args.seconds + 300) for _ in workers]
            elapsed = time.time() - started
            for w in workers:
                w.join()
            rss["end"] = rss_mb(receiver.pid)
            cpu_during = (cpu_seconds(receiver.pid) - cpu_before[0],
                          sum(cpu_seconds(b) for b in builders) - cpu_before[1])
            acked = sum(n for n, _, _, _ in outcomes)
            errors = sum(e for _, _, e, _ in outcomes)
            latencies = [x for _, lat, _, _ in outcomes for x in lat]
            senders_cpu = sum(c for _, _, _, c in outcomes)
            stopped = time.time()
            while count_lines(log) < acked and time.time() - stopped < 120:
                time.sleep(0.1)
            drained = time.time() - stopped
            written = count_lines(log)
            cpu_after = cpu_seconds(receiver.pid) - cpu_before[0], sum(cpu_seconds(b) for b in builders) - cpu_before[1]
            load_after = os.getloadavg()
        finally:
            receiver.send_signal(signal.SIGTERM)
            receiver.wait(timeout=120)
            stderr.seek(0)
            said = stderr.read()
            stderr.close()
        rate = acked / elapsed
        print(f"citecheck collect, {args.senders} sender process(es), {'protobuf' if args.protobuf else 'JSON'} "
              f"bodies of 10 spans, {elapsed:.0f} s on {os.cpu_count()} cores")
        print(f"acknowledged: {acked:,} exports = {rate:,.0f} exports/s (target >= {TARGET:,}: ratio "
              f"{rate / TARGET:.2f}), {rate * 10:,.0f} spans/s; {errors} not acknowledged")
        per = 1e6 / max(acked, 1)
        print(f"CPU per export acknowledged: receiver {cpu_during[0] * per:.0f} us (HTTP, decoding, spool), answer "
              f"builder {cpu_during[1] * per:.0f} us (to the end of the drain: {cpu_after[1] * per:.0f} us), senders "
              f"{senders_cpu * per:.0f} us; the {os.cpu_count()} cores give {os.cpu_count() * 1e6 / max(acked / elapsed, 1):.0f} "
              "us of CPU per export at this rate")
        print(f"receiver alone (main + builder, to the end of the drain): {sum(cpu_after) * per:.0f} us of CPU per export "
              f"= at most {1e6 / max(sum(cpu_after) * per, 1) * os.cpu_count():,.0f} exports/s on {os.cpu_count()} cores "
              "with free senders")
        print(f"load average before {' '.join(f'{x:.2f}' for x in load_before)}, after "
              f"{' '.join(f'{x:.2f}' for x in load_after)}")
        print(f"ack latency: p50 {percentile(latencies, 0.5) * 1000:.1f} ms, p99 {percentile(latencies, 0.99) * 1000:.1f} ms")
        print(f"receiver RSS: start {rss['start']:.0f} MB, middle {rss['middle']:.0f} MB, end {rss['end']:.0f} MB "
              f"(end / middle {rss['end'] / rss['middle']:.2f})")
        print(f"log: {written:,} answers ({'every acknowledged trace' if written == acked else 'MISMATCH'}), the last "
              f"written {drained:.1f} s after the senders stopped")
        print("receiver said:\n  " + "\n  ".join(said.strip().splitlines()))


if __name__ == "__main__":
    main()
