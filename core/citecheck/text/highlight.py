"""Highlight spans of untrusted text as HTML: escape every fragment first, then wrap the spans.

``highlight`` is pure: (text, spans) -> HTML string.  Offsets are code points.  Overlapping
spans are cut at every boundary, so each piece of text is escaped exactly once and marks never
interleave; removing the ``<mark ...>`` and ``</mark>`` tags from the output gives ``escape(text)``.
"""

from __future__ import annotations

import html
import re
from typing import NamedTuple

from rapidfuzz import fuzz


class Span(NamedTuple):
    start: int
    end: int
    css: str = "cc-quote"


def escape(text: str) -> str:
    """HTML-escape text (``& < > " '``); also neutralises nothing-else: markdown and LaTeX are not
    interpreted by ``st.html``, so ``* _ $ ` `` pass through as literal characters."""
    return html.escape(text, quote=True)


def highlight(text: str, spans: list[Span] | list[tuple[int, int]] | tuple = ()) -> str:
    """``text`` escaped, with each span wrapped in ``<mark class="...">``.

    Spans are clipped to the text; empty ones are dropped.  Where spans overlap, the overlap is
    one mark whose class lists every covering span's class (``cc-quote cc-overlap``).
    """
    clean = []
    for s in spans:
        span = s if isinstance(s, Span) else Span(*s)
        start, end = max(0, span.start), min(len(text), span.end)
        if start < end:
            clean.append(Span(start, end, span.css))
    if not clean:
        return escape(text)
    cuts = sorted({0, len(text), *(s.start for s in clean), *(s.end for s in clean)})
    out = []
    for a, b in zip(cuts, cuts[1:]):
        piece = escape(text[a:b])
        covering = [s.css for s in clean if s.start <= a and b <= s.end]
        if covering:
            css = " ".join(dict.fromkeys(covering)) + (" cc-overlap" if len(covering) > 1 else "")
            out.append(f'<mark class="{escape(css)}">{piece}</mark>')
        else:
            out.append(piece)
    return "".join(out)


def window(text: str, start: int, end: int, context: int = 160) -> tuple[int, int]:
    """A window of about ``context`` characters either side of ``[start, end)``, cut at spaces."""
    ws = max(0, start - context)
    we = min(len(text), end + context)
    if ws > 0:
        space = text.find(" ", ws, start)
        ws = space + 1 if space >= 0 else ws
    if we < len(text):
        space = text.rfind(" ", end, we)
        we = space if space >= 0 else we
    return ws, we


def highlight_window(text: str, start: int, end: int, context: int = 160, css: str = "cc-quote") -> str:
    """The highlighted span with some context, marked with an ellipsis where text was cut."""
    ws, we = window(text, start, end, context)
    body = highlight(text[ws:we], [Span(start - ws, end - ws, css)])
    return ("\u2026" if ws > 0 else "") + body + ("\u2026" if we < len(text) else "")


class Closest(NamedTuple):
    start: int
    end: int
    score: float


MAX_QUOTE_CHARS = 300  # of a quote, aligned for the hint (display only; the check uses all of it)
MAX_REGION_CHARS = 3000  # of a chunk, aligned for the hint: the region with most of the quote's words
_HINT_WORD = re.compile(r"\w{3,}")


def closest_passage(quote: str, text: str) -> Closest | None:
    """The passage of ``text`` most like ``quote`` (rapidfuzz partial-ratio alignment).

    For display only, styled as "closest text, not a match": never used to verify a citation.
    The cost is bounded whatever the sizes: the alignment (quadratic, holding the interpreter
    lock) runs on at most the first :data:`MAX_QUOTE_CHARS` of the quote against at most
    :data:`MAX_REGION_CHARS` of the chunk, the window holding most of the quote's words, found
    in one linear pass.
    """
    if not quote.strip() or not text.strip():
        return None
    q = quote.strip()[:MAX_QUOTE_CHARS]
    lo, hi = hint_region(q, text, MAX_REGION_CHARS)
    a = fuzz.partial_ratio_alignment(q, text[lo:hi])
    if a is None or a.dest_end <= a.dest_start:
        return None
    return Closest(lo + a.dest_start, lo + a.dest_end, round(a.score, 1))


def hint_region(quote: str, text: str, size: int) -> tuple[int, int]:
    """``(start, end)`` of a window of ``text`` at most ``size`` long holding the run of the quote's
    words that is densest over 90% of ``size`` (a tenth is kept as context before it); the whole
    text when it is short enough.  Linear in ``len(text)``."""
    if len(text) <= size:
        return 0, len(text)
    wanted = {w.casefold() for w in _HINT_WORD.findall(quote)}
    hits = [m.start() for m in _HINT_WORD.finditer(text) if m.group().casefold() in wanted]
    margin = size // 10  # context kept before the first hit
    inner = size - margin
    best, best_start, first = 0, 0, 0
    for last, at in enumerate(hits):  # two pointers: hits[first..last] start within `inner` characters
        while at - hits[first] > inner - 1:
            first += 1
        if last - first + 1 > best:
            best, best_start = last - first + 1, hits[first]
    start = max(0, min(best_start - margin, len(text) - size))
    return start, start + size
