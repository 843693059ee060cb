"""Alignment over time: each judge and prompt version's calibration figures by the week its verdicts
were written and by the guidelines version of the labels they are measured against (docs/judge.md).

- **By week**: the ISO week (``2026-W49``, Monday to Sunday, UTC as the verdicts' ``at`` is
  written) of each ordinary-run verdict (repeat 0); within a week the latest verdict per item
  counts, so an item judged again in a later week counts in both weeks.  Verdicts without a date
  are grouped under ``unknown``.
- **By guidelines version**: the latest ordinary-run verdict per item (as calibrate counts it),
  grouped by the guidelines version of the item's settled human label: the adjudication's when
  the item was adjudicated, else its labels' version when they agree, ``mixed`` when the labels
  behind it were made under different versions, ``unknown`` when they do not say.

Each group's figures are calibrate's (``calibration.bootstrap``: Wilson intervals for shares, a
bootstrap for kappa) on the labelled items of that group, with their n.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from citecheck.judging.calibration import (
    BOOTSTRAP,
    CLASSES,
    Estimate,
    bootstrap,
    latest_by_item,
    resolutions,
    split_of,
)
from citecheck.judging.verdicts import Verdict, runs
from citecheck.labelling.consensus import Resolution
from citecheck.labelling.events import Adjudication
from citecheck.labelling.labels import Label

FIGURES = ("accuracy", "kappa", "tpr", "tnr")
TITLES = {"accuracy": "agreement (accuracy)", "kappa": "Cohen's kappa", "tpr": "TPR", "tnr": "TNR"}
UNKNOWN = "unknown"
MIXED = "mixed"
BY = ("week", "guidelines")


@dataclass(frozen=True)
class Point:
    judge: str
    prompt_version: str
    by: str  # "week" or "guidelines"
    group: str  # 2026-W49, a guidelines version, unknown or mixed
    n: int  # items with a human label and a scored verdict in the group
    figures: Mapping[str, Estimate]

    def to_dict(self) -> dict:
        return {"judge": self.judge, "prompt_version": self.prompt_version, "by": self.by, "group": self.group,
                "items": self.n, "figures": {k: self.figures[k].to_dict() for k in FIGURES}}


def week_of(at: str) -> str:
    """``2026-W49``: the ISO week of a verdict's time stamp, ``unknown`` when it has none or is unreadable."""
    try:
        year, week, _ = datetime.fromisoformat(at.replace("Z", "+00:00")).isocalendar()
    except (ValueError, AttributeError):
        return UNKNOWN
    return f"{year}-W{week:02d}"


def guidelines_of(resolution: Resolution, adjudicated: Mapping[str, Adjudication]) -> str:
    """The guidelines version an item's human label was settled under (see the module docstring)."""
    if resolution.rule == "adjudicated" and resolution.item in adjudicated:
        return adjudicated[resolution.item].guidelines or UNKNOWN
    versions = {lab.guidelines or UNKNOWN for lab in resolution.labels}
    return versions.pop() if len(versions) == 1 else MIXED if versions else UNKNOWN


def _point(judge: str, prompt: str, by: str, group: str, pairs: list[tuple[str, str]], draws: int) -> Point:
    h = np.array([CLASSES.index(x) for x, _ in pairs], dtype=int)
    j = np.array([CLASSES.index(y) for _, y in pairs], dtype=int)
    return Point(judge, prompt, by, group, len(pairs), bootstrap(h, j, draws))


def alignment(labels: Sequence[Label], verdicts: Sequence[Verdict], split: str = "all",
              fingerprints: Mapping[str, str] | None = None, *, adjudicated: Mapping[str, Adjudication],
              overlap: int, draws: int = BOOTSTRAP) -> list[Point]:
    """Every run key's figures by week and by guidelines version, in run order then group order."""
    settled = resolutions(labels, fingerprints, adjudicated=adjudicated, overlap=overlap)
    human = {k: r.label for k, r in settled.items() if r.label in CLASSES
             and (split == "all" or split_of(k) == split)}
    out: list[Point] = []
    for judge, prompt in runs(verdicts):
        mine = [v for v in verdicts if v.run == (judge, prompt) and v.repeat == 0]
        weeks: dict[str, dict[str, Verdict]] = {}
        for v in mine:
            weeks.setdefault(week_of(v.at), {})[v.item] = v
        for week in sorted(weeks, key=lambda w: (w == UNKNOWN, w)):
            pairs = [(human[k], v.verdict) for k, v in sorted(weeks[week].items()) if k in human and v.scored]
            if pairs:
                out.append(_point(judge, prompt, "week", week, pairs, draws))
        groups: dict[str, list[tuple[str, str]]] = {}
        for k, v in sorted(latest_by_item(mine).items()):
            if k in human and v.scored:
                groups.setdefault(guidelines_of(settled[k], adjudicated), []).append((human[k], v.verdict))
        for name in sorted(groups, key=lambda g: (g in (UNKNOWN, MIXED), g)):
            out.append(_point(judge, prompt, "guidelines", name, groups[name], draws))
    return out


def rows(points: Sequence[Point], by: str) -> list[dict]:
    """One table row per run, group and figure (the page's table and chart)."""
    out = []
    for p in points:
        if p.by != by:
            continue
        for k in FIGURES:
            e = p.figures[k]
            out.append({"run": f"{p.judge} @ {p.prompt_version}", by: p.group, "figure": TITLES[k],
                        "value": e.value, "low": e.low, "high": e.high, "n": e.n})
    return out
