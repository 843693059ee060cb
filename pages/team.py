"""Team: per reviewer and per assignment figures for a lead (leads only), and their CSV.  The figures
and their rules are in core (``labelling.team``); this page lays them out as data tables."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd
import streamlit as st
from citecheck.labelling import team
from citecheck.labelling.assignments import Assignment, Release
from citecheck.labelling.labels import Adjudication, Label, Retraction
from citecheck.review.html import notice_html

from pages._common import enter, label_figure, label_state, style
from pages._roles import require_lead

enter("team")

style()
st.header("Team")
require_lead("the Team page")
state = label_state()
for w in state.errors:
    st.html(notice_html("warning", f"labels store: skipped {w}"))
now = datetime.now(timezone.utc).replace(second=0, microsecond=0)  # (the figures are as of the minute)


def figures(read):
    work = team.assignments_of(read.events)
    return team.reviewers(read.events, now, work), team.assignment_figures(read.events, now, work)


# made once a minute, and again when a label, undo, adjudication, assignment or release comes
# (2 s at 110,000 events; the opens written on every move change nothing here)
people, progress = label_figure(state, ("team", now), figures,
                                kinds=(Label, Retraction, Adjudication, Assignment, Release))
st.caption(f"As of {now:%Y-%m-%d %H:%M} UTC. Today is the UTC date; this week is the ISO week (from Monday "
           f"{team.week_start(now):%Y-%m-%d} 00:00 UTC). Seconds per item: the median gap between a reviewer's "
           f"consecutive labels, gaps over {team.PAUSE_SECONDS / 60:g} minutes cut as pauses. Agreement and "
           "\u201ccan't tell\u201d use each reviewer's current labels (undone ones left out); the undo rate is "
           "retractions per label made.")

st.subheader("Reviewers")
if people:
    st.dataframe(pd.DataFrame(team.reviewer_rows(people)), hide_index=True)
else:
    st.html(notice_html("info", "No label and no assignment yet."))
st.subheader("Agreement between reviewers (Cohen's kappa)")
pairs = team.kappa_rows(people)
if pairs:
    st.dataframe(pd.DataFrame(pairs), hide_index=True)
else:
    st.html(notice_html("info", "No two reviewers have labelled the same item yet."))
st.subheader("Assignments")
if progress:
    st.dataframe(pd.DataFrame(team.assignment_rows(progress)), hide_index=True)
    st.caption("Expected finish: the work left at the assignment's pace so far (its done items over the time "
               "from the first of their labels to now).")
else:
    st.html(notice_html("info", "No assignment yet."))
st.download_button("Download the figures (CSV)", team.to_csv(people, progress, now),
                   file_name=f"citecheck-team-{now:%Y%m%d-%H%M}.csv", mime="text/csv", icon=":material/download:")
