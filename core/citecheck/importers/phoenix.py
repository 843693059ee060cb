"""``citecheck import phoenix``: Phoenix span exports to answers.

A file holds the rows of Phoenix's spans dataframe (``px.Client().get_spans_dataframe()``, or
``phoenix.client.Client().spans.get_spans_dataframe()``) saved with ``df.to_parquet(...)`` (read
record batch by record batch) or ``df.to_json(..., orient="records", lines=True)`` (JSON lines; a
JSON list of rows is read too).  A row has ``name``, ``span_kind``, ``parent_id``, ``start_time``,
``end_time``, ``status_code``, ``status_message``, ``context.span_id``, ``context.trace_id`` and one
``attributes.*`` column per OpenInference attribute, flattened as Phoenix flattens them:
``attributes.input.value``, ``attributes.llm.model_name``, ``attributes.metadata`` (an object),
``attributes.retrieval.documents`` and ``attributes.llm.input_messages`` (lists of objects with
dotted keys: ``{"document.id", "document.content", "document.score", "document.metadata"}``,
``{"message.role", "message.content"}``).  Span objects with a ``context`` object and an
``attributes`` object (Phoenix's span JSON) are read too.

The mapping: a row is a span with its ids as written (hex), ``parent_id`` as its parent; its kind
is ``span_kind`` (else ``attributes.openinference.span.kind``); every ``attributes.*`` cell is the
attribute of that name, dotted keys inside list items made nested, and an empty cell (null, NaN) is
no attribute; times (ISO text, datetimes, or epoch milliseconds as ``to_json`` writes them) become
Unix nanoseconds; a ``status_code`` of ERROR marks the span failed with its ``status_message``.
:mod:`citecheck.importers.traces` then reads the spans as it reads OTLP spans.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from citecheck.errors import FieldError, RecordError
from citecheck.importers.spans import Span, other_format, semantic_kind
from citecheck.importers.trace_exports import as_object, epoch_nanos

_PREFIX = "attributes."
_BATCH_ROWS = 1024
_MAX_DEPTH = 12


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def nested(value: Any, in_list: bool = False, depth: int = 0) -> Any:
    """A cell's value with the dotted keys of objects inside lists made nested
    (``[{"document.id": "a"}]`` -> ``[{"document": {"id": "a"}}]``) and empty values left out; an
    object that is not a list item (``metadata``) keeps its keys as written."""
    if depth > _MAX_DEPTH:
        return value
    if isinstance(value, list | tuple):
        return [nested(v, True, depth + 1) for v in value if not _empty(v)]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if _empty(item):
                continue
            parts = str(key).split(".") if in_list else [str(key)]
            node = out
            for part in parts[:-1]:
                child = node.get(part)
                if not isinstance(child, dict):
                    child = node[part] = {}
                node = child
            node[parts[-1]] = nested(item, False, depth + 1)
        return out
    return value


def _text(row: dict, *keys: str) -> str | None:
    for key in keys:
        value = row.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def _id(row: dict, *keys: str) -> str | None:
    """An id cell: Phoenix writes ids as hex text; a number there is not an id (it would make a trace of its own)."""
    for key in keys:
        value = row.get(key)
        if isinstance(value, str) and value:
            return value
        if value is not None and not _empty(value):
            raise FieldError(key, f"expected the id as text (Phoenix writes hex ids), got {str(value)[:40]!r}")
    return None


def row_span(row: Any, where: str) -> Span:
    """One dataframe row (or span object) as a span; :class:`FieldError` naming the column."""
    if not isinstance(row, dict):
        raise FieldError("(row)", "expected a span row (context.span_id, context.trace_id, attributes.*...)")
    context = as_object(row.get("context"))
    span_id = _id(row, "context.span_id", "span_id") or _id(context, "span_id")
    trace_id = _id(row, "context.trace_id", "trace_id") or _id(context, "trace_id")
    if span_id is None:
        raise FieldError("context.span_id", "is required (the span's id)" + other_format(row, "phoenix"))
    if trace_id is None:
        raise FieldError("context.trace_id", "is required (the span's trace)")
    attributes: dict[str, Any] = {}
    whole = row.get("attributes")
    if isinstance(whole, dict):  # a span object's attributes, nested or dotted
        attributes.update({k: nested(v) for k, v in whole.items() if not _empty(v)})
    for column, value in row.items():
        if column.startswith(_PREFIX) and not _empty(value):
            attributes[column[len(_PREFIX):]] = nested(value)
    kind = row.get("span_kind")
    kind = kind.upper() if isinstance(kind, str) and kind.upper() not in ("", "UNKNOWN") else ""
    parent = _text(row, "parent_id", "parent_span_id")
    start = epoch_nanos(row.get("start_time"), "start_time") or 0
    end = epoch_nanos(row.get("end_time"), "end_time")
    status = row.get("status_code")
    error = None
    if isinstance(status, str) and status.upper() in ("ERROR", "STATUS_CODE_ERROR"):
        message = row.get("status_message")
        error = message if isinstance(message, str) and message else "error"
    name = row.get("name")
    return Span(trace_id, span_id, parent, name if isinstance(name, str) else "", kind or semantic_kind(attributes),
                start, end, attributes, where, {}, error)


def _parquet_rows(path: str) -> Iterator[tuple[int, Any | RecordError]]:
    """The rows of a Parquet file, one record batch at a time (position: the 1-based row)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    position = 0
    try:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=_BATCH_ROWS):
            for row in batch.to_pylist():
                position += 1
                yield position, row
    except (pa.ArrowException, OSError, ValueError) as exc:
        yield position + 1, RecordError(path, position + 1, "", f"cannot read this Parquet file from here on ({exc}); "
                                        "write it with df.to_parquet(path), or as JSON lines with "
                                        "df.to_json(path, orient='records', lines=True)")


def _is_parquet(path: str) -> bool:
    with open(path, "rb") as handle:
        return handle.read(4) == b"PAR1"


def read_phoenix(path: str) -> Iterator[Span | RecordError]:
    """The spans of a Phoenix export (see the module); a row that cannot be read is a
    :class:`RecordError` naming its file, row (line) and column, and the others are still read."""
    from citecheck.importers import read_records

    rows = _parquet_rows(path) if Path(path).suffix.lower() == ".parquet" or _is_parquet(path) else read_records(path)
    for position, row in rows:
        if isinstance(row, RecordError):
            yield row
            continue
        try:
            yield row_span(row, f"{path}:{position}")
        except FieldError as exc:
            yield RecordError(path, position, exc.field, exc.message)


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    from citecheck.importers import otel

    otel.add_trace_parser(sub, common, "phoenix", "Arize Phoenix spans dataframes (Parquet or JSON lines)",
                          "Phoenix spans: df.to_parquet(...) files, or df.to_json(..., orient='records', "
                          "lines=True)", read_phoenix)
