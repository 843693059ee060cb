"""The Judge calibration page's "Self-consistency" part: how often a repeated judge changes its own
verdict, and its unstable items (citecheck.judging.consistency; tables from comparison_view)."""

from __future__ import annotations

import streamlit as st
from citecheck.judging import comparison_view, consistency

from pages._judge_comparison import CHEAP_KEYS


@st.cache_data(max_entries=8, show_spinner=False, hash_funcs=CHEAP_KEYS)
def measure(verdicts, run: tuple[str, str], human, split: str) -> consistency.Consistency:
    """``consistency.consistency`` of one run, kept while its inputs stay the same."""
    return consistency.consistency(verdicts, run[0], run[1], human, split)


def show(result: consistency.Consistency) -> None:
    st.subheader("Self-consistency")
    if not result.measured:
        st.caption("Not measured: run `citecheck judge --repeat K` (K at least 2) to see how often this judge "
                   "changes its own verdict.")
        return
    st.caption(f"{len(result.items):,} items with two or more scored runs ({result.runs} runs on most). "
               "The majority verdict breaks ties with the earliest run. Repeats never count in the figures above.")
    cols = st.columns(4)
    for col, (title, value, caption) in zip(cols, comparison_view.consistency_tiles(result)):
        col.metric(title, value, border=True)
        col.caption(caption)
    frame = comparison_view.unstable_frame(result)
    if len(frame):
        st.caption(f"Unstable items, most unstable first: {len(frame):,} (review them first: the Review page's "
                   "filter \"Only unstable judge verdicts\" walks them)")
        st.dataframe(frame, hide_index=True, width="stretch")
    else:
        st.caption("No unstable items: every item got the same verdict in every run.")
