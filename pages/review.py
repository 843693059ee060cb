"""Review: each sentence beside its cited chunks, quotes highlighted by offset; label support."""

from __future__ import annotations

import streamlit as st
import streamlit.components.v1 as components
from citecheck.contract.postgres import StoreError
from citecheck.reports.check_report import sentence_flags
from citecheck.review import address as A
from citecheck.review import guidelines as G
from citecheck.review import history as H
from citecheck.review import identity as I
from citecheck.review import keyqueue
from citecheck.review import labels as L
from citecheck.review import paging as P
from citecheck.review import sample as S
from citecheck.review.html import (
    KEYS_HEIGHT,
    agent_trace_html,
    answer_heading_html,
    citation_html,
    fields_html,
    focus_marker_html,
    focus_token,
    keys_script,
    labelled_html,
    notice_html,
    others_html,
    own_label_html,
    reader_html,
    sentence_html,
    unresolved_html,
    verdict_html,
    withheld_html,
)
from citecheck.review.items import LABEL_TEXT
from citecheck.review.queue import (
    FILTERS,
    labellers,
    next_in_sample,
    sample_answer_ids,
    sample_progress,
)
from citecheck.review.reconnect import reconnect_script, session_token
from citecheck.review.text import md_literal
from citecheck.store.answers import filtered_ids, positions_of, progress, queue_next

from pages._common import (
    enter,
    guidelines,
    read_label_events,
    read_labels,
    read_verdicts,
    review_dataset,
    settings,
    show_notice,
    style,
)

enter("review")

style()
components.html(keyqueue.installer_html(), height=KEYS_HEIGHT)  # the same on every run: drawn once
data = review_dataset()  # a checked store's answers are read one at a time
show_notice(data)
if not len(data):
    st.info("No answers to review. Check the Data page: the configured logs may be empty or unreadable.")
    st.stop()

events, label_warnings = read_label_events()  # labels, retractions (undo) and adjudications
records = L.effective(events)  # the labels that count: retracted ones left out
current = L.latest(records)
rules, rules_error = guidelines()
verdict_records, _ = read_verdicts()
judged = {}  # item key -> the latest verdicts on it, one per judge and prompt version
for v in verdict_records:
    judged.setdefault(v.item, {})[v.run] = v
state = st.session_state



def signed_in_user() -> dict | None:
    """The OIDC user's claims when the deployment configured ``[auth]`` (docs/app.md), else None."""
    try:
        return st.user.to_dict()
    except Exception:  # no [auth] section: Streamlit has no user to give
        return None


def authlib_ready() -> bool:
    """Streamlit's own check that st.login can work (Authlib>=1.3.2, the ``auth`` extra)."""
    from streamlit.auth_util import is_authlib_installed

    return is_authlib_installed()


def identity() -> I.Identity:
    """Who is labelling, from the login, the session or the URL (also inside callbacks)."""
    return I.resolve(st.query_params.get("reviewer"), state.get("reviewer_name"), signed_in_user())


def rename() -> None:
    name = I.clean_name(state.get("reviewer_box", ""))
    state.reviewer_name = name
    if name:
        st.query_params["reviewer"] = name
    elif "reviewer" in st.query_params:
        del st.query_params["reviewer"]


def refilter() -> None:
    state.filter_name = state.filter_box
    A.sync(st.query_params, "show", A.show_param(state.filter_name))


def reblind() -> None:
    state.blind_on = state.blind
    A.sync(st.query_params, "blind", A.blind_param(state.blind_on))


who = identity()
if who.name and not who.by_login:
    state.reviewer_name = who.name
reviewer = who.name
if reviewer and not who.by_login and st.query_params.get("reviewer") != reviewer:
    st.query_params["reviewer"] = reviewer
if "reviewer_box" not in state:  # widget state is dropped on a page switch; the name is not
    state.reviewer_box = reviewer
