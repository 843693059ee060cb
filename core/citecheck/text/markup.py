"""Untrusted text (anything from a log, a label or a text box) made safe for the places it is shown.

- :func:`md_literal`: for Streamlit widgets that read Markdown (headers, captions, labels,
  ``st.write``): every Markdown, LaTeX and emoji-shortcode character is backslash-escaped, so
  ``**bold**``, ``[a](b)`` and ``$x^2$`` show as typed.  Right-to-left text is isolated (U+2068
  ... U+2069) so that it cannot reorder the fields around it.
- :func:`review_link`: the review page's URL for an answer id, encoded so that any id
  (``q&a=1``, ``#``, ``/``, ``%``, spaces, non-ASCII) opens that answer and no other.
"""

from __future__ import annotations

import re
from urllib.parse import quote

# CommonMark lets a backslash escape any ASCII punctuation; these are the ones Streamlit's Markdown
# (with LaTeX ``$``, emoji ``:name:`` and HTML) could read as formatting.
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#!|~<>$:&])")
# ... and these only where a line starts, where they would begin a list ("- x", "+ x", "1. x", "1) x").
_LIST_START = re.compile(r"^([-+]|\d+[.)])")
_NEWLINES = re.compile(r"[\r\n]+")
_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\u202b\u202e\u2067]")
FSI, PDI = "\u2068", "\u2069"  # first-strong isolate ... pop directional isolate


def md_literal(text: object) -> str:
    """``text`` as literal characters in a Markdown widget (on one line)."""
    value = _NEWLINES.sub(" ", str(text))
    value = _MARKDOWN.sub(r"\\\1", value)
    value = _LIST_START.sub(lambda m: m.group()[:-1] + "\\" + m.group()[-1], value)
    if _RTL.search(value):
        value = FSI + value + PDI
    return value


DEFAULT_PAGE = "review"  # the router's default page, which Streamlit serves at the app's root


def review_link(answer_id: str, page: str = DEFAULT_PAGE) -> str:
    """The relative URL of ``page`` opened on ``answer_id`` (``./?answer=q%26a%3D1`` for the review
    page).  The default page is linked at the root, where Streamlit serves it: ``/review?...`` is a
    hidden page of the router that sends the browser on to the root (one more run)."""
    path = "./" if page == DEFAULT_PAGE else page
    return f"{path}?answer={quote(answer_id, safe='')}"
