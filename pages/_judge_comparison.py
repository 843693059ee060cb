"""The Judge calibration page's "Compare two judges" part: widgets and layout only; the figures,
the table, the chart and the verdict come from citecheck.judging.comparison and comparison_view."""

from __future__ import annotations

import streamlit as st
from citecheck.judging import comparison, comparison_view
from citecheck.review.html import notice_html

# The cache's key from Python's own hash of the labels and verdicts (frozen dataclasses, hashed by value):
# milliseconds, where Streamlit's default hashing of a few thousand records takes about a second.
CHEAP_KEYS = {list: lambda xs: hash(tuple(xs)), dict: lambda d: hash(frozenset(d.items()))}


@st.cache_data(max_entries=8, show_spinner="Comparing the two runs ...", hash_funcs=CHEAP_KEYS)
def _compare(records, adjudicated, overlap: int, verdicts, a, b, split: str, fingerprints):
    """``comparison.compare``, kept while the labels, verdicts and choices stay the same (a page rerun,
    such as a step through the disagreements, does not bootstrap again)."""
    return comparison.compare(records, verdicts, a, b, split, fingerprints, adjudicated=adjudicated, overlap=overlap)


def _label(run: tuple[str, str]) -> str:
    return f"{run[0]} \u00b7 {run[1]}"


def show(records, adjudicated, overlap: int, verdicts, runs: list, split: str, fingerprints) -> None:
    st.subheader("Compare two judges")
    if len(runs) < 2:
        st.caption("Two judges or prompt versions are needed: run another one above, or "
                   "`citecheck judge --prompt ...` with a new prompt version.")
        return
    c1, c2 = st.columns(2)
    a = c1.selectbox("A (compared against)", runs, index=0, format_func=_label, key="cmp_a")
    b = c2.selectbox("B (B - A)", runs, index=1, format_func=_label, key="cmp_b")
    try:
        result = _compare(records, adjudicated, overlap, verdicts, a, b, split, fingerprints)
    except comparison.ComparisonError as exc:
        st.html(notice_html("info", str(exc)))
        return
    st.html(notice_html(result.verdict_tone, result.verdict))
    st.caption(f"{len(result.keys):,} items both scored and humans labelled. Differences B - A with paired "
               f"intervals (a bootstrap of {result.draws:,} draws; shares at least Newcombe's paired score interval), "
               f"{comparison.LEVEL:.2%} each so that all four hold together at 95%. "
               f"McNemar exact p for accuracy: {result.mcnemar.p:.3g}.")
    left, right = st.columns([3, 2])
    left.dataframe(comparison_view.side_by_side(result), hide_index=True, width="stretch")
    chart = comparison_view.differences_chart(result)
    if chart is not None:
        right.altair_chart(chart, width="stretch")
    st.html(notice_html("info", f"Cost per item: A {result.cost_a.text()}; B {result.cost_b.text()}"))
    st.caption(f"Items where A and B differ: {len(result.differing):,}")
    st.dataframe(comparison_view.differing_frame(result), hide_index=True, width="stretch")
