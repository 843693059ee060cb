"""Agreement between reviewers on the items they both labelled: Cohen's kappa per pair of
reviewers and Krippendorff's alpha over everyone, nominal (every label its own category).

The functions are checked against scikit-learn's ``cohen_kappa_score``, the ``krippendorff``
package and the published worked examples (tests/test_agreement.py).  Each figure comes with its
``n``: the items it rests on.  A figure is None when it is undefined (no items, or no variation
at all, so chance agreement is already perfect).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from citecheck.labelling.labels import Label


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters' nominal labels on the same items (``a[i]``, ``b[i]``)."""
    if len(a) != len(b):
        raise ValueError("both raters must label the same items")
    if not a:
        return None
    cats = sorted(set(a) | set(b))
    idx = {c: n for n, c in enumerate(cats)}
    m = np.zeros((len(cats), len(cats)))
    np.add.at(m, ([idx[x] for x in a], [idx[y] for y in b]), 1)
    n = m.sum()
    observed = np.trace(m) / n
    expected = float((m.sum(axis=1) * m.sum(axis=0)).sum()) / (n * n)
    if expected == 1:
        return None
    return float((observed - expected) / (1 - expected))


def krippendorff_alpha(units: Sequence[Sequence[int]], k: int | None = None, metric: str = "nominal") -> float | None:
    """Krippendorff's alpha for units each rated by any number of coders (values 0..k-1);
    units with fewer than two ratings are ignored.  ``metric``: nominal or interval."""
    if k is None:
        k = 1 + max((int(v) for u in units for v in u), default=0)
    coincidence = np.zeros((k, k))
    for ratings in units:
        m = len(ratings)
        if m < 2:
            continue
        counts = np.bincount(np.asarray(ratings, dtype=int), minlength=k).astype(float)
        pairs = np.outer(counts, counts) - np.diag(counts)
        coincidence += pairs / (m - 1)
    n = coincidence.sum()
    if n <= 1:
        return None
    marginals = coincidence.sum(axis=1)
    idx = np.arange(k)
    delta = ((idx[:, None] - idx[None, :]) ** 2).astype(float) if metric == "interval" else (idx[:, None] != idx[None, :]).astype(float)
    observed = (coincidence * delta).sum() / n
    expected = (np.outer(marginals, marginals) * delta).sum() / (n * (n - 1))
    if expected == 0:
        return None
    return float(1 - observed / expected)


@dataclass(frozen=True, slots=True)
class PairAgreement:
    first: str
    second: str
    n: int  # items both labelled
    kappa: float | None


@dataclass(frozen=True, slots=True)
class TeamAgreement:
    pairs: tuple[PairAgreement, ...]  # every pair of reviewers with an item in common, by name
    alpha: float | None  # Krippendorff's alpha, nominal, over every item with two or more labels
    n: int  # items with two or more labels (the units alpha rests on)
    values: int  # labels on those items (the pairable values)


def table(current: Iterable[Label], fingerprints: Mapping[str, str] | None = None) -> dict[str, dict[str, str]]:
    """Per item, each reviewer's label, from the labels that count (one per item and reviewer,
    e.g. ``labels.latest(...).values()``); stale ones left out when ``fingerprints`` are given."""
    out: dict[str, dict[str, str]] = {}
    for lab in current:
        if fingerprints is not None and lab.item in fingerprints and fingerprints[lab.item] != lab.fingerprint:
            continue
        out.setdefault(lab.item, {})[lab.reviewer] = lab.label
    return out


def team_agreement(by_item: Mapping[str, Mapping[str, str]]) -> TeamAgreement:
    """Kappa per pair and alpha over all, from :func:`table`'s item -> {reviewer: label}."""
    shared = {item: r for item, r in by_item.items() if len(r) >= 2}
    reviewers = sorted({who for r in shared.values() for who in r})
    pairs = []
    for i, a in enumerate(reviewers):
        for b in reviewers[i + 1:]:
            both = [(r[a], r[b]) for r in shared.values() if a in r and b in r]
            if both:
                pairs.append(PairAgreement(a, b, len(both), cohen_kappa([x for x, _ in both], [y for _, y in both])))
    cats = sorted({v for r in shared.values() for v in r.values()})
    index = {c: n for n, c in enumerate(cats)}
    units = [[index[v] for v in r.values()] for r in shared.values()]
    alpha = krippendorff_alpha(units, max(len(cats), 1)) if units else None
    return TeamAgreement(tuple(pairs), alpha, len(shared), sum(len(u) for u in units))
