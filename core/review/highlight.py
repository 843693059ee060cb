"""Highlight spans of untrusted text as HTML: escape every fragment first, then wrap the spans.

``highlight`` is pure: (text, spans) -> HTML string.  Offsets are code points.  Overlapping
spans are cut at every boundary, so each piece of text is escaped exactly once and marks never
interleave; removing the ``<mark ...>`` and ``</mark>`` tags from the output gives ``escape(text)``.
"""

from __future__ import annotations

import html
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


def closest_passage(quote: str, text: str) -> Closest | None:
    """The passage of ``text`` most like ``quote`` (rapidfuzz partial-ratio alignment).

    For display only, styled as "closest text, not a match": never used to verify a citation.
    """
    if not quote.strip() or not text.strip():
        return None
    a = fuzz.partial_ratio_alignment(quote, text)
    if a is None or a.dest_end <= a.dest_start:
        return None
    return Closest(a.dest_start, a.dest_end, round(a.score, 1))
