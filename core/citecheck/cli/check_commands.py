"""``citecheck check`` and ``citecheck report``: the mechanical check of logs and its figures."""

from __future__ import annotations

import argparse
import dataclasses
from contextlib import nullcontext
from typing import TextIO

from citecheck.checking.checker import DEFAULT_REFUSAL, CheckOptions
from citecheck.checking.files import check_files, check_options
from citecheck.cli import store_commands as store_cli
from citecheck.cli.common import (
    EXIT_UNREADABLE,
    EXIT_USAGE,
    finish_check,
    json_lines,
    positive,
    rate,
    read_current_labels,
    read_golden_set,
    write_overview,
)
from citecheck.config import add_option, add_positional, given
from citecheck.contract.log import EMPTY_LOG, log_problem
from citecheck.errors import RecordError
from citecheck.reports.check_report import Summary, answer_record, answer_text, error_record
from citecheck.reports.inputs import Inputs


def _check_options(args: argparse.Namespace, err: TextIO) -> CheckOptions | None:
    """The checker's options from ``check``/``report`` arguments; None (said on ``err``) when a log
    is missing or a folder (an empty log is said on ``err`` too)."""
    for path in args.logs:
        if "://" in path and getattr(args, "store", None):
            continue  # a URL for fsspec (Dask's filesystem layer): read by the store's engines
        problem = log_problem(path)
        if problem is not None:
            err.write(f"citecheck {args.command}: {path}: {problem}\n")
            if problem != EMPTY_LOG:  # (an empty log is said, and checked: it has no answers)
                return None
    return check_options(args.corpus, args.casefold, args.refusal or ())


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    options = _check_options(args, err)
    if options is None:
        return EXIT_USAGE
    if args.store:
        return store_cli.cmd_check_store(args, options, out, err)
    if args.search_index:
        err.write("citecheck check: --search-index builds a store's index: give --store DIR\n")
        return EXIT_USAGE
    if args.engine != "local":
        err.write("citecheck check: --engine dask writes a store: give --store DIR\n")
        return EXIT_USAGE
    summary = Summary()
    as_json = args.format == "json"
    with json_lines(out) if as_json else nullcontext(None) as write:
        for file, line, item in check_files(args.logs, options):
            if isinstance(item, RecordError):
                summary.add_error(item)
                if write is not None:
                    write(error_record(item))
                err.write(f"unreadable: {item}\n")
                continue
            summary.add(item)
            if write is not None:
                write(answer_record(item, file, line))
            elif not args.quiet or not item.ok:
                out.write("\n".join(answer_text(item, file, line)) + "\n")
    return finish_check(summary, args, as_json, out, err)


def cmd_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.reports import failures as overview
    from citecheck.reports import figures

    if args.store:
        return store_cli.cmd_report_store(args, out, err)
    if not args.logs:
        err.write("citecheck report: give the answer logs, or --store DIR\n")
        return EXIT_USAGE
    options = _check_options(args, err)
    if options is None:
        return EXIT_USAGE
    golden = read_golden_set(args.golden, err)
    current = read_current_labels(args.labels, err, given(args, "labels"))
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
    inputs = Inputs.of(len(table), unreadable, logs=list(args.logs), corpus=args.corpus or None,
                       golden=args.golden or None, labels=args.labels or None)
    write_overview(dataclasses.replace(report, inputs=inputs), args.format, out, lambda: figures.failing(table))
    return EXIT_UNREADABLE if unreadable else 0


def register(sub: argparse._SubParsersAction) -> None:
    check = sub.add_parser("check", help="check every citation in one or more answer logs")
    add_positional(check, "log", "logs", purpose="JSON lines, format version 1")
    add_option(check, "corpus")
    check.add_argument("--format", choices=["text", "json"], default="text")
    check.add_argument("--max-failure-rate", type=rate, metavar="R",
                       help="exit 1 when the share of failed citations is above R (0..1)")
    add_option(check, "casefold", fallback=False)
    add_option(check, "refusal", purpose=f"default {DEFAULT_REFUSAL!r}")
    check.add_argument("--quiet", action="store_true", help="text format: list only answers with problems")
    store_cli.add_check_options(check)
    check.set_defaults(func=cmd_check)

    rep = sub.add_parser("report", help="failure rates, reasons and breakdowns by model, prompt version and week")
    add_positional(rep, "log", "logs", required=False, purpose="JSON lines, format version 1; or --store DIR")
    add_option(rep, "golden", purpose="over/under-refusal and retrieval hit rate")
    add_option(rep, "labels", purpose="the share of citations reviewers judged not supported")
    add_option(rep, "corpus")
    rep.add_argument("--k", type=positive, default=5, help="k for hit rate at k (default 5)")
    rep.add_argument("--format", choices=["text", "json", "csv", "failing-csv"], default="text",
                     help="csv: every figure as one long table (section,group,figure,count,total,rate); "
                          "failing-csv: the failing answers, worst first, as the Failures page downloads them")
    add_option(rep, "casefold", fallback=False)
    add_option(rep, "refusal", purpose=f"default {DEFAULT_REFUSAL!r}")
    store_cli.add_report_options(rep)
    rep.set_defaults(func=cmd_report)
