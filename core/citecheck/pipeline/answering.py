"""The reference answer pipeline: retrieve, gate, assemble, call Claude, write a log line.

    question -> BM25 top k -> gate (refuse with no call below the support floor) -> pack
    (dedupe, cap) -> request (markers or citations shape) -> Claude -> log line (format v1)

Everything the checker needs goes into the line: the packed chunks with offsets and checksums,
the answer exactly as the model wrote it (a marker or document index outside the packed chunks
survives, so the checker flags it), the quotes, usage and cost, model, prompt version and hash,
index snapshot and the gate decision.  Costs come from the usage the API returns and the price
table in citecheck.llm.pricing; a run stops before a call that could take it over its budget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypedDict

from citecheck.contract.log import Answer, Citation
from citecheck.errors import CitecheckError, FieldError, RecordError
from citecheck.importers.anthropic import convert
from citecheck.llm.client import make_client  # noqa: F401  (re-exported for callers of the pipeline)
from citecheck.llm.pricing import DEFAULT_MODEL, Price, estimate_tokens, price_for
from citecheck.pipeline import assembly
from citecheck.pipeline.faithfulness import DEFAULT_THRESHOLD
from citecheck.pipeline.gate import DEFAULT_MIN_SUPPORT, SAMPLE_FLOOR, GateDecision, decide
from citecheck.pipeline.retrieval import Index, Scored
from citecheck.storage import lines
from citecheck.storage.lines import expect, expect_object, parse_record


class PipelineError(CitecheckError):
    """A question that could not be answered (API error, cap too small); the run goes on."""


class BudgetExhausted(CitecheckError):
    """The next call could take the run over its budget; nothing more is sent."""


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    model: str = DEFAULT_MODEL
    shape: str = "markers"
    prompt_version: str | None = None  # default per shape (assembly.DEFAULT_PROMPT)
    k: int = 8  # chunks retrieved
    max_chunks: int = 5  # chunks packed into the prompt
    floor: float = SAMPLE_FLOOR
    min_support: int = DEFAULT_MIN_SUPPORT
    max_tokens: int = 800
    max_cost_per_answer: float = 0.05  # USD
    price: tuple[float, float] | None = None  # USD per million tokens (in, out); default from the table
    faithfulness: bool = False  # score claims after generation and withhold answers below the threshold
    faithfulness_threshold: float = DEFAULT_THRESHOLD
    judge_model: str = "claude-haiku-4-5"  # decomposes and judges claims
    agent_fallback: bool = False  # when the gate refuses, let a capped search agent try
    agent_max_turns: int = 4
    agent_budget_usd: float = 0.05  # per question

    @property
    def prompt(self) -> str:
        version = self.prompt_version or assembly.DEFAULT_PROMPT[self.shape]
        if version not in assembly.SHAPES[self.shape]:
            raise CitecheckError(f"prompt {version!r} is not a {self.shape} prompt; "
                                 f"use one of {', '.join(assembly.SHAPES[self.shape])}")
        return version


@dataclass
class Budget:
    """The run's spending: what was spent, and the limit no call may cross (None: no limit)."""

    limit: float | None = None
    spent: float = 0.0
    calls: int = 0

    def check(self, worst_case: float) -> None:
        if self.limit is not None and self.spent + worst_case > self.limit:
            raise BudgetExhausted(
                f"stopping: the next call could cost up to ${worst_case:.4f} and ${self.spent:.4f} of the "
                f"${self.limit:.4f} budget is spent")

    def add(self, cost: float) -> None:
        self.spent += cost
        self.calls += 1


@dataclass(frozen=True)
class Plan:
    """What the pipeline would do for a question, before any call (``--dry-run`` prints it)."""

    question: str
    retrieved: tuple[Scored, ...]
    packed: tuple[Scored, ...]
    gate: GateDecision
    prompt: assembly.Prompt
    request: dict | None  # None when the gate refuses

    def to_dict(self) -> dict:
        return {"question": self.question, "gate": self.gate.to_dict(),
                "retrieved": [{"rank": s.rank, "chunk_id": s.chunk.chunk_id, "score": round(s.score, 4)}
                              for s in self.retrieved],
                "prompt_version": self.prompt.version, "prompt_sha256": self.prompt.sha256,
                "request": self.request}


