"""``citecheck calibrate``: how far a judge's verdicts agree with the human labels, with the
self-consistency of a repeated judge and, with ``--card``, the judge card (docs/judge.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from citecheck.cli.common import EXIT_USAGE, load_checked, overlap
from citecheck.config import add_option
from citecheck.errors import CitecheckError
from citecheck.storage.streams import describe, require


def card_paths(path: str) -> tuple[Path, Path]:
    """``--card PATH``: PATH.md and PATH.json (a ``.md`` or ``.json`` ending given is dropped first)."""
    base = Path(path)
    if base.suffix.lower() in (".md", ".json"):
        base = base.with_suffix("")
    return base.with_name(base.name + ".md"), base.with_name(base.name + ".json")


def cmd_calibrate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.judging import verdicts as verdict_store
    from citecheck.judging.calibration import calibrate, human_labels
    from citecheck.judging.consistency import consistency, has_repeats
    from citecheck.judging.judge_card import examples_of, examples_text
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
    if args.card and len(wanted) > 1:
        err.write("citecheck calibrate: --card describes one judge and prompt version; choose one with --judge and "
                  "--prompt (present: " + ", ".join(f"{j} {p}" for j, p in wanted) + ")\n")
        return EXIT_USAGE
    if args.card and not card_paths(args.card)[0].parent.is_dir():
        raise CitecheckError(f"--card {args.card}: the folder {card_paths(args.card)[0].parent} does not exist; "
                             "create it or give another path")
    fingerprints = data = None
    if args.log:  # only the labels of these logs' items count; a labels file of other logs is an error
        data = load_checked(args.log, args.corpus, err)
        fingerprints = {i.key: i.fingerprint for i in data.all_items}
        mine = labels.matching(records, adjudicated, fingerprints.keys(), describe(args.labels), args.log)
        if note := mine.note(len(records)):
            err.write(f"note: {note}\n")
        records, adjudicated = mine.labels, mine.adjudicated
    reports = [calibrate(records, verdicts, j, p, args.split, fingerprints, adjudicated=adjudicated,
                         overlap=args.overlap) for j, p in wanted]
    human = human_labels(records, fingerprints, adjudicated=adjudicated, overlap=args.overlap)
    repeated = {(r.judge, r.prompt_version): consistency(verdicts, r.judge, r.prompt_version, human, args.split)
                for r in reports if has_repeats(verdicts, r.judge, r.prompt_version)}
    texts, dicts = [], []
    for r in reports:
        run = (r.judge, r.prompt_version)
        examples = examples_of(verdicts, *run)
        d = r.to_dict()
        d["examples_sha256"] = list(examples)
        text = r.to_text() + (f"{examples_text(examples)}\n" if examples else "")
        if run in repeated:
            d["self_consistency"] = repeated[run].to_dict()
            text += "\n" + repeated[run].to_text()
        texts.append(text)
        dicts.append(d)
    if args.format == "json":
        out.write(json.dumps(dicts if len(dicts) > 1 else dicts[0], ensure_ascii=False, indent=2) + "\n")
    else:
        out.write("\n".join(texts))
    if args.card:
        _write_card(args, reports[0], verdicts, repeated.get((reports[0].judge, reports[0].prompt_version)),
                    records, adjudicated, data, err)
    return 0


def _write_card(args, report, verdicts, consistency, records, adjudicated, data, err: TextIO) -> None:
    from citecheck.judging import estimate
    from citecheck.judging.judge_card import judge_card
    from citecheck.storage.durable import replace_file

    estimates, missing = None, ""
    if data is not None:
        try:
            estimates = estimate.estimate(records, verdicts, data.all_items, report.judge, report.prompt_version,
                                          adjudicated=adjudicated, overlap=args.overlap)
        except estimate.EstimateError as exc:
            missing = str(exc)
    card = judge_card(report, verdicts, consistency, estimates, missing)
    md, js = card_paths(args.card)
    replace_file(md, card.to_markdown(), what="the judge card")
    replace_file(js, card.to_json(), what="the judge card")
    err.write(f"judge card written: {md} and {js}\n")


def register(sub: argparse._SubParsersAction) -> None:
    cal = sub.add_parser("calibrate", help="agreement of a judge's verdicts with the human labels")
    add_option(cal, "labels", required=True)
    add_option(cal, "verdicts", required=True)
    cal.add_argument("--judge", help="judge name (default: every judge in the file)")
    cal.add_argument("--prompt", "--prompt-version", dest="prompt",
                     help="judge prompt version (default: every one); --prompt-version as estimate and sample say it")
    cal.add_argument("--split", choices=["all", "dev", "test"], default="all")
    add_option(cal, "log", purpose="drop labels whose item changed since")
    add_option(cal, "corpus")
    cal.add_argument("--format", choices=["text", "json"], default="text")
    add_option(cal, "overlap", type=overlap, fallback=1, purpose="the majority of at least K labels settles an item "
                                                                    "(default 1)")
    cal.add_argument("--card", metavar="PATH", help="write the judge card of the one run chosen to PATH.md and "
                                                    "PATH.json")
    cal.set_defaults(func=cmd_calibrate)
