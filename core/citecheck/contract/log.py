"""The answer log, format version 1: one JSON object per line (see docs/log-format.md).

A line is parsed once, here, into immutable types (``Answer`` a frozen dataclass, ``Chunk`` and
``Citation`` NamedTuples, which the compiled checker reads fastest); everything downstream works on those.
Offsets everywhere are Python string indices (Unicode code points), end exclusive.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NamedTuple

from msgspec import UNSET
from msgspec.structs import astuple

from citecheck.contract.log_line import decode_line
from citecheck.errors import FieldError, RecordError
from citecheck.storage import lines as line_reader
from citecheck.storage.lines import MAX_DEPTH, MAX_INT_DIGITS, MAX_LINE_BYTES, LongLine, decode  # noqa: F401 (re-exported)

LOG_VERSION = 1
CHECKSUM_PREFIX = "sha256:"
# The largest offset, and the largest marker either way: a 64-bit signed integer, as the JSON
# Schema's "maximum" says (the checked store keeps offsets in int64 columns).
MAX_OFFSET = 2**63 - 1
# Offset fields: left out when there is no offset (an explicit null is refused, as by the schema).
_OFFSETS = ("start", "end", "at", "answer_start", "answer_end", "quote_start", "quote_end")

# Limits on one line (docs/log-format.md, "Limits"): a longer or deeper line is one unreadable
# line, reported with its number, and the lines after it are read.  They bound the time and
# memory one line can take, and keep every value writable by the JSON writers.
# (the limits are the shared reader's, citecheck.storage.lines, so they hold for every file)


# Copied for each checksum: ``hashlib.sha256()`` looks OpenSSL's digest up again on every call, which
# cost as much as hashing a chunk of 800 characters (perf, check --format json: py_evp_fromname).
_SHA256: Final = hashlib.sha256()


def checksum(text: str) -> str:
    """The checksum the log records for a chunk: sha256 of its UTF-8 text, as ``sha256:<hex>``."""
    digest = _SHA256.copy()
    digest.update(text.encode("utf-8"))
    return CHECKSUM_PREFIX + digest.hexdigest()


class Chunk(NamedTuple):
    """One retrieved chunk, in the order it was given to the model (marker ``[n]`` is ``chunks[n-1]``).

    Chunks and citations are immutable NamedTuples rather than dataclasses: a log has millions of
    them and a NamedTuple is built four times faster (see bench/bench_check.py).
    """

    chunk_id: str | None
    document_id: str | None
    source: str | None
    title: str | None
    section: str | None
    text: str
    start: int | None
    end: int | None
    checksum: str | None
    retrieval_score: float | None
    rerank_score: float | None


class Citation(NamedTuple):
    """A citation as logged.

    ``kind`` is ``"marker"`` (an ``[n]`` in the answer text, ``marker`` is n) or ``"span"``
    (``answer_start``/``answer_end`` cover the answer text it supports and ``chunk_id`` or
    ``document_id`` names what it cites).  ``quote_start``/``quote_end`` locate ``quote`` in the chunk.
    """

    kind: str
    marker: int | None = None
    at: int | None = None
    answer_start: int | None = None
    answer_end: int | None = None
    chunk_id: str | None = None
    document_id: str | None = None
    quote: str | None = None
    quote_start: int | None = None
    quote_end: int | None = None
    label: str | None = None
    locator: dict | None = None


@dataclass(frozen=True, slots=True, init=False)
class Answer:
    """One logged answer: the question, what was retrieved, what was said and what it cites."""

    answer_id: str
    question: str
    answer: str
    chunks: tuple[Chunk, ...]
    citations: tuple[Citation, ...]
    timestamp: str | None
    model: str | None
    prompt_version: str | None
    index_snapshot: str | None
    refused: bool
    extra: dict

    # Written out rather than generated: the compiled build runs this one as code (16 times faster
    # than the generated one, which it runs as Python); it is the generated one, field for field.
    def __init__(self, answer_id: str, question: str, answer: str, chunks: tuple[Chunk, ...],
                 citations: tuple[Citation, ...] = (), timestamp: str | None = None, model: str | None = None,
                 prompt_version: str | None = None, index_snapshot: str | None = None, refused: bool = False,
                 extra: dict | None = None) -> None:
        object.__setattr__(self, "answer_id", answer_id)
        object.__setattr__(self, "question", question)
        object.__setattr__(self, "answer", answer)
        object.__setattr__(self, "chunks", chunks)
        object.__setattr__(self, "citations", citations)
        object.__setattr__(self, "timestamp", timestamp)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "prompt_version", prompt_version)
        object.__setattr__(self, "index_snapshot", index_snapshot)
        object.__setattr__(self, "refused", refused)
        object.__setattr__(self, "extra", {} if extra is None else extra)

    def __reduce__(self):  # pickled by field: a compiled frozen class cannot be set field by field
        return (Answer, (self.answer_id, self.question, self.answer, self.chunks, self.citations, self.timestamp,
                         self.model, self.prompt_version, self.index_snapshot, self.refused, self.extra))


ANSWER_FIELDS = (
    "log_version answer_id question answer chunks citations timestamp model prompt_version "
    "index_snapshot refused"
).split()
_ANSWER_FIELD_SET: Final = frozenset(ANSWER_FIELDS)


# --- parsing ---------------------------------------------------------------------------------


def _show(value: Any) -> str:
    """A wrong value for an error message: short, and never a walk of a deeply nested one."""
    if type(value) in (list, dict):
        return f"a{'n object' if type(value) is dict else ' list'} of {len(value)} item(s)"
    if type(value) is int and value.bit_length() > 64:  # (the digits of a large float's value, too)
        return f"an integer of {len(str(value)) if value.bit_length() < 14_000 else 'thousands of'} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _opt_str(obj: dict, key: str, where: str) -> str | None:
    value = obj.get(key)
    if value is None or type(value) is str:
        return value
    raise FieldError(f"{where}{key}", f"expected a string or null, got {type(value).__name__}")


def _req_str(obj: dict, key: str, where: str) -> str:
    value = obj.get(key)
    if type(value) is str:
        return value
    if value is None:
        raise FieldError(f"{where}{key}", "is required (a string)")
    raise FieldError(f"{where}{key}", f"expected a string, got {type(value).__name__}")


def _integer(value: Any) -> int | None:
    """``value`` as an integer if JSON Schema calls it one (``3`` or ``3.0``; never ``true``), else None."""
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    return None


def _opt_int(obj: dict, key: str, where: str) -> int | None:
    """An offset: left out (None), or an integer from 0 to :data:`MAX_OFFSET`.  An explicit null
    is refused, as the schema refuses it: leave the field out when there is no offset."""
    if key not in obj:
        return None
    value = obj[key]
    number = _integer(value)
    if number is not None and 0 <= number <= MAX_OFFSET:
        return number
    if value is None:
        raise FieldError(f"{where}{key}", "expected a non-negative integer (a code-point offset), got null; "
                                          "leave the field out when there is no offset")
    if number is not None and number > MAX_OFFSET:
        raise FieldError(f"{where}{key}", f"expected an offset of at most {MAX_OFFSET:,} (2^63 - 1), got "
                                          f"{_show(number)}")
    raise FieldError(f"{where}{key}", f"expected a non-negative integer (a code-point offset), got {_show(value)}")


def _at(obj: dict, where: str) -> int | None:
    """A marker entry's ``at``: left out, or an offset; an explicit null is refused, as the schema does."""
    return _opt_int(obj, "at", where)


