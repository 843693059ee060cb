"""Data: what the app is serving (every setting), the figures' inputs and headline, what could not
be read, and uploading a log to review."""

from __future__ import annotations

import pandas as pd
import streamlit as st
from citecheck.labelling import dataset
from citecheck.labelling import labels as label_store
from citecheck.reports import failures_view
from citecheck.review.html import notice_html
from citecheck.web import failures_source, serving

from pages._common import current_dataset, enter, identity, read_labels, settings, show_notice, uploaded_name

enter("data")

cfg = settings()
st.header("Data")
records, warnings = read_labels()
labels = label_store.latest(records) if records else {}
golden, golden_warning = failures_view.golden_set(cfg.golden)
if cfg.store is not None:  # the store is what every page serves: its figures, its logs, its unreadable lines
    opened = failures_source.open_store(cfg, golden, labels, k=failures_view.K)
    store_logs = opened.source.query.store.logs if opened.source is not None else []
    errors = opened.source.unreadable() if opened.source is not None else []
else:
    data = current_dataset()
    show_notice(data, data_page=None)
    opened = failures_source.open_log(data, golden, labels, cfg, uploaded_name(), failures_view.K)
    store_logs, errors = None, list(data.errors)
for notice in opened.notices:
    st.html(notice_html(*notice))
st.html(notice_html("info", serving.answers_come_from(cfg, store_logs, uploaded_name() if cfg.store is None else None)))
if opened.inputs is not None:
    st.html(opened.inputs.html())
if opened.source is not None and opened.source.answers:
    headline = {f.key: f for f in opened.source.report.headline}
    tiles = failures_view.tiles([headline[k] for k in ("failing_answers", "citation_failure_rate") if k in headline])
    cols = st.columns(4)
    cols[0].metric("Answers", f"{opened.source.answers:,}", border=True)
    cols[1].metric("Unreadable lines", f"{len(errors):,}", border=True)
    for col, t in zip(cols[2:], tiles):
        col.metric(t.title, t.value, border=True)
        col.caption(t.caption)
st.metric("Labels in effect (undone ones left out)", f"{len(records):,}")

if not identity().by_login:
    st.html(notice_html("info", "No sign-in is configured, so everyone is a lead: anyone may adjudicate, assign "
                                "work and see the team's figures (docs/app.md, Roles)."))
st.subheader("Settings")
st.caption(serving.how_to_set())
st.dataframe(pd.DataFrame(serving.setting_rows(cfg, store_logs, identity().source in ("login", "signed-out"))),
             hide_index=True, width="stretch")

if cfg.store is None:
    upload = st.file_uploader("Review an uploaded log instead (JSON lines, format version 1)", type=["jsonl", "json"])
    if upload is not None and st.session_state.get("uploaded_id") != upload.file_id:  # a new file: read once
        st.session_state.uploaded = dataset.load_bytes(upload.name, upload.getvalue(), settings().check_options())
        st.session_state.uploaded_name, st.session_state.uploaded_id = upload.name, upload.file_id
        st.session_state.use_upload = True
        st.rerun()  # (this page's figures and unreadable lines above were drawn before it arrived)
    if st.session_state.get("uploaded") is not None:  # (its callback runs before the page: the figures above follow it)
        st.toggle("Use the uploaded log", value=st.session_state.get("use_upload", True), key="_use_upload_switch",
                  on_change=lambda: st.session_state.update(use_upload=st.session_state["_use_upload_switch"]))
else:
    st.caption("Uploading a log is for a server that reads logs: this one serves a checked store.")

if errors:
    st.subheader(f"{len(errors):,} unreadable line(s)")
    st.dataframe([e.to_dict() for e in errors[:10_000]], hide_index=True)
else:
    st.success("Every line of the loaded logs was readable.")
for w in warnings:
    st.html(notice_html("warning", f"labels file: skipped {w}"))
