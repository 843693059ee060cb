"""One checked answer as a row of the figures' table, without pandas: the in-memory figures
(``reports.figures.answer_table``) and the checked store (``storage.checked.batch``) both make
their rows with :func:`answer_row`, so a failing answer and a faithfulness score mean one thing.
(Kept apart from ``figures`` so that writing a store does not import pandas; compiled with the
checker, ``text.compiled.MODULES``: the store makes a row per answer it writes.)"""

from __future__ import annotations

from typing import Any

from citecheck.checking.checker import AnswerResult, review_item_count
from citecheck.contract import reasons

NONE = "(none)"  # the group name of answers with no model / prompt version logged

COLUMNS = (
    "file", "line", "answer_id", "question", "model", "prompt_version", "timestamp", "refused", "ok",
    "failing", "citations", "failed", "with_quote", "quote_in_source", "sentences", "uncited",
    "invalid_markers", "unsupported_number", "problems", *reasons.ALL_REASONS,
    "withheld", "faithfulness",  # the faithfulness gate: answer withheld; score x 1000 (-1: not scored)
    "labelled", "not_supported",
)


_NUMBER_AT = reasons.ALL_REASONS.index(reasons.NUMBER_NOT_IN_SOURCE)


def answer_row(result: AnswerResult, file: str, line: int) -> tuple[tuple, list]:
    """One answer's row of the figures' table: its text columns and its count columns (the label
    counts last, zero here).  The checked store writes the same row (storage.checked.batch)."""
    a = result.answer
    t = result.tally
    problems = t.problems  # (check's "clean" is the same test: one definition of a failing answer)
    withheld, score = faithfulness(a.extra)
    return (file, line, a.answer_id, a.question, a.model or NONE, a.prompt_version or NONE, a.timestamp), [
        result.refused, problems == 0, problems > 0, t.citations, t.failed, t.with_quote, t.quote_in_source,
        t.sentences, t.uncited, len(result.invalid_markers), t.reasons[_NUMBER_AT] > 0, problems, *t.reasons,
        withheld, score, 0, 0,
    ]


def store_row(result: AnswerResult, file: str, line: int) -> tuple[tuple, list, tuple]:
    """What the checked store keeps of one answer beside its citations and sentences
    (``storage.checked.batch``): :func:`answer_row`'s text and count columns, and (multi_claim,
    reason counts, invalid markers, chunk ids, review items, citations not verifiable)."""
    text, counts = answer_row(result, file, line)
    t = result.tally
    chunk_ids: list[Any] = []
    for chunk in result.answer.chunks:
        chunk_ids.append(chunk.chunk_id or "")
    return text, counts, (t.multi_claim, t.reasons, result.invalid_markers, chunk_ids, review_item_count(result),
                          t.not_verifiable)


def faithfulness(extra: dict) -> tuple[bool, int]:
    """(withheld by the faithfulness gate, score in thousandths or -1) from a log line's extra.
    Withheld counts among scored answers only (the figure is "withheld of scored answers", and the
    score bins hold only scored ones): a line marked withheld without a score in 0..1 is neither."""
    record = extra.get("faithfulness") if extra else None
    if not isinstance(record, dict):
        return False, -1
    score, withheld = record.get("score"), record.get("withheld") is True
    if isinstance(score, (int, float)) and not isinstance(score, bool) and 0 <= score <= 1:
        return withheld, round(score * 1000)
    return False, -1
