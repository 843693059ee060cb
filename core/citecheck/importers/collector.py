"""``citecheck collect``: an OTLP/HTTP trace receiver that writes one answer-log line per request.

Applications instrumented with OpenTelemetry (OpenInference or GenAI attributes) export their
spans to ``POST /v1/traces``, as protobuf or JSON, gzipped or not (docs/collect.md).  The promises:

- **An export is acknowledged only once it is on disk.**  Its spans are appended to the spool
  (``LOG.spool``, JSON lines, :func:`~citecheck.storage.lines.append_lines`: locked, fsynced)
  before the 200 goes out.  Exports arriving together share one append and one fsync (group
  commit): one writer thread takes every export waiting, appends them in one write, then releases
  each export's sender; an export waits for its own group's fsync, never for a later one.
- **One log line per request, written once.**  A trace is written (:mod:`.traces`, format
  ``otel``) when its root span has ended and no span of it has come for ``grace`` seconds (the
  batch span processor may send children after their root), or after ``quiet`` seconds without a
  span when its root never ends or never comes.  Before the log append the spool says which
  answers are about to be written and the log's size then (``writing``); after it, that they were
  (``done``).  On start-up the spool is replayed, so the traces a killed receiver held are
  completed; answers of a ``writing`` event already in the log past that size are not written
  again, and a torn last line the killed receiver left there is cut off.
- **Bounded.**  At most ``max_traces`` traces wait: past that, the one waiting longest since its
  last span is written as it is, with a note.  The spool is rewritten with only the traces still
  waiting when it holds only written ones, or when it grew by :data:`COMPACT_BYTES`.
- **Two cores.**  This process reads exports and writes the spool and the log: one event loop
  (:class:`CollectServer`, a thread of its own) reads every connection's HTTP/1.1 requests
  (keep-alive, pipelined, chunked) and their exports (JSON or protobuf, :func:`spans_from_request`)
  and hands them to the writer thread, whose group commit answers them; the answers
  (:func:`~.traces.to_answer`, the costlier half) are built in a child process (:class:`Builder`),
  a batch of ready traces at a time.

The spool's lines (``"spool": 1`` in each; another version is refused, not guessed at)::

    {"spool": 1, "spans": [[trace, span, parent, name, kind, start, end, attributes, resource, error]...],
     "resources": [{...}]}                  (the spans of one export; resource: an index in resources)
    {"spool": 1, "writing": {"<trace>": {"answers": ["<answer id>"...], "note": null}}, "log_size": 123}
    {"spool": 1, "done": ["<trace>"...]}
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import zlib
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

import orjson

from citecheck.contract.log import dumps
from citecheck.errors import CitecheckError, FieldError
from citecheck.importers.spans import Span, spans_from_request
from citecheck.importers.traces import answers_anything, requests, to_answer
from citecheck.storage.durable import replace_file
from citecheck.storage.lines import append_lines, decode

SPOOL_VERSION = 1
PATH = "/v1/traces"
PROTOBUF = "application/x-protobuf"
JSON = "application/json"
MAX_BODY_BYTES = 20 * 2**20  # one export's body, and again once gunzipped (413 past it)
COMPACT_BYTES = 64 * 2**20  # the spool is rewritten when it has grown this much since it last was
TICK_SECONDS = 0.1  # how often the writer looks for traces ready to be written
RECENT = 20_000  # trace ids written lately, remembered so that a span arriving after is not a new trace
WAIT_SECONDS = 60.0  # the longest an export waits for its group's fsync before a 503
STATS_SECONDS = 60.0
INSTALL_PROTOBUF = "pip install 'citecheck[otel]'"


@dataclass(frozen=True, slots=True)
class CollectSettings:
    """Where to write and when a trace is complete (docs/collect.md)."""

    log: Path
    grace: float = 1.0  # seconds without a span, after the root span ended
    quiet: float = 30.0  # seconds without a span, for a trace whose root never ended
    max_traces: int = 10_000

    @property
    def spool(self) -> Path:
        """Beside the file the log is (a log named through a symbolic link has one spool and one lock)."""
        real = Path(os.path.realpath(self.log))
        return real.with_name(real.name + ".spool")

    @property
    def lock(self) -> Path:
        real = Path(os.path.realpath(self.log))
        return real.with_name(real.name + ".spool.lock")


class Refused(CitecheckError):
    """An export refused whole, with the HTTP status to answer (400 bad payload, 413 too large,
    415 a content type or encoding not taken, 503 not saved: the exporter retries)."""

    def __init__(self, status: int, message: str, close: bool = False):
        super().__init__(message)
        self.status = status
        self.message = message
        self.close = close  # the body was not read: the connection must close


@dataclass(frozen=True, slots=True)
class Export:
    """One export request, read: its spans, its spool line and the spans it could not read."""

    spans: tuple[Span, ...]
    line: str  # ("" when it has no span: nothing to save)
    rejected: int = 0
    problem: str = ""  # what was wrong with the first span it could not read


# --- reading an export ---------------------------------------------------------------------------

def gunzip(body: bytes, limit: int = MAX_BODY_BYTES) -> bytes:
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflate.decompress(body, limit + 1)
    except zlib.error as exc:
        raise Refused(400, f"Content-Encoding is gzip but the body is not gzip data ({exc})") from None
    if len(out) > limit:
        raise Refused(413, f"the body is more than {limit:,} bytes once gunzipped; citecheck collect takes at most "
                           f"{limit:,}: lower the exporter's batch size (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)")
    if not inflate.eof:
        raise Refused(400, "the gzip body is cut short: send the whole export")
    return out


def from_protobuf(body: bytes) -> dict:
    """An ``ExportTraceServiceRequest`` in protobuf as the dict its JSON mapping gives (camelCase
    keys, ids in base64, 64-bit numbers as strings), which :func:`spans_from_request` reads."""
    try:  # (the optional extra ``otel``: opentelemetry-proto, and protobuf that it brings)
        import opentelemetry.proto.collector.trace.v1.trace_service_pb2 as service
        from google.protobuf import json_format
        from google.protobuf.message import DecodeError as decode_error
    except ImportError:
        raise Refused(415, f"protobuf exports need opentelemetry-proto: {INSTALL_PROTOBUF}, or send JSON "
                           "(OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json)") from None
    message = service.ExportTraceServiceRequest()
    try:
        message.ParseFromString(body)
    except decode_error as exc:
        raise Refused(400, f"the body is not an OTLP protobuf ExportTraceServiceRequest ({exc})") from None
    request = json_format.MessageToDict(message)
    request.setdefault("resourceSpans", [])  # (an empty export: protobuf has no empty list to write)
    return request


def request_of(body: bytes, content_type: str, encoding: str = "") -> Any:
    """The export a body holds; :class:`Refused` saying what is wrong."""
    encoding = encoding.strip().lower()
    if encoding == "gzip":
        body = gunzip(body)
    elif encoding not in ("", "identity"):
        raise Refused(415, f"Content-Encoding {encoding!r} is not taken: send gzip or no encoding")
    if content_type == PROTOBUF:
        return from_protobuf(body)
    if content_type != JSON:
        raise Refused(415, f"Content-Type {content_type or '(none)'!r} is not taken: send {PROTOBUF} or {JSON}")
    try:
        return decode(body)
    except FieldError as exc:
        raise Refused(400, f"the body is not JSON ({exc.message}): send an OTLP JSON ExportTraceServiceRequest") \
            from None


def read_export(request: Any) -> Export:
    """The spans of one export; a span that cannot be read is rejected (partial success) and the
    others kept; :class:`Refused` (400) when the export itself is malformed or no span is readable."""
    spans: list[Span] = []
    problems: list[FieldError] = []
    for item in spans_from_request(request, "", "(export)"):  # (where: a span here is named by its field)
        if isinstance(item, Span):
            spans.append(item)
        elif ".spans[" in item.field:
            problems.append(item)
        else:
            raise Refused(400, f"not an OTLP ExportTraceServiceRequest: {item}")
    if problems and not spans:
        raise Refused(400, f"no span could be read ({len(problems)} span(s)); the first: {problems[0]}")
    problem = f"{len(problems)} span(s) could not be read; the first: {problems[0]}" if problems else ""
    return Export(tuple(spans), spans_line(spans) if spans else "", len(problems), problem)


# --- answering -----------------------------------------------------------------------------------

def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def status_body(protobuf: bool, message: str, code: int = 3) -> bytes:
    """An OTLP error body: a ``google.rpc.Status`` (code 3 INVALID_ARGUMENT by default), encoded by
    hand so that it needs no protobuf package."""
    if not protobuf:
        return orjson.dumps({"code": code, "message": message})
    text = message.encode("utf-8")
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


def success_body(protobuf: bool, export: Export) -> bytes:
    """An ``ExportTraceServiceResponse``: empty, or its ``partialSuccess`` when spans were rejected."""
    if not export.rejected:
        return b"" if protobuf else b"{}"
    if not protobuf:
        return orjson.dumps({"partialSuccess": {"rejectedSpans": str(export.rejected),
                                                "errorMessage": export.problem}})
    text = export.problem.encode("utf-8")
    inner = b"\x08" + _varint(export.rejected) + b"\x12" + _varint(len(text)) + text
    return b"\x0a" + _varint(len(inner)) + inner


# --- the spool -----------------------------------------------------------------------------------

def _json_line(obj: Any) -> str:
    try:
        return orjson.dumps(obj).decode("utf-8")
    except TypeError:  # (orjson.JSONEncodeError: an integer past 64 bits) the standard library writes it
        return json.dumps(obj, ensure_ascii=False)


def spans_line(spans: Iterable[Span]) -> str:
    """The spool line of some spans."""
    return _json_line(spans_record(spans))


def spans_record(spans: Iterable[Span]) -> dict:
    """Spans as the spool writes them (their resources written once)."""
    resources: list = []
    index: dict[int, int] = {}
    rows = []
    for s in spans:
        k = index.get(id(s.resource))
        if k is None:
            k = index[id(s.resource)] = len(resources)
            resources.append(s.resource)
        rows.append((s.trace_id, s.span_id, s.parent_id, s.name, s.kind, s.start, s.end, s.attributes, k,
                     s.status_error))
    return {"spool": SPOOL_VERSION, "spans": rows, "resources": resources}


def spans_of(record: dict, where: str) -> list[Span]:
    resources = record.get("resources") or []
    return [Span(t, s, p, n, k, start, end, attributes, where, resources[r], error)
            for t, s, p, n, k, start, end, attributes, r, error in record["spans"]]


def _event(**fields: Any) -> str:
    return _json_line({"spool": SPOOL_VERSION, **fields})


# --- building answers, in a child process --------------------------------------------------------

def answer_lines(spans: Iterable[Span], note: str | None, written: frozenset[str] = frozenset()) -> list[list[str]]:
    """[answer id, log line] of each request of a trace's spans (but those ``written`` already)."""
    out = []
    for request in requests(spans):
        if not answers_anything(request):
            continue  # (an indexing run's trace: no answer to write)
        if note:
            request = replace(request, notes=(*request.notes, note))
        answer = to_answer(request, "otel")
        if answer.answer_id not in written:
            out.append([answer.answer_id, dumps(answer)])
    return out


