"""``citecheck labels agreement``: how far reviewers marked the same words as not supported (the
overlap F1 of the characters in labels' ``spans``, per pair of reviewers and pooled, with n)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from citecheck.checking.files import check_options
from citecheck.cli.common import EXIT_UNREADABLE
from citecheck.config import add_option, add_positional
from citecheck.storage.streams import require


def cmd_labels_agreement(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.labelling import dataset, labels, span_agreement

    require(args.labels, labels.STREAM)
    events, warnings = labels.read_events(args.labels)
    for w in warnings:
        err.write(f"warning: {w}\n")
    fingerprints = None
    unreadable = bool(warnings)
    counted = labels.effective(events)
    if args.log:  # with the answers, labels of items that changed since are left out
        data = dataset.load([Path(p) for p in args.log], check_options(args.corpus))
        for e in data.errors:
            err.write(f"unreadable: {e}\n")
        unreadable = unreadable or bool(data.errors)
        fingerprints = {i.key: i.fingerprint for i in data.all_items}
        counted = _fitting(data, counted, err)
    result = span_agreement.span_agreement(counted, fingerprints)
    if args.format == "json":
        out.write(json.dumps(span_agreement.to_dict(result)) + "\n")
    else:
        out.write("".join(line + "\n" for line in span_agreement.agreement_lines(result)))
    return EXIT_UNREADABLE if unreadable else 0


def _fitting(data, records: list, err: TextIO) -> list:
    """The labels whose marked spans fit their item's sentence in the log (a label of an item the
    log does not hold is kept: it is stale, or not in these logs, and left out by its fingerprint)."""
    from citecheck.labelling import marked_spans

    where = {item.key: ((result.sentences[item.sentence].start, result.sentences[item.sentence].end),
                        len(result.answer.answer))
             for result, items in zip(data.results, data.items_by_answer) for item in items}
    kept = []
    for label in records:
        place = where.get(label.item)
        why = marked_spans.outside(label.spans, *place) if place is not None and label.spans else None
        if why is None:
            kept.append(label)
        else:
            err.write(f"warning: {label.reviewer}'s label of {label.item} (at {label.at}): {why}; left out "
                      "(the answer changed since the words were marked)\n")
    return kept


def register(lab_sub: argparse._SubParsersAction) -> None:
    """``labels agreement``, under ``citecheck labels``."""
    agr = lab_sub.add_parser("agreement", help="how far reviewers marked the same words as not supported "
                                               "(overlap F1 per pair of reviewers, with n)")
    add_positional(agr, "labels", "labels")
    add_option(agr, "log", purpose="the answers the labels refer to: labels of items changed since are left out")
    add_option(agr, "corpus")
    agr.add_argument("--format", choices=["text", "json"], default="text")
    agr.set_defaults(func=cmd_labels_agreement)
