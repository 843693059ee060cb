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

import re
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


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _units(text: str, unit: str) -> int:
    if unit == UTF8_BYTES:
        return len(text.encode("utf-8"))
    return len(text.encode("utf-16-le")) // 2


class OffsetMap:
    """Converts offsets in ``unit`` into code-point offsets of ``text``.

    Built once per text in linear time: ASCII counts one unit in every encoding, so only the runs
    of non-ASCII characters are recorded (found by a regex, measured by the codec); a run gets its
    per-character table only when an offset falls inside it.  Each conversion is a binary search.
    """

    __slots__ = ("text", "unit", "_cp", "_cpe", "_at", "_end", "_length", "_tables")

    def __init__(self, text: str, unit: str):
        if unit not in UNITS:
            raise ValueError(f"unknown offset unit {unit!r}; expected one of {', '.join(UNITS)}")
        self.text = text
        self.unit = unit
        # for each non-ASCII run: its code-point start and end, its start and end in units
        self._cp: list[int] = []
        self._cpe: list[int] = []
        self._at: list[int] = []
        self._end: list[int] = []
        self._tables: dict[int, list[int]] = {}
        extra = 0
        if unit != CODE_POINTS and not text.isascii():
            for m in _NON_ASCII.finditer(text):
                s, e = m.span()
                self._cp.append(s)
                self._cpe.append(e)
                self._at.append(s + extra)
                extra += _units(m.group(), unit) - (e - s)
                self._end.append(e + extra)
        self._length = len(text) + extra

    @property
    def length(self) -> int:
        """The text's length in this map's unit."""
        return self._length

    def _table(self, j: int) -> list[int]:
        """Units before each character of run ``j`` (and after its last), from the run's start."""
        table = self._tables.get(j)
        if table is None:
            run = self.text[self._cp[j]:self._cpe[j]]
            table = self._tables[j] = [0, *accumulate(_unit_length(ch, self.unit) for ch in run)]
        return table

    def to_code_point(self, offset: int, side: str = "start") -> int:
        """The code-point offset of ``offset`` (rounded outwards when it falls inside a character)."""
        if offset <= 0:
            return 0
        if offset >= self._length:
            return len(self.text)
        j = bisect_right(self._at, offset) - 1
        if j < 0:
            return offset  # in the ASCII before the first run
        if offset >= self._end[j]:  # in the ASCII after run j
            return self._cpe[j] + offset - self._end[j]
        table = self._table(j)
        local = offset - self._at[j]
        k = bisect_right(table, local) - 1 if side == "start" else bisect_left(table, local)
        return self._cp[j] + k

    def span(self, start: int, end: int) -> tuple[int, int]:
        """``(start, end)`` in code points; an end before its start is kept at the start."""
        s = self.to_code_point(start, "start")
        return s, max(s, self.to_code_point(end, "end"))

    def is_boundary(self, offset: int) -> bool:
        """True when ``offset`` falls between two characters (or at either end) of the text."""
        if offset < 0 or offset > self._length:
            return False
        j = bisect_right(self._at, offset) - 1
        if j < 0 or offset >= self._end[j]:
            return True
        return (offset - self._at[j]) in self._table(j)


def from_code_points(text: str, offset: int, unit: str) -> int:
    """The offset in ``unit`` of code-point offset ``offset`` (the inverse, used by tests and fixtures)."""
    head = text[:offset]
    if unit == UTF8_BYTES:
        return len(head.encode("utf-8"))
    if unit == UTF16_UNITS:
        return len(head.encode("utf-16-le")) // 2
    return len(head)
