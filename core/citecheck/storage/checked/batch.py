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
from citecheck.contract.log import parse_line
from citecheck.errors import FieldError
from citecheck.reports import figures
from citecheck.storage.checked import schema as store_schema

_COUNT_NAMES = figures._COUNT_COLUMNS[:-2]  # the figures' count columns without labelled, not_supported
_FAITH_AT = _COUNT_NAMES.index("faithfulness")


def line_hash(raw: bytes) -> bytes:
    """The hash that says whether a line changed: blake2b-128 of its bytes without the newline."""
    return hashlib.blake2b(raw.rstrip(b"\n"), digest_size=16).digest()


def read_lines(handle, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int, bytes]]:
    """``(line number from 1, byte offset, raw bytes with newline)`` of each line of a binary
    file object positioned at ``start``, up to the line that starts before ``end``."""
    offset = start
    number = 0
    for raw in handle:
        if end is not None and offset >= end:
            return
        number += 1
        yield number, offset, raw
        offset += len(raw)


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

    def add(self, number: int, offset: int, raw: bytes, options: CheckOptions) -> None:
        """Parse and check one line (blank lines have no row)."""
        if not raw or raw.isspace():
            return
        self.rows += 1
        try:
            answer = parse_line(raw)
        except FieldError as exc:
            self._error(number, offset, raw, exc.field, exc.message)
            return
        self._answer(number, offset, raw, check_answer(answer, options))

    def _error(self, number, offset, raw, field, message) -> None:
        c = self.errors
        for name, value in (("line", number), ("offset", offset), ("length", len(raw.rstrip(b"\n"))),
                            ("line_hash", line_hash(raw)), ("field", field), ("message", message)):
            c[name].append(value)

    def _answer(self, number: int, offset: int, raw: bytes, result: AnswerResult) -> None:
        text, counts = figures.answer_row(result, self.file, number)
        a = result.answer
        c = self.answers
        c["line"].append(number)
        c["offset"].append(offset)
        c["length"].append(len(raw.rstrip(b"\n")))
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


def check_batches(source: str, file: str, lines: Iterable[tuple[int, int, bytes]], options: CheckOptions,
                  rows: int = 5_000) -> Iterator[dict[str, pa.Table]]:
    """The tables of ``lines`` (see ``read_lines``), ``rows`` lines per batch, so memory stays flat."""
    batch = Batch(source, file)
    for number, offset, raw in lines:
        batch.add(number, offset, raw, options)
        if batch.rows >= rows:
            yield batch.tables()
            batch = Batch(source, file)
    if batch.rows:
        yield batch.tables()
