"""Log lines to the store's rows: each line parsed and checked exactly as ``citecheck check`` does,
its results turned into columns of the four tables (``schema.TABLES``)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa

from citecheck.checking.checker import AnswerResult, CheckOptions, check_answer
from citecheck.contract import reasons as reason_codes
from citecheck.contract.log import parse_answer
from citecheck.errors import RecordError
from citecheck.reports import figures
from citecheck.storage.checked import schema as store_schema
from citecheck.storage.lines import Line, LongLine, record_of

_COUNT_NAMES = figures._COUNT_COLUMNS[:-2]  # the figures' count columns without labelled, not_supported
_FAITH_AT = _COUNT_NAMES.index("faithfulness")


def line_hash(raw: bytes | LongLine) -> bytes:
    """The hash that says whether a line changed: blake2b-128 of its bytes without the newline (of a
    line over the limit, which is never held, of its length: it is unreadable whatever it holds)."""
    if type(raw) is LongLine:
        return hashlib.blake2b(b"\0a line of %d bytes" % int(raw), digest_size=16).digest()
    return hashlib.blake2b(raw.rstrip(b"\n"), digest_size=16).digest()


def _length(raw: bytes | LongLine) -> int:
    return int(raw) if type(raw) is LongLine else len(raw.rstrip(b"\n"))


_CITATION_FIELDS = ("index", "kind", "marker", "label", "answer_start", "answer_end", "chunk_index", "chunk_id",
                    "quote", "quote_start", "quote_end", "reasons", "sentence")  # CitationResult's order
_SENTENCE_FIELDS = ("index", "start", "end", "text", "citations", "uncited", "refusal", "multi_claim", "reasons",
                    "unsupported_numbers", "unsupported_quotes")  # SentenceResult's order


@dataclass
class Batch:
    """Rows of the four tables for a run of lines of one log, built line by line; the checker's
    citation and sentence tuples are kept as they are and turned into columns at the end."""

    source: str
    file: str

    def __post_init__(self) -> None:
        self.answers: dict[str, list] = {f.name: [] for f in store_schema.ANSWERS}
        self.errors: dict[str, list] = {f.name: [] for f in store_schema.ERRORS}
        self.citations: list = []  # CitationResult tuples
        self.sentences: list = []  # SentenceResult tuples
        self.citation_keys: list = []  # (line, offset, answer_id) of each, in order
        self.sentence_keys: list = []
        self.rows = 0

    def add(self, line: Line, options: CheckOptions) -> None:
        """Parse and check one line as every reader of a log does (``storage.lines.record_of``:
        blank lines have no row, a line over the limit or not parsed is an error row)."""
        record = record_of(self.file, line, parse_answer)
        if record is None:
            return
        self.rows += 1
        if type(record) is RecordError:
            self._error(line, record.field, record.message)
        else:
            self._answer(line.number, line.offset, line.raw, check_answer(record, options))

    def _error(self, line: Line, field: str, message: str) -> None:
        c = self.errors
        for name, value in (("line", line.number), ("offset", line.offset), ("length", _length(line.raw)),
                            ("line_hash", line_hash(line.raw)), ("field", field), ("message", message)):
            c[name].append(value)

    def _answer(self, number: int, offset: int, raw: bytes | LongLine, result: AnswerResult) -> None:
        text, counts = figures.answer_row(result, self.file, number)
        a = result.answer
        c = self.answers
        c["line"].append(number)
        c["offset"].append(offset)
        c["length"].append(_length(raw))
        c["line_hash"].append(line_hash(raw))
        for name, value in zip(("answer_id", "question", "model", "prompt_version", "timestamp"), text[2:]):
            c[name].append(value)
        for name, value in zip(_COUNT_NAMES, counts):
            c[name].append(value)
        score = counts[_FAITH_AT]
        c["faithfulness"][-1] = score / 1000 if score >= 0 else None
        c["multi_claim"].append(result.tally.multi_claim)
        c["reasons"].append([code for code, n in zip(reason_codes.ALL_REASONS, result.tally.reasons) if n])
        c["invalid_marker_list"].append(result.invalid_markers)
        c["chunk_ids"].append([ch.chunk_id or "" for ch in a.chunks])
        key = (number, offset, a.answer_id)
        self.citations += result.citations
        self.citation_keys += [key] * len(result.citations)
        self.sentences += result.sentences
        self.sentence_keys += [key] * len(result.sentences)

    def _keyed(self, keys: list, rows: list, fields: tuple[str, ...]) -> dict:
        n = len(rows)
        out: dict = {"source": [self.source] * n, "file": [self.file] * n}
        for name, values in zip(("line", "offset", "answer_id"), zip(*keys) if n else ((), (), ())):
            out[name] = values
        for name, values in zip(fields, zip(*rows) if n else [()] * len(fields)):
            out[name] = values
        return out

    def tables(self) -> dict[str, pa.Table]:
        """The batch as one Arrow table per store table (schema.TABLES)."""
        answers = self.answers
        n = len(answers["line"])
        answers["source"] = [self.source] * n
        answers["file"] = [self.file] * n
        answers["time"] = _times(answers["timestamp"])
        self.errors["source"] = [self.source] * len(self.errors["line"])
        self.errors["file"] = [self.file] * len(self.errors["line"])
        citations = self._keyed(self.citation_keys, self.citations, _CITATION_FIELDS)
        citations["verified"] = [not r for r in citations.get("reasons", ())]
        sentences = self._keyed(self.sentence_keys, self.sentences, _SENTENCE_FIELDS)
        columns = {"answers": answers, "citations": citations, "sentences": sentences, "errors": self.errors}
        return {name: pa.table({f.name: columns[name][f.name] for f in schema}, schema=schema)
                for name, schema in store_schema.TABLES.items()}


def _times(stamps: list) -> pa.Array:
    """Timestamps read as the figures read them (pandas, ISO 8601, UTC), naive UTC; null if unreadable."""
    if not stamps:
        return pa.array([], type=pa.timestamp("us"))
    times = pd.to_datetime(pd.Series(stamps, dtype=object), utc=True, errors="coerce", format="ISO8601")
    naive = times.dt.tz_localize(None)
    return pa.array(naive.to_numpy().astype("datetime64[us]"), type=pa.timestamp("us"), mask=naive.isna().to_numpy())


def check_batches(source: str, file: str, lines: Iterable[Line], options: CheckOptions,
                  rows: int = 5_000) -> Iterator[dict[str, pa.Table]]:
    """The tables of ``lines`` (``storage.lines.numbered_lines``), ``rows`` lines per batch, so
    memory stays flat."""
    batch = Batch(source, file)
    for line in lines:
        batch.add(line, options)
        if batch.rows >= rows:
            yield batch.tables()
            batch = Batch(source, file)
    if batch.rows:
        yield batch.tables()
