"""Claim-level faithfulness of a generated answer, and the threshold below which it is withheld.

An answer is split into atomic claims (``claims.py``); each claim is judged against the chunks
its sentence cites, by the judge machinery of ``citecheck.judging`` (same verdict set, prompts,
budget and retries).  Mechanics come first: a claim whose sentence has no citation that passes
the checker's evidence checks (retrieved chunk, checksum intact, source unchanged, quote found when
one is given: ``BLOCKING``) is unsupported without a judge call.

    score = (supported + 0.5 x partial) / claims

An unscored claim (the judge could not be reached or gave no verdict) counts as unsupported: a
claim nobody could verify is not evidence of faithfulness.  An answer whose score is below the
threshold is withheld: the pipeline returns the exact refusal sentence and logs the withheld
answer with its claims, verdicts, score and threshold.  The threshold is a domain choice
(``--faithfulness-threshold``, default 0.8; above 0.9 suits legal and medical answers, 0.7
general questions).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from citecheck.checking.checker import AnswerResult, strip_markers
from citecheck.contract import reasons as reason_codes
from citecheck.contract.log import citation_to_dict
from citecheck.judging import verdicts as verdict_store
from citecheck.judging.judges import JudgeItem
from citecheck.pipeline.decomposition import Claim

DEFAULT_THRESHOLD = 0.8
WEIGHT = {"supported": 1.0, "partial": 0.5, "not_supported": 0.0}  # anything else (unscored) counts 0
UNCITED = "uncited"  # a claim whose sentence cites nothing
# A citation with one of these is no evidence at all: its chunk was not retrieved, is not the text
# that was logged, or does not hold the quote.  A citation that only lacks a quote, or whose quote
# sits elsewhere in the chunk, still points at real retrieved text the judge can read.
BLOCKING = frozenset({reason_codes.UNRETRIEVED_SOURCE, reason_codes.MARKER_OUT_OF_RANGE, reason_codes.CHECKSUM_MISMATCH, reason_codes.SOURCE_CHANGED,
                      reason_codes.QUOTE_NOT_FOUND})


@dataclass(frozen=True, slots=True)
class ClaimVerdict:
    sentence: int
    text: str
    verdict: str  # supported, partial, not_supported or unscored
    rationale: str
    mechanical: tuple[str, ...] = ()  # reason codes that made it unsupported without a judge call
    cost_usd: float = 0.0

    def to_dict(self) -> dict:
        out = {"sentence": self.sentence, "claim": self.text, "verdict": self.verdict, "rationale": self.rationale}
        if self.mechanical:
            out["mechanical"] = list(self.mechanical)
        return out


@dataclass(frozen=True, slots=True)
class Faithfulness:
    claims: tuple[ClaimVerdict, ...]
    threshold: float
    decomposition: str  # the claims prompt version, or "sentences" when the fallback was used
    judge: str
    judge_prompt: str
    cost_usd: float
    note: str = ""

    @property
    def score(self) -> float | None:
        """Supported share of the claims (partial counts half); None when there is no claim."""
        if not self.claims:
            return None
        return sum(WEIGHT.get(c.verdict, 0.0) for c in self.claims) / len(self.claims)

    @property
    def withheld(self) -> bool:
        return self.score is not None and self.score < self.threshold

    def to_dict(self) -> dict:
        out = {"version": 1, "score": None if self.score is None else round(self.score, 4),
               "threshold": self.threshold, "withheld": self.withheld, "decomposition": self.decomposition,
               "judge": self.judge, "judge_prompt": self.judge_prompt, "cost_usd": round(self.cost_usd, 6),
               "claims": [c.to_dict() for c in self.claims]}
        if self.note:
            out["note"] = self.note
        return out


def answer_sentences(result: AnswerResult) -> list[tuple[int, str]]:
    """(sentence index, text without markers) of every sentence that can hold a claim."""
    return [(s.index, " ".join(strip_markers(s.text).split())) for s in result.sentences
            if not s.refusal and strip_markers(s.text).strip()]


def sentence_claims(result: AnswerResult) -> tuple[Claim, ...]:
    """The fallback decomposition: every sentence is one claim."""
    return tuple(Claim(i, text) for i, text in answer_sentences(result))


def _evidence(result: AnswerResult, sentence: int) -> tuple[list[int], tuple[str, ...]]:
    """(indices of the sentence's citations that pass every mechanical check, reason codes of
    those that do not, or ``uncited``)."""
    s = result.sentences[sentence]
    good: list[int] = []
    reasons: set[str] = set()
    for i in s.citations:
        c = result.citations[i]
        blocking = BLOCKING.intersection(c.reasons)
        if blocking or c.chunk_index is None:
            reasons.update(blocking or {reason_codes.UNRETRIEVED_SOURCE})
        else:
            good.append(i)
    if not s.citations:
        reasons.add(UNCITED)
    return good, tuple(sorted(reasons))


def judge_items(result: AnswerResult, claims: Sequence[Claim]) -> tuple[dict[int, JudgeItem], dict[int, tuple[str, ...]]]:
    """The judge item of every claim with mechanically sound evidence (by claim index), and the
    reason codes of the claims that have none."""
    a = result.answer
    items, failed = {}, {}
    for k, claim in enumerate(claims):
        good, reasons = _evidence(result, claim.sentence)
        if not good:
            failed[k] = reasons
            continue
        cited = [result.citations[i] for i in good]
        chunk = "\n\n".join(a.chunks[c.chunk_index].text for c in cited)  # type: ignore[index]
        quote = " … ".join(c.quote for c in cited if c.quote)
        items[k] = JudgeItem(f"{a.answer_id}#claim{k}", a.question or "", claim.text, quote, chunk, "")
    return items, failed


def assess(result: AnswerResult, claims: Sequence[Claim], judge: Any, threshold: float = DEFAULT_THRESHOLD,
           decomposition: str = "sentences", decomposition_cost: float = 0.0, note: str = "") -> Faithfulness:
    """Judge ``claims`` of a checked answer with ``judge`` (anything with the judges' ``judge``
    method) and score them; claims without sound evidence cost no call."""
    items, failed = judge_items(result, claims)
    verdicts = {v.item: v for v in judge.judge(list(items.values()))} if items else {}
    out = []
    for k, claim in enumerate(claims):
        if k in failed:
            out.append(ClaimVerdict(claim.sentence, claim.text, "not_supported",
                                    "no cited source passed the mechanical checks", failed[k]))
            continue
        v = verdicts.get(items[k].key)
        if v is None:  # the judge stopped (budget) before this claim
            out.append(ClaimVerdict(claim.sentence, claim.text, verdict_store.UNSCORED, "not judged: the judge stopped"))
        else:
            out.append(ClaimVerdict(claim.sentence, claim.text, v.verdict, v.rationale, (), v.cost_usd))
    spent = decomposition_cost + sum(c.cost_usd for c in out)
    name = getattr(judge, "name", type(judge).__name__)
    prompt = getattr(getattr(judge, "prompt", None), "version", "") or ""
    return Faithfulness(tuple(out), threshold, decomposition, name, prompt, spent, note)


def withheld_record(text: str, citations: Sequence) -> dict:
    """What the log keeps of an answer that was withheld: its text and citations as generated."""
    return {"answer": text, "citations": [citation_to_dict(c) for c in citations]}
