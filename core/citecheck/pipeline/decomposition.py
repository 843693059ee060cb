"""Atomic claims of an answer: one Claude call with a versioned prompt and a forced tool call.

The answer's sentences go in numbered, inside a randomly named fence; the reply's ``record_claims``
call gives each claim with the number of the sentence it came from.  A reply without a valid call,
or whose claims name sentences that do not exist, is an error the caller handles (the pipeline
then judges each cited sentence as one claim); the claims' text is never trusted to carry a verdict.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from citecheck.errors import CitecheckError
from citecheck.llm.pricing import Price
from citecheck.llm.prompts import Prompt, Tool, load_prompt, tool_calls, tool_request

CLAIMS_PROMPT = "claims.v1"
TOOL: Tool = {
    "name": "record_claims",
    "description": "Record the atomic claims of the answer, each with the number of its sentence.",
    "input_schema": {
        "type": "object",
        "properties": {
            "claims": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"sentence": {"type": "integer", "description": "the sentence's number"},
                                   "claim": {"type": "string"}},
                    "required": ["sentence", "claim"],
                },
            },
        },
        "required": ["claims"],
    },
}
MAX_CLAIM_CHARS = 1000


class ClaimsError(CitecheckError):
    """The decomposition reply could not be used (no call, malformed, unknown sentence)."""

    cost_usd: float = 0.0  # what the call cost (set by :func:`decompose`; 0 when no call was made)


@dataclass(frozen=True, slots=True)
class Claim:
    sentence: int  # index into the checked answer's sentences (0-based)
    text: str


@dataclass(frozen=True, slots=True)
class Decomposition:
    claims: tuple[Claim, ...]
    prompt_version: str
    prompt_sha256: str
    cost_usd: float


def claims_request(sentences: Sequence[str], prompt: Prompt, model: str, max_tokens: int = 1024,
                   tag: str | None = None) -> dict:
    tag = tag or f"answer_{secrets.token_hex(6)}"
    numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(sentences, start=1))
    content = f"<{tag}>\n{numbered}\n</{tag}>\nSplit the numbered sentences in <{tag}> into atomic claims."
    return tool_request(prompt, model, max_tokens, TOOL, content)


def parse_claims(content: Sequence[dict], sentences: int) -> tuple[Claim, ...]:
    """The claims of a reply's ``record_claims`` call; ClaimsError when there is none or it is
    malformed.  Sentence numbers are 1-based in the reply and 0-based in the result."""
    calls = tool_calls(content, TOOL["name"])
    if not calls:
        raise ClaimsError("the reply has no record_claims call")
    data = calls[-1].get("input")
    items = data.get("claims") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ClaimsError("record_claims was called without a list of claims")
    out = []
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            raise ClaimsError(f"claims[{n}]: not an object")
        number, text = item.get("sentence"), item.get("claim")
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= sentences:
            raise ClaimsError(f"claims[{n}].sentence: {number!r} is not a sentence number 1..{sentences}")
        if not isinstance(text, str) or not text.strip():
            raise ClaimsError(f"claims[{n}].claim: missing or empty")
        out.append(Claim(number - 1, " ".join(text.split())[:MAX_CLAIM_CHARS]))
    return tuple(out)


def decompose(client: Any, sentences: Sequence[str], model: str, price: Price,
              prompt_version: str = CLAIMS_PROMPT, max_tokens: int = 1024) -> Decomposition:
    """Split ``sentences`` into claims with one call; raises ClaimsError (with the call's cost in
    ``.cost_usd``) when the reply cannot be used, and lets API errors through."""
    prompt = load_prompt(prompt_version)
    request = claims_request(sentences, prompt, model, max_tokens)
    response = client.messages.create(**request)
    body = response if isinstance(response, dict) else response.model_dump(mode="json", exclude_none=True)
    cost = price.cost(body.get("usage") or {})
    try:
        claims = parse_claims(body.get("content") or [], len(sentences))
    except ClaimsError as exc:
        exc.cost_usd = cost
        raise
    return Decomposition(claims, prompt.version, prompt.sha256, cost)
