"""A comment thread under an item (or an answer): the comments, a box to add one, Resolve.  Who may
see it in blind mode is decided in core (``labelling.comments.visible_threads``); the HTML is built
in ``review.thread_html``.  Comments and resolves are appended to the labels store as events."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

import streamlit as st
from citecheck.errors import CitecheckError
from citecheck.labelling import comments, labels
from citecheck.review import thread_html
from citecheck.review.html import focus_token, notice_html, run_token
from citecheck.review.session_state import once

from pages import _drafts as drafts
from pages._common import settings

FLASH = "comment_flash"


def _save(event_of, thread_key: str, box: str | None, drawn: str) -> None:
    """Append the event ``event_of()`` makes, once per press (``drawn``: the drawing the button was
    pressed on; ``session_state.once``); a refusal or a failed write is said under the thread."""
    def append() -> tuple[str, str, str]:
        try:
            labels.append_event(settings().labels, event_of())
        except (CitecheckError, OSError) as exc:
            return thread_key, "error", f"Not saved: {exc}"
        return thread_key, "success", "Comment saved." if box else "Thread resolved."

    said = st.session_state[FLASH] = once(st.session_state, ("comment", drawn, thread_key, box), append)
    if box and said[1] == "success":
        st.session_state[box] = ""  # (in a callback: before the box is drawn again)
        drafts.forget(box)


def show(thread_key: str, events: Sequence[object], reviewer: str, blind: bool, labelled: bool,
         reviewers: Iterable[str] = (), found: Mapping[str, comments.Thread] | None = None,
         known: Iterable[str] | None = None) -> None:
    """Draw the thread ``thread_key`` (an item key, or an answer id for the answer's thread) for
    ``reviewer``.  ``labelled``: whether the reviewer has labelled the item (for an answer thread:
    every item of the answer); in blind mode nothing of the thread is shown before.
    ``reviewers``: names a mention may name besides everyone in ``events``.  ``found`` and ``known``:
    ``comments.threads(events)`` and ``comments.known_reviewers(events)`` when the caller keeps them."""
    token = focus_token(thread_key)
    if not comments.shows_thread(blind, labelled):
        st.html(thread_html.hidden_html())  # (not even whether there is a thread: that too could sway)
        return
    thread = comments.visible_threads(comments.threads(events) if found is None else found, blind,
                                      {thread_key}).get(thread_key)
    if thread is not None:
        st.html(thread_html.thread_html(thread))
    flash = st.session_state.get(FLASH)
    if flash and flash[0] == thread_key:
        del st.session_state[FLASH]
        st.html(notice_html(flash[1], flash[2]))
    known = sorted({*(comments.known_reviewers(events) if known is None else known), *reviewers})
    box = f"comment-box-{token}"
    drafts.restore(box)  # (back to an item with a comment not sent)
    st.text_area("Comment (mention a reviewer with @name)", key=box, height=80,
                 placeholder="Ask or explain; @name mentions a reviewer", on_change=drafts.keep, args=(box,))
    row = st.container(horizontal=True, gap="small")
    drawn = run_token()
    row.button("Comment", key=f"comment-{token}", on_click=_save, args=(
        lambda: comments.make_comment(thread_key, reviewer, st.session_state.get(box) or "", known), thread_key, box,
        drawn))
    if thread is not None and thread.open:
        row.button("Resolve", key=f"resolve-{token}", on_click=_save, args=(
            lambda: comments.make_resolve(thread_key, reviewer), thread_key, None, drawn))


def open_threads(events: Sequence[object], reviewer: str = "", labelled: Collection[str] | None = None) -> None:
    """The open threads, the most recently commented first, each linked to its answer on the review
    page (as ``reviewer``, when a name is given: a link opens a new session).  ``labelled``: for
    someone who is not a lead, the item keys they have labelled: only those threads are listed
    (as blind mode would show them); None (a lead) lists every thread."""
    from urllib.parse import urlencode

    found = comments.threads(events)
    if labelled is not None:
        found = comments.visible_threads(found, True, comments.labelled_keys(labelled))
    waiting = comments.open_threads(found)
    links = ["./?" + urlencode(  # the review page is the default, served at the root (text.markup.review_link)
        {"answer": comments.thread_answer(t.key), **({"reviewer": reviewer} if reviewer else {})})
        for t in waiting]
    st.html(thread_html.open_threads_html(waiting, links))
