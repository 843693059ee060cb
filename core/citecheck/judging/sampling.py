"""What a calibration sample is drawn from: units (citation items or whole answers), their strata
(the judge's verdict or the checker's status) and, for Neyman allocation, each stratum's spread
from the labels so far.  The draw itself is ``labelling.sample.draw``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from citecheck.judging.calibration import POSITIVE, human_labels
from citecheck.judging.verdicts import Verdict
from citecheck.labelling.dataset import Dataset
from citecheck.labelling.events import Adjudication
from citecheck.labelling.labels import Label

MIN_LABELS_PER_STRATUM = 5  # fewer, and a stratum's spread is a guess: allocation stays proportional


@dataclass(frozen=True)
class Population:
    units: tuple[str, ...]
    strata: Mapping[str, str] | None  # unit -> stratum; None when not stratified
    members: Mapping[str, tuple[str, ...]] | None  # answer -> its citation items; None when units are items


def _item_stratum(stratify: str, key: str, reasons: tuple[str, ...], latest: Mapping[str, Verdict] | None) -> str:
    if stratify == "status":
        return "flagged" if reasons else "verified"
    v = (latest or {}).get(key)
    return v.verdict if v is not None and v.scored else "unjudged"


def population(data: Dataset, unit: str = "item", stratify: str = "none",
               latest: Mapping[str, Verdict] | None = None) -> Population:
    """The citation items of ``data`` (or its answers with at least one), with their strata.
    With ``latest`` (a judge's verdicts), only items it scored: the only ones an estimate can use
    (for answers: answers all of whose citation items it scored)."""
    item_strata: dict[str, str] = {}
    members: dict[str, list[str]] = {}
    for result, items in zip(data.results, data.items_by_answer):
        for item in items:
            if item.citation is None:
                continue
            if latest is not None and (item.key not in latest or not latest[item.key].scored):
                if unit == "answer":
                    members.setdefault(item.answer_id, []).append("")  # marks the answer as not fully judged
                continue
            reasons = result.citations[item.citation].reasons
            item_strata[item.key] = _item_stratum(stratify, item.key, reasons, latest)
            members.setdefault(item.answer_id, []).append(item.key)
    members = {a: ks for a, ks in members.items() if "" not in ks}
    if unit == "item":
        return Population(tuple(item_strata), None if stratify == "none" else item_strata, None)
    strata = None
    if stratify != "none":
        bad = "flagged" if stratify == "status" else POSITIVE
        strata = {}
        for answer, keys in members.items():
            values = {item_strata[k] for k in keys}
            strata[answer] = "failing" if bad in values else "unjudged" if "unjudged" in values else "passing"
    return Population(tuple(members), strata, {a: tuple(k) for a, k in members.items()})


def neyman_spread(pop: Population, labels: Sequence[Label], adjudicated: Mapping[str, Adjudication],
                  overlap: int) -> tuple[dict[str, float] | None, str]:
    """sqrt(p(1 - p)) per stratum, p the share of not-supported labels there (shrunk towards a
    half: (k + 0.5) / (n + 1), so a stratum with no positive yet still gets some items), when every
    stratum has enough labels; else None and a sentence saying why allocation stays proportional."""
    if pop.strata is None:
        return None, ""
    human = human_labels(labels, None, adjudicated=adjudicated, overlap=overlap)
    counts: dict[str, list[int]] = {s: [0, 0] for s in set(pop.strata.values())}
    for unit, stratum in pop.strata.items():
        keys = pop.members[unit] if pop.members is not None else (unit,)
        known = [human[k] for k in keys if k in human]
        if pop.members is not None and len(known) < len(keys):
            continue
        if known:
            counts[stratum][0] += 1
            counts[stratum][1] += int(POSITIVE in known)
    thin = sorted(s for s, (n, _) in counts.items() if n < MIN_LABELS_PER_STRATUM)
    if not labels:
        return None, "no earlier labels (--labels): proportional allocation"
    if thin:
        return None, (f"fewer than {MIN_LABELS_PER_STRATUM} labels in stratum {', '.join(thin)}: "
                      "proportional allocation")
    spread = {}
    for s, (n, k) in counts.items():
        p = (k + 0.5) / (n + 1)
        spread[s] = math.sqrt(p * (1 - p))
    return spread, "Neyman allocation from the labels so far: " + ", ".join(
        f"{s} spread {v:.2f}" for s, v in sorted(spread.items()))
