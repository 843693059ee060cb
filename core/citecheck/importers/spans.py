"""Trace spans, read from OTLP JSON into one neutral type every trace importer shares.

An OTLP JSON file holds ``ExportTraceServiceRequest`` objects (one per line, a JSON list of them,
or one object), as the OpenTelemetry file exporters and the collector's file exporter write them:
``resourceSpans[].scopeSpans[].spans[]`` (``instrumentationLibrarySpans`` in older files, and the
snake_case names of a protobuf dump are read too).  What varies between writers is read every way
it is written:

- ids in hex (the OTLP JSON rule) or base64 (the protobuf JSON mapping);
- ``kind`` as a number or an enum name (``SPAN_KIND_SERVER``);
- times as a string or a number of nanoseconds;
- attribute values in every ``AnyValue`` form (``stringValue``, ``intValue`` as a string or a
  number, ``doubleValue``, ``boolValue``, ``bytesValue``, ``arrayValue``, ``kvlistValue``).

Attributes stay as written (dotted keys, flattened or nested); :func:`attribute_tree` turns them
into one nested tree, so ``retrieval.documents.0.document.id`` and a nested
``retrieval.documents`` list are read by the same code.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from msgspec import UNSET

from citecheck.errors import CitecheckError, FieldError, RecordError
from citecheck.importers.otlp_json import decode_export, scope_spans
from citecheck.storage.lines import LongLine, decode, physical_lines, surrogate_path

# OpenTelemetry's span kinds, by number (the protobuf enum) and by name.
SPAN_KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")


# Not frozen, though no reader sets a field: compiled, a frozen dataclass is built by a Python-level
# __init__ at twice the cost (bench/bench_import_otel.py), and an import builds one per span.
@dataclass(slots=True)
class Span:
    """One span of a trace, whatever wrote it (OTLP, Langfuse, Phoenix, LangSmith).

    Ids are lowercase hex when they came as OTLP ids, else as written.  ``kind`` is the
    OpenInference span kind (``LLM``, ``RETRIEVER``, ``CHAIN``, ``TOOL``, ``AGENT``...) when the
    span says it or the GenAI operation implies it, else ``""``.  Times are Unix nanoseconds
    (``end`` is None for a span that has not ended).  ``attributes`` maps dotted keys to values.
    ``where`` names the file and record the span came from, for messages."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str
    start: int
    end: int | None
    attributes: Mapping[str, Any]
    where: str = ""
    resource: Mapping[str, Any] = field(default_factory=dict)
    status_error: str | None = None  # the status message (or "error") of a span that failed
    cache: dict = field(default_factory=dict, compare=False, repr=False)  # (span_tree's, built once)


# --- ids, kinds, times -----------------------------------------------------------------------

_HEX = frozenset("0123456789abcdefABCDEF")


def decode_id(value: Any, size: int, where: str) -> str:
    """An OTLP id (``size`` bytes) as lowercase hex, from hex or base64; ``""`` for an empty one."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise FieldError(where, f"expected an id string (hex or base64), got {type(value).__name__}")
    if len(value) == 2 * size and _HEX.issuperset(value):
        return value.lower()
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), altchars=b"-_" if ("-" in value or "_" in value)
                               else None, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        raise FieldError(where, f"expected {size} bytes as {2 * size} hex digits or base64, got {value[:60]!r}")
    return raw.hex()


def span_kind(value: Any) -> str:
    """OpenTelemetry's span kind as its name (``SERVER``), from a number or an enum string."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(SPAN_KINDS):
        return SPAN_KINDS[value]
    if isinstance(value, str):
        name = value.upper().removeprefix("SPAN_KIND_")
        return name if name in SPAN_KINDS else "UNSPECIFIED"
    return "UNSPECIFIED"


def nanos(value: Any, where: str) -> int | None:
    """A ``*UnixNano`` time (a string or a number); None when it is absent or zero."""
    if value is None or value == "" or value == 0 or value == "0":
        return None
    if isinstance(value, bool):
        raise FieldError(where, "expected nanoseconds since 1970, got a boolean")
    try:
        out = int(value)
    except (TypeError, ValueError):
        raise FieldError(where, f"expected nanoseconds since 1970, got {str(value)[:40]!r}") from None
    if out < 0 or out.bit_length() > 64:
        raise FieldError(where, f"expected nanoseconds since 1970 (a 64-bit count), got {str(value)[:40]!r}")
    return out


