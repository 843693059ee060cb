"""A paired comparison of two judges (or two prompt versions of one) on the same items (docs/judge.md).

Only the items both runs scored (their ordinary run, repeat 0) and humans labelled count; the human
label is settled as calibrate settles it (``calibration.resolutions``).  For accuracy (3 classes),
Cohen's kappa, TPR and TNR (positive class: not supported):

- each run's figure as calibrate gives it on those items (``calibration.bootstrap``);
- the difference B - A with a **paired** interval.  The four intervals are **simultaneous**: each is
  at ``LEVEL`` = 1 - 0.05 / 4 (98.75%), so that all four hold their true differences together with at
  least 95% probability (Bonferroni), and two equally good judges are called different in at most
  about 5% of comparisons.  Each starts from the **paired bootstrap**: the items are resampled with
  replacement and the same resample scores A and B, ``BOOTSTRAP`` draws, a fixed seed (the same inputs
  give the same output), and the *expanded* percentile interval (Hesterberg 2015: the percentiles at
  the normal tail beyond sqrt(n / (n - 1)) t(n - 1)), since the plain one is too narrow on small
  samples.  A bootstrap cannot see a difference the sample does not show: with few items where A and
  B differ it collapses towards [0, 0] (bench/bench_paired_intervals.py measured 64% coverage for a
  98.75% TPR interval of two good judges on 30 items).  So a share (accuracy, TPR, TNR) is never
  narrower than Newcombe's hybrid score interval for paired shares (1998, method 10; with no
  discordant item at all, [-u, u] with u the Wilson upper bound of 0 discordant in n), and kappa
  has no interval when A and B give different verdicts on fewer than 10 items.  Below 10 items
  behind a figure (TPR: the not-supported items; TNR: the others), or with fewer than 20 resamples
  where the figure is defined, no interval.  A run compared with itself differs by 0 [0, 0];
- McNemar's exact test for accuracy: two-sided, the binomial(discordant, 1/2) probability of a
  split at least as uneven as the one seen (``mcnemar_p``);
- the items where the two differ, and each run's cost per item (mean ``cost_usd`` of the compared
  verdicts).

**The verdict** (``verdict_line``, the one sentence every surface shows): a difference whose
interval lies wholly above 0 says B is better on that figure, wholly below 0 that B is worse;
an interval holding 0 finds no difference.  "B is better on X, no worse elsewhere" when some
interval is above 0 and none below; "B is worse on X, no better elsewhere" the reverse; "mixed"
when both happen; "no difference found at this n" when every interval holds 0; "too few items"
when no difference has an interval.  ``verdict_tone`` says how a surface marks that sentence: good news
only when B is better and nowhere worse, a warning when B is worse and nowhere better, plain otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from citecheck.errors import CitecheckError
from citecheck.judging.calibration import (
    BOOTSTRAP,
    CLASSES,
    MIN_BOOTSTRAP_N,
    POSITIVE,
    SEED,
    Estimate,
    bootstrap,
    latest_by_item,
    resolutions,
    split_of,
)
from citecheck.judging.verdicts import Verdict
from citecheck.labelling.events import Adjudication
from citecheck.labelling.labels import Label
from citecheck.reports.rates import json_rate

COMPARISON_VERSION = 1
FIGURES = ("accuracy", "kappa", "tpr", "tnr")
TITLES = {"accuracy": "accuracy", "kappa": "kappa", "tpr": "TPR", "tnr": "TNR"}
FAMILY_LEVEL = 0.95  # all four intervals together
LEVEL = 1 - (1 - FAMILY_LEVEL) / len(FIGURES)  # each interval (Bonferroni): 0.9875
_CHUNK = 250  # resamples scored at once (memory: CHUNK x items)


class ComparisonError(CitecheckError, ValueError):
    """Two runs that cannot be compared (the message names what is missing and what is there)."""


@dataclass(frozen=True, slots=True)
class Difference:
    figure: str
    a: float | None
    b: float | None
    low: float | None
    high: float | None
    n: int  # items behind the figure (positives for TPR, negatives for TNR)
    why: str = ""  # no interval: why

    @property
    def value(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def sign(self) -> int:
        """+1: the interval lies above 0 (B better); -1: below 0 (B worse); 0: holds 0 or no interval."""
        if self.low is None or self.high is None:
            return 0
        return 1 if self.low > 0 else -1 if self.high < 0 else 0

    def text(self) -> str:
        if self.value is None:
            return f"n/a (n={self.n})"
        ci = f"[{self.low:+.2f}, {self.high:+.2f}]" if self.low is not None and self.high is not None \
            else f"(no interval: {self.why})"
        return f"{self.value:+.2f} {ci}"

    def to_dict(self) -> dict:
        out: dict[str, object] = {"a": json_rate(self.a), "b": json_rate(self.b), "difference": json_rate(self.value),
               "interval": [json_rate(self.low), json_rate(self.high)], "n": self.n}
        if self.why:
            out["no_interval"] = self.why
        return out


@dataclass(frozen=True, slots=True)
class McNemar:
    a_only: int  # items A got right and B wrong
    b_only: int  # items B got right and A wrong
    p: float

    def to_dict(self) -> dict:
        return {"a_right_b_wrong": self.a_only, "b_right_a_wrong": self.b_only, "p_value": self.p}


@dataclass(frozen=True, slots=True)
class Cost:
    mean: float | None  # USD per compared item (None: no cost recorded)
    total: float
    items: int
    recorded: int  # items whose verdict records a cost above 0

    def text(self) -> str:
        if self.mean is None:
            return f"unknown (no cost recorded on any of {self.items} items: a local judge, or imported verdicts)"
        note = f"; {self.items - self.recorded} item(s) without a recorded cost" if self.recorded < self.items else ""
        return f"${self.mean:.5f} per item (${self.total:.4f} for {self.items}{note})"

    def to_dict(self) -> dict:
        return {"mean_usd": None if self.mean is None else round(self.mean, 6), "total_usd": round(self.total, 6),
                "items": self.items, "items_with_cost": self.recorded}


@dataclass(frozen=True, slots=True)
class Differing:
    item: str
    human: str
    a: str
    b: str


@dataclass(frozen=True)
class Comparison:
    a: tuple[str, str]  # (judge, prompt version)
    b: tuple[str, str]
    split: str
    keys: tuple[str, ...]
    figures_a: Mapping[str, Estimate]  # as calibrate gives them, on the compared items
    figures_b: Mapping[str, Estimate]
    differences: tuple[Difference, ...]
    mcnemar: McNemar
    differing: tuple[Differing, ...]
    cost_a: Cost
    cost_b: Cost
    draws: int

    @property
    def verdict(self) -> str:
        return verdict_line(self.differences, len(self.keys))

    @property
    def verdict_tone(self) -> str:
        return verdict_tone(self.differences)

    def difference(self, figure: str) -> Difference:
        return next(d for d in self.differences if d.figure == figure)

    def to_dict(self) -> dict:
        def run(r: tuple[str, str]) -> dict:
            return {"judge": r[0], "prompt_version": r[1]}
        return {"record": "comparison", "comparison_version": COMPARISON_VERSION, "a": run(self.a), "b": run(self.b),
                "split": self.split, "items": len(self.keys), "verdict": self.verdict,
                "interval": {"method": "paired bootstrap (expanded percentile); shares at least Newcombe's paired "
                                       "score interval", "draws": self.draws, "seed": SEED,
                             "level_each": LEVEL, "level_together": FAMILY_LEVEL},
                "differences": {d.figure: d.to_dict() for d in self.differences},
                "figures": {"a": {k: v.to_dict() for k, v in self.figures_a.items() if k in FIGURES},
                            "b": {k: v.to_dict() for k, v in self.figures_b.items() if k in FIGURES}},
                "mcnemar_accuracy": self.mcnemar.to_dict(),
                "cost_per_item": {"a": self.cost_a.to_dict(), "b": self.cost_b.to_dict()},
                "differing_items": [{"item": d.item, "human": d.human, "a": d.a, "b": d.b} for d in self.differing]}

    def to_text(self, limit: int = 30) -> str:
        lines = [f"A: {self.a[0]} @ {self.a[1]}", f"B: {self.b[0]} @ {self.b[1]}",
                 f"split {self.split}: {len(self.keys)} items both scored and humans labelled", "",
                 f"{'':<10}{'A':>24}{'B':>24}   B - A [{LEVEL:.2%} each, {FAMILY_LEVEL:.0%} together; "
                 f"paired: bootstrap of {self.draws} draws, shares at least Newcombe's]"]
        for d in self.differences:
            lines.append(f"{TITLES[d.figure]:<10}{_fig(self.figures_a[d.figure]):>24}{_fig(self.figures_b[d.figure]):>24}"
                         f"   {d.text()}")
        m = self.mcnemar
        lines += ["", f"McNemar exact test, accuracy: A right/B wrong {m.a_only}, B right/A wrong {m.b_only}, "
                      f"p = {m.p:.4g}",
                  f"cost A: {self.cost_a.text()}", f"cost B: {self.cost_b.text()}", "",
                  f"verdict: {self.verdict}"]
        if self.differing:
            lines += ["", f"items where A and B differ ({len(self.differing)}): item, human, A, B"]
            lines += [f"  {d.item}  {d.human}  {d.a}  {d.b}" for d in self.differing[:limit]]
            if len(self.differing) > limit:
                lines.append(f"  ... and {len(self.differing) - limit} more (--format json lists them all)")
        return "\n".join(lines) + "\n"


def _fig(e: Estimate) -> str:
    return "n/a" if e.value is None else f"{e.value:.2f} (n={e.n})"


# --- the statistics -----------------------------------------------------------------------------


def mcnemar_p(a_only: int, b_only: int) -> float:
    """McNemar's exact two-sided p: 2 P(X <= min) for X ~ binomial(a_only + b_only, 1/2), at most 1."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(a_only, b_only) + 1))
    return min(1.0, 2 * tail / 2 ** n)


