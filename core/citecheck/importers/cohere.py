"""``cohere``: a Chat API response with citations, v2 (``message.citations``) or v1 (``citations``).

- v2: the answer is ``message.content``'s text items joined; each citation has ``start``, ``end``,
  ``text`` and ``sources`` (``document`` with ``id`` and the ``document`` fields, or ``tool`` with
  ``tool_output``).  One span citation per source.
- v1: the answer is ``text``; each citation has ``start``, ``end``, ``text`` and ``document_ids``.
- Offsets count characters of the reply (code points), end exclusive.  ``text`` is kept as
  ``locator.span_text`` for the checker to compare.
- Sources: the request's ``documents`` in order (ids as given, else as the API generates them:
  ``doc:0``... in v2, ``doc_0``... in v1); without the request, the documents the response carries
  (v1 ``documents``, v2 each source's ``document``).  A document's text is its ``text`` field (else
  ``snippet``, ``content``), or all its string fields, one ``key: value`` a line.  A cited id that is
  not among them is ``unretrieved_source``.
"""

from __future__ import annotations

from typing import Any

from citecheck.contract.log import Answer, Chunk, Citation, checksum
from citecheck.errors import FieldError
from citecheck.importers import object_field, string_field
from citecheck.importers.exchange import (
    Event,
    Provider,
    StreamError,
    add_exchange_options,
    check_spans,
    fold,
    run,
)
from citecheck.importers.offsets import CODE_POINTS, OffsetMap

UNIT = CODE_POINTS
_TEXT_KEYS = ("text", "snippet", "content")


def _doc_text(fields: dict) -> str:
    for key in _TEXT_KEYS:
        if isinstance(fields.get(key), str):
            return fields[key]
    return "\n".join(f"{k}: {v}" for k, v in fields.items() if isinstance(v, str) and k not in ("id", "url", "title"))


def _doc_chunk(doc_id: str, fields: dict) -> Chunk:
    text = _doc_text(fields)
    title = fields.get("title") if isinstance(fields.get("title"), str) else None
    url = fields.get("url") if isinstance(fields.get("url"), str) else None
    return Chunk(doc_id, doc_id, url or title or doc_id, title, None, text, None, None, checksum(text), None, None)


def _request_docs(req: dict, v1: bool) -> list[Chunk] | None:
    docs = req.get("documents")
    if docs is None:
        return None
    if not isinstance(docs, list):
        raise FieldError("request.documents", "expected a list of documents")
    out = []
    for i, doc in enumerate(docs):
        default = f"doc_{i}" if v1 else f"doc:{i}"
        if isinstance(doc, str):  # v2 accepts plain strings
            out.append(_doc_chunk(default, {"text": doc}))
            continue
        if not isinstance(doc, dict):
            raise FieldError(f"request.documents[{i}]", "expected a document object or string")
        data = doc.get("data")
        fields = data if isinstance(data, dict) else doc  # v2 {id, data}; v1 flat
        out.append(_doc_chunk(string_field(doc, "id", default), fields))
    return out


def _span(cit: dict, where: str, offsets: OffsetMap) -> tuple[int, int, dict]:
    start, end = cit.get("start", 0), cit.get("end")
    if type(start) is not int or start < 0:
        raise FieldError(f"{where}.start", f"expected a non-negative character offset, got {start!r}")
    if type(end) is not int or end < 0:
        raise FieldError(f"{where}.end", f"is required (a non-negative character offset), got {end!r}")
    s, e = offsets.span(start, end)
    locator: dict = {"type": "cohere_citation", "no_quote": True, "start": start, "end": end}
    if isinstance(cit.get("text"), str):
        locator["span_text"] = cit["text"]
    return s, e, locator


def _v2(resp: dict, req_docs: list[Chunk] | None) -> tuple[str, list[Chunk], list[Citation]]:
    message = resp["message"]
    content = message.get("content") or []
    if isinstance(content, str):
        answer = content
    elif isinstance(content, list):
        answer = "".join(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)
                         and c.get("type", "text") == "text")
    else:
        raise FieldError("response.message.content", "expected a list of content items")
    offsets = OffsetMap(answer, UNIT)
    chunks = list(req_docs or [])
    known = {c.chunk_id for c in chunks}
    citations = []
    raw = message.get("citations") or []
    if not isinstance(raw, list):
        raise FieldError("response.message.citations", "expected a list")
    for k, cit in enumerate(raw):
        where = f"response.message.citations[{k}]"
        if not isinstance(cit, dict):
            raise FieldError(where, "expected a citation object")
        if cit.get("type") in ("THINKING_CONTENT", "PLAN"):
            continue  # cites the model's reasoning, not the answer
        s, e, locator = _span(cit, where, offsets)
        sources = cit.get("sources") or []
        if not isinstance(sources, list):
            raise FieldError(f"{where}.sources", "expected a list")
        for j, src in enumerate(sources):
            here = f"{where}.sources[{j}]"
            if not isinstance(src, dict) or not isinstance(src.get("id"), str):
                raise FieldError(f"{here}.id", "is required (the cited document or tool call)")
            kind = src.get("type", "document")
            if req_docs is None and src["id"] not in known:
                fields = src.get("document") if kind == "document" else src.get("tool_output")
                if isinstance(fields, dict):
                    chunks.append(_doc_chunk(src["id"], fields))
                    known.add(src["id"])
            citations.append(Citation("span", answer_start=s, answer_end=e, chunk_id=src["id"],
                                      locator=dict(locator, source_type=kind)))
    return answer, chunks, citations


