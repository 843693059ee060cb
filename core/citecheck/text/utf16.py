"""Offsets between Python string indices (code points, the log's unit) and UTF-16 code units (what a
browser's ``String`` and ``Selection`` count).

A character outside the Basic Multilingual Plane (most emoji) is one code point but two UTF-16
units, so every offset after one differs by one per such character.  Combining characters are code
points of their own in both counts.  The conversion is exact for offsets on character boundaries;
a UTF-16 offset between the two halves of a surrogate pair is rounded down to the character's
start (``side="start"``) or up past it (``side="end"``), so a span never cuts a character in two.
"""

from __future__ import annotations

import re
from bisect import bisect_left

_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


def _astral(text: str) -> list[int]:
    """The code-point indices of the characters that take two UTF-16 units."""
    if text.isascii():
        return []
    return [m.start() for m in _ASTRAL.finditer(text)]


def utf16_length(text: str) -> int:
    return len(text) + len(_astral(text))


def to_utf16(text: str, index: int) -> int:
    """The UTF-16 offset of code-point offset ``index`` of ``text`` (clamped to the text)."""
    index = min(max(index, 0), len(text))
    return index + bisect_left(_astral(text), index)


def _from(astral: list[int], length: int, unit: int, side: str) -> int:
    unit = min(max(unit, 0), length + len(astral))
    # the astral characters before code point i each add one unit: the largest i with i + before(i) <= unit
    lo, hi = 0, length
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid + bisect_left(astral, mid) <= unit:
            lo = mid
        else:
            hi = mid - 1
    if side == "end" and lo + bisect_left(astral, lo) < unit:  # inside the pair of character lo
        lo += 1
    return lo


def from_utf16(text: str, unit: int, side: str = "start") -> int:
    """The code-point offset of UTF-16 offset ``unit`` of ``text`` (clamped to the text).  Inside a
    surrogate pair: the character's start (``side="start"``) or its end (``side="end"``)."""
    return _from(_astral(text), len(text), unit, side)


def spans_to_utf16(text: str, spans: list[tuple[int, int]] | tuple[tuple[int, int], ...]) -> list[list[int]]:
    """Code-point spans of ``text`` as UTF-16 ``[start, end]`` pairs (for a browser)."""
    astral = _astral(text)
    return [[a + bisect_left(astral, a), b + bisect_left(astral, b)] for a, b in spans]


def spans_from_utf16(text: str, spans: list[tuple[int, int]] | list[list[int]]) -> list[tuple[int, int]]:
    """UTF-16 spans of ``text`` (from a browser) as code-point spans; a half character counts whole."""
    astral = _astral(text)
    return [(_from(astral, len(text), a, "start"), _from(astral, len(text), b, "end")) for a, b in spans]
