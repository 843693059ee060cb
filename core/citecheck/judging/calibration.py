"""Calibrating a judge against human labels (docs/judge.md).

Conventions:
- The human label of an item is its adjudicated label if any, else the majority of at least
  ``overlap`` reviewers' labels, else its single label (``labelling.consensus``); retracted labels
  never count.  "can't tell" and uncited-sentence labels are left out, and so are stale labels and
  adjudications (the item changed since) when fingerprints are known.  The report says how many
  items each rule settled and under which guidelines versions their labels were made.
- Three classes, ordered supported < partial < not_supported.  The binary view asks the
  question a judge exists for: is the citation **not supported**?  ``not_supported`` is the
  positive class; ``supported`` and ``partial`` are negative.  TPR is the share of
  not-supported items the judge catches; TNR the share of the others it leaves alone.
- Every figure has a bootstrap 95% percentile interval (items resampled with replacement,
  2,000 draws, fixed seed) and the number of items behind it.
- Items split into dev and test by a hash of the item key (``split_of``): iterate on the
  prompt against dev, quote test.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from citecheck.judging.verdicts import VERDICTS, Verdict
from citecheck.labelling import span_agreement
from citecheck.labelling.agreement import krippendorff_alpha
from citecheck.labelling.consensus import Resolution, counts_text, resolve, rule_counts
from citecheck.labelling.events import Adjudication
from citecheck.labelling.labels import Label
from citecheck.labelling.span_agreement import SpanAgreement
from citecheck.reports.rates import json_rate

CLASSES = VERDICTS  # supported, partial, not_supported: in this order
POSITIVE = "not_supported"
BOOTSTRAP = 2000
SEED = 20261202
PROPORTIONS = ("accuracy", "tpr", "tnr", "precision", "recall")  # Wilson score intervals: valid at 0 and 1
MIN_BOOTSTRAP_N = 10  # below this many items kappa and F1 get no interval: a bootstrap of a handful says nothing


def split_of(item_key: str, dev_share: float = 0.5) -> str:
    """``dev`` or ``test``, fixed for an item forever (a hash of its key)."""
    h = int.from_bytes(hashlib.sha256(item_key.encode("utf-8")).digest()[:8], "big") / 2**64
    return "dev" if h < dev_share else "test"


def resolutions(labels: Iterable[Label], fingerprints: Mapping[str, str] | None, *,
                adjudicated: Mapping[str, Adjudication], overlap: int) -> dict[str, Resolution]:
    """How each citation item's human label is settled (``labelling.consensus.resolve``): the one
    settle rule of calibrate, estimate, sample, export and every page.  ``adjudicated`` and
    ``overlap`` have no default, so no surface can leave adjudications out by forgetting them."""
    cited = [lab for lab in labels if lab.citation is not None]
    adj = {k: a for k, a in (adjudicated or {}).items() if a.citation is not None}
    return resolve(cited, adj, overlap, fingerprints)


def human_labels(labels: Iterable[Label], fingerprints: Mapping[str, str] | None, *,
                 adjudicated: Mapping[str, Adjudication], overlap: int) -> dict[str, str]:
    """The human label of each citation item (adjudicated, else majority of at least ``overlap``,
    else single), without ``cant_tell``; with ``fingerprints``, labels of items that changed since
    are dropped."""
    return {k: r.label for k, r in resolutions(labels, fingerprints, adjudicated=adjudicated, overlap=overlap).items()
            if r.label in CLASSES}


def settled_text(labels: Iterable[Label], fingerprints: Mapping[str, str] | None,
                 adjudicated: Mapping[str, Adjudication], overlap: int) -> str:
    """How the cited items' human labels are settled, in the sentence every surface gives."""
    counts = rule_counts(resolutions(labels, fingerprints, adjudicated=adjudicated, overlap=overlap).values())
    return (f"Human labels of cited items (as Calibration and `citecheck calibrate` settle them): "
            f"{counts_text(counts)} (overlap {overlap}).")


def guidelines_versions(settled: Mapping[str, Resolution], used: Iterable[str]) -> dict[str, int]:
    """How many of the labels behind the ``used`` items were made under each guidelines version
    ("unknown": labels written before labels recorded it)."""
    out: dict[str, int] = {}
    for key in used:
        for lab in settled[key].labels:
            name = lab.guidelines or "unknown"
            out[name] = out.get(name, 0) + 1
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class Pairs:
    keys: tuple[str, ...]
    human: np.ndarray  # class indices 0..2
    judge: np.ndarray
    unscored: int  # labelled items the judge returned unscored for
    unjudged: int  # labelled items with no verdict at all


