"""``citecheck check --store`` and ``citecheck report --store``: checking logs into the checked store
(docs/store-format.md) and reporting from it with DuckDB."""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING, TextIO

from citecheck.cli.common import (
    EXIT_DAMAGED,
    EXIT_UNREADABLE,
    EXIT_USAGE,
    finish_check,
    json_line,
    read_current_labels,
    read_golden_set,
    write_overview,
)
from citecheck.config import add_option, given
from citecheck.errors import StoreError
from citecheck.reports.check_report import error_record
from citecheck.reports.inputs import Inputs, store_corpus

if TYPE_CHECKING:
    from citecheck.storage.checked.folder import Store


def add_check_options(check: argparse.ArgumentParser) -> None:
    check.add_argument("--store", metavar="DIR",
                       help="write the results to the checked store DIR (Parquet); only changed lines are checked")
    check.add_argument("--engine", choices=["local", "dask"], default="local",
                       help="with --store: check in this process (local) or on a Dask cluster (dask)")
    check.add_argument("--scheduler", metavar="ADDRESS",
                       help="with --engine dask: the scheduler to use (default: a LocalCluster on this machine)")
    check.add_argument("--workers", type=int, default=2, metavar="N",
                       help="with --engine dask and no --scheduler: LocalCluster worker processes (default 2)")
    check.add_argument("--search-index", action="store_true",
                       help="with --store: then build the store's search index for the review page "
                            "(as citecheck store index DIR does)")


def add_report_options(rep: argparse.ArgumentParser) -> None:
    add_option(rep, "store", purpose="report from it (all its logs, or only the LOGs given)")


def cmd_check_store(args: argparse.Namespace, options, out: TextIO, err: TextIO) -> int:
    from citecheck.storage.checked.folder import Store
    from citecheck.storage.checked.index import save_index, worth_saving

    store = Store(args.store, create=True)  # (a folder that is no store: a StoreError, said by main)
    if args.scheduler and args.engine != "dask":
        err.write("citecheck check: --scheduler needs --engine dask\n")
        return EXIT_USAGE
    with store.locked():  # one check into a store at a time
        if args.engine == "dask":
            from citecheck.storage.checked.cluster import check_on_dask

            runs = check_on_dask(store, args.logs, options, scheduler=args.scheduler, workers=args.workers)
        else:
            from citecheck.storage.checked.batch import spare_pandas

            if not args.search_index:  # (the search index is made with pandas: then it is needed anyway)
                spare_pandas()  # (0.12 s of a small check: below; saving the index of a store of SAVE_FROM
                # lines or more reads Parquet through pyarrow.dataset, which loads pandas anyway)
            runs = [store.check_log(path, options) for path in args.logs]
        if worth_saving(store) and save_index(store) is None:  # (the review page's index: a fresh page need not make it)
            err.write(f"note: the review page's index could not be saved in {store.root}; the page makes it "
                      "when it opens (slower at a million answers)\n")
    as_json = args.format == "json"
    for run in runs:
        if not as_json:
            out.write(f"{run.file}: {run.lines} line(s), {run.checked} checked, {run.kept} unchanged\n")
    sources = [store.source_of(p) for p in args.logs]
    summary = store.summary(sources)  # (pyarrow over the parts: DuckDB is not started for a check)
    for e in store.unreadable(sources):
        if as_json:
            json_line(error_record(e), out)
        err.write(f"unreadable: {e}\n")
    if args.search_index:
        err.write(build_index(store, err) + "\n")
    return finish_check(summary, args, as_json, out, err)


