"""The Judge calibration page's disagreements: each item where the judge and the human label
differ, with its sentence and cited chunk, one at a time (judging.calibration_view)."""

from __future__ import annotations

import streamlit as st
from citecheck.judging import calibration_view
from citecheck.review.html import citation_html, disagreement_html, notice_html

from pages._kept import kept

state = st.session_state


def show(report, data, which: str) -> None:
    rows = calibration_view.disagreements(report)
    if not rows:
        st.success("The judge agrees with every human label here.")
        return
    kinds = calibration_view.kind_choices(rows)
    kind = st.selectbox("Human / judge", kinds, key="cal_kind", **kept("cal_kind", "kind", kinds))
    shown = calibration_view.of_kind(rows, kind)
    st.caption(f"{len(shown)} of {len(rows)} disagreement(s)")
    keys = [r.item for r in shown]
    item_change = kept("cal_item", "item", keys)
    drawn = state["cal_item"]  # (kept gave it one of keys): each move steps from the item it was drawn on

    def _step(delta: int, drawn: str) -> None:
        if calibration_view.step_item(state, keys, drawn, delta):
            item_change["on_change"]()

    b1, b2, _ = st.columns([1, 1, 4])
    b1.button("Previous", key="cal_prev", on_click=_step, args=(-1, drawn), use_container_width=True)
    b2.button("Next", key="cal_next", on_click=_step, args=(1, drawn), use_container_width=True)
    pick = st.selectbox("Item", keys, key="cal_item", **item_change)
    row = next(r for r in shown if r.item == pick)
    found = calibration_view.cited_pair(data, pick)
    if found is not None:
        result, s, c = found
        left, right = st.columns([2, 3])
        left.html(disagreement_html(result.answer.question, s.text, row.human, row.judge, row.rationale))
        right.html(citation_html(result, c, whole=True))
        if which == "configured":
            st.page_link("pages/review.py", label="Open this answer on the review page",
                         query_params={"answer": result.answer.answer_id})
    else:
        st.html(notice_html("warning", f"Item {pick} is not in the loaded answers (the log changed since it was labelled)."))
