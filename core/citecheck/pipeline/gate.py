"""The support-floor gate: refuse before any model call when retrieval found too little.

A question passes when at least ``min_support`` retrieved chunks score at or above ``floor``.
The floor is a BM25 score: it depends on the corpus and the tokeniser, so measure it for each
corpus (``citecheck floor``; ``measure_floor`` here) rather than copying a number.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the gate itself needs no BM25 (and the CLI's option defaults import this module)
    from citecheck.pipeline.retrieval import Index, Scored

# Measured on the sample corpus with `citecheck floor` (docs/pipeline.md): every golden question
# passes and 7 of the 8 off-corpus questions refuse.
SAMPLE_FLOOR = 3.1
DEFAULT_MIN_SUPPORT = 1


@dataclass(frozen=True, slots=True)
class GateDecision:
    passed: bool
    supporting: int  # chunks at or above the floor
    top_score: float
    floor: float
    min_support: int

    @property
    def reason(self) -> str:
        if self.passed:
            return f"{self.supporting} chunk(s) at or above the support floor {self.floor}"
        return (f"{self.supporting} chunk(s) at or above the support floor {self.floor} "
                f"(top score {self.top_score:.2f}); {self.min_support} needed")

    def to_dict(self) -> dict:
        return {"decision": "answer" if self.passed else "refuse", "reason": self.reason,
                "supporting": self.supporting, "top_score": round(self.top_score, 4), "floor": self.floor,
                "min_support": self.min_support}


def decide(scored: Sequence[Scored], floor: float, min_support: int = DEFAULT_MIN_SUPPORT) -> GateDecision:
    supporting = sum(1 for s in scored if s.score >= floor)
    top = max((s.score for s in scored), default=0.0)
    return GateDecision(supporting >= min_support, supporting, top, floor, min_support)


# --- measuring the floor ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    floor: float
    golden_pass: int
    golden: int
    off_refused: int
    off: int

    @property
    def correct(self) -> int:
        return self.golden_pass + self.off_refused


@dataclass(frozen=True, slots=True)
class FloorReport:
    golden_scores: tuple[float, ...]  # top score of each answerable golden question
    off_scores: tuple[float, ...]  # top score of each off-corpus question
    candidates: tuple[Candidate, ...]
    suggested: Candidate | None

    @staticmethod
    def describe(scores: Sequence[float]) -> str:
        if not scores:
            return "none"
        qs = statistics.quantiles(scores, n=4, method="inclusive") if len(scores) > 1 else [scores[0]] * 3
        return (f"n={len(scores)} min {min(scores):.2f} q1 {qs[0]:.2f} median {qs[1]:.2f} q3 {qs[2]:.2f} "
                f"max {max(scores):.2f}")


def measure_floor(index: Index, golden: Sequence[str], off_corpus: Sequence[str]) -> FloorReport:
    """Top BM25 scores of answerable golden and off-corpus questions, every candidate floor
    (midway between neighbouring observed scores), and the one that makes the most right
    decisions: golden questions passing plus off-corpus questions refused (ties: more golden
    passing, then the middle of the tied range)."""
    g = tuple(index.top_score(q) for q in golden)
    o = tuple(index.top_score(q) for q in off_corpus)
    points = sorted(set(g) | set(o))
    floors = sorted({round((a + b) / 2, 2) for a, b in zip(points, points[1:])} | {round(p, 2) for p in points})
    candidates = tuple(
        Candidate(f, sum(1 for s in g if s >= f), len(g), sum(1 for s in o if s < f), len(o)) for f in floors
    )
    suggested = None
    if candidates:
        best = max((c.correct, c.golden_pass) for c in candidates)
        ties = [c for c in candidates if (c.correct, c.golden_pass) == best]
        suggested = ties[len(ties) // 2]  # the middle of the best range: furthest from both sides
    return FloorReport(g, o, candidates, suggested)