def build(jobs: list[dict]) -> list[list]:
    """[trace id, [[answer id, line]...], error] for each job ``{"trace", "note", "written", "spans"}``
    (``spans``: a :func:`spans_record`); an answer that cannot be built is an error, not a stop."""
    out: list[list] = []
    for job in jobs:
        try:
            spans = spans_of(job["spans"], f"trace {job['trace']}")
            out.append([job["trace"], answer_lines(spans, job["note"], frozenset(job["written"])), None])
        except Exception as exc:  # (a bug in citecheck: said, and the other traces still written)
            out.append([job["trace"], [], f"{type(exc).__name__}: {exc}"])
    return out


def builder_main() -> None:
    """The child process: jobs in on stdin, results out on stdout, each a length-prefixed JSON
    frame; it ends when its parent closes stdin or dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (Ctrl-C reaches the whole group: the parent stops it)
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while len(head := source.read(8)) == 8:
        size = int.from_bytes(head, "big")
        body = source.read(size)
        if len(body) < size:
            return  # (the parent died mid-write)
        payload = _json_line(build(decode(body))).encode("utf-8")
        try:
            sink.write(len(payload).to_bytes(8, "big") + payload)
            sink.flush()
        except BrokenPipeError:  # (the parent died: its spool has the traces)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sink.fileno())  # (no second error at exit)
            return


class Builder:
    """Builds the answers of a batch of traces in a child process, so that it runs on another
    core while this process takes exports; one batch at a time.  When the child cannot start or
    dies, batches are built in this process."""

    def __init__(self, notify: Callable[[], None]) -> None:
        self._notify = notify
        self._jobs: list[dict] | None = None  # the batch out
        self._done: list | None = None  # its results, once back
        self._dead = False
        self._lock = threading.Lock()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).resolve().parents[2]),
                                                        env.get("PYTHONPATH")) if p)
        try:
            self._process: subprocess.Popen | None = subprocess.Popen(
                [sys.executable, "-c", "from citecheck.importers.collector import builder_main; builder_main()"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        except OSError:
            self._process = None
        else:
            threading.Thread(target=self._read, name="citecheck-collect-builder", daemon=True).start()

    @property
    def busy(self) -> bool:
        return self._jobs is not None

    def submit(self, jobs: list[dict]) -> None:
        self._jobs = jobs
        process = self._process
        if process is not None and not self._dead:
            payload = _json_line(jobs).encode("utf-8")
            try:
                assert process.stdin is not None
                process.stdin.write(len(payload).to_bytes(8, "big") + payload)
                process.stdin.flush()
                return
            except OSError:
                self._dead = True
        self._done = build(jobs)

    def take(self) -> list | None:
        """The results of the batch out, once they are back (built here if the child died)."""
        with self._lock:
            done, dead = self._done, self._dead
        if self._jobs is None or (done is None and not dead):
            return None
        if done is None:
            done = build(self._jobs)
        self._jobs = self._done = None
        return done

    def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        source = self._process.stdout
        while len(head := source.read(8)) == 8:
            body = source.read(int.from_bytes(head, "big"))
            with self._lock:
                self._done = decode(body)
            self._notify()
        with self._lock:
            self._dead = True
        self._notify()

    def close(self) -> None:
        if self._process is None:
            return
        try:
            assert self._process.stdin is not None
            self._process.stdin.close()
        except OSError:
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()


# --- the traces waiting, and the writer ----------------------------------------------------------

class _Trace:
    """One trace waiting to be written (mutable: its spans keep coming)."""

    __slots__ = ("spans", "last", "ended", "written")

    def __init__(self) -> None:
        self.spans: dict[str, Span] = {}
        self.last = 0.0  # (monotonic) when its last span came
        self.ended = False  # a root span of it has ended
        self.written: frozenset[str] = frozenset()  # its answers a killed receiver wrote already


class _Waiter:
    """An export waiting for its group's fsync; ``done(error)`` is called (on the writer thread)
    once it is on disk (error ``""``) or could not be saved."""

    __slots__ = ("export", "done")

    def __init__(self, export: Export, done: Callable[[str], None]) -> None:
        self.export = export
        self.done = done


class Collector:
    """The traces waiting, and the one thread that writes the spool and the log.  :meth:`submit`
    (any thread) returns once an export's spans are on disk."""

    def __init__(self, settings: CollectSettings, err: TextIO, clock=time.monotonic) -> None:
        self.settings = settings
        self.grace = min(settings.grace, settings.quiet)
        self.err = err
        self.clock = clock
        self.traces: OrderedDict[str, _Trace] = OrderedDict()  # least recently given a span first
        self.building: dict[str, tuple[_Trace, str | None]] = {}  # out to the builder: (trace, note)
        self.recent: OrderedDict[str, None] = OrderedDict()  # trace ids written (or being), oldest first
        self.counts: Counter = Counter()
        self._queue: list[_Waiter] = []
        self._cond = threading.Condition()
        self._stopping = False
        self._pending_done: list[str] = []  # done events not yet in the spool (they go with the next append)
        self._grown = 0  # bytes appended to the spool since it was last rewritten
        self._next_tick = 0.0
        self._lock_fd: int | None = None
        self._thread: threading.Thread | None = None
        self.builder: Builder | None = None

    # -- life --------------------------------------------------------------------------------------

    def start(self, builder: bool = True) -> int:
        """Lock the spool, replay it, start the writer; returns how many traces were replayed."""
        self._take_lock()
        try:
            self.builder = Builder(self._wake) if builder else None
            self._recover()
            replayed = len(self.traces)
            self._compact()
        except BaseException:
            self._close()
            raise
        self._thread = threading.Thread(target=self._run, name="citecheck-collect-writer", daemon=True)
        self._thread.start()
        return replayed

    def stop(self) -> None:
        """Refuse new exports, save those waiting, write the traces that are complete, compact the spool."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()
        try:
            self._write_now(self.ready(self.clock(), final=True))
            self._compact()
        finally:
            self._close()

    def _close(self) -> None:
        if self.builder is not None:
            self.builder.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # (closing releases the lock)
            self._lock_fd = None

    def _take_lock(self) -> None:
        self.settings.log.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.settings.lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise CitecheckError(f"another citecheck collect is writing {self.settings.log} ({self.settings.lock} "
                                 "is locked): stop it first, or give this one another --log") from None
        self._lock_fd = fd

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify()

    # -- exports in ----------------------------------------------------------------------------------

    def submit(self, export: Export) -> None:
        """Returns once the export's spans are in the spool; :class:`Refused` (503) if they could not be."""
        event = threading.Event()
        errors: list[str] = []

        def done(error: str) -> None:
            errors.append(error)
            event.set()

        self.enqueue(export, done)
        if not event.wait(WAIT_SECONDS):
            raise Refused(503, f"the spool was not written within {WAIT_SECONDS:g} s; the exporter will retry")
        if errors[0]:
            raise Refused(503, errors[0])

    def enqueue(self, export: Export, done: Callable[[str], None]) -> None:
        """Queue an export for the next group commit; ``done(error)`` is called on the writer thread
        once its spans are in the spool (``""``) or could not be saved (what went wrong).
        :class:`Refused` (503) when the receiver is stopping."""
        with self._cond:
            if self._stopping:
                raise Refused(503, "citecheck collect is shutting down; the exporter will retry")
            self._queue.append(_Waiter(export, done))
            self._cond.notify()

    def count(self, what: str, n: int = 1) -> None:
        with self._cond:
            self.counts[what] += n

    def _run(self) -> None:
        builder = self.builder
        while True:
            with self._cond:
                if not self._queue and not self._stopping:
                    wait = TICK_SECONDS if self.building else self._next_tick - self.clock()
                    self._cond.wait(max(0.0, wait))
                batch, self._queue = self._queue, []
                stopping = self._stopping
            if batch:
                self._commit(batch)
            built = builder.take() if builder is not None else None
            if built is not None:
                self._write_built(built)
            now = self.clock()
            if not self.building and (now >= self._next_tick or len(self.traces) > self.settings.max_traces):
                self._next_tick = now + TICK_SECONDS
                chosen = self.ready(now)
                if chosen and builder is not None:
                    builder.submit(self._jobs(chosen))
                elif chosen:
                    self._write_now(chosen)
                if self._grown >= COMPACT_BYTES or (not self.traces and self._grown >= 2**20):
                    self._compact()
            if stopping and not batch and not self.building:
                return

    def _commit(self, batch: list[_Waiter]) -> None:
        """One append and fsync for every export of the batch, then each is released."""
        lines = self._pending_done + [w.export.line for w in batch if w.export.line]
        try:
            append_lines(self.settings.spool, lines, what=f"the spans of {len(batch)} export(s)")
        except OSError as exc:  # (WriteFailed: the disk is full...) nothing acknowledged
            for w in batch:
                w.done(f"the spans were not saved ({exc}); the exporter will retry")
            return
        self._pending_done = []
        self._grown += sum(len(line) + 1 for line in lines)
        now = self.clock()
        late = 0
        for w in batch:
            late += self._add(w.export.spans, now)
        with self._cond:
            self.counts.update({"exports": len(batch), "spans": sum(len(w.export.spans) for w in batch),
                                "rejected spans": sum(w.export.rejected for w in batch), "late spans": late})
        for w in batch:
            w.done("")

    def _add(self, spans: Iterable[Span], now: float) -> int:
        """Add spans to their traces; returns how many came late (their trace was written: the answer is out)."""
        traces = self.traces
        late = 0
        for span in spans:
            trace_id = span.trace_id
            if trace_id in self.recent:
                late += 1
                continue
            trace = traces.get(trace_id)
            if trace is None:
                trace = traces[trace_id] = _Trace()
            else:
                traces.move_to_end(trace_id)
            trace.spans[span.span_id] = span
            trace.last = now
            if span.end is not None and span.parent_id in (None, span.span_id):
                trace.ended = True
        return late

    def _remember(self, trace_id: str) -> None:
        self.recent[trace_id] = None
        self.recent.move_to_end(trace_id)
        while len(self.recent) > RECENT:
            self.recent.popitem(last=False)

    # -- answers out -----------------------------------------------------------------------------------

    def ready(self, now: float, final: bool = False) -> list[tuple[str, str | None]]:
        """(trace id, note) of the traces to write now: complete ones, quiet ones and, past the cap,
        the ones waiting longest.  ``final`` (shutting down): only complete ones."""
        chosen: list[tuple[str, str | None]] = []
        quiet = self.settings.quiet
        for trace_id, trace in self.traces.items():
            idle = now - trace.last
            if idle < self.grace:
                break  # (the rest had a span since)
            if trace.ended:
                chosen.append((trace_id, None))
            elif idle >= quiet and not final:
                chosen.append((trace_id, f"written by citecheck collect after {quiet:g} s without a new span, "
                                         "its root span never having ended (--quiet-seconds)"))
        cap = self.settings.max_traces
        excess = len(self.traces) - len(chosen) - cap
        if excess > 0 and not final:
            taken = {trace_id for trace_id, _ in chosen}
            for trace_id in self.traces:
                if excess <= 0:
                    break
                if trace_id not in taken:
                    chosen.append((trace_id, f"written before it was complete: more than {cap:,} traces were "
                                             f"waiting (--max-traces {cap})"))
                    excess -= 1
        return chosen

    def _jobs(self, chosen: list[tuple[str, str | None]]) -> list[dict]:
        """The builder's jobs for these traces, which move from waiting to building."""
        jobs = []
        for trace_id, note in chosen:
            trace = self.traces.pop(trace_id)
            self.building[trace_id] = (trace, note)
            self._remember(trace_id)
            jobs.append({"trace": trace_id, "note": note, "written": sorted(trace.written),
                         "spans": spans_record(trace.spans.values())})
        return jobs

    def _write_now(self, chosen: list[tuple[str, str | None]]) -> None:
        if chosen:
            self._write_built(build(self._jobs(chosen)))

    def _write_built(self, built: list[list]) -> None:
        """Write built answers: a ``writing`` event, the log append, a ``done`` event (the next append's)."""
        writing: dict[str, dict] = {}
        lines: list[str] = []
        for trace_id, answers, error in built:
            if error:
                self.err.write(f"citecheck collect: could not build the answer of trace {trace_id} ({error}); "
                               "this is a bug in citecheck, please report it\n")
                self.count("failed traces")
            writing[trace_id] = {"answers": [answer_id for answer_id, _ in answers], "note": self.building[trace_id][1]}
            lines += [line for _, line in answers]
        log = self.settings.log
        try:
            size = log.stat().st_size if log.exists() else 0
            append_lines(self.settings.spool, self._pending_done + [_event(writing=writing, log_size=size)],
                         what="the spool's writing event")
            self._pending_done = []
            append_lines(log, lines, what=f"{len(lines)} answer(s)")
        except OSError as exc:  # the traces wait again, and are tried again in 5 s
            self.err.write(f"citecheck collect: {exc} The traces stay waiting; trying again in 5 s.\n")
            now = self.clock()
            for trace_id, (trace, _) in self.building.items():
                trace.last = now
                self.traces[trace_id] = trace
                self.recent.pop(trace_id, None)
            self.building.clear()
            self._next_tick = now + 5.0
            return
        notes = [note for _, note in self.building.values() if note]
        self.building.clear()
        self._pending_done.append(_event(done=list(writing)))
        with self._cond:
            self.counts.update({"answers": len(lines),
                                "traces answering nothing": sum(1 for _, answers, error in built
                                                                if not answers and not error),
                                "written at the cap": sum(n.startswith("written before") for n in notes),
                                "written quiet": sum(n.startswith("written by") for n in notes)})

    # -- the spool on start-up -----------------------------------------------------------------------

    def _recover(self) -> None:
        """Replay the spool: the traces not done wait again; a ``writing`` event whose ``done`` is
        missing is settled against what the log holds past the size it gave."""
        spool = self.settings.spool
        if not spool.exists():
            return
        now = self.clock()
        intents: list[dict] = []
        unreadable = 0
        with open(spool, "rb") as handle:
            for n, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                try:
                    record = decode(raw)
                except FieldError:  # a torn line: a group a kill cut short, never acknowledged
                    unreadable += 1
                    continue
                if not isinstance(record, dict) or record.get("spool") != SPOOL_VERSION:
                    raise CitecheckError(f"{spool}:{n}: not a spool line of this citecheck (spool version "
                                         f"{SPOOL_VERSION}); run the citecheck that wrote it, or move the file away")
                if "spans" in record:
                    self._add(spans_of(record, f"{spool}:{n}"), now)
                elif "writing" in record:
                    intents.append(record)
                elif "done" in record:
                    for trace_id in record["done"]:
                        self.traces.pop(trace_id, None)
                        self._remember(trace_id)
        if unreadable:
            self.err.write(f"citecheck collect: {unreadable} torn line(s) in {spool} skipped (exports cut short "
                           "by a kill; they were never acknowledged)\n")
        self._settle(intents)

    def _settle(self, intents: list[dict]) -> None:
        open_intents = [i for i in intents if any(t in self.traces for t in i["writing"])]
        if not open_intents:
            return
        found = self._answers_in_log(min(int(i["log_size"]) for i in open_intents))
        again: dict[str, str | None] = {}
        for intent in open_intents:
            for trace_id, what in intent["writing"].items():
                trace = self.traces.get(trace_id)
                if trace is None or trace_id in again:
                    continue
                answers = set(what["answers"])
                if answers <= found:
                    del self.traces[trace_id]
                    self._remember(trace_id)
                    self._pending_done.append(_event(done=[trace_id]))
                else:  # (it was being written: it was ready then, and is written now)
                    trace.written = frozenset(answers & found)
                    again[trace_id] = what.get("note")
        self._write_now(list(again.items()))

    def _answers_in_log(self, offset: int) -> set[str]:
        """The answer ids of the whole lines of the log from ``offset``; a torn last line there (a
        killed append) is cut off."""
        log = self.settings.log
        if not log.exists():
            return set()
        fd = os.open(log, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            if size <= offset:
                return set()
            data = os.pread(fd, size - offset, offset)
            end = data.rfind(b"\n") + 1
            if end < len(data):
                os.ftruncate(fd, offset + end)
                os.fsync(fd)
                self.err.write(f"citecheck collect: cut a torn last line ({len(data) - end} bytes) off {log}, "
                               "left by a killed receiver; its answers are written again\n")
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        found = set()
        for line in data[:end].splitlines():
            try:
                answer_id = orjson.loads(line).get("answer_id")
            except (orjson.JSONDecodeError, AttributeError):
                continue
            if isinstance(answer_id, str):
                found.add(answer_id)
        return found

    def _compact(self) -> None:
        """Rewrite the spool with only the traces waiting (and the ids written lately)."""
        done = [trace_id for trace_id in self.recent if trace_id not in self.building]
        lines = [_event(done=done)] if done else []
        waiting = [*self.traces.values(), *(trace for trace, _ in self.building.values())]
        lines += [spans_line(trace.spans.values()) for trace in waiting]
        spool = self.settings.spool
        if not lines and not spool.exists():
            return
        try:
            replace_file(spool, "".join(line + "\n" for line in lines), what="the compacted spool")
        except OSError as exc:
            self.err.write(f"citecheck collect: {exc} The spool stays as it was.\n")
            return
        self._pending_done = []
        self._grown = 0

    # -- figures ---------------------------------------------------------------------------------------

    def stats_line(self) -> str:
        with self._cond:
            c = Counter(self.counts)
        parts = [f"{c['exports']:,} export(s) ({c['spans']:,} spans, {c['rejected spans']:,} rejected)",
                 f"{c['refused']:,} refused", f"{c['answers']:,} answer(s) written",
                 f"{len(self.traces):,} trace(s) waiting"]
        parts += [f"{c[k]:,} {k}" for k in ("written quiet", "written at the cap", "late spans", "failed traces")
                  if c[k]]
        if c["traces answering nothing"]:  # (no LLM call, retrieval, answer or error: an indexing run, say)
            parts.append(f"{c['traces answering nothing']:,} trace(s) with no LLM call, retrieval or answer left out")
        return "citecheck collect: " + ", ".join(parts) + "\n"


# --- the HTTP server -----------------------------------------------------------------------------

MAX_HEAD_BYTES = 64 * 1024  # a request line and headers longer than this: 431 (exporters send a few hundred bytes)
IDLE_SECONDS = 300.0  # an idle keep-alive connection is closed after this
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 411: "Length Required",
            413: "Content Too Large", 415: "Unsupported Media Type", 431: "Request Header Fields Too Large",
            503: "Service Unavailable"}


