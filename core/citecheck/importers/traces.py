"""From the spans of traced requests to citecheck answers: one answer per request.

The rules (docs/import-traces.md says them for users):

- **Requests.**  Spans are grouped by trace; each root span (no parent) is one request and every
  span under it belongs to it.  A span whose parent is not in the input is placed by trace, then
  by time (in the root whose time covers its start, else the latest root that started before it),
  and the answer's notes say so.  A trace with no root at all is one request.
- **The question**: the root's ``input.value`` (the text, or the question inside a JSON input),
  else the last user message of the first LLM span.
- **The documents**, in the order they were retrieved (span start time): OpenInference
  ``retrieval.documents`` on RETRIEVER spans (flattened or nested), the OTel GenAI
  ``gen_ai.retrieval.documents``, and documents a TOOL span returned (a search tool's JSON output
  with url/title/content).  When a RERANKER span ran, its output documents take the place of the
  documents it reranked (its recorded input, else the retrievals before it): a search tool's
  results beside them are kept.  A document with no id gets ``<trace>:<span>:<index>``; one with
  no text is kept with empty text and no checksum, listed in the answer's ``trace`` notes.
- **The answer**: the root's output, else the outermost CHAIN or AGENT span's, else the last LLM
  span's, never an intermediate LLM call of an agent when the request's own output is there.
- **Citations**: :mod:`citecheck.importers.trace_citations`.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Final, NamedTuple

from citecheck.contract.log import Answer, Chunk
from citecheck.contract.log import checksum as text_checksum
from citecheck.importers.spans import (
    Span,
    attribute_tree,
    flattened_items,
    items,
    leaf,
    maybe_json,
    node,
    span_tree,
    span_value,
)
from citecheck.importers.trace_citations import cite, own_id

# The keys a JSON input or output holds its text under, most specific first.
_QUESTION_KEYS = ("question", "query", "user_input", "input", "prompt", "message", "text", "q")
_ANSWER_KEYS = ("answer", "output", "result", "response", "content", "text", "final_answer", "output_text")
_TEXT_KEYS = ("content", "page_content", "text", "raw_content", "snippet", "body", "chunk", "document")
_URL_KEYS = ("url", "source", "link", "uri", "file_path", "file_name", "source_url")
_URL_SET = frozenset(_URL_KEYS)
_TITLE_KEYS = ("title", "name")
_TITLE_SET = frozenset(_TITLE_KEYS)
_SECTION_KEYS = ("section", "heading")
_SECTION_SET = frozenset(_SECTION_KEYS)
_new: Final = tuple.__new__  # (a NamedTuple built from its fields' tuple, past its Python-level __new__)
# an answer's note when none of its request's spans that were read retrieved anything (a span that
# could not be read may have: the import's summary says when there were such)
NO_RETRIEVAL: Final = "no retrieval among the spans read for this request"


@dataclass
class TraceSummary:
    """What an import of traces did, for its closing lines (and for tests)."""

    answers: int = 0
    citations: Counter = field(default_factory=Counter)  # kind of citation -> answers that had it
    documents: int = 0
    documents_without_text: int = 0
    without_retrieval: int = 0
    skipped_without_retrieval: int = 0
    placed_by_time: int = 0  # spans whose parent was missing
    traces_without_root: int = 0
    open_requests: int = 0  # requests whose root span had not ended
    not_answers: int = 0  # requests with no LLM call, retrieval, answer or error (an indexing run): left out
    unreadable: int = 0  # records of the input that could not be read (each an error of its own)

    def lines(self) -> list[str]:
        kinds = ", ".join(f"{n} with {kind}" for kind, n in sorted(self.citations.items())) or "none"
        out = [f"citations: {kinds}",
               f"documents: {self.documents}" + (f", {self.documents_without_text} without text (kept, marked in "
                                                "the answer's trace notes)" if self.documents_without_text else "")]
        lost = (f" (the input had {self.unreadable} unreadable record(s), said above: a request's retrieval may "
                "be in one of them)") if self.unreadable else ""
        if self.without_retrieval:
            out.append(f"{self.without_retrieval} request(s) had no retrieval (imported, noted; "
                       "--skip-without-retrieval leaves them out)" + lost)
        if self.skipped_without_retrieval:
            out.append(f"{self.skipped_without_retrieval} request(s) had no retrieval and were skipped" + lost)
        if self.placed_by_time:
            out.append(f"{self.placed_by_time} span(s) had a parent missing from the input: grouped by trace, "
                       "then by time")
        if self.traces_without_root:
            out.append(f"{self.traces_without_root} trace(s) had no root span: each read as one request")
        if self.open_requests:
            out.append(f"{self.open_requests} request(s) had a root span that never ended")
        if self.not_answers:
            out.append(f"{self.not_answers} trace(s) with no LLM call, retrieval, answer or error left out "
                       "(an indexing or embedding run: nothing to check)")
        return out


@dataclass(frozen=True, slots=True)
class Request:
    """The spans of one request, in start order, with its root and what placing them needed."""

    trace_id: str
    root: Span
    spans: tuple[Span, ...]
    depth: dict  # span id -> depth under the root (0 for the root)
    notes: tuple[str, ...]
    alone: bool = True  # the only request of its trace (its answer id is the trace id)


def requests(spans: Iterable[Span], summary: TraceSummary | None = None) -> Iterator[Request]:
    """The requests of a set of spans, trace by trace in the order traces first appear."""
    by_trace: dict[str, dict[str, Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, {})[span.span_id] = span  # a span sent twice: the later one
    for trace_id, members in by_trace.items():
        yield from trace_requests(trace_id, members, summary)


def _order(span: Span) -> tuple:
    return (span.start, span.end if span.end is not None else 2**64, span.span_id)


def _descendants(start: list[Span], children: dict[str, list[Span]], depth: dict[str, int], level: int) -> list[Span]:
    """``start`` and every span under them not yet in ``depth`` (filled in), walked without recursion."""
    out = []
    stack = []
    for span in start:
        if span.span_id not in depth:
            depth[span.span_id] = level
            out.append(span)
            stack.append(span)
    while stack:
        span = stack.pop()
        for child in children.get(span.span_id, ()):
            if child.span_id not in depth:
                depth[child.span_id] = depth[span.span_id] + 1
                out.append(child)
                stack.append(child)
    return out


def trace_requests(trace_id: str, members: dict[str, Span], summary: TraceSummary | None) -> Iterator[Request]:
    """The requests of one trace's spans (by span id, in the order they came)."""
    children: dict[str, list[Span]] = defaultdict(list)
    roots: list[Span] = []
    for span in members.values():
        if span.parent_id is None or span.parent_id == span.span_id:
            roots.append(span)
        elif span.parent_id in members:
            children[span.parent_id].append(span)
    notes: list[str] = []
    reached: dict[str, int] = {}
    found = _descendants(roots, children, reached, 0)
    if len(roots) == 1 and len(reached) == len(members):  # (one root, every span under it: the usual trace)
        yield Request(trace_id, roots[0], tuple(sorted(found, key=_order)), reached, (), True)
        return
    # a span whose parent is missing (or that hangs in a loop of parents) heads a subtree of its own
    # (the heads of missing parents first, so a subtree is placed whole; then loops, by time)
    loose = sorted((s for s in members.values() if s.span_id not in reached),
                   key=lambda s: (s.parent_id in members, *_order(s)))
    if not roots:  # no root came: the earliest span stands in for it
        roots, loose = loose[:1], loose[1:]
        notes.append("no root span: the earliest span stands in for it")
        if summary:
            summary.traces_without_root += 1
    roots.sort(key=_order)
    placed: dict[str, list[Span]] = defaultdict(list)
    heads = dict(reached)
    _descendants(roots, children, heads, 0)  # (a stand-in root's subtree is its own)
    for span in loose:
        if span.span_id in heads:
            continue
        _descendants([span], children, heads, 0)  # its subtree travels with it
        home = roots[0]
        for root in roots:  # by time: the root covering its start, else the last one before it
            if root.start <= span.start:
                home = root
                if root.end is not None and span.start <= root.end:
                    break
        placed[home.span_id].append(span)
    for root in roots:
        depth: dict[str, int] = {}
        out = _descendants([root], children, depth, 0) + _descendants(placed[root.span_id], children, depth, 1)
        extra = list(notes)
        if placed[root.span_id]:
            moved = len(placed[root.span_id])
            extra.append(f"{moved} span(s) whose parent was missing placed by trace and time")
            if summary:
                summary.placed_by_time += moved
        yield Request(trace_id, root, tuple(sorted(out, key=_order)), depth, tuple(extra), len(roots) == 1)


