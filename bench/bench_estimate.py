"""Coverage and width of citecheck's interval estimates, with a known truth (docs/estimate.md).

For each judge quality (TPR and TNR), prevalence of not-supported citations and label budget: build
a population of N judged citations with known true labels, draw a simple random sample of n to
label, and ask ``citecheck.judging.estimate.rate_rows`` (the code ``citecheck estimate`` runs) for
the labels-alone Wilson interval and the PPI++ interval.  Over R repetitions, print per cell:
coverage of the population's true rate, mean half-width, PPI++'s width as a share of the labels
alone, the share of repetitions where PPI++ claimed no interval, then the worst cell.

    .venv/bin/python bench/bench_estimate.py [--reps 1000] [--population 10000] [--markdown]

Then (``--stratified`` alone): samples stratified by the judge's verdict with Neyman allocation.
Last part (``--expertqa`` alone): the bundled ExpertQA sample with the baseline judge; a random 20%
of the labelled, judged items is the sample, the other 80% the truth; 200 seeds.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from citecheck.judging import estimate

ROOT = Path(__file__).resolve().parent.parent
QUALITIES = ((0.6, 0.6), (0.75, 0.75), (0.85, 0.85), (0.95, 0.95), (0.6, 0.95), (0.95, 0.6))  # (TPR, TNR)
PREVALENCES = (0.02, 0.05, 0.1, 0.2, 0.4)
BUDGETS = (50, 100, 200, 500, 1000)


def cell(quality: tuple[float, float], prevalence: float, n: int, N: int, reps: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    tpr, tnr = quality
    cover = {"labels": 0, "ppi": 0}
    width = {"labels": [], "ppi": []}
    given = 0
    for _ in range(reps):
        truth = (rng.random(N) < prevalence).astype(float)
        right = rng.random(N) < np.where(truth == 1, tpr, tnr)
        judge = np.where(right, truth, 1 - truth)
        idx = rng.choice(N, n, replace=False)
        rows = {r.method: r for r in estimate.rate_rows(truth[idx], judge[idx], judge, 0.95)}
        target = truth.mean()
        for m in ("labels", "ppi"):
            r = rows[m]
            if r.low is None:
                continue
            cover[m] += r.low <= target <= r.high
            width[m].append(r.half_width)
        given += rows["ppi"].low is not None
    return {"quality": quality, "prevalence": prevalence, "n": n,
            "labels_coverage": cover["labels"] / reps, "ppi_coverage": cover["ppi"] / max(given, 1),
            "ppi_given": given / reps, "labels_hw": float(np.mean(width["labels"])),
            "ppi_hw": float(np.mean(width["ppi"])) if width["ppi"] else float("nan")}


def simulate(reps: int, N: int, markdown: bool) -> None:
    t0 = time.perf_counter()
    cells = []
    for qi, q in enumerate(QUALITIES):
        for pi, p in enumerate(PREVALENCES):
            for bi, n in enumerate(BUDGETS):
                cells.append(cell(q, p, n, N, reps, seed=1000 * qi + 100 * pi + bi))
    if markdown:
        print("| TPR / TNR | prevalence | n | coverage labels | coverage PPI++ | PPI++ given | half-width labels "
              "| half-width PPI++ | PPI++ / labels |")
        print("|---|---|---|---|---|---|---|---|---|")
    for c in cells:
        ratio = c["ppi_hw"] / c["labels_hw"]
        if markdown:
            print(f"| {c['quality'][0]:.2f} / {c['quality'][1]:.2f} | {c['prevalence']:.0%} | {c['n']} | {c['labels_coverage']:.1%} | "
                  f"{c['ppi_coverage']:.1%} | {c['ppi_given']:.0%} | {c['labels_hw']:.3f} | {c['ppi_hw']:.3f} | "
                  f"{ratio:.2f} |")
        else:
            print(f"tpr/tnr={c['quality'][0]:.2f}/{c['quality'][1]:.2f} p={c['prevalence']:.2f} n={c['n']:>4}  cover labels {c['labels_coverage']:.3f} "
                  f"ppi {c['ppi_coverage']:.3f} (given {c['ppi_given']:.2f})  half-width labels {c['labels_hw']:.3f} "
                  f"ppi {c['ppi_hw']:.3f}  ratio {ratio:.2f}")
    worst_l = min(cells, key=lambda c: c["labels_coverage"])
    worst_p = min(cells, key=lambda c: c["ppi_coverage"])
    print(f"\nworst labels-alone coverage {worst_l['labels_coverage']:.1%} at TPR/TNR {worst_l['quality']} "
          f"p={worst_l['prevalence']} n={worst_l['n']}")
    print(f"worst PPI++ coverage {worst_p['ppi_coverage']:.1%} at TPR/TNR {worst_p['quality']} p={worst_p['prevalence']} "
          f"n={worst_p['n']} (PPI++ gave an interval in {worst_p['ppi_given']:.0%} of those repetitions)")
    print(f"{len(cells)} cells x {reps} repetitions, N = {N}: {time.perf_counter() - t0:.0f} s")


def stratified(reps: int, N: int) -> None:
    """Neyman-allocated samples stratified by the judge's verdict (what ``citecheck sample
    --stratify judge`` draws), weighted by inverse inclusion probability in ``estimate``."""
    from citecheck.labelling import sample

    print("\nstratified by judge verdict, Neyman allocation (spread 0.45 in the judge-positive stratum, 0.2 in the other):")
    keys = [str(i) for i in range(N)]
    for q, p, n in ((0.75, 0.2, 100), (0.85, 0.1, 100), (0.95, 0.05, 200), (0.95, 0.2, 50)):
        rng = np.random.default_rng(7)
        cover, width, given = {"labels": 0, "ppi": 0}, {"labels": [], "ppi": []}, 0
        for r in range(reps):
            truth = (rng.random(N) < p).astype(float)
            judge = np.where(rng.random(N) < q, truth, 1 - truth)
            strata = {k: "pos" if judge[i] else "neg" for i, k in enumerate(keys)}
            s = sample.draw(keys, n, r, strata, {"pos": 0.45, "neg": 0.2}, "judge")
            idx = np.array([int(k) for k in s.items])
            w = np.array([1 / s.probability[k] for k in s.items])
            rows = {x.method: x for x in estimate.rate_rows(truth[idx], judge[idx], judge, 0.95, w)}
            if rows["ppi"].low is None:
                continue
            given += 1
            for m in cover:
                cover[m] += rows[m].low <= truth.mean() <= rows[m].high
                width[m].append(rows[m].half_width)
        print(f"  q={q:.2f} p={p:.2f} n={n:>4}  cover labels {cover['labels'] / given:.3f} ppi {cover['ppi'] / given:.3f}"
              f"  half-width labels {np.mean(width['labels']):.3f} ppi {np.mean(width['ppi']):.3f}  ({given} reps)")


def expertqa(seeds: int) -> None:
    """20% of the labelled, judged ExpertQA items as the sample, 80% as the truth."""
    from citecheck.cli.main import main
    from citecheck.judging import verdicts as verdict_store
    from citecheck.judging.calibration import POSITIVE, human_labels
    from citecheck.labelling import labels

    log = ROOT / "sample_data" / "expertqa" / "answers.jsonl"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "v.jsonl"
        main(["judge", "--log", str(log), "--all-items", "--judge", "baseline", "--out", str(path)],
             io.StringIO(), io.StringIO())
        verdicts, _ = verdict_store.read(path)
    records, _ = labels.read(ROOT / "sample_data" / "expertqa" / "labels.jsonl")
    human = human_labels(records, None, adjudicated={}, overlap=1)
    judged = {v.item: v.verdict == POSITIVE for v in verdicts if v.scored}
    keys = sorted(k for k in human if k in judged)
    y_all = np.array([human[k] == POSITIVE for k in keys], float)
    f_all = np.array([judged[k] for k in keys], float)
    n = round(0.2 * len(keys))
    cover = {"labels": [0, 0], "ppi": [0, 0]}
    width = {"labels": [], "ppi": []}
    for seed in range(seeds):
        idx = np.random.default_rng(seed).permutation(len(keys))
        s, rest = idx[:n], idx[n:]
        rows = {r.method: r for r in estimate.rate_rows(y_all[s], f_all[s], f_all, 0.95)}
        for m in cover:
            r = rows[m]
            cover[m][0] += r.low <= y_all[rest].mean() <= r.high
            cover[m][1] += r.low <= y_all.mean() <= r.high
            width[m].append(r.half_width)
    print(f"ExpertQA, baseline judge: {len(keys)} labelled and judged items, true rate {y_all.mean():.3f}; "
          f"sample n = {n} (20%), {seeds} seeds")
    for m in cover:
        print(f"  {m:<7} covers the other 80% {cover[m][0] / seeds:.1%}, the whole set {cover[m][1] / seeds:.1%}; "
              f"mean half-width {np.mean(width[m]):.3f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--population", type=int, default=10_000)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--expertqa", action="store_true", help="only the ExpertQA part")
    ap.add_argument("--stratified", action="store_true", help="only the stratified-sample part")
    ap.add_argument("--seeds", type=int, default=200)
    a = ap.parse_args()
    if a.stratified:
        stratified(a.reps, 5000)
    elif a.expertqa:
        expertqa(a.seeds)
    else:
        simulate(a.reps, a.population, a.markdown)
        stratified(a.reps, 5000)
        expertqa(a.seeds)
    sys.exit(0)