state.filter_name = A.filter_name(st.query_params.get("show"), state.get("filter_name"))
A.sync(st.query_params, "show", A.show_param(state.filter_name))  # (a page switch leaves the address bare)
if "filter_box" not in state:  # widget state is dropped on a page switch; the setting is not
    state.filter_box = state.filter_name
state.blind_on = A.blind(st.query_params.get("blind"), state.get("blind_on"))
A.sync(st.query_params, "blind", A.blind_param(state.blind_on))
if "blind" not in state:
    state.blind = state.blind_on
overlap = settings().overlap

with st.sidebar:
    if who.signed_in:  # the deployment signs reviewers in (docs/app.md): no name box
        st.html(labelled_html([("Reviewer", reviewer)]))
        if st.button("Sign out"):
            st.logout()
    elif who.by_login:
        problem = I.login_problem(who, authlib_ready())
        if problem:  # st.login would only raise
            st.html(notice_html("error", problem))
        elif st.button("Sign in", type="primary"):
            st.login()
    else:
        st.text_input("Reviewer name", key="reviewer_box", on_change=rename,
                      help="Required before your first label; kept in the page address (?reviewer=) and the session.")
    filter_name = st.radio("Show answers", list(FILTERS), key="filter_box", on_change=refilter)
    with st.form("jump", border=False):
        wanted = st.text_input("Jump to answer id")
        if st.form_submit_button("Open") and wanted.strip():
            if data.get(wanted.strip()) is None:
                st.html(notice_html("error", f"No answer with id {wanted.strip()!r} in the loaded logs."))
            else:
                state.answer_id = wanted.strip()
                state.focus = 0
    blind = st.toggle("Blind mode", key="blind", on_change=reblind,
                      help="Hide judge verdicts and other reviewers' labels on an item until you have labelled it, "
                           "so they cannot sway you.")
    sample_path = st.selectbox("Calibration sample", [None, *S.find(settings().folders)], key="review_sample",
                               format_func=lambda p: "none" if p is None else p.name,
                               help="Work through a random sample (citecheck sample): Resume goes to its next "
                                    "unlabelled item, and labels record the sample.")
    st.caption("Keys: 1-4 label the focused item (1-2 for an uncited sentence) · J/K next/previous item · "
               "N/P next/previous answer · U your next unlabelled item · Z undo your last label · "
               "Enter or Escape leaves a text box")
    with st.expander("Labelling guidelines"):
        if rules is not None:
            st.html(G.to_html(rules.text))  # Markdown with raw HTML escaped (core/review/guidelines.py)
            st.caption(f"Version {rules.version}: every label records it.")
        else:
            st.html(notice_html("error", f"{rules_error} Labels are saved without a guidelines version."))

sample = None
if sample_path is not None:
    try:
        sample = S.read(sample_path)
    except (OSError, S.SampleError) as exc:
        st.html(notice_html("error", f"Cannot use that sample: {exc}"))
ids = sample_answer_ids(data, sample) if sample is not None else filtered_ids(data, filter_name, current, reviewer)
where = positions_of(data, ids)  # answer id -> its place in ids, without a search through them
asked = st.query_params.get("answer")


def first_open(answer_id: str) -> int:
    """Where to put the focus on opening an answer: its first item this reviewer has not labelled."""
    return next((n for n, item in enumerate(data.items(answer_id)) if not L.is_done(item, current, reviewer)), 0)


def linked_focus(answer_id: str) -> int:
    """The focus the address names (``?item=N``, what the open tab showed), else the first open item."""
    raw = st.query_params.get("item", "")
    n = int(raw) - 1 if raw.isascii() and raw.isdigit() else -1
    return n if 0 <= n < len(data.items(answer_id)) else first_open(answer_id)


handled = state.pop("_label_saved", False)  # a label button's callback ran before this run
if asked and asked != state.get("linked") and data.get(asked) is not None:
    state.answer_id = asked  # a deep link, a reload, a restarted server, or a link from the Failures page
    state.focus = linked_focus(asked)
