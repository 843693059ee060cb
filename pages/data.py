"""Data: what is loaded, what could not be read, and uploading a log to review."""

from __future__ import annotations

import streamlit as st
from citecheck.labelling import dataset
from citecheck.review.html import notice_html

from pages._common import current_dataset, enter, read_labels, settings, show_notice

enter("data")

cfg = settings()
st.header("Data")
st.markdown("Configured with `streamlit run app.py -- --log LOG --corpus DIR --labels FILE` or the "
            "`CITECHECK_LOGS`, `CITECHECK_CORPUS`, `CITECHECK_LABELS` environment variables.")
st.table({"setting": ["logs", "corpus", "labels file"],
          "value": [", ".join(str(p) for p in cfg.logs), str(cfg.corpus or "(none: source_changed not checked)"),
                    cfg.shown(cfg.labels)]})

upload = st.file_uploader("Review an uploaded log instead (JSON lines, format version 1)", type=["jsonl", "json"])
if upload is not None:
    st.session_state.uploaded = dataset.load_bytes(upload.name, upload.getvalue(), settings().check_options())
    st.session_state.uploaded_name = upload.name
    st.session_state.use_upload = True
if st.session_state.get("uploaded") is not None:
    st.session_state.use_upload = st.toggle("Use the uploaded log", value=st.session_state.get("use_upload", True))

data = current_dataset()
show_notice(data, data_page=None)
records, warnings = read_labels()
st.metric("Answers loaded", len(data))
st.metric("Label records", len(records))
if data.errors:
    st.subheader(f"{len(data.errors)} unreadable line(s)")
    st.dataframe([e.to_dict() for e in data.errors], hide_index=True)
else:
    st.success("Every line of the loaded logs was readable.")
for w in warnings:
    st.html(notice_html("warning", f"labels file: skipped {w}"))