def _marker(obj: dict, where: str, required: bool) -> int | None:
    """The n of a marker ``[n]``: an integer within +-:data:`MAX_OFFSET` (required for kind marker)."""
    if "marker" not in obj and not required:
        return None
    number = _integer(obj.get("marker"))
    if number is not None and -MAX_OFFSET <= number <= MAX_OFFSET:
        return number
    if number is not None:
        raise FieldError(f"{where}marker", f"expected a marker within +-{MAX_OFFSET:,} (2^63 - 1), got {_show(number)}")
    got = "" if "marker" not in obj else f", got {_show(obj['marker'])}"
    raise FieldError(f"{where}marker", f"is required for kind 'marker' (the n of [n]), an integer{got}")


def _opt_num(obj: dict, key: str, where: str) -> float | None:
    value = obj.get(key)
    if value is None or (type(value) in (int, float)):
        return value
    raise FieldError(f"{where}{key}", f"expected a number or null, got {_show(value)}")


def _pair(obj: dict, start_key: str, end_key: str, where: str) -> tuple[int | None, int | None]:
    start = _opt_int(obj, start_key, where)
    end = _opt_int(obj, end_key, where)
    if (start is None) != (end is None):
        raise FieldError(f"{where}{start_key}", f"give both {start_key} and {end_key}, or neither")
    if start is not None and end is not None and start > end:
        raise FieldError(f"{where}{start_key}", f"{start_key}={start} is after {end_key}={end}")
    return start, end


