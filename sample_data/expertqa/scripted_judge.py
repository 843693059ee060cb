"""A scripted stand-in for a second judge on the ExpertQA sample (no key, no network): it stands for
``citecheck judge --judge claude --examples examples.json --repeat 3`` in the walkthrough of
docs/judge.md ("Improving a judge").  It follows a fixed policy, so figures measured with it describe
the mechanics of improving a judge (self-consistency, unstable items, the paired comparison, the judge
card), not whether few-shot examples make a model better: **it reads the human labels**, which a real
judge never sees, and its gains are put there by the policy below.

Policy, per labelled item, from the baseline's ordinary-run verdict (``--baseline``, default
``baseline@baseline.v1``) and the item's human label (settled as ``citecheck calibrate`` settles it):

- run 0 (the ordinary run, the one calibration counts): where the baseline disagrees with the human
  label, the human label on a share ``--learn`` of those items (0.3; stands for what learning from
  examples fixes); where it agrees, one of the two other verdicts on a share ``--forget`` of those
  items (0.05; stands for what a change breaks); the baseline's verdict otherwise, and on items
  without a settled human label;
- runs 1 to K-1 (``--repeat K``, default 3): run 0's verdict, replaced by one of the two other
  verdicts on a share ``--flip`` of (item, run) pairs (0.1), so the repeats have something to show:
  over K runs about 1 - (1 - flip)^(K-1) of the items change verdict (0.19 for the defaults);
- an item the baseline left unscored (no passage text) is unscored in every run, as a model would
  leave it.

Each choice is drawn from a hash of ``--seed``, the item key and the run (never the order of the
files), so the same inputs write the same verdicts.  The records are citecheck verdict records
(version 2, docs/judge.md "The verdicts file") appended to ``--out`` through citecheck itself, as
judge ``scripted``, prompt version ``scripted.v1``, the prompt hash being this file's sha256; each
keeps the baseline verdict's item fingerprint and its rationale says which rule gave it.  They are
written directly, not through ``citecheck verdicts import``, because an import records run 0 only.
(item, run) pairs already in ``--out`` for this judge and prompt version are not written again.

Run it with the Python that has citecheck installed (``.venv/bin/python``):

    python sample_data/expertqa/scripted_judge.py --labels sample_data/expertqa/labels.jsonl \\
        --verdicts v.jsonl --repeat 3 --out v.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

JUDGE = "scripted"
PROMPT_VERSION = "scripted.v1"
VERDICTS = ("supported", "partial", "not_supported")


def draw(seed: int, what: str, item: str, run: int = 0) -> float:
    """A number in [0, 1) fixed by its inputs (the first 8 bytes of a sha256)."""
    digest = hashlib.sha256(f"{seed}\x1f{what}\x1f{item}\x1f{run}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def other(verdict: str, u: float) -> str:
    """One of the two verdicts other than ``verdict``, chosen by ``u`` in [0, 1)."""
    rest = [v for v in VERDICTS if v != verdict]
    return rest[int(u * len(rest))]


def first_run(item: str, baseline: str, human: str | None, learn: float, forget: float, seed: int) -> tuple[str, str]:
    """Run 0's verdict and the rule that gave it."""
    if human is None:
        return baseline, "the baseline's verdict (no settled human label)"
    if baseline != human:
        if draw(seed, "learn", item) < learn:
            return human, "the human label (stands for what examples fix)"
        return baseline, "the baseline's verdict (a disagreement left as it was)"
    if draw(seed, "forget", item) < forget:
        return other(baseline, draw(seed, "forget-to", item)), "another verdict (stands for what a change breaks)"
    return baseline, "the baseline's verdict"


def repeat_run(item: str, run: int, first: str, flip: float, seed: int) -> tuple[str, str]:
    """Run ``run``'s verdict (1 to K-1) and the rule that gave it."""
    if draw(seed, "flip", item, run) < flip:
        return other(first, draw(seed, "flip-to", item, run)), f"run 0's verdict flipped on run {run}"
    return first, "run 0's verdict"


