"""Judges: given items (question, sentence, quote, cited chunk text), a verdict per item.

- ``BaselineJudge``: no model, no key.  Lexical overlap of the sentence's content words with the
  chunk, numbers, and negation.  A yardstick, and the offline path through the whole flow.
- ``ClaudeJudge``: Claude through the ``anthropic`` SDK with a versioned prompt
  (``core/citecheck/llm/prompts/judge.v2.txt`` by default).  The verdict comes from a forced tool call; the chunk sits
  between tags with a random name, so its text cannot pose as the verdict.  Bounded
  concurrency, the SDK's retries with backoff (429, 5xx, timeouts), a budget checked before
  every call from the usage returned and the price table, prompt caching of the shared
  instructions, and a batch mode through the Message Batches API (half price).

Every judge yields ``Verdict`` records (citecheck.judging.verdicts) naming the judge, prompt version and hash.
An item carries its run (``repeat``): ``not_yet_judged(..., repeats=K)`` gives each item once per run
0..K-1 still missing, so ``judge --repeat K`` resumes per (item, run).  ``judge.v3`` takes few-shot
examples (judging.examples) in a fence of their own in the system prompt, and its verdict tool
carries a confidence; judging.cascade builds a cheap-then-strong judge on ``ClaudeJudge``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from citecheck.checking.checker import AnswerResult, number_in, strip_markers
from citecheck.errors import CitecheckError
from citecheck.judging import verdicts
from citecheck.judging.judge_item import JudgeItem
from citecheck.labelling.items import Item, items_of
from citecheck.llm.pricing import Price, estimate_tokens, price_for
from citecheck.llm.prompts import Prompt, Tool, load_prompt, tool_calls, tool_request

if TYPE_CHECKING:
    from citecheck.judging.examples import Examples


def judge_items(results: Sequence[AnswerResult], keys: set[str] | None = None,
                items: Sequence[list[Item]] | None = None) -> list[JudgeItem]:
    """The citation items of checked answers (only ``keys`` when given), ready to judge.
    ``items``, when given, are the answers' review items already computed (``Dataset.items_by_answer``)."""
    out: list[JudgeItem] = []
    for n, result in enumerate(results):
        for item in (items[n] if items is not None else items_of(result)):
            if item.citation is None or (keys is not None and item.key not in keys):
                continue
            out.append(_judge_item(result, item))
    return out


def _judge_item(result: AnswerResult, item: Item) -> JudgeItem:
    a = result.answer
    citation = result.citations[item.citation]  # type: ignore[index]
    chunk = a.chunks[citation.chunk_index]  # type: ignore[index]
    sentence = strip_markers(result.sentences[item.sentence].text).strip()
    return JudgeItem(item.key, a.question or "", " ".join(sentence.split()), citation.quote or "", chunk.text,
                     item.fingerprint)


@dataclass
class Progress:
    done: int = 0
    total: int = 0
    spent: float = 0.0
    unscored: int = 0
    failed: int = 0  # unscored because the API call failed (not because of the item or the reply)
    stopped: str | None = None
    rounds: int = 0  # batches sent (batch mode)
    escalated: int = 0  # items a cascade's strong model decided (judging.cascade)


# --- the baseline -------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"(?<![^\W_])\d+(?:[.,]\d+)*")
_NEGATION = frozenset("not no never none nor cannot without neither n't isn't aren't doesn't don't won't".split())
_STOP = frozenset("""a an the of in on at to for from by with and or but is are was were be been being it its this
that these those as if then than so such can may might will would should could do does did has have had i you he
she we they them their our your his her my me us also there here which who whom what when where why how all any
each more most other some into over under about after before between through during up down out off""".split())


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP and not w.isdigit()}


def _negated(text: str) -> bool:
    lowered = text.casefold().replace("\u2019", "'")
    return any(w in _NEGATION for w in re.findall(r"[\w']+", lowered))


_CHUNK_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


def _closest_sentence(chunk: str, words: set[str]) -> str:
    """The sentence of ``chunk`` sharing the most content words with the judged sentence: the
    passage the negation test compares against when the citation has no quote."""
    best, best_score = "", -1
    for m in _CHUNK_SENTENCE.finditer(chunk):
        score = len(words & _content_words(m.group()))
        if score > best_score:
            best, best_score = m.group(), score
    return best