def _scores(h: np.ndarray, j: np.ndarray) -> dict[str, np.ndarray]:
    """The four figures for each row of ``h`` and ``j`` (2-D: resamples x items); NaN where undefined."""
    with np.errstate(invalid="ignore", divide="ignore"):
        agree = h == j
        po = agree.mean(axis=1)
        pe = sum((h == c).mean(axis=1) * (j == c).mean(axis=1) for c in range(len(CLASSES)))
        kappa = np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
        pos = h == CLASSES.index(POSITIVE)
        said = j == CLASSES.index(POSITIVE)
        tpr = (pos & said).sum(axis=1) / pos.sum(axis=1)
        tnr = (~pos & ~said).sum(axis=1) / (~pos).sum(axis=1)
    return {"accuracy": po, "kappa": kappa, "tpr": tpr, "tnr": tnr}


def _interval(point: float | None, values: np.ndarray, n: int) -> tuple[float | None, float | None, str]:
    """The expanded percentile interval of the paired differences at LEVEL, or why there is none."""
    if point is None:
        return None, None, ""
    if n < MIN_BOOTSTRAP_N:
        return None, None, f"too few items for an interval (under {MIN_BOOTSTRAP_N})"
    values = values[~np.isnan(values)]
    if len(values) < 20:
        return None, None, "too few resamples where the figure is defined"
    tail = expanded_tail(n) * 100
    low, high = float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))
    if not high > low:
        return None, None, "every resample gives the same difference: too little variation for an interval"
    if not low - 1e-12 <= point <= high + 1e-12:
        return None, None, "the resamples do not cover the estimate: too few items for an interval"
    return low, high, ""


