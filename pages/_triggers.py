"""A custom component's trigger value, read from the session in its callback: the value the browser
sent under ``name`` (components v2 keep a component's state as a mapping or an object with one
attribute per trigger), or None.  The value is untrusted: core checks it (``span_marks.received``,
``review_view.row_choice``)."""

from __future__ import annotations

import streamlit as st


def value(key: str, name: str) -> object:
    state = st.session_state.get(key)
    if state is None:
        return None
    try:
        return state[name]
    except (KeyError, TypeError):
        return getattr(state, name, None)
