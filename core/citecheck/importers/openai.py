"""``openai``: a Responses API (or Chat Completions) response with citation annotations.

- The answer is the text of every ``output_text`` part of the ``message`` output items, parts of
  one message joined with nothing, messages with a blank line (Chat Completions: the first
  choice's ``message.content``).
- Offsets count characters of the part's text (code points), end exclusive.  A ``url_citation``
  span covers the inline link (``text[end_index - 1]`` is its closing parenthesis), not the
  claim: the checker gives the citation to the sentence the link sits in, and checks that the
  span holds the cited URL (``locator.span_contains``).
- ``file_citation`` has one ``index``, a position, not a span: an empty span there.
  ``container_file_citation`` is a span over the file link, ``0``/``0`` when the file is not
  linked: an empty span at the end of its part.
- Sources: ``web_search_call.action.sources`` and ``file_search_call.results`` (returned only when
  the request asked for them with ``include``).  A cited URL or file missing from a returned list
  is ``unretrieved_source``; with no list at all, each cited URL or file is its own source.
  File search results carry their text; web sources carry none, so a url citation has nothing to
  verify a quote against.
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


def _int(obj: dict, key: str, where: str) -> int:
    value = obj.get(key)
    if type(value) is not int or value < 0:
        raise FieldError(f"{where}.{key}", f"is required (a non-negative character offset), got {value!r}")
    return value


def _str(obj: dict, key: str, where: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise FieldError(f"{where}.{key}", f"expected a string, got {type(value).__name__}")
    return value


def _chunk(chunk_id: str, document_id: str, source: str, title: str | None, text: str, score=None) -> Chunk:
    return Chunk(chunk_id, document_id, source, title, None, text, None, None, checksum(text),
                 score if isinstance(score, int | float) else None, None)


class _Sources:
    """The sources an exchange returned, and the ones its annotations cite."""

    def __init__(self) -> None:
        self.chunks: list[Chunk] = []
        self.urls_listed = False
        self.files_listed = False
        self.urls: set[str] = set()
        self.files: set[str] = set()

    def add_url(self, url: str, title: str | None = None) -> None:
        if url not in self.urls:
            self.urls.add(url)
            self.chunks.append(_chunk(url, url, url, title, ""))

    def add_file_result(self, result: dict, k: int) -> None:
        file_id = string_field(result, "file_id", f"file-{k + 1}")
        filename = string_field(result, "filename", file_id)
        text = string_field(result, "text", "")
        self.files.add(file_id)
        self.chunks.append(_chunk(f"{file_id}#{k + 1}", file_id, filename, filename, text, result.get("score")))

    def cite_url(self, url: str, title: str | None) -> None:
        if not self.urls_listed:
            self.add_url(url, title)

    def cite_file(self, file_id: str, filename: str | None) -> None:
        if not self.files_listed and file_id not in self.files:
            self.files.add(file_id)
            self.chunks.append(_chunk(file_id, file_id, filename or file_id, filename, ""))


def _tool_calls(output: list, sources: _Sources) -> None:
    for item in output:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "web_search_call":
            listed = object_field(item, "action").get("sources")
            if isinstance(listed, list):
                sources.urls_listed = True
                for src in listed:
                    if isinstance(src, dict) and isinstance(src.get("url"), str):
                        sources.add_url(src["url"])
        elif item.get("type") == "file_search_call" and isinstance(item.get("results"), list):
            sources.files_listed = True
            for k, result in enumerate(item["results"]):
                if isinstance(result, dict):
                    sources.add_file_result(result, k)


def _after(text: str, index: int) -> int:
    """A citation position just after what it cites (at a space or the end of the text) is moved
    onto the cited text's last character, so it lands in the sentence it closes."""
    if index > 0 and (index >= len(text) or text[index].isspace()):
        return index - 1
    return index


