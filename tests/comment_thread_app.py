"""A test-only app for tests/test_comments_browser.py, run as ``streamlit run tests/comment_thread_app.py
-- SETTINGS`` until the review page draws comment threads itself: one item's thread (``pages._comments.show``)
with a button that labels the item, and the real Disagreements page.  ``?thread=`` names the item,
``?reviewer=`` the reviewer, ``?blind=off`` turns blind mode off (on when absent, as on the review page)."""

from pathlib import Path

import streamlit as st
from citecheck.labelling import labels
from citecheck.labelling.items import items_of

from pages import _comments
from pages._common import current_dataset, identity, read_label_events, settings, style

ROOT = Path(__file__).resolve().parent.parent


def _label(item, reviewer: str) -> None:
    labels.append(settings().labels, labels.make_label(item, "supported", reviewer))


def thread() -> None:
    style()
    key = st.query_params.get("thread", "")
    who = identity().name
    answer = key.rsplit("#", 2)[0]
    item = next(i for i in items_of(current_dataset().get(answer)) if i.key == key)
    events, _ = read_label_events()
    labelled = (key, who) in labels.latest(events)
    st.header("Thread")
    st.button("Label it Supported", on_click=_label, args=(item, who), disabled=labelled)
    _comments.show(key, events, who, st.query_params.get("blind") != "off", labelled)


st.session_state["_citecheck_router"] = True
st.navigation([st.Page(thread, title="Thread", url_path="thread", default=True),
               st.Page(ROOT / "pages" / "disagreements.py", title="Disagreements", url_path="disagreements")]).run()
