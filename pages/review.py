"""Review: each sentence beside its cited chunks, quotes highlighted by offset; label support.
The place, the moves, the queue and what each item shows are built in core (review.navigation,
review.label_actions, review.review_view, web.walk); this page and its two parts (_review_sidebar,
_review_items) lay out the widgets."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import streamlit as st
from citecheck.labelling.comments import Comment, Resolve
from citecheck.labelling.labels import Label, Retraction
from citecheck.review import holds, keypresses, label_actions, navigation, review_view
from citecheck.review import html as review_html
from citecheck.review.html import notice_html
from citecheck.review.reconnect import reconnect_script, session_token
from citecheck.review.session_state import ReviewState
from citecheck.web import search_facts
from citecheck.web.walk import ReviewWalk, read_sample

from pages import _common as common
from pages import _review_items as review_items
from pages import _review_search as review_search
from pages import _review_sidebar as review_sidebar

common.enter("review")

common.style()
common.script_frame(keypresses.installer_html(), "keyqueue")  # the same on every run: drawn once
data = common.review_dataset()  # a checked store's answers are read one at a time
common.show_notice(data)
if not len(data):
    st.info("No answers to review. Check the Data page: the configured logs may be empty or unreadable.")
    st.stop()

label_state = common.label_state()  # read on from where the last run left off (web.label_cache)
events, label_warnings = label_state.events, label_state.errors  # labels, retractions (undo), adjudications, team events
current = label_state.current  # the labels that count (retracted ones left out), latest per (item, reviewer)
rules, rules_error = common.guidelines()
state, params = st.session_state, st.query_params
session = ReviewState(state)

identity = common.identity  # who is labelling (also inside the callbacks below)
who = identity()
reviewer = navigation.settle(state, params, who)
choices = review_sidebar.show(who, reviewer, state, params, data, rules, rules_error, common.settings().folders)

sample, sample_error = read_sample(choices.sample_path)
if sample_error:
    st.html(notice_html("error", sample_error))
cfg = common.settings()
work = holds.for_run(cfg.labels, events, current, reviewer, datetime.now(timezone.utc), cfg.lock_minutes,
                     common.holds_scan(str(cfg.labels)))
threads_state = common.label_figure(label_state, "thread_states", lambda s: search_facts.thread_states(s.events),
                                    kinds=(Comment, Resolve))  # kept until a comment or a resolve is added
facts = search_facts.facts_of(current, common.search_verdict_facts(), threads_state, work.given.assignees,
                              work.given.by)
found = review_search.show(data, facts, version=(label_state.version, len(common.read_verdicts()[0])),
                           blind_for=reviewer if choices.blind else None,
                           reviewers=common.label_figure(label_state, "reviewers",  # (kept until a label comes or goes)
                                                         lambda s: sorted({who for _, who in s.current}),
                                                         kinds=(Label, Retraction)))
walk = replace(ReviewWalk.of(data, sample, choices.filter_name, current, reviewer, cfg.overlap, work, cfg.lock_minutes,
                             found.answers if found is not None else None),
               figures=common.label_cache())  # the team's labels and progress, kept between runs
judged = common.judged_by_item()  # item key -> the latest verdict of each judge run (kept while no verdict is added)
result, items = navigation.open_answer(state, params, data, walk.ids, current, reviewer,
                                       start=(lambda: walk.next_item(current, reviewer)) if reviewer else None)
if items and reviewer:  # the item shown is held for this reviewer (review.holds)
    holds.served(cfg.labels, work, items[session.focus].key, reviewer, datetime.now(timezone.utc), cfg.lock_minutes,
                 cfg.overlap)


# the callbacks: who is labelling, and the labels, are read when the button is pressed
def resume() -> None:
    walk.resume(state, common.label_state().current, identity().name)


def save(at: tuple[str, int], label: str, drawn: str | None = None) -> None:
    walk.save(state, at, label, common.settings().labels, identity(), rules.version if rules else "",
              lambda: common.label_state().current, drawn)


def undo(drawn: str) -> None:
    label_actions.undo(state, data, common.settings().labels, lambda: common.read_labels()[0], identity().name, drawn)


flash = session.take("flash")  # (what the last key or click did: shown in the focused item's box, if any)
if flash and not items:
    st.html(notice_html(*flash))
for warning in label_warnings:
    st.html(notice_html("warning", f"labels file: skipped {warning}"))

# --- header and navigation -----------------------------------------------------------------
nav = st.columns([3, 1, 1, 1])
nav[0].html(review_html.answer_heading_html(result.answer.answer_id, walk.position(session.answer_id or ""),
                                            len(walk.ids)))
# Each move button steps from the answer it was drawn on: a press Streamlit delivers twice moves
# once (see _review_items.label_buttons).
drawn = result.answer.answer_id
nav[1].button("Previous", on_click=navigation.step_answer, args=(state, walk.ids, walk.where, -1, drawn), shortcut="P",
              use_container_width=True)
nav[2].button("Next", on_click=navigation.step_answer, args=(state, walk.ids, walk.where, 1, drawn), shortcut="N",
              use_container_width=True)
nav[3].button("Resume", key="resume", on_click=resume, shortcut="U", use_container_width=True, disabled=not reviewer)
notices, done = walk.header(current, reviewer, items, who)
for n, notice in enumerate(notices):
    st.html(notice_html(*notice))
    if n == 0 and done is not None:  # the bar under the reviewer's progress
        st.progress(done)

head, extras = review_view.answer_parts(result)
for part in head:
    st.html(part)
if result.refused:
    st.info("This answer is a refusal.")
for part in extras:
    st.html(part)
view = review_items.View(current, reviewer, rules, choices.blind, save, undo, review_html.run_token())
review_items.thread("Comments on this answer", "answer_comments_open", result.answer.answer_id, label_state, view,
                    labelled=bool(items) and all((i.key, reviewer) in current for i in items))
if items:
    review_items.focused(items, session, data, label_state, view)
review_items.sentences(result, items, session, judged, view, flash)
common.say_inputs(data, labels=common.settings().labels, verdicts=common.settings().verdicts)

# held keys across a server restart (core/citecheck/review/reconnect.py): a frame drawn once per session
if session.session_token is None:
    session.session_token = session_token()
common.script_frame(reconnect_script(session.session_token), "reconnect")
