"""Why one answer fails, in words: each problem with its sentence and marker, and the review item
that shows the first of them.

The Failures page sends a product owner from a figure to an answer; the review page then opens
that answer on its first failing item and says in one line why the answer failed.  Both ask this
module, so the line and the item always name the same problem.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from citecheck.checking.checker import AnswerResult, CitationResult
from citecheck.contract import reasons as reason_codes


@dataclass(frozen=True, slots=True)
class Problem:
    sentence: int  # 0-based sentence index
    citation: int | None  # the citation's index, None for a sentence-level problem
    where: str  # "sentence 2, marker [3]"
    words: str  # "the quote is not in the cited chunk"


def _mark(c: CitationResult) -> str:
    if c.kind == "marker" and c.marker is not None:
        return f"marker [{c.marker}]"
    return f"citation of {c.chunk_id}" if c.chunk_id else f"citation {c.index + 1}"


def problems(result: AnswerResult) -> list[Problem]:
    """Every problem of the answer, in reading order: per sentence its sentence-level problems
    (uncited, unsupported numbers or quoted text), then its failed citations; then failed citations
    that belong to no sentence (an invalid marker)."""
    out: list[Problem] = []
    seen: set[int] = set()
    for s in result.sentences:
        here = f"sentence {s.index + 1}"
        if s.uncited and not s.refusal:
            out.append(Problem(s.index, None, here, "has no valid citation"))
        for code in s.reasons:
            words = reason_codes.DESCRIPTIONS[code]
            if code == reason_codes.NUMBER_NOT_IN_SOURCE and s.unsupported_numbers:
                words += f" ({', '.join(s.unsupported_numbers)})"
            out.append(Problem(s.index, None, here, words))
        for i in s.citations:
            c = result.citations[i]
            if c.reasons and i not in seen:
                seen.add(i)
                out.append(Problem(s.index, i, f"{here}, {_mark(c)}", citation_words(result, c)))
    for c in result.citations:
        if c.reasons and c.index not in seen:
            sentence = c.sentence if c.sentence is not None else 0
            out.append(Problem(sentence, c.index, f"{_mark(c)} (sentence {sentence + 1})", citation_words(result, c)))
    return out


def citation_words(result: AnswerResult, c) -> str:
    """Why citation ``c`` of the answer failed, in words (each reason's, with the answer's chunk count
    where the words need it): the review page and its "Fails:" line say the same."""
    return "; ".join(reason_codes.describe(code, len(result.answer.chunks)) for code in c.reasons)


def why_text(result: AnswerResult, limit: int = 4) -> str:
    """One line: ``Fails: sentence 2, marker [3]: the quote is not in the cited chunk; sentence 3:
    has no valid citation`` ("" for an answer that does not fail)."""
    found = problems(result)
    if not found:
        return ""
    shown = "; ".join(f"{p.where}: {p.words}" for p in found[:limit])
    more = f"; and {len(found) - limit} more" if len(found) > limit else ""
    return f"Fails: {shown}{more}"


def first_failing_item(result: AnswerResult, items: Sequence) -> int | None:
    """The position among ``items`` (``labelling.items.items_of``) of the item that shows the
    answer's first problem: its failed citation, else an item of its sentence; None when no item
    shows one (a problem with no item: a citation that points at no retrieved chunk in a sentence
    with no other citation still makes the sentence an uncited item)."""
    for p in problems(result):
        for n, item in enumerate(items):
            if p.citation is not None and item.citation == p.citation:
                return n
        for n, item in enumerate(items):
            if item.sentence == p.sentence:
                return n
    return None
