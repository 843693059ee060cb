"""``citecheck import otel``: OTLP JSON trace files (OpenInference or OTel GenAI attributes) to answers.

A trace may span several files (as a file exporter rotates them) and its spans may come in any
order, so a request is made into its answer (:mod:`citecheck.importers.traces`) only once no
record still to come holds a span of its trace.  Files of one export a line (what the SDKs' and
the collector's file exporters write) are read twice, as streams: first for the trace ids of each
line (a light decode that skips everything else), then for the spans, each trace's answer written
once its last line has been read and every trace that began before it has been, so memory holds
only the traces under way and the output is what reading every span first gives.  A file in any
other shape (a JSON list, one object) is read whole, as are the other trace formats.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from citecheck.contract.log import Answer
from citecheck.errors import CitecheckError, RecordError
from citecheck.importers.otlp_json import trace_ids
from citecheck.importers.spans import Span, export_lines, is_export_lines, read_otlp, record_spans
from citecheck.importers.traces import TraceSummary, answers, request_answers, trace_requests

ReadSpans = Callable[[str], Iterable[Span | RecordError]]


def import_spans(paths: list[str], read: ReadSpans, fmt: str, summary: TraceSummary,
                 skip_without_retrieval: bool = False, streams: bool = False) -> Iterator[Answer | RecordError]:
    """One answer per request, and an error for every unreadable record (each naming its file, line
    and field).  ``streams``: ``paths`` are OTLP JSON files, read as streams (:func:`streamed`)
    when each is one export a line; otherwise every record is read first, its errors given first."""
    enabled = gc.isenabled()
    gc.disable()  # (each collection would walk every span held; spans and answers hold no reference cycles)
    try:
        if streams and all(is_export_lines(path) for path in paths):
            yield from streamed(paths, fmt, summary, skip_without_retrieval)
            return
        spans: list[Span] = []
        for path in paths:
            for item in read(path):
                if isinstance(item, RecordError):
                    summary.unreadable += 1
                    yield item
                else:
                    spans.append(item)
        yield from answers(spans, fmt, summary, skip_without_retrieval)
    finally:
        if enabled:
            gc.enable()


def last_lines(paths: list[str]) -> dict[str, int]:
    """For each trace, the index (counted over every file's non-blank lines, in order) of the last
    line that may hold a span of it: by :func:`trace_ids`, else by reading the line's spans."""
    last: dict[str, int] = {}
    index = 0
    for path in paths:
        for position, raw in export_lines(path):
            ids = trace_ids(raw)
            if ids is None:
                ids = [item.trace_id for item in record_spans(path, position, raw) if isinstance(item, Span)]
            for trace in ids:
                last[trace] = index
            index += 1
    return last


def streamed(paths: list[str], fmt: str, summary: TraceSummary, skip_without_retrieval: bool = False
             ) -> Iterator[Answer | RecordError]:
    """The answers of files of one export a line, as :func:`citecheck.importers.traces.answers` gives
    them of all their spans (trace by trace, in the order traces first appear), each as soon as
    its trace and every trace before it are complete; a line's errors as it is read."""
    last = last_lines(paths)
    waiting: OrderedDict[str, dict[str, Span]] = OrderedDict()  # trace -> its spans by id, as they came
    index = 0
    for path in paths:
        for position, raw in export_lines(path):
            for item in record_spans(path, position, raw):
                if isinstance(item, RecordError):
                    summary.unreadable += 1
                    yield item
                else:
                    waiting.setdefault(item.trace_id, {})[item.span_id] = item  # (a span sent twice: the later one)
            while waiting:
                trace = next(iter(waiting))
                if last.get(trace, sys.maxsize) > index:
                    break
                del last[trace]
                yield from request_answers(trace_requests(trace, waiting.pop(trace), summary), fmt, summary,
                                           skip_without_retrieval)
            index += 1
    for trace, members in waiting.items():  # (a span whose trace the first reading missed: none should be)
        yield from request_answers(trace_requests(trace, members, summary), fmt, summary, skip_without_retrieval)


_PACKED = {b"\x1f\x8b": ("gzip-compressed", "gunzip -k"), b"\x28\xb5\x2f\xfd": ("zstd-compressed", "unzstd"),
           b"PK\x03\x04": ("a zip archive", "unzip")}


def packed(path: str, name: str) -> str | None:
    """What is wrong with a trace file that is not text at all, said once (each of its lines was
    an "not UTF-8" error of its own): compressed (gunzip it first) or, for OTLP, protobuf (the
    receiver reads that); None for a file that may be what ``name`` reads."""
    with open(path, "rb") as handle:
        head = handle.read(4096)
    for magic, (what, undo) in _PACKED.items():
        if head.startswith(magic):
            return f"the file is {what}: {undo} it first, then import what it holds"
    if name == "phoenix" and head.startswith(b"PAR1"):
        return None  # (a spans dataframe saved as Parquet)
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text or text[:1] in (b"{", b"["):
        return None
    try:
        text.decode("utf-8")
        binary = b"\x00" in text
    except UnicodeDecodeError as exc:
        binary = exc.start < len(text) - 3  # (not a character cut at the end of the bytes read)
    if not binary:
        return None
    if name == "otel":
        return ("the file is not JSON text (OTLP protobuf?): `import otel` reads OTLP JSON, as the OTLP file "
                "exporter and the collector's file exporter write it; send protobuf exports to `citecheck collect`")
    return f"the file is not JSON text: `import {name}` reads a JSON export"


def add_trace_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, name: str, help_text: str,
                     input_help: str, read: ReadSpans, streams: bool = False) -> argparse.ArgumentParser:
    """The ``citecheck import NAME FILE...`` command of a trace format read by ``read``
    (``streams``: OTLP JSON files, see :func:`import_spans`)."""
    parser = sub.add_parser(name, parents=[common], help=help_text)
    parser.add_argument("inputs", nargs="+", metavar="FILE", help=input_help)
    parser.add_argument("--skip-without-retrieval", action="store_true",
                        help="leave out requests that retrieved nothing (by default they are imported, with a note)")

    def importer(args: argparse.Namespace) -> Iterator[Answer | RecordError]:
        for path in args.inputs:  # all of them before any is read: a trace may span them
            if not Path(path).is_file():
                what = "is a folder" if Path(path).is_dir() else "does not exist"
                raise CitecheckError(f"{path} {what}: give the {name} export file(s) ({input_help})")
            problem = packed(path, name)
            if problem:
                raise CitecheckError(f"{path}: {problem}")
        summary = TraceSummary()
        args.summary = summary.lines
        return import_spans(args.inputs, read, name, summary, args.skip_without_retrieval, streams)

    parser.set_defaults(importer=importer)
    return parser


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    add_trace_parser(sub, common, "otel", "OpenTelemetry traces (OTLP JSON) with OpenInference or GenAI attributes",
                     "OTLP JSON files: ExportTraceServiceRequest objects, one per line or a JSON list",
                     read_otlp, streams=True)
