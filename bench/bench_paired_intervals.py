"""Coverage of compare-judges' paired intervals over simulated data with a known truth (docs/judge.md).

Human labels come from a class prior; each judge errs on not-supported items at one rate and on the
others at another, independently per item (an error is one of the two other classes at random).  The
true accuracy, kappa, TPR and TNR of each judge follow from the prior and the error rates
(``truth``), so the true difference B - A of each figure is known.  For each cell (item count n,
pair of judges), R repetitions draw the items and both judges' verdicts and ask
``comparison.paired_differences`` (the code ``citecheck compare-judges`` runs) for its intervals.
Printed per cell: the empirical coverage of each figure's interval (nominal 98.75% each), the share
of repetitions where all four held their truth (nominal 95% together; over the repetitions where
all four had an interval), the largest share of repetitions where a figure had no interval (under
10 items behind it), and how often the verdict called the judges different (for equal judges: the
false alarms, at most 5% by design).

    .venv/bin/python bench/bench_paired_intervals.py [--reps 400] [--draws 2000]
"""

from __future__ import annotations

import argparse
import time
import zlib

import numpy as np
from citecheck.judging import comparison
from citecheck.judging.calibration import CLASSES

PRIOR = np.array([0.5, 0.2, 0.3])  # supported, partial, not supported
POS = CLASSES.index("not_supported")
JUDGES = {  # (error on not-supported items, error on the others)
    "equal 0.3/0.3": ((0.3, 0.3), (0.3, 0.3)),
    "B better on TNR": ((0.2, 0.35), (0.2, 0.15)),
    "mixed": ((0.1, 0.4), (0.4, 0.1)),
    "both good": ((0.05, 0.05), (0.1, 0.05)),
}
SIZES = (30, 60, 150, 400)


def confusion(errors: tuple[float, float]) -> np.ndarray:
    """P(judge says column | human row)."""
    m = np.zeros((3, 3))
    for h in range(3):
        e = errors[0] if h == POS else errors[1]
        m[h] = e / 2
        m[h, h] = 1 - e
    return m


def truth(errors: tuple[float, float]) -> dict[str, float]:
    joint = PRIOR[:, None] * confusion(errors)
    po = float(np.trace(joint))
    pe = float((joint.sum(axis=1) * joint.sum(axis=0)).sum())
    neg = [c for c in range(3) if c != POS]
    return {"accuracy": po, "kappa": (po - pe) / (1 - pe), "tpr": float(joint[POS, POS] / PRIOR[POS]),
            "tnr": float(joint[np.ix_(neg, neg)].sum() / PRIOR[neg].sum())}


def draw(rng, h: np.ndarray, errors: tuple[float, float]) -> np.ndarray:
    rate = np.where(h == POS, errors[0], errors[1])
    wrong = rng.random(len(h)) < rate
    return np.where(wrong, (h + rng.integers(1, 3, len(h))) % 3, h)


def cell(name: str, n: int, reps: int, draws: int, seed: int) -> dict:
    ea, eb = JUDGES[name]
    ta, tb = truth(ea), truth(eb)
    true = {k: tb[k] - ta[k] for k in comparison.FIGURES}
    rng = np.random.default_rng(seed)
    held = {k: 0 for k in comparison.FIGURES}
    given = {k: 0 for k in comparison.FIGURES}
    together = complete = called = 0
    for r in range(reps):
        h = rng.choice(3, n, p=PRIOR)
        diffs = comparison.paired_differences(h, draw(rng, h, ea), draw(rng, h, eb), draws=draws, seed=r)
        all_held = True
        for d in diffs:
            if d.low is None or d.high is None:
                all_held = False
                continue
            given[d.figure] += 1
            ok = d.low <= true[d.figure] <= d.high
            held[d.figure] += ok
            all_held &= ok
        if all(d.low is not None for d in diffs):  # joint coverage: over the repetitions with all four intervals
            complete += 1
            together += all_held
        called += not comparison.verdict_line(diffs, n).startswith(("No difference", "Too few"))
    return {"held": {k: held[k] / given[k] if given[k] else float("nan") for k in held},
            "no_interval": {k: 1 - given[k] / reps for k in given},
            "together": together / complete if complete else float("nan"),
            "called_different": called / reps, "true": true}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--draws", type=int, default=comparison.BOOTSTRAP)
    args = parser.parse_args()
    print(f"paired bootstrap intervals: nominal {comparison.LEVEL:.2%} each, {comparison.FAMILY_LEVEL:.0%} together; "
          f"{args.reps} repetitions per cell, {args.draws} draws")
    header = f"{'judges':<18}{'n':>5}  " + "".join(f"{f:>10}" for f in comparison.FIGURES) + \
        f"{'together':>10}{'called diff':>13}  true B - A"
    print(header)
    worst = 1.0
    started = time.perf_counter()
    for name in JUDGES:
        for n in SIZES:
            c = cell(name, n, args.reps, args.draws, seed=zlib.crc32(f"{name}{n}".encode()))
            worst = min(worst, c["together"])
            held = "".join(f"{c['held'][f]:>10.3f}" for f in comparison.FIGURES)
            true = ", ".join(f"{f} {c['true'][f]:+.3f}" for f in comparison.FIGURES)
            missing = max(c["no_interval"].values())
            note = f"  (up to {missing:.0%} without an interval)" if missing else ""
            print(f"{name:<18}{n:>5}  {held}{c['together']:>10.3f}{c['called_different']:>13.3f}  {true}{note}")
    print(f"worst joint coverage {worst:.3f} (nominal {comparison.FAMILY_LEVEL:.2f}); "
          f"ratio to nominal {worst / comparison.FAMILY_LEVEL:.3f}; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
