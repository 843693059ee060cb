"""JSON lines, read and written one way for every file citecheck reads: answer logs, labels,
verdicts, golden sets, question files and importer inputs.

Reading never stops at a bad line.  Every line that cannot be used becomes a
:class:`~citecheck.errors.RecordError` naming the file, the line, the field and what
is wrong, and the lines after it are still read.  A record type declares its version field
(``labels_version``, ``verdicts_version``...); a record of a version this citecheck does not
read is reported on that field, never guessed at.

Writing is append-only and crash-safe (:func:`append_records`): labels and verdicts files are
shared by several reviewers and judge runs at once.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, cast, final, overload

import orjson

from citecheck.errors import FieldError, RecordError
from citecheck.storage.durable import WriteFailed, sync_folder, write_all


def now() -> str:
    """The timestamp every record citecheck writes carries: UTC, milliseconds, ``Z``."""
    return _stamp(datetime.now(timezone.utc))


def _stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def after(previous: str) -> str:
    """:func:`now`, or a millisecond after ``previous`` when now is not later: the time of a record
    that must be told apart from ``previous`` by its time (a retraction names the label it withdraws
    by item, reviewer, label and time, so two records of one label in the same millisecond were
    withdrawn together).  ``previous`` not of :func:`now`'s shape: now."""
    current = now()
    if current > previous:
        return current
    try:
        moment = datetime.fromisoformat(previous.replace("Z", "+00:00"))
    except ValueError:
        return current
    return _stamp(moment + timedelta(milliseconds=1))


def append_records(path: str | Path, records: list[dict], what: str | None = None) -> None:
    """Append records (dicts) all or nothing: see :func:`append_lines`.  Two or more records are
    marked as one group (:data:`GROUP_FIELD`), so that a reader can tell a group a crash cut short
    and use none of it (:func:`read_jsonl`)."""
    if len(records) > 1:
        group = secrets.token_hex(8)
        records = [{**r, GROUP_FIELD: f"{group} {k}/{len(records)}"} for k, r in enumerate(records, start=1)]
    append_lines(path, [json.dumps(r, ensure_ascii=False) for r in records], what)


def append_lines(path: str | Path, lines: list[str], what: str | None = None) -> None:
    """Append JSON lines (one record each, without newlines) all or nothing: lock, one write of every record (starting on a fresh line),
    fsync, unlock.  Returns only when every byte is on disk.

    A short write is completed; a write that cannot complete (the disk is full) is undone by
    truncating the file back to its size before the append, and :class:`~.durable.WriteFailed`
    says so: no record of the group is left half-written or acknowledged.  A crash mid-write can
    leave at most a torn last line, which readers skip with a warning; every earlier record is
    untouched, and the next append starts a new line after it.  The folder is fsynced when the
    file is created, so a new file survives a power cut too.
    """
    if not lines:
        return
    path = Path(path)
    what = what or (f"{len(lines)} record(s)" if len(lines) > 1 else "the record")
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_EXCL, 0o644)
        created = True
    except FileExistsError:
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
        created = False
    except OSError as exc:
        raise WriteFailed(path, what, exc) from exc
    try:
        if created:
            sync_folder(path.parent)
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        try:
            write_all(fd, data)
        except OSError as exc:
            undone = True
            try:  # under the lock nobody else has appended since: cut back to where we started
                os.ftruncate(fd, size)
                os.fsync(fd)
            except OSError:
                undone = False
            raise WriteFailed(path, what, exc, undone) from exc
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


# Limits on one line (docs/log-format.md, "Limits and unreadable lines"): a longer or deeper line
# is one unreadable line, reported with its number, and the lines after it are read.  They bound
# the time and memory one line can take and keep every value writable by the JSON writers.
MAX_LINE_BYTES = 16_000_000
MAX_DEPTH = 100  # levels of nested lists and objects, the line's own object being level 1
MAX_INT_DIGITS = 4300  # Python's limit on converting digits to an integer
_SURROGATE = re.compile("[\ud800-\udfff]")
_DEEP = (f"nested more than {MAX_DEPTH} levels deep; citecheck reads at most {MAX_DEPTH} levels of lists "
         "and objects in a line")