def _annotation(ann: Any, where: str, text: str, base: int, sources: _Sources) -> Citation | None:
    if not isinstance(ann, dict):
        raise FieldError(where, "expected an annotation object")
    kind = ann.get("type")
    offsets = OffsetMap(text, UNIT)
    if kind == "url_citation":
        nested = ann.get("url_citation")
        body = nested if isinstance(nested, dict) else ann  # Chat Completions nests it
        here = f"{where}.url_citation" if body is not ann else where
        url = _str(body, "url", here)
        if not url:
            raise FieldError(f"{here}.url", "is required (the cited URL)")
        start, end = offsets.span(_int(body, "start_index", here), _int(body, "end_index", here))
        title = _str(body, "title", here)
        sources.cite_url(url, title)
        locator: dict[str, Any] = {"type": kind, "no_quote": True, "url": url, "title": title, "span_contains": url,
                                   "start_index": body["start_index"], "end_index": body["end_index"]}
        lead = text[:start].rstrip().rstrip("\"'\u201d\u2019)]")
        if start and lead.endswith((".", "!", "?")):
            # the link comes after the full stop of the sentence it cites (it would open the next
            # sentence): an empty span on that full stop, the link's own offsets kept for the span check
            locator.update(link_start=base + start, link_end=base + end)
            start = end = len(lead) - 1
        return Citation("span", answer_start=base + start, answer_end=base + end, chunk_id=url, document_id=url,
                        locator=locator)
    if kind in ("file_citation", "container_file_citation"):
        file_id = _str(ann, "file_id", where)
        if not file_id:
            raise FieldError(f"{where}.file_id", "is required (the cited file)")
        filename = _str(ann, "filename", where)
        locator = {"type": kind, "no_quote": True, "file_id": file_id, "filename": filename}
        if kind == "file_citation":
            index = _int(ann, "index", where)
            start = end = _after(text, offsets.to_code_point(index))
            locator["index"] = index
        else:
            s, e = _int(ann, "start_index", where), _int(ann, "end_index", where)
            start, end = offsets.span(s, e) if e > 0 else (_after(text, len(text)),) * 2
            locator.update(container_id=_str(ann, "container_id", where), start_index=s, end_index=e)
        sources.cite_file(file_id, filename)
        return Citation("span", answer_start=base + start, answer_end=base + end, document_id=file_id,
                        locator=locator)
    if kind == "file_path":
        return None  # a link to a generated file, not a citation
    raise FieldError(f"{where}.type", f"unknown annotation type {kind!r}; expected url_citation, "
                                      "file_citation, container_file_citation or file_path")


def _parts(resp: dict) -> list[tuple[str, list, str, str]]:
    """(text, annotations, where, separator before it) of every output text of the response."""
    if isinstance(resp.get("choices"), list):  # Chat Completions
        choices = resp["choices"]
        if not choices or not isinstance(choices[0], dict) or not isinstance(choices[0].get("message"), dict):
            raise FieldError("response.choices[0].message", "is required (the answer message)")
        message = choices[0]["message"]
        content = message.get("content") or ""
        if not isinstance(content, str):
            raise FieldError("response.choices[0].message.content", "expected a string")
        return [(content, message.get("annotations") or [], "response.choices[0].message.annotations", "")]
    output = resp.get("output")
    if not isinstance(output, list):
        raise FieldError("response.output", "is required (the Responses API output items; Chat Completions "
                                            "bodies have choices instead)")
    parts = []
    first_message = True
    for i, item in enumerate(output):
        if not isinstance(item, dict) or item.get("type") != "message":
            continue
        content = item.get("content")
        if not isinstance(content, list):
            raise FieldError(f"response.output[{i}].content", "expected a list of content parts")
        sep = "" if first_message else "\n\n"
        first_message = False
        for j, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "output_text":
                continue
            where = f"response.output[{i}].content[{j}]"
            if not isinstance(part.get("text"), str):
                raise FieldError(f"{where}.text", "expected a string")
            annotations = part.get("annotations") or []
            if not isinstance(annotations, list):
                raise FieldError(f"{where}.annotations", "expected a list")
            parts.append((part["text"], annotations, f"{where}.annotations", sep))
            sep = ""
    return parts


def _question(req: Any) -> str:
    if not isinstance(req, dict):
        return ""
    if isinstance(req.get("input"), str):
        return req["input"]
    messages = req.get("input") if isinstance(req.get("input"), list) else req.get("messages")
    question = ""
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            question = content
        elif isinstance(content, list):
            texts = [c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)]
            question = "\n".join(texts) or question
    return question


def convert(req: Any, resp: Any, position: int) -> Answer:
    if req is not None and not isinstance(req, dict):
        raise FieldError("request", "expected the request body object")
    if not isinstance(resp, dict):
        raise FieldError("response", "expected the response body object")
    sources = _Sources()
    output = resp.get("output")
    _tool_calls(output if isinstance(output, list) else [], sources)
    texts: list[str] = []
    citations: list[Citation] = []
    pos = 0
    for text, notes, where, sep in _parts(resp):
        texts.append(sep)
        pos += len(sep)
        for k, ann in enumerate(notes):
            citation = _annotation(ann, f"{where}[{k}]", text, pos, sources)
            if citation is not None:
                citations.append(citation)
        texts.append(text)
        pos += len(text)
    model = resp.get("model") if isinstance(resp.get("model"), str) else (req or {}).get("model")
    extra = {"provider": "openai"}
    if isinstance(resp.get("usage"), dict):
        extra["usage"] = resp["usage"]
    meta = object_field(req or {}, "metadata")
    return Answer(
        answer_id=str(meta.get("answer_id") or resp.get("id") or f"answer-{position}"),
        question=_question(req),
        answer=(answer := "".join(texts)),
        chunks=tuple(sources.chunks),
        citations=check_spans(answer, citations),
        model=model if isinstance(model, str) else None,
        extra=extra,
    )


