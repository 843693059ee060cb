"""``markers``: a plain answer text with ``[n]`` or ``[S1]``-style markers plus its list of sources.

One record per line (or a JSON list)::

    {"answer_id": "...", "question": "...", "answer": "... [S1]. ... [S2].",
     "sources": [{"id": "S1", "text": "...", "title": "...", "document_id": "..."}]}

``[n]`` markers point at the n-th source and are kept as marker citations.  Labelled markers
(``[S1]``) become span citations over the sentence they close, citing the source with that id;
an id that is not in the list stays as written, so the checker reports ``unretrieved_source``.
A source may carry ``quote``-free metadata only: these citations have no quote, so they are
reported ``quote_missing`` (they cannot be highlighted).
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from citecheck.contract.log import Answer, Citation
from citecheck.errors import FieldError
from citecheck.importers import add_records_parser, chunk_from_source, common_fields
from citecheck.text.sentences import sentence_at, split_sentences

_LABELLED = re.compile(r"\[([A-Za-z]{1,3}\d+(?:\s*,\s*[A-Za-z]{1,3}\d+)*)\]")


def convert(obj: Any, position: int) -> Answer:
    if not isinstance(obj, dict):
        raise FieldError("(record)", "expected a JSON object")
    answer = obj.get("answer")
    if not isinstance(answer, str):
        raise FieldError("answer", "is required (the answer text with its markers)")
    question = obj.get("question")
    if not isinstance(question, str):
        raise FieldError("question", "is required (a string)")
    sources = obj.get("sources", obj.get("chunks"))
    if not isinstance(sources, list):
        raise FieldError("sources", "is required (the sources in the order they were numbered)")
    chunks = tuple(chunk_from_source(s, f"sources[{i}].", f"S{i + 1}") for i, s in enumerate(sources))
    labels = {}
    for i, s in enumerate(sources):
        label = s.get("id") or s.get("label")
        if isinstance(label, str):
            labels[label] = chunks[i].chunk_id
    sentences = split_sentences(answer)
    starts = [s.start for s in sentences]
    citations = []
    for m in _LABELLED.finditer(answer):
        at = sentence_at(sentences, starts, m.start())
        span = (sentences[at].start, sentences[at].end) if at is not None else (m.start(), m.end())
        for label in (part.strip() for part in m.group(1).split(",")):
            citations.append(Citation("span", answer_start=span[0], answer_end=span[1],
                                      chunk_id=labels.get(label, label), label=label))
    return Answer(question=question, answer=answer, chunks=chunks, citations=tuple(citations),
                  refused=bool(obj.get("refused", False)), **common_fields(obj, position))


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    add_records_parser(sub, common, "markers", "plain answers with [n] or [S1] markers and their sources",
                       "JSON or JSON-lines file of marker-cited answers", convert)