def decode(raw: str | bytes) -> Any:
    """One JSON value from one line; :class:`FieldError` on field ``(json)`` or ``(encoding)``, or
    on the field holding a lone surrogate.

    orjson decodes (several times faster); a line it refuses is decoded again by the standard
    library, so what is accepted and the error message are the standard library's, except for what
    no writer or page could handle: nesting past :data:`MAX_DEPTH`, integers of more than
    :data:`MAX_INT_DIGITS` digits and lone surrogate escapes (``"\\ud800"``: not Unicode text).
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):
            raise FieldError("(json)", _DEEP.replace("deep;", f"deep (at column {exc.colno});")) from None
    raw = raw.rstrip(b"\r\n") if isinstance(raw, bytes) else raw.rstrip("\r\n")
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FieldError("(encoding)", f"not UTF-8 text ({exc.reason})") from None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise FieldError("(json)", f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise FieldError("(json)", f"a number has more than {MAX_INT_DIGITS:,} digits; citecheck reads integers "
                         f"of at most {MAX_INT_DIGITS:,} digits ({str(exc).split(':')[-1].strip()})") from None
    except RecursionError:
        raise FieldError("(json)", _DEEP) from None
    found = surrogate_path(value)
    if found is not None:
        path, text = found
        at = cast(re.Match[str], _SURROGATE.search(text)).start()  # (found by surrogate_path)
        raise FieldError(path, f"holds a lone surrogate (\\u{ord(text[at]):04x} at character {at}), which is "
                         "not Unicode text: fix the writer that escaped half of a character pair")
    return value


def surrogate_path(obj: Any, where: str = "") -> tuple[str, str] | None:
    """(field, the string) of the first string or key in ``obj`` holding a lone surrogate."""
    stack = [(obj, where)]
    while stack:
        item, path = stack.pop()
        if type(item) is str:
            if _SURROGATE.search(item):
                return path or "(line)", item
        elif type(item) is dict:
            for k, v in reversed(item.items()):
                if _SURROGATE.search(k):
                    return (f"{path}.{k}" if path else k), k
                stack.append((v, f"{path}.{k}" if path else k))
        elif type(item) is list:
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(item))))
    return None


def parse_lines(name: str, lines: Iterable[bytes | str | LongLine], parse: Callable[[Any], Any],
                first_line: int = 1) -> Iterator[tuple[int, Any]]:
    """``(line, parse(value))`` or ``(line, RecordError)`` for every non-blank line, in order.

    ``parse`` raises :class:`FieldError` (or ``ValueError``, reported on field ``(record)``) for a
    value it refuses.  A bad last line without its newline is marked as torn: most often a crash
    while the file was being written.  A UTF-8 byte-order mark before the first line is skipped.
    """
    previous: tuple[int, bytes | str] | None = None
    for n, raw in enumerate(lines, start=first_line):
        if n == 1 and type(raw) is not LongLine:
            raw = _without_bom(raw)
        if previous is not None:
            yield previous[0], parse_record(name, *previous, parse)
            previous = None
        if type(raw) is LongLine or len(raw) > MAX_LINE_BYTES + 1:  # (+1: the newline)
            yield n, RecordError(name, n, "(line)", _too_long(int(raw) if type(raw) is LongLine else len(raw)))
            continue
        previous = None if (not raw or raw.isspace()) else (n, raw)
    if previous is not None:
        yield previous[0], parse_record(name, *previous, parse, torn=not _ends_line(previous[1]))


_BOM = b"\xef\xbb\xbf"
# A reader's quicker way to a record from a line's bytes, or None to leave the line to the usual one.
Fast = Callable[[bytes], Any]


@overload
def _without_bom(raw: bytes) -> bytes: ...
@overload
def _without_bom(raw: str) -> str: ...
def _without_bom(raw: str | bytes) -> str | bytes:
    if isinstance(raw, bytes):
        return raw[3:] if raw.startswith(_BOM) else raw
    return raw[1:] if raw.startswith("\ufeff") else raw


def _ends_line(raw: str | bytes) -> bool:
    return raw.endswith((b"\n", b"\r")) if isinstance(raw, bytes) else raw.endswith(("\n", "\r"))


def physical_lines(handle: BinaryIO, chunk_size: int = 1 << 20,
                   limit: int = MAX_LINE_BYTES) -> Iterator[bytes | LongLine]:
    """The lines of a binary stream with their ends: ``\\n``, ``\\r\\n`` or a lone ``\\r`` (files
    from old Mac tools), as Python's universal newlines.  Linear however long a line is, and a line
    of more than ``limit`` bytes (its end not counted) is never held: it is given as its length, a
    :class:`LongLine`."""
    pending: list[bytes] = []  # pieces of a line not ended yet
    state = {"size": 0, "held": True, "cr": False}

    def add(piece: bytes) -> None:
        state["size"] += len(piece)
        state["cr"] = piece.endswith(b"\r")
        if state["held"]:
            if state["size"] > limit + 2:  # (+2: a \r\n end)
                state["held"] = False
                pending.clear()
            else:
                pending.append(piece)

    def done() -> bytes | LongLine:
        if state["held"]:
            line = b"".join(pending)
            out = LongLine(len(line)) if len(line) > limit and len(line.rstrip(b"\r\n")) > limit else line
        else:
            out = LongLine(state["size"])
        pending.clear()
        state.update(size=0, held=True, cr=False)
        return out

    for chunk in iter(lambda: handle.read(chunk_size), b""):
        if state["size"] and state["cr"]:  # a line ended by \r, or by \r\n split between chunks
            if chunk.startswith(b"\n"):
                add(b"\n")
                chunk = chunk[1:]
            yield done()
            if not chunk:
                continue
        if b"\n" not in chunk and b"\r" not in chunk:
            add(chunk)
            continue
        lines = _split_lines(chunk)
        last = lines.pop() if lines[-1].endswith(b"\r") or not _ends_line(lines[-1]) else None
        for piece in lines:  # (the first continues the pending line)
            if state["size"] or len(piece) > limit:
                add(piece)
                yield done()
            else:  # a whole line of the chunk, as done() would give it
                yield piece
        if last is not None:  # may go on (or be \r\n) in the next chunk
            add(last)
    if state["size"]:
        yield done()


def _split_lines(chunk: bytes) -> list[bytes]:
    """``chunk.splitlines(keepends=True)``; for a chunk without ``\r`` (nearly all) found line by
    line with ``find``, which skips to each newline at memchr speed (splitlines tests every byte
    for both ends, several times slower on long lines)."""
    if b"\r" in chunk:
        return chunk.splitlines(keepends=True)
    out: list[bytes] = []
    pos = 0
    while True:
        nl = chunk.find(b"\n", pos)
        if nl < 0:
            break
        out.append(chunk[pos:nl + 1])
        pos = nl + 1
    if pos < len(chunk):
        out.append(chunk[pos:])
    return out


def parse_record(name: str, line: int, raw: str | bytes, parse: Callable[[Any], Any] = lambda v: v,
                 torn: bool = False, fast: Fast | None = None) -> Any:
    """``parse(decode(raw))``, or the :class:`RecordError` saying why line ``line`` of ``name`` is unusable.

    ``fast``: a quicker way to the same record for bytes of the common shape, tried first; it
    gives what ``parse(decode(raw))`` gives, or None to leave the line to them (errors included)."""
    if fast is not None and type(raw) is bytes:
        value = fast(raw)
        if value is not None:
            return value
    try:
        return parse(decode(raw))
    except FieldError as exc:
        field, message = exc.field, exc.message
    except ValueError as exc:
        field, message = "(record)", str(exc)
    if torn and field in ("(json)", "(encoding)"):
        message += "; the last line has no newline: probably a crash while writing, the lines before it are intact"
    return RecordError(name, line, field, message)


def read_records(path: str | Path, parse: Callable[[Any], Any], fast: Fast | None = None) -> Iterator[tuple[int, Any]]:
    """Stream the records of a JSON-lines file written a line at a time (an answer log): every line
    for itself, no append groups (:func:`read_jsonl` is for the labels and verdicts files).
    ``fast``: as for :func:`parse_record`."""
    return _read_lines(path, parse, fast=fast)


class Position(NamedTuple):
    """A place in a JSON-lines file where a line starts: its byte offset and its line number.  A
    reader started there (:func:`read_jsonl`) gives what a read from the start gives for the lines
    from there on, when no group is open across it (see ``reached`` there)."""

    offset: int = 0
    line: int = 1


START = Position()


def _read_lines(path: str | Path, parse: Callable[[Any], Any], start: Position = START,
                fast: Fast | None = None) -> Iterator[tuple[int, Any]]:
    """Stream :func:`parse_lines` over a file from ``start``; memory stays flat however long it is.

    A torn last line gets a second look before it is reported: the reader waits for the writers'
    lock (a writer holds it for the whole of an append, see :func:`append_lines`) and reads the
    end of the file again, so a record another process was still writing is read whole instead of
    being reported as torn."""
    return ((n, value) for n, value, _, _ in _scan_lines(path, parse, start, fast))


def _scan_lines(path: str | Path, parse: Callable[[Any], Any], start: Position = START,
                fast: Fast | None = None) -> Iterator[tuple[int, Any, int, Position | None]]:
    """:func:`_read_lines` with, for each line, the byte offset where it starts and the position
    just after it once its end is settled (it ends with ``\\n``, or a later line started), else
    None: a last line ended by a lone ``\\r``, torn, or over the limit may still go on."""
    name = str(path)
    with open(path, "rb") as handle:
        handle.seek(start.offset)
        previous: tuple[Line, bytes] | None = None  # the last non-blank line, and its bytes without a BOM
        for line in numbered_lines(handle, start.offset, start.line):
            if previous is not None:
                n, raw = previous[0].number, previous[1]
                yield n, parse_record(name, n, raw, parse, False, fast), previous[0].offset, Position(line.offset, line.number)
                previous = None
            if type(line.raw) is LongLine:
                yield (line.number, RecordError(name, line.number, "(line)", _too_long(int(line.raw))), line.offset,
                       None)
                continue
            raw = _without_bom(line.raw) if line.number == 1 else line.raw
            previous = None if (not raw or raw.isspace()) else (line, raw)
        if previous is None:
            return
        last, raw = previous
        ended = _ends_line(raw)
        value = parse_record(name, last.number, raw, parse, torn=not ended, fast=fast)
        if ended or not isinstance(value, RecordError):
            after = Position(last.offset + len(cast(bytes, last.raw)), last.number + 1) if raw.endswith(b"\n") else None
            yield last.number, value, last.offset, after
            return
        at = last.offset  # a torn line is the end of the file as it was read
        fcntl.flock(handle.fileno(), fcntl.LOCK_SH)  # second look, once any append in progress is done
        try:
            handle.seek(at)
            rest = handle.read()
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    pieces = rest.splitlines(keepends=True)
    starts = [at]
    for piece in pieces:
        starts.append(starts[-1] + len(piece))
    for n, value in parse_lines(name, pieces, parse, first_line=last.number):
        k = n - last.number
        settled = pieces[k].endswith(b"\n") or k + 1 < len(pieces)
        yield n, value, starts[k], Position(starts[k + 1], n + 1) if settled else None


# --- groups: the records of one append, used whole or not at all ----------------------------------

GROUP_FIELD = "append_group"  # "<group id> <k>/<n>" on each record of an append of n >= 2 records
_GROUP = re.compile(r"([0-9a-f]{1,64}) ([1-9][0-9]{0,8})/([1-9][0-9]{0,8})")


class _Member(NamedTuple):
    """A record of a group, parsed (``value``) or refused (``error``), and its place in the group."""

    group: str
    k: int
    n: int
    value: Any = None
    error: FieldError | ValueError | None = None


def _grouped(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``parse``, for a record carrying :data:`GROUP_FIELD`: the field is taken off (no record type
    knows it) and the result comes back as a :class:`_Member`."""
    def inner(value: Any) -> Any:
        if type(value) is not dict or GROUP_FIELD not in value:
            return parse(value)
        tag = value.pop(GROUP_FIELD)
        found = _GROUP.fullmatch(tag) if type(tag) is str else None
        if found is None or int(found[2]) > int(found[3]):
            raise FieldError(GROUP_FIELD, f"expected \"<id> <k>/<n>\" (record k of a group of n written "
                                          f"together), got {json.dumps(tag)[:60]}")
        try:
            return _Member(found[1], int(found[2]), int(found[3]), parse(value))
        except (FieldError, ValueError) as exc:
            return _Member(found[1], int(found[2]), int(found[3]), error=exc)
    return inner


