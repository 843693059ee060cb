"""Failures: how often answers fail their citations, how, since when, for which model or prompt version,
and which answers to look at first.  Figures: web.failures_source; texts and charts: reports.failures_view."""

from __future__ import annotations

import streamlit as st
from citecheck.labelling import labels as label_store
from citecheck.reports import failures_view, figures, readable, views
from citecheck.review import navigation
from citecheck.review.html import notice_html
from citecheck.web import failures_source

from pages._common import (
    current_dataset,
    enter,
    read_labels,
    review_dataset,
    settings,
    show_notice,
    uploaded_name,
)

enter("failures")

cfg = settings()
st.header("Failed answers")
records, _ = read_labels()
labels = label_store.latest(records) if records else {}
golden, golden_warning = failures_view.golden_set(cfg.golden)
if golden_warning:
    st.html(notice_html("warning", golden_warning))
if cfg.store is not None:  # a checked store: every figure is SQL over its Parquet (no answer in memory)
    opened = failures_source.open_store(cfg, golden, labels, k=failures_view.K)
else:
    data = current_dataset()
    show_notice(data)
    if not len(data):
        st.info(failures_view.NO_ANSWERS + " " + failures_view.SEE_DATA_PAGE)
        st.stop()
    opened = failures_source.open_log(data, golden, labels, cfg, uploaded_name(), failures_view.K)
for notice in opened.notices:
    st.html(notice_html(*notice))
if opened.source is None:
    st.stop()
src = opened.source
report = src.report
if not src.answers:
    st.info(failures_view.NO_ANSWERS)
    st.stop()


def show_tiles(tiles: list[failures_view.Tile], per_row: int = 4) -> None:
    for row in failures_view.in_rows(tiles, per_row):
        for col, t in zip(st.columns(per_row), row):
            col.metric(t.title, t.value, help=t.help or None, border=True)
            col.caption(t.caption)


if opened.inputs is not None:
    st.html(opened.inputs.html())
show_tiles(failures_view.tiles(report.headline))
if clear := failures_view.all_clear(src.any_failing(), opened.unreadable):
    (st.warning if clear[0] == "warning" else st.success)(clear[1])
if (scores := failures_view.faithfulness_view(report)) is not None:
    with st.expander("Faithfulness scores of the scored answers (withheld below the threshold)"):
        st.dataframe(scores, hide_index=True, column_config={"share": st.column_config.NumberColumn(format="percent")})


def reasons() -> None:  # (a table with a bar per count, no chart: this tab is the page's first view)
    if failures_view.occurring(report.reasons).empty:
        st.info(failures_view.NO_REASON)
    st.html(failures_view.reasons_html(report.reasons, src.answers))


def breakdown(frame, column: str, present: bool, what: str) -> None:
    if not present:
        st.info(failures_view.no_group_text(column, what))
        return
    st.altair_chart(failures_view.group_chart(frame, column, what))
    st.dataframe(readable.group_view(frame, column, what.capitalize()), hide_index=True)


def over_time() -> None:
    freq = failures_view.PERIODS[st.radio("Per", list(failures_view.PERIODS), horizontal=True, index=1,
                                          key="f_per", persist_state="page")]
    if (series := src.over_time(freq)).empty:
        st.info(failures_view.NO_TREND)
    else:
        st.altair_chart(failures_view.period_chart(series, freq), width="stretch")
        st.dataframe(readable.period_view(series, freq), hide_index=True)
    if undated := failures_view.undated_text(src.undated()):
        st.caption(undated)


def failing_answers() -> None:
    # two rows of filters; the date range gets two columns' width, so its end date is never clipped
    columns = st.columns(4) + st.columns([2, 1, 1, 1])
    chosen = {c.name: col.date_input(c.label, value=c.dates or (), key=c.key, persist_state="page") if c.is_dates
              else col.selectbox(c.label, list(c.options), key=c.key, persist_state="page")
              for col, c in zip(columns, failures_view.choices(src.values, src.date_range()))}
    wanted = views.filters(**chosen)
    shown = src.failing(wanted)
    st.caption(failures_view.table_caption(len(shown), src.limit, failures_view.matching_any(src, wanted, len(shown))))
    view = views.failing_view(shown)
    picked = st.dataframe(view, hide_index=True, key="failing_table", on_select="rerun", selection_mode="single-row",
                          column_config={c: st.column_config.Column(h, width=failures_view.WIDTHS.get(c))
                                         for c, h in views.FAILING_HEADERS.items()})
    st.download_button("Download this table as CSV", figures.to_csv(shown), file_name="failing-answers.csv",
                       mime="text/csv", key="csv")
    answer_id = failures_view.selected_answer(view, picked.selection.rows if picked is not None else [])
    if answer_id is not None:  # one tick opens the answer, in this tab, at its first failing item
        focus = navigation.open_failing(st.session_state, review_dataset(), answer_id)
        st.switch_page("pages/review.py", query_params={"answer": answer_id, "item": str(focus + 1)})


def refusals_and_retrieval() -> None:
    if golden is None:
        st.info(failures_view.NO_GOLDEN)
        return
    show_tiles(failures_view.tiles(report.refusals.figures()), per_row=2)
    for text in failures_view.refused_ids_texts(report.refusals):
        st.html(notice_html("info", text))
    show_tiles(failures_view.retrieval_tiles(report.retrieval, report.refusals), per_row=3)
    if report.retrieval.misses:
        st.subheader("Questions whose answering chunk was missed")
        st.dataframe(views.misses_table(report.retrieval), hide_index=True)
    else:
        st.success(failures_view.no_miss_text(report.retrieval))


def compare() -> None:
    column = st.radio("Compare", failures_view.COMPARE, horizontal=True, key="cmp_col", persist_state="page",
                      format_func=failures_view.compare_label)
    if len(values := src.values(column)) < 2:
        st.info(failures_view.nothing_to_compare(column))
        return
    a_col, b_col = st.columns(2)
    a = a_col.selectbox("A", values, index=0, key="cmp_a", persist_state="page")
    b = b_col.selectbox("B", values, index=1, key="cmp_b", persist_state="page")
    st.html(failures_view.compare_html(views.compare_table(src.compare(column, a, b), a, b)))
    st.caption(failures_view.COMPARE_NOTE)


# Only the open tab's content runs (a switch reruns the page): a hidden chart or table costs nothing.
# The widgets in a tab keep their values while another tab is open (persist_state="page"; Streamlit
# forgets the state of a widget a run does not draw) and start afresh when the page is left.
model_part, prompt_part = failures_view.breakdowns(report)
parts = (reasons, lambda: breakdown(*model_part), lambda: breakdown(*prompt_part), over_time, failing_answers,
         refusals_and_retrieval, compare)  # in failures_view.TABS's order
for tab, draw in zip(st.tabs(failures_view.TABS, key=failures_view.TAB_KEY, on_change="rerun"), parts):
    if tab.open:
        with tab:
            draw()