# Offsets below this are compared as machine integers by the compiled build (core/citecheck/text/compiled.py);
# MAX_OFFSET itself is past its small-integer range, so only a larger offset is compared with it.
_SMALL: Final = 2**60
# tuple.__new__ called as a value: the compiled build then skips looking the method up on each call.
_new: Final = tuple.__new__


def _fast_chunk(obj: Any) -> Chunk | None:
    """The common case in one pass of type checks; None sends the record to the careful path."""
    if type(obj) is not dict:
        return None
    d: dict[str, Any] = obj  # (typed, so that the compiled build looks fields up directly)
    text, start, end = d.get("text"), d.get("start"), d.get("end")
    chunk_id, document_id, source = d.get("chunk_id"), d.get("document_id"), d.get("source")
    title, section, checksum_ = d.get("title"), d.get("section"), d.get("checksum")
    rs, rr = d.get("retrieval_score"), d.get("rerank_score")
    if (
        type(text) is str
        and (chunk_id is None or type(chunk_id) is str) and (document_id is None or type(document_id) is str)
        and (source is None or type(source) is str) and (title is None or type(title) is str)
        and (section is None or type(section) is str) and (checksum_ is None or type(checksum_) is str)
        and (rs is None or type(rs) is float or type(rs) is int)
        and (rr is None or type(rr) is float or type(rr) is int)
        and ((start is None and end is None and "start" not in d and "end" not in d)
             or (type(start) is int and type(end) is int and 0 <= start <= end
                 and (end < _SMALL or end <= MAX_OFFSET)))
    ):
        return _new(Chunk, (chunk_id, document_id, source, title, section, text, start, end, checksum_, rs, rr))
    return None


def parse_chunk(obj: Any, where: str) -> Chunk:
    """A :class:`Chunk` from its JSON object; raises :class:`FieldError` naming the bad field."""
    return _fast_chunk(obj) or _parse_chunk_checked(obj, where)


def _parse_chunk_checked(obj: Any, where: str) -> Chunk:
    if type(obj) is not dict:
        raise FieldError(where.rstrip("."), "expected an object")
    text = obj.get("text")
    if type(text) is not str:
        got = "is required" if text is None else f"expected a string, got {type(text).__name__}"
        raise FieldError(f"{where}text", f"{got} (the chunk text as given to the model)")
    start, end = _pair(obj, "start", "end", where)
    return Chunk(
        _opt_str(obj, "chunk_id", where),
        _opt_str(obj, "document_id", where),
        _opt_str(obj, "source", where),
        _opt_str(obj, "title", where),
        _opt_str(obj, "section", where),
        text,
        start,
        end,
        _opt_str(obj, "checksum", where),
        _opt_num(obj, "retrieval_score", where),
        _opt_num(obj, "rerank_score", where),
    )


def _fast_citation(obj: Any) -> Citation | None:
    if type(obj) is not dict:
        return None
    d: dict[str, Any] = obj
    if d.get("kind") != "marker" or d.get("locator") is not None:
        return None
    marker, at, quote, qs, qe, label = (d.get("marker"), d.get("at"), d.get("quote"), d.get("quote_start"),
                                        d.get("quote_end"), d.get("label"))
    if (type(marker) is int and (-_SMALL < marker < _SMALL or -MAX_OFFSET <= marker <= MAX_OFFSET)
            and ((at is None and "at" not in d) or (type(at) is int and 0 <= at and (at < _SMALL or at <= MAX_OFFSET)))
            and (quote is None or type(quote) is str)
            and (label is None or type(label) is str)
            and ((qs is None and qe is None and "quote_start" not in d and "quote_end" not in d)
                 or (type(qs) is int and type(qe) is int and 0 <= qs <= qe and (qe < _SMALL or qe <= MAX_OFFSET)))
            # (fields of a span citation, which the careful path checks)
            and "answer_start" not in d and "answer_end" not in d and "chunk_id" not in d and "document_id" not in d):
        return _new(Citation, ("marker", marker, at, None, None, None, None, quote, qs, qe, label, None))
    return None


