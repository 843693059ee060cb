"""The review page's search box and filters, in the sidebar: what the reviewer asks, and the queue
it leaves with its count.  What matches is core's (review.search on a log in memory,
storage.checked.search_index on a checked store); this part lays out the widgets."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from html import escape

import streamlit as st
from citecheck.contract import reasons
from citecheck.contract.item_keys import LABEL_TEXT
from citecheck.errors import CitecheckError
from citecheck.review import search as searching
from citecheck.review.html import notice_html
from citecheck.web import search_facts
from citecheck.web.answer_walk import store_walk

ANY = ""
STATUS_TEXT = {"verified": "Verified", "failed": "Failed", "not_verifiable": "Not verifiable",
               "uncited": "Uncited sentence"}
COMMENT_TEXT = {"open": "Has an open thread", "resolved": "Threads all resolved", "none": "No thread"}
HELP = ("Words are matched whole, in any case, in the question, the answer, the retrieved chunks and the "
        'label notes; every word must match; put a phrase in "quotes".')


FILTERS_OPEN = "search_filters_open"  # the Filters expander's state (drawn open or closed)
KEPT = "search_filters_kept"  # the filters' values while the expander is closed: {widget key: value}


def _pick(label: str, options: Sequence[str], key: str, text=None) -> str:
    """A select box whose first choice is "any" (the values shown as plain text)."""
    choices = [ANY, *options]
    _restore(key, choices)
    return st.selectbox(label, choices, key=key,
                        format_func=lambda v: "any" if v == ANY else (text or {}).get(v, v))


def _restore(key: str, choices: Sequence | None = None) -> None:
    """A filter drawn again after the expander was closed starts at the value it had (Streamlit
    forgets the state of a widget a run did not draw); a value no longer offered is dropped."""
    kept = st.session_state.get(KEPT, {})
    if key not in st.session_state and key in kept and (choices is None or kept[key] in choices):
        st.session_state[key] = kept[key]


def _filters(facts: searching.Facts, data, reviewers: Sequence[str] | None) -> dict:
    """The filters' values: drawn (in the Filters expander) only while it is open, so a closed one
    costs a run nothing (eleven select boxes: about a fifth of the review page's widgets, each
    copied by Streamlit on every run and drawn by the browser); while closed, the values they had."""
    kept = st.session_state.get(KEPT, {})
    box = st.expander("Filters", key=FILTERS_OPEN, on_change="rerun")  # (a label that changed would close it)
    if not box.open:  # (the filters set stay on, and a line says how many)
        if said := searching.filters_on_text(sum(1 for key in FILTER_KEYS if kept.get(key))):
            st.html(f'<p class="search-count">{escape(said)}</p>')
        return {key: kept.get(key, False if key == "search_unstable" else ANY) for key in FILTER_KEYS}
    with box:
        values = {
            "search_model": _pick("Model", _values(data, "model"), "search_model"),
            "search_prompt": _pick("Prompt version", _values(data, "prompt_version"), "search_prompt"),
            "search_reason": _pick("Reason code", reasons.ALL_REASONS, "search_reason"),
            "search_status": _pick("Mechanical status", searching.STATUSES, "search_status", STATUS_TEXT),
            "search_judge": _pick("Judge run", sorted(facts.verdicts), "search_judge"),
            "search_verdict": _pick("Judge verdict", ("supported", "partial", "not_supported"), "search_verdict",
                                    LABEL_TEXT),
            "search_label": _pick("Human label", (*LABEL_TEXT, searching.NO_LABEL), "search_label",
                                  {**LABEL_TEXT, searching.NO_LABEL: "Not labelled"}),
            "search_reviewer": _pick("Labelled by", sorted({who for _, who in facts.labels}) if reviewers is None
                                     else reviewers, "search_reviewer"),
            "search_assigned": _pick("Assigned to", sorted({w for ws in facts.assigned.values() for w in ws}),
                                     "search_assigned"),
            "search_assignment": _pick("Assignment", sorted(set(facts.assignment_of.values())), "search_assignment"),
            "search_comments": _pick("Comments", searching.COMMENT_STATES, "search_comments", COMMENT_TEXT),
        }
        _restore("search_unstable")
        values["search_unstable"] = st.checkbox("Only unstable judge verdicts", key="search_unstable")
    st.session_state[KEPT] = values
    return values


FILTER_KEYS = ("search_model", "search_prompt", "search_reason", "search_status", "search_judge", "search_verdict",
               "search_label", "search_reviewer", "search_assigned", "search_assignment", "search_comments",
               "search_unstable")  # in searching.Search's order, after its text


def _index():
    """A store's search index (imported for a store only: web.answer_walk says why)."""
    from citecheck.storage.checked import search_index

    return search_index


def _values(data, column: str) -> list[str]:
    if store_walk(data) is not None:
        return _index().values(data, column)
    return searching.values(data, column)


def chosen(data, facts: searching.Facts, reviewers: Sequence[str] | None = None) -> searching.Search:
    """Draw the search box and the filters (in the current container) and return what they ask;
    ``reviewers``: who has a label that counts (made from ``facts`` when not given)."""
    text = st.text_input("Search", key="search_text", max_chars=2000, help=HELP)
    values = _filters(facts, data, reviewers)
    return searching.Search(text, *(values[key] for key in FILTER_KEYS))


def run(data, search: searching.Search, facts: searching.Facts, version: Hashable | None) -> searching.Found:
    """The search's result, kept in the session while the search and ``version`` (the caller's
    stamp of ``facts``: say the labels' count) stay the same; ``None`` runs it every time."""
    kept = st.session_state.get("search_found")
    if version is not None and kept is not None and kept[0] == (search, version) and (
            store_walk(data) is None or _index().is_kept(data, kept[1])):
        return kept[1]
    if store_walk(data) is not None:
        index = _index()
        with st.spinner("Searching (the first search of a store builds its index)..."):
            found = index.search_store(data, search, facts, build_limit=index.BUILD_ON_PAGE)
    else:
        found = searching.search_dataset(data, search, facts)
    st.session_state["search_found"] = ((search, version), found)
    return found


def show(data, facts: searching.Facts = searching.Facts(), version: Hashable | None = None,
         blind_for: str | None = None, reviewers: Sequence[str] | None = None) -> searching.Found | None:
    """Draw the search box and filters in the sidebar and say how many answers and items match;
    the result is the queue (None when nothing is asked: the page's own queue stands).  With
    ``blind_for`` (blind mode: the reviewer), it searches only what that reviewer may see
    (``search_facts.as_seen_by``)."""
    with st.sidebar:
        missing = _index().unbuilt(data) if store_walk(data) is not None else None
        if missing is not None:  # (a big store's index is built by citecheck store index, not by a page run)
            st.text_input("Search", key="search_text_unavailable", disabled=True, help=HELP)
            st.html(notice_html("warning", str(missing)))
            return None
        try:
            search = chosen(data, facts, reviewers)
        except searching.SearchError as exc:
            st.html(notice_html("error", str(exc)))
            return None
        if search.empty:
            return None
        if blind_for is not None:
            facts = search_facts.as_seen_by(facts, blind_for)
            version = None if version is None else (version, "blind", blind_for)
        try:
            found = run(data, search, facts, version)
        except CitecheckError as exc:  # a store whose log is gone or damaged: said, and the queue stands
            st.html(notice_html("error", f"Search: {exc}"))
            return None
        st.html(f'<p class="search-count">{escape(found.summary)}</p>')
        if found.dropped:
            st.html(notice_html("warning", f"Only the first {searching.MAX_TERMS} words and phrases are searched; "
                                           f"{found.dropped} more were left out."))
    return found
