"""Failures: how often answers fail their citations, how, since when, for which model or prompt
version, and which answers to look at first.  Every figure comes from core.figures."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st
from citecheck.contract import reasons as R
from citecheck.reports import figures as F
from citecheck.reports import readable as RD
from citecheck.reports import views as V
from citecheck.reports.failures import build
from citecheck.reports.golden import read_golden
from citecheck.reports.rates import percent
from citecheck.review import labels as L
from citecheck.review.html import notice_html
from citecheck.store.sources import StoreSource, TableSource
from citecheck.store.store import StoreError

from pages._common import current_dataset, enter, read_labels, settings, show_notice

enter("failures")

cfg = settings()
st.header("Failed answers")
records, _ = read_labels()
golden = None
if cfg.golden is not None and cfg.golden.is_file():
    golden, golden_errors = read_golden(cfg.golden)
    if golden_errors:
        st.html(notice_html("warning", f"{len(golden_errors)} unreadable line(s) in the golden set "
                                       f"{cfg.golden.name}; first: {golden_errors[0]}"))
k = 5
if cfg.store is not None:  # a checked store: every figure is SQL over its Parquet (no answer in memory)
    try:
        src, store_warnings = StoreSource.of(cfg.store, golden, L.latest(records) if records else {}, k)
    except StoreError as exc:
        st.html(notice_html("error", str(exc)))
        st.stop()
    for w in store_warnings:
        st.html(notice_html("warning", w))
    loaded = f"{src.answers:,} answers from the checked store {cfg.store.name}"
else:
    data = current_dataset()
    show_notice(data)
    if not len(data):
        st.info("No answers loaded, so there is nothing to report. Check the Data page: the configured logs "
                "may be empty, missing or unreadable.")
        st.stop()
    base = F.dataset_table(data)
    table = F.with_labels(base, data.get, L.latest(records)) if records else base
    runs = [F.retrieval_run(r) for r in data.results] if golden is not None else []
    src = TableSource(table, build(table, golden, runs, k))
    loaded = f"{len(table):,} answers from {len(cfg.logs)} log(s)" + (
        " (uploaded log)" if st.session_state.get("use_upload") and st.session_state.get("uploaded") is not None
        else "")
report = src.report
if not src.answers:
    st.info("No answers loaded, so there is nothing to report.")
    st.stop()


def pct(x) -> str:
    return percent(None if x is None or pd.isna(x) else x)


TITLES = {  # tile titles short enough to read; the full definition is in the tile's help
    "failing_answers": "Failing answers", "refusal_rate": "Refused", "citation_failure_rate": "Failed citations",
    "quote_in_source_rate": "Quotes in source", "citation_to_unretrieved_rate": "Cite unretrieved chunk",
    "marker_out_of_range_rate": "Markers out of range", "checksum_failure_rate": "Checksum failures",
    "source_changed_rate": "Source changed", "uncited_sentence_rate": "Uncited sentences",
    "invalid_marker_answers": "Invalid markers", "unsupported_number_answers": "Unsupported numbers",
    "human_not_supported_rate": "Judged not supported", "over_refusal_rate": "Over-refusal",
    "under_refusal_rate": "Under-refusal", "withheld_answers": "Withheld (faithfulness)",
}


def show_figures(figs: list[F.Figure], per_row: int = 4) -> None:
    for start in range(0, len(figs), per_row):
        cols = st.columns(per_row)
        for col, f in zip(cols, figs[start:start + per_row]):
            col.metric(TITLES.get(f.key, f.label), pct(f.rate), help=f"{f.label}: {f.count} of {f.total} {f.unit}",
                       border=True)
            col.caption(f"{f.count:,} of {f.total:,} {f.unit}")


st.caption(loaded)
show_figures(report.headline)
if not src.any_failing() and cfg.store is None and data.errors:
    st.warning("No answer that could be read fails a check, but some of the log could not be read (see above).")
elif not src.any_failing():
    st.success("No answer fails a check: every citation verified, every sentence cited, every number and quote "
               "found in its sources.")

if report.faithfulness is not None:
    with st.expander("Faithfulness scores of the scored answers (withheld below the threshold)"):
        st.dataframe(report.faithfulness[["bin", "answers", "withheld", "share"]], hide_index=True,
                     column_config={"share": st.column_config.NumberColumn(format="percent")})

reasons_tab, model_tab, prompt_tab, time_tab, table_tab, golden_tab, compare_tab = st.tabs(
    ["Reasons", "By model", "By prompt version", "Over time", "Failing answers", "Refusals & retrieval", "Compare"])

with reasons_tab:
    rs = report.reasons
    shown = rs[rs["count"] > 0]
    if shown.empty:
        st.info("No failure reason occurs in the loaded answers.")
    else:
        chart = alt.Chart(shown).mark_bar().encode(
            x=alt.X("count:Q", title="occurrences", axis=alt.Axis(format="d", tickMinStep=1)),
            y=alt.Y("reason:N", sort="-x", title=None, axis=alt.Axis(labelLimit=400)),
            tooltip=["reason", "description", "count", "total", alt.Tooltip("rate:Q", format=".1%"), "answers"],
        )
        st.altair_chart(chart, width="stretch")
    st.dataframe(RD.reasons_view(rs, src.answers), hide_index=True)


def group_tab(frame: pd.DataFrame, column: str, present: bool, what: str) -> None:
    if not present:
        st.info(f"The loaded logs have no {what} field, so there is nothing to break down by {what}. "
                f"Log `{column}` on every answer to see this.")
        return
    long = RD.group_chart_data(frame, column)
    chart = alt.Chart(long).mark_bar().encode(
        x=alt.X("rate:Q", axis=alt.Axis(format="%"), title=None, scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("group:N", title=None, axis=alt.Axis(labelLimit=320)),
        color=alt.Color("group:N", legend=None),
        row=alt.Row("figure:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left", labelLimit=200)),
        tooltip=[alt.Tooltip("group:N", title=what), "figure", alt.Tooltip("share:N", title="rate")],
    ).properties(height=alt.Step(24))
    st.altair_chart(chart)
    st.dataframe(RD.group_view(frame, column, what.capitalize()), hide_index=True)


with model_tab:
    group_tab(report.by_model, "model", report.has_models, "model")
with prompt_tab:
    group_tab(report.by_prompt, "prompt_version", report.has_prompts, "prompt version")

with time_tab:
    freq = st.radio("Per", ["day", "week"], horizontal=True, index=1)
    series = src.over_time("D" if freq == "day" else "W")
    undated = src.undated()
    if series.empty:
        st.info("No answer has a readable timestamp, so there is no trend to show.")
    else:
        chart = alt.Chart(RD.period_chart_data(series)).mark_line(point=True).encode(
            x=alt.X("period:T", title=RD.period_label(freq[0].upper()).lower(),
                    axis=alt.Axis(format=RD.DATE_FORMAT, labelAngle=-30)),
            y=alt.Y("rate:Q", axis=alt.Axis(format="%"), title=None),
            color=alt.Color("figure:N", legend=alt.Legend(title=None, orient="bottom", labelLimit=300)),
            tooltip=[alt.Tooltip("period:T", format=RD.DATE_FORMAT), "figure", alt.Tooltip("share:N", title="rate")])
        st.altair_chart(chart, width="stretch")
        st.dataframe(RD.period_view(series, "D" if freq == "day" else "W"), hide_index=True)
    if undated:
        st.caption(f"{undated} answer(s) without a readable timestamp are not in this chart.")

with table_tab:
    c1, c2, c3, c4 = st.columns(4)
    reason = c1.selectbox("Reason", ["any", *R.ALL_REASONS], key="f_reason")
    model = c2.selectbox("Model", ["any", *src.values("model")], key="f_model")
    prompt = c3.selectbox("Prompt version", ["any", *src.values("prompt_version")], key="f_prompt")
    scope = c4.selectbox("Answers", ["failing only", "all"], key="f_scope")
    d1, d2, d3, d4 = st.columns(4)
    dates = d1.date_input("Date range", value=src.date_range() or (), key="f_dates")
    refused = d2.selectbox("Refused", ["any", "refused", "answered"], key="f_refused")
    human = d3.selectbox("Human label", ["any", "has 'not supported'", "no 'not supported'"], key="f_human")
    labelled = d4.selectbox("Labelled", ["any", "labelled", "unlabelled"], key="f_labelled")
    filters = V.filters(reason, model, prompt, dates, refused, human, labelled, scope)
    shown = src.failing(filters)
    limited = f" (the worst {src.limit:,})" if src.limit is not None and len(shown) >= src.limit else ""
    st.caption(f"{len(shown):,} answer(s){limited}, worst first. Select a row to open it on the review page.")
    view = V.failing_view(shown)
    picked = st.dataframe(
        view, hide_index=True, key="failing_table", on_select="rerun", selection_mode="single-row",
        column_config={"open": st.column_config.LinkColumn("open", display_text="review \u2192")},
    )
    st.download_button("Download this table as CSV", F.to_csv(shown), file_name="failing-answers.csv",
                       mime="text/csv", key="csv")
    rows = picked.selection.rows if picked is not None else []
    if rows:
        answer_id = view.iloc[rows[0]]["answer_id"]
        if st.button("Open the selected answer on the review page", key="open_selected", type="primary"):
            st.session_state.answer_id = answer_id
            st.session_state.focus = 0
            st.switch_page("pages/review.py", query_params={"answer": answer_id})

with golden_tab:
    if golden is None:
        st.info("No golden set loaded. Start the app with `--golden FILE` (or `CITECHECK_GOLDEN`) to see "
                "over- and under-refusal and retrieval hit rate.")
    else:
        refusal_figs = report.refusals.figures()
        show_figures(refusal_figs, per_row=2)
        if report.refusals.over_refused_ids:
            st.html(notice_html("info", "Over-refused: " + ", ".join(report.refusals.over_refused_ids)))
        if report.refusals.under_refused_ids:
            st.html(notice_html("info", "Under-refused: " + ", ".join(report.refusals.under_refused_ids)))
        r = report.retrieval
        c1, c2, c3 = st.columns(3)
        c1.metric(f"hit rate@{r.k}", pct(r.hit_rate), border=True)
        c1.caption(f"{r.hits} of {r.answerable} answerable questions")
        c2.metric("MRR", "n/a" if r.mrr is None else f"{r.mrr:.2f}", border=True)
        c2.caption(f"over {r.answerable} answerable questions")
        c3.metric("unanswerable questions", r.unanswerable, border=True)
        c3.caption("not in hit rate or MRR; "
                   f"{report.refusals.not_in_golden} answer(s) have a question the golden set does not have")
        if r.misses:
            st.subheader("Questions whose answering chunk was missed")
            st.dataframe(V.misses_table(r), hide_index=True)
        else:
            st.success(f"Every answerable question had a correct chunk in its first {r.k}.")

with compare_tab:
    column = st.radio("Compare", ["prompt_version", "model"], horizontal=True, key="cmp_col",
                      format_func=lambda c: c.replace("_", " "))
    values = src.values(column)
    if len(values) < 2:
        st.info(f"The loaded logs have fewer than two values of {column.replace('_', ' ')}; nothing to compare.")
    else:
        a_col, b_col = st.columns(2)
        a = a_col.selectbox("A", values, index=0, key="cmp_a")
        b = b_col.selectbox("B", values, index=1, key="cmp_b")
        st.dataframe(V.compare_table(src.compare(column, a, b), a, b), hide_index=True)
        st.caption("Two-proportion z-test (pooled) of equal rates, two-sided; 95% Wald interval for B - A. "
                   "'Larger than chance' means p < 0.05. With small counts neither is reliable: read the counts.")
