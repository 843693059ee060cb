"""``citecheck import langfuse``: Langfuse trace exports to answers.

A file holds Langfuse traces as the public API (``GET /api/public/traces/{id}``) and the UI's
"Download trace as JSON" give them: one trace per line, a JSON list of traces, one trace, the
API's ``{"data": [...]}`` page, or the download's ``{"trace": {...}, "observations": [...]}``.  A
trace has ``id``, ``name``, ``timestamp``, ``input``, ``output``, ``metadata``, ``tags`` and
``observations``, each with ``id``, ``type``, ``name``, ``startTime``/``endTime`` (ISO 8601),
``parentObservationId``, ``input``, ``output``, ``metadata``, ``model``, ``level``,
``statusMessage`` and ``promptName``/``promptVersion``.  Observations on their own
(``GET /api/public/observations``: each with its ``traceId``) are read too.

The mapping to spans (then :mod:`citecheck.importers.traces` makes one answer per trace):

- the trace is the root span, a CHAIN whose ``input.value``/``output.value`` are the trace's input
  and output (text as it is, anything else as JSON); the question and the final answer come from
  it first;
- each observation is a span under its ``parentObservationId``, or under the trace's root when it
  has none; its type gives the span kind: GENERATION is LLM (``model`` is ``llm.model_name``, its
  input messages ``llm.input_messages``, its output ``llm.output_messages``), SPAN is CHAIN, EVENT
  has none, and AGENT, TOOL, RETRIEVER, CHAIN, EMBEDDING, EVALUATOR, GUARDRAIL are themselves;
- a SPAN, RETRIEVER or TOOL observation whose output holds documents (a list of objects with text or
  a URL, as it is or under ``documents``/``results``..., LangChain's ``page_content``/``metadata``
  too) retrieved them: ``retrieval.documents`` (a SPAN becomes a RETRIEVER), or a TOOL's output;
- inputs and outputs may be JSON text holding JSON text again: parsed layer by layer
  (:func:`citecheck.importers.trace_exports.unwrap`);
- times become Unix nanoseconds; ``promptVersion`` is ``llm.prompt_template.version``; metadata
  (with a ``prompt_version`` in it) is kept as ``metadata``; a ``level`` of ERROR marks the span failed.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from citecheck.errors import FieldError, RecordError
from citecheck.importers.spans import Span, maybe_json, other_format
from citecheck.importers.trace_exports import (
    documents_in,
    epoch_nanos,
    json_text,
    messages,
    unwrap,
    with_scores,
)

# Langfuse observation types and the OpenInference span kinds they are.
KINDS = {"GENERATION": "LLM", "SPAN": "CHAIN", "EVENT": "", "AGENT": "AGENT", "TOOL": "TOOL",
         "RETRIEVER": "RETRIEVER", "CHAIN": "CHAIN", "EMBEDDING": "EMBEDDING", "EVALUATOR": "EVALUATOR",
         "GUARDRAIL": "GUARDRAIL"}
_RETRIEVING = ("SPAN", "RETRIEVER", "TOOL")


def _id(obj: dict, key: str, where: str) -> str:
    value = obj.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value:
        raise FieldError(f"{where}{key}", "is required (a string)")
    return value


def _metadata(value: Any) -> dict:
    value = unwrap(value)
    return value if isinstance(value, dict) else {}


def _common(obj: dict, kind: str) -> dict[str, Any]:
    """The attributes a trace and an observation share."""
    attributes: dict[str, Any] = {"openinference.span.kind": kind} if kind else {}
    for key, name in (("input", "input.value"), ("output", "output.value")):
        value = json_text(unwrap(obj.get(key)))
        if value is not None:
            attributes[name] = value
    meta = _metadata(obj.get("metadata"))
    if meta:
        attributes["metadata"] = json_text(meta)
    return attributes


def root_span(trace: dict, root_id: str, where: str, prefix: str, observations: list[Span]) -> Span:
    """The trace itself, as the root of its observations (``root_id``: its span id)."""
    trace_id = _id(trace, "id", prefix)
    times = [t for s in observations for t in (s.start, s.end) if t]
    start = epoch_nanos(trace.get("timestamp"), f"{prefix}timestamp") or min(times, default=0)
    attributes = _common(trace, "CHAIN")
    for key, attribute in (("sessionId", "session.id"), ("userId", "user.id")):
        if isinstance(trace.get(key), str):
            attributes[attribute] = trace[key]
    if isinstance(trace.get("tags"), list) and trace["tags"]:
        attributes["tag.tags"] = [str(t) for t in trace["tags"]]
    name = trace.get("name")
    return Span(trace_id, root_id, None, name if isinstance(name, str) else "", "CHAIN", start,
                max(times, default=start) or None, attributes, where)


def observation_span(obs: Any, trace_id: str | None, root_id: str | None, where: str, prefix: str) -> Span:
    """One observation; ``trace_id``/``root_id`` are its trace's (None: read from the observation)."""
    if not isinstance(obs, dict):
        raise FieldError(prefix.rstrip("."), "expected an observation object (id, type, startTime...)")
    span_id = _id(obs, "id", prefix)
    trace_id = trace_id or _id(obs, "traceId", prefix)
    kind_name = str(obs.get("type") or "SPAN").upper()
    kind = KINDS.get(kind_name, "")
    attributes = _common(obs, kind)
    output = unwrap(obs.get("output"))
    if kind == "LLM":
        inputs, outputs = messages(obs.get("input")), messages(output)
        if inputs:
            attributes["llm.input_messages"] = inputs
        if outputs:
            attributes["llm.output_messages"] = outputs
    elif kind_name in _RETRIEVING and (found := documents_in(output)):
        if kind == "TOOL":
            attributes["output.value"] = json_text(found)  # a search tool's results, read as such
        else:
            kind = attributes["openinference.span.kind"] = "RETRIEVER"
            attributes["retrieval.documents"] = with_scores(found)
    model = obs.get("model") or obs.get("providedModelName")
    if isinstance(model, str) and model:
        attributes["llm.model_name"] = model
    version = obs.get("promptVersion")
    if isinstance(version, int | str) and not isinstance(version, bool) and version != "":
        attributes["llm.prompt_template.version"] = str(version)
    start = epoch_nanos(obs.get("startTime"), f"{prefix}startTime") or 0
    end = epoch_nanos(obs.get("endTime"), f"{prefix}endTime")
    if end is None and kind_name == "EVENT":
        end = start  # an event is a point in time
    parent = obs.get("parentObservationId") or root_id
    status = obs.get("statusMessage")
    error = (status if isinstance(status, str) and status else "error") if obs.get("level") == "ERROR" else None
    name = obs.get("name")
    return Span(trace_id, span_id, str(parent) if parent else None, name if isinstance(name, str) else "", kind,
                start, end, attributes, where, {}, error)


