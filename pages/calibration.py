"""Judge calibration: run a judge over the labelled items, then measure it against the humans."""

from __future__ import annotations

import streamlit as st
from citecheck.judging import calibration, captions, verdicts
from citecheck.judging import calibration_view as VIEW
from citecheck.judging.judges import BaselineJudge, ClaudeJudge, Progress, judge_items, not_yet_judged
from citecheck.judging.outcome import run_outcome
from citecheck.labelling import dataset, labels
from citecheck.llm.client import have_key, make_client
from citecheck.review.html import citation_html, disagreement_html, notice_html
from citecheck.text.markup import md_literal

from pages._common import (
    current_dataset,
    enter,
    read_label_events,
    read_verdicts,
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
    data = current_dataset()
    show_notice(data)
    events, label_warnings = read_label_events()
    records, adjudicated = labels.effective(events), labels.adjudications(events)  # retracted labels never count
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

# --- running a judge ----------------------------------------------------------------------------------
with st.expander("Run a judge over the labelled items", expanded=not verdict_records):
    try:
        secret_key = st.secrets.get("ANTHROPIC_API_KEY")
    except Exception:  # no secrets file: that is fine
        secret_key = None
    key_present = have_key(secret_key)
    kind = st.radio("Judge", ["baseline", "claude"], horizontal=True, key="cal_judge",
                    format_func=lambda k: "Baseline (lexical, no key)" if k == "baseline" else "Claude")
    c1, c2, c3 = st.columns(3)
    model = c1.text_input("Model", "claude-haiku-4-5", disabled=kind != "claude")
    budget = c2.number_input("Budget (USD)", min_value=0.0, value=1.0, step=0.5, disabled=kind != "claude")
    concurrency = c3.number_input("Concurrent calls", min_value=1, max_value=16, value=4, disabled=kind != "claude")
    if kind == "claude" and not key_present:
        st.info("Set ANTHROPIC_API_KEY in the environment (or in Streamlit secrets) to run the Claude judge. "
                "The key is never shown or written anywhere.")
    why_not = captions.run_disabled_reason(len(items), kind, key_present)
    go = st.button("Run", type="primary", disabled=why_not is not None, help=why_not)
    if why_not:
        st.caption(f"Run is disabled: {why_not}")
    if go:
        judge = BaselineJudge() if kind == "baseline" else ClaudeJudge(
            make_client(secret_key), model=model, concurrency=int(concurrency), max_cost_usd=float(budget))
        todo = not_yet_judged(items, verdict_records, judge)
        progress = Progress(total=len(todo))
        bar = st.progress(0.0, text=f"0 of {len(todo)} judged")
        run = VIEW.run_judge(judge, todo, progress, verdicts_path, on_saved=lambda p: bar.progress(
            p.done / max(p.total, 1), text=f"{p.done} of {p.total} judged \u00b7 ${p.spent:.4f} spent"))
        outcome = run_outcome(progress, run.saved, len(items) - len(todo), run.write_error)
        if outcome.kind == "success":
            st.success(outcome.text)
        else:  # names a file: untrusted text, escaped
            st.html(notice_html(outcome.kind, outcome.text))
        verdict_records, _ = read_verdicts(verdicts_path)

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
st.caption(VIEW.pairs_caption(report, cfg.overlap))
if not len(report.pairs.keys):
    st.info("No labelled item has a verdict from this judge in this split yet.")
    st.stop()

cols = st.columns(4)
for n, tile in enumerate(VIEW.figure_tiles(report)):
    cols[n % 4].metric(tile.title, tile.value, border=True)
    (cols[n % 4].warning if tile.warn else cols[n % 4].caption)(tile.caption)

left, right = st.columns(2)
left.altair_chart(VIEW.matrix_chart(report), width="stretch")
with right:
    corrected = VIEW.corrected_texts(report)
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
        st.html(notice_html("info", VIEW.agreement_text(a)))
    else:
        st.caption("No item was labelled by two reviewers, so the human ceiling is unknown.")

show_estimates(records, verdict_records, data.all_items, run, cfg.folders)

# --- disagreements ---------------------------------------------------------------------------------------
st.subheader("Disagreements")
rows = VIEW.disagreements(report)
if not rows:
    st.success("The judge agrees with every human label here.")
    st.stop()
kinds = VIEW.kind_choices(rows)
kind = st.selectbox("Human / judge", kinds, key="cal_kind", **kept("cal_kind", "kind", kinds))
shown = VIEW.of_kind(rows, kind)
st.caption(f"{len(shown)} of {len(rows)} disagreement(s)")
keys = [r.item for r in shown]
item_change = kept("cal_item", "item", keys)


def _step(delta: int) -> None:
    state["cal_item"] = VIEW.step(keys, state.get("cal_item"), delta)
    item_change["on_change"]()


b1, b2, _ = st.columns([1, 1, 4])
b1.button("Previous", key="cal_prev", on_click=_step, args=(-1,), use_container_width=True)
b2.button("Next", key="cal_next", on_click=_step, args=(1,), use_container_width=True)
pick = st.selectbox("Item", keys, key="cal_item", **item_change)
row = next(r for r in shown if r.item == pick)
found = VIEW.cited_pair(data, pick)
if found is not None:
    result, s, c = found
    left, right = st.columns([2, 3])
    left.html(disagreement_html(result.answer.question, s.text, row.human, row.judge, row.rationale))
    right.html(citation_html(result, c, whole=True))
    if which == "configured":
        st.page_link("pages/review.py", label="Open this answer on the review page",
                     query_params={"answer": result.answer.answer_id})
else:
    st.html(notice_html("warning", f"Item {pick} is not in the loaded answers (the log changed since it was labelled)."))
