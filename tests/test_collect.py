"""``citecheck collect``: a real OpenTelemetry exporter against the real receiver, bodies of every
encoding by hand, bad payloads, kill -9 mid-stream and the memory cap.  Receivers run as
processes (``python -m citecheck collect``) on free ports of 127.0.0.1."""

from __future__ import annotations

import base64
import gzip
import http.client
import io
import json
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from citecheck.contract.log import read_log
from citecheck.errors import CitecheckError, RecordError
from citecheck.importers import collector
from citecheck.importers.collector import Collector, CollectSettings, Refused
from citecheck.importers.spans import Span, spans_from_request

ROOT = Path(__file__).resolve().parent.parent
JSON, PROTOBUF = "application/json", "application/x-protobuf"
T0 = 1_733_400_000_000_000_000
DOCS = ("Employees get 18 days of earned leave per calendar year.",
        "Unused earned leave carries over to the next year, up to 45 days in total.")
ANSWER = "Employees get 18 days of earned leave per calendar year [1]. " \
         "Unused earned leave carries over to the next year, up to 45 days in total [2]."


# --- building exports --------------------------------------------------------------------------------

def _kv(key: str, value) -> dict:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def root_span(trace_id: str, question: str = "How many days of earned leave?", ended: bool = True) -> dict:
    span = {"traceId": trace_id, "spanId": trace_id[:16], "name": "rag", "kind": 1, "startTimeUnixNano": str(T0),
            "attributes": [_kv("openinference.span.kind", "CHAIN"), _kv("input.value", question),
                           _kv("output.value", ANSWER)]}
    if ended:
        span["endTimeUnixNano"] = str(T0 + 900_000_000)
    return span


def child_spans(trace_id: str) -> list[dict]:
    documents = []
    for i, text in enumerate(DOCS):
        documents += [_kv(f"retrieval.documents.{i}.document.id", f"leave-{i + 1}"),
                      _kv(f"retrieval.documents.{i}.document.content", text)]
    return [{"traceId": trace_id, "spanId": trace_id[16:], "parentSpanId": trace_id[:16], "name": "retrieve",
             "kind": 1, "startTimeUnixNano": str(T0 + 10**7), "endTimeUnixNano": str(T0 + 2 * 10**7),
             "attributes": [_kv("openinference.span.kind", "RETRIEVER"), *documents]},
            {"traceId": trace_id, "spanId": trace_id[8:24], "parentSpanId": trace_id[:16], "name": "llm",
             "kind": 1, "startTimeUnixNano": str(T0 + 3 * 10**7), "endTimeUnixNano": str(T0 + 8 * 10**8),
             "attributes": [_kv("openinference.span.kind", "LLM"), _kv("llm.model_name", "claude-sonnet-4-5"),
                            _kv("output.value", ANSWER)]}]