def parse_citation(obj: Any, where: str) -> Citation:
    """A :class:`Citation` from its JSON object; raises :class:`FieldError` naming the bad field."""
    return _fast_citation(obj) or _parse_citation_checked(obj, where)


def _parse_citation_checked(obj: Any, where: str) -> Citation:
    if type(obj) is not dict:
        raise FieldError(where.rstrip("."), "expected an object")
    kind = obj.get("kind")
    quote = _opt_str(obj, "quote", where)
    quote_start, quote_end = _pair(obj, "quote_start", "quote_end", where)
    locator = obj.get("locator")
    if locator is not None and type(locator) is not dict:
        raise FieldError(f"{where}locator", "expected an object or null")
    label = _opt_str(obj, "label", where)
    if kind in ("marker", "span"):  # a field of the other kind is still checked, as the schema does
        chunk_id = _opt_str(obj, "chunk_id", where)
        document_id = _opt_str(obj, "document_id", where)
        marker = _marker(obj, where, required=kind == "marker")
        at = _at(obj, where)
        answer_start, answer_end = _opt_int(obj, "answer_start", where), _opt_int(obj, "answer_end", where)
        if answer_start is not None and answer_end is None:
            raise FieldError(f"{where}answer_start", "give both answer_start and answer_end, or neither")
        if answer_start is not None and answer_end is not None and answer_start > answer_end:
            raise FieldError(f"{where}answer_start", f"answer_start={answer_start} is after answer_end={answer_end}")
    if kind == "marker":
        return Citation(
            "marker", marker=marker, at=at, quote=quote,
            quote_start=quote_start, quote_end=quote_end, label=label, locator=locator,
        )
    if kind == "span":
        answer_start, answer_end = _pair(obj, "answer_start", "answer_end", where)
        if answer_start is None:
            raise FieldError(f"{where}answer_start", "is required for kind 'span'")
        if chunk_id is None and document_id is None:
            raise FieldError(f"{where}chunk_id", "a span citation needs chunk_id or document_id")
        return Citation(
            "span", answer_start=answer_start, answer_end=answer_end, chunk_id=chunk_id,
            document_id=document_id, quote=quote, quote_start=quote_start, quote_end=quote_end,
            label=label, locator=locator,
        )
    raise FieldError(f"{where}kind", f"expected 'marker' or 'span', got {_show(kind)}")


def parse_answer(value: Any) -> Answer:
    """Turn one decoded log line into an :class:`Answer`, or raise :class:`FieldError`."""
    if type(value) is not dict:
        raise FieldError("(line)", f"expected a JSON object, got {type(value).__name__}")
    obj: dict[str, Any] = value  # (typed, so that the compiled build looks fields up directly)
    version = obj.get("log_version")
    if _integer(version) != LOG_VERSION:  # true is not 1 (1.0 is), as in the JSON Schema
        if version is None:
            raise FieldError("log_version", f'is required: add "log_version": {LOG_VERSION}')
        raise FieldError(
            "log_version",
            f"this line is format version {_show(version)}; this citecheck reads version {LOG_VERSION}. "
            "Upgrade citecheck or re-export the log.",
        )
    chunks_obj = obj.get("chunks")
    if type(chunks_obj) is not list:
        if chunks_obj is None and "chunks" not in obj:
            raise FieldError("chunks", "is required (a list of the retrieved chunks, in prompt order)")
        raise FieldError("chunks", f"expected a list of the retrieved chunks (in prompt order), got {_show(chunks_obj)}")
    chunks = tuple([_fast_chunk(c) or _parse_chunk_checked(c, f"chunks[{i}].") for i, c in enumerate(chunks_obj)])
    citations_obj = obj.get("citations", [])
    if type(citations_obj) is not list:  # null, "" or {} are not "no citations": the schema refuses them too
        raise FieldError("citations", f"expected a list (or leave the field out), got {json.dumps(citations_obj)}")
    citations = tuple([_fast_citation(c) or _parse_citation_checked(c, f"citations[{i}].")
                       for i, c in enumerate(citations_obj)])
    refused = obj.get("refused", False)
    if type(refused) is not bool:
        raise FieldError("refused", f"expected true or false, got {_show(refused)}")
    # Fields the format does not name are kept (``extra``): found by a set difference, so a line with
    # few known fields loses none of its own.
    extra = {k: v for k, v in obj.items() if k not in _ANSWER_FIELD_SET} if not _ANSWER_FIELD_SET.issuperset(obj) else {}
    for key, value in extra.items():
        if type(value) in (list, dict):
            _check_depth(value, 2, key)
    for i, c in enumerate(citations):
        if c.locator:
            _check_depth(c.locator, 4, f"citations[{i}].locator")
    return Answer(  # (by position, in field order: half the cost of the same call by keyword)
        _req_str(obj, "answer_id", ""),  # answer_id
        _req_str(obj, "question", ""),  # question
        _req_str(obj, "answer", ""),  # answer
        chunks,
        citations,
        _opt_str(obj, "timestamp", ""),  # timestamp
        _opt_str(obj, "model", ""),  # model
        _opt_str(obj, "prompt_version", ""),  # prompt_version
        _opt_str(obj, "index_snapshot", ""),  # index_snapshot
        refused,
        extra,
    )


