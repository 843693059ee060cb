"""Self-consistency of a judge: does it give the same verdict when asked again (docs/judge.md)?

``judge --repeat K`` records K runs of one judge and prompt version on the same items (``repeat``
0..K-1).  Per item, each run's verdict is the latest one written for that repeat index; an
unscored verdict leaves that run out.  From those:

- **changed**: the share of items with at least two scored runs whose verdict was not the same in
  all of them (Wilson interval, n = those items).
- **Fleiss' kappa** across runs (the runs as raters), on the items scored in exactly K runs, K the
  most common number of scored runs (the larger on a tie); items with fewer or more runs are left
  out of it and the report says how many items it used.  Its interval is a bootstrap over items
  (``calibration.bootstrap_interval``: none below 10 items).
- **majority vs single run**: on the items with a human label, a scored run 0 and at least two
  scored runs, the agreement (3-class accuracy) with the humans of the majority verdict across
  runs and of run 0 alone, each with a Wilson interval.  A tie for the most frequent verdict is
  broken by the earliest run (lowest repeat index) whose verdict is among the tied ones, so run 0
  breaks every tie it is part of.
- **unstable items**: the items whose verdict changed, most unstable first (the largest share of
  runs that disagree with the item's majority, then the most distinct verdicts, then the key).

Nothing here counts in calibration or estimates: those read run 0 only (``calibration.latest_by_item``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from citecheck.judging.calibration import (
    BOOTSTRAP,
    CLASSES,
    SEED,
    Estimate,
    bootstrap_interval,
    split_of,
)
from citecheck.judging.verdicts import Verdict

CONSISTENCY_VERSION = 1


@dataclass(frozen=True, slots=True)
class ItemRuns:
    """One item's scored verdicts, one per run, in repeat order."""

    item: str
    repeats: tuple[int, ...]
    verdicts: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return len(set(self.verdicts)) > 1

    @property
    def majority(self) -> str:
        """The most frequent verdict; a tie goes to the earliest run's verdict among the tied."""
        counts = Counter(self.verdicts)
        top = max(counts.values())
        return next(v for v in self.verdicts if counts[v] == top)

    @property
    def instability(self) -> float:
        """The share of runs whose verdict is not the majority's (0 when every run agrees)."""
        return 1 - Counter(self.verdicts)[self.majority] / len(self.verdicts)

    def to_dict(self) -> dict:
        return {"item": self.item, "runs": dict(zip(map(str, self.repeats), self.verdicts)),
                "majority": self.majority, "instability": round(self.instability, 4)}


def item_runs(verdicts: Iterable[Verdict], judge: str, prompt_version: str) -> dict[str, ItemRuns]:
    """Every item of one run key with its scored verdicts by repeat (the latest written per repeat)."""
    latest: dict[tuple[str, int], Verdict] = {}
    for v in verdicts:
        if v.judge == judge and v.prompt_version == prompt_version:
            latest[(v.item, v.repeat)] = v
    by_item: dict[str, list[tuple[int, str]]] = {}
    for (item, repeat), v in latest.items():
        if v.scored:
            by_item.setdefault(item, []).append((repeat, v.verdict))
    out = {}
    for item, runs in sorted(by_item.items()):
        runs.sort()
        out[item] = ItemRuns(item, tuple(r for r, _ in runs), tuple(v for _, v in runs))
    return out


def fleiss_kappa(counts: np.ndarray) -> float | None:
    """Fleiss' kappa of a table of counts (one row per item, one column per category, every row
    summing to the same number of raters, at least 2); None when it is undefined (one category only)."""
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2 or len(counts) == 0:
        return None
    raters = counts.sum(axis=1)
    n = raters[0]
    if n < 2 or not np.all(raters == n):
        raise ValueError("every item needs the same number of ratings, at least 2")
    p_item = ((counts * counts).sum(axis=1) - n) / (n * (n - 1))
    p_cat = counts.sum(axis=0) / counts.sum()
    expected = float((p_cat * p_cat).sum())
    if expected >= 1.0:
        return None
    return float((p_item.mean() - expected) / (1 - expected))


def _count_table(rows: Sequence[ItemRuns]) -> np.ndarray:
    table = np.zeros((len(rows), len(CLASSES)), dtype=int)
    for i, row in enumerate(rows):
        for v in row.verdicts:
            table[i, CLASSES.index(v)] += 1
    return table


def _fleiss_resampled(table: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Fleiss' kappa of each resample (rows of ``idx``) of the items of ``table``; NaN where undefined."""
    counts = table[idx].astype(float)  # resamples x items x categories
    n = counts[0, 0].sum()
    p_item = ((counts * counts).sum(axis=2) - n) / (n * (n - 1))
    p_cat = counts.sum(axis=1) / (counts.shape[1] * n)
    expected = (p_cat * p_cat).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected < 1, (p_item.mean(axis=1) - expected) / (1 - expected), np.nan)


def _fleiss_estimate(table: np.ndarray, draws: int, seed: int) -> Estimate:
    point = fleiss_kappa(table) if len(table) else None
    values: list[float] = []
    if point is not None and len(table) >= 2:
        rng = np.random.default_rng(seed)
        for start in range(0, draws, 250):  # 250 resamples at a time
            kappas = _fleiss_resampled(table, rng.integers(0, len(table), (min(250, draws - start), len(table))))
            values.extend(float(k) for k in kappas if not np.isnan(k))
    low, high, why = bootstrap_interval(point, values, len(table))
    return Estimate(point, low, high, len(table), why)