def _unwrap(name: str, line: int, member: _Member) -> Any:
    if member.error is None:
        return member.value
    exc = member.error
    if isinstance(exc, FieldError):
        return RecordError(name, line, exc.field, exc.message)
    return RecordError(name, line, "(record)", str(exc))


def _incomplete(name: str, pending: list[tuple[int, _Member]]) -> Iterator[tuple[int, RecordError]]:
    n = pending[0][1].n
    for line, member in pending:
        yield line, RecordError(name, line, GROUP_FIELD, (
            f"record {member.k} of a group of {n} written together, of which only {len(pending)} are in the "
            "file (probably a crash while writing): none of the group is used; append them again"))


def _whole_groups(name: str, results: Iterable[tuple[int, Any]],
                  pending: list[tuple[int, _Member]]) -> Iterator[tuple[int, Any]]:
    """``results`` with each group's records held until the whole group is read; the records of a
    group cut short (another record, or the end, before its last one) become RecordErrors.  A group
    still open at the end is left in ``pending``."""
    for line, value in results:
        if type(value) is _Member:
            first = pending[0][1] if pending else None
            follows = first is not None and (value.group, value.n, value.k) == (first.group, first.n, len(pending) + 1)
            if pending and not follows:
                yield from _incomplete(name, pending)
                pending.clear()
            if follows or value.k == 1:
                pending.append((line, value))
            else:
                yield from _incomplete(name, [(line, value)])
            if pending and len(pending) == pending[0][1].n:
                yield from ((n, _unwrap(name, n, m)) for n, m in pending)
                pending.clear()
            continue
        if pending:
            yield from _incomplete(name, pending)
            pending.clear()
        yield line, value


