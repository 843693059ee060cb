"""The review page's items: the focused item with its keys, and one row per sentence with each
cited chunk, its label buttons and a note box.  What each shows is built in core (review.review_view)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import streamlit as st
from citecheck.labelling import comments
from citecheck.reports.check_report import sentence_flags
from citecheck.review import html as review_html
from citecheck.review import navigation, paging, review_view
from citecheck.review.html import labelled_html, notice_html
from citecheck.review.session_state import ReviewState, note_key

from pages import _comments as comment_thread
from pages import _common as common
from pages import _drafts as drafts
from pages import _row_labels as row_labels
from pages import _span_marking as span_marking


class View(NamedTuple):
    """What every item of one run is drawn with: the labels that count, who is labelling, and the
    callbacks of the label and undo buttons."""

    current: Mapping
    reviewer: str
    rules: Any  # the labelling guidelines, or None
    blind: bool
    save: Callable[..., None]  # (at, label[, drawn]): review.save
    undo: Callable[[str], None]  # given the run the button was drawn in
    run: str  # this run of the page (review.html.run_token)


def _latest(item_key: str, reviewer: str):
    """The reviewer's label of the item as the labels store holds it now (read when it is needed)."""
    return common.label_state().current.get((item_key, reviewer))


def label_buttons(where, item, at: tuple[str, int], prefix: str, shortcuts: bool, view: View) -> None:
    """One button per label, the reviewer's current label marked and primary; texts never cut.
    A label is saved by the button's callback only, on the item ``at`` the button was drawn for.
    Streamlit (1.67) can call a button's callback twice for one press: a message the browser sends
    while the press's run is starting (a component's value) carries the press's trigger again, cuts
    that run short after its callbacks, and the next run calls them again with the arguments of the
    last drawing.  Saved on "the item focused now", the second call labelled the item the first had
    moved on to, one the reviewer never saw (CI: one key, two labels); saved on the drawn item, it
    repeats the label just saved, which records nothing (``label_actions.repeats``); the drawing
    (``view.run``) tells it the same press, still "Saved" (``session_state.acting``).  The focused
    item's buttons keep one key whatever the item (``key-<label>``): keyed by item, each move drew
    new buttons whose shortcuts were bound a moment after the old ones went, and a loaded machine
    lost a key in between.  A key pressed while the server restarts is held by the page
    (review.reconnect) until the new session has drawn the buttons, so their callbacks exist when it is sent."""
    row = where.container(horizontal=True, gap="small")
    chosen = review_view.chosen_label(item, view.current, view.reviewer)
    for b in review_view.label_buttons(item, chosen, view.rules, prefix, shortcuts):
        row.button(b.text, key=b.key, on_click=view.save, args=(at, b.label, view.run), type="primary" if b.primary else
                   "secondary", shortcut=b.shortcut, width="content", help=b.help)


def focused(items, session: ReviewState, data, labels_read, view: View) -> None:
    """``labels_read``: the labels store as this run read it (``common.label_state``)."""
    item = items[session.focus]
    drawn = (item.answer_id, session.focus)
    with st.container(border=True):
        st.html(labelled_html(review_view.focused_heading(items, session.focus)))
        label_buttons(st, item, drawn, "key", True, view)
        moves = st.container(horizontal=True, gap="small")
        moves.button("Previous item", on_click=navigation.step_item, args=(session.raw, data, -1, drawn), shortcut="K")
        moves.button("Next item", on_click=navigation.step_item, args=(session.raw, data, 1, drawn), shortcut="J")
        moves.button("Undo my last label", key="undo", on_click=view.undo, args=(view.run,), shortcut="Z",
                     disabled=not view.reviewer,
                     help="Withdraw your last label: a retraction is added to the labels store, nothing is deleted.")
        with st.expander("Label history of this item"):
            st.html(review_view.history_html(labels_read.item_events(item.key), item, view.reviewer, view.blind,
                                             review_view.chosen_label(item, view.current, view.reviewer)))
        thread("Comments on this item", "comments_open", item.key, labels_read, view,
               labelled=(item.key, view.reviewer) in view.current)


def thread(title: str, key: str, thread_key: str, labels_read, view: View, labelled: bool) -> None:
    """A comment thread (an item's, or an answer's under its id) in an expander, hidden in blind
    mode until the reviewer has labelled it (an answer: all its items).  Keyed, so it stays open
    across the reruns of a label, a comment or a move (unkeyed, it closed whenever a notice above it
    came or went); drawn only while open, so a closed thread costs a key press nothing."""
    box = st.expander(title, key=key, on_change="rerun")
    if not box.open:
        return
    with box:
        comment_thread.show(thread_key, labels_read.events, view.reviewer, view.blind, labelled=labelled,
                            found=common.label_figure(labels_read, "threads", lambda r: comments.threads(r.events),
                                                      (comments.Comment, comments.Resolve)),
                            known=common.label_cache().names(labels_read))


def sentences(result, items, session: ReviewState, judged, view: View, notice: tuple[str, str] | None = None) -> None:
    """One row per sentence of the page shown: a long answer a page at a time, so its cost stays bounded.
    ``notice``, what the last action did, is shown in the focused item's box (``item_view``)."""
    others_of = common.label_cache().others(view.current, view.reviewer)  # (kept between runs)
    page = 1
    if (count := paging.pages(len(result.sentences))) > 1:
        page = st.number_input("Sentences page", 1, count, review_view.start_page(items, session.focus),
                               key=f"page-{result.answer.answer_id}")
    shown = paging.window(len(result.sentences), int(page))
    if shown.note:
        st.html(notice_html("info", shown.note))
    rows = review_view.by_sentence(items, shown)
    if notice is not None and items and not any(session.focus in row for row in rows.values()):
        st.html(notice_html(*notice))  # (the focused item is on another page of sentences; an answer with no
        # item, a refusal, has had it at the top of the page: review.py)
    for s in result.sentences[shown.start:shown.end]:
        left, right = st.columns([2, 3])
        left.html(review_html.sentence_html(result, s.index, sentence_flags(s)))
        for part in review_view.unresolved(result, s):
            right.html(part)
        for n in rows.get(s.index, []):
            item, box = items[n], right.container(border=True)
            shown_item = review_view.item_view(result, items, n, session.focus, view.current, view.reviewer,
                                               judged.get(item.key, {}), others_of.get(item.key, []), view.blind,
                                               session.moves, notice, view.run)
            if (html := shown_item.html()):  # (an uncited sentence's unlabelled box has nothing of its own)
                box.html(html)
            row_labels.row_labels(box, item, (session.answer_id or "", n), view.current, view.reviewer, view.rules,
                                  view.save)
            span_marking.span_marking(box, result, item, view.current.get((item.key, view.reviewer)),
                                      common.settings().labels, functools.partial(_latest, item.key, view.reviewer))
            note = note_key(item.key, view.reviewer)  # (its draft, else the note of the reviewer's label of this version of the item)
            mine = view.current.get((item.key, view.reviewer))
            drafts.restore(note, mine.note if mine is not None and mine.fingerprint == item.fingerprint else "")
            box.text_input("Note", key=note, label_visibility="collapsed", placeholder="note (optional)",
                           on_change=drafts.keep, args=(note,))
