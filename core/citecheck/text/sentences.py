"""Split an answer into sentences with their offsets.

Rules (see docs/checks.md):
- a sentence ends after ``.``, ``!`` or ``?`` (plus any closing quotes or brackets) followed by
  whitespace or the end of the text, and at every line break;
- no split after a known abbreviation (Mr., Dr., e.g., i.e., U.S., ...), nor inside quoted text,
  nor when the next word starts with a lower-case letter or a digit;
- decimals, prices and section numbers (3.5%, $4.50, 4.2.1) never split, since no space follows the dot;
- citation markers that follow the full stop (``... days. [2] Next``) belong to the sentence before.
"""

from __future__ import annotations

import bisect
import re
from typing import Final, NamedTuple

ABBREVIATIONS = frozenset(
    """mr mrs ms mx dr prof sr jr st mme mlle mmes messrs rev hon gen col capt lt sgt sen rep gov pres
    vs cf fig figs no nos sec secs art vol vols pp ch approx dept est inc ltd co corp jan feb mar apr
    jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun e.g i.e a.m p.m u.s u.k u.n e.u
    ph.d m.d b.a m.a et al""".split()
)

# A full stop (or ! ?), any closing quotes/brackets, then whitespace, a marker or the end.
# Written to start with one character class, which the regex engine scans for quickly (five
# times faster than the plain form ``[.!?]+[closers]*(?=[\s\[]|$)|\r\n|\n|\r``, which a
# property test holds it equal to).
_END: Final = re.compile(r"[.!?\r\n](?:(?<=[.!?])[.!?]*[\"'\u201d\u2019)]*(?=[\s\[]|$)|(?<=\r)\n?|(?<=\n))")
# One citation marker: [3], [1, 3] or a labelled [S1]. Every marker regex is built from this.
MARKER = r"\[[A-Za-z]{0,3}\d+(?:\s*,\s*[A-Za-z]{0,3}\d+)*\]"
_MARKERS: Final = re.compile(rf"[ \t]*(?:{MARKER}[ \t]*)+")
_QUOTE: Final = re.compile('["\u201c\u201d]')
_ACRONYM: Final = re.compile(r"^(?:[A-Za-z]\.){2,}$")
MARKER_ONLY = re.compile(rf"^(?:\s*{MARKER})+\s*$")

# True when this module runs compiled (core/citecheck/text/compiled.py): a few loops over characters are then
# walked in code instead of searched by regex, which is faster compiled and slower in Python.
# The checker's modules are compiled or not together, so they ask this one.
COMPILED: Final = not __file__.endswith(".py")


class Sentence(NamedTuple):  # a NamedTuple: built six times per answer, and cheaper than a dataclass
    index: int  # type: ignore[assignment]  # a field, not tuple.index
    start: int
    end: int
    text: str


# No abbreviation or acronym is longer than this: the word before a full stop is looked for only
# this far back, so that a text with no space in it (``"x.\nx.\n..."``) is split in linear time.
_LONGEST_WORD: Final = 32


def _word_before(text: str, pos: int) -> str:
    """The whitespace-delimited word that ends at ``pos``, without opening brackets or quotes
    ("" when it is longer than any abbreviation)."""
    lo = max(0, pos - _LONGEST_WORD)
    words = text[lo:pos].split()
    if not words or text[pos - 1].isspace():
        return ""
    if len(words) == 1 and lo > 0 and not text[lo - 1].isspace() and not text[lo].isspace():
        return ""  # the word goes on before the window: longer than any abbreviation
    return words[-1].lstrip("([{\"'\u201c\u2018").lower()


def _is_abbreviation(text: str, dot: int) -> bool:
    word = _word_before(text, dot)
    return word in ABBREVIATIONS or ("." in word and bool(_ACRONYM.match(word + ".")))


def _blanks_end(text: str, pos: int) -> int:
    """Where the spaces and tabs from ``pos`` end."""
    n = len(text)
    while pos < n and text[pos] in " \t":
        pos += 1
    return pos


def _ends(text: str) -> list[int]:
    """Offsets at which sentences end (exclusive), in order."""
    has_quotes = '"' in text or "\u201c" in text or "\u201d" in text  # (C-speed test; the regex scan is rarely needed)
    quotes = [m.start() for m in _QUOTE.finditer(text)] if has_quotes else []
    q = 0
    inside = False
    ends: list[int] = []
    for dot, end in _end_spans_scan(text) if COMPILED else [m.span() for m in _END.finditer(text)]:
        first = text[dot]
        if first in "\r\n":
            while q < len(quotes) and quotes[q] < end:
                q += 1
            inside = False  # a line break closes any open quotation
            ends.append(dot)
            continue
        while q < len(quotes) and quotes[q] < end:
            ch = text[quotes[q]]
            inside = (not inside) if ch == '"' else (ch == "\u201c")
            q += 1
        if inside:
            continue
        if (first == "." and dot and text[dot - 1].isalpha()  # only a word can be an abbreviation
                and text.count(".", dot, end) == 1 and _is_abbreviation(text, dot)):
            continue
        after = _blanks_end(text, end)
        if after < len(text) and (text[after].islower() or text[after].isdigit()):
            continue  # the next word goes on the sentence
        if after < len(text) and text[after] == "[":  # (markers start with one, after any blanks)
            markers = _MARKERS.match(text, end)
            if markers:
                end = markers.end()
        ends.append(end)
    return ends


def digit_at(text: str, i: int) -> bool:
    """``text[i]`` is a decimal digit, as ``\\d`` says (ASCII 0-9 or any other Unicode decimal)."""
    c = ord(text[i])
    return 48 <= c <= 57 or (c > 127 and text[i].isdecimal())


