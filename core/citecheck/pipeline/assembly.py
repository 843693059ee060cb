"""Prompt assembly: a bounded context from retrieved chunks, and the two request shapes.

- ``markers`` (prompts ``answer.v1``, ``answer.v2``): numbered sources ``[1]..[n]`` labelled with
  their chunk ids, rules to answer only from them, cite every sentence as ``[n]``, refuse with
  one exact sentence, and list a verbatim quote per marker after a ``QUOTES:`` line (so the
  checker can verify each marker; a marker without a quote cannot be shown as verified).
- ``citations`` (prompt ``answer-citations.v1``): each chunk its own ``document`` block with
  citations enabled, and the chunk's log fields as JSON in the block's ``context``.

Prompts are versioned files in ``core/citecheck/llm/prompts/``; the version and a hash of the text travel
with every request into the log.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from citecheck.checking.checker import DEFAULT_REFUSAL
from citecheck.contract.log import Chunk
from citecheck.llm.prompts import Prompt, load_prompt, system_blocks  # noqa: F401 (re-exported for the pipeline)
from citecheck.pipeline.retrieval import Scored
from citecheck.text.normalise import normalise

SHAPES = {"markers": ("answer.v1", "answer.v2"), "citations": ("answer-citations.v1",)}
DEFAULT_PROMPT = {"markers": "answer.v1", "citations": "answer-citations.v1"}
REFUSAL = DEFAULT_REFUSAL


def pack(scored: Sequence[Scored], max_chunks: int = 5) -> list[Scored]:
    """The context: best score first, a chunk whose normalised text repeats an earlier one
    dropped, at most ``max_chunks`` kept."""
    seen: set[str] = set()
    out: list[Scored] = []
    for s in sorted(scored, key=lambda s: (-s.score, s.rank)):
        key = normalise(s.chunk.text, casefold=True)
        if key in seen:
            continue
        seen.add(key)
        out.append(s)
        if len(out) >= max_chunks:
            break
    return out


def _source_text(text: str) -> str:
    """Chunk text as placed in the prompt: a closing tag inside it cannot end the source early."""
    return text.replace("</source", "<\\/source")


def markers_request(question: str, chunks: Sequence[Chunk], prompt: Prompt, model: str, max_tokens: int) -> dict:
    sources = "\n\n".join(
        f'<source n="{i}" id="{c.chunk_id}">\n{_source_text(c.text)}\n</source>' for i, c in enumerate(chunks, 1)
    )
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": system_blocks(prompt.text, model),
        "messages": [{"role": "user", "content": f"Question: {question}\n\nSources:\n\n{sources}"}],
    }


def chunk_context(c: Chunk) -> str:
    """The log fields of a chunk, as JSON for a document block's ``context``."""
    meta = {"chunk_id": c.chunk_id, "document_id": c.document_id, "source": c.source, "title": c.title,
            "section": c.section, "start": c.start, "end": c.end, "checksum": c.checksum,
            "retrieval_score": c.retrieval_score, "rerank_score": c.rerank_score}
    return json.dumps({k: v for k, v in meta.items() if v is not None}, ensure_ascii=False)


def citations_request(question: str, chunks: Sequence[Chunk], prompt: Prompt, model: str, max_tokens: int) -> dict:
    documents = [
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": c.text},
         "title": " / ".join(x for x in (c.title, c.section) if x) or c.chunk_id,
         "context": chunk_context(c), "citations": {"enabled": True}}
        for c in chunks
    ]
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": system_blocks(prompt.text, model),
        "messages": [{"role": "user", "content": [*documents, {"type": "text", "text": question}]}],
    }


def build_request(shape: str, question: str, chunks: Sequence[Chunk], prompt: Prompt, model: str,
                  max_tokens: int) -> dict:
    if shape == "markers":
        return markers_request(question, chunks, prompt, model, max_tokens)
    if shape == "citations":
        return citations_request(question, chunks, prompt, model, max_tokens)
    raise ValueError(f"unknown request shape {shape!r}; use markers or citations")


# --- reading a markers reply ------------------------------------------------------------------

_QUOTES_LINE = re.compile(r"^\s*\**\s*QUOTES\s*:?\s*\**\s*$", re.MULTILINE | re.IGNORECASE)
_QUOTE_ENTRY = re.compile(r"\[(\d+)\]\s*[:\-\u2013]?\s*[\"\u201c](.+?)[\"\u201d]\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class MarkersReply:
    answer: str  # the text before the QUOTES: line, as the model wrote it (markers included)
    quotes: tuple[tuple[int, str], ...]  # (marker, quote) in the order listed


def is_refusal(text: str) -> bool:
    """Whether ``text`` is the exact refusal sentence (up to case and spacing)."""
    return normalise(text, casefold=True) == normalise(REFUSAL, casefold=True)


def parse_markers_reply(text: str) -> MarkersReply:
    """Split a markers-shape reply into the answer and its quote list.  Lenient: no QUOTES: line
    means no quotes (each marker then fails ``quote_missing``, which is the truth); a malformed
    quote line is skipped; markers in the answer are kept exactly as written, in range or not."""
    m = _QUOTES_LINE.search(text)
    if m is None:
        return MarkersReply(text.strip(), ())
    quotes = tuple((int(q.group(1)), q.group(2)) for q in _QUOTE_ENTRY.finditer(text, m.end()))
    return MarkersReply(text[: m.start()].strip(), quotes)
