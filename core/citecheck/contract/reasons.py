"""The stable reason codes the checker reports, in the order it reports them.

Codes are part of the report format: never rename one; add new ones at the end.
Each description is the sentence the UI and the text report show to people.
"""

from __future__ import annotations

# Citation-level: a citation with any of these is not verified, and is not shown as a footnote.
UNRETRIEVED_SOURCE = "unretrieved_source"
MARKER_OUT_OF_RANGE = "marker_out_of_range"
MISSING_SOURCE_METADATA = "missing_source_metadata"
CHECKSUM_MISMATCH = "checksum_mismatch"
SOURCE_CHANGED = "source_changed"
QUOTE_MISSING = "quote_missing"
QUOTE_NOT_FOUND = "quote_not_found"
OFFSET_MISMATCH = "offset_mismatch"
SPAN_MISMATCH = "span_mismatch"

# Sentence-level: the sentence says something its verified sources do not contain.
NUMBER_NOT_IN_SOURCE = "number_not_in_source"
QUOTED_TEXT_NOT_IN_SOURCE = "quoted_text_not_in_source"

CITATION_REASONS = (
    UNRETRIEVED_SOURCE,
    MARKER_OUT_OF_RANGE,
    MISSING_SOURCE_METADATA,
    CHECKSUM_MISMATCH,
    SOURCE_CHANGED,
    QUOTE_MISSING,
    QUOTE_NOT_FOUND,
    OFFSET_MISMATCH,
    SPAN_MISMATCH,
)
SENTENCE_REASONS = (NUMBER_NOT_IN_SOURCE, QUOTED_TEXT_NOT_IN_SOURCE)
# Codes added later go at the end, whatever their level, so existing columns keep their place.
ALL_REASONS = CITATION_REASONS[:-1] + SENTENCE_REASONS + (SPAN_MISMATCH,)

DESCRIPTIONS = {
    UNRETRIEVED_SOURCE: "cites a chunk or document that was not among this answer's retrieved chunks",
    MARKER_OUT_OF_RANGE: "the marker number is outside 1..n for the n retrieved chunks",
    MISSING_SOURCE_METADATA: "the cited chunk has no chunk id, source or checksum, so it cannot be traced",
    CHECKSUM_MISMATCH: "the logged chunk text does not hash to its logged checksum",
    SOURCE_CHANGED: "the source document has changed since the answer was logged",
    QUOTE_MISSING: "no quoted text to highlight, so the citation cannot be shown as verified",
    QUOTE_NOT_FOUND: "the quoted text is not in the cited chunk",
    OFFSET_MISMATCH: "the quoted text is in the chunk, but not at the offsets given",
    SPAN_MISMATCH: "the answer text at the citation's offsets is not the text the provider gave for it",
    NUMBER_NOT_IN_SOURCE: "a number in the sentence appears in none of its verified sources",
    QUOTED_TEXT_NOT_IN_SOURCE: "text in quotation marks is not verbatim in any verified source",
}



def describe(code: str, chunks: int | None = None) -> str:
    """The reason's words for one citation of an answer that retrieved ``chunks`` chunks: as
    :data:`DESCRIPTIONS`, with the count filled in where the words need it (a marker out of range:
    "outside 1..5 for the 5 retrieved chunks"); the general words when ``chunks`` is None."""
    if code == MARKER_OUT_OF_RANGE and chunks is not None:
        if chunks == 0:
            return "the marker number points at no chunk: none were retrieved"
        if chunks == 1:
            return "the marker number is not 1, and only 1 chunk was retrieved"
        return f"the marker number is outside 1..{chunks} for the {chunks} retrieved chunks"
    return DESCRIPTIONS[code]


_ORDER = {code: i for i, code in enumerate(ALL_REASONS)}


def ordered(codes: set[str] | list[str]) -> tuple[str, ...]:
    """Reason codes in their canonical order, without duplicates."""
    return tuple(sorted(set(codes), key=_ORDER.__getitem__))
