"""Text typed in a box and not yet used (a comment not sent, a note not yet saved with a label)
outlives the box: Streamlit drops a widget's state in a run that does not draw it, so moving to
another answer and back emptied the box.  A box keeps its text here on each change, and is given
it again when it is drawn anew.

The box's ``on_change`` is not enough: a message that arrives while the box's change runs (a key
pressed right after Escape) can stop that callback before it keeps the text, and the next run
sees no change to call it for (CI: a note typed, N then P, and the box empty).  So each run of a
page that draws such boxes first keeps the text of every box drawn before (:func:`keep_drawn`):
Streamlit still holds it at the start of the run, and drops it only at the end of one that does
not draw the box."""

from __future__ import annotations

import streamlit as st

DRAFTS = "text_drafts"  # widget key -> the text last typed in it
BOXES = "text_draft_boxes"  # the boxes drawn with a draft (restore) whose text Streamlit may still hold


def restore(key: str, fallback: str = "") -> None:
    """Before drawing the box ``key``: when Streamlit holds no state for it, give it its draft;
    with no draft (nothing typed in it yet), ``fallback`` (what the box stands for: a saved note)."""
    st.session_state.setdefault(BOXES, set()).add(key)
    typed = st.session_state.get(DRAFTS, {})
    if key in typed:
        if key not in st.session_state and typed[key]:
            st.session_state[key] = typed[key]
    elif fallback and not st.session_state.get(key):
        st.session_state[key] = fallback


def keep(key: str) -> None:
    """The box's ``on_change``: keep what it holds now."""
    st.session_state.setdefault(DRAFTS, {})[key] = st.session_state.get(key) or ""


def forget(key: str) -> None:
    """The box's text was used (a comment sent): it is no draft any more."""
    st.session_state.get(DRAFTS, {}).pop(key, None)


def keep_drawn() -> None:
    """At the top of a page's run: keep the text of each box drawn before that Streamlit still
    holds (what ``keep`` would have kept, had its call not been cut short)."""
    boxes = st.session_state.get(BOXES)
    if not boxes:
        return
    typed = st.session_state.setdefault(DRAFTS, {})
    held = [key for key in list(boxes) if key in st.session_state]  # (a copy: another run's restore may add one)
    boxes.intersection_update(held)  # (in place: the set stays small)
    for key in held:
        text = st.session_state.get(key) or ""
        if text or key in typed:  # (an untouched empty box keeps its fallback)
            typed[key] = text
