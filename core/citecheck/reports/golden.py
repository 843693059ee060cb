"""Golden sets: questions with the chunk ids that answer them, or none for questions the corpus
cannot answer (docs/golden-format.md), and the retrieval figures computed against them.

Hit rate at k: the share of answerable questions whose ranked list has a correct chunk in its
first k places.  MRR: the mean over answerable questions of 1/rank of the first correct chunk
(0 when none is in the first k).  Unanswerable questions have no correct chunk, so they are
counted apart and never enter either figure.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from citecheck.errors import FieldError, RecordError
from citecheck.reports.rates import json_rate, percent
from citecheck.storage.lines import read_jsonl
from citecheck.text.normalise import normalise


@dataclass(frozen=True, slots=True)
class GoldenQuestion:
    question: str
    answerable: bool
    chunk_ids: tuple[str, ...]
    line: int = 0

    @property
    def key(self) -> str:
        return question_key(self.question)


@functools.lru_cache(maxsize=1 << 16)
def question_key(question: str) -> str:
    """How questions are matched between a golden set and a log: whitespace and case aside."""
    return normalise(question, casefold=True)


def _parse(obj: object) -> GoldenQuestion:
    if not isinstance(obj, dict):
        raise FieldError("(record)", "expected a JSON object")
    question = obj.get("question")
    if not isinstance(question, str) or not question.strip():
        raise FieldError("question", "missing or not a non-empty string")
    ids = obj.get("chunk_ids", [])
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise FieldError("chunk_ids", "must be a list of chunk id strings")
    answerable = obj.get("answerable", bool(ids))
    if not isinstance(answerable, bool):
        raise FieldError("answerable", "must be true or false")
    if answerable and not ids:
        raise FieldError("chunk_ids", "an answerable question needs at least one chunk id")
    return GoldenQuestion(question, answerable, tuple(ids))


def read_golden(path: str | Path) -> tuple[list[GoldenQuestion], list[RecordError]]:
    """Every readable question of a golden JSONL file, plus one error per unreadable line."""
    questions: list[GoldenQuestion] = []
    errors: list[RecordError] = []
    for line_no, q in read_jsonl(path, _parse):
        if isinstance(q, RecordError):
            errors.append(q)
        else:
            questions.append(GoldenQuestion(q.question, q.answerable, q.chunk_ids, line_no))
    return questions, errors


def index(questions: Iterable[GoldenQuestion]) -> dict[str, GoldenQuestion]:
    """Golden questions by question key (the first one wins when a question repeats)."""
    out: dict[str, GoldenQuestion] = {}
    for q in questions:
        out.setdefault(q.key, q)
    return out


def rank_of(ranked: Iterable[str], relevant: Iterable[str], k: int) -> int | None:
    """1-based position of the first relevant id among the first ``k`` of ``ranked``, or None."""
    wanted = set(relevant)
    for position, chunk_id in enumerate(ranked, start=1):
        if position > k:
            return None
        if chunk_id in wanted:
            return position
    return None


@dataclass(frozen=True, slots=True)
class Ranked:
    """One evaluated retrieval: which question, what came back, where the first correct chunk was."""

    label: str  # the answer id, or the question itself when retrieval was run directly
    question: str
    expected: tuple[str, ...]
    retrieved: tuple[str, ...]
    rank: int | None


@dataclass(frozen=True, slots=True)
class RetrievalEval:
    k: int
    answerable: int  # retrievals of answerable golden questions: the denominator of both figures
    hits: int
    reciprocal_rank_sum: float
    unanswerable: int  # retrievals of unanswerable golden questions: not in hit rate or MRR
    not_in_golden: int  # retrievals whose question the golden set does not have
    ranked: tuple[Ranked, ...]

    @property
    def hit_rate(self) -> float | None:
        return self.hits / self.answerable if self.answerable else None

    @property
    def mrr(self) -> float | None:
        return self.reciprocal_rank_sum / self.answerable if self.answerable else None

    def shown(self) -> tuple[str, str]:
        """(hit rate, MRR) as every surface shows them: the hit rate a percentage from its counts
        (it was 1.00 on the command line and 100.0% on the page), MRR a mean reciprocal rank to
        two decimals; "n/a" without an answerable question."""
        return percent(self.hits, self.answerable), "n/a" if self.mrr is None else f"{self.mrr:.2f}"

    @property
    def misses(self) -> tuple[Ranked, ...]:
        return tuple(r for r in self.ranked if r.rank is None)

    def to_dict(self) -> dict:
        return {
            "k": self.k,
            "answerable": self.answerable,
            "hits": self.hits,
            "hit_rate": json_rate(self.hit_rate),
            "mrr": json_rate(self.mrr),
            "unanswerable": self.unanswerable,
            "not_in_golden": self.not_in_golden,
            "misses": [
                {"label": m.label, "question": m.question, "expected": list(m.expected),
                 "retrieved": list(m.retrieved[: self.k])}
                for m in self.misses
            ],
        }


def evaluate_retrieval(
    golden: Iterable[GoldenQuestion], runs: Iterable[tuple[str, str, list[str] | tuple[str, ...]]], k: int = 5
) -> RetrievalEval:
    """Hit rate at ``k`` and MRR for ``runs`` of ``(label, question, ranked chunk ids)``."""
    if k < 1:
        raise ValueError("k must be at least 1")
    by_key = index(golden)
    ranked: list[Ranked] = []
    answerable = hits = unanswerable = missing = 0
    rr = 0.0
    for label, question, ids in runs:
        g = by_key.get(question_key(question))
        if g is None:
            missing += 1
            continue
        if not g.answerable:
            unanswerable += 1
            continue
        answerable += 1
        rank = rank_of(ids, g.chunk_ids, k)
        if rank is not None:
            hits += 1
            rr += 1 / rank
        ranked.append(Ranked(label, question, g.chunk_ids, tuple(ids), rank))
    return RetrievalEval(k, answerable, hits, rr, unanswerable, missing, tuple(ranked))