elif "answer_id" not in state or data.get(state.answer_id) is None:
    state.answer_id = ids[0] if ids else data.answer_ids[0]
    state.focus = first_open(state.answer_id)
if asked != state.answer_id:
    st.query_params["answer"] = state.answer_id
state.linked = state.answer_id

result = data.get(state.answer_id)
items = data.items(state.answer_id)
state.focus = min(state.get("focus", 0), max(len(items) - 1, 0))
if st.query_params.get("item") != str(state.focus + 1):
    st.query_params["item"] = str(state.focus + 1)


def moved() -> None:
    """Count focus moves, so the keyboard script runs again (and scrolls) even onto the same item."""
    state.moves = state.get("moves", 0) + 1


def go(answer_id: str) -> None:
    state.answer_id = answer_id
    state.focus = 0
    moved()


def step_answer(delta: int) -> None:
    if not ids:
        return
    pos = where.get(state.answer_id, -1)
    to = pos + delta
    if not 0 <= to < len(ids):
        end = "last" if delta > 0 else "first"
        state.flash = ("info", f"This is the {end} answer ({pos + 1} of {len(ids)}); it does not wrap round. "
                               "Press U for your next unlabelled item.")
        return
    go(ids[to])


def step_item(delta: int) -> None:
    items = data.items(state.answer_id)  # (this session's answer now, not the one drawn last)
    if not items:
        return
    to = state.focus + delta
    if not 0 <= to < len(items):
        state.flash = ("info", f"This is the {'last' if delta > 0 else 'first'} item of this answer; "
                               "N/P change answer, U goes to your next unlabelled item.")
        return
    state.focus = to
    moved()


def move_on(after: tuple[str, int] | None) -> bool:
    """Focus the reviewer's next item in the queue; False (and a notice) when it is finished."""
    name = identity().name
    fresh = L.latest(read_labels()[0])
    if sample is not None:
        found = next_in_sample(data, sample, fresh, name)
    else:
        found = queue_next(data, ids, where, labellers(fresh), name, overlap, after)
    if found is None:
        state.flash = ("success", "Your queue is finished: every item" + (" of the sample" if sample else " here")
                       + f" is labelled by you or already has {overlap} reviewer(s). Thank you!")
        return False
    state.answer_id, state.focus = found
    moved()
    return True


def resume() -> None:
    move_on(None)


def save(at: tuple[str, int] | None, label: str) -> None:
    """Label the item ``at`` (answer id, position), or with None the focused item as it is now: a
    shortcut acts on the item the reviewer has come to, even if the page was not redrawn since."""
    state._label_saved = True
    answer_id, index = at if at is not None else (state.answer_id, state.focus)
    item = data.items(answer_id)[index]
    note = state.get(f"note-{item.key}", "")
    name = identity().name
    try:
        in_sample = sample.sample_id if sample is not None and item.key in sample else ""
        L.append(settings().labels, L.make_label(item, label, name, note, sample=in_sample,
                                                 guidelines=rules.version if rules else ""))
    except L.LabelError as exc:
        state.flash = ("error", f"Not saved: {exc}. {I.how_to_name(identity())}, then label again.")
        return
    except OSError as exc:  # the disk is full...: said plainly, and the label is not acknowledged
        state.flash = ("error", L.not_saved_message(exc, LABEL_TEXT[label], item.sentence))
        return
    except StoreError as exc:  # its message names the database without the password
        state.flash = ("error", f"Not saved: could not save the label: {exc}")
        return
    saved = L.saved_message(LABEL_TEXT[label], item.sentence, item.answer_id)
    if move_on((item.answer_id, index)):
        state.flash = ("success", saved)
    else:
        state.flash = ("success", saved + " " + state.flash[1])


