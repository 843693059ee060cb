"""``AnswerLog``: one call from a team's own pipeline appends a valid citecheck log line.

    from citecheck import AnswerLog

    log = AnswerLog("answers.jsonl", model="claude-sonnet-4-5", prompt_version="rag-v3")
    log.record(question=question, chunks=docs, answer=text)            # [n] markers in the text
    log.record(question=question, chunks=docs, response=message)       # Anthropic / OpenAI citations

What it takes, without depending on any framework (docs/logging-api.md has LangChain and
LlamaIndex examples):

- **chunks**, in the order the model saw them: dicts with log-format fields (``text`` and
  ``chunk_id``/``id``, ``document_id``, ``source``, ``title``, ``section``, ``start``, ``end``,
  scores), LangChain ``Document``-like objects (``page_content``, ``metadata``), LlamaIndex
  ``NodeWithScore``/``TextNode``-like objects (``node``, ``node_id``, ``get_content()``,
  ``metadata``, ``score``), or plain strings.
- **the answer and its citations**: the answer text alone (``[n]`` markers in it cite
  ``chunks[n-1]``); or log-format citation dicts; or the provider's raw response with its
  citations (an Anthropic Messages response, an OpenAI Responses / Chat Completions response,
  as a dict or an SDK object), read by the same importers as ``citecheck import``.

It computes each chunk's checksum, checks the offsets the pipeline gives (a chunk's
``start``/``end`` against its text, and against its document's text when given; a hand-made
citation's span inside the answer), and
appends the line with the durable append every citecheck log uses (locked, fsynced, all or
nothing), so several processes may share one log.  A value that cannot be logged raises
:class:`~citecheck.errors.FieldError` naming the field, and nothing is written.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from citecheck.contract.log import (
    Answer,
    Chunk,
    Citation,
    answer_to_dict,
    checksum,
    parse_chunk,
    parse_citation,
    parse_line,
)
from citecheck.errors import FieldError
from citecheck.importers.trace_citations import marker_entries
from citecheck.storage.lines import append_lines, now
from citecheck.text.sentences import marker_spans

_CHUNK_FIELDS = ("chunk_id", "document_id", "source", "title", "section", "start", "end", "checksum",
                 "retrieval_score", "rerank_score")


def _plain(value: Any) -> Any:
    """An SDK object (pydantic ``model_dump``, ``to_dict``) as plain JSON data."""
    for name in ("model_dump", "to_dict"):
        method = getattr(value, name, None)
        if callable(method):
            try:
                return method(mode="json") if name == "model_dump" else method()
            except TypeError:
                return method()
    return value


def chunk_of(item: Any, k: int, document_text: str | None = None) -> Chunk:
    """One chunk from any of the shapes :class:`AnswerLog` takes (``k``: its position, for ids and messages)."""
    where = f"chunks[{k}]."
    if isinstance(item, str):
        raw: dict[str, Any] = {"text": item}
    elif isinstance(item, Mapping):
        raw = dict(item)
        if "text" not in raw:
            for key in ("page_content", "content"):
                if isinstance(raw.get(key), str):
                    raw["text"] = raw.pop(key)
                    break
        if "chunk_id" not in raw and isinstance(raw.get("id"), str | int) and not isinstance(raw.get("id"), bool):
            raw["chunk_id"] = str(raw.pop("id"))
        meta = raw.pop("metadata", None)
        if isinstance(meta, Mapping):
            for key in _CHUNK_FIELDS:
                if key not in raw and key in meta:
                    raw[key] = meta[key]
    else:
        raw = _from_object(item)
    raw = {k2: v for k2, v in raw.items() if k2 in (*_CHUNK_FIELDS, "text") and v is not None}
    if not isinstance(raw.get("text"), str):
        raise FieldError(f"{where}text", "is required: the text the model was given (a string)")
    raw.setdefault("chunk_id", f"chunk-{k + 1}")
    for key in ("chunk_id", "document_id", "source"):
        if key in raw and not isinstance(raw[key], str):
            raw[key] = str(raw[key])
    raw.setdefault("document_id", raw["chunk_id"])  # (as every importer does: the chunk stands for its document,
    raw.setdefault("source", raw["document_id"])  # which is its own source, when nothing else is said)
    actual = checksum(raw["text"])
    if "checksum" in raw and raw["checksum"] != actual:
        raise FieldError(f"{where}checksum", f"{raw['checksum']!r} is not the checksum of this chunk's text "
                                             f"({actual}); leave it out and AnswerLog computes it")
    raw["checksum"] = actual
    chunk = parse_chunk(raw, where)
    if (chunk.start is None) != (chunk.end is None):
        raise FieldError(f"{where}{'end' if chunk.end is None else 'start'}",
                         "give start and end together (the chunk's offsets in its document), or neither")
    if chunk.start is not None and chunk.end is not None:
        if not 0 <= chunk.start <= chunk.end:
            raise FieldError(f"{where}end", f"end {chunk.end} is before start {chunk.start}")
        if chunk.end - chunk.start != len(chunk.text):
            raise FieldError(f"{where}end", f"start {chunk.start} and end {chunk.end} span {chunk.end - chunk.start} "
                                            f"characters, but the text has {len(chunk.text)}")
        if document_text is not None and document_text[chunk.start:chunk.end] != chunk.text:
            raise FieldError(f"{where}start", "the document's text at start:end is not this chunk's text")
    return chunk


def _from_object(item: Any) -> dict[str, Any]:
    """LangChain ``Document`` (``page_content``, ``metadata``, ``id``) and LlamaIndex
    ``NodeWithScore`` (``node``, ``score``) / ``TextNode`` (``node_id``, ``get_content()``, ``metadata``)."""
    node = getattr(item, "node", None)
    score = getattr(item, "score", None)
    if node is not None:
        item = node
    text = getattr(item, "page_content", None)
    if text is None:
        getter = getattr(item, "get_content", None)
        text = getter() if callable(getter) else getattr(item, "text", None)
    meta = getattr(item, "metadata", None)
    meta = dict(meta) if isinstance(meta, Mapping) else {}
    raw: dict[str, Any] = {"text": text}
    for key in _CHUNK_FIELDS:
        if key in meta:
            raw[key] = meta[key]
    node_id = getattr(item, "node_id", None) or getattr(item, "id", None) or getattr(item, "id_", None)
    if "chunk_id" not in raw and isinstance(node_id, str) and node_id:
        raw["chunk_id"] = node_id
    if "source" not in raw:
        for key in ("source", "url", "file_path", "file_name"):
            if isinstance(meta.get(key), str):
                raw["source"] = meta[key]
                break
    if "title" not in raw and isinstance(meta.get("title"), str):
        raw["title"] = meta["title"]
    if isinstance(score, int | float) and not isinstance(score, bool) and "retrieval_score" not in raw:
        raw["retrieval_score"] = float(score)
    return raw


def _numbers_in(inside: str) -> set[int]:
    """The numbers a marker's brackets hold: ``2`` in ``[2]``, 1 and 3 in ``[1, 3]``."""
    return {int(part) for part in (p.strip() for p in inside.split(",")) if part.isdigit()}


