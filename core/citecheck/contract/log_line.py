"""A log line's common shape, decoded by msgspec straight into typed records (issue #36).

The shape is the common case of format version 1 (docs/log-format.md): only the fields the format
names, marker citations without a locator, offsets as integers.  :data:`DECODER` validates and
builds a :class:`Line` in one C pass, without the dictionaries a JSON parser makes; the caller
(:func:`citecheck.contract.log.fast_answer`) turns it into an ``Answer`` after the range checks.
A line of any other shape (a span citation, a locator, a field the format does not name, a bad
value) fails here and is read by the careful path, which gives its error or its ``extra`` fields:
this path only ever makes the ``Answer`` the careful path makes of the same line, or nothing
(tests/test_log_line.py holds the two equal).  Not in the compiled set: msgspec's ``Struct`` is
a C type that mypyc does not subclass.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, Struct, UnsetType


class LineChunk(Struct, forbid_unknown_fields=True, gc=False, kw_only=True):
    """A chunk as the line gives it; ``start``/``end`` UNSET when left out (null is refused).
    The fields in :class:`~citecheck.contract.log.Chunk`'s order (``msgspec.structs.astuple``)."""

    chunk_id: str | None = None
    document_id: str | None = None
    source: str | None = None
    title: str | None = None
    section: str | None = None
    text: str
    start: int | UnsetType = UNSET
    end: int | UnsetType = UNSET
    checksum: str | None = None
    retrieval_score: float | int | None = None
    rerank_score: float | int | None = None


class LineCitation(Struct, forbid_unknown_fields=True, gc=False, kw_only=True):
    """A marker citation without a locator (a null locator is no locator); the fields in this
    order (``fast_answer`` reads them by position)."""

    kind: Literal["marker"]
    marker: int
    at: int | UnsetType = UNSET
    quote: str | None = None
    quote_start: int | UnsetType = UNSET
    quote_end: int | UnsetType = UNSET
    label: str | None = None
    locator: None = None


class Line(Struct, forbid_unknown_fields=True, gc=False, kw_only=True):
    """The answer's own fields; ``log_version`` exactly the integer 1 (``1.0`` goes the careful way)."""

    log_version: Literal[1]
    answer_id: str
    question: str
    answer: str
    chunks: list[LineChunk]
    citations: list[LineCitation] = []
    timestamp: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    index_snapshot: str | None = None
    refused: bool = False


DECODER = msgspec.json.Decoder(Line)
# What the decoder raises for a line it does not take (bad JSON or another shape): never an error
# of the line itself, which the careful path finds and words.
REFUSED = (msgspec.DecodeError, msgspec.ValidationError)


def decode_line(raw: bytes) -> Line | None:
    """The line as a :class:`Line`, or None when it is not of the common shape."""
    try:
        return DECODER.decode(raw)
    except REFUSED:
        return None
