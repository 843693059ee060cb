"""Log lines to the store's rows: each line parsed and checked exactly as ``citecheck check`` does,
its results turned into columns of the four tables (``schema.TABLES``).

Written for speed (issue #36: ``check --store`` at the cost of a plain check): per line only what
the check made is kept (one tuple per answer; the checker's citation and sentence tuples as they
are), and the columns are made once per batch, in C where it can be: ints through numpy, the key
columns of citations and sentences by ``take`` from the answers', lists that repeat (reason codes,
invalid markers) from their distinct values, timestamps read once per distinct value; each
answer's own row made by compiled code (``reports.answer_row.store_row``), each line hashed with
the store version's hash (xxh3-128 from version 2).  Nothing here imports pandas (``_times``
falls back to it only for a timestamp of an unusual shape), nor lets pyarrow import it
(:func:`spare_pandas`).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from citecheck.checking.checker import AnswerResult, CheckOptions, check_answer
from citecheck.contract import reasons as reason_codes
from citecheck.contract.log import FastReader, answer_of
from citecheck.errors import RecordError
from citecheck.reports.answer_row import COLUMNS, store_row
from citecheck.storage.checked import schema as store_schema
from citecheck.storage.lines import Line, LongLine
from citecheck.text.utf8 import utf8_text

_COUNT_NAMES = COLUMNS[7:-2]  # the figures' count columns without labelled, not_supported
_FAITH_AT = _COUNT_NAMES.index("faithfulness")
_BOOLS = {"refused", "ok", "failing", "unsupported_number", "withheld"}


Digest = Callable[[Any], bytes]


def _blake2b_128(data: Any) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


# The 16-byte hash of a line's bytes, by store version (schema.LINE_HASHES)
DIGESTS: dict[int, Digest] = {1: _blake2b_128, 2: xxhash.xxh3_128_digest}


def line_hash(raw: bytes | LongLine, version: int) -> bytes:
    """The hash that says whether a line changed, as a store of ``version`` keeps it: of the line's
    bytes without the newline (of a line over the limit, which is never held, of its length: it is
    unreadable whatever it holds)."""
    return _measured(raw, version)[1]


def _measured(raw: bytes | LongLine, version: int) -> tuple[int, bytes]:
    """A line's length (bytes without the newline) and its ``line_hash``: the one place the hash is made."""
    if type(raw) is LongLine:
        return int(raw), DIGESTS[version](b"\0a line of %d bytes" % int(raw))
    size = len(raw)
    while size and raw[size - 1] == 10:  # (rstrip(b"\n") without copying the line)
        size -= 1
    return size, DIGESTS[version](memoryview(raw)[:size])


_CITATION = pa.struct([store_schema.CITATIONS.field(name) for name in (
    "index", "kind", "marker", "label", "answer_start", "answer_end", "chunk_index", "chunk_id", "quote", "quote_start",
    "quote_end", "reasons", "sentence")] + [pa.field("not_verifiable", pa.bool_())])  # CitationResult, field by field
_SENTENCE = pa.struct([store_schema.SENTENCES.field(name) for name in (
    "index", "start", "end", "text", "citations", "uncited", "refusal", "multi_claim", "reasons", "unsupported_numbers",
    "unsupported_quotes")])  # SentenceResult, field by field


