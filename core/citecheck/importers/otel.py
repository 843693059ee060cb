"""``citecheck import otel``: OTLP JSON trace files (OpenInference or OTel GenAI attributes) to answers.

The spans of every file given are read first (a trace may span several files, as a file exporter
rotates them), then grouped into requests, one answer each (:mod:`citecheck.importers.traces`).
"""

from __future__ import annotations

import argparse
import gc
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from citecheck.contract.log import Answer
from citecheck.errors import CitecheckError, RecordError
from citecheck.importers.spans import Span, read_otlp
from citecheck.importers.traces import TraceSummary, answers

ReadSpans = Callable[[str], Iterable[Span | RecordError]]


def import_spans(paths: list[str], read: ReadSpans, fmt: str, summary: TraceSummary,
                 skip_without_retrieval: bool = False) -> Iterator[Answer | RecordError]:
    """Every unreadable record first (each naming its file, line and field), then one answer per request."""
    spans: list[Span] = []
    enabled = gc.isenabled()
    gc.disable()  # (each collection would walk every span read so far; spans and answers hold no reference cycles)
    try:
        for path in paths:
            for item in read(path):
                if isinstance(item, RecordError):
                    yield item
                else:
                    spans.append(item)
        yield from answers(spans, fmt, summary, skip_without_retrieval)
    finally:
        if enabled:
            gc.enable()


def add_trace_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, name: str, help_text: str,
                     input_help: str, read: ReadSpans) -> argparse.ArgumentParser:
    """The ``citecheck import NAME FILE...`` command of a trace format read by ``read``."""
    parser = sub.add_parser(name, parents=[common], help=help_text)
    parser.add_argument("inputs", nargs="+", metavar="FILE", help=input_help)
    parser.add_argument("--skip-without-retrieval", action="store_true",
                        help="leave out requests that retrieved nothing (by default they are imported, with a note)")

    def importer(args: argparse.Namespace) -> Iterator[Answer | RecordError]:
        for path in args.inputs:  # all of them before any is read: a trace may span them
            if not Path(path).is_file():
                what = "is a folder" if Path(path).is_dir() else "does not exist"
                raise CitecheckError(f"{path} {what}: give the {name} export file(s) ({input_help})")
        summary = TraceSummary()
        args.summary = summary.lines
        return import_spans(args.inputs, read, name, summary, args.skip_without_retrieval)

    parser.set_defaults(importer=importer)
    return parser


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    add_trace_parser(sub, common, "otel", "OpenTelemetry traces (OTLP JSON) with OpenInference or GenAI attributes",
                     "OTLP JSON files: ExportTraceServiceRequest objects, one per line or a JSON list",
                     lambda path: read_otlp(path))
