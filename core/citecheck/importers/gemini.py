"""``gemini``: a ``generateContent`` response with ``groundingMetadata`` (Google Search grounding,
or retrieval from a corpus / File Search).

- The answer is the first candidate's text parts joined, leaving out thoughts (``thought: true``)
  and non-text parts (function calls and results).
- Each ``groundingChunks[i]`` is one source: ``web`` (``uri``, ``title``, no text) or
  ``retrievedContext`` (``uri``, ``title`` and the retrieved ``text``), id ``grounding-<i+1>``.
- Each ``groundingSupports[]`` entry becomes one span citation per index of
  ``groundingChunkIndices`` (its confidence score in the locator).
- Offsets are **UTF-8 byte** offsets, start inclusive, end exclusive, into the text part named by
  ``segment.partIndex``.  A field equal to zero is omitted (no ``startIndex`` means 0, no
  ``partIndex`` means part 0).  When that part is not an answer text part (parts[0] is a thought or
  a function call) the offsets refer to the answer's text; in a stream they index the text of all
  chunks joined.  ``segment.text`` is kept as ``locator.span_text``: the checker compares it with
  the answer text at the converted offsets.
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
from citecheck.importers.offsets import UTF8_BYTES, OffsetMap

UNIT = UTF8_BYTES


def _opt_index(obj: dict, key: str, where: str) -> int:
    value = obj.get(key, 0)  # proto3 JSON leaves zero fields out
    if type(value) is not int or value < 0:
        raise FieldError(f"{where}.{key}", f"expected a non-negative integer (a UTF-8 byte offset), got {value!r}")
    return value


def _answer_parts(candidate: dict) -> tuple[str, dict[int, tuple[int, OffsetMap]]]:
    """The answer text and, for each answer text part, (its code-point start in the answer, its map)."""
    parts = object_field(candidate, "content").get("parts") or []
    if not isinstance(parts, list):
        raise FieldError("response.candidates[0].content.parts", "expected a list of parts")
    texts: list[str] = []
    where: dict[int, tuple[int, OffsetMap]] = {}
    pos = 0
    for i, part in enumerate(parts):
        if not isinstance(part, dict):
            raise FieldError(f"response.candidates[0].content.parts[{i}]", "expected a part object")
        text = part.get("text")
        if text is None or part.get("thought"):
            continue
        if not isinstance(text, str):
            raise FieldError(f"response.candidates[0].content.parts[{i}].text", "expected a string")
        where[i] = (pos, OffsetMap(text, UNIT))
        texts.append(text)
        pos += len(text)
    return "".join(texts), where


def _chunk(obj: Any, i: int) -> Chunk:
    where = f"response.candidates[0].groundingMetadata.groundingChunks[{i}]"
    if not isinstance(obj, dict):
        raise FieldError(where, "expected a grounding chunk object")
    inner = obj.get("web") or obj.get("retrievedContext") or obj.get("maps")
    if not isinstance(inner, dict):
        raise FieldError(where, "expected 'web' or 'retrievedContext'")
    uri = string_field(inner, "uri", None)
    title = string_field(inner, "title", None)
    text = string_field(inner, "text", "")
    chunk_id = f"grounding-{i + 1}"
    document_id = uri or title or chunk_id
    return Chunk(chunk_id, document_id, uri or title or chunk_id, title, None, text, None, None,
                 checksum(text), None, None)


def _supports(meta: dict, answer: str, parts: dict[int, tuple[int, OffsetMap]], n_chunks: int) -> list[Citation]:
    supports = meta.get("groundingSupports") or []
    if not isinstance(supports, list):
        raise FieldError("response.candidates[0].groundingMetadata.groundingSupports", "expected a list")
    whole = None
    citations = []
    for k, support in enumerate(supports):
        where = f"response.candidates[0].groundingMetadata.groundingSupports[{k}]"
        if not isinstance(support, dict) or not isinstance(support.get("segment"), dict):
            raise FieldError(f"{where}.segment", "is required (the answer segment it supports)")
        segment = support["segment"]
        seg_where = f"{where}.segment"
        part = _opt_index(segment, "partIndex", seg_where)
        b0, b1 = _opt_index(segment, "startIndex", seg_where), _opt_index(segment, "endIndex", seg_where)
        if part in parts:
            base, offsets = parts[part]
        else:  # parts[0] is a thought or a tool call, or a stream: offsets into the answer's text
            base, offsets = 0, whole or (whole := OffsetMap(answer, UNIT))
        start, end = offsets.span(b0, b1)
        indices = support.get("groundingChunkIndices") or []
        scores = support.get("confidenceScores") or []
        if not isinstance(indices, list) or not all(type(i) is int and i >= 0 for i in indices):
            raise FieldError(f"{where}.groundingChunkIndices", "expected a list of non-negative integers")
        locator = {"type": "grounding_support", "no_quote": True, "part_index": part, "start_byte": b0,
                   "end_byte": b1}
        if isinstance(segment.get("text"), str):
            locator["span_text"] = segment["text"]
        for j, index in enumerate(indices):
            score = scores[j] if isinstance(scores, list) and j < len(scores) else None
            loc = dict(locator, grounding_chunk_index=index)
            if isinstance(score, int | float):
                loc["confidence"] = score
            citations.append(Citation("span", answer_start=base + start, answer_end=base + end,
                                      chunk_id=f"grounding-{index + 1}", locator=loc))
    return citations


def _question(req: Any) -> str:
    contents = req.get("contents") if isinstance(req, dict) else None
    if isinstance(contents, str):
        return contents
    question = ""
    for content in contents if isinstance(contents, list) else []:
        if isinstance(content, dict) and content.get("role", "user") == "user":
            texts = [p["text"] for p in content.get("parts") or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]
            question = "\n".join(texts) or question
    return question


def _from_chunks(chunks: list) -> dict:
    """A ``streamGenerateContent`` JSON array of chunks (the stream without ``alt=sse``) as one body."""
    errors: list[StreamError] = []
    body = assemble([Event(i, "", chunk) for i, chunk in enumerate(chunks)], errors)
    if errors:
        raise FieldError(f"response[{errors[0].event.line}].{errors[0].field}", errors[0].message)
    return body


def convert(req: Any, resp: Any, position: int) -> Answer:
    if req is not None and not isinstance(req, dict):
        raise FieldError("request", "expected the generateContent request body object")
    if isinstance(resp, list):
        resp = _from_chunks(resp)
    if not isinstance(resp, dict) or not isinstance(resp.get("candidates"), list) or not resp["candidates"]:
        raise FieldError("response.candidates", "is required (the generateContent response's candidates)")
    candidate = resp["candidates"][0]
    if not isinstance(candidate, dict):
        raise FieldError("response.candidates[0]", "expected a candidate object")
    answer, parts = _answer_parts(candidate)
    meta = candidate.get("groundingMetadata") or {}
    if not isinstance(meta, dict):
        raise FieldError("response.candidates[0].groundingMetadata", "expected an object")
    raw_chunks = meta.get("groundingChunks") or []
    if not isinstance(raw_chunks, list):
        raise FieldError("response.candidates[0].groundingMetadata.groundingChunks", "expected a list")
    chunks = tuple(_chunk(c, i) for i, c in enumerate(raw_chunks))
    citations = _supports(meta, answer, parts, len(chunks))
    extra: dict = {"provider": "gemini"}
    for key in ("usageMetadata", "finishReason"):
        value = resp.get(key) if key in resp else candidate.get(key)
        if value is not None:
            extra[key] = value
    if isinstance(meta.get("webSearchQueries"), list):
        extra["web_search_queries"] = meta["webSearchQueries"]
    model = resp.get("modelVersion") if isinstance(resp.get("modelVersion"), str) else (req or {}).get("model")
    return Answer(
        answer_id=str(resp.get("responseId") or f"answer-{position}"),
        question=_question(req),
        answer=answer,
        chunks=chunks,
        citations=check_spans(answer, citations),
        model=model if isinstance(model, str) else None,
        extra=extra,
    )


def assemble(events: list[Event], errors: list[StreamError]) -> dict:
    """A ``streamGenerateContent?alt=sse`` stream as one response: the first candidate's answer text
    of every chunk joined into one part (the offsets index that joined text), and the last
    ``groundingMetadata`` that came (the stream sends it with the final chunks)."""
    texts: list[str] = []
    body: dict = {}
    meta = None
    finish = None

    def take(event: Event) -> None:
        nonlocal meta, finish
        data = event.data
        if not isinstance(data, dict):
            raise StreamError(event, "(data)", "expected a GenerateContentResponse chunk")
        for key in ("responseId", "modelVersion", "usageMetadata"):
            if data.get(key) is not None:
                body[key] = data[key]
        candidates = data.get("candidates")
        if candidates is None:
            return
        if not isinstance(candidates, list) or (candidates and not isinstance(candidates[0], dict)):
            raise StreamError(event, "candidates", "expected a list of candidates")
        if not candidates:
            return
        cand = candidates[0]
        parts = (cand.get("content") or {}).get("parts") or [] if isinstance(cand.get("content"), dict) else []
        for part in parts:
            if isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought"):
                texts.append(part["text"])
        if isinstance(cand.get("groundingMetadata"), dict):
            meta = cand["groundingMetadata"]
        finish = cand.get("finishReason", finish)

    fold(events, take, errors)
    candidate: dict = {"content": {"role": "model", "parts": [{"text": "".join(texts)}]}}
    if meta is not None:
        # the joined text is part 0, so partIndex no longer applies
        meta = dict(meta, groundingSupports=[
            dict(s, segment={k: v for k, v in s["segment"].items() if k != "partIndex"})
            if isinstance(s, dict) and isinstance(s.get("segment"), dict) else s
            for s in meta.get("groundingSupports") or []])
        candidate["groundingMetadata"] = meta
    if finish is not None:
        candidate["finishReason"] = finish
    body["candidates"] = [candidate]
    return body


PROVIDER = Provider("Gemini", convert, assemble)


def add_parser(sub, common) -> None:
    p = sub.add_parser("gemini", parents=[common],
                       help="a Gemini generateContent response with groundingMetadata")
    add_exchange_options(p, "the generateContent request body (its contents give the question)")
    p.set_defaults(importer=lambda args: run(PROVIDER, args))