def read_jsonl(path: str | Path, parse: Callable[[Any], Any] = lambda value: value, start: Position = START,
               reached: list[Position] | None = None) -> Iterator[tuple[int, Any]]:
    """Stream the records of a JSON-lines file: ``(line, parse(value))`` or ``(line, RecordError)``.

    The records of one append (a group, :data:`GROUP_FIELD`) are given only once the whole group is
    read: a group a crash cut short is reported line by line and none of it is used.  A group still
    open at the end of the file gets a second look, as a torn line does: once any append in
    progress is done (the writers' lock), the file is read again from the group's first line.

    ``start``: read from there (a :class:`Position` a previous read reached), giving what a read
    from the start gives for the lines from there on.  ``reached``: when given, the position after
    the last record whose report is final (its line ended, no group open) is appended to it as the
    read goes: a later read of the same file, grown by appends, may start there.  What follows it
    (a torn last line, a group still open) is read again by that later read."""
    name = str(path)
    pending: list[tuple[int, _Member]] = []
    starts: dict[int, int] = {}  # line -> offset, of the lines read since the last final position

    def tracked(rows: Iterable[tuple[int, Any, int, Position | None]]) -> Iterator[tuple[int, Any]]:
        for n, value, offset, after in rows:
            starts[n] = offset
            yield n, value
            # (resumed once _whole_groups has dealt with this line whole: its reports are out)
            if after is not None and not pending:
                starts.clear()
                if reached is not None:
                    reached.append(after)

    yield from _whole_groups(name, tracked(_scan_lines(path, _grouped(parse), start)), pending)
    if not pending:
        return
    first = pending[0][0]
    again_from = Position(starts[first], first)
    with open(path, "rb") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
        try:
            again = list(_scan_lines(path, _grouped(parse), again_from))
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    pending.clear()
    yield from _whole_groups(name, tracked(again), pending)
    if pending:
        yield from _incomplete(name, pending)


