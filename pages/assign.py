"""Assign: a lead gives reviewers work (a calibration sample, answer ids or a filter), split evenly or
by share, with a due date; and takes back what a reviewer has left.  Leads only.  The items, the
split and the events are core's (review.assigning, labelling.assignments, review.holds)."""

from __future__ import annotations

import streamlit as st
from citecheck.errors import CitecheckError
from citecheck.labelling import assignments, labels
from citecheck.labelling import sample as samples
from citecheck.review import assigning, holds
from citecheck.review import identity as reviewer_identity
from citecheck.review.html import notice_html, run_token
from citecheck.review.session_state import once

from pages import _roles as team_roles
from pages._common import (
    enter,
    read_label_events,
    read_verdicts,
    review_dataset,
    settings,
    show_notice,
    style,
)

enter("assign")

style()
st.header("Assign work")
role = team_roles.require_lead()
cfg = settings()
state = st.session_state
data = review_dataset()
if cfg.store is None:
    show_notice(data)
events, warnings = read_label_events()
work = holds.Work.of(events)
for w in warnings:
    st.html(notice_html("warning", f"labels file: skipped {w}"))
if flash := state.pop("assign_flash", None):
    st.html(notice_html(*flash))

lead = role.name or reviewer_identity.clean_name(st.text_input("Your name (lead)", key="lead_box"))
how = st.radio("Assign", ["A calibration sample", "Answer ids", "A filter"], horizontal=True, key="assign_how")
try:
    if how == "A calibration sample":
        path = st.selectbox("Sample", samples.find(cfg.folders), format_func=lambda p: p.name, key="assign_sample",
                            help="Samples drawn with citecheck sample into a configured folder.")
        picked = assigning.from_sample(data, samples.read(path)) if path is not None else None
        if path is None:
            st.html(notice_html("info", "No sample file in the configured folders: draw one with citecheck sample."))
    elif how == "Answer ids":
        picked = assigning.from_answers(data, assigning.answer_list(st.text_area("Answer ids", key="assign_ids")))
    else:
        cols = st.columns(3)
        model = cols[0].text_input("Model", key="assign_model")
        prompt = cols[1].text_input("Prompt version", key="assign_prompt")
        reason = cols[2].text_input("Reason code", key="assign_reason")
        cols = st.columns(3)
        verdict = cols[0].text_input("Judge verdict", key="assign_verdict")
        since = cols[1].text_input("Logged since (YYYY-MM-DD)", key="assign_since")
        until = cols[2].text_input("Logged until (YYYY-MM-DD)", key="assign_until")
        given: dict[str, dict[str, str]] = {}
        for v in read_verdicts()[0] if verdict else ():
            given.setdefault(v.judge, {})[v.item] = v.verdict
        if cfg.store is not None:
            raise assigning.WorkError("a filter needs the logs in memory; with a checked store assign a sample or answer ids")
        picked = assigning.from_filter(data, model.strip(), prompt.strip(), reason.strip(), verdict.strip(),
                                       since.strip(), until.strip(), given)
    problem = None
except (CitecheckError, OSError) as exc:
    picked, problem = None, str(exc)

cols = st.columns(3)
reviewers = cols[0].text_input("Reviewers", key="assign_reviewers", placeholder="alice,bob:2",
                               help="Names separated by commas; a share after a colon (bob:2 gets twice alice's).")
due = cols[1].date_input("Due", value=None, key="assign_due")
lock = cols[2].number_input("Lock (minutes)", 1, assignments.MAX_LOCK_MINUTES, None, key="assign_lock",
                            help=f"How long an opened item stays held; empty: the server's {cfg.lock_minutes}.")
if problem:
    st.html(notice_html("error", problem))
elif picked is not None:
    st.html(notice_html("info", f"{len(picked.keys):,} item(s) from {picked.source}"))
    if note := assigning.not_loaded_note(picked.missing):
        st.html(notice_html("warning", note))


drawn = run_token()  # (this drawing of the page: a press of Assign acts once, even called twice)


def _assign() -> None:
    state.assign_flash = once(state, ("assign", drawn), _made)  # (once per press: session_state.once)


def _made() -> tuple[str, str]:
    try:
        if picked is None:
            raise assignments.AssignmentError(problem or "pick the work to assign first")
        made = assignments.make_assignment(picked.keys, assignments.parse_shares(reviewers), lead, picked.source,
                                           due.isoformat() if due else "", int(lock) if lock else None)
        labels.append_event(cfg.labels, made)
    except (CitecheckError, OSError) as exc:
        return "error", f"Not assigned: {exc}"
    return "success", assignments.made_text(made)


st.button("Assign", type="primary", on_click=_assign, disabled=picked is None or not reviewers.strip())

st.subheader("Assignments")
rows = holds.assignment_rows(work)
if not rows:
    st.caption("No assignment yet.")
else:
    st.dataframe(rows, hide_index=True, width="stretch")
    pairs = sorted({(r["assignment"], r["reviewer"]) for r in rows if r["left"]})
    if pairs:
        pair = st.selectbox("Take back what a reviewer has left (back to the pool)", pairs, key="release_pick",
                            format_func=lambda p: f"{p[0]} \u00b7 {p[1]}")

        def _released() -> tuple[str, str]:
            try:
                done = holds.release_all(cfg.labels, work, pair[0], pair[1], lead or "lead")
            except OSError as exc:
                return "error", f"Not released: {exc}"
            return "success", f"Released {len(done):,} item(s) of {pair[1]} back to the pool."

        def _release() -> None:
            state.assign_flash = once(state, ("release", drawn), _released)

        st.button("Release", on_click=_release, disabled=pair is None)