@dataclass(frozen=True, slots=True)
class _Head:
    """A request's line and headers (names in lowercase; a repeated header: the first)."""

    method: str
    path: str
    headers: dict[str, str]
    keep_alive: bool

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


def parse_head(raw: bytes) -> _Head:
    """The request line and headers of one request (without the blank line ending them);
    :class:`Refused` (400, closing the connection) when they are not HTTP/1.x."""
    lines = raw.decode("latin-1").split("\n")
    parts = lines[0].strip().split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise Refused(400, f"not an HTTP/1.1 request line: {lines[0][:80]!r}", close=True)
    method, target, version = parts
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.rstrip("\r").partition(":")
        if not colon or not name or name != name.strip():
            raise Refused(400, f"a malformed header line: {line[:80]!r}", close=True)
        headers.setdefault(name.lower(), value.strip())
    tokens = headers.get("connection", "").lower()
    keep_alive = "close" not in tokens if version != "HTTP/1.0" else "keep-alive" in tokens
    return _Head(method, urlsplit(target).path, headers, keep_alive)


def chunked_body(buffer: bytearray, at: int, limit: int = MAX_BODY_BYTES) -> tuple[bytes, int] | None:
    """``(body, end)`` of a chunked body starting at ``buffer[at]`` (``end``: just past its last
    trailer line); None while it has not all come; :class:`Refused` when it is malformed or too large."""
    pieces: list[tuple[int, int]] = []
    total = 0
    while True:
        eol = buffer.find(b"\n", at)
        if eol < 0:
            if len(buffer) - at > 1000:
                raise Refused(400, "the chunked body is malformed", close=True)
            return None
        try:
            size = int(bytes(buffer[at:eol]).split(b";")[0].strip(), 16)
        except ValueError:
            raise Refused(400, "the chunked body is malformed", close=True) from None
        if size < 0:
            raise Refused(400, "the chunked body is malformed", close=True)
        at = eol + 1
        if size == 0:
            break
        total += size
        if total > limit:
            raise Refused(413, f"the body is more than {limit:,} bytes; lower the exporter's batch size "
                               "(OTEL_BSP_MAX_EXPORT_BATCH_SIZE)", close=True)
        if len(buffer) < at + size:
            return None
        pieces.append((at, at + size))
        at += size
        eol = buffer.find(b"\n", at)  # (the CRLF after the chunk)
        if eol < 0:
            return None
        at = eol + 1
    while True:  # trailers, up to a blank line
        eol = buffer.find(b"\n", at)
        if eol < 0:
            return None
        blank = not buffer[at:eol].strip()
        at = eol + 1
        if blank:
            return b"".join(bytes(buffer[a:b]) for a, b in pieces), at


