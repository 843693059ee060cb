"""Where labels and verdicts live: a JSON-lines file (a path) or a PostgreSQL database (a URL).

Both hold the same records in the same order and are read with the same parser, so every rule
built on top (latest wins, stale fingerprints, calibration) is one code path.  ``target`` is a
path or a ``postgresql://`` URL; :func:`describe` is the only way a target is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import jsonl, postgres

Target = str | Path


def is_database(target: Target) -> bool:
    return postgres.is_url(target)


def describe(target: Target) -> str:
    """The target as it may be printed, logged or shown: a URL without its password."""
    return postgres.redact(target) if is_database(target) else str(target)


def append(target: Target, stream: str, records: list[dict]) -> int:
    """Append durably (a file: one locked, fsynced write; a database: one transaction).
    Returns how many records were stored (a database skips events it already holds)."""
    if is_database(target):
        return postgres.append(str(target), stream, records)
    jsonl.append_records(target, records)
    return len(records)


def raw(target: Target, stream: str) -> tuple[list[tuple[int, dict]], list[tuple[int, str]]]:
    """``(position, object)`` of every readable record, and ``(position, warning)`` for each skipped
    one; a position is a file's line number or a database row's ``seq``."""
    if is_database(target):
        where = f"{describe(target)} ({stream})"
        out: list[tuple[int, dict]] = []
        warnings: list[tuple[int, str]] = []
        for seq, obj in postgres.read(str(target), stream):
            if isinstance(obj, dict):
                out.append((seq, obj))
            else:
                warnings.append((seq, f"{where} seq {seq}: skipped: expected a JSON object"))
        return out, warnings
    return jsonl.read_records(target)


def read_parsed(target: Target, stream: str, parse: Callable[[dict], object]) -> tuple[list, list[str]]:
    """``parse(obj)`` of every readable record in order, and one warning per skipped record (not
    JSON, torn, or refused by ``parse`` with a ValueError), in order."""
    if not is_database(target):
        return jsonl.read_parsed(target, parse)
    records, warnings = raw(target, stream)
    out = []
    for n, obj in records:
        try:
            out.append(parse(obj))
        except ValueError as exc:
            warnings.append((n, f"{describe(target)} ({stream}) seq {n}: skipped: {exc}"))
    return out, [message for _, message in sorted(warnings)]


def ids(target: Target, stream: str) -> set[str]:
    """The event ids (see ``postgres.event_id``) of every readable record."""
    if is_database(target):
        return postgres.ids(str(target), stream)
    return {postgres.event_id(stream, obj) for _, obj in jsonl.read_records(target)[0]}


def copy(source: Target, destination: Target, stream: str, batch: int = 1000) -> tuple[int, int, list[str]]:
    """Append to ``destination`` every record of ``source`` it does not hold yet, in source order,
    unparsed (a record of a version this citecheck cannot read is copied too).  Copying again adds
    nothing.  Returns (records copied, records already there, warnings about unreadable records)."""
    records, warnings = raw(source, stream)
    have = ids(destination, stream)
    todo = []
    for _, obj in records:
        key = postgres.event_id(stream, obj)
        if key not in have:
            have.add(key)
            todo.append(obj)
    for start in range(0, len(todo), batch):
        append(destination, stream, todo[start:start + batch])
    return len(todo), len(records) - len(todo), [message for _, message in warnings]
