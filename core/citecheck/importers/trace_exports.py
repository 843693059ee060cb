"""Values as trace platforms export them (Langfuse, Phoenix, LangSmith), read into what
:class:`citecheck.importers.spans.Span` attributes hold.

- **Times** come as ISO 8601 text (any number of fractional digits, ``Z``, an offset or none,
  which is UTC), as ``datetime`` / pandas ``Timestamp`` objects, or as epoch numbers (seconds,
  milliseconds, microseconds or nanoseconds, told apart by size); all become Unix nanoseconds.
- **JSON inside JSON**: an input or output may be JSON text whose fields hold JSON text again
  (an SDK serialised it, then the platform did).  :func:`unwrap` parses it layer by layer, a
  bounded number of times; the text of a message or a document (``content``, ``page_content``,
  ``text``...) is left as written, since a source's text may look like JSON.
- **LangChain objects** serialised with ``dumpd`` (``{"lc": 1, "type": "constructor", "id": [...,
  "HumanMessage"], "kwargs": {...}}``) or ``message_to_dict`` (``{"type": "human", "data": {...}}``)
  become plain messages (``{"role", "content"}``) and documents (``{"page_content", "metadata"}``).
- **Documents** a step returned: a list of objects with text or a URL, as it is or under
  ``documents``/``results``/``docs``/``hits``/``items``/``sources``/``data``/``output``, or inside a
  tool message's content.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timedelta, timezone
from typing import Any

from citecheck.errors import FieldError
from citecheck.importers.spans import maybe_json

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ISO = re.compile(r"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?)(?:[.,](\d+))?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?")
_MAX_DEPTH = 12  # nesting read through; deeper values are kept as they are
_MAX_LAYERS = 4  # JSON text inside JSON text, at one place

# Keys whose string is text to keep as written (a source or a message may hold text that looks like JSON).
TEXT_KEYS = frozenset({"content", "page_content", "text", "raw_content", "snippet", "body", "chunk", "answer",
                       "question", "query", "input", "prompt", "completion", "message"})
_DOC_TEXT = ("page_content", "content", "text", "raw_content", "snippet", "body", "chunk")
_DOC_URL = ("url", "link", "uri", "source_url")
_DOC_LISTS = ("documents", "results", "docs", "hits", "items", "sources", "data", "organic", "output", "result")
_ROLES = {"human": "user", "humanmessage": "user", "user": "user", "ai": "assistant", "aimessage": "assistant",
          "assistant": "assistant", "system": "system", "systemmessage": "system", "tool": "tool",
          "toolmessage": "tool", "function": "tool", "functionmessage": "tool", "chat": "user",
          "chatmessage": "user", "aimessagechunk": "assistant"}


# --- times -----------------------------------------------------------------------------------

def epoch_nanos(value: Any, where: str) -> int | None:
    """A time in any of the forms above as Unix nanoseconds; None when absent (None, "", NaN)."""
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool):
        raise FieldError(where, "expected a time (ISO 8601 text or an epoch number), got a boolean")
    if isinstance(value, datetime):
        exact = getattr(value, "value", None)  # a pandas Timestamp: nanoseconds since 1970, UTC
        if isinstance(exact, int):
            return exact
        moment = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return (moment - _EPOCH) // timedelta(microseconds=1) * 1000
    if isinstance(value, int | float):
        return _from_number(value, where)
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"-?\d+(\.\d+)?", text):
            return _from_number(float(text) if "." in text else int(text), where)
        match = _ISO.fullmatch(text)
        if match:
            base, fraction, zone = match.groups()
            zone = "+00:00" if zone in (None, "Z", "z") else zone
            if len(zone) == 3:
                zone += ":00"
            elif ":" not in zone:
                zone = f"{zone[:3]}:{zone[3:]}"
            try:
                moment = datetime.fromisoformat(base.replace(" ", "T") + zone)
            except ValueError:
                pass  # (a month 13, a day 32...)
            else:
                seconds = (moment - _EPOCH) // timedelta(seconds=1)
                return seconds * 10**9 + int((fraction or "0")[:9].ljust(9, "0"))
    raise FieldError(where, f"expected a time (ISO 8601 text or an epoch number), got {str(value)[:40]!r}")


def _from_number(value: int | float, where: str) -> int:
    if not math.isfinite(value) or value < 0:
        raise FieldError(where, f"expected a time since 1970, got {value!r}")
    for limit, scale in ((1e17, 1), (1e14, 10**3), (1e11, 10**6)):  # ns, us, ms by size
        if value >= limit:
            return int(value * scale)
    return int(value * 10**9)  # seconds


# --- JSON inside JSON, LangChain objects -------------------------------------------------------

def unwrap(value: Any, depth: int = 0) -> Any:
    """``value`` with JSON text parsed layer by layer, in it and in every field (see the module)."""
    for _ in range(_MAX_LAYERS):
        parsed = maybe_json(value)
        if parsed is value and isinstance(value, str) and value.strip()[:2] in ('"{', '"['):
            parsed = _json_string(value)  # JSON text of a string that holds JSON text
        if parsed is value:
            break
        value = parsed
    if depth >= _MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {k: (v if k in TEXT_KEYS and isinstance(v, str) else unwrap(v, depth + 1)) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrap(v, depth + 1) for v in value]
    return value


def _json_string(value: str) -> Any:
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    return parsed if isinstance(parsed, str) else value


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` with LangChain's serialised messages and documents as plain objects."""
    if depth >= _MAX_DEPTH:
        return value
    if isinstance(value, list):
        return [plain(v, depth + 1) for v in value]
    if not isinstance(value, dict):
        return value
    kwargs = value.get("kwargs")
    if value.get("lc") is not None and isinstance(value.get("id"), list) and isinstance(kwargs, dict):
        name = str(value["id"][-1]) if value["id"] else ""
        if name == "Document":
            return {k: plain(v, depth + 1) for k, v in kwargs.items() if k != "type"}
        role = _ROLES.get(name.lower()) or _ROLES.get(str(kwargs.get("type", "")).lower())
        if role:
            return _message(role, kwargs, depth)
        return plain(kwargs, depth + 1)
    data = value.get("data")
    if isinstance(data, dict) and isinstance(value.get("type"), str) and "content" in data and len(value) <= 2:
        role = _ROLES.get(value["type"].lower())  # message_to_dict: {"type": "human", "data": {...}}
        if role:
            return _message(role, data, depth)
    if value.get("type") == "Document" and "page_content" in value:
        return {k: plain(v, depth + 1) for k, v in value.items() if k != "type"}
    return {k: plain(v, depth + 1) for k, v in value.items()}


