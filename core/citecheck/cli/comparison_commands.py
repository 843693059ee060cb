"""``citecheck compare-judges``: two judges (or two prompt versions) on the same labelled items,
with paired intervals, McNemar's test, the items where they differ and a one-line verdict
(docs/judge.md#comparing-two-judges)."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from citecheck.cli.common import load_checked, overlap
from citecheck.config import add_option
from citecheck.storage.streams import describe, require


def cmd_compare_judges(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.judging import verdicts as verdict_store
    from citecheck.judging.comparison import ComparisonError, compare, parse_run
    from citecheck.labelling import labels

    a, b = parse_run(args.a), parse_run(args.b)
    require(args.labels, labels.STREAM)
    events, warnings = labels.read_events(args.labels)
    records, adjudicated = labels.effective(events), labels.adjudications(events)
    verdicts, more = verdict_store.read(args.verdicts)
    for w in warnings + more:
        err.write(f"warning: {w}\n")
    if not verdicts:
        raise ComparisonError(f"no verdicts in {describe(args.verdicts)}; run citecheck judge first")
    fingerprints = None
    if args.log:  # only the labels of these logs' items count, and stale labels are dropped
        data = load_checked(args.log, args.corpus, err)
        fingerprints = {i.key: i.fingerprint for i in data.all_items}
        mine = labels.matching(records, adjudicated, fingerprints.keys(), describe(args.labels), args.log)
        if note := mine.note(len(records)):
            err.write(f"note: {note}\n")
        records, adjudicated = mine.labels, mine.adjudicated
    result = compare(records, verdicts, a, b, args.split, fingerprints, adjudicated=adjudicated, overlap=args.overlap)
    if args.format == "json":
        out.write(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        out.write(result.to_text())
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    cmp = sub.add_parser("compare-judges", help="two judges or prompt versions on the same labelled items, "
                                                "with paired intervals and a verdict")
    add_option(cmp, "labels", required=True)
    add_option(cmp, "verdicts", required=True)
    cmp.add_argument("--a", required=True, metavar="JUDGE@PROMPT", help="the run compared against (split at the last @)")
    cmp.add_argument("--b", required=True, metavar="JUDGE@PROMPT", help="the run compared with it: differences are B - A")
    cmp.add_argument("--split", choices=["all", "dev", "test"], default="all")
    add_option(cmp, "log", purpose="drop labels whose item changed since")
    add_option(cmp, "corpus")
    cmp.add_argument("--format", choices=["text", "json"], default="text")
    add_option(cmp, "overlap", type=overlap, fallback=1, purpose="the majority of at least K labels settles an item "
                                                                    "(default 1)")
    cmp.set_defaults(func=cmd_compare_judges)