@final
class LongLine(int):
    """Stands for a line longer than MAX_LINE_BYTES (its length), which is never held in memory."""


def _too_long(size: int) -> str:
    return (f"line is {size:,} bytes long, over the limit of {MAX_LINE_BYTES:,} bytes a line may have; "
            "the line was skipped (split the answer's chunks, or drop the fields citecheck does not read)")


def read_all(path: str | Path, parse: Callable[[Any], Any]) -> tuple[list, list[RecordError]]:
    """Every record ``parse`` accepts, in file order, and one error per line it could not use.
    A file that does not exist yet has no records (labels and verdicts files start empty)."""
    if not Path(path).exists():
        return [], []
    records: list = []
    errors: list[RecordError] = []
    for _, value in read_jsonl(path, parse):
        (errors if isinstance(value, RecordError) else records).append(value)
    return records, errors


# --- typed records -----------------------------------------------------------------------------


def expect_object(value: Any) -> dict:
    if not isinstance(value, dict):
        raise FieldError("(record)", f"expected a JSON object, got {type(value).__name__}")
    return value


def expect_version(obj: dict, field: str, reads: int) -> None:
    """Refuse a record without the version field or of a version this citecheck does not read."""
    version = obj.get(field)
    if version is None:
        raise FieldError(field, f"is required: add \"{field}\": {reads}")
    if type(version) is not int or version != reads:
        raise FieldError(field, f"{version!r} is not a version this citecheck reads ({reads}); "
                                "upgrade citecheck to read newer files")