def share(successes: int, n: int) -> Estimate:
    """A share with its 95% Wilson interval (the interval calibrate gives every share)."""
    from citecheck.judging.ppi import wilson

    if not n:
        return Estimate(None, None, None, 0)
    value = successes / n
    low, high = wilson(value, n, 0.95)
    return Estimate(value, min(low, value), max(high, value), n)


@dataclass(frozen=True)
class Consistency:
    judge: str
    prompt_version: str
    split: str
    runs: int  # K: the most common number of scored runs per item (0 when no item has two)
    items: tuple[ItemRuns, ...]  # every item with at least two scored runs
    changed: Estimate  # share of those items whose verdict changed
    fleiss: Estimate  # Fleiss' kappa on the items with exactly ``runs`` scored runs
    majority: Estimate  # agreement with the humans of the majority verdict
    single: Estimate  # agreement with the humans of run 0, on the same items

    @property
    def measured(self) -> bool:
        return bool(self.items)

    @property
    def unstable(self) -> tuple[ItemRuns, ...]:
        """The items whose verdict changed, most unstable first."""
        return tuple(sorted((r for r in self.items if r.changed),
                            key=lambda r: (-r.instability, -len(set(r.verdicts)), r.item)))

    def to_dict(self) -> dict:
        return {"record": "consistency", "consistency_version": CONSISTENCY_VERSION,
                "judge": self.judge, "prompt_version": self.prompt_version, "split": self.split,
                "runs": self.runs, "items": len(self.items),
                "changed": self.changed.to_dict(), "fleiss_kappa": self.fleiss.to_dict(),
                "majority_agreement": self.majority.to_dict(), "single_run_agreement": self.single.to_dict(),
                "tie_rule": "the earliest run's verdict among the tied ones",
                "unstable": [r.to_dict() for r in self.unstable]}

    def to_text(self, limit: int = 20) -> str:
        if not self.measured:
            return f"self-consistency: not measured: run judge --repeat K (judge {self.judge}, prompt {self.prompt_version})\n"
        lines = [f"self-consistency of {self.judge}, prompt {self.prompt_version}, split {self.split}: "
                 f"{len(self.items)} items with two or more scored runs ({self.runs} runs on most)",
                 f"  {'verdict changed across runs':<32} {_fmt(self.changed)}",
                 f"  {'Fleiss kappa across runs':<32} {_fmt(self.fleiss)} (items with exactly {self.runs} runs)",
                 f"  {'majority verdict vs humans':<32} {_fmt(self.majority)}",
                 f"  {'run 0 alone vs humans':<32} {_fmt(self.single)} (same items; ties: run 0 decides)"]
        unstable = self.unstable
        if unstable:
            lines.append(f"  unstable items ({len(unstable)}, most unstable first):")
            for r in unstable[:limit]:
                lines.append(f"    {r.item}  {' '.join(r.verdicts)}")
            if len(unstable) > limit:
                lines.append(f"    ... and {len(unstable) - limit} more (--format json lists them all)")
        return "\n".join(lines) + "\n"


def _fmt(e: Estimate) -> str:
    if e.value is None:
        return f"n/a (n={e.n})"
    ci = e.interval_text()
    return f"{e.value:.2f}{' ' + ci if ci else ''} (n={e.n})"


def modal_runs(rows: Iterable[ItemRuns]) -> int:
    """The most common number of scored runs per item (the larger on a tie), 0 without items."""
    counts = Counter(len(r.verdicts) for r in rows)
    if not counts:
        return 0
    top = max(counts.values())
    return max(k for k, c in counts.items() if c == top)


def consistency(verdicts: Sequence[Verdict], judge: str, prompt_version: str,
                human: Mapping[str, str] | None = None, split: str = "all",
                draws: int = BOOTSTRAP, seed: int = SEED) -> Consistency:
    """Self-consistency of one judge and prompt version from all its verdicts, repeats included.
    ``human``: the settled human label per item (``calibration.human_labels``), for majority vs single."""
    rows = [r for key, r in item_runs(verdicts, judge, prompt_version).items()
            if len(r.verdicts) >= 2 and (split == "all" or split_of(key) == split)]
    k = modal_runs(rows)
    changed = share(sum(r.changed for r in rows), len(rows))
    fleiss = _fleiss_estimate(_count_table([r for r in rows if len(r.verdicts) == k]), draws, seed)
    human = human or {}
    compared = [r for r in rows if r.item in human and r.repeats[0] == 0]
    majority = share(sum(r.majority == human[r.item] for r in compared), len(compared))
    single = share(sum(r.verdicts[0] == human[r.item] for r in compared), len(compared))
    return Consistency(judge, prompt_version, split, k, tuple(rows), changed, fleiss, majority, single)


def unstable_keys(verdicts: Iterable[Verdict], judge: str | None = None,
                  prompt_version: str | None = None) -> frozenset[str]:
    """The keys of items whose verdict changed across repeated runs, for one judge and prompt
    version, or across every run key in ``verdicts`` when neither is given (the review page's filter)."""
    verdicts = list(verdicts)
    keys = {v.run for v in verdicts if (judge is None or v.judge == judge)
            and (prompt_version is None or v.prompt_version == prompt_version)}
    out: set[str] = set()
    for j, p in keys:
        out |= {key for key, r in item_runs(verdicts, j, p).items() if r.changed}
    return frozenset(out)


def has_repeats(verdicts: Iterable[Verdict], judge: str, prompt_version: str) -> bool:
    return any(v.repeat > 0 and v.judge == judge and v.prompt_version == prompt_version for v in verdicts)
