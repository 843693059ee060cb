"""The not-supported rate of a judged population, four ways, side by side (docs/estimate.md).

``estimate`` joins the judged population (citation items of the logs with a scored verdict of
one judge and prompt version), the human labels and, when given, the calibration sample the
labels were drawn from, and returns an ``Estimates``: for the citation rate and the failing-answer
rate, the labels alone (Wilson), the judge alone (biased, no interval), Rogan-Gladen and PPI++,
each with its n and N, what was left out and why, and the labelling planner.

Bad input never produces an interval that pretends to know: the row says why it has none.
Text, JSON and HTML of an ``Estimates`` are in ``estimate_report``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from citecheck.errors import CitecheckError
from citecheck.judging import ppi as ppi_stats
from citecheck.judging.calibration import (
    CLASSES,
    NO_CORRECTION,
    POSITIVE,
    Pairs,
    corrected_rate,
    latest_by_item,
    resolutions,
)
from citecheck.judging.verdicts import Verdict
from citecheck.labelling.consensus import rule_counts
from citecheck.labelling.events import Adjudication
from citecheck.labelling.items import Item
from citecheck.labelling.labels import Label
from citecheck.labelling.sample import Sample

ESTIMATE_VERSION = 1
PSEUDO = 1.0  # pseudo-labels per (label, verdict) cell in PPI++'s variance (ppi.ppi_mean; docs/estimate.md)
METHODS = ("labels", "judge", "rogan_gladen", "ppi")
TITLES = {"labels": "labels alone (Wilson)", "judge": "judge alone (biased)",
          "rogan_gladen": "Rogan-Gladen corrected", "ppi": "PPI++ (power-tuned)"}
UNITS = {"citations": "not-supported citations", "answers": "failing answers"}


class EstimateError(CitecheckError, ValueError):
    """Inputs no estimate can be made from (the message says what to do)."""


@dataclass(frozen=True)
class Row:
    method: str
    value: float | None
    low: float | None
    high: float | None
    n: int  # labels behind the figure
    N: int  # judged population
    note: str = ""  # why there is no interval, or what the figure is
    effective_n: float | None = None  # PPI++: the labels-alone n with the same interval width
    lam: float | None = None  # PPI++: the judge's tuned weight

    @property
    def half_width(self) -> float | None:
        return None if self.low is None or self.high is None else (self.high - self.low) / 2

    def to_dict(self) -> dict:
        def r(x):
            return None if x is None else round(float(x), 4)
        return {"method": self.method, "value": r(self.value), "interval": [r(self.low), r(self.high)],
                "n": self.n, "N": self.N, "note": self.note, "effective_n": r(self.effective_n), "lambda": r(self.lam)}


@dataclass(frozen=True)
class Plan:
    target: float  # half-width wanted
    labels_total: int | None  # labels in all for the labels alone (None: not reachable within N)
    ppi_total: int | None  # labels in all for PPI++
    unplanned: str = ""  # why no plan can be made yet (then both totals are None)

    def more(self, total: int | None, n: int) -> int | None:
        return None if total is None else max(0, total - n)


@dataclass(frozen=True)
class Rate:
    unit: str  # citations | answers
    rows: tuple[Row, ...]
    n: int
    N: int
    plan: Plan | None = None
    problem: str = ""  # set when no row could be computed at all

    def row(self, method: str) -> Row | None:
        return next((r for r in self.rows if r.method == method), None)


@dataclass(frozen=True)
class Estimates:
    judge: str
    prompt_version: str
    confidence: float
    sample_id: str | None
    rates: tuple[Rate, ...]
    left_out: Mapping[str, int] = field(default_factory=dict)  # reason -> number of labelled items
    notes: tuple[str, ...] = ()
    rules: Mapping[str, int] = field(default_factory=dict)  # consensus.rule_counts of the citation items
    overlap: int = 1

    def rate(self, unit: str) -> Rate | None:
        return next((r for r in self.rates if r.unit == unit), None)


# --- the statistics of one rate --------------------------------------------------------------


def rate_rows(y: np.ndarray, f: np.ndarray, f_all: np.ndarray, confidence: float, w: np.ndarray | None = None,
              rogan_gladen: Row | None = None) -> tuple[Row, ...]:
    """The four rows for labels ``y`` with verdicts ``f`` on the same items and verdicts ``f_all``
    on the whole population (0/1 arrays), optionally weighted by inverse inclusion probabilities."""
    n, N = len(y), len(f_all)
    if n > N:
        raise EstimateError(f"{n} labels but only N = {N} judged items: the population cannot be smaller than "
                            "the labelled sample (judge every item with citecheck judge --all-items)")
    judge = Row("judge", float(f_all.mean()) if N else None, None, None, n, N,
                "the judge's own rate: biased by its errors, so no interval is claimed")
    if n == 0:
        why = "no labels yet: label items of the sample first"
        return (Row("labels", None, None, None, 0, N, why), judge,
                rogan_gladen or Row("rogan_gladen", None, None, None, 0, N, why), Row("ppi", None, None, None, 0, N, why))
    ww = np.ones(n) if w is None else np.asarray(w, float) / np.sum(w) * n
    share = float((ww * y).mean())
    kish = ppi_stats.kish_n(ww)
    low, high = ppi_stats.wilson(share, kish, confidence)
    labels = Row("labels", share, low, high, n, N,
                 "" if w is None else f"weighted by inverse inclusion probability (Kish effective n {kish:.0f})")
    if rogan_gladen is None:
        rogan_gladen = Row("rogan_gladen", None, None, None, n, N, "not computed")
    if y.min() == y.max():
        cls = "not supported" if y[0] else "supported or partial"
        ppi = Row("ppi", None, None, None, n, N, f"all {n} labels are {cls}: the judge's errors cannot be measured "
                  "yet, so PPI++ claims no interval (the labels' Wilson interval still holds); label more items")
    elif f_all.min() == f_all.max() and f.min() == f.max() == f_all[0]:
        ppi = Row("ppi", None, None, None, n, N, "the judge gives every item the same verdict: it carries no "
                  "information, so PPI++ adds nothing to the labels alone")
    else:
        est = ppi_stats.ppi_mean(y, f, f_all, confidence, w=w, pseudo=PSEUDO, student=True)
        eff = ppi_stats.effective_labels(est, share * (1 - share))
        ppi = Row("ppi", est.value, max(0.0, est.low), min(1.0, est.high), n, N,
                  f"judge weight lambda {est.lam:.2f}", eff, est.lam)
    return labels, judge, rogan_gladen, ppi


def plan(y: np.ndarray, f: np.ndarray, f_all: np.ndarray, target: float, confidence: float,
         w: np.ndarray | None = None) -> Plan:
    """Labels in all for a half-width of ``target``: labels alone and PPI++ (at most N labels)."""
    if not 0 < target < 0.5:
        raise EstimateError(f"--target {target}: give a half-width between 0 and 0.5, for example 0.02")
    n, N = len(y), len(f_all)
    if y.min() == y.max():
        return Plan(target, None, None, f"all {n} labels are one class, so the spread of the labels is unknown: "
                    "label more of the sample before planning")
    ww = np.ones(n) if w is None else np.asarray(w, float) / np.sum(w) * n
    share = float((ww * y).mean())
    alone = ppi_stats.labels_needed_wilson(share, target, confidence, n, N)
    ppi = ppi_stats.labels_needed_ppi(y, f, f_all, target, confidence, N, w, PSEUDO, True)
    return Plan(target, alone, ppi)


# --- joining labels, verdicts, population and sample -----------------------------------------------


def _rogan_gladen(keys: Sequence[str], human: Mapping[str, str], latest: Mapping[str, Verdict],
                  population: Sequence[str], n: int) -> Row:
    """Rogan-Gladen as on the calibration report: TPR and TNR from the labelled items, the
    judge's raw rate over the population, a bootstrap interval over both."""
    if not keys:
        return Row("rogan_gladen", None, None, None, 0, len(population), "no labels yet")
    pairs = Pairs(tuple(keys), np.array([CLASSES.index(human[k]) for k in keys]),
                  np.array([CLASSES.index(latest[k].verdict) for k in keys]), 0, 0)
    est = corrected_rate(pairs, [latest[k].verdict for k in population])
    if est.value is None:
        return Row("rogan_gladen", None, None, None, n, len(population), est.why or NO_CORRECTION)
    return Row("rogan_gladen", est.value, est.low, est.high, n, len(population),
               "bootstrap interval; assumes the labelled items are a simple random sample" if est.low is not None
               else f"no interval: {est.why}")