def latest_by_item(verdicts: Iterable[Verdict]) -> dict[str, Verdict]:
    """The verdict that counts per item (one judge and prompt version): the last ordinary run written.
    Repeats (``repeat`` > 0, from ``judge --repeat K``) only measure self-consistency: they never count
    here, so no item counts twice and a repeated judge is measured as it runs in use, once per item."""
    return {v.item: v for v in verdicts if v.repeat == 0}


def join(human: Mapping[str, str], latest: Mapping[str, Verdict], split: str | None = None) -> Pairs:
    """Pair each labelled item with the judge's verdict on it (``latest_by_item``)."""
    keys, h, j = [], [], []
    unscored = unjudged = 0
    for key, label in sorted(human.items()):
        if split is not None and split_of(key) != split:
            continue
        v = latest.get(key)
        if v is None:
            unjudged += 1
        elif not v.scored:
            unscored += 1
        else:
            keys.append(key)
            h.append(CLASSES.index(label))
            j.append(CLASSES.index(v.verdict))
    return Pairs(tuple(keys), np.array(h, dtype=int), np.array(j, dtype=int), unscored, unjudged)


# --- figures -------------------------------------------------------------------------------------


def confusion(h: np.ndarray, j: np.ndarray, k: int = 3) -> np.ndarray:
    """Rows: human class; columns: judge class."""
    m = np.zeros((k, k), dtype=int)
    np.add.at(m, (h, j), 1)
    return m


def cohen_kappa(h: np.ndarray, j: np.ndarray, k: int = 3, weights: str | None = None) -> float | None:
    """Cohen's kappa; ``weights="linear"`` for the weighted form (disagreement |i - j|)."""
    if len(h) == 0:
        return None
    m = confusion(h, j, k).astype(float)
    n = m.sum()
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / n
    idx = np.arange(k)
    w = np.abs(idx[:, None] - idx[None, :]).astype(float) if weights == "linear" else (idx[:, None] != idx[None, :]).astype(float)
    denominator = (w * expected).sum()
    if denominator == 0:
        return None  # no variation at all: kappa is undefined
    return float(1 - (w * m).sum() / denominator)


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def binary(h: np.ndarray, j: np.ndarray) -> dict[str, float | None]:
    pos = CLASSES.index(POSITIVE)
    hp, jp = h == pos, j == pos
    tp = int((hp & jp).sum())
    fn = int((hp & ~jp).sum())
    fp = int((~hp & jp).sum())
    tn = int((~hp & ~jp).sum())
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    f1 = (2 * precision * recall / (precision + recall)) if precision and recall else (0.0 if precision == 0 or recall == 0 else None)
    return {"tp": tp, "fn": fn, "fp": fp, "tn": tn, "tpr": recall, "tnr": _ratio(tn, tn + fp),
            "precision": precision, "recall": recall, "f1": f1}


def _statistics(h: np.ndarray, j: np.ndarray) -> dict[str, float | None]:
    b = binary(h, j)
    return {
        "accuracy": float((h == j).mean()) if len(h) else None,
        "kappa": cohen_kappa(h, j),
        "weighted_kappa": cohen_kappa(h, j, weights="linear"),
        "tpr": b["tpr"], "tnr": b["tnr"], "precision": b["precision"], "recall": b["recall"], "f1": b["f1"],
    }


@dataclass(frozen=True)
class Estimate:
    value: float | None
    low: float | None
    high: float | None
    n: int  # items behind the figure
    why: str = ""  # with a value but no interval: why none is claimed

    def to_dict(self) -> dict:
        def r(x):
            return json_rate(x)
        out = {"value": r(self.value), "ci95": [r(self.low), r(self.high)], "n": self.n}
        if self.why:
            out["no_interval"] = self.why
        return out

    def interval_text(self) -> str:
        """``[0.61, 0.83]``, or why there is no interval (the words every surface uses)."""
        if self.low is None or self.high is None:
            return f"(no interval: {self.why})" if self.why else ""
        return f"[{self.low:.2f}, {self.high:.2f}]"