def _message(role: str, fields: dict, depth: int) -> dict:
    out: dict[str, Any] = {"role": role, "content": plain(fields.get("content"), depth + 1)}
    for key in ("name", "tool_calls", "tool_call_id"):
        if fields.get(key):
            out[key] = plain(fields[key], depth + 1)
    return out


def messages(value: Any) -> list[dict]:
    """Chat messages (a list, possibly nested one level as LangChain batches them, or under
    ``messages``) as OpenInference ``{"message": {"role", "content"}}`` items."""
    value = plain(unwrap(value))
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value = value["messages"]
    elif isinstance(value, dict) and "role" in value and "content" in value:
        value = [value]
    if not isinstance(value, list):
        return []
    if value and all(isinstance(v, list) for v in value):
        value = value[0]  # a batch of one conversation
    out = []
    for item in value:
        if isinstance(item, dict) and isinstance(item.get("role"), str):
            role = _ROLES.get(item["role"].lower(), item["role"])
            out.append({"message": {"role": role, "content": item.get("content")}})
    return out


def as_object(value: Any) -> dict:
    """``value`` when it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}


def json_text(value: Any) -> str | None:
    """A value as ``input.value``/``output.value`` holds it: text as it is, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


# --- documents ---------------------------------------------------------------------------------

def _is_document(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    body = as_object(item.get("document")) or item
    if "role" in body:  # a chat message, not a document
        return False
    has_text_or_url = any(isinstance(body.get(k), str) for k in _DOC_TEXT + _DOC_URL)
    return has_text_or_url or "page_content" in body or (isinstance(body.get("metadata"), dict) and "id" in body)


def documents_in(value: Any, depth: int = 0) -> list[dict]:
    """The documents a step returned (see the module); ``[]`` when it returned none."""
    value = plain(unwrap(value))
    if depth > 4:
        return []
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value) and any(_is_document(v) for v in value):
            return value
        return []
    if isinstance(value, dict):
        if value.get("role") in ("tool", "assistant") and "content" in value:
            return documents_in(maybe_json(value["content"]), depth + 1)
        for key in _DOC_LISTS:
            if value.get(key) is not None:
                found = documents_in(value[key], depth + 1)
                if found:
                    return found
    return []


def with_scores(documents: list[dict]) -> list[dict]:
    """Documents with a score kept in their metadata (``score``, ``relevance_score``) lifted up,
    where :mod:`citecheck.importers.traces` reads it."""
    out = []
    for doc in documents:
        meta = doc.get("metadata")
        if "score" not in doc and isinstance(meta, dict):
            score = meta.get("score", meta.get("relevance_score"))
            if isinstance(score, int | float) and not isinstance(score, bool):
                doc = {**doc, "score": score}
        out.append(doc)
    return out
