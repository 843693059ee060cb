"""Interval estimates of a rate from a few human labels and many judge verdicts (docs/estimate.md).

Pure functions over numpy arrays of 0/1 values (1 = the positive class, *not supported*):

- ``wilson``: the Wilson score interval of a share, from the labels alone.
- ``ppi_mean``: the prediction-powered estimate with power tuning (PPI++, Angelopoulos, Duchi
  and Zrnic 2023) of a mean, from labels ``y`` with the judge's verdicts ``f`` on the same
  items and the judge's verdicts ``f_all`` on the whole judged population.  Optional weights are
  inverse inclusion probabilities of a sample; they are scaled to sum to n, as ``ppi_py`` does.
- ``labels_needed_*``: how many labels in all would bring an interval to a target half-width.

Nothing here reads files or knows about items; ``estimate.py`` builds the inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np


def z_of(confidence: float) -> float:
    """The two-sided normal quantile: 1.96 for 0.95."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence {confidence!r} must be between 0 and 1, for example 0.95")
    return NormalDist().inv_cdf((1 + confidence) / 2)


def t_of(confidence: float, df: float) -> float:
    """The two-sided Student t quantile with ``df`` degrees of freedom, from the normal one by
    the Cornish-Fisher expansion (Abramowitz and Stegun 26.7.5: within 1e-4 of the exact value
    from 10 degrees of freedom up, 0.003 at 5), so the app needs no scipy."""
    z = z_of(confidence)
    z3, z5, z7, z9 = z ** 3, z ** 5, z ** 7, z ** 9
    return (z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df ** 2)
            + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df ** 3)
            + (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * df ** 4))


