"""A cascade of two Claude models (docs/judge.md, "A cascade of two models"): the cheaper model ``A``
judges every item; the stronger model ``B`` is asked only when ``A`` is unsure, and then its
verdict is the one recorded.

Which rule says "unsure" depends on the prompt's verdict tool:

- ``confidence`` (a prompt whose tool carries a confidence, ``judge.v3``): ``A``'s call states a
  confidence below ``escalate_below``, states none, or gives no verdict;
- ``samples`` (``judge.v1``/``judge.v2``, no confidence): two samples of ``A`` disagree, or either
  gives no verdict.

Each verdict records ``decided_by`` (the model whose answer became the verdict) and in
``cost_usd`` every call made for the item.  The judge's name names both models (and, under the
confidence rule, the threshold), so a cascade's verdicts are never mixed with either model's own,
nor with a cascade that escalates at another threshold.  The budget check before an item reserves
the worst case of every call the item can need: ``A`` once (twice under the samples rule) and ``B``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from citecheck.errors import CitecheckError
from citecheck.judging import verdicts
from citecheck.judging.judges import ClaudeJudge, JudgeItem, Progress, Reply, gives_confidence
from citecheck.llm.pricing import Price, price_for

DEFAULT_ESCALATE_BELOW = 0.7
RULES = {"confidence": "A's stated confidence is below {below:g} (or missing)",
         "samples": "two samples of A disagree"}  # what makes A unsure, under each rule


@dataclass
class CascadeJudge(ClaudeJudge):
    """``model`` is the cheap model A; ``strong`` the model B it escalates to."""

    strong: str = "claude-sonnet-4-5"
    escalate_below: float = DEFAULT_ESCALATE_BELOW
    strong_price: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.strong == self.model:
            raise CitecheckError(f"a cascade needs two different models, not {self.model} twice")
        if not 0.0 <= self.escalate_below <= 1.0:
            raise CitecheckError(f"--escalate-below {self.escalate_below} is not in [0, 1]")
        self._strong_price: Price = price_for(self.strong, self.strong_price)

    @property
    def rule(self) -> str:
        """``confidence`` or ``samples`` (see RULES): which one decides when A is unsure."""
        return "confidence" if gives_confidence(self.tool) else "samples"

    @property
    def name(self) -> str:
        base = f"cascade:{self.model}>{self.strong}"
        return f"{base}<{self.escalate_below:g}" if self.rule == "confidence" else base

    def _worst(self, request: dict) -> float:
        tokens, out = self._worst_tokens(request), request["max_tokens"]
        calls_of_a = 1 if self.rule == "confidence" else 2
        return calls_of_a * self._price.worst_case(tokens, out) + self._strong_price.worst_case(tokens, out)

    def _sure(self, first: Reply, second: Reply | None) -> bool:
        if first.label == verdicts.UNSCORED:
            return False
        if second is None:
            return first.confidence is not None and first.confidence >= self.escalate_below
        return second.label == first.label

    def _one(self, item: JudgeItem, request: dict) -> tuple[verdicts.Verdict, bool, bool]:
        first = self._ask(item, request)
        second = self._ask(item, request) if self.rule == "samples" else None
        spent = first.cost + (second.cost if second is not None else 0.0)
        if self._sure(first, second):
            return self._verdict(item, first.label, first.why, spent, first.confidence, self.model), False, False
        strong = self._ask(item, self.request(item, self.strong), self._strong_price)
        return (self._verdict(item, strong.label, strong.why, spent + strong.cost, strong.confidence, self.strong),
                strong.failed, strong.again)

    def _record(self, v: verdicts.Verdict, out: list, progress: Progress, on_verdict) -> None:
        progress.escalated += v.decided_by == self.strong
        super()._record(v, out, progress, on_verdict)

    def judge_batch(self, items: Sequence[JudgeItem], poll_seconds: float = 30.0,
                    on_verdict: Callable[[verdicts.Verdict], None] | None = None,
                    progress: Progress | None = None,
                    sleep: Callable[[float], None] = time.sleep) -> list[verdicts.Verdict]:
        raise CitecheckError("a cascade cannot run through the Message Batches API: the strong model is asked only "
                             "after the cheap model's reply; drop --batch")


def parse_models(value: str) -> tuple[str, str]:
    """``MODEL_A,MODEL_B`` (cheap first) from ``--cascade``."""
    parts = [p.strip() for p in value.split(",")]
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"give two models, the cheaper first: MODEL_A,MODEL_B (not {value!r})")
    return parts[0], parts[1]
