"""Judge calibration: run a judge over the labelled items, then measure it against the humans."""

from __future__ import annotations

import streamlit as st
from citecheck.judging import calibration, calibration_view, captions, verdicts
from citecheck.judging.judge_card import examples_of, examples_text
from citecheck.judging.judges import judge_items
from citecheck.labelling import dataset, labels
from citecheck.review.html import notice_html
from citecheck.text.markup import md_literal

from pages import _alignment as alignment_part
from pages import _calibration_disagreements as calibration_disagreements
from pages import _judge_card as judge_card_part
from pages import _judge_comparison as judge_comparison
from pages import _judge_run as judge_run
from pages import _self_consistency as self_consistency
from pages._common import (
    enter,
    labelled_dataset,
    read_label_events,
    read_verdicts,
    say_inputs,
    settings,
    show_notice,
    style,
)
from pages._estimate import show as show_estimates
from pages._kept import LABEL_SETS, SPLITS, kept, kept_run

enter("calibration")
state = st.session_state

style()
cfg = settings()
st.header("Judge calibration")
st.caption("How often does a judge agree with the people who labelled the same items, and where does it go "
           "wrong? Positive class: **not supported** (the judge's job is to catch it).")

SETS = {"configured": "The configured logs and labels file", "expertqa": "ExpertQA sample (real expert labels)"}
which = st.radio("Labels", list(SETS), format_func=SETS.get, horizontal=True, key="cal_set",
                 **kept("cal_set", "labels", LABEL_SETS))


@st.cache_resource(show_spinner="Reading the ExpertQA sample ...")
def _expertqa() -> dataset.Dataset:
    return dataset.load([settings().expertqa_log])


if which == "expertqa":
    data = _expertqa()
    records, label_warnings = labels.read(cfg.expertqa_labels)
    adjudicated = {}
    verdicts_path = cfg.expertqa_verdicts
else:
    events, label_warnings = read_label_events()
    records, adjudicated = labels.effective(events), labels.adjudications(events)  # retracted labels never count
    data = labelled_dataset(events)  # the logs; with a checked store, its labelled answers
    if cfg.store is None:
        show_notice(data)
    say_inputs(data, labels=cfg.labels, verdicts=cfg.verdicts)
    verdicts_path = cfg.verdicts
for w in label_warnings:
    st.html(notice_html("warning", f"labels file: skipped {w}"))
verdict_records, verdict_warnings = read_verdicts(verdicts_path)
for w in verdict_warnings:
    st.html(notice_html("warning", f"verdicts file: skipped {w}"))

labelled_keys = {r.item for r in records if r.citation is not None}
items = judge_items(data.results, labelled_keys, data.items_by_answer)  # items cached with the data
fingerprints = {i.key: i.fingerprint for i in data.all_items}
st.caption(captions.reconcile_caption(len(labelled_keys), len(items), captions.left_out(records, fingerprints))
           + f" Verdicts: {md_literal(cfg.shown(verdicts_path))}")

verdict_records = judge_run.show(items, verdict_records, verdicts_path)

runs = verdicts.runs(verdict_records)
if not runs:
    st.info("No verdicts yet. Run a judge above, or import another tool's verdicts with "
            "`citecheck verdicts import FILE --judge NAME --out VERDICTS`.")
    st.stop()

# --- the figures -------------------------------------------------------------------------------------
c1, c2 = st.columns([2, 1])
run = c1.selectbox("Judge and prompt version", runs, format_func=lambda r: f"{r[0]} \u00b7 {r[1]}", key="cal_run",
                   **kept_run("cal_run", runs))
split = c2.radio("Items", SPLITS, horizontal=True, key="cal_split", **kept("cal_split", "split", SPLITS),
                 help="Items split by a hash of their key: iterate on the prompt with dev, quote test.")
report = calibration.calibrate(records, verdict_records, run[0], run[1], split, fingerprints, adjudicated=adjudicated,
                     overlap=cfg.overlap)
st.caption(calibration_view.pairs_caption(report, cfg.overlap))
if examples := examples_of(verdict_records, *run):
    st.caption(md_literal(examples_text(examples)))
if not len(report.pairs.keys):
    st.info("No labelled item has a verdict from this judge in this split yet.")
    st.stop()

cols = st.columns(4)
for n, tile in enumerate(calibration_view.figure_tiles(report)):
    cols[n % 4].metric(tile.title, tile.value, border=True)
    (cols[n % 4].warning if tile.warn else cols[n % 4].caption)(tile.caption)

left, right = st.columns(2)
left.altair_chart(calibration_view.matrix_chart(report), width="stretch")
with right:
    corrected = calibration_view.corrected_texts(report)
    if corrected is not None:
        st.metric("Not-supported rate on unlabelled items, corrected", corrected[0], border=True)
        st.caption(corrected[1])
    else:
        st.caption("Judge more than the labelled items (`citecheck judge --all-items`) to estimate the true "
                   "not-supported rate of unlabelled answers.")
    a = report.agreement
    if a.shared_items:
        st.metric("Reviewer agreement (Krippendorff's alpha)", "n/a" if a.alpha is None else f"{a.alpha:.2f}",
                  border=True)
        st.html(notice_html("info", calibration_view.agreement_text(a)))
    else:
        st.caption("No item was labelled by two reviewers, so the human ceiling is unknown.")

human = calibration.human_labels(records, fingerprints, adjudicated=adjudicated, overlap=cfg.overlap)
repeats = self_consistency.measure(verdict_records, run, human, split)
self_consistency.show(repeats)
judge_card_part.show(report, verdict_records, repeats, records, adjudicated, cfg.overlap, data.all_items)

if which == "configured" and cfg.store is not None:  # the population of an estimate is every judged item
    st.subheader("Estimated rates")
    st.info("Estimated rates need every judged answer, not only the labelled ones this page reads from the "
            "checked store: run `citecheck estimate --log LOG... --labels ... --verdicts ...` on the logs.")
else:
    show_estimates(records, adjudicated, cfg.overlap, verdict_records, data.all_items, run, cfg.folders)

st.subheader("Disagreements")
calibration_disagreements.show(report, data, which)

judge_comparison.show(records, adjudicated, cfg.overlap, verdict_records, runs, split, fingerprints)
alignment_part.show(records, adjudicated, cfg.overlap, verdict_records, split, fingerprints)
