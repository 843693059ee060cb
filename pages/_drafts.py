"""Text typed in a box and not yet used (a comment not sent, a note not yet saved with a label)
outlives the box: Streamlit drops a widget's state in a run that does not draw it, so moving to
another answer and back emptied the box.  A box keeps its text here on each change, and is given
it again when it is drawn anew."""

from __future__ import annotations

import streamlit as st

DRAFTS = "text_drafts"  # widget key -> the text last typed in it


def restore(key: str, fallback: str = "") -> None:
    """Before drawing the box ``key``: when Streamlit holds no state for it, give it its draft;
    with no draft (nothing typed in it yet), ``fallback`` (what the box stands for: a saved note)."""
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