class Batch:
    """Rows of the four tables for a run of lines of one log, built line by line; turned into
    Arrow tables (``tables``) once per batch."""

    def __init__(self, source: str, file: str, version: int):
        self.source = source
        self.file = file
        self.version = version  # the store's: which line_hash
        self.keys: list[tuple] = []  # (line, offset, length, line_hash) of each answer
        self.texts: list[tuple] = []  # figures.answer_row's text columns of each answer
        self.counts: list[list] = []  # ... and its count columns
        self.more: list[tuple] = []  # (multi_claim, reason counts, invalid markers, chunk ids, review items, not verifiable) of each answer
        self.citations: list = []  # CitationResult tuples, in order
        self.sentences: list = []  # SentenceResult tuples
        self.citation_counts: list[int] = []  # per answer
        self.sentence_counts: list[int] = []
        self.error_rows: list[tuple] = []  # (line, offset, length, line_hash, field, message)
        self.rows = 0
        self.fast = FastReader()  # (the log's lines decoded straight into typed records, as by read_log)

    def add(self, line: Line, options: CheckOptions) -> None:
        """Parse and check one line as every reader of a log does (``contract.log.answer_of``:
        blank lines have no row, a line over the limit or not parsed is an error row)."""
        record = answer_of(self.file, line, self.fast)
        if record is None:
            return
        self.rows += 1
        if isinstance(record, RecordError):
            self.error_rows.append((line.number, line.offset, *_measured(line.raw, self.version),
                                    utf8_text(record.field), utf8_text(record.message)))  # (a key may be "\udc00")
        else:
            self._answer(line, check_answer(record, options))

    def _answer(self, line: Line, result: AnswerResult) -> None:
        text, counts, more = store_row(result, self.file, line.number)
        self.keys.append((line.number, line.offset, *_measured(line.raw, self.version)))
        self.texts.append(text)
        self.counts.append(counts)
        self.more.append(more)
        self.citations += result.citations
        self.citation_counts.append(len(result.citations))
        self.sentences += result.sentences
        self.sentence_counts.append(len(result.sentences))

    def tables(self) -> dict[str, pa.Table]:
        """The batch as one Arrow table per store table (schema.TABLES)."""
        answers = self._answers()
        keys = {name: answers[name] for name in ("line", "offset", "answer_id")}
        citations = self._rows(keys, self.citation_counts, self.citations, _CITATION, store_schema.CITATIONS)
        lengths = pc.list_value_length(citations["reasons"])
        citations["verified"] = pc.equal(lengths, pa.scalar(0, lengths.type))  # (no reason; an Arrow 0: a Python
        # value would have pyarrow import pandas to ask whether it is one, see spare_pandas)
        sentences = self._rows(keys, self.sentence_counts, self.sentences, _SENTENCE, store_schema.SENTENCES)
        errors = self._errors()
        columns = {"answers": answers, "citations": citations, "sentences": sentences, "errors": errors}
        return {name: pa.Table.from_arrays([columns[name][f.name] for f in schema], schema=schema)
                for name, schema in store_schema.TABLES.items()}

    def _constant(self, n: int) -> dict[str, pa.Array]:
        """The columns every row of a table has the same value in.  (By ``take`` of one value: for a
        string, ``pa.repeat`` took 30 times as long, 0.6 s of a 50,000-answer check.)"""
        at = pa.array(np.zeros(n, dtype=np.int64))
        return {"source": pa.array([self.source], pa.string()).take(at),
                "file": pa.array([utf8_text(self.file)], pa.string()).take(at)}  # (a name not UTF-8)

    def _answers(self) -> dict[str, pa.Array]:
        schema = store_schema.ANSWERS
        n = len(self.keys)
        out = self._constant(n)
        lines, offsets, lengths, hashes = zip(*self.keys) if n else ((), (), (), ())
        out["line"] = pa.array(lines, pa.int64())
        out["offset"] = pa.array(offsets, pa.int64())
        out["length"] = pa.array(lengths, pa.int64())
        out["line_hash"] = pa.array(hashes, pa.binary(16))
        texts = list(zip(*self.texts)) if n else [()] * 7
        for name, values in zip(COLUMNS[2:7], texts[2:]):
            out[name] = pa.array(values, pa.string())
        out["time"] = _times(texts[6])
        matrix = np.array(self.counts, dtype=np.int64).reshape(n, len(COLUMNS) - 7)
        for i, name in enumerate(_COUNT_NAMES):
            column = matrix[:, i]
            out[name] = pa.array(column.astype(bool) if name in _BOOLS else column, schema.field(name).type)
        score = matrix[:, _FAITH_AT]
        out["faithfulness"] = pa.array(score / 1000, pa.float64(), mask=score < 0)
        multi, reason_counts, invalid, chunk_ids, items, blind = zip(*self.more) if n else ((),) * 6
        out["multi_claim"] = pa.array(multi, pa.int64())
        out["reasons"] = _repeating(reason_counts, schema.field("reasons").type, _codes)
        out["invalid_marker_list"] = _repeating(invalid, schema.field("invalid_marker_list").type, list)
        out["chunk_ids"] = pa.array(chunk_ids, schema.field("chunk_ids").type)
        out["review_items"] = pa.array(items, pa.int64())
        out["not_verifiable"] = pa.array(blind, pa.int64())
        return out

    def _rows(self, keys: dict[str, pa.Array], counts: list[int], rows: list, kind: pa.StructType,
              schema: pa.Schema) -> dict[str, pa.Array]:
        """The columns of the citation or sentence tuples ``rows`` (of the struct ``kind``), those
        ``schema`` has; ``counts`` of them per answer, whose key columns (``keys``) each row repeats."""
        n = len(rows)
        out = self._constant(n)
        of = pa.array(np.repeat(np.arange(len(counts), dtype=np.int64), counts))
        for name, column in keys.items():
            out[name] = column.take(of)
        # the tuples read as one struct array, in one C pass (no transposing in Python), then split
        columns = pa.array(rows, kind).flatten() if n else [pa.array([], f.type) for f in kind]
        for field, column in zip(kind, columns):
            if field.name in schema.names:
                out[field.name] = column
        return out

    def _errors(self) -> dict[str, pa.Array]:
        n = len(self.error_rows)
        out = self._constant(n)
        columns = zip(*self.error_rows) if n else [()] * 6
        for name, values in zip(("line", "offset", "length", "line_hash", "field", "message"), columns):
            out[name] = pa.array(values, store_schema.ERRORS.field(name).type)
        return out


def _codes(counts: tuple[int, ...]) -> list[str]:
    """The reason codes that occur, in canonical order, from an answer's counts of each."""
    return [code for code, n in zip(reason_codes.ALL_REASONS, counts) if n]


