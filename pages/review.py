"""Review: each sentence beside its cited chunks, quotes highlighted by offset; label support.
The place, the moves, the queue and what each item shows are built in core (review.navigation,
review.labelling, review.review_view, web.review_queue); this page lays out the widgets."""

from __future__ import annotations

import streamlit as st
from citecheck.labelling import guidelines, labels
from citecheck.labelling import sample as samples
from citecheck.reports.check_report import sentence_flags
from citecheck.review import html as review_html
from citecheck.review import identity as reviewer_identity
from citecheck.review import keypresses, label_actions, navigation, paging, review_view
from citecheck.review.html import labelled_html, notice_html
from citecheck.review.queue import FILTERS
from citecheck.review.reconnect import reconnect_script, session_token
from citecheck.web.walk import ReviewQueue, read_sample

from pages import _common as common

common.enter("review")

common.style()
common.script_frame(keypresses.installer_html(), "keyqueue")  # the same on every run: drawn once
data = common.review_dataset()  # a checked store's answers are read one at a time
common.show_notice(data)
if not len(data):
    st.info("No answers to review. Check the Data page: the configured logs may be empty or unreadable.")
    st.stop()

events, label_warnings = common.read_label_events()  # labels, retractions (undo) and adjudications
current = labels.latest(labels.effective(events))  # the labels that count: retracted ones left out
rules, rules_error = common.guidelines()
judged = review_view.judged_by_item(common.read_verdicts()[0])  # item key -> the latest verdict of each judge run
state, params = st.session_state, st.query_params

identity = common.identity  # who is labelling (also inside the callbacks below)
who = identity()
reviewer = navigation.settle(state, params, who)
overlap = common.settings().overlap

with st.sidebar:
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
    filter_name = st.radio("Show answers", list(FILTERS), key="filter_box", on_change=navigation.refilter, args=(state, params))
    with st.form("jump", border=False):
        wanted = st.text_input("Jump to answer id")
        if st.form_submit_button("Open") and (problem := navigation.jump(state, data, wanted)):
            st.html(notice_html("error", problem))
    blind = st.toggle("Blind mode", key="blind", on_change=navigation.reblind, args=(state, params),
                      help="Hide judge verdicts and other reviewers' labels on an item until you have labelled it, "
                           "so they cannot sway you.")
    sample_path = st.selectbox("Calibration sample", [None, *samples.find(common.settings().folders)], key="review_sample",
                               format_func=lambda p: "none" if p is None else p.name,
                               help="Work through a random sample (citecheck sample): Resume goes to its next "
                                    "unlabelled item, and labels record the sample.")
    st.caption("Keys: 1-4 label the focused item (1-2 for an uncited sentence) · J/K next/previous item · "
               "N/P next/previous answer · U your next unlabelled item · Z undo your last label · "
               "Enter or Escape leaves a text box")
    with st.expander("Labelling guidelines"):
        if rules is not None:
            st.html(guidelines.to_html(rules.text))  # Markdown with raw HTML escaped (core/citecheck/labelling/guidelines.py)
            st.caption(f"Version {rules.version}: every label records it.")
        else:
            st.html(notice_html("error", f"{rules_error} Labels are saved without a guidelines version."))

sample, sample_error = read_sample(sample_path)
if sample_error:
    st.html(notice_html("error", sample_error))
queue = ReviewQueue.of(data, sample, filter_name, current, reviewer, overlap)
handled = state.pop("_label_saved", False)  # a label button's callback ran before this run
result, items = navigation.open_answer(state, params, data, queue.ids, current, reviewer)


# the callbacks: who is labelling, and the labels, are read when the button is pressed
def resume() -> None:
    queue.move_on(state, common.read_labels()[0], identity().name)


def save(at: tuple[str, int] | None, label: str) -> None:
    queue.save(state, at, label, common.settings().labels, identity(), rules.version if rules else "",
               lambda: common.read_labels()[0])


def undo() -> None:
    label_actions.undo(state, data, common.settings().labels, lambda: common.read_labels()[0], identity().name)