def plan(index: Index, question: str, config: PipelineConfig) -> Plan:
    retrieved = tuple(index.search(question, config.k))
    gate = decide(retrieved, config.floor, config.min_support)
    packed = tuple(assembly.pack(retrieved, config.max_chunks))
    prompt = assembly.load_prompt(config.prompt)
    request = None
    if gate.passed:
        request = assembly.build_request(config.shape, question, [s.chunk for s in packed], prompt,
                                         config.model, config.max_tokens)
    return Plan(question, retrieved, packed, gate, prompt, request)


def _fit_max_tokens(request: dict, price: Price, cap: float) -> tuple[int, float]:
    """(max_tokens lowered so the worst case stays within ``cap``, that worst case)."""
    input_tokens = estimate_tokens(repr(request["system"]) + repr(request["messages"]))
    input_cost = price.worst_case(input_tokens, 0)
    room = int((cap - input_cost) * 1_000_000 / price.output) if price.output else request["max_tokens"]
    max_tokens = min(request["max_tokens"], room)
    if max_tokens < 64:
        raise PipelineError(f"the prompt alone could cost ${input_cost:.4f}; a ${cap:.4f} per-answer cap leaves "
                            "no room for an answer (raise --max-cost-per-answer or lower --max-chunks)")
    return max_tokens, price.worst_case(input_tokens, max_tokens)


class _LineFields(TypedDict):
    """The fields of a question's log line that do not depend on the reply."""

    answer_id: str
    question: str
    timestamp: str
    model: str
    prompt_version: str
    index_snapshot: str


def _response_dict(response: Any) -> dict:
    if isinstance(response, dict):
        return response
    return response.model_dump(mode="json", exclude_none=True)


def answer_question(
    client: Any,
    index: Index,
    question: str,
    answer_id: str,
    config: PipelineConfig = PipelineConfig(),
    budget: Budget | None = None,
    now: Callable[[], str] = lines.now,
) -> Answer:
    """Answer one question and return its log line.  Raises PipelineError (this question failed;
    the run may go on) or BudgetExhausted (stop the run)."""
    budget = budget if budget is not None else Budget()
    p = plan(index, question, config)
    chunks = tuple(s.chunk for s in p.packed)
    base = _LineFields(answer_id=answer_id, question=question, timestamp=now(), model=config.model,
                       prompt_version=p.prompt.version, index_snapshot=index.snapshot)
    extra: dict = {"shape": config.shape, "prompt_sha256": p.prompt.sha256, "gate": p.gate.to_dict()}
    if p.request is None:
        gate_refusal = Answer(answer=assembly.REFUSAL, chunks=chunks, refused=True,
                              extra={**extra, "refused_by": "gate", "cost_usd": 0.0}, **base)
        if config.agent_fallback:
            from citecheck.pipeline.agent import try_agent

            return try_agent(client, index, gate_refusal, config, budget)
        return gate_refusal
    price = price_for(config.model, config.price)
    max_tokens, worst = _fit_max_tokens(p.request, price, config.max_cost_per_answer)
    budget.check(worst)
    request = {**p.request, "max_tokens": max_tokens}
    try:
        response = client.messages.create(**request)
    except Exception as exc:  # the SDK has already retried 429/5xx/timeouts with backoff
        raise PipelineError(_api_error(exc)) from None
    body = _response_dict(response)
    cost = price.cost(body.get("usage") or {})
    budget.add(cost)
    extra.update(cost_usd=round(cost, 6), usage=body.get("usage"), stop_reason=body.get("stop_reason"))
    if config.shape == "markers":
        text = "".join(b.get("text", "") for b in body.get("content", []) if b.get("type") == "text")
        reply = assembly.parse_markers_reply(text)
        citations = tuple(Citation("marker", marker=n, quote=q) for n, q in reply.quotes)
        answer_text = reply.answer
    else:
        meta = {"answer_id": answer_id}
        try:
            imported = convert({**request, "metadata": meta}, body, 0)
        except CitecheckError as exc:
            raise PipelineError(f"the response could not be read: {exc}") from None
        citations, answer_text = imported.citations, imported.answer
    refused = assembly.is_refusal(answer_text)
    if refused:
        extra["refused_by"] = "model"
    answer = Answer(answer=answer_text, chunks=chunks, citations=citations, refused=refused, extra=extra, **base)
    if config.faithfulness and not refused:
        answer = gate_faithfulness(client, answer, config, budget)
    return answer


