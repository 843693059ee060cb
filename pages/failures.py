"""Failures: how often answers fail their citations, how, since when, for which model or prompt version,
and which answers to look at first.  Figures: web.failures_source; texts and charts: reports.failures_view."""

from __future__ import annotations

import streamlit as st
from citecheck.reports import failures_view as FV
from citecheck.reports import figures as F
from citecheck.reports import readable as RD
from citecheck.reports import views as V
from citecheck.review import labels as L
from citecheck.review.html import notice_html
from citecheck.web import failures_source as FS

from pages._common import current_dataset, enter, read_labels, settings, show_notice, using_upload

enter("failures")

cfg = settings()
st.header("Failed answers")
records, _ = read_labels()
labels = L.latest(records) if records else {}
golden, golden_warning = FV.golden_set(cfg.golden)
if golden_warning:
    st.html(notice_html("warning", golden_warning))
if cfg.store is not None:  # a checked store: every figure is SQL over its Parquet (no answer in memory)
    opened = FS.open_store(cfg.store, golden, labels, st.session_state.setdefault("_failures_store", FS.Slot()), FV.K)
else:
    data = current_dataset()
    show_notice(data)
    if not len(data):
        st.info(FV.NO_ANSWERS + " " + FV.SEE_DATA_PAGE)
        st.stop()
    opened = FS.open_log(data, golden, labels, len(cfg.logs), using_upload(), FV.K)
for notice in opened.notices:
    st.html(notice_html(*notice))
if opened.source is None:
    st.stop()
src = opened.source
report = src.report
if not src.answers:
    st.info(FV.NO_ANSWERS)
    st.stop()


def show_tiles(tiles: list[FV.Tile], per_row: int = 4) -> None:
    for row in FV.in_rows(tiles, per_row):
        for col, t in zip(st.columns(per_row), row):
            col.metric(t.title, t.value, help=t.help or None, border=True)
            col.caption(t.caption)


st.caption(opened.loaded)
show_tiles(FV.tiles(report.headline))
if clear := FV.all_clear(src.any_failing(), opened.unreadable):
    (st.warning if clear[0] == "warning" else st.success)(clear[1])
if (scores := FV.faithfulness_view(report)) is not None:
    with st.expander("Faithfulness scores of the scored answers (withheld below the threshold)"):
        st.dataframe(scores, hide_index=True, column_config={"share": st.column_config.NumberColumn(format="percent")})

reasons_tab, model_tab, prompt_tab, time_tab, table_tab, golden_tab, compare_tab = st.tabs(FV.TABS)

with reasons_tab:
    shown = FV.occurring(report.reasons)
    if shown.empty:
        st.info(FV.NO_REASON)
    else:
        st.altair_chart(FV.reasons_chart(shown), width="stretch")
    st.dataframe(RD.reasons_view(report.reasons, src.answers), hide_index=True)

for tab, (frame, column, present, what) in zip((model_tab, prompt_tab), FV.breakdowns(report)):
    with tab:
        if not present:
            st.info(FV.no_group_text(column, what))
            continue
        st.altair_chart(FV.group_chart(frame, column, what))
        st.dataframe(RD.group_view(frame, column, what.capitalize()), hide_index=True)

with time_tab:
    freq = FV.PERIODS[st.radio("Per", list(FV.PERIODS), horizontal=True, index=1)]
    if (series := src.over_time(freq)).empty:
        st.info(FV.NO_TREND)
    else:
        st.altair_chart(FV.period_chart(series, freq), width="stretch")
        st.dataframe(RD.period_view(series, freq), hide_index=True)
    if undated := FV.undated_text(src.undated()):
        st.caption(undated)

with table_tab:
    chosen = {c.name: col.date_input(c.label, value=c.dates or (), key=c.key) if c.is_dates
              else col.selectbox(c.label, list(c.options), key=c.key)
              for col, c in zip(st.columns(4) + st.columns(4), FV.choices(src.values, src.date_range()))}
    shown = src.failing(V.filters(**chosen))
    st.caption(FV.table_caption(len(shown), src.limit))
    view = V.failing_view(shown)
    picked = st.dataframe(view, hide_index=True, key="failing_table", on_select="rerun", selection_mode="single-row",
                          column_config={"open": st.column_config.LinkColumn("open", display_text="review \u2192")})
    st.download_button("Download this table as CSV", F.to_csv(shown), file_name="failing-answers.csv",
                       mime="text/csv", key="csv")
    answer_id = FV.selected_answer(view, picked.selection.rows if picked is not None else [])
    if answer_id is not None and st.button("Open the selected answer on the review page", key="open_selected",
                                           type="primary"):
        st.session_state.answer_id, st.session_state.focus = answer_id, 0
        st.switch_page("pages/review.py", query_params={"answer": answer_id})

with golden_tab:
    if golden is None:
        st.info(FV.NO_GOLDEN)
    else:
        show_tiles(FV.tiles(report.refusals.figures()), per_row=2)
        for text in FV.refused_ids_texts(report.refusals):
            st.html(notice_html("info", text))
        show_tiles(FV.retrieval_tiles(report.retrieval, report.refusals), per_row=3)
        if report.retrieval.misses:
            st.subheader("Questions whose answering chunk was missed")
            st.dataframe(V.misses_table(report.retrieval), hide_index=True)
        else:
            st.success(FV.no_miss_text(report.retrieval))

with compare_tab:
    column = st.radio("Compare", FV.COMPARE, horizontal=True, key="cmp_col", format_func=FV.compare_label)
    if len(values := src.values(column)) < 2:
        st.info(FV.nothing_to_compare(column))
    else:
        a_col, b_col = st.columns(2)
        a = a_col.selectbox("A", values, index=0, key="cmp_a")
        b = b_col.selectbox("B", values, index=1, key="cmp_b")
        st.dataframe(V.compare_table(src.compare(column, a, b), a, b), hide_index=True)
        st.caption(FV.COMPARE_NOTE)
