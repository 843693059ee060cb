"""The words of a sentence a reviewer marked as not supported by the cited chunk (a label's ``spans``).

A span is ``(start, end)``: code-point offsets into the **answer text** (the unit of every offset in
the log), end exclusive.  A label's spans are sorted, do not overlap, lie inside the item's
sentence, and only a ``partial`` or ``not_supported`` label has them (docs/labels-format.md,
"Marked spans").  The browser counts UTF-16 units: :func:`from_browser` and :func:`to_browser`
convert at that boundary, relative to the sentence's start.

Marking snaps to words (:func:`words`, :func:`snap`): a word is a run of characters between
white space, without the punctuation at its ends ("2027." marks "2027"), so two reviewers who
select the same words sloppily record the same characters.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence

from citecheck.errors import FieldError
from citecheck.text.utf16 import spans_from_utf16, spans_to_utf16

SPAN_LABELS = ("partial", "not_supported")  # the labels that may mark words
Spans = tuple[tuple[int, int], ...]

_RUN = re.compile(r"\S+")
# a citation marker standing alone ("[1]", "[2, 3].", "[4-5];"): the answer's own reference to a
# chunk, not a claim, so never a word to mark (as a word, "[1" was marked with the word before it)
_MARKER = re.compile(r"\[\d+(?:\s*[,\u2013-]\s*\d+)*\]")


def _punctuation(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


def _mark(ch: str) -> bool:
    return unicodedata.category(ch).startswith("M")


def words(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """The words of ``text[start:end]`` as offsets into ``text``: runs of non-space characters with
    their leading and trailing punctuation left out (a punctuation character that carries a
    combining mark stays, so no character is cut from its mark).  A run of punctuation only is no
    word, nor is a citation marker standing alone (``[1].``)."""
    end = len(text) if end is None else end
    markers = [m.span() for m in _MARKER.finditer(text, start, end)]
    out = []
    for m in _RUN.finditer(text, start, end):
        a, b = m.span()
        while a < b and _punctuation(text[a]) and not (a + 1 < b and _mark(text[a + 1])):
            a += 1
        while a < b and _punctuation(text[b - 1]):
            b -= 1
        if a < b and not _in_marker(markers, a, b):
            out.append((a, b))
    return out


def _in_marker(markers: Sequence[tuple[int, int]], a: int, b: int) -> bool:
    """Whether ``[a, b)`` lies inside one of ``markers`` (sorted spans of citation markers)."""
    at = bisect_right(markers, a, key=lambda m: m[0]) - 1
    return at >= 0 and markers[at][1] >= b


def snap(word_spans: Sequence[tuple[int, int]], start: int, end: int) -> tuple[int, int] | None:
    """The selection ``[start, end)`` grown to whole words (``word_spans``: sorted, as :func:`words`
    gives them): from the start of the first word it touches to the end of the last.  None when it
    touches no word (white space or punctuation only)."""
    if start >= end:
        return None
    first = bisect_right(word_spans, start, key=lambda w: w[1])  # the first word ending after start
    last = bisect_left(word_spans, end, key=lambda w: w[0]) - 1  # the last word starting before end
    if first > last:
        return None
    return word_spans[first][0], word_spans[last][1]


def normalise(spans: Iterable[tuple[int, int]]) -> Spans:
    """Sorted, with overlapping or touching spans merged and empty ones dropped."""
    out: list[tuple[int, int]] = []
    for a, b in sorted((int(a), int(b)) for a, b in spans):
        if a >= b:
            continue
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return tuple(out)


def snap_all(text: str, sentence: tuple[int, int], selections: Iterable[tuple[int, int]]) -> Spans:
    """Selections (answer offsets) clipped to the sentence, snapped to its words and normalised."""
    lo, hi = sentence
    found = words(text, lo, hi)
    snapped = (snap(found, max(a, lo), min(b, hi)) for a, b in selections)
    return normalise(s for s in snapped if s is not None)


def from_browser(text: str, sentence: tuple[int, int], selections: Iterable[Sequence[int]]) -> Spans:
    """Spans the browser sent (UTF-16 offsets into the sentence's text) as answer offsets, snapped
    to words.  Anything that is not a pair of integers is ignored (the browser is not trusted)."""
    lo, hi = sentence
    pairs = [(a, b) for a, b in (tuple(s) for s in selections if isinstance(s, (list, tuple)) and len(s) == 2)
             if type(a) is int and type(b) is int]
    relative = spans_from_utf16(text[lo:hi], pairs)
    return snap_all(text, sentence, [(lo + a, lo + b) for a, b in relative])


def to_browser(text: str, sentence: tuple[int, int], spans: Iterable[tuple[int, int]]) -> list[list[int]]:
    """Answer-offset spans inside the sentence as UTF-16 offsets into the sentence's text."""
    lo, hi = sentence
    return spans_to_utf16(text[lo:hi], [(a - lo, b - lo) for a, b in spans])


def parse_spans(value: object) -> Spans:
    """A label record's ``spans``: a list of ``[start, end]`` integer pairs, sorted, not overlapping.
    :class:`FieldError` names the bad one (``spans[1]``) and says what is expected."""
    if not isinstance(value, list):
        raise FieldError("spans", f"must be a list of [start, end] pairs, got {type(value).__name__}")
    out: list[tuple[int, int]] = []
    for n, pair in enumerate(value):
        name = f"spans[{n}]"
        if not isinstance(pair, list) or len(pair) != 2 or any(type(v) is not int for v in pair):
            raise FieldError(name, f"must be a pair of integers [start, end], got {pair!r}")
        start, end = pair
        if start < 0 or end <= start:
            raise FieldError(name, f"[{start}, {end}] is not a span: expected 0 <= start < end")
        if out and start < out[-1][1]:
            raise FieldError(name, f"[{start}, {end}] starts before the span before it ends ({out[-1][1]}): "
                                   "spans are sorted and do not overlap")
        out.append((start, end))
    return tuple(out)


def check_label(label: str, spans: Spans) -> None:
    """Raises :class:`FieldError` when a label that may not mark words has spans."""
    if spans and label not in SPAN_LABELS:
        raise FieldError("spans", f"a {label!r} label marks no words; only {' and '.join(SPAN_LABELS)} labels have spans")


def outside(spans: Spans, sentence: tuple[int, int], answer_length: int) -> str | None:
    """Why ``spans`` do not fit the item's sentence ``[start, end)`` of an answer of ``answer_length``
    characters (naming the first bad span, ``spans[1]``), or None when they fit."""
    lo, hi = sentence
    for n, (a, b) in enumerate(spans):
        if b > answer_length:
            return f"spans[{n}] [{a}, {b}] ends past the answer ({answer_length} characters)"
        if a < lo or b > hi:
            return f"spans[{n}] [{a}, {b}] is outside the item's sentence (characters {lo}-{hi} of the answer)"
    return None


def marked_text(text: str, spans: Iterable[tuple[int, int]]) -> list[str]:
    """The text of each span."""
    return [text[a:b] for a, b in spans]