# --- attribute values --------------------------------------------------------------------------

def _key(obj: dict, camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def any_value(value: Any, where: str, depth: int = 0) -> Any:
    """The Python value of an OTLP ``AnyValue`` (kvlist as a dict, array as a list)."""
    if depth > 32:
        raise FieldError(where, "attribute values nested more than 32 levels deep")
    if not isinstance(value, dict):
        return value  # (a writer that put the plain value)
    if "stringValue" in value or "string_value" in value:
        return _key(value, "stringValue", "string_value")
    if "boolValue" in value or "bool_value" in value:
        return bool(_key(value, "boolValue", "bool_value"))
    if "intValue" in value or "int_value" in value:
        raw = _key(value, "intValue", "int_value")
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise FieldError(where, f"intValue {str(raw)[:40]!r} is not an integer") from None
    if "doubleValue" in value or "double_value" in value:
        raw = _key(value, "doubleValue", "double_value")
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise FieldError(where, f"doubleValue {str(raw)[:40]!r} is not a number") from None
    if "bytesValue" in value or "bytes_value" in value:
        raw = _key(value, "bytesValue", "bytes_value")
        return raw if isinstance(raw, str) else ""  # (kept as its base64 text)
    if "arrayValue" in value or "array_value" in value:
        items = _key(value, "arrayValue", "array_value") or {}
        values = items.get("values") if isinstance(items, dict) else None
        return [any_value(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(values or [])]
    if "kvlistValue" in value or "kvlist_value" in value:
        items = _key(value, "kvlistValue", "kvlist_value") or {}
        return key_values(items.get("values") if isinstance(items, dict) else None, where, depth + 1)
    return None  # an empty AnyValue


def plain_key_values(items: Any) -> dict[str, Any] | None:
    """:func:`key_values` of a well-formed list (each item a ``{key, value}`` object whose key is a
    string and whose value reads), in one quick pass; None for anything else, which
    :func:`key_values` reads again to name the bad item."""
    out: dict[str, Any] = {}
    try:
        for item in items:
            key = item["key"]
            value = item["value"]
            text = value.get("stringValue")
            if type(key) is not str:
                return None
            out[key] = text if type(text) is str else any_value(value, "")
    except (KeyError, TypeError, AttributeError, FieldError):
        return None
    return out


def key_values(items: Any, where: str, depth: int = 0) -> dict[str, Any]:
    """A list of OTLP ``KeyValue`` objects as a dict (later keys win, as in OTel)."""
    if depth == 0 and type(items) is list and (quick := plain_key_values(items)) is not None:
        return quick
    return named_key_values(items, where, depth)


def named_key_values(items: Any, where: str, depth: int = 0) -> dict[str, Any]:
    """:func:`key_values` item by item, naming the first that cannot be read."""
    out: dict[str, Any] = {}
    if items is None:
        return out
    if not isinstance(items, list):
        raise FieldError(where, "expected a list of {key, value} objects")
    for i, item in enumerate(items):
        key = item.get("key") if type(item) is dict else None
        if type(key) is not str:
            raise FieldError(f"{where}[{i}].key", "is required (a string)")
        value = item.get("value")
        if type(value) is dict and len(value) == 1 and type(text := value.get("stringValue")) is str:
            out[key] = text  # (most attributes: a string)
        else:
            out[key] = any_value(value, f"{where}[{i}].value", depth)
    return out


def maybe_json(value: Any) -> Any:
    """A JSON-string attribute parsed (OpenInference writes metadata, tool outputs and
    ``input.value`` as JSON text); any other value, or text that is not JSON, as it is."""
    if isinstance(value, str):
        head = value.lstrip()[:1]
        if head in ("{", "["):
            try:
                return decode(value)
            except FieldError:
                return value
    return value


def attribute_tree(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Dotted keys as one nested tree: ``{"a.b.0.c": 1}`` and ``{"a": {"b": [{"c": 1}]}}`` both read
    ``tree["a"]["b"]`` as a node whose items (:func:`items`) hold ``{"c": 1}``.  A key that is both
    a value and a prefix (``input`` and ``input.value``) keeps the value under ``""``."""
    tree: dict[str, Any] = {}
    for key, value in attributes.items():
        node = tree
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {} if child is None else {"": child}
                node[part] = child
            node = child
        last = parts[-1]
        if isinstance(node.get(last), dict) and not isinstance(value, dict):
            node[last][""] = value
        elif isinstance(node.get(last), dict) and isinstance(value, dict):
            node[last].update(value)
        else:
            node[last] = value
    return tree


def span_tree(span: Span) -> dict[str, Any]:
    """:func:`attribute_tree` of a span's attributes, built once per span."""
    tree = span.cache.get("tree")
    if tree is None:
        tree = span.cache["tree"] = attribute_tree(span.attributes)
    return tree


def span_value(span: Span, path: str) -> Any:
    """The plain value at a dotted path of a span's attributes (flattened: one look-up)."""
    value = span.attributes.get(path)
    if value is not None and not isinstance(value, dict):
        return value
    if "tree" not in span.cache and not any(type(v) is dict for v in span.attributes.values()):
        return None  # every attribute is flattened: the look-up was the answer
    return leaf(span_tree(span), path)


def flattened_items(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The items of a flattened list attribute (``prefix.N.field...``) as dicts of their dotted
    fields, in index order, without building the whole tree (the common case, and the fast one)."""
    start = prefix + "."
    size = len(start)
    found: dict[int, dict[str, Any]] = {}
    for key in attributes:
        if key.startswith(start):
            index, _, rest = key[size:].partition(".")
            if rest and index.isdigit():
                number = int(index)
                item = found.get(number)
                if item is None:
                    item = found[number] = {}
                item[rest] = attributes[key]
    return [found[i] for i in sorted(found)] if found else []


def node(tree: Any, path: str) -> Any:
    """The value at a dotted path of an :func:`attribute_tree` (None when it is not there)."""
    for part in path.split("."):
        if not isinstance(tree, dict):
            return None
        tree = tree.get(part)
    if isinstance(tree, dict) and set(tree) == {""}:
        return tree[""]
    return tree


def leaf(tree: Any, path: str) -> Any:
    """The plain value at a path: a node that is also a prefix gives its ``""`` value."""
    value = node(tree, path)
    return value.get("") if isinstance(value, dict) and "" in value else value


def items(value: Any) -> list:
    """The items of a list node: a list (nested), or a dict keyed by indices (flattened), in
    index order; a JSON string holding a list is parsed."""
    value = maybe_json(value)
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        numbered = [(int(k), v) for k, v in value.items() if k.isdigit()]
        return [v for _, v in sorted(numbered)]
    return []


# --- OTLP JSON files ---------------------------------------------------------------------------

def _list(obj: dict, camel: str, snake: str, where: str, *, old: str | None = None) -> list:
    value = _key(obj, camel, snake)
    if value is None and old:
        value = obj.get(old)
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(f"{where}.{camel}", "expected a list")
    return value


# OpenInference says a span's kind in this attribute; the GenAI conventions say it by operation.
_GENAI_KINDS = {"chat": "LLM", "text_completion": "LLM", "generate_content": "LLM", "execute_tool": "TOOL",
                "invoke_agent": "AGENT", "create_agent": "AGENT", "embeddings": "EMBEDDING",
                "retrieval": "RETRIEVER", "retrieve": "RETRIEVER"}


def semantic_kind(attributes: Mapping[str, Any]) -> str:
    """The OpenInference span kind, from ``openinference.span.kind`` or ``gen_ai.operation.name``."""
    kind = attributes.get("openinference.span.kind")
    if isinstance(kind, str) and kind:
        return kind.upper()
    operation = attributes.get("gen_ai.operation.name")
    if isinstance(operation, str):
        return _GENAI_KINDS.get(operation.lower(), "")
    return ""


def _status_error(status: Any) -> str | None:
    if not isinstance(status, dict):
        return None
    code = status.get("code")
    if code in (2, "2", "STATUS_CODE_ERROR", "ERROR"):
        message = status.get("message")
        return message if isinstance(message, str) and message else "error"
    return None


def span_from_otlp(obj: Any, where: str, resource: Mapping[str, Any], origin: str = "") -> Span:
    """One OTLP JSON span; :class:`FieldError` (its field named under ``where``) when it cannot be read."""
    if not isinstance(obj, dict):
        raise FieldError(where, "expected a span object")
    trace_id = decode_id(_key(obj, "traceId", "trace_id"), 16, f"{where}.traceId")
    span_id = decode_id(_key(obj, "spanId", "span_id"), 8, f"{where}.spanId")
    if not trace_id:
        raise FieldError(f"{where}.traceId", "is required (the span's trace)")
    if not span_id:
        raise FieldError(f"{where}.spanId", "is required (the span's id)")
    parent = decode_id(_key(obj, "parentSpanId", "parent_span_id"), 8, f"{where}.parentSpanId") or None
    attributes = key_values(obj.get("attributes"), f"{where}.attributes")
    start = nanos(_key(obj, "startTimeUnixNano", "start_time_unix_nano"), f"{where}.startTimeUnixNano") or 0
    end = nanos(_key(obj, "endTimeUnixNano", "end_time_unix_nano"), f"{where}.endTimeUnixNano")
    name = obj.get("name")
    return Span(trace_id, span_id, parent, name if isinstance(name, str) else "", semantic_kind(attributes),
                start, end, attributes, origin or where, resource, _status_error(obj.get("status")))


def _quick_nanos(value: Any) -> int | None:
    """:func:`nanos`, the usual time (a string of digits, under 2**64) read first and directly."""
    if type(value) is str and 0 < len(value) < 20 and value.isdigit() and value.isascii():
        return None if value == "0" else int(value)
    return nanos(value, "")


def quick_span(obj: Any, resource: Mapping[str, Any], origin: str) -> Span | None:
    """:func:`span_from_otlp` of a span written the usual way (camelCase fields, hex ids,
    attributes that read), without naming fields; None for any other span, which
    :func:`span_from_otlp` reads (naming what is wrong)."""
    if type(obj) is not dict:
        return None
    trace_id, span_id, parent = obj.get("traceId"), obj.get("spanId"), obj.get("parentSpanId")
    if not (type(trace_id) is str and len(trace_id) == 32 and _HEX.issuperset(trace_id)
            and type(span_id) is str and len(span_id) == 16 and _HEX.issuperset(span_id)) or "parent_span_id" in obj:
        return None
    if parent == "" or parent is None:
        parent = None
    elif type(parent) is str and len(parent) == 16 and _HEX.issuperset(parent):
        parent = parent.lower()
    else:
        return None
    attributes = obj.get("attributes")
    attributes = {} if attributes is None else plain_key_values(attributes) if type(attributes) is list else None
    if attributes is None:
        return None
    start, end = obj.get("startTimeUnixNano"), obj.get("endTimeUnixNano")
    if (start is None and "start_time_unix_nano" in obj) or (end is None and "end_time_unix_nano" in obj):
        return None
    try:
        start, end = _quick_nanos(start) or 0, _quick_nanos(end)
    except FieldError:
        return None
    name = obj.get("name")
    return Span(trace_id.lower(), span_id.lower(), parent, name if isinstance(name, str) else "",
                semantic_kind(attributes), start, end, attributes, origin, resource,
                _status_error(obj.get("status")))


# The integers orjson decodes as integers (past them it gives a float, msgspec an integer): a typed
# export holding one elsewhere is read the careful way, as orjson reads it.
_INT_LOW = -(2**63)
_INT_HIGH = 2**64


class _Unusual(CitecheckError):
    """A typed export that the careful path must read (:func:`typed_spans`): never raised past it."""


def _typed_value(value: Any, depth: int) -> Any:
    """:func:`any_value` of a typed ``AnyValue`` (:class:`citecheck.importers.otlp_json.Value`)."""
    if depth > 32:
        raise _Unusual
    text = value.stringValue
    if text is not UNSET:
        return text
    if value.boolValue is not UNSET:
        return value.boolValue
    number = value.intValue
    if number is not UNSET:
        if type(number) is int:
            if not _INT_LOW <= number < _INT_HIGH:
                raise _Unusual
            return number
        try:
            return int(number)
        except ValueError:
            raise _Unusual from None
    number = value.doubleValue
    if number is not UNSET:
        if type(number) is int and not _INT_LOW <= number < _INT_HIGH:
            raise _Unusual
        return float(number)
    if value.bytesValue is not UNSET:
        return value.bytesValue
    if value.arrayValue is not UNSET:
        values = value.arrayValue.values
        return [] if values is UNSET else [_typed_value(v, depth + 1) for v in values]
    if value.kvlistValue is not UNSET:
        pairs = value.kvlistValue.values
        out: dict[str, Any] = {}
        if pairs is not UNSET:
            for pair in pairs:
                out[pair.key] = _typed_value(pair.value, depth + 1)
        return out
    return None


def _typed_attributes(items: Any) -> dict[str, Any]:
    """:func:`key_values` of a typed attribute list (later keys win)."""
    out: dict[str, Any] = {}
    if items is UNSET:
        return out
    for item in items:
        value = item.value
        text = value.stringValue
        out[item.key] = text if text is not UNSET else _typed_value(value, 0)
    return out


def _typed_time(value: Any) -> int | None:
    """:func:`_quick_nanos` of a typed time (a string or an integer; UNSET when left out)."""
    if value is UNSET:
        return None
    if type(value) is int and not _INT_LOW <= value < _INT_HIGH:
        raise _Unusual
    try:
        return _quick_nanos(value)
    except FieldError:
        raise _Unusual from None


def _typed_span(obj: Any, resource: Mapping[str, Any], origin: str) -> Span:
    """:func:`quick_span` of a typed span; :class:`_Unusual` for one it would step aside from."""
    trace_id, span_id, parent = obj.traceId, obj.spanId, obj.parentSpanId
    if not (type(trace_id) is str and len(trace_id) == 32 and _HEX.issuperset(trace_id)
            and type(span_id) is str and len(span_id) == 16 and _HEX.issuperset(span_id)):
        raise _Unusual
    if parent is UNSET or parent == "":
        parent = None
    elif len(parent) == 16 and _HEX.issuperset(parent):
        parent = parent.lower()
    else:
        raise _Unusual
    attributes = _typed_attributes(obj.attributes)
    name = obj.name
    status = obj.status
    return Span(trace_id.lower(), span_id.lower(), parent, "" if name is UNSET else name, semantic_kind(attributes),
                _typed_time(obj.startTimeUnixNano) or 0, _typed_time(obj.endTimeUnixNano), attributes, origin,
                resource, None if status is UNSET else _status_error(status))


def typed_spans(export: Any, origin: str) -> list[Span] | None:
    """The spans :func:`spans_from_request` reads of an export decoded into typed records
    (:func:`citecheck.importers.otlp_json.decode_export`), each with ``where`` = ``origin``; None
    when the export holds anything that path would read otherwise or name as wrong (the caller
    then decodes it again and reads it that way)."""
    out: list[Span] = []
    try:
        resources: dict[int, Mapping[str, Any]] = {  # (every resource read, as the careful path reads them)
            id(rs): {} if rs.resource is UNSET else _typed_attributes(rs.resource.attributes)
            for rs in export.resourceSpans}
        for rs, spans in scope_spans(export):
            resource = resources[id(rs)]
            for span in spans:
                out.append(_typed_span(span, resource, origin))
    except _Unusual:
        return None
    return out


def _unfit(value: Any) -> str | None:
    """Where a record a lenient decode let through holds a lone surrogate (not Unicode text, which no
    log line may hold); None when it holds none."""
    found = surrogate_path(value)
    if found is None:
        return None
    field = found[0] if found[0] != "(line)" else ""
    return field if not field or field.startswith("[") else "." + field


def other_format(record: Any, reading: str) -> str:
    """``" (it looks like ...: read it with citecheck import X)"`` when ``record`` is a record of
    another trace format than ``reading`` (otel, langfuse, phoenix, langsmith) reads; else ``""``.
    Added to the error that a required field is missing, so that a file given to the wrong
    importer says which one reads it."""
    if not isinstance(record, dict):
        return ""
    if "resourceSpans" in record or "resource_spans" in record:
        found = "otel"
    elif "observations" in record or ("traceId" in record and "startTime" in record and "type" in record):
        found = "langfuse"
    elif "context.span_id" in record or "span_kind" in record or isinstance(record.get("context"), dict):
        found = "phoenix"
    elif "run_type" in record or "child_runs" in record or "dotted_order" in record:
        found = "langsmith"
    else:
        return ""
    what = {"otel": "an OTLP export", "langfuse": "a Langfuse trace", "phoenix": "a Phoenix span row",
            "langsmith": "a LangSmith run"}[found]
    return "" if found == reading else f" (it looks like {what}: read it with `citecheck import {found}`)"


def spans_from_request(request: Any, where: str, origin: str = "", careful: bool = False
                       ) -> Iterator[Span | FieldError]:
    """Every span of one ``ExportTraceServiceRequest`` (a dict); a span that cannot be read comes
    as a :class:`FieldError` naming its field, and the others still come.  ``origin`` (a file and
    line) becomes each span's ``where``.  ``careful``: the request was decoded leniently (it holds
    a lone surrogate somewhere), so each span is looked at first and one that holds it is refused
    alone, naming its field."""
    if not isinstance(request, dict):
        yield FieldError(where or "(record)", "expected an ExportTraceServiceRequest object (resourceSpans)")
        return
    try:
        resource_spans = _list(request, "resourceSpans", "resource_spans", where or "(record)")
    except FieldError as exc:
        yield exc
        return
    if not resource_spans and "resourceSpans" not in request and "resource_spans" not in request:
        yield FieldError("resourceSpans", "is required (an OTLP ExportTraceServiceRequest: "
                                          "{\"resourceSpans\": [{\"scopeSpans\": [{\"spans\": [...]}]}]})"
                         + other_format(request, "otel"))
        return
    for r, rs in enumerate(resource_spans):
        here = f"resourceSpans[{r}]"
        if not isinstance(rs, dict):
            yield FieldError(here, "expected an object")
            continue
        if careful and (bad := _unfit(rs.get("resource"))) is not None:
            yield FieldError(f"{here}.resource{bad}", "holds a lone surrogate, which is not Unicode text; the "
                                                      "resource's attributes are left out, its spans are read")
            rs = {key: value for key, value in rs.items() if key != "resource"}
        try:
            resource_obj = rs.get("resource")
            resource = key_values(resource_obj.get("attributes") if isinstance(resource_obj, dict) else None,
                                  f"{here}.resource.attributes")
            scopes = _list(rs, "scopeSpans", "scope_spans", here, old="instrumentationLibrarySpans")
        except FieldError as exc:
            yield exc
            continue
        for s, scope in enumerate(scopes):
            there = f"{here}.scopeSpans[{s}]"
            if not isinstance(scope, dict):
                yield FieldError(there, "expected an object")
                continue
            try:
                spans = _list(scope, "spans", "spans", there)
            except FieldError as exc:
                yield exc
                continue
            for k, span in enumerate(spans):
                if careful and (bad := _unfit(span)) is not None:
                    yield FieldError(f"{there}.spans[{k}]{bad}", "holds a lone surrogate, which is not Unicode text "
                                     "(fix the exporter that escaped half of a character pair); the span is left out")
                    continue
                if not careful and (quick := quick_span(span, resource, origin or f"{there}.spans[{k}]")) is not None:
                    yield quick
                    continue
                try:
                    yield span_from_otlp(span, f"{there}.spans[{k}]", resource, origin)
                except FieldError as exc:
                    yield exc


def _lenient(raw: bytes | memoryview) -> tuple[Any, bool] | FieldError:
    """(value, careful) of one JSON text: orjson's decode, else the standard library's, which also
    takes a lone surrogate escape (then ``careful``: each span is looked at before it is used, so
    one bad span does not cost the others in its export); a :class:`FieldError` when neither can."""
    try:
        return orjson.loads(raw), False
    except orjson.JSONDecodeError:
        pass
    try:
        value = json.loads(bytes(raw))
    except UnicodeDecodeError as exc:
        return FieldError("(encoding)", f"not UTF-8 text ({exc.reason})")
    except json.JSONDecodeError as exc:
        return FieldError("(json)", f"not valid JSON: {exc.msg} (column {exc.colno})")
    except (ValueError, RecursionError) as exc:
        return FieldError("(json)", f"cannot be read ({type(exc).__name__}: nested too deep, or a number too long)")
    return value, True


_BLANK = re.compile(rb"[ \t\n\r\x0b\x0c]*")  # (what bytes.strip strips)


def _otlp_records(path: str) -> Iterator[tuple[int, Any, bool] | RecordError]:
    """``(position, record, careful)`` of an OTLP JSON file: one JSON value (an export, or a list
    of them: position is the item), or one export a line (position is the line; record is then
    the line's bytes, which :func:`read_otlp` decodes).  A line may be of any length: a
    collector's batch can be large, and the file is in memory already (its lines are decoded
    where they lie, not copied out)."""
    data = Path(path).read_bytes()
    if data[:4] == b"PAR1":
        yield RecordError(path, 1, "(file)", "this is a Parquet file, not OTLP JSON: Phoenix span exports are "
                                             "read by `citecheck import phoenix`")
        return
    first = _BLANK.match(data).end()  # type: ignore[union-attr]  # (it matches the empty string)
    head = data[first:first + 1]
    if head == b"[" or (head == b"{" and _spans_lines(data, first) and not _first_line_is_json(data, first)):
        whole = _lenient(data)
        if not isinstance(whole, FieldError):
            value, careful = whole
            if isinstance(value, list):
                yield from ((i, item, careful) for i, item in enumerate(value, start=1))
                return
            if isinstance(value, dict):
                yield 1, value, careful
                return
    for position, raw in _lines(data):
        yield position, raw, False  # (decoded by read_otlp: typed first, else as _lenient decodes it)


def _spans_lines(data: bytes, first: int) -> bool:
    """Whether a newline stands between the first and the last non-blank byte of ``data``."""
    newline = data.find(b"\n", first)
    return newline >= 0 and _BLANK.match(data, newline).end() < len(data)  # type: ignore[union-attr]


def _first_line_is_json(data: bytes, first: int) -> bool:
    """Whether the first line is one JSON value by itself: then the file, which has more after it,
    is not one JSON value (neither decoder would read it whole), and is read a line at a time."""
    newline = data.find(b"\n", first)
    try:
        orjson.loads(memoryview(data)[first:newline])
    except orjson.JSONDecodeError:
        return False
    return True


def _lines(data: bytes) -> Iterator[tuple[int, bytes | memoryview]]:
    """``(line number, line)`` of every non-blank line, split as :meth:`bytes.splitlines` splits
    (at ``\\n``, ``\\r\\n`` and a lone ``\\r``); the lines are views into ``data``, not copies."""
    if b"\r" in data:
        yield from ((n, raw) for n, raw in enumerate(data.splitlines(), start=1) if raw.strip())
        return
    view = memoryview(data)
    at, number, size = 0, 1, len(data)
    while at < size:
        end = data.find(b"\n", at)
        if end < 0:
            end = size
        if _BLANK.match(data, at, end).end() < end:  # type: ignore[union-attr]
            yield number, view[at:end]
        at, number = end + 1, number + 1


def record_spans(path: str, position: int, record: Any, careful: bool = False) -> list[Span | RecordError]:
    """The spans of one record of an OTLP JSON file: an export's line (bytes, decoded here: typed
    first, else as :func:`_lenient` decodes it) or an export already decoded; a span or record that
    cannot be read is a :class:`RecordError` naming line ``position`` of ``path``."""
    origin = f"{path}:{position}"
    if type(record) is memoryview or type(record) is bytes:  # a line, not yet decoded
        typed = decode_export(record)
        quick = typed_spans(typed, origin) if typed is not None else None
        if quick is not None:
            return list(quick)
        found = _lenient(record)
        if isinstance(found, FieldError):
            return [RecordError(path, position, found.field, found.message)]
        record, careful = found
    out: list[Span | RecordError] = []
    for span in spans_from_request(record, "", origin, careful):
        out.append(RecordError(path, position, span.field, span.message) if isinstance(span, FieldError) else span)
    return out


def read_otlp(path: str) -> Iterator[Span | RecordError]:
    """The spans of an OTLP JSON file, each with ``where`` naming its file and line (or item); a
    record or span that cannot be read is a :class:`RecordError`, and the rest are still read."""
    for item in _otlp_records(path):
        if isinstance(item, RecordError):
            yield item
        else:
            yield from record_spans(path, item[0], item[1], item[2])


# --- one export a line, read as a stream ----------------------------------------------------

_HEAD_BYTES = 1 << 20


def is_export_lines(path: str) -> bool:
    """Whether :func:`_otlp_records` reads ``path`` one export a line, as its first line alone tells:
    the file starts (after blank space) with a JSON object that ends with its first line.  Then
    :func:`export_lines` gives the same lines without holding the file; a file it cannot tell
    from its first megabyte (a longer first line) is read whole, as before."""
    with open(path, "rb") as handle:
        head = handle.read(_HEAD_BYTES)
    first = _BLANK.match(head).end()  # type: ignore[union-attr]  # (it matches the empty string)
    if head[first:first + 1] != b"{" or head.find(b"\n", first) < 0:
        return False
    return _first_line_is_json(head, first)


def export_lines(path: str) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` of every non-blank line of ``path`` without its end, numbered and
    split as :func:`_lines` numbers and splits them, read a megabyte at a time (a line of any
    length is whole)."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(physical_lines(handle, limit=sys.maxsize), start=1):
            assert not isinstance(raw, LongLine)  # (no line is over the limit of sys.maxsize bytes)
            if raw.strip():
                yield number, raw.rstrip(b"\r\n")
