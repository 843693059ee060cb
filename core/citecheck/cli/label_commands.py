"""``citecheck labels export``: the calibration set, one row per labelled item; ``citecheck labels
copy``: move label events between a file and a database."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from citecheck.checking.files import check_options
from citecheck.cli.common import EXIT_UNREADABLE, EXIT_USAGE, overlap
from citecheck.config import add_option, add_positional
from citecheck.storage.durable import replace_file
from citecheck.storage.streams import describe, require


def cmd_labels_export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.labelling import consensus, dataset, export, labels

    require(args.labels, labels.STREAM)
    events, warnings = labels.read_events(args.labels)
    records, adjudicated = labels.effective(events), labels.adjudications(events)
    for w in warnings:
        err.write(f"warning: {w}\n")
    data = dataset.load([Path(p) for p in args.log], check_options(args.corpus))
    for e in data.errors:
        err.write(f"unreadable: {e}\n")
    mine = labels.matching(records, adjudicated, {i.key for i in data.all_items}, describe(args.labels), args.log)
    if note := mine.note(len(records)):
        err.write(f"note: {note}\n")
    exported = list(export.rows(data, mine.labels, mine.adjudicated, args.overlap))
    counts = dict.fromkeys(consensus.RULES + consensus.LEFT_OUT + ("stale",), 0)
    for row in exported:
        counts[row["human_label_rule"]] += 1
    err.write(f"{len(exported)} labelled item(s); human labels: {consensus.counts_text(counts)}"
              + (f"; {counts['stale']} with only stale labels" if counts["stale"] else "") + "\n")
    text = (export.to_csv if args.format == "csv" else export.to_jsonl)(iter(exported))
    if args.out:
        replace_file(args.out, text, what=f"the export {args.out}")  # the previous export survives a failure
    else:
        out.write(text)
    return EXIT_UNREADABLE if data.errors else 0


def copy_events(stream: str, args: argparse.Namespace, err: TextIO) -> int:
    """``labels copy`` and ``verdicts copy``: idempotent, either direction (file or database)."""
    from citecheck.storage import streams as event_store

    if str(args.source) == str(args.destination):
        err.write(f"citecheck {stream} copy: source and destination are the same\n")
        return EXIT_USAGE
    copied, already, warnings = event_store.copy(args.source, args.destination, stream)
    for w in warnings:
        err.write(f"warning: {w}\n")
    err.write(f"copied {copied} {stream} event(s) from {event_store.describe(args.source)} to "
              f"{event_store.describe(args.destination)}; {already} already there\n")
    return EXIT_UNREADABLE if warnings else 0


def cmd_labels_copy(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    return copy_events("labels", args, err)


def register(sub: argparse._SubParsersAction) -> None:
    lab = sub.add_parser("labels", help="work with a labels file or database")
    lab_sub = lab.add_subparsers(dest="labels_command", required=True)
    exp = lab_sub.add_parser("export", help="write the calibration set: one row per labelled item")
    add_positional(exp, "labels", "labels")
    add_option(exp, "log", required=True, purpose="the answers the labels refer to")
    add_option(exp, "corpus")
    exp.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    exp.add_argument("--out", help="write here instead of standard output")
    add_option(exp, "overlap", type=overlap, fallback=1, purpose="the majority of at least K labels settles an item "
                                                                    "(default 1)")
    exp.set_defaults(func=cmd_labels_export)

    cp = lab_sub.add_parser("copy", help="copy every label event from SRC to DST (file or postgresql:// URL), "
                                         "skipping those already there")
    cp.add_argument("source", metavar="SRC", help="labels file or postgresql:// URL to read")
    cp.add_argument("destination", metavar="DST", help="labels file or postgresql:// URL to append to")
    cp.set_defaults(func=cmd_labels_copy)
