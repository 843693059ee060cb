"""Where labels and verdicts live: a JSON-lines file (a path) or a PostgreSQL database (a URL).

Both hold the same records in the same order and are read with the same parser, so every rule
built on top (latest wins, stale fingerprints, calibration) is one code path.  ``target`` is a
path or a ``postgresql://`` URL; :func:`describe` is the only way a target is shown.  A bad
record in a database is reported like a bad line, with the row's ``seq`` as its line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeGuard

from citecheck.errors import FieldError, RecordError, StoreError
from citecheck.storage import lines, postgres

Target = str | Path


def is_database(target: Target) -> TypeGuard[str]:
    return postgres.is_url(target)


def describe(target: Target) -> str:
    """The target as it may be printed, logged or shown: a URL without its password."""
    return postgres.redact(target) if is_database(target) else str(target)


def where(target: Target, stream: str) -> str:
    """How a record's errors name the store: the file, or the database (without its password) and the stream."""
    return f"{describe(target)} ({stream})" if is_database(target) else str(target)


def append(target: Target, stream: str, records: list[dict], what: str | None = None) -> int:
    """Append durably, all or nothing (a file: one locked, fsynced write, undone if it cannot
    complete; a database: one transaction).  Returns how many records were stored; ``what`` names
    them in the error a failed file write raises."""
    if is_database(target):
        return postgres.append(str(target), stream, records)
    lines.append_records(target, records, what)
    return len(records)


def parsed(name: str, seq: int, value: Any, parse: Callable[[Any], Any]) -> Any:
    """``parse(value)``, or the :class:`RecordError` naming row ``seq`` of the database ``name``."""
    try:
        return parse(value)
    except FieldError as exc:
        return RecordError(name, seq, exc.field, exc.message)
    except ValueError as exc:
        return RecordError(name, seq, "(record)", str(exc))


def scan(target: Target, stream: str, parse: Callable[[Any], Any] = lines.expect_object) -> list[tuple[int, Any]]:
    """``(line or seq, parse(record) or RecordError)`` for every stored record, in the order written
    (none for a file not written yet; a folder is refused with a sentence saying what to give)."""
    if not is_database(target):
        refuse_folder(target, stream)
        if not Path(target).exists():
            return []
        return list(lines.read_jsonl(target, parse))
    name = where(target, stream)
    return [(seq, parsed(name, seq, value, parse)) for seq, value in postgres.read(str(target), stream)]


def refuse_folder(target: Target, stream: str) -> None:
    """A folder given as the ``stream`` file is refused with a sentence saying what to give."""
    if Path(target).is_dir():
        raise StoreError(f"the {stream} file {target} is a folder: give the {stream} file itself "
                         f"(JSON lines), for example {Path(target) / (stream + '.jsonl')}")


def require(target: Target, stream: str) -> None:
    """Refuse a ``stream`` file that does not exist, for the commands that read one as their main
    input (``labels export``, ``calibrate``, ``estimate``): a mistyped path would read as no records."""
    if not is_database(target) and not Path(target).exists():
        raise StoreError(f"the {stream} file {target} does not exist: give the {stream} file (JSON lines) the review "
                         f"page or citecheck wrote, or a postgresql:// URL")


def read_all(target: Target, stream: str, parse: Callable[[Any], Any]) -> tuple[list, list[RecordError]]:
    """Every record ``parse`` accepts, in the order written, and one error per record it refused."""
    records: list = []
    errors: list[RecordError] = []
    for _, value in scan(target, stream, parse):
        (errors if isinstance(value, RecordError) else records).append(value)
    return records, errors


def ids(target: Target, stream: str) -> Counter[str]:
    """How many times each record (by ``postgres.event_id``) is stored."""
    if is_database(target):
        return Counter(postgres.ids(str(target), stream))
    return Counter(postgres.event_id(stream, obj) for obj in read_all(target, stream, lines.expect_object)[0])


def copy(source: Target, destination: Target, stream: str, batch: int = 1000) -> tuple[int, int, list[RecordError]]:
    """Append to ``destination`` every record of ``source`` it does not hold yet, in source order,
    unparsed (a record of a version this citecheck cannot read is copied too).  A record stored
    twice in the source (the same label saved twice) is held twice.  Copying again adds nothing.
    Returns (records copied, records already there, errors for unreadable records)."""
    records, errors = read_all(source, stream, lines.expect_object)
    if is_database(destination):  # one transaction under the stream's copy lock: concurrent copies take turns
        copied = postgres.append_missing(destination, stream, records)
        return copied, len(records) - copied, errors
    have = ids(destination, stream)
    todo = []
    for obj in records:
        key = postgres.event_id(stream, obj)
        if have[key]:
            have[key] -= 1  # this occurrence is already there
        else:
            todo.append(obj)
    for start in range(0, len(todo), batch):
        append(destination, stream, todo[start:start + batch])
    return len(todo), len(records) - len(todo), errors
