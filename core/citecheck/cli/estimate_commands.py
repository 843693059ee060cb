"""``citecheck estimate`` and ``citecheck sample``: trustworthy rates from a judge and a random sample
of labels (docs/estimate.md)."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from citecheck.cli.common import EXIT_UNREADABLE, EXIT_USAGE, load_checked, overlap
from citecheck.config import add_option
from citecheck.errors import CitecheckError


def _confidence(value: str) -> float:
    c = float(value)
    if not 0.5 <= c < 1:
        raise argparse.ArgumentTypeError("give a confidence level between 0.5 and 1, for example 0.95")
    return c


def _half_width(value: str) -> float:
    h = float(value)
    if not 0 < h < 0.5:
        raise argparse.ArgumentTypeError("give a half-width between 0 and 0.5, for example 0.02")
    return h


def pick_run(verdicts, judge: str | None, prompt: str | None, path: str) -> tuple[str, str]:
    """The one (judge, prompt version) the options name; a CitecheckError says which are present."""
    from citecheck.judging import verdicts as verdict_store

    runs = verdict_store.runs(verdicts)
    if not runs:
        raise CitecheckError(f"no verdicts in {path}; run citecheck judge --all-items first")
    wanted = [r for r in runs if (judge is None or r[0] == judge) and (prompt is None or r[1] == prompt)]
    present = ", ".join(f"{j} {p}" for j, p in runs)
    if not wanted:
        raise CitecheckError(f"no verdicts for that judge/prompt version; present: {present}")
    if len(wanted) > 1:
        raise CitecheckError(f"several judges or prompt versions in {path} ({present}): choose one with --judge and "
                         "--prompt-version")
    return wanted[0]


def _read_verdicts(path: str, err: TextIO):
    from citecheck.judging import verdicts as verdict_store

    verdicts, warnings = verdict_store.read(path)
    for w in warnings:
        err.write(f"warning: {w}\n")
    return verdicts


def _read_labels(path: str, err: TextIO):
    """The labels that count (retracted ones left out) and the adjudication per item."""
    from citecheck.labelling import labels
    from citecheck.storage.streams import require

    require(path, labels.STREAM)
    events, warnings = labels.read_events(path)
    for w in warnings:
        err.write(f"warning: {w}\n")
    return labels.effective(events), labels.adjudications(events)


def cmd_estimate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.judging import estimate, estimate_report
    from citecheck.labelling import sample as samples

    records, adjudicated = _read_labels(args.labels, err)
    verdicts = _read_verdicts(args.verdicts, err)
    judge, prompt = pick_run(verdicts, args.judge, args.prompt_version, args.verdicts)
    sample = samples.read(args.sample) if args.sample else None
    data = load_checked(args.log, args.corpus, err)
    result = estimate.estimate(records, verdicts, data.all_items, judge, prompt, sample, args.confidence, args.target,
                               adjudicated=adjudicated, overlap=args.overlap)
    if args.format == "json":
        out.write(json.dumps(estimate_report.to_dict(result), ensure_ascii=False, indent=2) + "\n")
    else:
        out.write(estimate_report.to_text(result))
    return EXIT_UNREADABLE if data.errors else 0


def cmd_sample(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.judging import sampling
    from citecheck.labelling import sample as samples

    data = load_checked(args.log, args.corpus, err)
    latest = None
    if args.stratify == "judge" and not args.verdicts:
        err.write("citecheck sample: --stratify judge needs --verdicts (and --judge/--prompt-version "
                  "when the file holds several)\n")
        return EXIT_USAGE
    if args.verdicts:
        verdicts = _read_verdicts(args.verdicts, err)
        judge, prompt = pick_run(verdicts, args.judge, args.prompt_version, args.verdicts)
        latest = {v.item: v for v in verdicts if v.run == (judge, prompt)}
    records, adjudicated = _read_labels(args.labels, err) if args.labels else ([], {})
    plan = sampling.population(data, args.unit, args.stratify, latest)
    spread, said = sampling.neyman_spread(plan, records, adjudicated, args.overlap) if args.stratify != "none" else (None, "")
    drawn = samples.draw(plan.units, args.size, args.seed, plan.strata, spread, args.stratify, plan.members)
    samples.write(args.out, drawn)
    if said:
        err.write(said + "\n")
    parts = ", ".join(f"{s}: {k} of {n}" for s, (n, k) in drawn.strata.items())
    err.write(f"sample {drawn.sample_id}: {sum(k for _, k in drawn.strata.values())} {args.unit}(s) of "
              f"{drawn.population} ({parts}), {len(drawn)} item(s) to label, written to {args.out}\n")
    return EXIT_UNREADABLE if data.errors else 0


def register(sub: argparse._SubParsersAction) -> None:
    est = sub.add_parser("estimate", help="the not-supported rate from a judge and a random sample of labels")
    add_option(est, "log", required=True, purpose="the judged population")
    add_option(est, "corpus")
    add_option(est, "labels", required=True)
    add_option(est, "verdicts", required=True, purpose="judge every item with citecheck judge --all-items")
    est.add_argument("--judge", help="judge name (needed when the verdicts file holds several)")
    est.add_argument("--prompt-version", "--prompt", dest="prompt_version",
                     help="judge prompt version (needed when there are several); --prompt as judge and calibrate say it")
    est.add_argument("--sample", help="calibration sample file (citecheck sample): only its labels count")
    est.add_argument("--confidence", type=_confidence, default=0.95, help="confidence level of the intervals")
    est.add_argument("--target", type=_half_width, help="half-width wanted: how many more labels would reach it")
    add_option(est, "overlap", type=overlap, fallback=1, purpose="the majority of at least K labels settles an item "
                                                                    "(default 1)")
    est.add_argument("--format", choices=["text", "json"], default="text")
    est.set_defaults(func=cmd_estimate)

    smp = sub.add_parser("sample", help="draw a random calibration sample of items to label")
    add_option(smp, "log", required=True, purpose="the answers to draw from")
    add_option(smp, "corpus")
    smp.add_argument("--size", type=int, required=True, help="how many items (or answers) to draw")
    smp.add_argument("--seed", type=int, required=True, help="random seed (the same seed draws the same sample)")
    smp.add_argument("--unit", choices=["item", "answer"], default="item",
                     help="draw citation items, or whole answers (for the failing-answer rate)")
    smp.add_argument("--stratify", choices=["none", "judge", "status"], default="none",
                     help="draw within strata: the judge's verdict, or the checker's status")
    add_option(smp, "verdicts", env=False, purpose="draw only items this judge scored (needed for --stratify judge)")
    smp.add_argument("--judge", help="judge name, with --verdicts")
    smp.add_argument("--prompt-version", "--prompt", dest="prompt_version",
                     help="judge prompt version, with --verdicts; --prompt as judge and calibrate say it")
    add_option(smp, "labels", env=False, purpose="the labels so far: Neyman allocation from each stratum's spread")
    add_option(smp, "overlap", type=overlap, fallback=1, purpose="the majority of at least K labels settles an item "
                                                                    "(default 1)")
    smp.add_argument("--out", required=True, help="sample file to write (never overwritten)")
    smp.set_defaults(func=cmd_sample)
