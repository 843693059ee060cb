"""Disagreements: items whose reviewers' labels differ, side by side, and the lead's adjudication."""

from __future__ import annotations

import streamlit as st
from citecheck.judging import calibration
from citecheck.labelling import adjudication, agreement, labels
from citecheck.review import identity as reviewer_identity
from citecheck.review import keypresses, navigation, review_view
from citecheck.review.html import (
    citation_html,
    disagreement_focus_html,
    focus_token,
    label_keys,
    labelled_html,
    notice_html,
    run_token,
    sentence_html,
)
from citecheck.review.session_state import acting

from pages import _comments as comment_threads
from pages import _drafts as drafts
from pages import _roles as team_roles
from pages._common import (
    enter,
    guidelines,
    identity,
    labelled_dataset,
    read_label_events,
    say_inputs,
    script_frame,
    settings,
    show_notice,
    style,
)

enter("disagreements")

style()
script_frame(keypresses.installer_html(), "keyqueue")  # label keys, J and K, one at a time, as on the review page
cfg = settings()
state = st.session_state
st.header("Disagreements")
st.caption("Items whose reviewers gave different labels: every label and note side by side, and an adjudicated "
           "label recorded as a new event in the labels store (nothing is overwritten).")
events, warnings = read_label_events()
data = labelled_dataset(events)  # the logs; with a checked store, its labelled answers
if settings().store is None:
    show_notice(data)
say_inputs(data, labels=cfg.labels)
for w in warnings:
    st.html(notice_html("warning", f"labels file: skipped {w}"))
effective = labels.effective(events)
current = labels.latest(effective)
adjudicated = labels.adjudications(events)


who = identity()  # the same rule as the review page: the login, else the address, else the session
with st.sidebar:
    if who.source in ("login", "signed-out"):  # a signed-in deployment: the adjudicator is the user
        name = who.name
        st.html(labelled_html([("Adjudicator", name or "not signed in")]))
    else:
        name = reviewer_identity.clean_name(st.text_input("Your name (adjudicator)", value=who.name, key="adjudicator_box"))
        if name and name != who.name:
            state.reviewer_name = name
            st.query_params["reviewer"] = name

fingerprints = {i.key: i.fingerprint for i in data.all_items}
settled_text = calibration.settled_text(effective, fingerprints, adjudicated, cfg.overlap)
st.subheader("Agreement between reviewers")
st.html(adjudication.agreement_html(agreement.team_agreement(agreement.table(current.values(), fingerprints))))
st.subheader("Open comment threads")
leading = team_roles.current().lead  # a reviewer sees only the threads of items they labelled (blind labelling)
comment_threads.open_threads(events, name, None if leading else [k for k, who in current if who == name])

found, held = adjudication.disagreements(data.all_items, current, adjudicated, name, cfg.overlap)
if held:
    st.caption(f"{held} item(s) with differing labels are held back: you have not labelled them and they have fewer "
               f"than {cfg.overlap} labels, so your queue may still bring them (blind labelling).")
flash = state.pop("adjudication_flash", None)
if flash:
    st.html(notice_html(*flash))
if not found:
    st.success("No disagreements: every item's current labels agree.")
    st.stop()
waiting = [d for d in found if not d.settled]
show = st.radio("Show", ["Awaiting adjudication", "All disagreements"], horizontal=True, key="dis_show")
shown = waiting if show == "Awaiting adjudication" else found
st.caption(adjudication.remaining_text(waiting, len(found), cfg.overlap) + " " + settled_text)
if not shown:
    st.success("Every disagreement is adjudicated.")
    st.stop()
keys = [d.item.key for d in shown]
at = adjudication.focused(keys, state.get("dis_at"), state.get("dis_pos", 0))
state.dis_at = state.dis_pick = at
position = keys.index(at)
d = shown[position]
item = d.item
result = data.get(item.answer_id)
by_key = {k: adjudication.picker_text(x, data.get(x.item.answer_id)) for k, x in zip(keys, shown)}


def _pick() -> None:
    with acting(state):
        state.dis_at = state.dis_pick
        state.dis_moves = state.get("dis_moves", 0) + 1


def _decide(label: str) -> None:
    """Record the lead's label for the disagreement shown (a button or its key 1-4)."""
    rules, _ = guidelines()
    note = state.get(f"adj-note-{item.key}", "") or ""
    navigation.decide_disagreement(state, keys, at, lambda: adjudication.decide(cfg.labels, d, label, name, note,
                                                                               rules.version if rules else ""))


st.selectbox("Disagreement", keys, key="dis_pick", format_func=by_key.get, on_change=_pick)
st.html(disagreement_focus_html(item.key, position + 1, len(keys), state.get("dis_moves", 0), len(item.labels),
                                run_token()))
moves = st.container(horizontal=True, gap="small")
moves.button("Previous disagreement", on_click=navigation.step_disagreement, args=(state, keys, at, -1), shortcut="K",
             disabled=position == 0)
moves.button("Next disagreement", on_click=navigation.step_disagreement, args=(state, keys, at, 1), shortcut="J",
             disabled=position + 1 == len(keys))
left, right = st.columns([2, 3])
left.html(labelled_html([("Question", result.answer.question)]) if result.answer.question else "")
left.html(sentence_html(result, item.sentence, []))
if item.citation is not None:
    right.html(citation_html(result, result.citations[item.citation], whole=True))
else:
    right.caption("An uncited sentence.")
st.html(adjudication.side_by_side_html(d))
with st.expander("Comments on this item"):
    comment_threads.show(item.key, events, name, blind=not leading, labelled=(item.key, name) in current)

team_roles.require_lead("Adjudicating")  # a reviewer sees the disagreement, not the actions
# keyed by the item: every item's note box starts empty (nothing carries over to the next item) and
# keeps what was typed in it while another item is open; Enter in it only commits the note: a
# decision is a label button (or its key 1-4), never Enter
drafts.restore(f"adj-note-{item.key}")
st.text_input("Note (why), recorded with the label you choose", placeholder="optional", key=f"adj-note-{item.key}",
              on_change=drafts.keep, args=(f"adj-note-{item.key}",))
st.caption(f"Adjudicated label ({label_keys(len(item.labels))}):")
row = st.container(horizontal=True, gap="small")
rules_now, _ = guidelines()
for b in review_view.label_buttons(item, None, rules_now, f"adj-{focus_token(item.key)}", True):
    row.button(b.text, key=b.key, on_click=_decide, args=(b.label,), shortcut=b.shortcut, width="content",
               help=b.help)
