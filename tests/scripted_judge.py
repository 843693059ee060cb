"""A scripted Claude judge behind the real ``anthropic`` SDK: a mock transport (llm.fake_api) whose
``record_verdict`` calls are scripted per model and per item, so a figure measured from its
verdicts can be checked against the value the script sets.

Items are recognised by their sentence (the ``<sentence>`` of the request, unescaped); ``truth``
maps a sentence to the verdict a perfect judge gives (``default`` for any other sentence).  Per
model, a :class:`Script` says how the judge departs from the truth:

- consistent: the truth on every call (the default script);
- flaky: on each call, with probability ``flip_rate``, one of the two other verdicts (evenly);
  draws are seeded by (seed, model, sentence, how many calls that model had for that sentence),
  so a run gives the same verdicts whatever order concurrent calls arrive in;
- biased: on each call on an item whose truth is not ``supported``, with probability ``bias``,
  ``supported``;
- ``alternate``: sentences whose consecutive calls give the truth, then another verdict, and so on
  (two samples always disagree);
- ``malformed``: sentences answered with a verdict call without a valid verdict.

Every reply states ``confidence`` (``unsure_confidence`` for the ``unsure`` sentences; None: the
call gives none) and costs ``input_tokens`` / ``output_tokens`` of usage.  ``errors`` are replies
(``fake_api.error(...)``) sent, in order, before any scripted one.  ``calls[model]`` counts the
requests each model received; ``sentences[model]`` lists the sentences it was asked about.
"""

from __future__ import annotations

import random
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from citecheck.contract.item_keys import VERDICTS
from citecheck.llm import fake_api

_SENTENCE = re.compile(r"<sentence>(.*?)</sentence>", re.S)


@dataclass(frozen=True)
class Script:
    flip_rate: float = 0.0
    bias: float = 0.0
    confidence: float | None = 0.9
    unsure: frozenset[str] = frozenset()
    unsure_confidence: float = 0.3
    alternate: frozenset[str] = frozenset()
    malformed: frozenset[str] = frozenset()
    input_tokens: int = 1000
    output_tokens: int = 50


def unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def other(verdict: str, u: float) -> str:
    """One of the two verdicts other than ``verdict``, evenly by ``u`` in [0, 1)."""
    rest = [v for v in VERDICTS if v != verdict]
    return rest[int(u * len(rest))]


@dataclass
class ScriptedJudge:
    truth: Mapping[str, str] = field(default_factory=dict)
    scripts: Mapping[str, Script] = field(default_factory=dict)  # per model; others get ``default_script``
    default_script: Script = Script()
    default: str = "supported"
    seed: int = 0
    errors: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.sentences: dict[str, list[str]] = defaultdict(list)
        self.bodies: list[dict] = []
        self._seen: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()

    def verdict(self, model: str, sentence: str, n: int) -> str:
        """The verdict of ``model``'s ``n``-th call (from 0) on ``sentence``."""
        script = self.scripts.get(model, self.default_script)
        truth = self.truth.get(sentence, self.default)
        if sentence in script.alternate:
            return truth if n % 2 == 0 else other(truth, 0.0)
        draw = random.Random(f"{self.seed}|{model}|{sentence}|{n}")
        u, pick = draw.random(), draw.random()
        if truth != "supported" and u < script.bias:
            return "supported"
        if u < script.flip_rate:
            return other(truth, pick)
        return truth

    def reply(self, body: dict):
        model = body.get("model", "")
        found = _SENTENCE.search(body["messages"][0]["content"])
        sentence = unescape(found.group(1)) if found else ""
        with self._lock:
            self.bodies.append(body)
            self.calls[model] += 1
            self.sentences[model].append(sentence)
            if self.errors:
                return self.errors.pop(0)
            n = self._seen[(model, sentence)]
            self._seen[(model, sentence)] += 1
        script = self.scripts.get(model, self.default_script)
        call: dict = {"verdict": self.verdict(model, sentence, n), "rationale": f"scripted call {n}"}
        if sentence in script.malformed:
            call = {"verdict": "perhaps", "rationale": "not a verdict"}
        confidence = script.unsure_confidence if sentence in script.unsure else script.confidence
        if confidence is not None:
            call["confidence"] = confidence
        content = [{"type": "tool_use", "id": f"toolu_{n:04d}", "name": "record_verdict", "input": call}]
        return fake_api.message(content, model=model, stop_reason="tool_use",
                                use=fake_api.usage(script.input_tokens, script.output_tokens))

    def client(self, max_retries: int = 2):
        return fake_api.client(self.reply, max_retries=max_retries)
