"""``citecheck labels export``: the calibration set, one row per labelled item; ``citecheck labels
copy``: move label events between a file and a database; ``citecheck labels assign``: give reviewers work."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from citecheck.checking.files import check_options
from citecheck.cli import span_commands
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
    misplaced: list[str] = []  # labels whose marked words no longer fit their sentence
    exported = list(export.rows(data, mine.labels, mine.adjudicated, args.overlap, misplaced))
    err.writelines(f"warning: {why}\n" for why in misplaced)
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


def _picked(args: argparse.Namespace, data):
    """The items ``labels assign`` was asked for: a sample, answer ids, or a filter."""
    from citecheck.review import assigning

    if args.sample:
        from citecheck.labelling import sample as samples

        return assigning.from_sample(data, samples.read(args.sample))
    if args.answers:
        return assigning.from_answers(data, assigning.answer_list(args.answers))
    verdicts: dict[str, dict[str, str]] | None = None
    if args.verdict:
        from citecheck.judging import verdicts as verdict_store

        if not args.verdicts:
            raise assigning.WorkError("--verdict needs --verdicts (the verdicts file or database to filter by)")
        records, _ = verdict_store.read(args.verdicts)
        verdicts = {}
        for v in records:
            verdicts.setdefault(v.judge, {})[v.item] = v.verdict
    return assigning.from_filter(data, args.model or "", args.prompt_version or "", args.reason or "",
                                 args.verdict or "", args.since or "", args.until or "", verdicts)


def cmd_labels_assign(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.errors import CitecheckError
    from citecheck.labelling import assignments, dataset, labels
    from citecheck.review import assigning

    data = dataset.load([Path(p) for p in args.log], check_options(args.corpus))
    for e in data.errors:
        err.write(f"unreadable: {e}\n")
    try:
        shares = assignments.parse_shares(args.reviewers)
        picked = _picked(args, data)
        made = assignments.make_assignment(picked.keys, shares, args.lead, picked.source, args.due or "",
                                           args.lock)
    except (CitecheckError, OSError) as exc:
        err.write(f"citecheck labels assign: {exc}\n")
        return EXIT_USAGE
    if note := assigning.not_loaded_note(picked.missing):
        err.write(f"note: {note}\n")
    labels.append_event(args.labels, made)
    out.write(f"assignment {made.assignment}: {made.total:,} item(s) from {made.source}"
              + (f", due {made.due}" if made.due else "") + "\n")
    for who, keys in made.items:
        out.write(f"  {who}: {len(keys):,}\n")
    return 0


def _register_assign(lab_sub) -> None:
    asg = lab_sub.add_parser("assign", help="assign items (a sample, answer ids or a filter) to reviewers",
                             description="Append an assignment event to the labels store: the items of a calibration "
                                         "sample, of answer ids or of a filter, split among the reviewers evenly or "
                                         "by share (docs/labels-format.md, Assignments).")
    add_option(asg, "labels", required=True, purpose="the assignment is appended to it")
    add_option(asg, "log", required=True, purpose="the answers the items are of")
    add_option(asg, "corpus")
    asg.add_argument("--reviewers", required=True, metavar="A,B[:SHARE]",
                     help="reviewers to split the items among, each with an optional share (alice,bob:2)")
    asg.add_argument("--lead", required=True, help="who assigns (recorded in the assignment)")
    which = asg.add_mutually_exclusive_group()
    which.add_argument("--sample", metavar="FILE", help="a calibration sample (citecheck sample): its items, in its order")
    which.add_argument("--answers", metavar="ID,...", help="answer ids: every item of each")
    asg.add_argument("--model", help="filter: answers of this model")
    asg.add_argument("--prompt-version", help="filter: answers of this prompt version")
    asg.add_argument("--reason", help="filter: answers with this reason code (docs/checks.md)")
    asg.add_argument("--verdict", help="filter: items a judge gave this verdict (needs --verdicts)")
    add_option(asg, "verdicts", env=False, purpose="read for --verdict")
    asg.add_argument("--since", metavar="YYYY-MM-DD", help="filter: answers logged on or after this UTC date")
    asg.add_argument("--until", metavar="YYYY-MM-DD", help="filter: answers logged on or before this UTC date")
    asg.add_argument("--due", metavar="YYYY-MM-DD", help="the due date")
    add_option(asg, "lock", purpose="recorded in the assignment (default: the app's setting)", env=False)
    asg.set_defaults(func=cmd_labels_assign)


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
    _register_assign(lab_sub)

    cp = lab_sub.add_parser("copy", help="copy every label event from SRC to DST (file or postgresql:// URL), "
                                         "skipping those already there")
    cp.add_argument("source", metavar="SRC", help="labels file or postgresql:// URL to read")
    cp.add_argument("destination", metavar="DST", help="labels file or postgresql:// URL to append to")
    cp.set_defaults(func=cmd_labels_copy)
    span_commands.register(lab_sub)  # labels agreement (marked spans)
