"""Review items: the units reviewers label.

An item is one (answer, sentence, citation) whose citation points at a retrieved chunk, or one
uncited sentence.  Its fingerprint changes when the sentence, the cited chunk or the quote
changes, so a label given to an older version is recognisably stale.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from citecheck.checking.checker import AnswerResult, review_item_count
from citecheck.contract.item_keys import CITATION_LABELS, LABEL_TEXT, UNCITED_LABELS, item_key, parse_item_key

__all__ = ["CITATION_LABELS", "LABEL_TEXT", "UNCITED_LABELS", "Item", "fingerprint", "item_key", "items_of",
           "parse_item_key"]

class Item(NamedTuple):
    answer_id: str
    sentence: int
    citation: int | None  # index into the checked answer's citations; None for an uncited sentence
    chunk_id: str | None
    fingerprint: str

    @property
    def key(self) -> str:
        return item_key(self.answer_id, self.sentence, self.citation)

    @property
    def labels(self) -> tuple[str, ...]:
        return UNCITED_LABELS if self.citation is None else CITATION_LABELS


def fingerprint(sentence: str, chunk_checksum: str | None, quote: str | None) -> str:
    data = "\x1f".join((sentence, chunk_checksum or "", quote or "")).encode("utf-8")
    return "sha256:" + hashlib.sha256(data).hexdigest()[:32]


def item_count(result: AnswerResult) -> int:
    """``len(items_of(result))`` without making the items: what a checked store records per answer
    (``review_items``), so that the review page's "of N items" is a sum, not a join of every
    sentence to its citations.  Counted by the checker's compiled ``review_item_count``."""
    return review_item_count(result)


def items_of(result: AnswerResult) -> list[Item]:
    """The items of one checked answer, in reading order."""
    a = result.answer
    out: list[Item] = []
    for s in result.sentences:
        if s.refusal:
            continue
        cited = [result.citations[i] for i in s.citations if result.citations[i].chunk_index is not None]
        if not cited:
            out.append(Item(a.answer_id, s.index, None, None, fingerprint(s.text, None, None)))
            continue
        # (the sentence is hashed once, not once per citation: a sentence of thousands of markers
        # stays linear; the digest is fingerprint()'s)
        head = hashlib.sha256((s.text + "\x1f").encode("utf-8"))
        for c in cited:
            chunk = a.chunks[c.chunk_index]  # type: ignore[index]
            h = head.copy()
            h.update("\x1f".join((chunk.checksum or "", c.quote or "")).encode("utf-8"))
            out.append(Item(a.answer_id, s.index, c.index, chunk.chunk_id, "sha256:" + h.hexdigest()[:32]))
    return out