def estimate(labels: Sequence[Label], verdicts: Sequence[Verdict], items: Sequence[Item], judge: str,
             prompt_version: str, sample: Sample | None = None, confidence: float = 0.95,
             target: float | None = None, *, adjudicated: Mapping[str, Adjudication], overlap: int) -> Estimates:
    """Every estimate ``citecheck estimate`` prints, for one judge and prompt version.

    ``items``: the citation items of the logs (the population is those with a scored, current
    verdict).  An item's human label is settled as calibrate settles it (``calibration.resolutions``:
    adjudicated, else a majority of at least ``overlap``, else a single label).  With ``sample``,
    only labels of sampled items count, weighted by 1 / inclusion probability; every label left
    out is counted under its reason."""
    ppi_stats.z_of(confidence)  # a bad confidence fails here, before any work
    citation_items = [(i.key, i) for i in items if i.citation is not None]
    fingerprints = {key: i.fingerprint for key, i in citation_items}
    answer_of = {key: i.answer_id for key, i in citation_items}
    latest = latest_by_item(v for v in verdicts if v.judge == judge and v.prompt_version == prompt_version)
    population = [k for k, fp in fingerprints.items()
                  if k in latest and latest[k].scored and latest[k].fingerprint in ("", fp)]
    in_population = set(population)
    settled = resolutions(labels, fingerprints, adjudicated=adjudicated, overlap=overlap)
    human = {k: r.label for k, r in settled.items() if r.label in CLASSES}
    if not population:
        raise EstimateError(f"no item of the logs has a scored verdict from {judge} {prompt_version}: "
                            "run citecheck judge --all-items on these logs first")
    if human and not (set(human) & set(latest)):
        raise EstimateError("the labels and the verdicts are for different items (no item has both): "
                            "check that they come from the same logs")
    left_out: dict[str, int] = {}
    notes: list[str] = []
    used: list[str] = []
    for key, label in _latest_citation_labels(labels).items():  # labels human_labels drops, and why
        if key in human:
            continue
        rule = settled[key].rule if key in settled else ""
        if rule == "no_majority":
            reason = "reviewers disagree and no label has a majority (adjudicate it)"
        elif rule == "incomplete":
            reason = "fewer labels than the overlap"
        elif label.label not in CLASSES or key in settled:
            reason = "latest label is can't tell"
        else:
            reason = "stale: the item changed since it was labelled"
        left_out[reason] = left_out.get(reason, 0) + 1
    for key in sorted(human):
        if sample is not None and key not in sample:
            reason = f"not in sample {sample.sample_id} (chosen by a reviewer, not at random)"
        elif key not in fingerprints:
            reason = "item not in the logs given"
        elif key not in in_population:
            reason = "no scored current verdict from this judge"
        else:
            used.append(key)
            continue
        left_out[reason] = left_out.get(reason, 0) + 1
    if sample is None:
        notes.append("no --sample given: the labels are treated as a simple random sample of the judged items, "
                     "which they are not if reviewers chose what to label (draw one with citecheck sample)")
    else:
        waiting = sum(1 for k in sample.items if k not in human)
        if waiting:
            notes.append(f"{waiting} of the {len(sample)} sampled items have no usable label yet")
        if sample.stratify != "none" and sample.strata:
            notes.append(f"sample stratified by {sample.stratify} ({sample.allocation} allocation)")
    if len(used) > len(population) / 2:
        notes.append(f"{len(used)} of the {len(population)} judged items are labelled: the intervals treat the judged "
                     "items as a sample of a larger stream, so they are wider than this population needs; judge "
                     "every item (citecheck judge --all-items) for an estimate the judge can help with")
    if sample is not None and sample.unit == "answer":
        notes.append("the sample drew whole answers: the citation intervals treat citations as independent, "
                     "so they may be a little narrow when citations of one answer go together")
    rates = [_citation_rate(used, human, latest, population, sample, confidence, target)]
    rates.append(_answer_rate(used, human, latest, population, answer_of, sample, confidence, target))
    return Estimates(judge, prompt_version, confidence, None if sample is None else sample.sample_id,
                     tuple(rates), left_out, tuple(notes), rule_counts(settled.values()), overlap)


