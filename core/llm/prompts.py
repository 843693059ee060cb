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
