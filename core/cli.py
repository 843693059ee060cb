"""The ``citecheck`` command line.

Exit codes: 0 all good; 1 the ``--max-failure-rate`` gate failed; 2 bad usage or a file that
cannot be opened; 4 some records were unreadable (added to 1 when both happen, giving 5).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

from . import __version__
from .checker import DEFAULT_REFUSAL, CheckOptions, check_files
from .corpus import Corpus
from .errors import CitecheckError, RecordError
from .log import dumps
from .report import Summary, answer_record, answer_text, error_record, summary_record, summary_text

EXIT_GATE = 1
EXIT_USAGE = 2
EXIT_UNREADABLE = 4


def _json_line(obj: dict, out: TextIO) -> None:
    out.write(json.dumps(obj, ensure_ascii=False))
    out.write("\n")


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    for path in args.logs:
        if not Path(path).is_file():
            err.write(f"citecheck check: {path}: no such file\n")
            return EXIT_USAGE
    corpus = Corpus(args.corpus) if args.corpus else None
    options = CheckOptions(casefold=args.casefold, refusals=tuple(args.refusal or [DEFAULT_REFUSAL]), corpus=corpus)
    summary = Summary()
    as_json = args.format == "json"
    for file, line, item in check_files(args.logs, options):
        if isinstance(item, RecordError):
            summary.add_error(item)
            if as_json:
                _json_line(error_record(item), out)
            err.write(f"unreadable: {item}\n")
            continue
        summary.add(item)
        if as_json:
            _json_line(answer_record(item, file, line), out)
        elif not args.quiet or not item.ok:
            out.write("\n".join(answer_text(item, file, line)) + "\n")
    if as_json:
        _json_line(summary_record(summary), out)
    else:
        out.write("\n".join(summary_text(summary)) + "\n")
    code = 0
    rate = summary.failure_rate
    if args.max_failure_rate is not None and rate is not None and rate > args.max_failure_rate:
        err.write(f"citation failure rate {rate:.4f} is above --max-failure-rate {args.max_failure_rate}\n")
        code |= EXIT_GATE
    if summary.unreadable_lines:
        err.write(f"{summary.unreadable_lines} unreadable line(s); see above\n")
        code |= EXIT_UNREADABLE
    return code


def cmd_import(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .importers import run_importer

    target: TextIO = open(args.out, "w", encoding="utf-8", newline="\n") if args.out else out
    written = errors = 0
    try:
        for item in run_importer(args):
            if isinstance(item, RecordError):
                errors += 1
                err.write(f"skipped: {item}\n")
            else:
                target.write(dumps(item) + "\n")
                written += 1
    finally:
        if args.out:
            target.close()
    err.write(f"imported {written} answer(s)" + (f", skipped {errors} malformed record(s)" if errors else "") + "\n")
    return EXIT_UNREADABLE if errors else 0


def cmd_labels_export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from . import dataset, export, labels

    records, warnings = labels.read(args.labels)
    for w in warnings:
        err.write(f"warning: {w}\n")
    data = dataset.load([Path(p) for p in args.log], Path(args.corpus) if args.corpus else None)
    for e in data.errors:
        err.write(f"unreadable: {e}\n")
    text = (export.to_csv if args.format == "csv" else export.to_jsonl)(export.rows(data, records))
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        out.write(text)
    return EXIT_UNREADABLE if data.errors else 0


def cmd_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from . import figures, labels, overview
    from .golden import read_golden

    for path in args.logs:
        if not Path(path).is_file():
            err.write(f"citecheck report: {path}: no such file\n")
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
    corpus = Corpus(args.corpus) if args.corpus else None
    options = CheckOptions(casefold=args.casefold, refusals=tuple(args.refusal or [DEFAULT_REFUSAL]), corpus=corpus)
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


def _rate(value: str) -> float:
    rate = float(value)
    if not 0 <= rate <= 1:
        raise argparse.ArgumentTypeError("give a share between 0 and 1, for example 0.05")
    return rate


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citecheck", description="Check RAG answers against their sources.")
    parser.add_argument("--version", action="version", version=f"citecheck {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="check every citation in one or more answer logs")
    check.add_argument("logs", nargs="+", help="answer log files (JSON lines, format version 1)")
    check.add_argument("--corpus", help="folder of the current source documents, to detect source_changed")
    check.add_argument("--format", choices=["text", "json"], default="text")
    check.add_argument("--max-failure-rate", type=_rate, metavar="R",
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

    from .importers import add_import_parsers

    imp = sub.add_parser("import", help="turn other formats into citecheck log lines")
    add_import_parsers(imp.add_subparsers(dest="format", required=True))
    imp.set_defaults(func=cmd_import)
    lab = sub.add_parser("labels", help="work with a labels file")
    lab_sub = lab.add_subparsers(dest="labels_command", required=True)
    exp = lab_sub.add_parser("export", help="write the calibration set: one row per labelled item")
    exp.add_argument("labels", help="the labels file (JSON lines)")
    exp.add_argument("--log", action="append", required=True, help="answer log(s) the labels refer to")
    exp.add_argument("--corpus", help="folder of current source documents")
    exp.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    exp.add_argument("--out", help="write here instead of standard output")
    exp.set_defaults(func=cmd_labels_export)
    return parser


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        return args.func(args, out, err)
    except (CitecheckError, OSError) as exc:
        err.write(f"citecheck {args.command}: {exc}\n")
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