def wilson(share: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a share observed on ``n`` items (``n`` may be an effective,
    non-integer size): (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)."""
    if n <= 0:
        raise ValueError("a Wilson interval needs at least one label")
    z = z_of(confidence)
    centre = share + z * z / (2 * n)
    spread = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    d = 1 + z * z / n
    return max(0.0, (centre - spread) / d), min(1.0, (centre + spread) / d)


def kish_n(w: np.ndarray) -> float:
    """Kish's effective sample size of weights: (sum w)^2 / sum w^2 (n itself when all are equal)."""
    return float(w.sum() ** 2 / (w * w).sum())


def _weights(w: np.ndarray | None, n: int) -> np.ndarray:
    if w is None:
        return np.ones(n)
    w = np.asarray(w, dtype=float)
    if len(w) != n or (w <= 0).any():
        raise ValueError("weights must be positive, one per label")
    return w / w.sum() * n


@dataclass(frozen=True)
class PPI:
    value: float
    low: float
    high: float
    se: float  # standard error of the estimate
    lam: float  # the power-tuning weight of the judge: 0 = labels alone, 1 = plain PPI
    n: int
    N: int

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def tuned_lambda(y: np.ndarray, f: np.ndarray, f_all: np.ndarray, w: np.ndarray | None = None) -> float:
    """PPI++'s variance-minimising weight of the judge, Cov(y, f) / ((1 + n/N) Var(f)), clipped to
    [0, 1].  Var(f) is taken over labelled and population verdicts together, like ``ppi_py``."""
    n, N = len(y), len(f_all)
    w = _weights(w, n)
    first = f_all.mean() + (w * (y - f)).mean()  # the lam = 1 estimate: only centres the weighted terms
    g, gh, gu = w * (y - first), w * (f - first), f_all - first
    cov = float(((g - g.mean()) * (gh - gh.mean())).mean())
    var = float(np.var(np.concatenate([gh, gu]), ddof=1))
    if var == 0:
        raise ValueError("the judge's verdicts are all the same: it carries no information")
    return float(np.clip(cov / ((1 + n / N) * var), 0.0, 1.0))


def _augmented(y: np.ndarray, f: np.ndarray, w: np.ndarray | None, pseudo: float):
    """The labels with ``pseudo`` pseudo-labels added in each (label, verdict) cell, weight 1 each
    against real weights scaled to sum to n; unchanged when ``pseudo`` is 0."""
    n = len(y)
    ww = _weights(w, n)
    if not pseudo:
        return y, f, ww
    cells = np.array([0.0, 0.0, 1.0, 1.0]), np.array([0.0, 1.0, 0.0, 1.0])
    return (np.concatenate([y, cells[0]]), np.concatenate([f, cells[1]]),
            np.concatenate([ww, np.full(4, float(pseudo))]))


def ppi_mean(y, f, f_all, confidence: float = 0.95, w=None, lam: float | None = None, pseudo: float = 0.0,
             student: bool = False) -> PPI:
    """theta = lam * mean(f_all) + mean(w * (y - lam * f)), with a normal interval from
    se^2 = Var(lam * f_all) / N + Var(w * (y - lam * f)) / n (variances with divisor n).

    ``pseudo`` > 0 estimates lambda and the rectifier's variance (never theta) as if ``pseudo``
    extra labels sat in each of the four (label, verdict) cells, as Agresti and Caffo's interval
    adds one success and one failure per group: with few positive labels, or few disagreements,
    the plain interval is too narrow (bench/bench_estimate.py).  ``student`` takes the t quantile
    with n - 1 degrees of freedom instead of the normal one.  The defaults are ``ppi_py``'s interval."""
    y, f, f_all = (np.asarray(a, dtype=float) for a in (y, f, f_all))
    n, N = len(y), len(f_all)
    if n == 0:
        raise ValueError("no labels: PPI needs at least two")
    if len(f) != n:
        raise ValueError("y and f must be the labels and verdicts of the same items")
    if N == 0:
        raise ValueError("no judged population")
    ya, fa, wa = _augmented(y, f, w, pseudo)
    lam = tuned_lambda(ya, fa, f_all, wa) if lam is None else lam
    ww = _weights(w, n)
    value = float(lam * f_all.mean() + (ww * (y - lam * f)).mean())
    wa = wa / wa.sum() * len(ya)
    rectifier = wa * (ya - lam * fa)
    se = math.sqrt(float((lam * f_all).var()) / N + float(rectifier.var()) / n)
    z = t_of(confidence, n - 1) if student and n > 1 else z_of(confidence)
    return PPI(value, value - z * se, value + z * se, se, lam, n, N)


def effective_labels(ppi: PPI, label_variance: float) -> float | None:
    """The number of labels alone that would give the same standard error: Var(y) / se^2."""
    if ppi.se == 0:
        return None
    return label_variance / ppi.se ** 2


# --- the labelling planner ------------------------------------------------------------------------


def _smallest(n_from: int, n_max: int, fits) -> int | None:
    """The smallest n in [n_from, n_max] with fits(n) (fits is monotone), or None."""
    if n_from > n_max or not fits(n_max):
        return None
    lo, hi = n_from, n_max
    while lo < hi:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def labels_needed_wilson(share: float, target: float, confidence: float, n_now: int, n_max: int) -> int | None:
    """Labels in all for a Wilson half-width at most ``target`` if the share stays as it is;
    None when even ``n_max`` (the whole population) is not enough."""
    def fits(n: int) -> bool:
        low, high = wilson(share, n, confidence)
        return (high - low) / 2 <= target
    return _smallest(max(n_now, 1), n_max, fits)


def labels_needed_ppi(y, f, f_all, target: float, confidence: float, n_max: int, w=None,
                      pseudo: float = 0.0, student: bool = False) -> int | None:
    """Labels in all for a PPI++ half-width at most ``target``, if the judge's agreement with the
    labels (the weighted moments of the current sample) stays as it is and lambda is re-tuned
    for each n; None when ``n_max`` labels are not enough (judge more items)."""
    y, f, f_all = (np.asarray(a, dtype=float) for a in (y, f, f_all))
    n, N = len(y), len(f_all)
    y, f, ww = _augmented(y, f, w, pseudo)
    ww = ww / ww.sum() * len(y)
    a, b = ww * y, ww * f
    var_y, var_f, var_all = float(a.var()), float(b.var()), float(f_all.var())
    cov = float(((a - a.mean()) * (b - b.mean())).mean())
    def fits(m: int) -> bool:
        z = t_of(confidence, m - 1) if student and m > 1 else z_of(confidence)
        lam = 0.0 if var_f == 0 else float(np.clip(cov / ((1 + m / N) * var_f), 0, 1))
        se2 = lam * lam * var_all / N + (var_y - 2 * lam * cov + lam * lam * var_f) / m
        return z * math.sqrt(max(se2, 0.0)) <= target
    return _smallest(max(n, 1), n_max, fits)