# --- reading the parts of a request -----------------------------------------------------------

# LangChain's message classes (the last part of a serialised message's ``id``) and the role each is.
_LANGCHAIN_ROLES = {"HumanMessage": "human", "HumanMessageChunk": "human", "AIMessage": "ai", "AIMessageChunk": "ai",
                    "SystemMessage": "system", "SystemMessageChunk": "system", "ToolMessage": "tool",
                    "ToolMessageChunk": "tool", "ChatMessage": "chat", "ChatMessageChunk": "chat"}


def langchain_message(value: Any) -> Any:
    """A LangChain message as LangChain serialises it, as its own fields with a ``role``: the
    ``{"type": "ai", "data": {"content": ...}}`` of ``messages_to_dict`` (what OpenInference records
    as the output of a chain that ends in a chat model) and the ``{"lc": 1, "type": "constructor",
    "id": [..., "AIMessage"], "kwargs": {"content": ...}}`` of ``dumpd``; any other value as it is."""
    if type(value) is not dict:
        return value
    kind = value.get("type")
    data = value.get("data")
    if isinstance(kind, str) and isinstance(data, dict) and "content" in data and len(value) == 2:
        return {**data, "role": data.get("role") or kind}
    kwargs = value.get("kwargs")
    path = value.get("id")
    if kind == "constructor" and value.get("lc") == 1 and isinstance(kwargs, dict) and "content" in kwargs \
            and isinstance(path, list) and path and isinstance(path[-1], str):
        return {**kwargs, "role": kwargs.get("role") or _LANGCHAIN_ROLES.get(path[-1], path[-1])}
    return value


