"""The span marker under an item's label buttons: once the reviewer's label is Partially or Not
supported, they mark the words of the sentence the chunk does not support, with the mouse or keys
only (pages/span_marker/marker.js lists the keys; docs/labels-format.md, "Marked spans").  Every
change is saved at once as a new label record (citecheck.review.span_marks)."""

from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st
from citecheck.review import span_marks
from citecheck.review.html import focus_token, notice_html

from pages import _triggers as triggers

_HERE = Path(__file__).resolve().parent / "span_marker"
MARKER = st.components.v2.component(
    "citecheck_span_marker",
    css=(_HERE / "marker.css").read_text(encoding="utf-8"),
    js=(_HERE / "marker.js").read_text(encoding="utf-8"),
    isolate_styles=False,  # (class names are prefixed ccsm-; the page's own selection API then sees the text)
)


def _changed(key: str, target, latest, item, answer: str, sentence: tuple[int, int]) -> None:
    spans = span_marks.received(triggers.value(key, "spans"), item, answer, sentence)
    if spans is not None:  # against the label as the store holds it now, not as the run that drew it read it
        st.session_state[f"{key}-notice"] = span_marks.save_latest(target, latest(), item, spans)


def span_marking(where, result, item, label, target, latest) -> None:
    """The marker for ``item`` of the checked answer ``result``, when ``label`` (the reviewer's
    current label of it, or None) may mark words; ``target`` is the labels store and ``latest()``
    reads the reviewer's label of the item as the store holds it when a change is sent."""
    if not span_marks.can_mark(item, label):
        return
    s = result.sentences[item.sentence]
    answer, sentence = result.answer.answer, (s.start, s.end)
    key = f"spans-{focus_token(item.key)}"
    if (why := span_marks.too_long(sentence)) is not None:
        where.html(notice_html("info", why))
        return
    with where.container(key=f"cc-spans-{focus_token(item.key)}"):
        MARKER(key=key, data=span_marks.browser_data(answer, sentence, item, label.spans),
               on_spans_change=functools.partial(_changed, key, target, latest, item, answer, sentence))
        if (notice := st.session_state.pop(f"{key}-notice", None)) is not None:
            st.html(notice_html(*notice))
