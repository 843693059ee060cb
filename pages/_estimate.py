"""The Judge calibration page's "Estimated rates" section: widgets and layout only; the numbers
and the HTML come from citecheck.judging.estimate and estimate_report (docs/estimate.md)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st
from citecheck.judging import estimate, estimate_report
from citecheck.labelling import sample as calibration_samples
from citecheck.review.html import notice_html

from pages._kept import kept

CONFIDENCES = [0.95, 0.8, 0.9, 0.99]  # the first is the default


def show(records, adjudicated, overlap: int, verdicts, items, run: tuple[str, str], folders) -> None:
    st.subheader("Estimated rates")
    st.caption("The share of not-supported citations (and failing answers) four ways. Valid only when the "
               "labels are a random sample: draw one with `citecheck sample` and choose it here.")
    samples = calibration_samples.find(folders)
    c1, c2, c3 = st.columns(3)
    offered = [None, *samples]
    pick = c1.selectbox("Calibration sample", offered, key="est_sample",
                        format_func=lambda p: "none: all labels" if p is None else p.name,
                        **kept("est_sample", "sample", offered, label=lambda p: p.name))
    confidence = c2.select_slider("Confidence", sorted(CONFIDENCES), key="est_confidence",
                                  **kept("est_confidence", "confidence", CONFIDENCES))
    target = c3.number_input("Target half-width (%)", min_value=0.0, max_value=49.0, value=2.0, step=0.5,
                             key="est_target", help="How many more labels would bring the interval to this; 0: none")
    try:
        sample = calibration_samples.read(pick) if pick is not None else None
        result = estimate.estimate(records, verdicts, items, run[0], run[1], sample, confidence, target / 100 or None,
                                   adjudicated=adjudicated, overlap=overlap)
    except (estimate.EstimateError, calibration_samples.SampleError) as exc:
        st.html(notice_html("info", str(exc)))
        return
    st.html(estimate_report.report_html(result))
    rows = pd.DataFrame([dict(r, rate=estimate.UNITS[rate.unit]) for rate in result.rates for r in estimate_report.table_rows(rate)
                         if r["low"] is not None])
    if rows.empty:
        return
    y = alt.Y("method:N", title=None, sort=[estimate.TITLES[m] for m in estimate.METHODS])
    bars = alt.Chart(rows).mark_rule(strokeWidth=3).encode(
        x=alt.X("low:Q", title="not-supported share", axis=alt.Axis(format="%")), x2="high:Q", y=y)
    dots = alt.Chart(rows).mark_point(filled=True, size=60).encode(
        x="estimate:Q", y=y, tooltip=["method", "estimate", "low", "high", "n", "N"])
    st.altair_chart((bars + dots).facet(row=alt.Row("rate:N", title=None)), width="stretch")