_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def expect(obj: dict, field: str, kind: type | tuple[type, ...], *, optional: bool = False,
           default: Any = None) -> Any:
    """``obj[field]`` if it has type ``kind`` (bool is never an int, an int is a float); else FieldError."""
    if field not in obj or obj[field] is None:
        if optional:
            return default
        raise FieldError(field, "is required")
    value = obj[field]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = any((type(value) is k) or (k is float and type(value) is int) for k in kinds)
    if not ok:
        wanted = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        raise FieldError(field, f"must be {wanted}, got {type(value).__name__}")
    return value


# --- one line source for every reader of a log: whole files, byte ranges, one line by offset -------


class Line(NamedTuple):
    """A physical line of a log: its number (from 1), the byte offset where it starts, and its bytes
    with their end (a line over the limit as a :class:`LongLine`, its length)."""

    number: int
    offset: int
    raw: bytes | LongLine


def numbered_lines(handle: BinaryIO, offset: int = 0, first_line: int = 1, chunk_size: int = 1 << 20,
                   limit: int = MAX_LINE_BYTES) -> Iterator[Line]:
    """The lines of ``handle`` (positioned at byte ``offset`` of its file) by the rules of
    :func:`physical_lines`, numbered from ``first_line``, each with the offset where it starts."""
    at = offset
    for n, raw in enumerate(physical_lines(handle, chunk_size, limit), start=first_line):
        yield Line(n, at, raw)
        at += int(raw) if type(raw) is LongLine else len(raw)


def record_of(name: str, line: Line, parse: Callable[[Any], Any], fast: Fast | None = None) -> Any:
    """What a reader makes of one line, as :func:`parse_lines` does for a whole file: None for a
    blank line, else ``parse(value)`` or the :class:`RecordError` naming the line.  A UTF-8 BOM
    before the file's first byte is not part of the line; a last line without its end is torn.
    ``fast``: as for :func:`parse_record`."""
    raw = line.raw
    if type(raw) is LongLine:
        return RecordError(name, line.number, "(line)", _too_long(int(raw)))
    if line.offset == 0:
        raw = _without_bom(raw)
    if not raw or raw.isspace():
        return None
    return parse_record(name, line.number, raw, parse, torn=not _ends_line(raw), fast=fast)


def is_blank(line: Line) -> bool:
    """A line no reader makes a record of (empty, or spaces and a line end; a BOM before the first)."""
    raw = line.raw
    if type(raw) is LongLine:
        return False
    if line.offset == 0:
        raw = _without_bom(raw)
    return not raw or raw.isspace()


def line_at(handle: BinaryIO, offset: int, limit: int = MAX_LINE_BYTES) -> bytes | LongLine:
    """The line that starts at byte ``offset`` (its end included), by the same rules; ``b""`` past the end."""
    handle.seek(offset)
    return next(physical_lines(handle, 1 << 16, limit), b"")


def next_line_start(read: Callable[[int, int], bytes], at: int, size: int, step: int = 1 << 16) -> int:
    """The first line start at or after byte ``at`` of a file of ``size`` bytes read by
    ``read(start, end)``: 0, or just after a line end (``\\n``, ``\\r\\n``, a lone ``\\r``).  A byte
    range ``[start, end)`` holds the lines that start in ``[next_line_start(start), next_line_start(end))``."""
    if at <= 0:
        return 0
    pos = at - 1
    while pos < size:
        data = read(pos, min(pos + step, size))
        if not data:
            break
        ends = [i for i in (data.find(b"\n"), data.find(b"\r")) if i >= 0]
        if ends:
            i = min(ends)
            if data[i] == 10:  # \n
                return pos + i + 1
            after = data[i + 1:i + 2] if i + 1 < len(data) else read(pos + i + 1, min(pos + i + 2, size))
            return pos + i + (2 if after == b"\n" else 1)
        pos += len(data)
    return size


def line_ends(data: bytes, next_byte: bytes = b"", newlines: int | None = None) -> int:
    """How many lines end inside ``data``: each ``\\n``, each ``\\r\\n`` once and each lone ``\\r``;
    a ``\\r`` at the very end counts unless ``next_byte`` (the file's byte after ``data``) is ``\\n``.
    ``newlines``: ``data.count(b"\\n")`` when the caller counted it already."""
    count = data.count(b"\n") if newlines is None else newlines
    if b"\r" in data:
        count += data.count(b"\r") - data.count(b"\r\n")
        if next_byte == b"\n" and data.endswith(b"\r"):
            count -= 1
    return count