def _role(message: dict) -> Any:
    """A message's role: its ``role``, else the ``type`` LangChain's ``model_dump`` gives (``human``, ``ai``)."""
    role = message.get("role")
    return role if role is not None else message.get("type")


def _text_in(value: Any, keys: tuple[str, ...], role: str | None = None) -> str | None:
    """The text a JSON input or output holds: itself when a string; under one of ``keys``; the
    last message of ``role`` of a messages list.  A serialised LangChain message is read as the
    message it is (:func:`langchain_message`)."""
    value = maybe_json(value)
    message = langchain_message(value)
    if message is not value:
        wanted_role = role is None or _role(message) in (role, "human" if role == "user" else "ai")
        return _message_text(message) if wanted_role else None
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(m, dict) for m in value):
        value = [langchain_message(m) for m in value]
        wanted = [m for m in value if role is None or _role(m) in (role, "human" if role == "user" else "ai")]
        for message in wanted[::-1]:  # (the last with text: a chat's latest question, a tool call's none)
            text = _message_text(message)
            if text:
                return text
        return None
    if isinstance(value, dict):
        for key in keys:
            if key in value:
                found = _text_in(value[key], keys, role)
                if found:
                    return found
        for key in ("messages", "choices", "generations"):
            if isinstance(value.get(key), list):
                found = _text_in(value[key], keys, role)
                if found:
                    return found
    return None


def _message_text(message: dict) -> str | None:
    content = message.get("content")
    if content is None and isinstance(message.get("message"), dict):
        return _message_text(message["message"])
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else message.get("parts")
    if isinstance(parts, list):
        texts = [t for p in parts if isinstance(p, dict) and p.get("type") != "tool_result"
                 and isinstance(t := p.get("text") or p.get("content"), str)]  # (a tool's output, not the user's words)
        return "".join(texts) if texts else None
    return None