def undo() -> None:
    """Z: withdraw this reviewer's last label (a retraction appended) and go back to its item."""
    name = identity().name
    try:
        withdrawn = L.retract_last(settings().labels, read_labels()[0], name) if name else None
    except (OSError, StoreError) as exc:
        state.flash = ("error", f"Nothing withdrawn: could not write the labels store ({exc}).")
        return
    if withdrawn is None:
        state.flash = ("info", "You have no label to withdraw." if name else "Enter your name first.")
        return
    state.flash = ("success", f"Withdrew your \u201c{LABEL_TEXT[withdrawn.label]}\u201d for sentence "
                              f"{withdrawn.sentence + 1} of {withdrawn.answer_id} (a retraction is recorded; "
                              "the label before it, if any, counts again).")
    keys = [i.key for i in data.items(withdrawn.answer_id)] if data.get(withdrawn.answer_id) is not None else []
    if withdrawn.item in keys:
        state.answer_id, state.focus = withdrawn.answer_id, keys.index(withdrawn.item)
        moved()


flash = state.pop("flash", None)
if flash:
    st.html(notice_html(*flash))
for warning in label_warnings:
    st.html(notice_html("warning", f"labels file: skipped {warning}"))

# --- header and navigation -----------------------------------------------------------------
team = labellers(current)
pos = where[state.answer_id] + 1 if state.answer_id in where else None
here = L.progress(items, current, reviewer)
nav = st.columns([3, 1, 1, 1])
nav[0].html(answer_heading_html(result.answer.answer_id, pos, len(ids)))
nav[1].button("Previous", on_click=step_answer, args=(-1,), shortcut="P", use_container_width=True)
nav[2].button("Next", on_click=step_answer, args=(1,), shortcut="N", use_container_width=True)
nav[3].button("Resume", key="resume", on_click=resume, shortcut="U", use_container_width=True, disabled=not reviewer)
if reviewer:
    overall = progress(data, team, reviewer, overlap)
    st.html(notice_html("info", f"{reviewer}: labelled {overall.mine} of {overall.total} items overall, "
                        f"{here.labelled} of {here.total} in this answer"
                        + (f" ({here.stale} stale)" if here.stale else "")
                        + f" \u00b7 team: {overall.done} of {overall.total} items done"
                        + (f" ({overlap} reviewers each)" if overlap > 1 else "")))
    st.progress(overall.done / overall.total if overall.total else 1.0)
else:
    st.html(notice_html("error", f"{I.how_to_name(who)} before labelling: labels need a reviewer."))

if sample is not None:
    done, total = sample_progress(data, sample, current, reviewer)
    st.html(notice_html("info", f"Calibration sample {sample.sample_id}: {done} of {total} sampled items "
                        "labelled by you; Resume (U) opens the next one."))

meta = [result.answer.model, result.answer.prompt_version, result.answer.timestamp]
st.html(fields_html(meta))
st.html(labelled_html([("Question", result.answer.question)]))
st.html(reader_html(result, P.MAX_ANSWER_CHARS))
if result.refused:
    st.info("This answer is a refusal.")
for extra_html in (withheld_html(result.answer.extra), agent_trace_html(result.answer.extra)):
    if extra_html:
        st.html(extra_html)


def label_buttons(where, item, n: int | None, chosen: str | None, prefix: str, shortcuts: bool) -> None:
    """One button per label, the reviewer's current label marked and primary; texts never cut."""
    row = where.container(horizontal=True, gap="small")
    for k, label in enumerate(item.labels):
        picked = label == chosen
        definition = rules.definitions.get(label) if rules else None
        clicked = row.button(("\u2713 " if picked else "") + LABEL_TEXT[label], key=f"{prefix}-{label}",
                             on_click=save, args=(None if n is None else (state.answer_id, n), label), type="primary" if picked else "secondary",
                             shortcut=str(k + 1) if shortcuts else None, width="content",
                             help=md_literal(definition) if definition else None)
        if clicked and not handled:  # a new session (a restarted server) has no callback for it yet
            save(None if n is None else (state.answer_id, n), label)
            st.rerun()


def chosen_label(item) -> str | None:
    lab = current.get((item.key, reviewer)) if reviewer else None
    return lab.label if lab is not None and lab.fingerprint == item.fingerprint else None