def _check_depth(value: Any, depth: int, where: str) -> None:
    """Raise :class:`FieldError` when ``value`` (at nesting level ``depth``) nests past MAX_DEPTH.

    Iterative, so no input can exhaust the stack."""
    stack = [(value, depth)]
    while stack:
        item, level = stack.pop()
        if level > MAX_DEPTH:
            raise FieldError(where, f"nested more than {MAX_DEPTH} levels deep; citecheck reads at most "
                             f"{MAX_DEPTH} levels of lists and objects in a line")
        children = item.values() if type(item) is dict else item
        stack.extend((c, level + 1) for c in children if type(c) in (list, dict))


# The integers orjson decodes as integers (a 64-bit signed or unsigned one; past them it gives a
# float, which msgspec does not): an integer outside them goes the careful way, as orjson reads it.
_INT_LOW: Final = -(2**63)
_INT_HIGH: Final = 2**64


def _offset(value: Any) -> bool:
    """An offset as the fast path takes it: an integer from 0 to MAX_OFFSET."""
    return type(value) is int and 0 <= value and (value < _SMALL or value <= MAX_OFFSET)


def _score(value: Any) -> bool:
    return type(value) is not int or (-_SMALL < value < _SMALL or _INT_LOW <= value < _INT_HIGH)


def fast_answer(raw: bytes) -> Answer | None:
    """The :class:`Answer` :func:`parse_line` makes of ``raw``, for a line of the common shape
    (:mod:`citecheck.contract.log_line`: decoded by msgspec into typed records in one pass, then
    range-checked here); None for any other line, which the careful path then reads (and words
    its errors).  The reader of a log tries this first (:func:`read_log`)."""
    line = decode_line(raw)
    if line is None:
        return None
    chunks: list[Chunk] = []
    for c in line.chunks:
        t = astuple(c)  # (one call for every field, in Chunk's order, instead of a lookup each)
        start, end = t[6], t[7]
        if start is UNSET and end is UNSET:
            t = (*t[:6], None, None, *t[8:])
        elif not (_offset(start) and _offset(end) and start <= end):
            return None
        if not (_score(t[9]) and _score(t[10])):
            return None
        chunks.append(_new(Chunk, t))
    citations: list[Citation] = []
    for m in line.citations:
        t = astuple(m)  # kind, marker, at, quote, quote_start, quote_end, label, locator
        marker, at, qs, qe = t[1], t[2], t[4], t[5]
        if not (-_SMALL < marker < _SMALL or -MAX_OFFSET <= marker <= MAX_OFFSET):
            return None
        if at is UNSET:
            at = None
        elif not _offset(at):
            return None
        if qs is UNSET and qe is UNSET:
            qs = qe = None
        elif not (_offset(qs) and _offset(qe) and qs <= qe):
            return None
        citations.append(_new(Citation, ("marker", marker, at, None, None, None, None, t[3], qs, qe, t[6], None)))
    return Answer(line.answer_id, line.question, line.answer, tuple(chunks), tuple(citations), line.timestamp,
                  line.model, line.prompt_version, line.index_snapshot, line.refused, {})


class FastReader:
    """:func:`fast_answer` for a reader of one log, tried less often while it keeps missing: a log
    of another shape (fields of its own on every line, span citations) is then read the careful
    way without a failed fast try of nearly every line first.  After a miss the next 1, 2, 4 ...
    64 lines go straight the careful way; a hit puts every line back on the fast path.  Either
    way each line gives the same record."""

    def __init__(self, fast: Callable[[bytes], Answer | None] = fast_answer) -> None:
        self.fast = fast
        self.skip = 0  # lines to leave to the careful path after the next miss
        self.wait = 0  # lines still to leave to it now

    def __call__(self, raw: bytes) -> Answer | None:
        if self.wait:
            self.wait -= 1
            return None
        found = self.fast(raw)
        if found is None:
            self.skip = min(64, 2 * self.skip or 1)
            self.wait = self.skip
        else:
            self.skip = 0
        return found


