"""The review page's sidebar: who is labelling, which answers, blind mode, a calibration sample,
the keys and the labelling guidelines.  The moves are core's (review.navigation)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import streamlit as st
from citecheck.labelling import guidelines
from citecheck.labelling import sample as samples
from citecheck.review import identity as reviewer_identity
from citecheck.review import navigation
from citecheck.review.html import labelled_html, notice_html
from citecheck.review.identity import Identity
from citecheck.review.queue import FILTERS

KEYS = ("Keys: 1-4 label the focused item (1-2 for an uncited sentence) · J/K next/previous item · "
        "N/P next/previous answer · U your queue's next item · Z undo your last label · "
        "M marks unsupported words (arrows move, Shift+arrows extend, Enter marks) · "
        "Enter or Escape leaves a text box")


class Choices(NamedTuple):
    filter_name: str
    blind: bool
    sample_path: Path | None


@st.cache_data(max_entries=4, show_spinner=False)
def guidelines_html(text: str) -> str:
    """The guidelines as HTML, made once per text (rendering the Markdown took 10 ms a key press; the
    first rendering in a process, 0.1-0.2 s, is the server's warm-up's: pages/_server.py)."""
    return guidelines.to_html(text)


def _who(who: Identity, reviewer: str, state, params) -> None:
    if who.signed_in:  # the deployment signs reviewers in (docs/app.md): no name box
        st.html(labelled_html([("Reviewer", reviewer)]))
        if st.button("Sign out"):
            st.logout()
    elif who.by_login:
        from streamlit.auth_util import is_authlib_installed  # Streamlit's check that st.login can work

        problem = reviewer_identity.login_problem(who, is_authlib_installed())
        if problem:  # st.login would only raise
            st.html(notice_html("error", problem))
        elif st.button("Sign in", type="primary"):
            st.login()
    else:
        st.text_input("Reviewer name", key="reviewer_box", on_change=navigation.rename, args=(state, params),
                      help="Required before your first label; kept in the page address (?reviewer=) and the session.")


def show(who: Identity, reviewer: str, state, params, data, rules, rules_error: str | None, folders) -> Choices:
    with st.sidebar:
        _who(who, reviewer, state, params)
        filter_name = st.radio("Show answers", list(FILTERS), key="filter_box", on_change=navigation.refilter,
                               args=(state, params))
        with st.form("jump", border=False):
            wanted = st.text_input("Jump to answer id")
            if st.form_submit_button("Open") and (problem := navigation.jump(state, data, wanted)):
                st.html(notice_html("error", problem))
        blind = st.toggle("Blind mode", key="blind", on_change=navigation.reblind, args=(state, params),
                          help="Hide judge verdicts and other reviewers' labels on an item until you have labelled "
                               "it, so they cannot sway you.")
        sample_path = st.selectbox("Calibration sample", [None, *samples.find(folders)], key="review_sample",
                                   format_func=lambda p: "none" if p is None else p.name,
                                   help="Work through a random sample (citecheck sample): Resume goes to its next "
                                        "unlabelled item, and labels record the sample.")
        st.caption(KEYS)
        with st.expander("Labelling guidelines"):
            if rules is not None:
                st.html(guidelines_html(rules.text))  # Markdown with raw HTML escaped (labelling/guidelines.py)
                st.caption(f"Version {rules.version}: every label records it.")
            else:
                st.html(notice_html("error", f"{rules_error} Labels are saved without a guidelines version."))
    return Choices(filter_name, blind, sample_path)