def _counts(h: np.ndarray, j: np.ndarray) -> dict[str, tuple[int, int]]:
    """(successes, items) behind each share in PROPORTIONS."""
    pos = CLASSES.index(POSITIVE)
    hp, jp = h == pos, j == pos
    tp, fn = int((hp & jp).sum()), int((hp & ~jp).sum())
    fp, tn = int((~hp & jp).sum()), int((~hp & ~jp).sum())
    return {"accuracy": (int((h == j).sum()), len(h)), "tpr": (tp, tp + fn), "recall": (tp, tp + fn),
            "tnr": (tn, tn + fp), "precision": (tp, tp + fp)}


def _wilson(successes: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval; it never has zero width and always holds successes / n."""
    from citecheck.judging.ppi import wilson

    share = successes / n
    low, high = wilson(share, n, 0.95)
    return min(low, share), max(high, share)


def bootstrap_interval(point: float | None, values: Sequence[float], n: int) -> tuple[float | None, float | None, str]:
    """A percentile bootstrap interval (2.5th and 97.5th), or (None, None, why) when it would
    claim more than the data hold: fewer than MIN_BOOTSTRAP_N items, fewer than 20 usable
    resamples, every resample the same value (a zero-width interval), or an interval that misses
    the estimate itself."""
    if point is None:
        return None, None, ""
    if n < MIN_BOOTSTRAP_N:
        return None, None, f"too few items for an interval (under {MIN_BOOTSTRAP_N})"
    if len(values) < 20:
        return None, None, "too few resamples where the figure is defined"
    low, high = float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))
    if not high > low:
        return None, None, "every resample gives the same value: too little variation for an interval"
    if not low <= point <= high:
        return None, None, "the resamples do not cover the estimate: too few items for an interval"
    return low, high, ""


def _denominators(h: np.ndarray, j: np.ndarray) -> dict[str, int]:
    pos = CLASSES.index(POSITIVE)
    n = len(h)
    hp, jp = int((h == pos).sum()), int((j == pos).sum())
    return {"accuracy": n, "kappa": n, "weighted_kappa": n, "tpr": hp, "recall": hp, "tnr": n - hp,
            "precision": jp, "f1": n}


def bootstrap(h: np.ndarray, j: np.ndarray, draws: int = BOOTSTRAP, seed: int = SEED) -> dict[str, Estimate]:
    point = _statistics(h, j)
    samples: dict[str, list[float]] = {k: [] for k in point}
    if len(h):
        rng = np.random.default_rng(seed)
        for _ in range(draws):
            idx = rng.integers(0, len(h), len(h))
            for name, value in _statistics(h[idx], j[idx]).items():
                if value is not None and not math.isnan(value):
                    samples[name].append(value)
    dens = _denominators(h, j)
    counts = _counts(h, j)
    out = {}
    for name, value in point.items():
        if name in PROPORTIONS:  # a share: the Wilson interval, valid at 0 and 1 (a bootstrap collapses there)
            k, n = counts[name]
            low, high = _wilson(k, n) if n else (None, None)
            out[name] = Estimate(value, low, high, dens[name])
            continue
        low, high, why = bootstrap_interval(value, samples[name], dens[name])
        out[name] = Estimate(value, low, high, dens[name], why)
    return out


def rogan_gladen(raw_rate: float, tpr: float, tnr: float) -> float | None:
    """The true rate of the positive class from a judge's raw rate: (raw + TNR - 1) / (TPR + TNR - 1),
    clipped to [0, 1]; None when the judge is no better than chance (TPR + TNR <= 1)."""
    denominator = tpr + tnr - 1
    if denominator <= 0:
        return None
    return min(1.0, max(0.0, (raw_rate + tnr - 1) / denominator))


NO_LABELLED_PAIRS = "no labelled item has a verdict from this judge to measure its TPR and TNR on"
NO_CORRECTION = ("TPR or TNR cannot be measured (labels of one class), or the judge is no better than chance "
                 "(TPR + TNR <= 1)")


def corrected_rate(pairs: Pairs, unlabelled: Sequence[str], draws: int = BOOTSTRAP, seed: int = SEED) -> Estimate:
    """Rogan-Gladen estimate of the share of not-supported citations among unlabelled items from
    the judge's verdicts on them (``unlabelled``: verdict classes), with a bootstrap interval
    that resamples both the labelled pairs (TPR, TNR) and the unlabelled verdicts (raw rate).
    Without a value, ``why`` says why none can be given (the words every surface shows)."""
    u = np.array([v == POSITIVE for v in unlabelled], dtype=bool)
    if len(u) == 0:
        return Estimate(None, None, None, 0)
    if len(pairs.human) == 0:
        return Estimate(None, None, None, len(u), NO_LABELLED_PAIRS)
    b = binary(pairs.human, pairs.judge)
    if b["tpr"] is None or b["tnr"] is None:
        return Estimate(None, None, None, len(u), NO_CORRECTION)
    point = rogan_gladen(float(u.mean()), b["tpr"], b["tnr"])
    if point is None:
        return Estimate(None, None, None, len(u), NO_CORRECTION)
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(draws):
        idx = rng.integers(0, len(pairs.human), len(pairs.human))
        bb = binary(pairs.human[idx], pairs.judge[idx])
        raw = float(u[rng.integers(0, len(u), len(u))].mean())
        if bb["tpr"] is not None and bb["tnr"] is not None:
            est = rogan_gladen(raw, bb["tpr"], bb["tnr"])
            if est is not None:
                values.append(est)
    low, high, why = bootstrap_interval(point, values, min(len(u), len(pairs.human)))
    return Estimate(point, low, high, len(u), why)


# --- agreement between reviewers ---------------------------------------------------------------


@dataclass(frozen=True)
class Agreement:
    reviewers: tuple[str, ...]
    shared_items: int  # items labelled by at least two reviewers
    kappa: float | None  # Cohen's kappa, when exactly two reviewers share items
    alpha: float | None  # Krippendorff's alpha (nominal), any number of reviewers
    pairwise: dict = field(default_factory=dict)


def reviewer_agreement(labels: Iterable[Label]) -> Agreement:
    current: dict[tuple[str, str], str] = {}
    for label in labels:
        if label.citation is not None and label.label in CLASSES:
            current[(label.item, label.reviewer)] = label.label
    by_item: dict[str, dict[str, int]] = {}
    for (item, reviewer), value in current.items():
        by_item.setdefault(item, {})[reviewer] = CLASSES.index(value)
    shared = {item: r for item, r in by_item.items() if len(r) >= 2}
    reviewers = tuple(sorted({rv for r in shared.values() for rv in r}))
    pairwise = {}
    for i, a in enumerate(reviewers):
        for b in reviewers[i + 1:]:
            both = [(r[a], r[b]) for r in shared.values() if a in r and b in r]
            if both:
                h, j = np.array([x for x, _ in both]), np.array([y for _, y in both])
                pairwise[f"{a} / {b}"] = {"items": len(both), "kappa": cohen_kappa(h, j)}
    kappa = next(iter(pairwise.values()))["kappa"] if len(reviewers) == 2 and pairwise else None
    alpha = krippendorff_alpha([list(r.values()) for r in shared.values()], 3) if shared else None
    return Agreement(reviewers, len(shared), kappa, alpha, pairwise)


# --- the report ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    judge: str
    prompt_version: str
    split: str
    pairs: Pairs
    figures: dict[str, Estimate]
    corrected: Estimate | None
    raw_rate: float | None
    agreement: Agreement
    verdicts: Mapping[str, Verdict] = field(default_factory=dict)  # the judge's verdict per item
    rules: Mapping[str, int] = field(default_factory=dict)  # items per consensus rule (review.consensus)
    guidelines: Mapping[str, int] = field(default_factory=dict)  # labels behind the pairs per guidelines version
    spans: SpanAgreement | None = None  # reviewers' agreement on the words they marked unsupported

    @property
    def matrix(self) -> np.ndarray:
        return confusion(self.pairs.human, self.pairs.judge)

    def to_dict(self) -> dict:
        b = binary(self.pairs.human, self.pairs.judge)
        return {
            "record": "calibration", "calibration_version": 1,
            "judge": self.judge, "prompt_version": self.prompt_version, "split": self.split,
            "items": len(self.pairs.keys), "unscored": self.pairs.unscored, "unjudged": self.pairs.unjudged,
            "classes": list(CLASSES), "positive_class": POSITIVE,
            "confusion": self.matrix.tolist(),
            "binary": {k: b[k] for k in ("tp", "fn", "fp", "tn")},
            "figures": {k: v.to_dict() for k, v in self.figures.items()},
            "unlabelled_raw_not_supported_rate": json_rate(self.raw_rate),
            "corrected_not_supported_rate": None if self.corrected is None else self.corrected.to_dict(),
            "human_label_rules": dict(self.rules), "guidelines_versions": dict(self.guidelines),
            "reviewers": {"reviewers": list(self.agreement.reviewers), "shared_items": self.agreement.shared_items,
                          "cohen_kappa": self.agreement.kappa, "krippendorff_alpha": self.agreement.alpha,
                          "pairwise": self.agreement.pairwise,
                          "span_agreement": None if self.spans is None else span_agreement.to_dict(self.spans)},
        }

    def to_text(self) -> str:
        def fmt(e: Estimate) -> str:
            if e.value is None:
                return f"n/a: {e.why} (n={e.n})" if e.why else f"n/a (n={e.n})"
            ci = e.interval_text()
            return f"{e.value:.2f}{' ' + ci if ci else ''} (n={e.n})"

        p = self.pairs
        lines = [f"judge {self.judge}, prompt {self.prompt_version}, split {self.split}: {len(p.keys)} items "
                 f"with a human label and a verdict ({p.unscored} unscored, {p.unjudged} not judged)"]
        if self.rules:
            lines.append(f"human labels: {counts_text(self.rules)}")
        if self.guidelines:
            lines.append("guidelines versions of those labels: "
                         + ", ".join(f"{name} ({n})" for name, n in self.guidelines.items()))
        lines.append("")
        lines.append("confusion (rows: human, columns: judge)")
        lines.append(f"{'':>15}" + "".join(f"{c:>15}" for c in CLASSES))
        for c, row in zip(CLASSES, self.matrix):
            lines.append(f"{c:>15}" + "".join(f"{x:>15}" for x in row))
        b = binary(p.human, p.judge)
        lines.append("")
        lines.append(f"binary, positive = {POSITIVE}: TP {b['tp']}  FN {b['fn']}  FP {b['fp']}  TN {b['tn']}")
        names = {"accuracy": "accuracy (3 classes)", "kappa": "Cohen's kappa", "weighted_kappa": "linearly weighted kappa",
                 "tpr": "TPR (not supported caught)", "tnr": "TNR (others left alone)", "precision": "precision",
                 "recall": "recall", "f1": "F1"}
        for key, title in names.items():
            lines.append(f"  {title:<28} {fmt(self.figures[key])}")
        if self.corrected is not None:
            lines.append("")
            raw = "n/a" if self.raw_rate is None else f"{self.raw_rate:.2f}"
            lines.append(f"unlabelled items: raw not-supported rate {raw}; Rogan-Gladen corrected {fmt(self.corrected)}")
        a = self.agreement
        lines.append("")
        if a.shared_items:
            kappa = "n/a" if a.kappa is None else f"{a.kappa:.2f}"
            alpha = "n/a" if a.alpha is None else f"{a.alpha:.2f}"
            lines.append(f"reviewers {', '.join(a.reviewers)} share {a.shared_items} items: Cohen's kappa {kappa}, "
                         f"Krippendorff's alpha {alpha} (the ceiling a judge can be expected to reach)")
        else:
            lines.append("no item was labelled by two reviewers: human agreement unknown")
        if self.spans is not None and self.spans.pairs:
            lines.extend(span_agreement.agreement_lines(self.spans))
        return "\n".join(lines) + "\n"


def calibrate(labels: Sequence[Label], verdicts: Sequence[Verdict], judge: str, prompt_version: str,
              split: str = "all", fingerprints: Mapping[str, str] | None = None,
              draws: int = BOOTSTRAP, *, adjudicated: Mapping[str, Adjudication], overlap: int) -> Calibration:
    """Everything the calibration report shows, for one judge and prompt version.  ``labels``: the
    labels that count (retracted ones left out); ``adjudicated``: the adjudication per item."""
    latest = latest_by_item(v for v in verdicts if v.judge == judge and v.prompt_version == prompt_version)
    settled = resolutions(labels, fingerprints, adjudicated=adjudicated, overlap=overlap)
    human = {k: r.label for k, r in settled.items() if r.label in CLASSES}
    pairs = join(human, latest, None if split == "all" else split)
    unlabelled = [v.verdict for key, v in latest.items() if key not in human and v.scored]
    corrected = corrected_rate(pairs, unlabelled, draws) if unlabelled else None
    raw = sum(v == POSITIVE for v in unlabelled) / len(unlabelled) if unlabelled else None
    return Calibration(judge, prompt_version, split, pairs, bootstrap(pairs.human, pairs.judge, draws), corrected,
                       raw, reviewer_agreement(labels), latest, rule_counts(settled.values()),
                       guidelines_versions(settled, pairs.keys), span_agreement.span_agreement(labels, fingerprints))