def check_citation(citation: Citation, k: int, answer: str) -> None:
    """Raise :class:`FieldError` when a citation given by hand is malformed: a span outside the
    answer, or an end before its start.  Whether its quote is in its chunk at its offsets is not
    refused here: that is what ``citecheck check`` finds and reports (``quote_not_in_source``,
    ``offset_mismatch``), for hand-made citations and provider ones alike."""
    where = f"citations[{k}]."
    if citation.answer_start is not None and citation.answer_end is not None:
        if not 0 <= citation.answer_start <= citation.answer_end <= len(answer):
            raise FieldError(f"{where}answer_end", f"the span {citation.answer_start}:{citation.answer_end} is not "
                                                   f"inside the answer ({len(answer)} characters)")
    if citation.kind == "marker" and citation.at is not None:
        numbers = {start: _numbers_in(answer[start + 1:end - 1]) for start, end in marker_spans(answer, 0)}
        if citation.marker not in numbers.get(citation.at, ()):
            places = ", ".join(str(start) for start, found in numbers.items() if citation.marker in found) or "none"
            raise FieldError(f"{where}at", f"{citation.at} is not where a [{citation.marker}] marker of the answer "
                                           f"starts (its places: {places}); give the index of its '['")
    if citation.quote_start is not None and citation.quote_end is not None and citation.quote_start > citation.quote_end:
        raise FieldError(f"{where}quote_end", f"quote_end {citation.quote_end} is before quote_start "
                                              f"{citation.quote_start}")


def _markers_left(answer: str, count: int, cited: list[Citation]) -> list[Citation]:
    """The ``[n]`` markers of ``answer`` that none of the marker citations given stands for (one at
    the marker's place, or one of its number with no place), as :func:`marker_entries` gives them:
    a quote given for one marker leaves the others cited, *not verifiable*, as with no citations
    given at all, not *quote missing*."""
    placed = {(c.marker, c.at) for c in cited if c.at is not None}
    loose: dict[int | None, int] = {}
    for c in cited:
        if c.at is None:
            loose[c.marker] = loose.get(c.marker, 0) + 1
    left = []
    for entry in marker_entries(answer, count):
        if (entry.marker, entry.at) in placed:
            continue
        if loose.get(entry.marker):
            loose[entry.marker] -= 1
            continue
        left.append(entry)
    return left


def _provider_answer(response: Any, chunks: tuple[Chunk, ...], question: str) -> Answer:
    from citecheck.importers import anthropic, openai
    from citecheck.importers.trace_citations import document_request, provider_of

    body = _plain(response)
    provider = provider_of(body)
    if provider == "anthropic":
        return anthropic.convert(document_request(chunks, question), body, 1)
    if provider == "openai":
        return openai.convert(None, body, 1)
    raise FieldError("response", "expected an Anthropic Messages or an OpenAI Responses / Chat Completions "
                                 "response (a dict or an SDK object)")