@dataclass(frozen=True)
class BaselineJudge:
    """Rules, in order: an empty chunk is unscored; a number of the sentence missing from the
    chunk, or a negation in one of the sentence and its evidence (the quote, else the chunk
    sentence closest in words) but not the other, is ``not_supported``; otherwise the share of the sentence's content words found in the chunk
    decides: at least ``supported_at`` is ``supported``, at least ``partial_at`` is ``partial``."""

    supported_at: float = 0.5  # both chosen on the ExpertQA dev split (docs/judge.md)
    partial_at: float = 0.3
    name: str = "baseline"
    prompt: Prompt = Prompt("baseline.v1", "content-word overlap >= 0.5 supported, >= 0.3 partial; numbers; negation")

    def verdict(self, item: JudgeItem) -> tuple[str, str]:
        if not item.chunk.strip():
            return verdicts.UNSCORED, "the cited chunk has no text to judge against"
        numbers = [n.replace(",", "") for n in _NUMBER.findall(item.sentence)]
        missing = [n for n in dict.fromkeys(numbers) if not number_in(item.chunk, n)]
        if missing:
            return "not_supported", f"number(s) {', '.join(missing)} not in the chunk"
        words = _content_words(item.sentence)
        evidence = item.quote if item.quote.strip() else _closest_sentence(item.chunk, words)
        if _negated(item.sentence) != _negated(evidence):
            return "not_supported", "negation in one of sentence and source but not the other"
        if not words:
            return "supported", "no content words to check"
        found = words & _content_words(item.chunk)
        share = len(found) / len(words)
        label = "supported" if share >= self.supported_at else "partial" if share >= self.partial_at else "not_supported"
        return label, f"{len(found)} of {len(words)} content words in the chunk ({share:.0%})"

    def judge(self, items: Sequence[JudgeItem], on_verdict: Callable[[verdicts.Verdict], None] | None = None,
              stop: threading.Event | None = None, progress: Progress | None = None) -> list[verdicts.Verdict]:
        out = []
        progress = progress or Progress(total=len(items))
        for item in items:
            if stop is not None and stop.is_set():
                progress.stopped = "stopped"
                break
            label, why = self.verdict(item)
            v = verdicts.make(item.key, label, why, self.name, self.prompt.version, self.prompt.sha256, item.fingerprint,
                              repeat=item.repeat)
            out.append(v)
            progress.done += 1
            progress.unscored += not v.scored
            if on_verdict:
                on_verdict(v)
        return out


# --- Claude ---------------------------------------------------------------------------------------

TOOL: Tool = {
    "name": "record_verdict",
    "description": "Record whether the source passage supports the sentence.",
    "input_schema": {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": list(verdicts.VERDICTS)},
            "rationale": {"type": "string", "description": "at most 30 words"},
        },
        "required": ["verdict", "rationale"],
    },
}
TOOL_WITH_CONFIDENCE: Tool = {
    "name": "record_verdict",
    "description": "Record whether the source passage supports the sentence, and how sure you are.",
    "input_schema": {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": list(verdicts.VERDICTS)},
            "rationale": {"type": "string", "description": "at most 30 words"},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1,
                           "description": "how likely your verdict is right, from 0 to 1"},
        },
        "required": ["verdict", "rationale"],
    },
}
JUDGE_PROMPT = "judge.v2"
TOOLS: dict[str, Tool] = {"judge.v3": TOOL_WITH_CONFIDENCE}  # a prompt not here uses TOOL
EXAMPLE_PROMPTS = frozenset({"judge.v3"})  # the prompts that take few-shot examples (judging.examples)


def tool_for(prompt_version: str) -> Tool:
    """The verdict tool a prompt version is sent with (``judge.v3``'s carries a confidence)."""
    return TOOLS.get(prompt_version, TOOL)


def gives_confidence(tool: Tool) -> bool:
    return "confidence" in tool["input_schema"]["properties"]


