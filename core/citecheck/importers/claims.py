"""``claims``: a JSON answer whose citations are ``[{claim, source, quote}]``, sources named by document id.

One record per line (or a JSON list)::

    {"answer_id": "...", "question": "...",
     "sources": [{"document_id": "billing.md", "text": "..."}],
     "answer": "...",                      # optional: the claims joined by spaces when absent
     "citations": [{"claim": "...", "source": "billing.md", "quote": "..."}]}

Each claim becomes a span citation over the claim's text in the answer, citing the retrieved
chunk of that document that holds the quote (or its first chunk); a source that was not
retrieved stays as written, so the checker reports ``unretrieved_source``.
"""

from __future__ import annotations

import argparse
from typing import Any

from citecheck.contract.log import Answer, Citation
from citecheck.errors import FieldError
from citecheck.importers import add_records_parser, chunk_from_source, common_fields
from citecheck.text.normalise import find_quote


def convert(obj: Any, position: int) -> Answer:
    if not isinstance(obj, dict):
        raise FieldError("(record)", "expected a JSON object")
    sources = obj.get("sources", obj.get("chunks"))
    if not isinstance(sources, list):
        raise FieldError("sources", "is required (the retrieved sources, each with document_id and text)")
    chunks = tuple(chunk_from_source(s, f"sources[{i}].", f"source-{i + 1}") for i, s in enumerate(sources))
    claims = obj.get("citations", obj.get("claims"))
    if not isinstance(claims, list):
        raise FieldError("citations", "is required (a list of {claim, source, quote})")
    for i, c in enumerate(claims):
        if not isinstance(c, dict) or not isinstance(c.get("claim"), str):
            raise FieldError(f"citations[{i}].claim", "is required (the sentence or clause this citation supports)")
        if not isinstance(c.get("source"), str):
            raise FieldError(f"citations[{i}].source", "is required (the document id it cites)")
        if c.get("quote") is not None and not isinstance(c.get("quote"), str):
            raise FieldError(f"citations[{i}].quote", "expected a string")
    answer = obj.get("answer")
    if answer is None:
        answer = " ".join(dict.fromkeys(c["claim"].strip() for c in claims))
    if not isinstance(answer, str):
        raise FieldError("answer", "expected a string")
    question = obj.get("question")
    if not isinstance(question, str):
        raise FieldError("question", "is required (a string)")
    citations = []
    cursor = 0
    for i, c in enumerate(claims):
        claim = c["claim"].strip()
        start = answer.find(claim, cursor)
        if start < 0:
            start = answer.find(claim)
        if start < 0:
            raise FieldError(f"citations[{i}].claim", "is not in the answer text; give the claim as written there")
        cursor = start
        quote = c.get("quote")
        citations.append(Citation("span", answer_start=start, answer_end=start + len(claim),
                                  chunk_id=_chunk_for(chunks, c["source"], quote), document_id=c["source"],
                                  quote=quote, label=c["source"]))
    return Answer(question=question, answer=answer, chunks=chunks, citations=tuple(citations),
                  refused=bool(obj.get("refused", False)), **common_fields(obj, position))


def _chunk_for(chunks, document_id: str, quote: str | None) -> str | None:
    """The id of the retrieved chunk of ``document_id`` that holds the quote, else its first chunk."""
    matching = [c for c in chunks if c.document_id == document_id]
    for c in matching:
        if quote and find_quote(c.text, quote):
            return c.chunk_id
    return matching[0].chunk_id if matching else None


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    add_records_parser(sub, common, "claims", "answers with [{claim, source, quote}] citations",
                       "JSON or JSON-lines file of claim-cited answers", convert)