def gate_faithfulness(client: Any, answer: Answer, config: PipelineConfig, budget: Budget) -> Answer:
    """Score ``answer``'s claims and withhold it (the exact refusal instead) below the threshold.

    The log line keeps the score, threshold, claims and verdicts either way, and the withheld
    answer's text and citations when it is withheld."""
    from citecheck.checking.checker import CheckOptions, check_answer
    from citecheck.judging.judges import ClaudeJudge
    from citecheck.pipeline.decomposition import ClaimsError, decompose
    from citecheck.pipeline.faithfulness import assess, sentence_claims, withheld_record

    result = check_answer(answer, CheckOptions(refusals=(assembly.REFUSAL,)))
    price = price_for(config.judge_model, config.price if config.judge_model == config.model else None)
    sentences = [s for _, s in _claim_sentences(result)]
    claims, decomposition, spent, note = sentence_claims(result), "sentences", 0.0, ""
    if sentences:
        budget.check(price.worst_case(estimate_tokens(" ".join(sentences)) + 1200, 1024))
        try:
            found = decompose(client, sentences, config.judge_model, price)
            index = [i for i, _ in _claim_sentences(result)]
            claims = tuple(type(c)(index[c.sentence], c.text) for c in found.claims)
            decomposition, spent = found.prompt_version, found.cost_usd
        except ClaimsError as exc:
            spent, note = exc.cost_usd, f"decomposition failed ({exc}); each sentence judged as one claim"
        except Exception as exc:  # API error after the SDK's retries
            note = f"decomposition failed ({_api_error(exc)}); each sentence judged as one claim"
        budget.add(spent)
    remaining = None if budget.limit is None else max(0.0, budget.limit - budget.spent)
    judge = ClaudeJudge(client, model=config.judge_model, max_cost_usd=remaining, concurrency=2,
                        price=config.price if config.judge_model == config.model else None)
    verdict = assess(result, claims, judge, config.faithfulness_threshold, decomposition, spent, note)
    budget.spent += verdict.cost_usd - spent
    record = verdict.to_dict()
    extra = {**answer.extra, "faithfulness": record,
             "cost_usd": round((answer.extra.get("cost_usd") or 0.0) + verdict.cost_usd, 6)}
    if not verdict.withheld:
        return dataclasses.replace(answer, extra=extra)
    record["withheld_answer"] = withheld_record(answer.answer, answer.citations)
    extra["refused_by"] = "faithfulness"
    return dataclasses.replace(answer, answer=assembly.REFUSAL, citations=(), refused=True, extra=extra)


def _claim_sentences(result) -> list[tuple[int, str]]:
    from citecheck.pipeline.faithfulness import answer_sentences

    return answer_sentences(result)


def _api_error(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    kind = type(exc).__name__
    message = getattr(exc, "message", None) or str(exc)
    return f"Claude API call failed ({kind}{f', HTTP {status}' if status else ''}): {message}"


def _question(value: object) -> tuple[str | None, str]:
    obj = expect_object(value)
    question = expect(obj, "question", str)
    if not question.strip():
        raise FieldError("question", "is empty")
    qid = obj.get("id") if obj.get("id") is not None else obj.get("answer_id")
    if qid is not None and not isinstance(qid, (str, int)):
        raise FieldError("id", f"must be a string, got {type(qid).__name__}")
    return (None if qid is None else str(qid)), question.strip()


def read_questions(path) -> tuple[list[tuple[str, str]], list[RecordError]]:
    """``(id, question)`` from a JSONL file (``question`` and optional ``id`` or ``answer_id``) or
    a plain text file (one question per line); ids default to ``q-<line>``.  A JSON line that is
    not a question is reported (file, line, field) and the others are still read."""
    out: list[tuple[str, str]] = []
    errors: list[RecordError] = []
    with open(path, "rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            text = raw.strip()
            if not text:
                continue
            if not text.startswith(b"{"):
                try:
                    out.append((f"q-{line_no}", text.decode("utf-8")))
                except UnicodeDecodeError as exc:
                    errors.append(RecordError(str(path), line_no, "(encoding)", f"not UTF-8 text ({exc.reason})"))
                continue
            parsed = parse_record(str(path), line_no, raw, _question)
            if isinstance(parsed, RecordError):
                errors.append(parsed)
            else:
                out.append((parsed[0] or f"q-{line_no}", parsed[1]))
    return out, errors