def _fenced(text: str) -> str:
    """A log text as it sits inside the fence: ``&``, ``<`` and ``>`` escaped, so it cannot close a tag."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def judge_request(item: JudgeItem, prompt: Prompt, model: str, max_tokens: int = 300, tag: str | None = None, *,
                  tool: Tool = TOOL, temperature: float | None = None) -> dict:
    """The Messages API request for one item.  Every text from the log (question, sentence, quote,
    chunk) sits inside one block fenced by a random tag name, escaped so that none can close a tag
    or pose as the fence; only the instruction line is outside.  ``temperature`` is sent only when
    given (else the model's default sampling); :func:`sdk_arguments` hands it to the SDK."""
    texts = (item.question, item.sentence, item.quote, item.chunk)
    while tag is None or any(tag in t for t in texts):
        tag = f"log_{secrets.token_hex(6)}"
    body = "\n".join([
        f"<{tag}>",
        f"<question>{_fenced(item.question)}</question>",
        f"<sentence>{_fenced(item.sentence)}</sentence>",
        f"<quote>{_fenced(item.quote)}</quote>",
        f"<passage>{_fenced(item.chunk)}</passage>",
        f"</{tag}>",
        f"Judge whether the passage inside <{tag}> supports the sentence, and record it with {tool['name']}.",
    ])
    request = tool_request(prompt, model, max_tokens, tool, body)
    if temperature is not None:
        request["temperature"] = temperature
    return request


_JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.S)
_JSON_PUNCTUATION = re.compile(r"[{}\[\]\"':,_\-]+")


def sdk_arguments(request: dict) -> dict:
    """``request`` as ``messages.create`` takes it: the SDK (2.x) no longer has a ``temperature``
    argument, so a temperature set with ``--temperature`` travels in ``extra_body``, as the API reads it."""
    args = {k: v for k, v in request.items() if k != "temperature"}
    if "temperature" in request:
        args["extra_body"] = {"temperature": request["temperature"]}
    return args


def _flat(text: str) -> str:
    """Text with case, whitespace and JSON formatting (braces, quotes, colons, commas) folded away."""
    return " ".join(_JSON_PUNCTUATION.sub(" ", text.casefold()).split())


def _request_verdicts(texts: Sequence[str]) -> tuple[str, set[str]]:
    """The request's texts folded (:func:`_flat`), and every verdict object written in them
    (``{"verdict": ...}`` in any JSON formatting, escapes decoded) folded the same way."""
    objects: set[str] = set()
    for text in texts:
        for match in _JSON_OBJECT.findall(text):
            try:
                data = json.loads(match)
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict) and "verdict" in data:
                objects.update({_flat_object(data), _flat_object(_core(data))})
    return "\n".join(_flat(t) for t in texts if t), objects


def _is_copy(data: dict, folded: str, objects: set[str]) -> bool:
    """A verdict call whose verdict and rationale are written in the request, in either order,
    in any spacing, case or JSON formatting: the judged text declaring its own verdict."""
    verdict, rationale = str(data.get("verdict", "")), str(data.get("rationale", ""))
    forms = {_flat(f"verdict {verdict} rationale {rationale}"), _flat(f"rationale {rationale} verdict {verdict}")}
    if not rationale.strip():
        forms.add(_flat(f"verdict {verdict}"))
    return any(form in folded for form in forms) or bool({_flat_object(data), _flat_object(_core(data))} & objects)


def _core(data: dict) -> dict:
    """A verdict object without its confidence: a copied verdict and rationale stay a copy whatever
    confidence the call adds."""
    return {k: v for k, v in data.items() if k != "confidence"}


def _flat_object(data: dict) -> str:
    return _flat(" ".join(f"{k} {data[k]}" for k in sorted(data, key=lambda k: str(k).casefold())))


def verdict_calls(content: Sequence[dict]) -> list[dict]:
    """The inputs of the reply's ``record_verdict`` calls (text blocks are never read as a verdict)."""
    inputs = (call.get("input") for call in tool_calls(content, TOOL["name"]))
    return [data if isinstance(data, dict) else {} for data in inputs]