def _repeating(values: Iterable, kind: pa.DataType, convert) -> pa.Array:
    """A list column of values that repeat (mostly empty): each distinct value (by ``convert`` of
    it) converted once, the column taken from them."""
    distinct: dict = {}
    at = [distinct.setdefault(v, len(distinct)) for v in values]
    return pa.array([convert(v) for v in distinct], kind).take(pa.array(at, pa.int64()))


# --- timestamps: read as the figures read them (pandas.to_datetime, ISO 8601, UTC) --------------

_ISO = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?"
                  r"(Z|[+-][0-9]{2}:[0-9]{2})?", re.ASCII)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_UNUSUAL = object()


def _micros(stamp) -> object:
    """Microseconds since 1970 (UTC) of a timestamp of the usual shape (``2026-09-01T08:00:00Z``,
    with optional fraction of up to 6 digits and ``Z`` or a ``±HH:MM`` offset or none), else
    ``_UNUSUAL`` (read by pandas instead)."""
    if stamp is None:
        return None
    found = _ISO.fullmatch(stamp) if type(stamp) is str else None
    if found is None:
        return _UNUSUAL
    year, month, day, hour, minute, second, fraction, zone = found.groups()
    if not 1900 <= int(year) <= 2200:
        return _UNUSUAL
    offset = timedelta(0)
    if zone and zone != "Z":
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            return _UNUSUAL
        offset = timedelta(hours=hours, minutes=minutes) * (-1 if zone[0] == "-" else 1)
    try:
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second),
                          int((fraction or "0").ljust(6, "0")), tzinfo=timezone.utc)
    except ValueError:  # (a day or hour out of range: pandas says what it makes of it)
        return _UNUSUAL
    return (moment - offset - _EPOCH) // timedelta(microseconds=1)


def _times(stamps: Iterable) -> pa.Array:
    """Timestamps read as the figures read them (pandas, ISO 8601, UTC), naive UTC; null if unreadable.
    Each distinct value is read once; the usual shape without pandas (``_micros``)."""
    read: dict = {}
    for stamp in stamps:
        if stamp not in read:
            read[stamp] = _micros(stamp)
    unusual = [s for s, v in read.items() if v is _UNUSUAL]
    if unusual:
        read.update(zip(unusual, _pandas_micros(unusual)))
    return pa.array([read[s] for s in stamps], pa.timestamp("us"))


def _pandas_micros(stamps: list) -> list[int | None]:
    from citecheck.reports.timestamps import read_times

    times = read_times(stamps)
    naive = times.dt.tz_localize(None).to_numpy().astype("datetime64[us]")
    return [None if np.isnat(t) else int(t.astype(np.int64)) for t in naive]


def spare_pandas() -> None:
    """Keep pandas out of a process that only writes the store (``check --store``): 0.12 s of a
    1.2 s check of 20,000 answers (issue #36).

    pyarrow imports pandas on its first ``pa.array`` (and ``take``, and compute functions given a
    Python value) of a process, only to ask whether the value is a pandas object; nothing written
    here is.  Called where pandas is not loaded yet, this lets that first question find no pandas:
    pyarrow then takes every value for what it looks like (a list, a numpy array) until something
    needs pandas (``from_pandas``, ``to_pandas``), which asks again and imports it.  Until then a
    pandas Series given to ``pa.array`` would be read as a plain sequence (a NaN kept as NaN, not
    made null): so only for a command that gives pyarrow no pandas object before that.

    Only in a process's main thread before it starts others (the CLI's ``check --store``): while
    this runs, an ``import pandas`` elsewhere would fail.  A no-op where pandas is loaded (the app)."""
    if "pandas" in sys.modules:
        return
    sys.meta_path.insert(0, _NO_PANDAS)  # (an import of it fails: pyarrow's one try)
    try:
        pa.array([], pa.int64())
    finally:
        sys.meta_path.remove(_NO_PANDAS)


class _NoPandas:
    """An import finder that says pandas is not there (``spare_pandas``)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("pandas is not loaded while the store is written", name=name)


_NO_PANDAS = _NoPandas()


def check_batches(source: str, file: str, lines: Iterable[Line], options: CheckOptions, version: int,
                  rows: int = 5_000) -> Iterator[dict[str, pa.Table]]:
    """The tables of ``lines`` (``storage.lines.numbered_lines``) for a store of ``version``, ``rows``
    lines per batch, so memory stays flat."""
    lines = iter(lines)
    while True:
        with _no_gc():
            batch = Batch(source, file, version)
            for line in lines:
                batch.add(line, options)
                if batch.rows >= rows:
                    break
            tables = batch.tables() if batch.rows else None
            del batch  # (freed before the collector is back: else its first collection walks all of it)
        if tables is None:
            return
        yield tables


@contextlib.contextmanager
def _no_gc():
    """Pause the cyclic garbage collector while a batch is built (never across a ``yield``): the
    collections that the batch's many small tuples trigger walk every result it holds, and took
    more time than making the columns (issue #36); nothing built here holds a reference cycle."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