# --- streams ---------------------------------------------------------------------------------


def _need(event: Event, key: str, kind: type) -> Any:
    value = event.data.get(key) if isinstance(event.data, dict) else None
    if not isinstance(value, kind) or (kind is int and isinstance(value, int) and value < 0):
        raise StreamError(event, key, f"is required ({kind.__name__})")
    return value


def _assemble_chat(events: list[Event], errors: list[StreamError]) -> dict:
    body: dict = {"object": "chat.completion"}
    text: list[str] = []
    annotations: list = []

    def take(event: Event) -> None:
        data = event.data
        if not isinstance(data, dict):
            raise StreamError(event, "(data)", "expected a chat.completion.chunk object")
        for key in ("id", "model", "usage"):
            if data.get(key):
                body[key] = data[key]
        for choice in data.get("choices") or []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict) or choice.get("index", 0) != 0:
                continue
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            if isinstance(delta.get("annotations"), list):
                annotations.extend(delta["annotations"])

    fold(events, take, errors)
    body["choices"] = [{"index": 0, "message": {"role": "assistant", "content": "".join(text),
                                                "annotations": annotations}}]
    return body


def assemble(events: list[Event], errors: list[StreamError]) -> dict:
    """The response body a stream adds up to: text from the ``response.output_text.delta`` events,
    annotations from ``response.output_text.annotation.added``, other output items (the searches)
    from ``response.output_item.done``, id, model and usage from the ``response.*`` lifecycle events."""
    if any(isinstance(e.data, dict) and e.data.get("object") == "chat.completion.chunk" for e in events):
        return _assemble_chat(events, errors)
    body: dict = {"object": "response"}
    items: dict[int, dict] = {}
    texts: dict[tuple[int, int], list[str]] = {}
    notes: dict[tuple[int, int], dict[int, Any]] = {}

    def take(event: Event) -> None:
        data = event.data
        kind = data.get("type") if isinstance(data, dict) else None
        if not kind:
            raise StreamError(event, "type", "is required (every Responses stream event has a type)")
        if kind in ("response.created", "response.in_progress", "response.completed", "response.incomplete"):
            response = object_field(data, "response")
            for key in ("id", "model", "usage", "status"):
                if response.get(key) is not None:
                    body[key] = response[key]
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = _need(event, "item", dict)
            items[_need(event, "output_index", int)] = item
        elif kind == "response.output_text.delta":
            part = (_need(event, "output_index", int), _need(event, "content_index", int))
            texts.setdefault(part, []).append(_need(event, "delta", str))
        elif kind == "response.output_text.annotation.added":
            part = (_need(event, "output_index", int), _need(event, "content_index", int))
            index = data.get("annotation_index")
            slot = notes.setdefault(part, {})
            slot[index if isinstance(index, int) else len(slot)] = _need(event, "annotation", dict)

    fold(events, take, errors)
    for oi, ci in sorted(set(texts) | set(notes)):
        item = items.setdefault(oi, {"type": "message", "role": "assistant", "content": []})
        content = item["content"] = list(item.get("content") or [])
        while len(content) <= ci:
            content.append({"type": "output_text", "text": "", "annotations": []})
        part = dict(content[ci])
        if (oi, ci) in texts:
            part["text"] = "".join(texts[(oi, ci)])
        if (oi, ci) in notes:
            part["annotations"] = [notes[(oi, ci)][k] for k in sorted(notes[(oi, ci)])]
        part["type"] = "output_text"
        content[ci] = part
    body["output"] = [items[k] for k in sorted(items)]
    return body


PROVIDER = Provider("OpenAI", convert, assemble)


def add_parser(sub, common) -> None:
    p = sub.add_parser("openai", parents=[common],
                       help="a Responses API (or Chat Completions) response with url/file citations")
    add_exchange_options(p, "the request body (its input gives the question), JSON or JSON lines paired by position")
    p.set_defaults(importer=lambda args: run(PROVIDER, args))
