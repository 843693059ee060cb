"""``citecheck check`` and ``citecheck report``: the mechanical check of logs and its figures."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from ..checking.checker import DEFAULT_REFUSAL, CheckOptions
from ..checking.options import check_files, check_options
from ..contract.errors import RecordError
from ..reports.check_report import (
    Summary,
    answer_record,
    answer_text,
    error_record,
    summary_record,
    summary_text,
)
from .common import EXIT_GATE, EXIT_UNREADABLE, EXIT_USAGE, json_line, rate


def _check_options(args: argparse.Namespace, err: TextIO) -> CheckOptions | None:
    """The checker's options from ``check``/``report`` arguments; None (said on ``err``) when a log is missing."""
    for path in args.logs:
        if not Path(path).is_file():
            err.write(f"citecheck {args.command}: {path}: no such file\n")
            return None
    return check_options(args.corpus, args.casefold, args.refusal or ())


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    options = _check_options(args, err)
    if options is None:
        return EXIT_USAGE
    summary = Summary()
    as_json = args.format == "json"
    for file, line, item in check_files(args.logs, options):
        if isinstance(item, RecordError):
            summary.add_error(item)
            if as_json:
                json_line(error_record(item), out)
            err.write(f"unreadable: {item}\n")
            continue
        summary.add(item)
        if as_json:
            json_line(answer_record(item, file, line), out)
        elif not args.quiet or not item.ok:
            out.write("\n".join(answer_text(item, file, line)) + "\n")
    if as_json:
        json_line(summary_record(summary), out)
    else:
        out.write("\n".join(summary_text(summary)) + "\n")
    code = 0
    failure_rate = summary.failure_rate
    if args.max_failure_rate is not None and failure_rate is not None and failure_rate > args.max_failure_rate:
        err.write(f"citation failure rate {failure_rate:.4f} is above --max-failure-rate {args.max_failure_rate}\n")
        code |= EXIT_GATE
    if summary.unreadable_lines:
        err.write(f"{summary.unreadable_lines} unreadable line(s); see above\n")
        code |= EXIT_UNREADABLE
    return code


def cmd_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..reports import failures as overview
    from ..reports import figures
    from ..reports.golden import read_golden
    from ..review import labels

    options = _check_options(args, err)
    if options is None:
        return EXIT_USAGE
    golden = None
    if args.golden:
        golden, golden_errors = read_golden(args.golden)
        for e in golden_errors:
            err.write(f"golden set: skipped {e}\n")
    current = None
    if args.labels:
        records, warnings = labels.read(args.labels)
        for w in warnings:
            err.write(f"warning: {w}\n")
        current = labels.latest(records)
    unreadable = 0
    runs: list[tuple[str, str, list[str]]] = []

    def checked():
        nonlocal unreadable
        for file, line, item in check_files(args.logs, options):
            if isinstance(item, RecordError):
                unreadable += 1
                err.write(f"unreadable: {item}\n")
                continue
            if golden is not None:
                runs.append(figures.retrieval_run(item))
            yield file, line, item

    table = figures.answer_table(checked(), current)
    report = overview.build(table, golden, runs, args.k, unreadable)
    if args.format == "json":
        out.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
    elif args.format == "csv":
        out.write(report.to_csv())
    else:
        out.write(report.to_text())
    return EXIT_UNREADABLE if unreadable else 0


def register(sub: argparse._SubParsersAction) -> None:
    check = sub.add_parser("check", help="check every citation in one or more answer logs")
    check.add_argument("logs", nargs="+", help="answer log files (JSON lines, format version 1)")
    check.add_argument("--corpus", help="folder of the current source documents, to detect source_changed")
    check.add_argument("--format", choices=["text", "json"], default="text")
    check.add_argument("--max-failure-rate", type=rate, metavar="R",
                       help="exit 1 when the share of failed citations is above R (0..1)")
    check.add_argument("--casefold", action="store_true", help="compare quotes case-insensitively")
    check.add_argument("--refusal", action="append", metavar="SENTENCE",
                       help=f"the exact refusal sentence (repeatable; default {DEFAULT_REFUSAL!r})")
    check.add_argument("--quiet", action="store_true", help="text format: list only answers with problems")
    check.set_defaults(func=cmd_check)

    rep = sub.add_parser("report", help="failure rates, reasons and breakdowns by model, prompt version and week")
    rep.add_argument("logs", nargs="+", help="answer log files (JSON lines, format version 1)")
    rep.add_argument("--golden", help="golden set (JSON lines) for over/under-refusal and retrieval hit rate")
    rep.add_argument("--labels", help="labels file, for the share of citations reviewers judged not supported")
    rep.add_argument("--corpus", help="folder of the current source documents, to detect source_changed")
    rep.add_argument("--k", type=int, default=5, help="k for hit rate at k (default 5)")
    rep.add_argument("--format", choices=["text", "json", "csv"], default="text")
    rep.add_argument("--casefold", action="store_true", help="compare quotes case-insensitively")
    rep.add_argument("--refusal", action="append", metavar="SENTENCE",
                     help=f"the exact refusal sentence (repeatable; default {DEFAULT_REFUSAL!r})")
    rep.set_defaults(func=cmd_report)
