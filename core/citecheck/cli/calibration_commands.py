"""``citecheck calibrate``: how far a judge's verdicts agree with the human labels."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from citecheck.cli.common import EXIT_USAGE, load_checked, overlap
from citecheck.config import add_option
from citecheck.storage.streams import describe, require


def cmd_calibrate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.judging import verdicts as verdict_store
    from citecheck.judging.calibration import calibrate
    from citecheck.labelling import labels

    require(args.labels, labels.STREAM)
    events, warnings = labels.read_events(args.labels)
    records, adjudicated = labels.effective(events), labels.adjudications(events)
    verdicts, more = verdict_store.read(args.verdicts)
    for w in warnings + more:
        err.write(f"warning: {w}\n")
    runs = verdict_store.runs(verdicts)
    if not runs:
        err.write(f"citecheck calibrate: no verdicts in {describe(args.verdicts)}; run citecheck judge first\n")
        return EXIT_USAGE
    wanted = [r for r in runs if (args.judge is None or r[0] == args.judge)
              and (args.prompt is None or r[1] == args.prompt)]
    if not wanted:
        err.write("citecheck calibrate: no verdicts for that judge/prompt; present: "
                  + ", ".join(f"{j} {p}" for j, p in runs) + "\n")
        return EXIT_USAGE
    fingerprints = None
    if args.log:  # only the labels of these logs' items count; a labels file of other logs is an error
        data = load_checked(args.log, args.corpus, err)
        fingerprints = {i.key: i.fingerprint for i in data.all_items}
        mine = labels.matching(records, adjudicated, fingerprints.keys(), describe(args.labels), args.log)
        if note := mine.note(len(records)):
            err.write(f"note: {note}\n")
        records, adjudicated = mine.labels, mine.adjudicated
    reports = [calibrate(records, verdicts, j, p, args.split, fingerprints, adjudicated=adjudicated,
                         overlap=args.overlap) for j, p in wanted]
    if args.format == "json":
        out.write(json.dumps([r.to_dict() for r in reports] if len(reports) > 1 else reports[0].to_dict(),
                             ensure_ascii=False, indent=2) + "\n")
    else:
        out.write("\n".join(r.to_text() for r in reports))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    cal = sub.add_parser("calibrate", help="agreement of a judge's verdicts with the human labels")
    add_option(cal, "labels", required=True)
    add_option(cal, "verdicts", required=True)
    cal.add_argument("--judge", help="judge name (default: every judge in the file)")
    cal.add_argument("--prompt", help="prompt version (default: every one)")
    cal.add_argument("--split", choices=["all", "dev", "test"], default="all")
    add_option(cal, "log", purpose="drop labels whose item changed since")
    add_option(cal, "corpus")
    cal.add_argument("--format", choices=["text", "json"], default="text")
    add_option(cal, "overlap", type=overlap, fallback=1, purpose="the majority of at least K labels settles an item "
                                                                    "(default 1)")
    cal.set_defaults(func=cmd_calibrate)
