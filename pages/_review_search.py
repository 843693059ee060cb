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


def _pick(label: str, options: Sequence[str], key: str, text=None) -> str:
    """A select box whose first choice is "any" (the values shown as plain text)."""
    return st.selectbox(label, [ANY, *options], key=key,
                        format_func=lambda v: "any" if v == ANY else (text or {}).get(v, v))


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
    with st.expander("Filters"):
        model = _pick("Model", _values(data, "model"), "search_model")
        prompt = _pick("Prompt version", _values(data, "prompt_version"), "search_prompt")
        reason = _pick("Reason code", reasons.ALL_REASONS, "search_reason")
        status = _pick("Mechanical status", searching.STATUSES, "search_status", STATUS_TEXT)
        judge = _pick("Judge run", sorted(facts.verdicts), "search_judge")
        verdict = _pick("Judge verdict", ("supported", "partial", "not_supported"), "search_verdict", LABEL_TEXT)
        label = _pick("Human label", (*LABEL_TEXT, searching.NO_LABEL), "search_label",
                      {**LABEL_TEXT, searching.NO_LABEL: "Not labelled"})
        reviewer = _pick("Labelled by", sorted({who for _, who in facts.labels}) if reviewers is None else reviewers,
                         "search_reviewer")
        assigned = _pick("Assigned to", sorted({w for ws in facts.assigned.values() for w in ws}), "search_assigned")
        assignment = _pick("Assignment", sorted(set(facts.assignment_of.values())), "search_assignment")
        comments = _pick("Comments", searching.COMMENT_STATES, "search_comments", COMMENT_TEXT)
        unstable = st.checkbox("Only unstable judge verdicts", key="search_unstable")
    return searching.Search(text, model, prompt, reason, status, judge, verdict, label, reviewer, assigned,
                            assignment, comments, unstable)


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