def digits_end(text: str, j: int) -> int:
    """Where the run of decimal digits (``\\d``) from ``j`` ends."""
    n = len(text)
    while j < n and digit_at(text, j):
        j += 1
    return j


def _spaces_end(text: str, j: int) -> int:
    """Where the run of whitespace (``\\s``) from ``j`` ends."""
    n = len(text)
    while j < n and (ord(text[j]) == 32 or text[j].isspace()):
        j += 1
    return j


def marker_end(text: str, i: int, letters: int = 3) -> int:
    """Where the citation marker that opens at ``text[i] == "["`` ends, or -1 when none opens
    there: :data:`MARKER` matched at ``i`` by a walk over the characters (``letters=0``: the
    checker's plain ``[1, 2]`` form).  What the compiled build runs instead of the regex; a
    property test holds the two equal.  The walk needs no backtracking: letters, digits, spaces,
    commas and ``]`` are disjoint, so whatever the regex could give back cannot end a marker."""
    n = len(text)
    j = i + 1
    while True:
        k = j
        while k < n and k - j < letters and (65 <= ord(text[k]) <= 90 or 97 <= ord(text[k]) <= 122):
            k += 1
        end = digits_end(text, k)
        if end == k:
            return -1  # no digit
        if end < n and ord(text[end]) == 93:  # ]
            return end + 1
        k = _spaces_end(text, end)
        if k >= n or ord(text[k]) != 44:  # ,
            return -1
        j = _spaces_end(text, k + 1)


def marker_spans(text: str, letters: int = 3) -> list[tuple[int, int]]:
    """The spans of every marker in ``text``, as :func:`marker_end` walks them (each ``[`` found by
    ``str.find``): what the regex's ``finditer`` gives, for the compiled build."""
    out: list[tuple[int, int]] = []
    i = text.find("[")
    while i >= 0:
        end = marker_end(text, i, letters)
        if end < 0:
            i = text.find("[", i + 1)
        else:
            out.append((i, end))
            i = text.find("[", end)
    return out


_CLOSERS: Final = "\"'\u201d\u2019)"  # (as in _END)


def _end_spans_scan(text: str) -> list[tuple[int, int]]:
    """The spans of ``_END.finditer(text)`` by one walk over the characters (what the compiled build
    runs; a property test holds the two equal): a ``.``, ``!`` or ``?``, any more of them, any
    closing quotes or brackets, then whitespace, ``[`` or the end; or a line break (``\\r\\n`` as one)."""
    out: list[tuple[int, int]] = []
    n = len(text)
    if not ("!" in text or "?" in text or "\r" in text or "\n" in text):
        # Full stops only (nearly every answer): each found by ``str.find``, not a walk of every character.
        i = text.find(".")
        while i >= 0:
            j = i + 1
            while j < n and ord(text[j]) == 46:
                j += 1
            while j < n and text[j] in _CLOSERS:
                j += 1
            if j == n or ord(text[j]) == 91 or text[j].isspace():
                out.append((i, j))
                i = text.find(".", j)
            else:
                i = text.find(".", i + 1)
        return out
    i = 0
    while i < n:
        c = ord(text[i])
        if c == 46 or c == 33 or c == 63:  # . ! ?
            j = i + 1
            while j < n and (ord(text[j]) == 46 or ord(text[j]) == 33 or ord(text[j]) == 63):
                j += 1
            while j < n and text[j] in _CLOSERS:
                j += 1
            # (no backtracking can help the regex: what it could give back is neither space nor "[")
            if j == n or ord(text[j]) == 91 or text[j].isspace():
                out.append((i, j))
                i = j
            else:
                i += 1
        elif c == 13:  # \r, with a \n after it
            j = i + 2 if i + 1 < n and ord(text[i + 1]) == 10 else i + 1
            out.append((i, j))
            i = j
        elif c == 10:
            out.append((i, i + 1))
            i += 1
        else:
            i += 1
    return out


def split_sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` with code-point offsets; surrounding whitespace is not included."""
    out: list[Sentence] = []
    start = 0
    merged: list[int] = []  # sentences that marker-only lines extended: their text is cut at the end
    for end in [*_ends(text), len(text)]:
        if end < start:
            continue
        # text[start:end].strip() and where it sits, by walking its ends (one string made, not three)
        s = start
        while s < end and text[s].isspace():
            s += 1
        e = end
        while e > s and text[e - 1].isspace():
            e -= 1
        start = end
        if s == e:
            continue
        piece = text[s:e]
        if out and piece[0] == "[" and MARKER_ONLY.match(piece):
            prev = out[-1]  # (its text is cut once, below: a run of marker-only lines stays linear)
            out[-1] = tuple.__new__(Sentence, (prev.index, prev.start, e, prev.text))
            if not merged or merged[-1] != prev.index:
                merged.append(prev.index)
            continue
        out.append(tuple.__new__(Sentence, (len(out), s, e, piece)))  # (as Sentence(...), without a call)
    for i in merged:
        x = out[i]
        out[i] = tuple.__new__(Sentence, (x.index, x.start, x.end, text[x.start:x.end]))
    return out


def sentence_at(sentences: list[Sentence], starts: list[int], pos: int) -> int | None:
    """Index of the sentence containing offset ``pos`` (``starts`` is their start offsets)."""
    i = bisect.bisect_right(starts, pos) - 1
    if i >= 0 and pos < sentences[i].end:
        return i
    return None
