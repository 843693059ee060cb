"""State shared by the pages: settings, the checked answers, the labels file. No logic lives here."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st
from citecheck.contract.errors import CitecheckError
from citecheck.review import dataset, labels
from citecheck.review.html import STYLE, notice_html
from citecheck.web.settings import Settings, load_settings


def enter(page: str) -> None:
    """Run this page through app.py's router.  Opened directly (Streamlit's pages/ discovery on a
    fresh server's first request), hand over to the entry point, which comes back to ``page``."""
    if not st.session_state.get("_citecheck_router"):
        st.switch_page("app.py", query_params={**st.query_params.to_dict(), "goto": page})


APP_ROOT = Path(__file__).resolve().parent.parent  # the checkout: its sample_data/ is the default data


def settings() -> Settings:
    return load_settings(sys.argv[1:], root=APP_ROOT)


def _stamp(paths) -> tuple:
    out = []
    for p in paths:
        try:
            s = p.stat()
            out.append((str(p), s.st_mtime_ns, s.st_size))
        except OSError:
            out.append((str(p), 0, 0))
    return tuple(out)


@st.cache_resource(show_spinner="Checking the answer logs ...", max_entries=4)
def _load(logs: tuple, corpus, casefold: bool, refusals: tuple, _stamp_key: tuple) -> dataset.Dataset:
    return dataset.load(logs, settings().check_options())


def current_dataset() -> dataset.Dataset:
    """The uploaded log if the reviewer chose one, else the configured logs (reloaded when they change)."""
    uploaded = st.session_state.get("uploaded")
    if uploaded is not None and st.session_state.get("use_upload"):
        return uploaded
    cfg = settings()
    try:
        return _load(cfg.logs, cfg.corpus, cfg.casefold, cfg.refusals, _stamp(cfg.logs))
    except CitecheckError as exc:  # a setting names a folder that is not there: say so, on every page
        st.html(notice_html("error", str(exc)))
        st.stop()


def read_labels():
    """All label records and warnings; re-read on every run (the file is appended by other sessions)."""
    return labels.read(settings().labels)


def read_verdicts(path=None):
    """All verdict records and warnings; re-read on every run (a judge run may be appending)."""
    from citecheck.judging import verdicts

    return verdicts.read(path or settings().verdicts)


def style() -> None:
    st.html(STYLE)
