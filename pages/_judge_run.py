"""The Judge calibration page's "Run a judge" part: a judge over the labelled items, each item judged
once or several times (runs 0..K-1, for self-consistency), its verdicts appended as they come
(judging.calibration_view.run_judge); the API key is never shown."""

from __future__ import annotations

import streamlit as st
from citecheck.judging import calibration_view, captions
from citecheck.judging.judges import BaselineJudge, ClaudeJudge, Progress, not_yet_judged
from citecheck.judging.outcome import run_outcome
from citecheck.llm.client import have_key, make_client
from citecheck.review.html import notice_html

from pages._common import read_verdicts

MAX_RUNS = 10


def show(items, verdict_records, verdicts_path):
    """The expander; returns the verdicts as they are after a run (or as they were)."""
    with st.expander("Run a judge over the labelled items", expanded=not verdict_records):
        try:
            secret_key = st.secrets.get("ANTHROPIC_API_KEY")
        except Exception:  # no secrets file: that is fine
            secret_key = None
        key_present = have_key(secret_key)
        kind = st.radio("Judge", ["baseline", "claude"], horizontal=True, key="cal_judge",
                        format_func=lambda k: "Baseline (lexical, no key)" if k == "baseline" else "Claude")
        c1, c2, c3, c4 = st.columns(4)
        model = c1.text_input("Model", "claude-haiku-4-5", disabled=kind != "claude")
        budget = c2.number_input("Budget (USD)", min_value=0.0, value=1.0, step=0.5, disabled=kind != "claude")
        concurrency = c3.number_input("Concurrent calls", min_value=1, max_value=16, value=4, disabled=kind != "claude")
        repeats = int(c4.number_input("Runs per item", min_value=1, max_value=MAX_RUNS, value=1, key="cal_repeat",
                                      help="Judge each item this many times (at the model's default sampling) "
                                           "to see how often the judge changes its own verdict. Only the first "
                                           "run counts in calibration and estimates."))
        if repeats > 1 and kind == "baseline":
            st.caption("The baseline judge is deterministic: its repeated runs are recorded and show no flips.")
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
            todo = not_yet_judged(items, verdict_records, judge, repeats)
            progress = Progress(total=len(todo))
            bar = st.progress(0.0, text=f"0 of {len(todo)} judged")
            run = calibration_view.run_judge(judge, todo, progress, verdicts_path, on_saved=lambda p: bar.progress(
                p.done / max(p.total, 1), text=f"{p.done} of {p.total} judged \u00b7 ${p.spent:.4f} spent"))
            outcome = run_outcome(progress, run.saved, len(items) * repeats - len(todo), run.write_error)
            # as HTML, escaped, never as Markdown: a run stopped by its budget reads "... for $0.98; budget:
            # $0.98 spent of $1.00 ...", which st.success set as LaTeX between the dollar signs; an error names a file
            st.html(notice_html(outcome.kind, outcome.text))
            if repeats > 1:
                st.caption(f"{repeats} runs per item: {progress.done} run(s) of {len(items)} item(s) judged this "
                           "time; run 0 is the one calibration counts.")
            verdict_records, _ = read_verdicts(verdicts_path)
    return verdict_records
