"""The checked store's tables, format version 1 (docs/store-format.md).

A store is a folder: ``store.json`` (the version, and per log its id, path, check options and
part files) and four tables of Parquet files, one folder per table and per log::

    answers/log-<id>/part-<n>.parquet      one row per answer
    citations/log-<id>/part-<n>.parquet    one row per citation
    sentences/log-<id>/part-<n>.parquet    one row per sentence
    errors/log-<id>/part-<n>.parquet       one row per unreadable line

Every row carries its log's ``source`` id and the byte ``offset`` of its line, so a row joins to
its answer and the answer's line can be read back from its log.  The answer columns are the
figures' table (``citecheck.reports.figures.COLUMNS``, without the label counts), so SQL over
them computes exactly what the pandas figures compute.
"""

from __future__ import annotations

import pyarrow as pa

from citecheck.contract import reasons

STORE_VERSION = 2  # what a new store is written as
# The versions this citecheck reads and checks into, each as it is (a version 1 store stays one),
# and the hash each keeps of a line's bytes (``line_hash``): version 2 differs from 1 only there,
# xxh3-128 computed 14 times as fast as blake2b-128 (issue #36: a sixth of what writing the store
# cost beyond a plain check went to hashing its lines).
LINE_HASHES = {1: "blake2b-128", 2: "xxh3-128"}

_LINE = [
    pa.field("source", pa.string(), nullable=False),  # the log's id (store.json)
    pa.field("file", pa.string(), nullable=False),  # the log's path as given
    pa.field("line", pa.int64(), nullable=False),  # 1-based line number
    pa.field("offset", pa.int64(), nullable=False),  # byte offset of the line's first byte
]

ANSWERS = pa.schema([
    *_LINE,
    pa.field("length", pa.int64(), nullable=False),  # bytes of the line, newline excluded
    pa.field("line_hash", pa.binary(16), nullable=False),  # of those bytes, by the store's version (LINE_HASHES)
    pa.field("answer_id", pa.string()),
    pa.field("question", pa.string()),
    pa.field("model", pa.string()),  # "(none)" when the line logs no model
    pa.field("prompt_version", pa.string()),  # "(none)" when the line logs none
    pa.field("timestamp", pa.string()),  # as logged
    pa.field("time", pa.timestamp("us")),  # timestamp read as UTC (null when unreadable)
    pa.field("refused", pa.bool_()),
    pa.field("ok", pa.bool_()),
    pa.field("failing", pa.bool_()),
    pa.field("citations", pa.int64()),
    pa.field("failed", pa.int64()),
    pa.field("with_quote", pa.int64()),
    pa.field("quote_in_source", pa.int64()),
    pa.field("sentences", pa.int64()),
    pa.field("uncited", pa.int64()),
    pa.field("multi_claim", pa.int64()),
    pa.field("invalid_markers", pa.int64()),
    pa.field("unsupported_number", pa.bool_()),
    pa.field("problems", pa.int64()),
    *[pa.field(code, pa.int64()) for code in reasons.ALL_REASONS],  # occurrences of each reason code
    pa.field("withheld", pa.bool_()),
    pa.field("faithfulness", pa.float64()),  # faithfulness score, null when not scored
    pa.field("reasons", pa.list_(pa.string())),  # the codes that occur, in canonical order
    pa.field("invalid_marker_list", pa.list_(pa.int64())),
    pa.field("chunk_ids", pa.list_(pa.string())),  # retrieved chunk ids in prompt order ("" when none)
    pa.field("review_items", pa.int64()),  # the answer's review items (labelling.items.item_count); null in older parts
    pa.field("not_verifiable", pa.int64()),  # citations neither verified nor failed (Tally.not_verifiable); null in older parts
])

CITATIONS = pa.schema([
    *_LINE,
    pa.field("answer_id", pa.string()),
    pa.field("index", pa.int64()),
    pa.field("kind", pa.string()),
    pa.field("marker", pa.int64()),
    pa.field("label", pa.string()),
    pa.field("answer_start", pa.int64()),
    pa.field("answer_end", pa.int64()),
    pa.field("sentence", pa.int64()),
    pa.field("chunk_index", pa.int64()),
    pa.field("chunk_id", pa.string()),
    pa.field("quote", pa.string()),
    pa.field("quote_start", pa.int64()),
    pa.field("quote_end", pa.int64()),
    pa.field("verified", pa.bool_()),
    pa.field("reasons", pa.list_(pa.string())),
])

SENTENCES = pa.schema([
    *_LINE,
    pa.field("answer_id", pa.string()),
    pa.field("index", pa.int64()),
    pa.field("start", pa.int64()),
    pa.field("end", pa.int64()),
    pa.field("text", pa.string()),
    pa.field("citations", pa.list_(pa.int64())),
    pa.field("uncited", pa.bool_()),
    pa.field("refusal", pa.bool_()),
    pa.field("multi_claim", pa.bool_()),
    pa.field("reasons", pa.list_(pa.string())),
    pa.field("unsupported_numbers", pa.list_(pa.string())),
    pa.field("unsupported_quotes", pa.list_(pa.string())),
])

ERRORS = pa.schema([
    *_LINE,
    pa.field("length", pa.int64(), nullable=False),
    pa.field("line_hash", pa.binary(16), nullable=False),
    pa.field("field", pa.string()),
    pa.field("message", pa.string()),
])

TABLES = {"answers": ANSWERS, "citations": CITATIONS, "sentences": SENTENCES, "errors": ERRORS}

# Columns written without Parquet's dictionary encoding: nearly every value differs (offsets, hashes,
# ids, texts), so a dictionary only costs time and, once zstd has run, bytes (issue #36: the parts
# of bench_store.py's log were 11% smaller and written faster).  Every other column repeats a few
# values (log, model, counts, reason codes, positions within an answer) and keeps its dictionary.
PLAIN = frozenset({"line", "offset", "length", "line_hash", "answer_id", "question", "quote", "text"})


def dictionary_columns(schema: pa.Schema) -> list[str]:
    """The columns of a table written with a dictionary (all but ``PLAIN``)."""
    return [name for name in schema.names if name not in PLAIN]
