"""Versioned prompts: one text file per version in ``prompts/`` beside this module.

The version and a hash of the text travel with every request into the log or verdicts file, so
a figure can always be traced to the exact prompt that produced it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

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
