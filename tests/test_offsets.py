"""Offset units: a provider's offsets in its own unit select the same characters once converted."""

import json

import pytest
from citecheck.importers import cohere, gemini
from citecheck.importers.offsets import CODE_POINTS, UTF8_BYTES, UTF16_UNITS, OffsetMap, from_code_points
from hypothesis import given
from hypothesis import strategies as st

# Text rich in what breaks unit guesses: °, curly quotes, CJK, emoji (4 UTF-8 bytes, 2 UTF-16 units),
# combining marks, and plain ASCII.
ALPHABET = st.sampled_from(list("ab .,7°“”‘’–—éü好奇号会议室") + ["🚀", "🍰", "👩‍🔬", "e\u0301", "\U0001d11e"])
TEXT = st.lists(ALPHABET, min_size=0, max_size=40).map("".join)


@st.composite
def text_and_span(draw):
    text = draw(TEXT)
    i = draw(st.integers(0, len(text)))
    j = draw(st.integers(i, len(text)))
    return text, i, j


@pytest.mark.parametrize("unit", [UTF8_BYTES, UTF16_UNITS, CODE_POINTS])
@given(case=text_and_span())
def test_converted_offsets_select_the_same_substring(unit, case):
    text, i, j = case
    offsets = OffsetMap(text, unit)
    a, b = from_code_points(text, i, unit), from_code_points(text, j, unit)
    assert offsets.span(a, b) == (i, j)
    assert text[slice(*offsets.span(a, b))] == text[i:j]
    assert offsets.is_boundary(a) and offsets.is_boundary(b)


@pytest.mark.parametrize("unit", [UTF8_BYTES, UTF16_UNITS])
@given(case=text_and_span(), nudge=st.integers(1, 3))
def test_an_offset_inside_a_character_rounds_outwards(unit, case, nudge):
    text, i, _ = case
    offsets = OffsetMap(text, unit)
    a = min(from_code_points(text, i, unit) + nudge, offsets.length)
    s, e = offsets.span(a, a)
    # the selected characters cover unit a, and start and end on character boundaries
    assert from_code_points(text, s, unit) <= a <= from_code_points(text, e, unit)
    assert e - s <= 1 and (e > s) == (not offsets.is_boundary(a))


def test_units_differ_on_the_characters_that_matter():
    text = "−78 °C “MMRTG” 好 🚀x"
    at = text.index("x")
    assert from_code_points(text, at, CODE_POINTS) == 18
    assert from_code_points(text, at, UTF16_UNITS) == 19  # the emoji is a surrogate pair
    assert from_code_points(text, at, UTF8_BYTES) == 30  # − ° “ ” 好 are 2-3 bytes, the emoji 4
    assert OffsetMap(text, UTF8_BYTES).to_code_point(30) == at
    assert OffsetMap(text, UTF8_BYTES).length == len(text.encode())
    with pytest.raises(ValueError, match="unknown offset unit"):
        OffsetMap(text, "bytes")


def test_offsets_past_the_end_are_clamped():
    offsets = OffsetMap("°C", UTF8_BYTES)
    assert offsets.span(1, 99) == (0, 2) and offsets.span(5, 2) == (2, 2)


# --- through the importers: what the review page highlights is what the provider meant -------


@given(case=text_and_span(), prefix=TEXT)
def test_gemini_byte_offsets_highlight_the_segment(case, prefix):
    text, i, j = case
    answer = prefix + text
    i, j = i + len(prefix), j + len(prefix)
    segment = {"text": answer[i:j], "endIndex": from_code_points(answer, j, UTF8_BYTES)}
    if i:  # zero fields are omitted, as the API does
        segment["startIndex"] = from_code_points(answer, i, UTF8_BYTES)
    resp = {"candidates": [{"content": {"parts": [{"text": answer}]}, "groundingMetadata": {
        "groundingChunks": [{"web": {"uri": "https://example.org", "title": "example.org"}}],
        "groundingSupports": [{"segment": segment, "groundingChunkIndices": [0]}]}}]}
    [c] = gemini.convert(None, json.loads(json.dumps(resp)), 1).citations
    assert (c.answer_start, c.answer_end) == (i, j)
    assert c.locator["span_check"] == "ok"


@given(case=text_and_span())
def test_cohere_character_offsets_highlight_the_citation(case):
    text, i, j = case
    resp = {"message": {"content": [{"type": "text", "text": text}], "citations": [
        {"start": i, "end": j, "text": text[i:j], "sources": [{"type": "document", "id": "d", "document": {"text": "x"}}]}]}}
    [c] = cohere.convert(None, resp, 1).citations
    assert text[c.answer_start:c.answer_end] == text[i:j] and c.locator["span_check"] == "ok"


def test_gemini_offsets_read_as_characters_would_be_caught():
    """The unit guess this module exists to avoid: code-point offsets in a Gemini body."""
    answer = "Gale “crater” is −78 °C. 好奇号 has 110 W."
    i = answer.index("好")
    resp = {"candidates": [{"content": {"parts": [{"text": answer}]}, "groundingMetadata": {
        "groundingChunks": [{"web": {"uri": "u"}}],
        "groundingSupports": [{"segment": {"startIndex": i, "endIndex": len(answer), "text": answer[i:]},
                               "groundingChunkIndices": [0]}]}}]}
    [c] = gemini.convert(None, resp, 1).citations
    assert c.locator["span_check"] == "mismatch"
    assert c.locator["span_found"] != answer[i:]