def _v1(resp: dict, req_docs: list[Chunk] | None) -> tuple[str, list[Chunk], list[Citation]]:
    answer = resp["text"]
    offsets = OffsetMap(answer, UNIT)
    chunks = list(req_docs or [])
    if req_docs is None:
        for i, doc in enumerate(resp.get("documents") or []):
            if isinstance(doc, dict):
                chunks.append(_doc_chunk(doc["id"] if isinstance(doc.get("id"), str) else f"doc_{i}", doc))
    citations: list[Citation] = []
    for k, cit in enumerate(resp.get("citations") or []):
        where = f"response.citations[{k}]"
        if not isinstance(cit, dict):
            raise FieldError(where, "expected a citation object")
        s, e, locator = _span(cit, where, offsets)
        ids = cit.get("document_ids")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise FieldError(f"{where}.document_ids", "is required (a list of document ids)")
        citations.extend(Citation("span", answer_start=s, answer_end=e, chunk_id=i, locator=dict(locator))
                         for i in ids)
    return answer, chunks, citations


def _question(req: dict) -> str:
    if isinstance(req.get("message"), str):  # v1
        return req["message"]
    question = ""
    for m in req.get("messages") or []:
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, list):
                content = "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
            question = content if isinstance(content, str) else question
    return question


def convert(req: Any, resp: Any, position: int) -> Answer:
    if req is not None and not isinstance(req, dict):
        raise FieldError("request", "expected the chat request body object")
    if not isinstance(resp, dict):
        raise FieldError("response", "expected the chat response body object")
    v1 = "message" not in resp or not isinstance(resp.get("message"), dict)
    if v1 and not isinstance(resp.get("text"), str):
        raise FieldError("response.message", "is required (v2; v1 responses have text and citations)")
    req_docs = _request_docs(req, v1) if req else None
    answer, chunks, citations = (_v1 if v1 else _v2)(resp, req_docs)
    extra: dict = {"provider": "cohere"}
    for key in ("usage", "finish_reason", "meta"):
        if resp.get(key) is not None:
            extra[key] = resp[key]
    model = (req or {}).get("model")
    return Answer(
        answer_id=str(resp.get("id") or resp.get("response_id") or resp.get("generation_id") or f"answer-{position}"),
        question=_question(req or {}),
        answer=answer,
        chunks=tuple(chunks),
        citations=check_spans(answer, citations),
        model=model if isinstance(model, str) else None,
        extra=extra,
    )


def assemble(events: list[Event], errors: list[StreamError]) -> dict:
    """A v2 ``chat_stream`` as one response: text from ``content-delta`` events joined (the
    ``citation-start`` offsets index that text), citations from ``citation-start``, id from
    ``message-start``, finish reason and usage from ``message-end``."""
    body: dict = {}
    texts: list[str] = []
    citations: list = []

    def take(event: Event) -> None:
        data = event.data
        kind = data.get("type") if isinstance(data, dict) else None
        if not kind:
            raise StreamError(event, "type", "is required (every v2 stream event has a type)")
        delta = object_field(data, "delta")
        message = object_field(delta, "message")
        if kind == "message-start":
            if data.get("id"):
                body["id"] = data["id"]
        elif kind == "content-delta":
            content = object_field(message, "content")
            if not isinstance(content.get("text"), str):
                raise StreamError(event, "delta.message.content.text", "is required (a string)")
            texts.append(content["text"])
        elif kind == "citation-start":
            citation = message.get("citations")
            if not isinstance(citation, dict):
                raise StreamError(event, "delta.message.citations", "is required (the citation object)")
            citations.append(citation)
        elif kind == "message-end":
            for key in ("finish_reason", "usage"):
                if delta.get(key) is not None:
                    body[key] = delta[key]

    fold(events, take, errors)
    body["message"] = {"role": "assistant", "content": [{"type": "text", "text": "".join(texts)}],
                       "citations": citations}
    return body


PROVIDER = Provider("Cohere", convert, assemble)


def add_parser(sub, common) -> None:
    p = sub.add_parser("cohere", parents=[common], help="a Cohere Chat (v2 or v1) response with citations")
    add_exchange_options(p, "the chat request body: its documents are the sources the citations name")
    p.set_defaults(importer=lambda args: run(PROVIDER, args))
