"""Versioned prompts: one text file per version in ``prompts/`` beside this module.

The version and a hash of the text travel with every request into the log or verdicts file, so
a figure can always be traced to the exact prompt that produced it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

PROMPTS = Path(__file__).resolve().parent / "prompts"


@dataclass(frozen=True, slots=True)
class Prompt:
    version: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]


def load_prompt(version: str) -> Prompt:
    path = PROMPTS / f"{version}.txt"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in PROMPTS.glob("*.txt")))
        raise FileNotFoundError(f"no prompt {version!r} in {PROMPTS}; known: {known}")
    return Prompt(version, path.read_text(encoding="utf-8").strip())


class Tool(TypedDict):
    """A tool as the Messages API takes it: Claude calls it by ``name`` with an input that matches
    ``input_schema`` (a JSON Schema)."""

    name: str
    description: str
    input_schema: dict[str, Any]


def system_blocks(text: str, model: str, tools: list | tuple = ()) -> list[dict]:
    """The system prompt as one text block, marked for caching only when the cached prefix
    (the tools, then the system text) is long enough for ``model`` to cache it: a mark on a
    shorter prefix is ignored by the API, so claiming it would promise a saving that never comes."""
    import json

    from citecheck.llm.pricing import cacheable, low_token_estimate

    block: dict = {"type": "text", "text": text}
    if cacheable(low_token_estimate(text + json.dumps(list(tools))), model):
        block["cache_control"] = {"type": "ephemeral"}
    return [block]


def tool_request(prompt: Prompt, model: str, max_tokens: int, tool: Tool, content: str) -> dict[str, Any]:
    """A Messages API request whose reply must call ``tool`` (``tool_choice`` forces it): the
    prompt as the system text, then one user message, ``content``."""
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": system_blocks(prompt.text, model, [tool]),
        "tools": [tool],
        "tool_choice": {"type": "tool", "name": tool["name"]},
        "messages": [{"role": "user", "content": content}],
    }


def tool_calls(content: Sequence[dict], name: str) -> list[dict]:
    """The calls of the tool ``name`` in a reply's content blocks (its ``tool_use`` blocks), in order."""
    return [b for b in content if b.get("type") == "tool_use" and b.get("name") == name]