def _messages(tree: dict, path: str) -> list[dict]:
    """OpenInference ``llm.input_messages``/``llm.output_messages`` as plain {role, content}."""
    out = []
    for item in items(node(tree, path)):
        message = item.get("message", item) if isinstance(item, dict) else None
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if content is None and message.get("contents") is not None:
            parts = [c.get("message_content", c) for c in items(message["contents"]) if isinstance(c, dict)]
            content = "".join(p.get("text", "") for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
        out.append({"role": message.get("role"), "content": content})
    return out


def _genai_messages(tree: dict, kind: str) -> list[dict]:
    """GenAI messages: ``gen_ai.input.messages``/``gen_ai.output.messages`` (JSON), or the older
    ``gen_ai.prompt.N``/``gen_ai.completion.N`` attributes."""
    whole = maybe_json(leaf(tree, f"gen_ai.{kind}.messages"))
    if isinstance(whole, list):
        return [m for m in whole if isinstance(m, dict)]
    older = items(node(tree, "gen_ai.prompt" if kind == "input" else "gen_ai.completion"))
    return [m for m in older if isinstance(m, dict)]


def question_of(request: Request) -> str:
    """The root's input, else the outermost chain's or agent's (a request wrapped in the
    application's own span, which records no input), else the last user message of the first
    LLM call (which holds the prompt around the question, not only the question; a chat's
    earlier turns come before it).  A messages list gives its last user message with text: the
    question of a chat with history, not its first turn, and not a tool's result."""
    found = _text_in(io_value(request.root, "input"), _QUESTION_KEYS, "user")
    if found:
        return found
    outer = sorted((s for s in request.spans if s.kind in ("CHAIN", "AGENT") and s is not request.root),
                   key=lambda s: (request.depth.get(s.span_id, 99), s.start))
    for span in outer:
        found = _text_in(io_value(span, "input"), _QUESTION_KEYS, "user")
        if found:
            return found
    for span in request.spans:
        if span.kind == "LLM":
            t = span_tree(span)
            messages = _messages(t, "llm.input_messages") or _genai_messages(t, "input")
            for message in messages[::-1]:  # (a chat's history comes first, its question last)
                if message.get("role") in ("user", "human"):
                    text = _message_text(message)
                    if text:
                        return text
    return ""


def llm_output(span: Span) -> str | None:
    """The text an LLM span produced: its last assistant output message, else its output."""
    tree = span_tree(span)
    messages = _messages(tree, "llm.output_messages") or _genai_messages(tree, "output")
    for message in messages[::-1]:  # (not reversed(): mypyc cannot compile that loop over Any)
        text = _message_text(message)
        if text:
            return text
    return _text_in(leaf(tree, "output.value"), _ANSWER_KEYS, "assistant")


def _output(span: Span) -> str | None:
    return _text_in(io_value(span, "output"), _ANSWER_KEYS, "assistant")


def io_value(span: Span, which: str) -> Any:
    """A span's ``input.value`` or ``output.value`` (``which``): a JSON string (``"\"text\""``)
    the span says is JSON (``*.mime_type: application/json``, as an instrumentation that
    serialises every value writes a plain string) read as the text it holds; else as it is."""
    value = span_value(span, f"{which}.value")
    if isinstance(value, str) and value[:1] == '"' and span_value(span, f"{which}.mime_type") == "application/json":
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        if isinstance(decoded, str):
            return decoded
    return value


def final_answer(request: Request) -> tuple[str, Span | None]:
    """The request's final answer, and the span it came from."""
    root = request.root
    if root.parent_id is None or root.kind in ("CHAIN", "AGENT"):  # (a stand-in root may be a planning call)
        found = _output(root)
        if found:
            return found, root
    llm_ends = [s.end or s.start for s in request.spans if s.kind == "LLM"]
    last_llm = max(llm_ends) if llm_ends else None
    outer = sorted((s for s in request.spans if s.kind in ("CHAIN", "AGENT")),
                   key=lambda s: (request.depth.get(s.span_id, 99), -(s.end or s.start)))
    for span in outer:
        if last_llm is not None and span.end is not None and span.end < last_llm:
            continue  # a step that ended before the last LLM call did (the sources formatted for the prompt)
        found = _output(span)
        if found:
            return found, span
    for span in sorted((s for s in request.spans if s.kind == "LLM"), key=lambda s: s.end or s.start, reverse=True):
        found = llm_output(span)
        if found:
            return found, span
    return "", None


# --- documents -------------------------------------------------------------------------------

def _metadata(value: Any) -> dict:
    value = maybe_json(value)
    return value if isinstance(value, dict) else {}


def _first_str(obj: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _score(value: Any) -> float | None:
    """A document's score as a number; None when it is not one, or not finite (a log holds no NaN)."""
    if type(value) is float:
        return value if math.isfinite(value) else None
    if isinstance(value, bool):
        return None
    try:
        score = float(value) if isinstance(value, int | float | str) else None
    except (ValueError, OverflowError):
        return None
    return score if score is not None and math.isfinite(score) else None


class Document(NamedTuple):
    """A retrieved document: its chunk, its URL (for links to cite it) and whether it had text."""

    chunk: Chunk
    url: str | None
    has_text: bool


def document(raw: Any, default_id: str, score_field: str = "retrieval") -> Document | None:
    """One retrieved document in any of the shapes spans record it in."""
    if type(raw) is not dict:
        raw = maybe_json(raw)
        if isinstance(raw, str):
            raw = {"content": raw}
        if not isinstance(raw, dict):
            return None
    for key in raw:
        if "." in key:  # an item with dotted keys ("document.id")
            stripped = {key.removeprefix("document."): value for key, value in raw.items()}
            raw = stripped if not any("." in key for key in stripped) else attribute_tree(raw)
            break
    inner = raw.get("document")
    body: dict = inner if isinstance(inner, dict) else raw
    meta = body.get("metadata")
    if meta is not None:
        meta = _metadata(meta)
    text = body.get("content")
    if type(text) is not str or not text:
        text = _first_str(body, _TEXT_KEYS)
    doc_id = body.get("id")
    if not isinstance(doc_id, str):
        doc_id = str(doc_id) if isinstance(doc_id, int) and not isinstance(doc_id, bool) else None
    if not doc_id and meta:
        doc_id = _first_str(meta, ("chunk_id", "id", "doc_id"))
    url = None if _URL_SET.isdisjoint(body) else _first_str(body, _URL_KEYS)
    chunk_id = doc_id or default_id
    title = None if _TITLE_SET.isdisjoint(body) else _first_str(body, _TITLE_KEYS)
    if meta:
        if url is None:
            url = _first_str(meta, _URL_KEYS)
        document_id = _first_str(meta, ("document_id", "doc_id", "source_id")) or chunk_id
        title = title or _first_str(meta, _TITLE_KEYS)
        section = None if _SECTION_SET.isdisjoint(meta) else _first_str(meta, _SECTION_KEYS)
    else:
        document_id, section = chunk_id, None
    score = _score(body.get("score", raw.get("score")))
    chunk = _new(Chunk, (chunk_id, document_id, url or document_id, title, section, text or "", None, None,
                         text_checksum(text) if text else None, score if score_field == "retrieval" else None,
                         score if score_field == "rerank" else None))
    return _new(Document, (chunk, url, bool(text)))


def _tool_documents(value: Any) -> list:
    """The documents a tool returned: a list of objects with text, or such a list under
    ``results``/``documents``/``items``/``data``/``hits``/``sources``."""
    value = maybe_json(value)
    if isinstance(value, dict):
        for key in ("results", "documents", "items", "data", "hits", "sources", "organic"):
            if isinstance(maybe_json(value.get(key)), list):
                return _tool_documents(value[key])
        return []
    if isinstance(value, list) and value and all(isinstance(maybe_json(v), dict) for v in value):
        docs = [maybe_json(v) for v in value]
        if any(_first_str(d.get("document", d) if isinstance(d.get("document"), dict) else d, _TEXT_KEYS)
               or _first_str(d, _URL_KEYS) for d in docs):
            return docs
    return []


# How each attribute key reads as a flattened item's field, per prefix: (index, field), or ("", "")
# for a key that is no item's field.  Spans of one application carry the same keys, so each key is
# taken apart once (a lookup, where partitioning it was most of the documents' cost); the table is
# emptied when it grows past _ITEM_KEYS_CAP, so keys that are all different cost no more than before.
_ITEM_KEYS: dict[str, dict[str, tuple[str, str]]] = {}
_ITEM_KEYS_CAP: Final = 4096
_NOT_AN_ITEM: Final = ("", "")


def _item_field(key: str, start: str) -> tuple[str, str]:
    """(index, field) of ``key`` as ``start<index>.<field>`` (``document.`` left out of the
    field), or :data:`_NOT_AN_ITEM`."""
    if not key.startswith(start):
        return _NOT_AN_ITEM
    index, _, rest = key[len(start):].partition(".")
    if not (rest and index.isdigit()):
        return _NOT_AN_ITEM
    return index, rest[9:] if rest.startswith("document.") else rest


def _flattened_documents(attributes: Mapping[str, Any], prefix: str) -> list[dict]:
    """:func:`flattened_items` of flattened documents, each item as :func:`document` reads it
    first: its keys without ``document.`` when none is left dotted (``retrieval.documents.0.document.id``
    gives ``{"id": ...}``); when one is, every item as :func:`flattened_items` gives it."""
    start = prefix + "."
    known = _ITEM_KEYS.get(start)
    if known is None or len(known) > _ITEM_KEYS_CAP:
        known = _ITEM_KEYS[start] = {}
    found: dict[str, dict[str, Any]] = {}
    for key, value in attributes.items():
        parts = known.get(key)
        if parts is None:
            parts = known[key] = _item_field(key, start)
        index, rest = parts
        if not index:
            continue
        if "." in rest:  # (a field deeper than the document's own: read the slow way)
            return flattened_items(attributes, prefix)
        item = found.get(index)
        if item is None:
            item = found[index] = {}
        item[rest] = value
    if not found:
        return []
    order = sorted(found, key=int)
    if len({int(index) for index in order}) < len(order):  # ("01" and "1": one item, read the slow way)
        return flattened_items(attributes, prefix)
    return [found[index] for index in order]


_DOCUMENT_KINDS = ("RETRIEVER", "TOOL", "RERANKER")
_DOCUMENT_KEYS = ("retrieval.documents", "gen_ai.retrieval.documents", "reranker.output_documents")


# Paths whose value :func:`span_value` reads differently once a span's tree is built (a key under
# them, with none at them, gives the subtree): read after the documents, so the tree is built
# whenever one is there, as it always was, and skipped (the common case, and the costly part) when not.
_READ_LATER = ("gen_ai.retrieval.documents.", "output.value.", "input.value.")


def _tree_matters(attributes: Mapping[str, Any], head: str) -> bool:
    """Whether the span's attribute tree may hold documents under ``head`` (an attribute named
    ``head`` or under it) or change what is read later (:data:`_READ_LATER`)."""
    under = head + "."
    return any(key == head or key.startswith(under) or key.startswith(_READ_LATER) for key in attributes)


def output_ids(found: list, output: Any) -> list:
    """``found`` (a retriever span's documents), those without an id given the id of the same
    document in the span's ``output``: OpenInference's LangChain instrumentation records a
    ``Document``'s text and metadata but not its ``id``, which the span's output, the documents as
    LangChain serialises them (``{"documents": [{"id", "page_content", "metadata"}...]}``), holds.
    An id is taken only from the output's document at the same place with the same text."""
    output = maybe_json(output)
    listed = output.get("documents") if isinstance(output, dict) else None
    if not isinstance(listed, list) or len(listed) != len(found):
        return found
    out = []
    for raw, given in zip(found, listed):
        if type(raw) is dict and type(given) is dict:
            inner = raw.get("document")
            body: dict = inner if type(inner) is dict else raw
            given_id = given.get("id")
            if body.get("id") is None and isinstance(given_id, str) and given_id \
                    and given.get("page_content") == body.get("content"):
                body = {**body, "id": given_id}
                raw = {**raw, "document": body} if type(inner) is dict else body
        out.append(raw)
    return out


def span_documents(span: Span) -> tuple[str, list]:
    """(how, raw documents) a span returned: ``retrieval``, ``rerank`` or ``tool``; ``("", [])``."""
    if span.kind not in _DOCUMENT_KINDS and not any(k.startswith(_DOCUMENT_KEYS) for k in span.attributes):
        return "", []
    if span.kind == "RERANKER":
        found = _flattened_documents(span.attributes, "reranker.output_documents")
        if found or not _tree_matters(span.attributes, "reranker"):
            return "rerank", found
        return "rerank", items(node(span_tree(span), "reranker.output_documents"))
    found = _flattened_documents(span.attributes, "retrieval.documents")
    if not found and _tree_matters(span.attributes, "retrieval"):
        found = items(node(span_tree(span), "retrieval.documents")) or \
            items(span_value(span, "gen_ai.retrieval.documents"))
    elif not found:  # (no attribute under "retrieval": the tree would hold no documents there)
        found = items(span_value(span, "gen_ai.retrieval.documents"))
    if found:
        if span.kind == "RETRIEVER" and "output.value" in span.attributes:
            found = output_ids(found, span_value(span, "output.value"))
        return "retrieval", found
    if span.kind in ("RETRIEVER", "TOOL"):
        found = _tool_documents(span_value(span, "output.value"))
        if found:
            return ("retrieval" if span.kind == "RETRIEVER" else "tool"), found
    return "", []


def _reranker_inputs(span: Span) -> set[str]:
    """The documents a RERANKER span recorded as its input (``reranker.input_documents``), each by
    :func:`_same_document`'s key; empty when it recorded none."""
    raws = _flattened_documents(span.attributes, "reranker.input_documents")
    if not raws and _tree_matters(span.attributes, "reranker"):
        raws = items(node(span_tree(span), "reranker.input_documents"))
    return {_same_document(d) for i, raw in enumerate(raws) if (d := document(raw, f"input:{i}")) is not None}


def _same_document(doc: Document) -> str:
    """What tells one document from another across spans: its text, else its id."""
    return "t:" + doc.chunk.text if doc.chunk.text else "i:" + (doc.chunk.chunk_id or "")


def documents_of(request: Request) -> tuple[list[Document], bool]:
    """The request's documents in the order they were given, and whether any retrieval ran.

    A reranker's output takes the place of the documents it reranked: those it recorded as its
    input (``reranker.input_documents``), else the documents the retrievals before it returned.
    Documents from elsewhere (a search tool's results, a retrieval after it) are kept, in order."""
    found: list[tuple[Document, str]] = []  # (document, how it came: retrieval, tool or rerank)
    retrieval = False
    for span in request.spans:
        how, raws = span_documents(span)
        if not how:
            if span.kind == "RETRIEVER":
                retrieval = True  # a retrieval that found nothing is still a retrieval
            continue
        retrieval = True
        docs = [d for i, raw in enumerate(raws)
                if (d := document(raw, f"{span.trace_id}:{span.span_id}:{i}",
                                  "rerank" if how == "rerank" else "retrieval")) is not None]
        if how != "rerank":
            found.extend((doc, how) for doc in docs)
            continue
        inputs = _reranker_inputs(span)
        replaced = [i for i, (doc, came) in enumerate(found)
                    if (_same_document(doc) in inputs if inputs else came == "retrieval")]
        if inputs and not replaced:  # (its input recorded, none of it seen: the retrievals before it)
            replaced = [i for i, (_, came) in enumerate(found) if came == "retrieval"]
        at = replaced[0] if replaced else len(found)
        gone = set(replaced)
        found = [item for i, item in enumerate(found) if i not in gone]
        found[at:at] = [(doc, "rerank") for doc in docs]
    seen: set[str] = set()  # (the same chunk id twice, retrieved twice: made unique, order kept)
    return [Document(own_id(doc.chunk, seen), doc.url, doc.has_text) for doc, _ in found], retrieval


# --- the answer -------------------------------------------------------------------------------

def _model(request: Request, source: Span | None) -> str | None:
    candidates = ([source] if source is not None and source.kind == "LLM" else []) + \
        sorted((s for s in request.spans if s.kind == "LLM"), key=lambda s: s.end or s.start, reverse=True)
    for span in candidates:
        for key in ("llm.model_name", "gen_ai.response.model", "gen_ai.request.model"):
            value = span.attributes.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def _prompt_version(request: Request) -> str | None:
    """The prompt template's version a span recorded (``llm.prompt_template.version``), else a
    ``prompt_version`` in a span's metadata."""
    for span in request.spans:
        value = span.attributes.get("llm.prompt_template.version")
        if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
            return str(value)
    for span in request.spans:
        meta = _metadata(span.attributes.get("metadata"))
        if isinstance(meta.get("prompt_version"), str | int) and not isinstance(meta["prompt_version"], bool):
            return str(meta["prompt_version"])
    return None


def iso_time(nanoseconds: int) -> str | None:
    if not nanoseconds:
        return None
    moment = datetime.fromtimestamp(nanoseconds / 1e9, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def to_answer(request: Request, fmt: str, summary: TraceSummary | None = None) -> Answer:
    """The answer of one request (see the module's rules)."""
    docs, retrieval = documents_of(request)
    text, source = final_answer(request)
    question = question_of(request)
    llm_spans = sorted((s for s in request.spans if s.kind == "LLM"), key=lambda s: s.end or s.start, reverse=True)
    if source is not None and source.kind == "LLM":
        llm_spans = [source] + [s for s in llm_spans if s is not source]
    answer_text, chunks, citations, kind, note = cite(text, tuple(d.chunk for d in docs), [d.url for d in docs],
                                                      llm_spans, question)
    notes = list(request.notes) + ([note] if note else [])
    if not retrieval:
        notes.append(NO_RETRIEVAL)
    if not question:
        notes.append("no question found (no input on the root, a chain or an agent, and no user message to an LLM)")
    if not answer_text:
        notes.append("no final answer found (no output on the root, a chain or an LLM span)")
    if request.root.end is None:
        notes.append("the root span had not ended")
    without_text = [c.chunk_id for c in chunks if not c.text]
    service = request.root.resource.get("service.name") if request.root.resource else None
    trace: dict[str, Any] = {"format": fmt, "trace_id": request.trace_id, "root_span_id": request.root.span_id,
                             "citations": kind}
    if isinstance(service, str):
        trace["service"] = service
    if without_text:
        trace["documents_without_text"] = without_text
    if notes:
        trace["notes"] = notes
    errors = [s.status_error for s in request.spans if s.status_error]
    if errors:
        trace["span_errors"] = errors[:10]
    if summary:
        summary.answers += 1
        summary.citations[kind] += 1
        summary.documents += len(chunks)
        summary.documents_without_text += len(without_text)
        summary.without_retrieval += not retrieval
        summary.open_requests += request.root.end is None
    answer_id = request.trace_id if request.alone else f"{request.trace_id}:{request.root.span_id}"
    return Answer(answer_id, question, answer_text, chunks, citations, iso_time(request.root.start),
                  _model(request, source), _prompt_version(request), None, False, {"trace": trace})


def answers_anything(request: Request) -> bool:
    """Whether a request is a question answered, or an attempt at one: it called an LLM, retrieved,
    gave an output or failed.  A trace of an indexing run (a text splitter's spans, a batch of
    embeddings, as LlamaIndex's ``VectorStoreIndex.from_documents`` records them) did none of
    these: it is no answer, and leaving it out keeps it from counting as a clean one."""
    if any(s.kind == "LLM" or s.status_error for s in request.spans):
        return True
    return bool(documents_of(request)[1]) or bool(final_answer(request)[0])


def answers(spans: Iterable[Span], fmt: str, summary: TraceSummary, skip_without_retrieval: bool = False
            ) -> Iterator[Answer]:
    """One answer per request of ``spans`` (but those that answer nothing: :func:`answers_anything`)."""
    return request_answers(requests(spans, summary), fmt, summary, skip_without_retrieval)


def request_answers(found: Iterable[Request], fmt: str, summary: TraceSummary, skip_without_retrieval: bool = False
                    ) -> Iterator[Answer]:
    """One answer per request of ``found`` (but those that answer nothing: :func:`answers_anything`)."""
    for request in found:
        if not answers_anything(request):
            summary.not_answers += 1
            continue
        if skip_without_retrieval and not documents_of(request)[1]:
            summary.skipped_without_retrieval += 1
            continue
        yield to_answer(request, fmt, summary)
