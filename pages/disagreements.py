"""Disagreements: items whose reviewers' labels differ, side by side, and the lead's adjudication."""

from __future__ import annotations

import streamlit as st
from citecheck.errors import StoreError
from citecheck.labelling import adjudication, agreement, labels
from citecheck.labelling import events as label_events
from citecheck.labelling.items import LABEL_TEXT
from citecheck.review import identity as reviewer_identity
from citecheck.review.html import citation_html, labelled_html, notice_html, sentence_html

from pages._common import (
    current_dataset,
    enter,
    guidelines,
    identity,
    read_label_events,
    settings,
    show_notice,
    style,
)

enter("disagreements")

style()
cfg = settings()
state = st.session_state
st.header("Disagreements")
st.caption("Items whose reviewers gave different labels: every label and note side by side, and an adjudicated "
           "label recorded as a new event in the labels store (nothing is overwritten).")
data = current_dataset()
show_notice(data)
events, warnings = read_label_events()
for w in warnings:
    st.html(notice_html("warning", f"labels file: skipped {w}"))
current = labels.latest(labels.effective(events))
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
st.subheader("Agreement between reviewers")
st.html(adjudication.agreement_html(agreement.team_agreement(agreement.table(current.values(), fingerprints))))

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
st.caption(f"{len(waiting)} of {len(found)} disagreement(s) await adjudication.")
if not shown:
    st.success("Every disagreement is adjudicated.")
    st.stop()
keys = [d.item.key for d in shown]
pick = st.selectbox("Item", keys, key="dis_item")
d = shown[keys.index(pick)] if pick in keys else shown[0]
item = d.item
result = data.get(item.answer_id)
left, right = st.columns([2, 3])
left.html(labelled_html([("Question", result.answer.question)]))
left.html(sentence_html(result, item.sentence, []))
if item.citation is not None:
    right.html(citation_html(result, result.citations[item.citation], whole=True))
else:
    right.caption("An uncited sentence.")
st.html(adjudication.side_by_side_html(d))

# keyed by the item: every item's form starts empty (a choice never carries over to the next item),
# and Enter in the note box does not submit: only the button records a decision
with st.form(f"adjudicate-{item.key}", border=True, enter_to_submit=False):
    choice = st.radio("Adjudicated label", list(item.labels), format_func=LABEL_TEXT.get, horizontal=True,
                      index=None, key=f"adj-label-{item.key}")
    note = st.text_input("Note (why)", placeholder="optional", key=f"adj-note-{item.key}")
    go = st.form_submit_button("Record adjudicated label", type="primary")
if go:
    rules, _ = guidelines()
    try:
        if choice is None:
            raise label_events.EventError("choose the adjudicated label first")
        labels.append_event(cfg.labels, label_events.make_adjudication(item, choice, name, list(d.labels), note,
                                                       rules.version if rules else ""))
    except label_events.EventError as exc:
        st.html(notice_html("error", f"Not recorded: {exc}."))
    except (OSError, StoreError) as exc:
        st.html(notice_html("error", f"Not recorded: could not write the labels store ({exc})."))
    else:
        state.adjudication_flash = ("success", f"Recorded \u201c{LABEL_TEXT[choice]}\u201d for {item.key}, "
                                               f"resolving {len(d.labels)} label(s).")
        st.rerun()