def _timestamp(value: Any) -> str:
    """When the answer was given, as the log writes times (ISO 8601, UTC, ``Z``): now by default, a
    ``datetime`` (a naive one is taken as UTC), or ISO 8601 text."""
    if value is None:
        return now()
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, str):
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise FieldError("timestamp", f"{value[:60]!r} is not an ISO 8601 time (e.g. 2026-12-06T09:30:00Z); "
                                          "give a datetime or ISO text") from None
        return value
    raise FieldError("timestamp", f"expected a datetime or ISO 8601 text, got {type(value).__name__}")


class AnswerLog:
    """Appends answers to a citecheck log (see the module's docstring).  Safe to share between threads,
    and between processes writing the same file."""

    def __init__(self, path: str | Path, *, model: str | None = None, prompt_version: str | None = None,
                 index_snapshot: str | None = None) -> None:
        self.path = Path(path)
        self.model = model
        self.prompt_version = prompt_version
        self.index_snapshot = index_snapshot
        self._lock = threading.Lock()

    def build(self, *, question: str, chunks: Iterable[Any], answer: str | None = None,
              citations: Iterable[Any] | None = None, response: Any = None, answer_id: str | None = None,
              refused: bool = False, model: str | None = None, prompt_version: str | None = None,
              timestamp: str | None = None, document_texts: Mapping[str, str] | None = None,
              metadata: Mapping[str, Any] | None = None) -> Answer:
        """The :class:`Answer` :meth:`record` would append, checked, without writing it."""
        if not isinstance(question, str):
            raise FieldError("question", "is required (a string)")
        texts = document_texts or {}
        if chunks is None or isinstance(chunks, str | bytes | Mapping) or not isinstance(chunks, Iterable):
            raise FieldError("chunks", f"expected a list of the retrieved chunks (dicts, LangChain documents, "
                                       f"LlamaIndex nodes or strings), got {type(chunks).__name__}; give [] for none")
        items = list(chunks)
        built = []
        for k, item in enumerate(items):
            chunk = chunk_of(item, k)
            if chunk.start is not None and chunk.document_id in texts:
                chunk = chunk_of(item, k, texts[chunk.document_id or ""])
            built.append(chunk)
        seen: dict[str, int] = {}
        for k, chunk in enumerate(built):
            first = seen.setdefault(chunk.chunk_id or "", k)
            if first != k:
                raise FieldError(f"chunks[{k}].chunk_id", f"{chunk.chunk_id!r} is chunks[{first}]'s id too: give each "
                                                          "chunk its own id (a citation names one chunk)")
        chunk_tuple = tuple(built)
        extra: dict[str, Any] = {}
        if response is not None:
            if answer is not None or citations is not None:
                raise FieldError("response", "give the provider's response, or the answer (and citations), not both")
            from_provider = _provider_answer(response, chunk_tuple, question)
            answer = from_provider.answer
            cited = list(from_provider.citations)
            if any(c.text for c in from_provider.chunks) and not chunk_tuple:
                chunk_tuple = from_provider.chunks
            model = model or from_provider.model
            extra.update(from_provider.extra)
        else:
            if not isinstance(answer, str):
                raise FieldError("answer", "is required (the answer text), or give the provider's response")
            cited = [c if isinstance(c, Citation) else parse_citation(_plain(c), f"citations[{k}].")
                     for k, c in enumerate(citations or ())]
            for k, citation in enumerate(cited):
                check_citation(citation, k, answer)
            if all(c.kind == "marker" for c in cited):  # [n] markers the citations given do not stand for:
                cited += _markers_left(answer, len(chunk_tuple), cited)  # cited, with no quote to verify
        if metadata:
            clash = sorted(set(metadata) & {"log_version", "answer_id", "question", "answer", "chunks", "citations",
                                            "timestamp", "model", "prompt_version", "index_snapshot", "refused"})
            if clash:
                raise FieldError(f"metadata.{clash[0]}", "is a log field: pass it as its own argument")
            for key, value in metadata.items():
                try:
                    json.dumps(value, ensure_ascii=False, allow_nan=False)  # (NaN is no JSON other readers read)
                except (TypeError, ValueError) as exc:
                    raise FieldError(f"metadata.{key}", f"cannot be written as JSON ({exc}): give text, numbers, "
                                                         "booleans, None, or lists and dicts of them") from None
            extra.update(metadata)
        result = Answer(answer_id or f"answer-{secrets.token_hex(8)}", question, answer, chunk_tuple, tuple(cited),
                        _timestamp(timestamp), model or self.model, prompt_version or self.prompt_version,
                        self.index_snapshot, bool(refused), extra)
        line = json.dumps(answer_to_dict(result), ensure_ascii=False)
        parse_line(line)  # what a reader will read (limits included), or FieldError now
        return result

    def record(self, **fields: Any) -> Answer:
        """Append one answer (the arguments of :meth:`build`); returns it once it is on disk."""
        answer = self.build(**fields)
        with self._lock:
            append_lines(self.path, [json.dumps(answer_to_dict(answer), ensure_ascii=False)],
                         what=f"the answer {answer.answer_id!r}")
        return answer