def answer_of(name: str, line: line_reader.Line, fast: Callable[[bytes], Answer | None] | None = None
              ) -> Answer | RecordError | None:
    """What every reader of a log makes of one of its lines (:func:`read_log` line by line, and the
    checked store's writer, its Dask partitions and its readers of one answer by offset): None for a
    blank line, else the answer or the :class:`RecordError` naming the line.  ``fast``: a
    :class:`FastReader` kept across the lines of one log, else each line tries :func:`fast_answer`."""
    return line_reader.record_of(name, line, parse_answer, fast_answer if fast is None else fast)


def parse_line(text: str | bytes) -> Answer:
    """Decode and parse one log line; raises :class:`FieldError` (field ``(json)`` for bad JSON,
    ``(encoding)`` for bytes that are not UTF-8)."""
    return parse_answer(decode(text))


# --- writing ---------------------------------------------------------------------------------


_CHUNK_FIELDS: Final = Chunk._fields
_CITATION_FIELDS: Final = Citation._fields


def chunk_to_dict(chunk: Chunk) -> dict:
    # (by its fields, not ``_asdict``: a Python-level call the compiled build cannot make quicker)
    return {k: v for k, v in zip(_CHUNK_FIELDS, chunk) if v is not None}


def citation_to_dict(citation: Citation) -> dict:
    return {k: v for k, v in zip(_CITATION_FIELDS, citation) if v is not None}


def answer_to_dict(answer: Answer) -> dict:
    """The log line for ``answer`` (inverse of :func:`parse_answer`)."""
    out: dict[str, Any] = {"log_version": LOG_VERSION, "answer_id": answer.answer_id}
    for name in ("timestamp", "model", "prompt_version", "index_snapshot"):
        value = getattr(answer, name)
        if value is not None:
            out[name] = value
    out["question"] = answer.question
    out["refused"] = answer.refused
    out["chunks"] = [chunk_to_dict(c) for c in answer.chunks]
    out["answer"] = answer.answer
    out["citations"] = [citation_to_dict(c) for c in answer.citations]
    out.update(answer.extra)
    return out


def dumps(answer: Answer) -> str:
    return json.dumps(answer_to_dict(answer), ensure_ascii=False)


# --- reading a file --------------------------------------------------------------------------


def parse_lines(name: str, lines: Iterable[bytes | str | LongLine]) -> Iterator[tuple[int, Answer | RecordError]]:
    """``(line_number, Answer)`` or ``(line_number, RecordError)`` for every non-blank line; one
    bad line never stops the others (the shared reader, :mod:`citecheck.storage.lines`)."""
    return line_reader.parse_lines(name, lines, parse_answer)


EMPTY_LOG = "is empty: it holds no answers (a log has one JSON object per line)"


def log_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be read as a log at all (a folder, missing, unreadable, empty), or None.

    A file of blank lines only is empty too; the message says what to do in each case."""
    path = Path(path)
    if path.is_dir():
        return "is a folder, not a log file: give the .jsonl log file inside it"
    if not path.exists():
        return "does not exist (no such file): check --log or CITECHECK_LOGS, or the command's LOG argument"
    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
            while head and head.isspace():
                head = handle.read(1 << 16)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if not head:
        return EMPTY_LOG
    return None


def read_log(path: str | Path) -> Iterator[tuple[int, Answer | RecordError]]:
    """Stream :func:`parse_lines` over a log file; memory stays flat however long it is.

    Lines are read as bytes and decoded by the JSON parser (one pass instead of two); a line that
    is not UTF-8 is reported as an ``(encoding)`` error and the lines after it are still read.
    A torn last line (no newline, not valid JSON) is reported like any other bad line.  Lines are
    split by the one set of rules every reader of a log follows (:mod:`citecheck.storage.lines`: the
    checked store, its Dask partitions and the review page reading one answer back by its offset
    too); answer logs are written a line at a time, so append groups (a labels-file rule) do not apply.
    """
    return line_reader.read_records(path, parse_answer, FastReader())