def call_confidence(content: Sequence[dict]) -> float | None:
    """The confidence of the reply's first verdict call with a valid verdict, when it gives a number
    in [0, 1] (anything else, or none, is None: the judge did not say)."""
    for data in verdict_calls(content):
        if verdicts.normalise_verdict(data.get("verdict", "")) is None:
            continue
        value = data.get("confidence")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0:
            return float(value)
        return None
    return None


def has_verdict(content: Sequence[dict]) -> bool:
    """Whether the reply holds a ``record_verdict`` call with a valid verdict (else it is retried once)."""
    return any(verdicts.normalise_verdict(data.get("verdict", "")) is not None for data in verdict_calls(content))


def parse_verdict(content: Sequence[dict], chunk: str, *request_texts: str) -> tuple[str, str]:
    """(verdict, rationale) from a reply's content blocks; ``(unscored, why)`` when there is none.

    Only the forced ``record_verdict`` tool call counts: a verdict in the reply's text, JSON or
    prose, is never read (the request forces the tool, so text is either noise or an echo of the
    judged material).  A call whose verdict and rationale are written in the request (the chunk,
    the sentence or claim, the quote, the question), after folding whitespace, case and JSON
    formatting, is a copy and is refused."""
    calls = verdict_calls(content)
    if not calls:
        has_text = any(b.get("type") == "text" and b.get("text", "").strip() for b in content)
        return verdicts.UNSCORED, ("the reply has no record_verdict call (its text is not read as a verdict)" if has_text
                            else "the reply has neither a verdict call nor text")
    folded, objects = _request_verdicts((chunk, *request_texts))
    own: list[tuple[str, str]] = []
    copied = invalid = 0
    for data in calls:
        verdict = verdicts.normalise_verdict(data.get("verdict", ""))
        if verdict is None:
            invalid += 1
        elif _is_copy(data, folded, objects):
            copied += 1
        else:
            own.append((verdict, str(data.get("rationale", ""))[:500]))
    if not own:
        if copied:
            return verdicts.UNSCORED, "the verdict call copies a verdict written in the judged material"
        return verdicts.UNSCORED, f"the verdict tool was called without a valid verdict ({calls[0].get('verdict')!r})"
    if len({verdict for verdict, _ in own}) > 1:
        return verdicts.UNSCORED, "the reply has verdict calls that disagree: " + ", ".join(v for v, _ in own)
    return own[0]


class JudgeBudgetExhausted(CitecheckError):
    """The judge run's --max-cost-usd would be passed by the next call: no more calls start."""


@dataclass(frozen=True, slots=True)
class Reply:
    """What one call gave: the verdict or why there is none, its cost, the confidence the call
    stated, whether the call itself failed, and whether the reply had no valid verdict call."""

    label: str
    why: str
    cost: float = 0.0
    confidence: float | None = None
    failed: bool = False
    again: bool = False