flash = state.pop("flash", None)
if flash:
    st.html(notice_html(*flash))
for warning in label_warnings:
    st.html(notice_html("warning", f"labels file: skipped {warning}"))

# --- header and navigation -----------------------------------------------------------------
nav = st.columns([3, 1, 1, 1])
nav[0].html(review_html.answer_heading_html(result.answer.answer_id, queue.position(state.answer_id), len(queue.ids)))
nav[1].button("Previous", on_click=navigation.step_answer, args=(state, queue.ids, queue.where, -1), shortcut="P",
              use_container_width=True)
nav[2].button("Next", on_click=navigation.step_answer, args=(state, queue.ids, queue.where, 1), shortcut="N",
              use_container_width=True)
nav[3].button("Resume", key="resume", on_click=resume, shortcut="U", use_container_width=True, disabled=not reviewer)
notices, done = queue.header(current, reviewer, items, who)
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


def label_buttons(where, item, n: int | None, prefix: str, shortcuts: bool) -> None:
    """One button per label, the reviewer's current label marked and primary; texts never cut."""
    row = where.container(horizontal=True, gap="small")
    at = None if n is None else (state.answer_id, n)
    for b in review_view.label_buttons(item, review_view.chosen_label(item, current, reviewer), rules, prefix, shortcuts):
        if row.button(b.text, key=b.key, on_click=save, args=(at, b.label), type="primary" if b.primary else
                      "secondary", shortcut=b.shortcut, width="content", help=b.help) and not handled:
            save(at, b.label)  # a new session (a restarted server) has no callback for it yet
            st.rerun()


# --- the focused item and its shortcuts -----------------------------------------------------
if items:
    focused = items[state.focus]
    with st.container(border=True):
        st.html(labelled_html(review_view.focused_heading(items, state.focus)))
        label_buttons(st, focused, None, "key", shortcuts=True)
        moves = st.container(horizontal=True, gap="small")
        moves.button("Previous item", on_click=navigation.step_item, args=(state, data, -1), shortcut="K")
        moves.button("Next item", on_click=navigation.step_item, args=(state, data, 1), shortcut="J")
        moves.button("Undo my last label", key="undo", on_click=undo, shortcut="Z", disabled=not reviewer,
                     help="Withdraw your last label: a retraction is added to the labels store, nothing is deleted.")
        with st.expander("Label history of this item"):
            st.html(review_view.history_html(events, focused, reviewer, blind, review_view.chosen_label(focused, current, reviewer)))

# --- one row per sentence -------------------------------------------------------------------
others_of = labels.others_by_item(current, reviewer)
page = 1
if (count := paging.pages(len(result.sentences))) > 1:  # a long answer a page at a time: its cost stays bounded
    page = st.number_input("Sentences page", 1, count, review_view.start_page(items, state.focus),
                           key=f"page-{result.answer.answer_id}")
shown = paging.window(len(result.sentences), int(page))
if shown.note:
    st.html(notice_html("info", shown.note))
rows = review_view.by_sentence(items, shown)
for s in result.sentences[shown.start:shown.end]:
    left, right = st.columns([2, 3])
    left.html(review_html.sentence_html(result, s.index, sentence_flags(s)))
    for part in review_view.unresolved(result, s):
        right.html(part)
    for n in rows.get(s.index, []):
        item, box = items[n], right.container(border=True)
        view = review_view.item_view(result, items, n, state.focus, current, reviewer, judged.get(item.key, {}),
                            others_of.get(item.key, []), blind, state.get("moves", 0))
        if (html := view.html()):  # (an uncited sentence's unlabelled box has nothing of its own to show)
            box.html(html)
        label_buttons(box, item, n, f"b-{item.key}", shortcuts=False)
        box.text_input("Note", key=f"note-{item.key}", label_visibility="collapsed", placeholder="note (optional)")

# held keys across a server restart (core/citecheck/review/reconnect.py): a frame drawn once per session
common.script_frame(reconnect_script(state.setdefault("session_token", session_token())), "reconnect")