def trace_spans(trace: Any, where: str, prefix: str = "") -> Iterator[Span | FieldError]:
    """The spans of one trace object (or of one observation on its own); a part that cannot be
    read comes as a :class:`FieldError` naming its field, and the others still come."""
    if not isinstance(trace, dict):
        yield FieldError(prefix.rstrip(".") or "(record)", "expected a Langfuse trace object (id, observations...)")
        return
    hint = other_format(trace, "langfuse")
    if hint and "observations" not in trace and not isinstance(trace.get("trace"), dict):
        yield FieldError(prefix.rstrip(".") or "(record)", "is not a Langfuse trace" + hint)
        return
    if "traceId" in trace and "type" in trace and "observations" not in trace:  # an observation on its own
        try:
            yield observation_span(trace, None, None, where, prefix)
        except FieldError as exc:
            yield exc
        return
    if isinstance(trace.get("trace"), dict):  # the UI's download: {"trace": {...}, "observations": [...]}
        trace = {**trace["trace"], "observations": trace.get("observations", trace["trace"].get("observations"))}
    try:
        trace_id = _id(trace, "id", prefix)
    except FieldError as exc:
        yield FieldError(exc.field, exc.message + other_format(trace, "langfuse"))
        return
    raw = maybe_json(trace.get("observations"))
    if raw is not None and not isinstance(raw, list):
        yield FieldError(f"{prefix}observations", "expected a list of observations")
        raw = []
    ids = {str(o.get("id")) for o in raw or [] if isinstance(o, dict)}
    root_id = trace_id if trace_id not in ids else f"{trace_id}:trace"  # (an observation named like its trace)
    spans: list[Span] = []
    bare = [i for i, obs in enumerate(raw or []) if isinstance(obs, str)]
    if bare:
        yield FieldError(f"{prefix}observations[{bare[0]}]",
                         f"{len(bare)} observation(s) given by id only, as the trace list endpoint gives them: "
                         "export each trace with GET /api/public/traces/{traceId}; the trace is read without them")
    for i, obs in enumerate(raw or []):
        here = f"{prefix}observations[{i}]"
        if isinstance(obs, str):
            continue
        try:
            spans.append(observation_span(obs, trace_id, root_id, where, f"{here}."))
        except FieldError as exc:
            yield exc
    try:
        yield root_span(trace, root_id, where, prefix, spans)
    except FieldError as exc:
        yield exc
        return
    yield from spans


def read_langfuse(path: str) -> Iterator[Span | RecordError]:
    """The spans of a Langfuse export file (see the module); every trace or observation that
    cannot be read is a :class:`RecordError` naming its file, record and field."""
    from citecheck.importers import read_records

    for position, record in read_records(path):
        if isinstance(record, RecordError):
            yield record
            continue
        data = record.get("data") if isinstance(record, dict) else None
        traces = [(t, f"data[{i}].") for i, t in enumerate(data)] if isinstance(data, list) else [(record, "")]
        for trace, prefix in traces:
            for item in trace_spans(trace, f"{path}:{position}", prefix):
                if isinstance(item, FieldError):
                    yield RecordError(path, position, item.field, item.message)
                else:
                    yield item


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    from citecheck.importers import otel

    otel.add_trace_parser(sub, common, "langfuse", "Langfuse traces (API or UI JSON export) with their observations",
                          "Langfuse trace JSON: one trace per line, a JSON list, one trace, or the API's "
                          "{\"data\": [...]} page", read_langfuse)
