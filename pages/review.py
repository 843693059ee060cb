"""Review: each sentence beside its cited chunks, quotes highlighted by offset; label support."""

from __future__ import annotations

import streamlit as st
from citecheck.reports.check_report import sentence_flags
from citecheck.review import labels as L
from citecheck.review import paging as P
from citecheck.review.html import (
    agent_trace_html,
    citation_html,
    heading_html,
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
from citecheck.review.queue import FILTERS, answer_ids, first_unlabelled

from pages._common import current_dataset, enter, read_labels, read_verdicts, settings, style

enter("review")

style()
data = current_dataset()
if not len(data):
    st.info("No answers to review. Check the Data page: the configured logs may be empty or unreadable.")
    st.stop()

records, label_warnings = read_labels()
current = L.latest(records)
verdict_records, _ = read_verdicts()
judged = {}  # item key -> the latest verdicts on it, one per judge and prompt version
for v in verdict_records:
    judged.setdefault(v.item, {})[v.run] = v
state = st.session_state

with st.sidebar:
    reviewer = st.text_input("Reviewer name", key="reviewer", help="Required before your first label; kept for this session.")
    reviewer = reviewer.strip()
    filter_name = st.radio("Show answers", list(FILTERS), key="filter")
    with st.form("jump", border=False):
        wanted = st.text_input("Jump to answer id")
        if st.form_submit_button("Open") and wanted.strip():
            if data.get(wanted.strip()) is None:
                st.html(notice_html("error", f"No answer with id {wanted.strip()!r} in the loaded logs."))
            else:
                state.answer_id = wanted.strip()
                state.focus = 0
    blind = st.toggle("Blind mode", value=True, key="blind",
                      help="Hide judge verdicts on an item until you have labelled it, so they cannot sway you.")
    st.caption("Keys: 1-4 label the focused item (1-2 for an uncited sentence) · J/K next/previous item · "
               "N/P next/previous answer · U resume at the first item you have not labelled")

ids = answer_ids(data, filter_name, current, reviewer)
asked = st.query_params.get("answer")
if asked and asked != state.get("linked") and data.get(asked) is not None:
    state.answer_id = asked  # a deep link, or a link from the Failures page: follow it
    state.focus = 0
elif "answer_id" not in state or data.get(state.answer_id) is None:
    state.answer_id = ids[0] if ids else data.answers[0].answer_id
    state.focus = 0
if asked != state.answer_id:
    st.query_params["answer"] = state.answer_id
state.linked = state.answer_id

result = data.get(state.answer_id)
items = data.items(state.answer_id)
state.focus = min(state.get("focus", 0), max(len(items) - 1, 0))


def go(answer_id: str) -> None:
    state.answer_id = answer_id
    state.focus = 0


def step_answer(delta: int) -> None:
    if not ids:
        return
    pos = ids.index(state.answer_id) if state.answer_id in ids else -1
    go(ids[(pos + delta) % len(ids)])


def step_item(delta: int) -> None:
    if items:
        state.focus = (state.focus + delta) % len(items)


def resume() -> None:
    found = first_unlabelled(data, current, reviewer)
    if found is None:
        state.flash = ("info", "You have labelled every item. Thank you!")
    else:
        state.answer_id, state.focus = found


def save(index: int, label: str) -> None:
    item = items[index]
    note = state.get(f"note-{item.key}", "")
    try:
        L.append(settings().labels, L.make_label(item, label, state.get("reviewer", ""), note))
    except L.LabelError as exc:
        state.flash = ("error", f"{exc}. Enter your name in the sidebar.")
        return
    except OSError as exc:  # the disk is full...: said plainly, and the label is not acknowledged
        state.flash = ("error", L.not_saved_message(exc, LABEL_TEXT[label], item.sentence))
        return
    state.flash = ("success", L.saved_message(LABEL_TEXT[label], item.sentence))
    state.focus = min(index + 1, len(items) - 1)


flash = state.pop("flash", None)
if flash:
    st.html(notice_html(*flash))
for warning in label_warnings:
    st.html(notice_html("warning", f"labels file: skipped {warning}"))

# --- header and navigation -----------------------------------------------------------------
pos = ids.index(state.answer_id) + 1 if state.answer_id in ids else None
overall = L.progress(data.all_items, current, reviewer) if reviewer else None
here = L.progress(items, current, reviewer)
nav = st.columns([3, 1, 1, 1])
nav[0].html(heading_html(f"Answer {result.answer.answer_id}"
                         + (f" ({pos} of {len(ids)})" if pos else " (outside the filter)")))
nav[1].button("Previous", on_click=step_answer, args=(-1,), shortcut="P", use_container_width=True)
nav[2].button("Next", on_click=step_answer, args=(1,), shortcut="N", use_container_width=True)
nav[3].button("Resume", key="resume", on_click=resume, shortcut="U", use_container_width=True, disabled=not reviewer)
if reviewer:
    st.html(notice_html("info", f"{reviewer}: labelled {overall.labelled} of {overall.total} items overall, "
                        f"{here.labelled} of {here.total} in this answer"
                        + (f" ({here.stale} stale)" if here.stale else "")))
else:
    st.warning("Enter your name in the sidebar before labelling.")

meta = [result.answer.model, result.answer.prompt_version, result.answer.timestamp]
st.html(notice_html("info", " \u00b7 ".join(m for m in meta if m)))
st.html(labelled_html([("Question", result.answer.question)]))
st.html(reader_html(result, P.MAX_ANSWER_CHARS))
if result.refused:
    st.info("This answer is a refusal.")
for extra_html in (withheld_html(result.answer.extra), agent_trace_html(result.answer.extra)):
    if extra_html:
        st.html(extra_html)

# --- the focused item and its shortcuts -----------------------------------------------------
if items:
    focused = items[state.focus]
    with st.container(border=True):
        st.html(labelled_html([(f"Focused item {state.focus + 1} of {len(items)}",
                                f"sentence {focused.sentence + 1}"
                                + ("" if focused.citation is None else f", citation of {focused.chunk_id}"))]))
        row = st.columns(len(focused.labels) + 2)
        for k, label in enumerate(focused.labels):
            row[k].button(LABEL_TEXT[label], key=f"key-{label}", on_click=save, args=(state.focus, label),
                          shortcut=str(k + 1), use_container_width=True)
        row[-2].button("Previous item", on_click=step_item, args=(-1,), shortcut="K", use_container_width=True)
        row[-1].button("Next item", on_click=step_item, args=(1,), shortcut="J", use_container_width=True)

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
        if item.citation is not None:
            c = result.citations[item.citation]
            box.html(citation_html(result, c))
            with box.expander("Whole chunk"):
                st.html(citation_html(result, c, whole=True))
        mine = current.get((item.key, reviewer)) if reviewer else None
        if mine is not None:
            stale = mine.fingerprint != item.fingerprint
            box.html(own_label_html(LABEL_TEXT[mine.label], mine.note, stale))
        verdicts_here = judged.get(item.key, {})
        if verdicts_here:
            if blind and (mine is None or mine.fingerprint != item.fingerprint):
                box.caption(f"{len(verdicts_here)} judge verdict(s) hidden until you label this item (blind mode).")
            else:
                for v in verdicts_here.values():
                    box.html(verdict_html(v.judge, v.prompt_version, v.verdict, v.rationale))
        others = others_of.get(item.key, [])
        if others:
            box.html(others_html([(lab.reviewer, LABEL_TEXT[lab.label]) for lab in others]))
        cols = box.columns(len(item.labels) + 1)
        for k, label in enumerate(item.labels):
            cols[k].button(LABEL_TEXT[label], key=f"b-{item.key}-{label}", on_click=save, args=(n, label),
                           type="primary" if n == state.focus else "secondary")
        cols[-1].text_input("Note", key=f"note-{item.key}", label_visibility="collapsed", placeholder="note (optional)")
