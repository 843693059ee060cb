"""Offset units: turn a provider's offsets into the log's code-point offsets.

The log counts Unicode code points (Python string indices), end exclusive.  Providers count
other units: Gemini counts UTF-8 bytes, a JavaScript client counts UTF-16 code units.  An
importer that guesses puts every highlight after a ``°``, a curly quote or an emoji in the wrong
place, so each importer names its unit and converts through an :class:`OffsetMap`.

An offset that falls inside a character (a byte offset in the middle of a multi-byte sequence)
is not an error here: it is rounded to the start of that character (``side="start"``) or past
it (``side="end"``), and the span check then reports that the text at the offsets is not the
text the provider gave.  Offsets past the end are clamped to the end.  Nothing is dropped.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import accumulate

CODE_POINTS = "code points"
UTF8_BYTES = "UTF-8 bytes"
UTF16_UNITS = "UTF-16 code units"
UNITS = (CODE_POINTS, UTF8_BYTES, UTF16_UNITS)


def _unit_length(ch: str, unit: str) -> int:
    o = ord(ch)
    if unit == UTF8_BYTES:
        return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
    return 2 if o >= 0x10000 else 1


class OffsetMap:
    """Converts offsets in ``unit`` into code-point offsets of ``text``.

    Built once per text in linear time; each conversion is a binary search (the identity for
    ASCII text, or for code points).
    """

    __slots__ = ("text", "unit", "_ends")

    def __init__(self, text: str, unit: str):
        if unit not in UNITS:
            raise ValueError(f"unknown offset unit {unit!r}; expected one of {', '.join(UNITS)}")
        self.text = text
        self.unit = unit
        # _ends[i] = units before character i (so _ends[0] = 0, _ends[len(text)] = total);
        # None when units and code points coincide for this text.
        identity = unit == CODE_POINTS or text.isascii() or (unit == UTF16_UNITS and max(text) < "\U00010000")
        self._ends = None if identity else [0, *accumulate(_unit_length(ch, unit) for ch in text)]

    @property
    def length(self) -> int:
        """The text's length in this map's unit."""
        return len(self.text) if self._ends is None else self._ends[-1]

    def to_code_point(self, offset: int, side: str = "start") -> int:
        """The code-point offset of ``offset`` (rounded outwards when it falls inside a character)."""
        if offset <= 0:
            return 0
        ends = self._ends
        if ends is None:
            return min(offset, len(self.text))
        if offset >= ends[-1]:
            return len(self.text)
        # the character boundary at or before (start) / at or after (end) the offset
        return bisect_right(ends, offset) - 1 if side == "start" else bisect_left(ends, offset)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """``(start, end)`` in code points; an end before its start is kept at the start."""
        s = self.to_code_point(start, "start")
        return s, max(s, self.to_code_point(end, "end"))

    def is_boundary(self, offset: int) -> bool:
        """True when ``offset`` falls between two characters (or at either end) of the text."""
        if offset < 0 or offset > self.length:
            return False
        if self._ends is None:
            return True
        i = bisect_left(self._ends, offset)
        return i < len(self._ends) and self._ends[i] == offset


def from_code_points(text: str, offset: int, unit: str) -> int:
    """The offset in ``unit`` of code-point offset ``offset`` (the inverse, used by tests and fixtures)."""
    head = text[:offset]
    if unit == UTF8_BYTES:
        return len(head.encode("utf-8"))
    if unit == UTF16_UNITS:
        return len(head.encode("utf-16-le")) // 2
    return len(head)