def export(spans: list[dict]) -> dict:
    return {"resourceSpans": [{"resource": {"attributes": [_kv("service.name", "hr-assistant")]},
                               "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}]}]}


def trace_export(trace_id: str, **root) -> dict:
    return export([root_span(trace_id, **root), *child_spans(trace_id)])


def new_trace_id(rng: random.Random | None = None) -> str:
    return (rng or random).getrandbits(128).to_bytes(16, "big").hex()


def protobuf_message(request: dict):
    """The request as a protobuf message: the protobuf JSON mapping reads ids as base64, OTLP JSON writes hex."""
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = json.loads(json.dumps(request))
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return ParseDict(request, ExportTraceServiceRequest())


def to_protobuf(request: dict) -> bytes:
    return protobuf_message(request).SerializeToString()


# --- a receiver process ----------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Receiver:
    """``citecheck collect`` as a process; its stderr in a file beside the log."""

    def __init__(self, log: Path, port: int | None = None, *options: str) -> None:
        self.log, self.port = log, port or free_port()
        self.said = log.with_name(f"collect-{time.monotonic_ns()}.err")
        with open(self.said, "w") as stderr:
            self.process = subprocess.Popen([sys.executable, "-m", "citecheck", "collect", "--log", str(log),
                                             "--port", str(self.port), *options], cwd=ROOT, stderr=stderr)
        deadline = time.monotonic() + 20
        while True:
            assert self.process.poll() is None, self.stderr()
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "citecheck collect did not start listening"
                time.sleep(0.02)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/traces"

    def stderr(self) -> str:
        return self.said.read_text()

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout=30)


@pytest.fixture
def receivers():
    started: list[Receiver] = []

    def start(log: Path, port: int | None = None, *options: str) -> Receiver:
        started.append(Receiver(log, port, *options))
        return started[-1]

    yield start
    for receiver in started:
        receiver.stop(signal.SIGKILL)


def post(url: str, body: bytes, content_type: str = JSON, encoding: str | None = None,
         method: str = "POST") -> tuple[int, str, bytes]:
    headers = {"Content-Type": content_type, **({"Content-Encoding": encoding} if encoding else {})}
    request = urllib.request.Request(url, data=body if method == "POST" else None, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.headers["Content-Type"], exc.read()


def post_json(url: str, request: dict) -> tuple[int, str, bytes]:
    return post(url, json.dumps(request).encode())


def log_lines(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []


def wait_for(condition, timeout: float = 20, what: str = "the log"):
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return found


def wait_for_answers(log: Path, count: int, timeout: float = 20) -> list[dict]:
    def enough() -> list[dict] | None:
        lines = log_lines(log)
        return lines if len(lines) >= count else None

    return wait_for(enough, timeout, f"{count} answer(s) in {log}")


def no_unreadable_line(log: Path) -> None:
    assert [item for _, item in read_log(log) if isinstance(item, RecordError)] == []


# --- (1) a real exporter against the real receiver ---------------------------------------------------------

def test_an_opentelemetry_exporter_writes_one_answer_per_request(tmp_path, receivers):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace import format_trace_id

    log = tmp_path / "answers.jsonl"
    receiver = receivers(log, None, "--grace-seconds", "0.3", "--quiet-seconds", "5")
    provider = TracerProvider(resource=Resource.create({"service.name": "hr-assistant"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=receiver.url), schedule_delay_millis=100))
    tracer = provider.get_tracer("citecheck-test")
    sent = {}
    for k in range(5):
        question = f"Question {k}: how many days of earned leave?"
        with tracer.start_as_current_span("RetrievalQA") as root:
            root.set_attributes({"openinference.span.kind": "CHAIN", "input.value": json.dumps({"query": question}),
                                 "output.value": ANSWER})
            with tracer.start_as_current_span("retriever") as retriever:
                retriever.set_attribute("openinference.span.kind", "RETRIEVER")
                for i, text in enumerate(DOCS):
                    retriever.set_attribute(f"retrieval.documents.{i}.document.id", f"leave-{k}-{i + 1}")
                    retriever.set_attribute(f"retrieval.documents.{i}.document.content", text)
            with tracer.start_as_current_span("ChatAnthropic") as llm:
                llm.set_attributes({"openinference.span.kind": "LLM", "llm.model_name": "claude-sonnet-4-5",
                                    "output.value": ANSWER})
            sent[format_trace_id(root.get_span_context().trace_id)] = question
    assert provider.force_flush(10_000)
    provider.shutdown()
    answers = wait_for_answers(log, len(sent))
    time.sleep(0.5)  # (nothing more comes)
    assert receiver.stop() == 0
    answers = log_lines(log)
    assert {a["answer_id"]: a["question"] for a in answers} == sent
    for a in answers:
        assert a["answer"] == ANSWER
        assert [c["text"] for c in a["chunks"]] == list(DOCS)
        assert [c["chunk_id"] for c in a["chunks"]][0].endswith("-1")
        assert a["model"] == "claude-sonnet-4-5"
        assert a["trace"]["format"] == "otel" and a["trace"]["service"] == "hr-assistant"
    no_unreadable_line(log)
    check = subprocess.run([sys.executable, "-m", "citecheck", "check", str(log), "--format", "json"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr  # (read whole; no gate asked for)
    summary = json.loads(check.stdout.splitlines()[-1])
    assert summary["record"] == "summary" and summary["answers"] == 5 and summary["citations"] == 10
    assert "5 answer(s) written" in receiver.stderr()


# --- (2) bodies by hand: JSON, gzip, protobuf; a trace across two exports; bad payloads -------------------

@pytest.fixture(scope="module")
def receiver(tmp_path_factory):
    log = tmp_path_factory.mktemp("collect") / "answers.jsonl"
    started = Receiver(log, None, "--grace-seconds", "0.2", "--quiet-seconds", "5")
    yield started
    started.stop(signal.SIGKILL)


def answer_of(log: Path, trace_id: str) -> dict:
    return wait_for(lambda: next((a for a in log_lines(log) if a["answer_id"] == trace_id), None), 20,
                    f"the answer of {trace_id}")


@pytest.mark.parametrize("encoding", ["json", "gzip", "protobuf", "protobuf+gzip", "snake_case json"])
def test_an_export_in_every_encoding_is_acknowledged_and_written(receiver, encoding):
    trace_id = new_trace_id()
    request = trace_export(trace_id)
    if encoding == "snake_case json":  # (as a protobuf dump with preserving_proto_field_name writes it)
        from google.protobuf.json_format import MessageToDict

        request = MessageToDict(protobuf_message(request), preserving_proto_field_name=True)
        assert "resource_spans" in request
    protobuf = encoding.startswith("protobuf")
    body = to_protobuf(request) if protobuf else json.dumps(request).encode()
    if encoding.endswith("gzip"):
        body = gzip.compress(body)
    status, content_type, reply = post(receiver.url, body, PROTOBUF if protobuf else JSON,
                                       "gzip" if encoding.endswith("gzip") else None)
    assert (status, content_type) == (200, PROTOBUF if protobuf else JSON)
    assert reply == (b"" if protobuf else b"{}")  # an empty ExportTraceServiceResponse
    answer = answer_of(receiver.log, trace_id)
    assert answer["question"] == "How many days of earned leave?"
    assert [c["text"] for c in answer["chunks"]] == list(DOCS)
    assert [c["chunk_id"] for c in answer["chunks"]] == ["leave-1", "leave-2"]


def test_protobuf_ids_come_out_base64_and_are_read():
    trace_id = new_trace_id()
    request = collector.from_protobuf(to_protobuf(trace_export(trace_id)))
    span = request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert span["traceId"] == base64.b64encode(bytes.fromhex(trace_id)).decode()  # (16 bytes in base64)
    spans = [s for s in spans_from_request(request, "") if isinstance(s, Span)]
    assert {s.trace_id for s in spans} == {trace_id}
    assert spans[0].span_id == trace_id[:16] and spans[1].parent_id == trace_id[:16]


def test_a_trace_is_completed_across_two_exports(receiver):
    """The children come first, the root in a later export (another encoding): one answer with all of them."""
    trace_id = new_trace_id()
    assert post_json(receiver.url, export(child_spans(trace_id)))[0] == 200
    time.sleep(0.4)  # (longer than the grace: without its root the trace is not complete)
    assert all(a["answer_id"] != trace_id for a in log_lines(receiver.log))
    assert post(receiver.url, to_protobuf(export([root_span(trace_id)])), PROTOBUF)[0] == 200
    answer = answer_of(receiver.log, trace_id)
    assert len(answer["chunks"]) == 2 and answer["answer"] == ANSWER
    assert "notes" not in answer["trace"]
    # ... and a child sent just after its root, within the grace, is in the answer too
    other = new_trace_id()
    assert post_json(receiver.url, export([root_span(other), child_spans(other)[1]]))[0] == 200
    assert post_json(receiver.url, export(child_spans(other)[:1]))[0] == 200
    assert len(answer_of(receiver.log, other)["chunks"]) == 2


def test_an_indexing_run_writes_no_answer_only_the_query_does(receiver):
    """LlamaIndex's ``VectorStoreIndex.from_documents`` traces a text splitter and a batch of
    embeddings, each a trace of its own with no LLM call, retrieval or answer: no answer is
    written for them (they would count as clean answers), only for the query that follows."""
    body = (Path(__file__).parent / "fixtures" / "traces" / "llamaindex_indexing.jsonl").read_bytes()
    query = "3d" * 16
    indexing = {"1d" * 16, "2d" * 16}
    assert post(receiver.url, body)[0] == 200
    answer = answer_of(receiver.log, query)
    assert answer["question"] == "How many days of earned leave do I get?" and len(answer["chunks"]) == 3
    time.sleep(0.6)  # (past the grace: the indexing traces, complete before the query's, were settled with it)
    assert not indexing & {a["answer_id"] for a in log_lines(receiver.log)}
    assert [answer_id for answer_id, _ in collector.answer_lines(collector.read_export(json.loads(body)).spans, None)] == [query]


def test_the_counts_line_says_how_many_traces_answering_nothing_were_left_out(tmp_path):
    body = (Path(__file__).parent / "fixtures" / "traces" / "llamaindex_indexing.jsonl").read_bytes()
    now = [0.0]
    running = Collector(CollectSettings(tmp_path / "answers.jsonl"), io.StringIO(), clock=lambda: now[0])
    running.start(builder=False)
    running.submit(collector.read_export(json.loads(body)))
    now[0] = 100.0
    running.stop()
    assert "1 answer(s) written" in running.stats_line()
    assert "2 trace(s) with no LLM call, retrieval or answer left out" in running.stats_line()


def test_unreadable_spans_are_rejected_and_the_rest_written(receiver):
    trace_id = new_trace_id()
    spans = [root_span(trace_id), *child_spans(trace_id), {**child_spans(trace_id)[0], "spanId": "not-an-id"}]
    status, _, reply = post_json(receiver.url, export(spans))
    assert status == 200
    partial = json.loads(reply)["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    assert "resourceSpans[0].scopeSpans[0].spans[3].spanId" in partial["errorMessage"]
    assert len(answer_of(receiver.log, trace_id)["chunks"]) == 2
    # in protobuf: the response's partial_success
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    other = new_trace_id()
    request = export([root_span(other), {**root_span(other), "spanId": "", "name": "no id"}])
    status, _, reply = post(receiver.url, to_protobuf(request), PROTOBUF)
    response = ExportTraceServiceResponse.FromString(reply)
    assert status == 200 and response.partial_success.rejected_spans == 1
    assert "spanId: is required" in response.partial_success.error_message


def _status(reply: bytes, protobuf: bool) -> tuple[int, str]:
    if protobuf:
        from google.rpc.status_pb2 import Status

        status = Status.FromString(reply)
        return status.code, status.message
    doc = json.loads(reply)
    return doc["code"], doc["message"]


BAD = [  # (name, body, content type, encoding, method, path, HTTP status, words of the message)
    ("not JSON", b"{resourceSpans", JSON, None, "POST", "/v1/traces", 400, "the body is not JSON"),
    ("no resourceSpans", b'{"spans": []}', JSON, None, "POST", "/v1/traces", 400, "resourceSpans: is required"),
    ("resourceSpans not a list", b'{"resourceSpans": {}}', JSON, None, "POST", "/v1/traces", 400, "expected a list"),
    ("a JSON list", b"[]", JSON, None, "POST", "/v1/traces", 400, "expected an ExportTraceServiceRequest"),
    ("no span readable", json.dumps(export([{"traceId": "x", "spanId": "y"}])).encode(), JSON, None, "POST",
     "/v1/traces", 400, "no span could be read"),
    ("not protobuf", b"\xff\xff\xff\xff", PROTOBUF, None, "POST", "/v1/traces", 400, "not an OTLP protobuf"),
    ("not gzip", b"plain", JSON, "gzip", "POST", "/v1/traces", 400, "not gzip data"),
    ("cut gzip", gzip.compress(b'{"resourceSpans": []}')[:12], JSON, "gzip", "POST", "/v1/traces", 400, "cut short"),
    ("brotli", b"{}", JSON, "br", "POST", "/v1/traces", 415, "send gzip or no encoding"),
    ("text", b"{}", "text/plain", None, "POST", "/v1/traces", 415, "application/x-protobuf or application/json"),
    ("wrong path", b"{}", JSON, None, "POST", "/v1/metrics", 404, "send OTLP/HTTP traces to POST /v1/traces"),
    ("GET", b"", JSON, None, "GET", "/v1/traces", 405, "send traces with POST /v1/traces"),
    ("GET, protobuf", b"", PROTOBUF, None, "GET", "/v1/traces", 405, "send traces with POST"),
]


@pytest.mark.parametrize("name, body, content_type, encoding, method, path, code, words", BAD, ids=[b[0] for b in BAD])
def test_a_bad_export_is_refused_with_a_status_saying_what_is_wrong(receiver, name, body, content_type, encoding,
                                                                   method, path, code, words):
    status, reply_type, reply = post(receiver.url.replace("/v1/traces", path), body, content_type, encoding, method)
    protobuf = content_type == PROTOBUF
    assert status == code
    assert reply_type == (PROTOBUF if protobuf else JSON)
    grpc_code, message = _status(reply, protobuf)
    assert words in message
    assert grpc_code == {404: 5, 405: 12}.get(code, 3)


def test_an_empty_export_is_acknowledged(receiver):
    assert post(receiver.url, b'{"resourceSpans": []}')[:2] == (200, JSON)
    assert post(receiver.url, b"", PROTOBUF)[:2] == (200, PROTOBUF)


def test_a_body_too_large_is_refused_before_it_is_read(receiver):
    connection = http.client.HTTPConnection("127.0.0.1", receiver.port, timeout=10)
    try:
        connection.putrequest("POST", "/v1/traces")
        connection.putheader("Content-Type", JSON)
        connection.putheader("Content-Length", str(collector.MAX_BODY_BYTES + 1))
        connection.endheaders()
        response = connection.getresponse()
        assert response.status == 413
        assert "lower the exporter's batch size" in json.loads(response.read())["message"]
    finally:
        connection.close()
    bomb = gzip.compress(b" " * (collector.MAX_BODY_BYTES + 10))  # (20 KB that inflate to 20 MB)
    status, _, reply = post(receiver.url, bomb, JSON, "gzip")
    assert status == 413 and "once gunzipped" in json.loads(reply)["message"]


def test_protobuf_without_opentelemetry_proto_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry.proto.collector.trace.v1.trace_service_pb2", None)
    with pytest.raises(Refused) as caught:
        collector.request_of(b"", PROTOBUF)
    assert caught.value.status == 415
    assert "pip install 'citecheck[otel]'" in caught.value.message
    assert collector.request_of(b'{"resourceSpans": []}', JSON) == {"resourceSpans": []}  # (JSON needs nothing)


@pytest.mark.parametrize("named", ["as it is", "through a symbolic link"])
def test_a_second_receiver_on_the_same_log_is_refused(receiver, tmp_path, named):
    log = receiver.log
    if named != "as it is":  # (a new user's second collect through a link had a spool and a lock of its own)
        log = tmp_path / "link.jsonl"
        log.symlink_to(receiver.log)
    second = subprocess.run([sys.executable, "-m", "citecheck", "collect", "--log", str(log), "--port", "0"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert second.returncode == 2
    assert "another citecheck collect is writing" in second.stderr
    assert not (tmp_path / "link.jsonl.spool").exists()


# --- (3) kill -9 mid-stream -----------------------------------------------------------------------------

class Sender:
    """Threads sending traces in two exports each (children, then the root) until stopped; ``acked``:
    the traces whose exports both got a 200."""

    def __init__(self, port: int, threads: int = 2) -> None:
        self.port, self.stopping = port, threading.Event()
        self.acked: set[str] = set()
        self.tried: set[str] = set()
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._send, args=(k,)) for k in range(threads)]
        for thread in self.threads:
            thread.start()

    def _send(self, k: int) -> None:
        rng = random.Random(k)
        connection = None
        while not self.stopping.is_set():
            trace_id = new_trace_id(rng)
            with self.lock:
                self.tried.add(trace_id)
            try:
                connection = connection or http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                statuses = []
                for request in (export(child_spans(trace_id)), export([root_span(trace_id)])):
                    connection.request("POST", "/v1/traces", json.dumps(request).encode(), {"Content-Type": JSON})
                    response = connection.getresponse()
                    response.read()
                    statuses.append(response.status)
                if statuses == [200, 200]:
                    with self.lock:
                        self.acked.add(trace_id)
            except (OSError, http.client.HTTPException):
                if connection is not None:
                    connection.close()
                connection = None
                time.sleep(0.02)
        if connection is not None:
            connection.close()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=30)


def test_kill_9_mid_stream_loses_no_acknowledged_trace_and_writes_none_twice(tmp_path, receivers):
    log = tmp_path / "answers.jsonl"
    options = ("--grace-seconds", "0.1", "--quiet-seconds", "1.5")
    rng = random.Random()
    receiver = receivers(log, None, *options)
    sender = Sender(receiver.port)
    try:
        for _ in range(3):
            time.sleep(rng.uniform(0.3, 1.5))
            receiver.stop(signal.SIGKILL)
            receiver = receivers(log, receiver.port, *options)
        time.sleep(0.5)
    finally:
        sender.stop()
    acked = set(sender.acked)
    assert len(acked) > 50, "the sender got too few exports through to test anything"
    wait_for(lambda: acked <= {a["answer_id"] for a in log_lines(log)}, 30, "every acknowledged trace in the log")
    time.sleep(2)  # (the quiet period: a trace whose root was not acknowledged is written too)
    assert receiver.stop() == 0
    no_unreadable_line(log)
    ids = [a["answer_id"] for a in log_lines(log)]
    assert len(ids) == len(set(ids)), "an answer written twice"
    assert acked <= set(ids) <= sender.tried
    assert "stopped;" in receiver.stderr()


# --- (4) the memory cap; what stays in the spool -----------------------------------------------------------

def test_past_the_cap_the_trace_waiting_longest_is_written_with_a_note(tmp_path, receivers):
    log = tmp_path / "answers.jsonl"
    receiver = receivers(log, None, "--max-traces", "3", "--quiet-seconds", "60", "--grace-seconds", "0.1")
    traces = [new_trace_id() for _ in range(5)]
    for trace_id in traces:  # (no root: none is ever complete)
        assert post_json(receiver.url, export(child_spans(trace_id)))[0] == 200
        time.sleep(0.05)
    answers = wait_for_answers(log, 2)
    assert [a["answer_id"] for a in answers] == traces[:2]
    for a in answers:
        assert "written before it was complete: more than 3 traces were waiting (--max-traces 3)" in \
            a["trace"]["notes"]
        assert len(a["chunks"]) == 2
    assert receiver.stop() == 0  # the three incomplete traces are not written: they stay in the spool
    assert len(log_lines(log)) == 2 and "3 trace(s) waiting" in receiver.stderr()
    assert sum('"spans"' in line for line in (tmp_path / "answers.jsonl.spool").read_text().splitlines()) == 3
    again = receivers(log, None, "--quiet-seconds", "0.5")
    # (the line is written just after the socket listens: waited for, not read at once)
    wait_for(lambda: "3 trace(s) replayed from the spool" in again.stderr(), what="the start-up line")
    answers = wait_for_answers(log, 5)
    assert [a["answer_id"] for a in answers[2:]] == traces[2:]
    assert all("without a new span" in " ".join(a["trace"]["notes"]) for a in answers[2:])
    assert again.stop() == 0
    spool = [json.loads(line) for line in (tmp_path / "answers.jsonl.spool").read_text().splitlines()]
    assert [sorted(record) for record in spool] == [["done", "spool"]]  # compacted: only done traces
    assert set(spool[0]["done"]) == set(traces)


# --- the spool's writing event, settled on start-up ------------------------------------------------------

def _spool_with_a_trace_being_written(tmp_path) -> tuple[CollectSettings, str, str]:
    settings = CollectSettings(tmp_path / "answers.jsonl", grace=0.1, quiet=1)
    trace_id = new_trace_id()
    read = collector.read_export(trace_export(trace_id))
    (answer_id, line), = collector.answer_lines(read.spans, None)
    settings.log.write_text('{"earlier": "line"}\n')
    size = settings.log.stat().st_size
    writing = collector._event(writing={trace_id: {"answers": [answer_id], "note": None}}, log_size=size)
    settings.spool.write_text(read.line + "\n" + writing + "\n")
    return settings, trace_id, line


def test_an_answer_written_before_a_kill_is_not_written_again(tmp_path):
    settings, trace_id, line = _spool_with_a_trace_being_written(tmp_path)
    with open(settings.log, "a") as log:
        log.write(line + "\n")  # (the log append was done; its done event was not)
    before = settings.log.read_text()
    running = Collector(settings, io.StringIO())
    assert running.start(builder=False) == 0
    running.stop()
    assert settings.log.read_text() == before
    assert trace_id in json.loads(settings.spool.read_text().splitlines()[0])["done"]


def test_a_torn_answer_left_by_a_kill_is_cut_and_written_whole(tmp_path):
    settings, trace_id, line = _spool_with_a_trace_being_written(tmp_path)
    with open(settings.log, "a") as log:
        log.write(line[: len(line) // 2])  # (the kill came mid-write)
    said = io.StringIO()
    running = Collector(settings, said)
    running.start(builder=False)
    running.stop()
    lines = settings.log.read_text().splitlines()
    assert lines == ['{"earlier": "line"}', line]
    assert "cut a torn last line" in said.getvalue()


def test_a_spool_of_another_version_is_refused(tmp_path):
    settings = CollectSettings(tmp_path / "answers.jsonl")
    settings.spool.write_text('{"spool": 99, "done": []}\n')
    with pytest.raises(CitecheckError, match="not a spool line of this citecheck"):
        Collector(settings, io.StringIO()).start(builder=False)
    other = Collector(settings, io.StringIO())  # (the lock was let go)
    settings.spool.unlink()
    other.start(builder=False)
    other.stop()


def test_status_and_response_bodies_are_what_otlp_decoders_read():
    from google.rpc.status_pb2 import Status
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    message = "résumé " * 40  # (past 127 bytes: a two-byte length)
    assert Status.FromString(collector.status_body(True, message, 3)) == Status(code=3, message=message)
    partial = collector.Export((), "", 300, message)
    response = ExportTraceServiceResponse.FromString(collector.success_body(True, partial))
    assert (response.partial_success.rejected_spans, response.partial_success.error_message) == (300, message)
    assert json.loads(collector.success_body(False, partial)) == \
        {"partialSuccess": {"rejectedSpans": "300", "errorMessage": message}}