class _Connection(asyncio.Protocol):
    """One client's connection: its requests read from the bytes as they come and answered in
    order, one at a time (a pipelined request waits until the one before is answered); kept open
    between requests (HTTP/1.1 keep-alive) unless the client or an error says otherwise."""

    def __init__(self, server: CollectServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.head: _Head | None = None  # the request whose body is awaited
        self.continued = False  # "100 Continue" sent for it
        self.waiting: Export | None = None  # the export whose fsync is awaited
        self.protobuf = False  # (the request being answered is protobuf: so is its answer)
        self.keep_alive = True  # (the request being answered lets the connection stay open)
        self.since = 0.0  # (monotonic) when it began waiting, or its last activity
        self.paused = False

    # -- asyncio's calls ----------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:  # (the headers and body of an answer leave in one write, but a 100 Continue does not)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.since = time.monotonic()
        self.server.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.connections.discard(self)
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self.since = time.monotonic() if self.waiting is None else self.since
        if self.waiting is None:
            self._serve()
        elif len(self.buffer) > MAX_BODY_BYTES and not self.paused and self.transport is not None:
            self.transport.pause_reading()  # (a client pipelining more than one export's worth)
            self.paused = True

    # -- requests -----------------------------------------------------------------------------------

    def _serve(self) -> None:
        """Answer every whole request in the buffer, until one waits for its fsync."""
        while self.waiting is None and self.transport is not None:
            try:
                if not self._request():
                    return
            except Refused as exc:
                self.head = None
                self.server.collector.count("refused")
                self._status(exc if self.keep_alive else Refused(exc.status, exc.message, close=True))

    def _request(self) -> bool:
        """Read (and answer, or send to the spool) the next request; False when it has not all come."""
        if self.head is None:
            while self.buffer[:2] == b"\r\n":  # (blank lines before a request line are ignored)
                del self.buffer[:2]
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEAD_BYTES:
                    self.protobuf = False
                    raise Refused(431, f"the request line and headers are over {MAX_HEAD_BYTES:,} bytes", close=True)
                return False
            raw = bytes(self.buffer[:end])
            del self.buffer[:end + 4]
            self.protobuf, self.keep_alive = False, False
            self.head = parse_head(raw)
            self.continued = False
            self.protobuf, self.keep_alive = self.head.content_type == PROTOBUF, self.head.keep_alive
        head = self.head
        if head.method != "POST":
            self.head = None
            if head.path != PATH:
                raise Refused(404, f"nothing at {head.path}: send OTLP/HTTP traces to POST {PATH}", close=True)
            raise Refused(405, f"{head.method} is not taken here: send traces with POST {PATH}", close=True)
        if head.path != PATH:
            raise Refused(404, f"nothing at {head.path}: send OTLP/HTTP traces to POST {PATH}", close=True)
        body = self._body(head)
        if body is None:
            return False
        self.head = None
        export = read_export(request_of(body, head.content_type, head.headers.get("content-encoding", "")))
        if not export.spans:
            self._reply(200, success_body(self.protobuf, export), close=not head.keep_alive)
            return True
        self.waiting = export
        self.since = time.monotonic()
        close = not head.keep_alive
        acked = self.server.acked
        try:
            self.server.collector.enqueue(export, lambda error: acked((self, export, error, close)))
        except Refused:
            self.waiting = None
            raise
        return True

    def _body(self, head: _Head) -> bytes | None:
        length = head.headers.get("content-length")
        if length is None:
            if "chunked" not in head.headers.get("transfer-encoding", "").lower():
                raise Refused(411, "send the export with a Content-Length", close=True)
            self._continue(head)
            found = chunked_body(self.buffer, 0)
            if found is None:
                return None
            body, end = found
            del self.buffer[:end]
            return body
        try:
            size = int(length)
        except ValueError:
            raise Refused(400, f"Content-Length {length!r} is not a number", close=True) from None
        if size < 0:
            raise Refused(400, f"Content-Length {length!r} is not a number of bytes", close=True)
        if size > MAX_BODY_BYTES:
            raise Refused(413, f"the body is {size:,} bytes; citecheck collect takes at most {MAX_BODY_BYTES:,} per "
                               "export: lower the exporter's batch size (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)", close=True)
        if len(self.buffer) < size:
            self._continue(head)
            return None
        body = bytes(self.buffer[:size])
        del self.buffer[:size]
        return body

    def _continue(self, head: _Head) -> None:
        if not self.continued and head.headers.get("expect", "").lower() == "100-continue" \
                and self.transport is not None:
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self.continued = True

    def _saved(self, export: Export, error: str, close: bool) -> None:
        """(on the event loop) The export's group was fsynced, or could not be written."""
        if self.waiting is not export:
            return  # (answered 503 already: it waited too long)
        self.waiting = None
        self.since = time.monotonic()
        if error:
            self.server.collector.count("refused")
            self._status(Refused(503, error))
        else:
            self._reply(200, success_body(self.protobuf, export), close=close)
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        self._serve()

    def expire(self, now: float) -> None:
        """(every second) Answer 503 to an export whose fsync is overdue; close an idle connection."""
        if self.waiting is not None and now - self.since > WAIT_SECONDS:
            self.waiting = None
            self._status(Refused(503, f"the spool was not written within {WAIT_SECONDS:g} s; the exporter will "
                                      "retry", close=True))
        elif self.waiting is None and not self.buffer and now - self.since > IDLE_SECONDS and self.transport:
            self.transport.close()

    # -- answers ------------------------------------------------------------------------------------

    def _status(self, refused: Refused) -> None:
        headers = {"Retry-After": "1"} if refused.status == 503 else {}
        if refused.status == 405:
            headers["Allow"] = "POST"
        code = {404: 5, 405: 12, 413: 8, 503: 14}.get(refused.status, 3)  # gRPC codes, as OTLP says
        self._reply(refused.status, status_body(self.protobuf, refused.message, code), refused.close, headers)

    def _reply(self, status: int, body: bytes, close: bool = False, headers: dict[str, str] | None = None,
               ) -> None:
        transport = self.transport
        if transport is None:
            return
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, '')}", "Server: citecheck-collect",
                 f"Content-Type: {PROTOBUF if self.protobuf else JSON}", f"Content-Length: {len(body)}"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        if close:
            lines.append("Connection: close")
        transport.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        if close:
            transport.close()
            self.transport = None


