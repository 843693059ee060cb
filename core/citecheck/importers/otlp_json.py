"""An OTLP JSON export's usual shape, decoded by msgspec straight into typed records (issue #33).

The shape is what the OpenTelemetry SDKs' and the collector's file exporters write: camelCase
fields only, every ``AnyValue`` in one of its typed forms, ids and times as JSON strings or
integers.  :data:`DECODER` validates and builds an :class:`Export` in one C pass, without the
dictionaries a JSON parser makes for every attribute; :func:`citecheck.importers.spans.typed_spans`
turns it into spans.  An export of any other shape (snake_case fields, a field OTLP does not
name, ``null`` where a value belongs, a lone surrogate escape) fails here and is read by the
careful path (:func:`citecheck.importers.spans.spans_from_request`), which also names what is
wrong: this path only ever gives the spans the careful path gives of the same export, or nothing
(tests/test_trace_fast_paths.py holds the two equal).  Not in the compiled set: msgspec's
``Struct`` is a C type that mypyc does not subclass.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
from msgspec import UNSET, Struct, UnsetType


class Value(Struct, forbid_unknown_fields=True, gc=False):
    """An ``AnyValue``; UNSET for each form it is not in (a ``null`` form is refused)."""

    stringValue: str | UnsetType = UNSET
    boolValue: bool | UnsetType = UNSET
    intValue: int | str | UnsetType = UNSET
    doubleValue: float | int | UnsetType = UNSET
    bytesValue: str | UnsetType = UNSET
    arrayValue: Values | UnsetType = UNSET
    kvlistValue: KeyValues | UnsetType = UNSET


class KeyValue(Struct, forbid_unknown_fields=True, gc=False):
    key: str
    value: Value


class Values(Struct, forbid_unknown_fields=True, gc=False):
    values: list[Value] | UnsetType = UNSET


class KeyValues(Struct, forbid_unknown_fields=True, gc=False):
    values: list[KeyValue] | UnsetType = UNSET


class OtlpSpan(Struct, forbid_unknown_fields=True, gc=False):
    """A span; the fields no span reader uses are decoded (so a bad byte in them refuses the export, as the careful path would) and left alone."""

    traceId: str | int | UnsetType = UNSET
    spanId: str | int | UnsetType = UNSET
    parentSpanId: str | UnsetType = UNSET
    name: str | UnsetType = UNSET
    startTimeUnixNano: str | int | UnsetType = UNSET
    endTimeUnixNano: str | int | UnsetType = UNSET
    attributes: list[KeyValue] | UnsetType = UNSET
    status: Any = UNSET
    kind: Any = UNSET
    traceState: Any = UNSET
    flags: Any = UNSET
    events: Any = UNSET
    links: Any = UNSET
    droppedAttributesCount: Any = UNSET
    droppedEventsCount: Any = UNSET
    droppedLinksCount: Any = UNSET


class Resource(Struct, forbid_unknown_fields=True, gc=False):
    attributes: list[KeyValue] | UnsetType = UNSET
    droppedAttributesCount: Any = UNSET
    entityRefs: Any = UNSET


class ScopeSpans(Struct, forbid_unknown_fields=True, gc=False):
    spans: list[OtlpSpan] | UnsetType = UNSET
    scope: Any = UNSET
    schemaUrl: Any = UNSET


class ResourceSpans(Struct, forbid_unknown_fields=True, gc=False):
    resource: Resource | UnsetType = UNSET
    scopeSpans: list[ScopeSpans] | UnsetType = UNSET
    schemaUrl: Any = UNSET


class Export(Struct, forbid_unknown_fields=True, gc=False):
    """An ``ExportTraceServiceRequest``."""

    resourceSpans: list[ResourceSpans]


DECODER = msgspec.json.Decoder(Export)


def scope_spans(export: Any) -> Iterator[tuple[Any, list]]:
    """(resource spans, spans) of each scope of a decoded export (an :class:`Export`, or the light
    one :func:`trace_ids` decodes) that holds spans."""
    for resource in export.resourceSpans:
        scopes = resource.scopeSpans
        if scopes is UNSET:
            continue
        for scope in scopes:
            if scope.spans is not UNSET:
                yield resource, scope.spans


def decode_export(raw: bytes | memoryview) -> Export | None:
    """The export as an :class:`Export`, or None when it is not of the usual shape."""
    try:
        return DECODER.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None


# --- the trace ids of an export, for reading a file in one pass per request ------------------


class _IdSpan(Struct, gc=False):
    traceId: Any = UNSET  # (every other field of the span is skipped unread)


class _IdScopeSpans(Struct, forbid_unknown_fields=True, gc=False):
    spans: list[_IdSpan] | UnsetType = UNSET
    scope: Any = UNSET
    schemaUrl: Any = UNSET


class _IdResourceSpans(Struct, forbid_unknown_fields=True, gc=False):
    resource: Any = UNSET
    scopeSpans: list[_IdScopeSpans] | UnsetType = UNSET
    schemaUrl: Any = UNSET


class _IdExport(Struct, forbid_unknown_fields=True, gc=False):
    resourceSpans: list[_IdResourceSpans]


_ID_DECODER = msgspec.json.Decoder(_IdExport)
_HEX = frozenset("0123456789abcdefABCDEF")


def trace_ids(raw: bytes | memoryview) -> list[str] | None:
    """The trace id of every span of an export of the usual shape (lowercase hex, as the spans'),
    decoded past everything else; None when the export is of any other shape or an id is not
    32 hex digits (the caller then reads the export's spans to learn them).  Never fewer ids than
    the export's spans have: the containers refuse fields they do not name, as :class:`Export`'s do."""
    try:
        export = _ID_DECODER.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    out: list[str] = []
    for _, spans in scope_spans(export):
        for span in spans:
            trace = span.traceId
            if type(trace) is not str or len(trace) != 32 or not _HEX.issuperset(trace):
                return None
            out.append(trace.lower())
    return out
