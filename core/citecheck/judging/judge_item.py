"""What a judge is given about one citation item: the question, the sentence, the quote and the
cited chunk's text (built by ``judging.judges.judge_items``), and which run of it this is."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class JudgeItem:
    key: str
    question: str
    sentence: str
    quote: str
    chunk: str
    fingerprint: str = ""
    repeat: int = 0  # which run of ``judge --repeat K`` this is (0: the ordinary run)
