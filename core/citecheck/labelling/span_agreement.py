"""Span-level agreement between reviewers: how far the words two reviewers marked as not supported
(labels' ``spans``) are the same characters.

For one item and two reviewers with marked sets of characters A and B, the overlap F1 is
2|A∩B| / (|A| + |B|): 1 when they marked the same characters, 0 when nothing they marked
overlaps; it is symmetric (either reviewer can be the "reference").  A pair's figure pools its
items (the sums of the intersections and of the sizes over every item both marked, so a long
span weighs as many characters as it holds), and the pooled figure pools every pair's items.
Only items where both reviewers' current labels mark spans count, and each figure carries ``n``,
the items it rests on.  Stale labels (their item changed) are left out when fingerprints are given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations

from citecheck.labelling.labels import Label, latest
from citecheck.labelling.marked_spans import Spans


def marked_chars(spans: Spans) -> int:
    return sum(b - a for a, b in spans)


def overlap_chars(a: Spans, b: Spans) -> int:
    """Characters inside both sets of spans (each sorted and not overlapping): one merge pass."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, hi - lo)
        if a[i][1] <= b[j][1]:
            i += 1
        else:
            j += 1
    return total


def overlap_f1(a: Spans, b: Spans) -> float | None:
    """The overlap F1 of two sets of marked spans; None when neither marks anything."""
    size = marked_chars(a) + marked_chars(b)
    return 2 * overlap_chars(a, b) / size if size else None


@dataclass(frozen=True, slots=True)
class SpanFigure:
    """An overlap F1 and the number of items it rests on (``f1`` None when ``n`` is 0)."""

    f1: float | None
    n: int
    overlap: int  # characters both marked, summed over the items
    marked: int  # characters each marked, summed over both reviewers and the items


@dataclass(frozen=True, slots=True)
class SpanAgreement:
    pairs: dict[tuple[str, str], SpanFigure]  # (reviewer, reviewer) in name order
    pooled: SpanFigure  # over every pair's items: its n counts (item, pair)s
    items: int  # the items at least two reviewers marked


def _figure(overlap: int, marked: int, n: int) -> SpanFigure:
    return SpanFigure(2 * overlap / marked if marked else None, n, overlap, marked)


def span_agreement(labels: Iterable[Label], fingerprints: Mapping[str, str] | None = None) -> SpanAgreement:
    """Overlap F1 of the marked characters per pair of reviewers and pooled over the pairs.
    ``labels``: labels that count (or the whole event stream); the latest per (item, reviewer)
    is used, and with ``fingerprints`` (item key to its current fingerprint) stale ones are left out."""
    marked: dict[str, dict[str, Spans]] = {}
    for (key, who), label in latest(list(labels)).items():
        if not label.spans or (fingerprints is not None and fingerprints.get(key) != label.fingerprint):
            continue
        marked.setdefault(key, {})[who] = label.spans
    sums: dict[tuple[str, str], list[int]] = {}
    for by_reviewer in marked.values():
        for x, y in combinations(sorted(by_reviewer), 2):
            s = sums.setdefault((x, y), [0, 0, 0])
            s[0] += overlap_chars(by_reviewer[x], by_reviewer[y])
            s[1] += marked_chars(by_reviewer[x]) + marked_chars(by_reviewer[y])
            s[2] += 1
    pairs = {pair: _figure(*s) for pair, s in sorted(sums.items())}
    pooled = _figure(sum(s[0] for s in sums.values()), sum(s[1] for s in sums.values()), sum(s[2] for s in sums.values()))
    return SpanAgreement(pairs, pooled, sum(1 for m in marked.values() if len(m) > 1))


def agreement_lines(result: SpanAgreement) -> list[str]:
    """The figures as lines of text, for the command line."""
    def f1(fig: SpanFigure) -> str:
        return "n/a" if fig.f1 is None else f"{fig.f1:.3f}"

    if not result.pairs:
        return ["span agreement: no item has marked spans from two reviewers"]
    out = ["span agreement (overlap F1 of the characters marked as not supported):"]
    out += [f"  {a} / {b}: {f1(fig)} (n={fig.n} item(s))" for (a, b), fig in result.pairs.items()]
    out.append(f"  pooled: {f1(result.pooled)} (n={result.pooled.n} item-pair(s) over {result.items} item(s))")
    return out


def to_dict(result: SpanAgreement) -> dict:
    """The figures as JSON: ``pairs`` (one object per pair of reviewers), ``pooled`` and ``items``."""
    def fig(f: SpanFigure) -> dict:
        return {"f1": f.f1, "n": f.n, "overlap_chars": f.overlap, "marked_chars": f.marked}

    return {"pairs": [{"reviewers": list(pair), **fig(f)} for pair, f in result.pairs.items()],
            "pooled": fig(result.pooled), "items": result.items}