# --- the focused item and its shortcuts -----------------------------------------------------
if items:
    focused = items[state.focus]
    with st.container(border=True):
        st.html(labelled_html([(f"Focused item {state.focus + 1} of {len(items)}",
                                f"sentence {focused.sentence + 1}"
                                + ("" if focused.citation is None else f", citation of {focused.chunk_id}"))]))
        label_buttons(st, focused, None, chosen_label(focused), "key", shortcuts=True)
        moves = st.container(horizontal=True, gap="small")
        moves.button("Previous item", on_click=step_item, args=(-1,), shortcut="K")
        moves.button("Next item", on_click=step_item, args=(1,), shortcut="J")
        moves.button("Undo my last label", key="undo", on_click=undo, shortcut="Z", disabled=not reviewer,
                     help="Withdraw your last label: a retraction is added to the labels store, nothing is deleted.")
        with st.expander("Label history of this item"):
            entries = H.by_item(e for e in events if e.item == focused.key).get(focused.key, [])
            hide = blind and chosen_label(focused) is None
            mine = H.visible(entries, reviewer if hide else None)
            st.html(H.history_html(mine, hidden=len(entries) - len(mine)))
    components.html(keys_script(focus_token(focused.key), state.get("moves", 0)), height=KEYS_HEIGHT)

# --- one row per sentence -------------------------------------------------------------------

others_of = L.others_by_item(current, reviewer)
count = P.pages(len(result.sentences))
page = 1
if count > 1:  # a long answer a page at a time: the page's cost stays bounded
    start_page = P.page_of(items[state.focus].sentence) if items else 1
    page = st.number_input("Sentences page", 1, count, start_page, key=f"page-{result.answer.answer_id}")
shown = P.window(len(result.sentences), int(page))
if shown.note:
    st.html(notice_html("info", shown.note))
by_sentence: dict[int, list[int]] = {}
for n in P.items_in(items, shown):
    by_sentence.setdefault(items[n].sentence, []).append(n)
for s in result.sentences[shown.start:shown.end]:
    left, right = st.columns([2, 3])
    left.html(sentence_html(result, s.index, sentence_flags(s)))
    for c in (result.citations[i] for i in s.citations):
        if c.chunk_index is None:
            right.html(unresolved_html(c))
    for n in by_sentence.get(s.index, []):
        item = items[n]
        box = right.container(border=True)
        if n == state.focus:
            box.html(focus_marker_html(item.key, n + 1, len(items)))
        if item.citation is not None:
            c = result.citations[item.citation]
            box.html(citation_html(result, c))
            with box.expander("Whole chunk"):
                st.html(citation_html(result, c, whole=True))
        mine = current.get((item.key, reviewer)) if reviewer else None
        if mine is not None:
            stale = mine.fingerprint != item.fingerprint
            box.html(own_label_html(LABEL_TEXT[mine.label], mine.note, stale))
        unlabelled = mine is None or mine.fingerprint != item.fingerprint
        verdicts_here = judged.get(item.key, {})
        others = others_of.get(item.key, [])
        if blind and unlabelled and (verdicts_here or others):
            box.caption(f"{len(verdicts_here)} judge verdict(s) and {len(others)} other reviewer label(s) hidden "
                        "until you label this item (blind mode).")
        else:
            for v in verdicts_here.values():
                box.html(verdict_html(v.judge, v.prompt_version, v.verdict, v.rationale))
            if others:
                box.html(others_html([(lab.reviewer, LABEL_TEXT[lab.label]) for lab in others]))
        label_buttons(box, item, n, chosen_label(item), f"b-{item.key}", shortcuts=False)
        box.text_input("Note", key=f"note-{item.key}", label_visibility="collapsed", placeholder="note (optional)")

# held keys across a server restart (core/review/reconnect.py): a frame drawn once per session
components.html(reconnect_script(state.setdefault("session_token", session_token())), height=KEYS_HEIGHT)