def cmd_report_store(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.storage.checked.folder import Store
    from citecheck.storage.checked.query import StoreQuery

    if any(given(args, name) for name in ("corpus", "casefold", "refusal")):  # (their variables, set for the app, do not count)
        err.write("citecheck report: --corpus, --casefold and --refusal are set when checking into the store "
                  "(citecheck check LOG... --store DIR); give them there\n")
        return EXIT_USAGE
    store = Store(args.store)
    sources = None
    if args.logs:
        sources = [store.source_of(p) for p in args.logs]
        for path, source in zip(args.logs, sources):
            if store.log(source) is None:
                err.write(f"citecheck report: {path} is not in the store {args.store}; "
                          f"check it first: citecheck check {path} --store {args.store}\n")
                return EXIT_USAGE
    golden = read_golden_set(args.golden, err)
    query = StoreQuery(store, sources)
    unreadable = query.unreadable()
    for e in unreadable:
        err.write(f"unreadable: {e}\n")
    current = read_current_labels(args.labels, err, given(args, "labels"))
    if current is not None:
        for w in query.use_labels(current):
            err.write(f"warning: {w}\n")
    report = query.overview(golden, args.k)
    failing = query.failing() if args.format == "failing-csv" else None
    query.close()
    logs = [entry for entry in store.logs if sources is None or entry["source"] in sources]
    inputs = Inputs.of(len(report.table), len(unreadable), store=args.store,
                       logs=[store.log_file(entry["source"]) for entry in logs], corpus=store_corpus(logs),
                       golden=args.golden or None, labels=args.labels or None)
    write_overview(dataclasses.replace(report, inputs=inputs), args.format, out, lambda: failing)
    return EXIT_UNREADABLE if unreadable else 0


def cmd_store_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``citecheck store verify DIR``: every listed part there and readable to its last row, each
    log's rows against its line count, and whether each log changed since it was checked."""
    from citecheck.storage.checked import schema as store_schema
    from citecheck.storage.checked.folder import Store, log_size

    store = Store(args.dir)
    found = store.damage(deep=True)
    for d in found:
        out.write(f"damaged: {d.file}: {d.problem} (log {d.log})\n")
    for entry in store.logs:
        try:
            now = log_size(store.log_file(entry["source"]))
        except (StoreError, OSError) as exc:
            out.write(f"log: {exc}\n")
            continue
        if now != entry.get("size"):
            out.write(f"changed: {entry['file']} is {now:,} bytes, {entry.get('size', 0):,} when it was checked; "
                      f"check it again: citecheck check {entry['file']} --store {args.dir}\n")
    for path in store.unlisted():
        out.write(f"not listed: {path} (left by a check that stopped; never read, removed by the next check "
                  "of its log)\n")
    listed = sum(len(e["parts"]) for e in store.logs) * len(store_schema.TABLES)
    out.write(f"{len(store.logs)} log(s), {listed} part file(s) listed: "
              + ("sound\n" if not found else f"{len(found)} damaged\n"))
    if found:
        err.write(f"citecheck store verify: {store.damaged(found)}\n")
        return EXIT_DAMAGED
    return 0


def build_index(store: Store, err: TextIO) -> str:
    """Bring the store's search index up to date, saying what it does on ``err``; the line that says
    what was done, how long it took and how large the index is."""
    import time

    from citecheck.storage.checked import search_index

    found = store.damage()
    if found:
        raise store.damaged(found)
    start = time.perf_counter()

    def say(line: str) -> None:
        err.write(line + "\n")
        err.flush()

    made = search_index.ensure(store, say)
    took = time.perf_counter() - start
    where = search_index.index_root(store)
    size = search_index.size(store) / 2**20
    if made:
        return f"search index: {len(made)} of {len(store.logs)} log(s) indexed in {took:.1f} s; {where} holds {size:,.1f} MB"
    return f"search index: up to date, nothing to build ({len(store.logs)} log(s); {where} holds {size:,.1f} MB)"


def cmd_store_index(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``citecheck store index DIR``: build the search index of every log of the store whose index is
    missing or out of date (the review page's search reads it)."""
    from citecheck.storage.checked.folder import Store

    store = Store(args.dir)
    out.write(build_index(store, err) + "\n")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    group = sub.add_parser("store", help="work with a checked store")
    store_sub = group.add_subparsers(dest="store_command", required=True)
    verify = store_sub.add_parser("verify", help="check that every part of a checked store is there and readable")
    verify.add_argument("dir", metavar="DIR", help="the checked store folder")
    verify.set_defaults(func=cmd_store_verify)
    index = store_sub.add_parser("index", help="build the search index of a checked store (the review page's search)")
    index.add_argument("dir", metavar="DIR", help="the checked store folder")
    index.set_defaults(func=cmd_store_index)
