"""Reading recorded API exchanges: a response body (JSON, or a server-sent-event stream as the API
sent it), the request body when there is one, or a ``--pairs`` file of both.

Every provider importer gives a :class:`Provider`: how to turn a request and a response body into
an :class:`Answer`, and how to turn a stream's events back into the response body the API would
have returned without streaming.  Everything else (reading files, pairing, error positions) is here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citecheck.checking.checker import span_mismatch, span_text
from citecheck.contract.log import Answer, Citation
from citecheck.errors import FieldError, RecordError
from citecheck.importers import read_records


@dataclass(frozen=True, slots=True)
class Event:
    """One server-sent event: its ``event:`` name (may be empty), its decoded ``data`` and the line it starts on."""

    line: int
    name: str
    data: Any


@dataclass(frozen=True, slots=True)
class Provider:
    name: str
    convert: Callable[[Any, Any, int], Answer]  # (request or None, response body, position) -> Answer
    # stream events -> the equivalent response body; a bad event is appended to the list and skipped
    assemble: Callable[[list[Event], list], Any]


def check_spans(answer: str, citations: list[Citation]) -> tuple[Citation, ...]:
    """Each citation with the provider's own text for its span (``locator.span_text``: Gemini's
    ``segment.text``, Cohere's ``text``) or a string its span must hold (``locator.span_contains``:
    the URL of an OpenAI inline link) gets ``locator.span_check``: ``"ok"``, or ``"mismatch"`` with
    the text found there in ``locator.span_found``.  A mismatch means the offsets were read in the
    wrong unit or the answer text is not the one the provider returned; the checker makes the
    same comparison from the log (``span_mismatch``)."""
    out = []
    for c in citations:
        loc = c.locator or {}
        if "span_text" not in loc and "span_contains" not in loc:
            out.append(c)
            continue
        bad = span_mismatch(answer, c)
        loc = dict(loc, span_check="mismatch" if bad else "ok")
        if bad:
            loc["span_found"] = span_text(answer, c)
        out.append(c._replace(locator=loc))
    return tuple(out)


def looks_like_stream(text: str) -> bool:
    """True when ``text`` is a recorded SSE stream (its first field line is ``event:``, ``data:`` or ``id:``)."""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(":"):
            continue
        return line.startswith(("event:", "data:", "id:", "retry:"))
    return False


def parse_events(text: str, name: str) -> tuple[list[Event], list[RecordError]]:
    """The events of an SSE stream, in order, and an error for each event whose data is not JSON.

    Follows the SSE rules: events end at a blank line, several ``data:`` lines join with a newline,
    one space after the colon is dropped, comment lines (``:``) are ignored.  ``data: [DONE]`` (the
    OpenAI terminator) carries no event.
    """
    events: list[Event] = []
    errors: list[RecordError] = []
    data: list[str]  # the data lines of the event being read
    kind, data, start = "", [], 0

    def flush() -> None:
        if not data:
            return
        payload = "\n".join(data)
        if payload.strip() == "[DONE]":
            return
        try:
            events.append(Event(start, kind, json.loads(payload)))
        except json.JSONDecodeError as exc:
            errors.append(RecordError(name, start, "data", f"event {kind or '(unnamed)'}: not valid JSON ({exc.msg})"))

    for line_no, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            flush()
            kind, data, start = "", [], 0
            continue
        if raw.startswith(":"):
            continue
        field, _, value = raw.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if not start:
            start = line_no
        if field == "event":
            kind = value.strip()
        elif field == "data":
            data.append(value)
    flush()
    return events, errors


class StreamError(FieldError):
    """A bad field in one event of a stream: the error names the event and the line it starts on."""

    def __init__(self, event: Event, field: str, message: str):
        super().__init__(field, message)
        self.event = event


def fold(events: list[Event], take: Callable[[Event], None], errors: list[StreamError]) -> None:
    """``take(event)`` for every event, in order; an event it refuses (StreamError) is recorded and
    skipped, so one bad event costs only itself."""
    for event in events:
        try:
            take(event)
        except StreamError as exc:
            errors.append(exc)


def stream_body(text: str, name: str, provider: Provider, line: int | None = None) -> tuple[list[RecordError], Any]:
    """(errors, body) of a recorded stream; body is a :class:`RecordError` when nothing could be assembled.

    ``line`` is the ``--pairs`` line holding the stream: errors then name that line and the stream's
    own line in the field; otherwise they name the stream line itself.
    """
    events, bad = parse_events(text, name)

    def at(stream_line: int, field: str, message: str) -> RecordError:
        if line is None:
            return RecordError(name, stream_line, field, message)
        return RecordError(name, line, f"response (stream line {stream_line}).{field}", message)

    errors = [at(e.line, e.field, e.message) for e in bad]
    if not events:
        return errors, at(1, "(stream)", "no events with JSON data in this stream")
    skipped: list[StreamError] = []
    body = provider.assemble(events, skipped)
    errors += [at(e.event.line, f"event {e.event.name or '(data)'}.{e.field}", e.message) for e in skipped]
    errors.sort(key=lambda e: e.line)
    return errors, body


def read_bodies(path: str | Path, provider: Provider) -> list[tuple[int, list[RecordError], Any]]:
    """``(position, errors, body)`` for every response in a file: one stream, or JSON/JSON-lines bodies.

    A stream is one body (position 1): its bad events are reported and the rest assembled.
    """
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # (a JSON body is decoded record by record below, by the log rules)
        if looks_like_stream(data.decode("utf-8", "replace")):
            line = data.count(b"\n", 0, exc.start) + 1
            return [(1, [], RecordError(str(path), line, "(encoding)",
                                        f"not UTF-8 text at byte {exc.start} ({exc.reason}); nothing of the stream "
                                        "is imported"))]
        return [(pos, [], body) for pos, body in read_records(path)]
    if looks_like_stream(text):
        errors, body = stream_body(text, str(path), provider)
        return [(1, errors, body)]
    return [(pos, [], body) for pos, body in read_records(path)]


def import_files(provider: Provider, response_path, request_path=None) -> Iterator[Answer | RecordError]:
    """Convert each response (with its request, paired by position, when a request file is given)."""
    responses = read_bodies(response_path, provider)
    requests: list[tuple[int, Any]] = list(read_records(request_path)) if request_path else []
    if request_path and len(responses) != len(requests):
        yield RecordError(str(response_path), 0, "(file)",
                          f"{len(responses)} response(s) for {len(requests)} request(s); pairing by position")
    for n, (pos, errors, body) in enumerate(responses):
        yield from errors
        req_pos, req = requests[n] if n < len(requests) else (0, None)
        if request_path and n >= len(requests):
            continue
        if isinstance(body, RecordError):
            yield body
            continue
        if isinstance(req, RecordError):
            yield req
            continue
        try:
            yield provider.convert(req, body, pos)
        except FieldError as exc:
            if request_path and exc.field.startswith("request"):
                yield RecordError(str(request_path), req_pos, exc.field, exc.message)
            else:
                yield RecordError(str(response_path), pos, exc.field, exc.message)


def import_pairs(provider: Provider, path) -> Iterator[Answer | RecordError]:
    """``--pairs``: one ``{"request": ..., "response": ...}`` object a line (the response may be a
    recorded stream, as a string); a bad line is reported by its number and the others go on."""
    name = str(path)
    for line, record in read_records(path):
        if isinstance(record, RecordError):
            yield record
            continue
        if not isinstance(record, dict) or "response" not in record:
            yield RecordError(name, line, "response", 'is required: each line is {"request": ..., "response": ...}')
            continue
        body = record["response"]
        if isinstance(body, str):
            errors, body = stream_body(body, name, provider, line)
            yield from errors
            if isinstance(body, RecordError):
                yield body
                continue
        try:
            yield provider.convert(record.get("request"), body, line)
        except FieldError as exc:
            yield RecordError(name, line, exc.field, exc.message)


def run(provider: Provider, args) -> Iterator[Answer | RecordError]:
    """The ``citecheck import PROVIDER`` modes: ``--pairs`` or ``--response [--request]``."""
    if args.pairs:
        if args.response or args.request:
            raise FieldError("--pairs", "give --pairs alone, or --response (with --request), not both")
        return import_pairs(provider, args.pairs)
    if not args.response:
        raise FieldError("--response", f"is required (the {provider.name} response body or recorded stream), "
                                       "or give --pairs FILE.jsonl")
    return import_files(provider, args.response, args.request)


def add_exchange_options(p, request_help: str) -> None:
    p.add_argument("--response", help="the response body as JSON (or JSON lines), or a recorded SSE stream")
    p.add_argument("--request", help=request_help)
    p.add_argument("--pairs", help='JSON lines, one {"request": ..., "response": ...} exchange a line')
