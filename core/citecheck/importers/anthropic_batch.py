"""Message Batches: the requests file (``{"custom_id", "params"}`` a line, as submitted) joined on
``custom_id`` with the results file (``{"custom_id", "result"}`` a line, as downloaded).

A ``succeeded`` result is converted with its request's params like any exchange, its answer id
the request's ``metadata.answer_id`` or else the ``custom_id``.  ``errored``, ``expired`` and
``canceled`` results, requests with no result and results with no request are each reported
with their file, line and ``custom_id``: none is dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from citecheck.contract.log import Answer
from citecheck.errors import FieldError, RecordError
from citecheck.importers import object_field, read_records, string_field

_NOT_RUN = {
    "expired": "expired: the batch ended (24 hours) before this request was processed; resubmit it",
    "canceled": "canceled: the batch was canceled before this request was processed; resubmit it",
}


def _custom_id(record: Any) -> str | None:
    value = record.get("custom_id") if isinstance(record, dict) else None
    return value if isinstance(value, str) and value else None


def _requests(path) -> tuple[dict[str, tuple[int, dict]], list[RecordError]]:
    name = str(path)
    by_id: dict[str, tuple[int, dict]] = {}
    errors: list[RecordError] = []
    for line, record in read_records(path):
        if isinstance(record, RecordError):
            errors.append(record)
            continue
        cid = _custom_id(record)
        if cid is None:
            errors.append(RecordError(name, line, "custom_id", "is required (a non-empty string)"))
        elif not isinstance(record.get("params"), dict):
            errors.append(RecordError(name, line, "params", "is required (the Messages API request body)"))
        elif cid in by_id:
            errors.append(RecordError(name, line, "custom_id",
                                      f"{cid!r} is used again (first on line {by_id[cid][0]}); ids must be unique"))
        else:
            by_id[cid] = (line, record["params"])
    return by_id, errors


def join(requests_path, results_path, convert: Callable[[Any, Any, int], Answer]) -> Iterator[Answer | RecordError]:
    requests, errors = _requests(requests_path)
    yield from errors
    name = str(results_path)
    seen: set[str] = set()
    for line, record in read_records(results_path):
        if isinstance(record, RecordError):
            yield record
            continue
        cid = _custom_id(record)
        if cid is None:
            yield RecordError(name, line, "custom_id", "is required (a non-empty string)")
            continue
        seen.add(cid)
        result = object_field(record, "result")
        kind = result.get("type")
        if kind == "errored":
            error = object_field(result, "error")
            nested = error.get("error")
            inner = nested if isinstance(nested, dict) else error
            yield RecordError(name, line, "result.error",
                              f"custom_id {cid!r} errored: {inner.get('type')}: {inner.get('message')}")
            continue
        if kind in _NOT_RUN:
            yield RecordError(name, line, "result.type", f"custom_id {cid!r} {_NOT_RUN[kind]}")
            continue
        if kind != "succeeded":
            yield RecordError(name, line, "result.type",
                              f"custom_id {cid!r}: expected succeeded, errored, expired or canceled, got {kind!r}")
            continue
        if cid not in requests:
            yield RecordError(name, line, "custom_id", f"{cid!r} is in no request of {requests_path}")
            continue
        req_line, params = requests[cid]
        try:
            answer = convert(params, result.get("message"), line)
        except FieldError as exc:
            if exc.field.startswith("request"):
                yield RecordError(str(requests_path), req_line, f"params.{exc.field.removeprefix('request.')}",
                                  exc.message)
            else:
                yield RecordError(name, line, f"result.message.{exc.field.removeprefix('response.')}", exc.message)
            continue
        answer_id = string_field(object_field(params, "metadata"), "answer_id", cid)
        yield replace(answer, answer_id=answer_id, extra=dict(answer.extra, custom_id=cid))
    for cid, (req_line, _) in requests.items():
        if cid not in seen:
            yield RecordError(str(requests_path), req_line, "custom_id", f"{cid!r} has no result in {results_path}")
