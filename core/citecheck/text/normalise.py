"""Quote normalisation and offset-preserving search.

The only normalisation: runs of whitespace become one space and ends are trimmed, each
combining sequence is put in NFC form, and (optionally) text is case-folded.  Punctuation is
kept ("5-7 days" stays "5-7 days").  No fuzzy or embedding match is ever accepted here.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Normalised:
    """Normalised text plus, for each of its characters, the source range it came from."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def __reduce__(self):  # pickled by field: a compiled frozen class cannot be set field by field
        return (Normalised, (self.text, self.starts, self.ends))

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """Map ``[start, end)`` in the normalised text back to the original text."""
        return self.starts[start], self.ends[end - 1]


def _is_combining(ch: str) -> bool:
    return unicodedata.combining(ch) != 0 or ch in "\u200d\ufe0f"


def normalise(text: str, casefold: bool = False) -> str:
    """The normalised form of ``text`` (without the offset map).

    Fast path for text already in NFC (nearly all text): whitespace collapsing and case-folding
    are then character-local, so whole-string operations give the same result as the mapped form.
    """
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        out = " ".join(text.split())
        return out.casefold() if casefold else out
    return normalise_with_map(text, casefold).text


def normalise_with_map(text: str, casefold: bool = False) -> Normalised:
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            j = i + 1
            while j < n and text[j].isspace():
                j += 1
            if out:
                out.append(" ")
                starts.append(i)
                ends.append(j)
            i = j
            continue
        j = i + 1
        while j < n and _is_combining(text[j]):
            j += 1
        piece = unicodedata.normalize("NFC", text[i:j]) if j - i > 1 else ch
        if casefold:
            piece = piece.casefold()
        for c in piece:
            out.append(c)
            starts.append(i)
            ends.append(j)
        i = j
    if out and out[-1] == " ":
        out.pop()
        starts.pop()
        ends.pop()
    return Normalised("".join(out), tuple(starts), tuple(ends))


def find_quote(text: str, quote: str, casefold: bool = False, normalised: str | None = None
               ) -> tuple[int, int] | None:
    """Where ``quote`` occurs in ``text`` (first occurrence), as offsets into ``text``, or None.

    Exact substring first; then the normalised forms.  An empty quote is never found.
    ``normalised`` is ``normalise(text, casefold)`` when the caller has it already.
    """
    if not quote.strip():
        return None
    pos = text.find(quote)
    if pos >= 0:
        return pos, pos + len(quote)
    needle = normalise(quote, casefold)
    if needle not in (normalise(text, casefold) if normalised is None else normalised):
        return None
    hay = normalise_with_map(text, casefold)
    pos = hay.text.find(needle)
    if pos < 0:
        return None
    return hay.source_span(pos, pos + len(needle))


def same_text(a: str, b: str, casefold: bool = False) -> bool:
    """True when ``a`` and ``b`` are equal after normalisation."""
    return a == b or normalise(a, casefold) == normalise(b, casefold)