def share(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a share in [0, 1]")
    return value


def at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: at least 1 run")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--labels", required=True, help="the human labels (citecheck labels file)")
    p.add_argument("--verdicts", required=True, help="the verdicts file holding the baseline's verdicts")
    p.add_argument("--baseline", default="baseline@baseline.v1", metavar="JUDGE@PROMPT",
                   help="the run the policy starts from (default baseline@baseline.v1)")
    p.add_argument("--out", required=True, help="the verdicts file to append to (may be --verdicts)")
    p.add_argument("--repeat", type=at_least_one, default=3, metavar="K", help="runs per item (default 3)")
    p.add_argument("--learn", type=share, default=0.3, help="share of the baseline's disagreements given the human label")
    p.add_argument("--forget", type=share, default=0.05, help="share of the baseline's agreements made wrong")
    p.add_argument("--flip", type=share, default=0.1, help="share of (item, repeat) pairs flipped")
    p.add_argument("--seed", type=int, default=35)
    return p


def main(argv: list[str] | None = None) -> int:
    from citecheck.contract.item_keys import UNSCORED
    from citecheck.judging import verdicts as verdict_store
    from citecheck.judging.calibration import human_labels
    from citecheck.labelling import labels as label_store

    args = parser().parse_args(argv)
    judge, at, prompt = args.baseline.rpartition("@")
    if not at or not judge or not prompt:
        print(f"scripted_judge: --baseline {args.baseline!r} is not JUDGE@PROMPT (such as baseline@baseline.v1)",
              file=sys.stderr)
        return 2
    events, warnings = label_store.read_events(args.labels)
    human = human_labels(label_store.effective(events), None, adjudicated=label_store.adjudications(events), overlap=1)
    found, errors = verdict_store.read(args.verdicts)
    for w in [*warnings, *errors]:
        print(f"warning: {w}", file=sys.stderr)
    base = {v.item: v for v in found if v.run == (judge, prompt) and v.repeat == 0}  # the latest run 0 per item
    if not base:
        present = ", ".join(f"{j}@{p}" for j, p in verdict_store.runs(found)) or "none"
        print(f"scripted_judge: {args.verdicts} has no run-0 verdicts of {args.baseline} (present: {present}); "
              f"run citecheck judge --judge baseline first", file=sys.stderr)
        return 2
    done: set[tuple[str, int]] = set()
    if Path(args.out).exists():
        done = {(v.item, v.repeat) for v in verdict_store.read(args.out)[0] if v.run == (JUDGE, PROMPT_VERSION)}
    prompt_sha256 = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    written, counts = [], {"learned": 0, "broken": 0, "flipped": 0, "unscored": 0}
    for item, v in sorted(base.items()):
        if not v.scored:
            first, why = UNSCORED, f"the baseline left it unscored: {v.rationale}"
        else:
            first, why = first_run(item, v.verdict, human.get(item), args.learn, args.forget, args.seed)
        for run in range(args.repeat):
            verdict, rule = (first, why) if run == 0 or first == UNSCORED else \
                repeat_run(item, run, first, args.flip, args.seed)
            if (item, run) in done:
                continue
            counts["learned"] += run == 0 and rule.startswith("the human label")
            counts["broken"] += run == 0 and rule.startswith("another verdict")
            counts["flipped"] += rule.startswith("run 0's verdict flipped")
            counts["unscored"] += verdict == UNSCORED
            written.append(verdict_store.make(item, verdict, f"scripted: {rule}", JUDGE, PROMPT_VERSION,
                                              prompt_sha256, v.fingerprint, repeat=run))
    verdict_store.append(args.out, written)
    print(f"scripted judge: {len(written)} verdict(s) of {JUDGE} {PROMPT_VERSION} written to {args.out} "
          f"({len(base)} item(s) × {args.repeat} run(s), {len(done)} already there; {counts['unscored']} unscored); "
          f"run 0: {counts['learned']} of the baseline's disagreements given the human label, "
          f"{counts['broken']} of its agreements made wrong"
          + (f"; runs 1 to {args.repeat - 1}: {counts['flipped']} flip(s)" if args.repeat > 1 else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