def expanded_tail(n: int, level: float = LEVEL) -> float:
    """The tail share each side of an expanded percentile interval (Hesterberg 2015) at ``level``
    from ``n`` items: the normal tail beyond sqrt(n / (n - 1)) t(n - 1), which widens the plain
    percentile interval by what a small sample hides (a plain one misses more often than it says)."""
    from statistics import NormalDist

    from citecheck.judging.ppi import t_of

    return NormalDist().cdf(-math.sqrt(n / (n - 1)) * t_of(level, n - 1))


def newcombe_paired(both: int, b_only: int, a_only: int, neither: int, level: float = LEVEL) -> tuple[float, float]:
    """Newcombe's hybrid score interval (1998, method 10) for p_B - p_A of two shares measured on the
    same items: ``both`` items right (or counted) for A and B, ``b_only`` for B alone, ``a_only`` for A
    alone, ``neither``.  Wilson intervals of each share, combined with the phi correlation of the
    pairs; valid with no discordant item at all (where a bootstrap collapses to [0, 0])."""
    from citecheck.judging.ppi import wilson

    n = both + b_only + a_only + neither
    p_b, p_a = (both + b_only) / n, (both + a_only) / n
    (l_b, u_b), (l_a, u_a) = wilson(p_b, n, level), wilson(p_a, n, level)
    margins = (both + b_only) * (a_only + neither) * (both + a_only) * (b_only + neither)
    phi = (both * neither - b_only * a_only) / math.sqrt(margins) if margins else 0.0
    low = (p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2
    high = (u_b - p_b) ** 2 - 2 * phi * (u_b - p_b) * (p_a - l_a) + (p_a - l_a) ** 2
    diff = p_b - p_a
    return max(-1.0, diff - math.sqrt(max(low, 0.0))), min(1.0, diff + math.sqrt(max(high, 0.0)))


def _share_interval(both: int, b_only: int, a_only: int, neither: int) -> tuple[float, float]:
    """Newcombe's paired interval; with no discordant item at all (where it can collapse to [0, 0]),
    the difference is still bounded by the share of items where A and B could differ: the Wilson
    upper bound u of 0 in n, giving [-u, u]."""
    from citecheck.judging.ppi import wilson

    low, high = newcombe_paired(both, b_only, a_only, neither)
    if b_only + a_only == 0:
        bound = wilson(0.0, both + neither, LEVEL)[1]
        low, high = min(low, -bound), max(high, bound)
    return low, high


def _share_counts(figure: str, h: np.ndarray, ja: np.ndarray, jb: np.ndarray) -> tuple[int, int, int, int]:
    """(both, B only, A only, neither) of a share figure: right (accuracy), catching a not-supported
    item (TPR, over those items) or leaving another alone (TNR, over the others)."""
    pos = CLASSES.index(POSITIVE)
    if figure == "accuracy":
        ok_a, ok_b = ja == h, jb == h
    else:  # TPR: said not supported, of the not-supported items; TNR: said anything else, of the others
        keep = (h == pos) if figure == "tpr" else (h != pos)
        ok_a, ok_b = ((j[keep] == pos) == (figure == "tpr") for j in (ja, jb))
    return (int((ok_a & ok_b).sum()), int((ok_b & ~ok_a).sum()), int((ok_a & ~ok_b).sum()),
            int((~ok_a & ~ok_b).sum()))


def paired_differences(h: np.ndarray, ja: np.ndarray, jb: np.ndarray, draws: int = BOOTSTRAP,
                       seed: int = SEED, identical: bool = False) -> tuple[Difference, ...]:
    """B - A for each figure in FIGURES with its paired interval (class indices 0..2; the rules are in
    the module's docstring).  ``identical``: A and B are the same run."""
    h, ja, jb = (np.asarray(x, dtype=int) for x in (h, ja, jb))
    point_a = {k: _defined(v[0]) for k, v in _scores(h[None], ja[None]).items()}
    point_b = {k: _defined(v[0]) for k, v in _scores(h[None], jb[None]).items()}
    samples: dict[str, list[np.ndarray]] = {k: [] for k in FIGURES}
    if len(h):
        rng = np.random.default_rng(seed)
        for start in range(0, draws, _CHUNK):
            idx = rng.integers(0, len(h), (min(_CHUNK, draws - start), len(h)))
            sa, sb = _scores(h[idx], ja[idx]), _scores(h[idx], jb[idx])
            for k in FIGURES:
                samples[k].append(sb[k] - sa[k])
    positives = int((h == CLASSES.index(POSITIVE)).sum())
    ns = {"accuracy": len(h), "kappa": len(h), "tpr": positives, "tnr": len(h) - positives}
    differ = int((ja != jb).sum())
    out = []
    for k in FIGURES:
        a, b = point_a[k], point_b[k]
        point = None if a is None or b is None else b - a
        if identical and point is not None:  # one run against itself: the difference is 0 by construction
            out.append(Difference(k, a, b, 0.0, 0.0, ns[k]))
            continue
        values = np.concatenate(samples[k]) if samples[k] else np.array([])
        low, high, why = _interval(point, values, ns[k])
        if k == "kappa":
            if low is not None and differ < MIN_BOOTSTRAP_N:
                low, high, why = None, None, (f"A and B differ on {differ} item(s): too few for a kappa interval "
                                              f"(under {MIN_BOOTSTRAP_N})")
        elif point is not None and ns[k] >= MIN_BOOTSTRAP_N:  # a share: never narrower than Newcombe's interval
            score_low, score_high = _share_interval(*_share_counts(k, h, ja, jb))
            low = score_low if low is None else min(low, score_low)
            high = score_high if high is None else max(high, score_high)
            why = ""
        out.append(Difference(k, a, b, low, high, ns[k], why))
    return tuple(out)


def _defined(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def verdict_line(differences: Sequence[Difference], n: int) -> str:
    """The one-line verdict of a comparison (the rule is in the module's docstring)."""
    better = [d for d in differences if d.sign > 0]
    worse = [d for d in differences if d.sign < 0]

    def by(ds: list[Difference]) -> str:
        return ", ".join(f"{TITLES[d.figure]} by {abs(d.value or 0):.2f} "
                         f"[{min(abs(d.low or 0), abs(d.high or 0)):.2f}, {max(abs(d.low or 0), abs(d.high or 0)):.2f}]"
                         for d in ds)
    if better and worse:
        return f"Mixed: B is better on {by(better)} but worse on {by(worse)} (n={n})"
    if better:
        return f"B is better on {by(better)}, no worse elsewhere at this n (n={n})"
    if worse:
        return f"B is worse on {by(worse)}, no better elsewhere at this n (n={n})"
    if not any(d.low is not None for d in differences):
        return f"Too few items to compare (n={n}): label and judge more items"
    return f"No difference found at this n (n={n})"


def verdict_tone(differences: Sequence[Difference]) -> str:
    """How the verdict line is marked (a ``review.html.notice_html`` kind): ``success`` when B is better
    on some figure and worse on none, ``warning`` when B is worse on some and better on none, ``info``
    for a mixed result, no difference found or too few items.  (The page chose by looking for the word
    "better" in the line, which "B is worse on ..., no better elsewhere" holds: a worse judge was
    shown as good news.)"""
    signs = {d.sign for d in differences}
    if 1 in signs and -1 not in signs:
        return "success"
    if -1 in signs and 1 not in signs:
        return "warning"
    return "info"


# --- from labels and verdicts -------------------------------------------------------------------


def parse_run(text: str) -> tuple[str, str]:
    """``JUDGE@PROMPT`` split at the last ``@`` (a judge name may hold one)."""
    judge, at, prompt = text.rpartition("@")
    if not at or not judge or not prompt:
        raise ComparisonError(f"{text!r} is not JUDGE@PROMPT (for example baseline@baseline.v1)")
    return judge, prompt


def run_text(run: tuple[str, str]) -> str:
    return f"{run[0]}@{run[1]}"


def cost_per_item(latest: Mapping[str, Verdict], keys: Sequence[str]) -> Cost:
    costs = [latest[k].cost_usd for k in keys]
    recorded = sum(1 for c in costs if c > 0)
    total = float(sum(costs))
    return Cost(total / len(keys) if recorded and keys else None, total, len(keys), recorded)


def compare(labels: Sequence[Label], verdicts: Sequence[Verdict], a: tuple[str, str], b: tuple[str, str],
            split: str | None = None, fingerprints: Mapping[str, str] | None = None, *,
            adjudicated: Mapping[str, Adjudication], overlap: int, draws: int = BOOTSTRAP) -> Comparison:
    """Compare run ``b`` with run ``a`` on the items both scored (repeat 0) and humans labelled."""
    present = list(dict.fromkeys(v.run for v in verdicts))
    for name, run in (("A", a), ("B", b)):
        if run not in present:
            raise ComparisonError(f"{name} = {run_text(run)} has no verdicts; present: "
                                  + (", ".join(map(run_text, present)) or "none"))
    settled = resolutions(labels, fingerprints, adjudicated=adjudicated, overlap=overlap)
    human = {k: r.label for k, r in settled.items() if r.label in CLASSES
             and (split in (None, "all") or split_of(k) == split)}
    la = latest_by_item(v for v in verdicts if v.run == a)
    lb = latest_by_item(v for v in verdicts if v.run == b)
    keys = tuple(sorted(k for k in human if k in la and k in lb and la[k].scored and lb[k].scored))
    if not keys:
        raise ComparisonError(
            f"no item has a human label and a scored verdict from both runs (split {split or 'all'}: "
            f"{len(human)} labelled, {sum(1 for k in human if k in la and la[k].scored)} scored by A, "
            f"{sum(1 for k in human if k in lb and lb[k].scored)} scored by B)")
    h = np.array([CLASSES.index(human[k]) for k in keys])
    ja = np.array([CLASSES.index(la[k].verdict) for k in keys])
    jb = np.array([CLASSES.index(lb[k].verdict) for k in keys])
    correct_a, correct_b = ja == h, jb == h
    a_only, b_only = int((correct_a & ~correct_b).sum()), int((correct_b & ~correct_a).sum())
    mc = McNemar(a_only, b_only, mcnemar_p(a_only, b_only))
    differing = tuple(Differing(k, human[k], la[k].verdict, lb[k].verdict) for k in keys
                      if la[k].verdict != lb[k].verdict)
    return Comparison(a, b, split or "all", keys, bootstrap(h, ja, draws), bootstrap(h, jb, draws),
                      paired_differences(h, ja, jb, draws, identical=a == b), mc, differing, cost_per_item(la, keys), cost_per_item(lb, keys), draws)