def _latest_citation_labels(labels: Sequence[Label]) -> dict[str, Label]:
    latest: dict[str, Label] = {}
    for label in labels:
        if label.citation is not None:
            latest[label.item] = label
    return latest


def _weights(keys: Sequence[str], sample: Sample | None) -> np.ndarray | None:
    if sample is None:
        return None
    return np.array([1.0 / sample.probability[k] for k in keys])


def _citation_rate(used, human, latest, population, sample, confidence, target) -> Rate:
    y = np.array([human[k] == POSITIVE for k in used], dtype=float)
    f = np.array([latest[k].verdict == POSITIVE for k in used], dtype=float)
    f_all = np.array([latest[k].verdict == POSITIVE for k in population], dtype=float)
    w = _weights(used, sample)
    rg = _rogan_gladen(used, human, latest, population, len(used))
    rows = rate_rows(y, f, f_all, confidence, w, rg)
    p = plan(y, f, f_all, target, confidence, w) if target is not None and len(used) else None
    return Rate("citations", rows, len(used), len(population), p)


def _answer_rate(used, human, latest, population, answer_of, sample, confidence, target) -> Rate:
    """An answer fails when any of its citations is not supported.  The population: answers all of
    whose citation items are judged; an answer's label is known when each of its citation items
    has a usable label (so answer-level labels come from labelling whole answers)."""
    by_answer: dict[str, list[str]] = {}
    for key, answer_id in answer_of.items():
        by_answer.setdefault(answer_id, []).append(key)
    judged = set(population)
    used_set = set(used)
    answers = sorted(a for a, ks in by_answer.items() if all(k in judged for k in ks))
    f_all = np.array([any(latest[k].verdict == POSITIVE for k in by_answer[a]) for a in answers], dtype=float)
    labelled = [a for a in answers if all(k in used_set for k in by_answer[a])]
    y = np.array([any(human[k] == POSITIVE for k in by_answer[a]) for a in labelled], dtype=float)
    f = np.array([any(latest[k].verdict == POSITIVE for k in by_answer[a]) for a in labelled], dtype=float)
    if not answers:
        return Rate("answers", (), 0, 0, None, "no answer has all its citations judged")
    w = None
    if sample is not None and labelled:
        # drawn as a whole: the answer's probability; drawn item by item: all its items had to be
        # drawn, about the product of their probabilities (exact for independent draws)
        w = np.array([1.0 / (sample.probability[by_answer[a][0]] if sample.unit == "answer"
                             else float(np.prod([sample.probability[k] for k in by_answer[a]])))
                      for a in labelled])
    rows = rate_rows(y, f, f_all, confidence, w, Row("rogan_gladen", None, None, None, len(labelled), len(answers),
                                                     "computed for citations only"))
    p = plan(y, f, f_all, target, confidence, w) if target is not None and len(labelled) else None
    return Rate("answers", rows, len(labelled), len(answers), p)