@dataclass
class ClaudeJudge:
    """``examples`` (judging.examples, a prompt of EXAMPLE_PROMPTS only) join the system prompt in
    their own fence; the recorded prompt version then carries their hash (``judge.v3+ex.<12 hex>``).
    ``temperature`` is sent only when set (else the model's default sampling; current models may
    refuse another temperature with HTTP 400)."""

    client: Any
    model: str = "claude-haiku-4-5"
    prompt_version: str = JUDGE_PROMPT
    concurrency: int = 4
    max_cost_usd: float | None = None
    max_tokens: int = 300
    price: tuple[float, float] | None = None
    temperature: float | None = None
    examples: Examples | None = None

    def __post_init__(self) -> None:
        base = load_prompt(self.prompt_version)
        self.tool: Tool = tool_for(self.prompt_version)
        self.prompt, self._sent = base, base  # what verdicts record; what the requests carry
        if self.examples is not None:
            if self.prompt_version not in EXAMPLE_PROMPTS:
                raise CitecheckError(f"prompt {self.prompt_version} takes no examples; use --prompt "
                                     f"{' or '.join(sorted(EXAMPLE_PROMPTS))} with --examples")
            self.prompt = Prompt(f"{base.version}{self.examples.version_suffix}", base.text)
            self._sent = Prompt(self.prompt.version, base.text + "\n\n" + self.examples.fenced())
        self._price: Price = price_for(self.model, self.price)

    @property
    def name(self) -> str:
        return f"claude:{self.model}"

    @property
    def examples_sha256(self) -> str:
        return self.examples.sha256 if self.examples is not None else ""

    def request(self, item: JudgeItem, model: str | None = None) -> dict:
        """The Messages API request for ``item`` (to ``model``, by default this judge's)."""
        return judge_request(item, self._sent, model or self.model, self.max_tokens, tool=self.tool,
                             temperature=self.temperature)

    def _verdict(self, item: JudgeItem, label: str, why: str, cost: float = 0.0, confidence: float | None = None,
                 decided_by: str = "") -> verdicts.Verdict:
        return verdicts.make(item.key, label, why, self.name, self.prompt.version, self.prompt.sha256, item.fingerprint,
                             cost, repeat=item.repeat, decided_by=decided_by,
                             confidence=confidence if label != verdicts.UNSCORED else None,
                             examples_sha256=self.examples_sha256)

    @staticmethod
    def _worst_tokens(request: dict) -> int:
        # + the tool definition and the API's tool-use system prompt (a few hundred tokens)
        return estimate_tokens(request["system"][0]["text"] + request["messages"][0]["content"]
                               + json.dumps(request["tools"])) + 600

    def _worst(self, request: dict) -> float:
        """The most the calls for one item can cost (checked against the budget before they start)."""
        return self._price.worst_case(self._worst_tokens(request), request["max_tokens"])

    def _ask(self, item: JudgeItem, request: dict, price: Price | None = None) -> Reply:
        """One call (the SDK retries 429, 5xx and timeouts) and what its reply says."""
        try:
            response = self.client.messages.create(**sdk_arguments(request))
        except Exception as exc:  # retried by the SDK already
            status = getattr(exc, "status_code", None)
            return Reply(verdicts.UNSCORED, f"API call failed ({type(exc).__name__}"
                                            f"{f', HTTP {status}' if status else ''})", failed=True)
        body = response if isinstance(response, dict) else response.model_dump(mode="json", exclude_none=True)
        cost = (price or self._price).cost(body.get("usage") or {})
        content = body.get("content") or []
        label, why = parse_verdict(content, item.chunk, item.sentence, item.quote, item.question)
        if label == verdicts.UNSCORED and body.get("stop_reason") == "max_tokens":
            why += " (the reply was cut off at max_tokens)"
        return Reply(label, why, cost, self._confidence(content), again=not has_verdict(content))

    def _confidence(self, content: Sequence[dict]) -> float | None:
        """The reply's confidence, when this judge's tool asks for one (else None, whatever it holds)."""
        return call_confidence(content) if gives_confidence(self.tool) else None

    def _one(self, item: JudgeItem, request: dict) -> tuple[verdicts.Verdict, bool, bool]:
        """The verdict, whether it is unscored because the call failed, and whether the reply had
        no valid verdict call (then it is asked once more)."""
        r = self._ask(item, request)
        return self._verdict(item, r.label, r.why, r.cost, r.confidence), r.failed, r.again

    def judge(self, items: Sequence[JudgeItem], on_verdict: Callable[[verdicts.Verdict], None] | None = None,
              stop: threading.Event | None = None, progress: Progress | None = None) -> list[verdicts.Verdict]:
        """Judge ``items`` with at most ``concurrency`` calls in flight.  Before each call, the
        spent cost plus the worst case of every call in flight and of this one must fit the
        budget; otherwise no more calls start, and what was judged is kept."""
        progress = progress or Progress(total=len(items))
        out: list[verdicts.Verdict] = []
        reserved: dict[Any, float] = {}
        submitted: dict[Any, JudgeItem] = {}
        pending = iter(items)
        retry: list[JudgeItem] = []  # replies without a valid verdict call, asked once more
        first: dict[tuple[str, int], verdicts.Verdict] = {}  # their first (unscored) verdict, with its cost
        with ThreadPoolExecutor(max_workers=max(1, self.concurrency)) as pool:
            exhausted = False
            while True:
                while (not exhausted or retry) and len(reserved) < self.concurrency and not (stop and stop.is_set()):
                    item = retry.pop(0) if retry else next(pending, None)
                    if item is None:
                        exhausted = True
                        break
                    if not item.chunk.strip():
                        v = self._verdict(item, verdicts.UNSCORED, "the cited chunk has no text to judge against")
                        self._record(v, out, progress, on_verdict)
                        continue
                    request = self.request(item)
                    worst = self._worst(request)
                    if self.max_cost_usd is not None and progress.spent + sum(reserved.values()) + worst > self.max_cost_usd:
                        progress.stopped = (f"budget: ${progress.spent:.4f} spent of ${self.max_cost_usd:.4f}; the next "
                                            f"call could cost up to ${worst:.4f}")
                        exhausted = True
                        if (item.key, item.repeat) in first:  # no budget to ask again: the first reply's verdict stands
                            self._record(first.pop((item.key, item.repeat)), out, progress, on_verdict)
                        break
                    future = pool.submit(self._one, item, request)
                    reserved[future], submitted[future] = worst, item
                if stop is not None and stop.is_set() and progress.stopped is None:
                    progress.stopped = "stopped"
                    exhausted = True
                if not reserved:
                    break
                finished, _ = wait(list(reserved), return_when=FIRST_COMPLETED)
                for future in finished:
                    reserved.pop(future)
                    item = submitted.pop(future)
                    v, failed, again = future.result()
                    progress.spent += v.cost_usd
                    slot = (item.key, item.repeat)
                    if again and slot not in first and not (stop and stop.is_set()):
                        first[slot] = v
                        retry.append(item)
                        continue
                    if slot in first:  # the verdict carries what both calls cost
                        v = dataclasses.replace(v, cost_usd=round(v.cost_usd + first.pop(slot).cost_usd, 6),
                                                rationale=v.rationale + (" (asked twice)" if not v.scored else ""))
                    progress.failed += failed
                    self._record(v, out, progress, on_verdict)
        for item in retry:  # stopped before they were asked again
            self._record(first.pop((item.key, item.repeat)), out, progress, on_verdict)
        return out

    def _record(self, v: verdicts.Verdict, out: list, progress: Progress, on_verdict) -> None:
        out.append(v)
        progress.done += 1
        progress.unscored += not v.scored
        if on_verdict:
            on_verdict(v)

    # --- Message Batches -------------------------------------------------------------------------

    def input_tokens(self, request: dict) -> int:
        """The input tokens of ``request``, counted by the API's token counting endpoint (free,
        through the SDK); when it cannot be reached, the documented high bound of
        ``estimate_tokens`` (3 characters a token) plus 600 for the tool-use system prompt."""
        try:
            counted = self.client.messages.count_tokens(
                model=request["model"], system=request["system"], tools=request["tools"],
                tool_choice=request["tool_choice"], messages=request["messages"])
            return int(counted.input_tokens)
        except Exception:  # no counting here (older SDK, proxy, offline): fall back to the bound
            return estimate_tokens(request["system"][0]["text"] + json.dumps(request["messages"])
                                   + json.dumps(request["tools"])) + 600

    def judge_batch(self, items: Sequence[JudgeItem], poll_seconds: float = 30.0,
                    on_verdict: Callable[[verdicts.Verdict], None] | None = None,
                    progress: Progress | None = None, sleep: Callable[[float], None] = time.sleep) -> list[verdicts.Verdict]:
        """Judge through the Message Batches API (half price; results within 24 hours).

        Each item reserves what it can cost at most: its counted input tokens plus ``max_tokens``
        of output, at the batch price.  Items are sent in rounds: a round takes the next items
        whose reservations fit in what the budget has left; when its results return, the
        reservations are replaced by the costs the API reported, and the next round takes more."""
        progress = progress or Progress(total=len(items))
        out: list[verdicts.Verdict] = []
        half = Price(self._price.input / 2, self._price.output / 2)
        pending: list[tuple[str, JudgeItem]] = []
        for i, item in enumerate(items):
            if not item.chunk.strip():
                self._record(self._verdict(item, verdicts.UNSCORED, "the cited chunk has no text to judge against"),
                             out, progress, on_verdict)
            else:
                pending.append((f"item-{i}", item))
        reserve: dict[str, tuple[dict, float]] = {}
        first: dict[str, verdicts.Verdict] = {}  # replies without a valid verdict call: asked once more, next round
        while pending:
            requests, by_id, reserved = [], {}, 0.0
            while pending:
                custom_id, item = pending[0]
                if custom_id not in reserve:
                    params = self.request(item)
                    reserve[custom_id] = params, half.worst_case(self.input_tokens(params), params["max_tokens"])
                params, worst = reserve[custom_id]
                if self.max_cost_usd is not None and progress.spent + reserved + worst > self.max_cost_usd:
                    break
                pending.pop(0)
                reserved += worst
                by_id[custom_id] = item
                requests.append({"custom_id": custom_id, "params": params})
            if not requests:
                progress.stopped = (f"budget: ${progress.spent:.4f} spent of ${self.max_cost_usd:.4f}; "
                                    f"{len(pending)} item(s) left, the next could cost up to "
                                    f"${reserve[pending[0][0]][1]:.4f}")
                break
            progress.rounds += 1
            pending.extend(self._run_batch(requests, by_id, half, poll_seconds, sleep, out, progress, on_verdict,
                                           first))
        for custom_id, _ in pending:  # left by the budget after a first reply without a verdict
            if custom_id in first:
                self._record(first.pop(custom_id), out, progress, on_verdict)
        return out

    def _run_batch(self, requests: list[dict], by_id: dict[str, JudgeItem], half: Price, poll_seconds: float,
                   sleep: Callable[[float], None], out: list, progress: Progress, on_verdict,
                   first: dict[str, verdicts.Verdict]) -> list[tuple[str, JudgeItem]]:
        """Send one batch, record its verdicts; the items to ask once more (no verdict call)."""
        again: list[tuple[str, JudgeItem]] = []
        batch = self.client.messages.batches.create(requests=requests)
        while batch.processing_status != "ended":
            sleep(poll_seconds)
            batch = self.client.messages.batches.retrieve(batch.id)
        for entry in self.client.messages.batches.results(batch.id):
            item = by_id.get(entry.custom_id)
            if item is None:
                continue
            result = entry.result
            failed = False
            if result.type == "succeeded":
                body = result.message.model_dump(mode="json", exclude_none=True)
                content = body.get("content") or []
                label, why = parse_verdict(content, item.chunk, item.sentence, item.quote, item.question)
                v = self._verdict(item, label, why, half.cost(body.get("usage") or {}), self._confidence(content))
                progress.spent += v.cost_usd
                if not has_verdict(content) and entry.custom_id not in first:
                    first[entry.custom_id] = v
                    again.append((entry.custom_id, item))
                    continue
            else:
                v = self._verdict(item, verdicts.UNSCORED, f"batch request {result.type}")
                failed = result.type == "errored"
            if entry.custom_id in first:  # the verdict carries what both requests cost
                v = dataclasses.replace(v, cost_usd=round(v.cost_usd + first.pop(entry.custom_id).cost_usd, 6),
                                        rationale=v.rationale + (" (asked twice)" if not v.scored else ""))
            progress.failed += failed
            self._record(v, out, progress, on_verdict)
        return again


def judge_key(judge: Any) -> tuple[str, str]:
    return judge.name, judge.prompt.version


def not_yet_judged(items: Iterable[JudgeItem], existing: Iterable[verdicts.Verdict], judge: Any,
                   repeats: int = 1) -> list[JudgeItem]:
    """The runs still to pay for: each item once per run ``repeat`` 0..``repeats``-1 (every item's
    run 0 first, then every item's run 1...) without a scored verdict from this judge and prompt
    version for the item's current fingerprint and that run."""
    if repeats < 1:
        raise ValueError(f"repeats {repeats} is below 1: 1 is the ordinary run alone")
    name, version = judge_key(judge)
    done = {(v.item, v.fingerprint, v.repeat) for v in existing
            if v.judge == name and v.prompt_version == version and v.scored}
    items = list(items)
    return [dataclasses.replace(i, repeat=r) if i.repeat != r else i
            for r in range(repeats) for i in items if (i.key, i.fingerprint, r) not in done]