class CollectServer:
    """``POST /v1/traces`` in front of a :class:`Collector`: one event loop (a thread of its own)
    reads every connection, and hands each export to the collector's writer thread, whose group
    commit answers it."""

    def __init__(self, address: tuple[str, int], collector: Collector) -> None:
        self.collector = collector
        self.connections: set[_Connection] = set()
        self._acks: deque[tuple[_Connection, Export, str, bool]] = deque()  # (from the writer thread)
        self._ack_scheduled = False
        self.loop = asyncio.new_event_loop()
        try:
            self.server = self.loop.run_until_complete(
                self.loop.create_server(lambda: _Connection(self), address[0], address[1], backlog=512))
        except BaseException:
            self.loop.close()
            raise
        self.server_address = self.server.sockets[0].getsockname()
        self._thread: threading.Thread | None = None

    def acked(self, ack: tuple[_Connection, Export, str, bool]) -> None:
        """(on the writer thread) An export's group was fsynced, or could not be: answered on the
        event loop, every export of a group woken by one call."""
        self._acks.append(ack)
        if not self._ack_scheduled:
            self._ack_scheduled = True
            self.loop.call_soon_threadsafe(self._answer_acks)

    def _answer_acks(self) -> None:
        self._ack_scheduled = False  # (before taking them: an ack added from now on schedules another call)
        acks = self._acks
        while acks:
            connection, export, error, close = acks.popleft()
            connection._saved(export, error, close)

    def _sweep(self) -> None:
        now = time.monotonic()
        for connection in list(self.connections):
            connection.expire(now)
        self.loop.call_later(1.0, self._sweep)

    def start(self) -> None:
        self.loop.call_soon(self._sweep)
        self._thread = threading.Thread(target=self.loop.run_forever, name="citecheck-collect-http", daemon=True)
        self._thread.start()

    def stop_listening(self) -> None:
        """Take no new connection (those open are still answered)."""
        self.loop.call_soon_threadsafe(self.server.close)

    def close(self) -> None:
        """Close every connection, once the answers queued for them are sent, and stop the loop."""
        def finish() -> None:
            for connection in list(self.connections):
                if connection.transport is not None:
                    connection.transport.close()
            self.loop.stop()

        if self._thread is not None:
            self.loop.call_soon_threadsafe(finish)
            self._thread.join(timeout=10)


def serve(settings: CollectSettings, host: str, port: int, err: TextIO) -> int:
    """Run the receiver until SIGTERM or SIGINT; a counts line every minute and at the end."""
    collector = Collector(settings, err)
    replayed = collector.start()
    try:
        server = CollectServer((host, port), collector)
    except OSError as exc:
        collector.stop()
        raise CitecheckError(f"cannot listen on {host}:{port} ({exc.strerror or exc}): another receiver (an "
                             "OpenTelemetry collector?) may have that port; give another --port") from None
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGTERM, signal.SIGINT)}
    server.start()
    bound = server.server_address[1]
    err.write(f"citecheck collect: listening on http://{host}:{bound}{PATH}, writing {settings.log} "
              f"(spool {settings.spool})" + (f"; {replayed} trace(s) replayed from the spool" if replayed else "")
              + "\n")
    err.flush()
    try:
        while not stop.wait(STATS_SECONDS):
            err.write(collector.stats_line())
            err.flush()
    finally:
        server.stop_listening()
        collector.stop()  # (the exports queued are saved and answered first)
        server.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    err.write(collector.stats_line().replace("collect:", "collect: stopped;", 1))
    err.flush()
    return 0
