"""The Judge calibration page's "Alignment over time" part: each run's figures by week of its
verdicts or by guidelines version of the labels (citecheck.judging.alignment; chart from comparison_view)."""

from __future__ import annotations

import streamlit as st
from citecheck.judging import alignment, comparison_view

from pages._judge_comparison import CHEAP_KEYS

BY = {"week": "Week of the verdicts", "guidelines": "Guidelines version of the labels"}


@st.cache_data(max_entries=8, show_spinner="Measuring each run by week and guidelines version ...",
               hash_funcs=CHEAP_KEYS)
def _points(records, adjudicated, overlap: int, verdicts, split: str, fingerprints):
    return alignment.alignment(records, verdicts, split, fingerprints, adjudicated=adjudicated, overlap=overlap,
                               draws=500)


def show(records, adjudicated, overlap: int, verdicts, split: str, fingerprints) -> None:
    st.subheader("Alignment over time")
    by = st.radio("Group by", list(BY), format_func=BY.get, horizontal=True, key="align_by")
    points = _points(records, adjudicated, overlap, verdicts, split, fingerprints)
    chart = comparison_view.alignment_chart(points, by)
    if chart is None:
        st.caption("No labelled item has a scored verdict yet.")
        return
    st.altair_chart(chart)
    st.dataframe(comparison_view.alignment_frame(points, by), hide_index=True, width="stretch")
