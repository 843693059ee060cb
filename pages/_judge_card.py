"""The Judge calibration page's judge card download: the card (citecheck.judging.judge_card) of the
run and split shown, as Markdown and as JSON."""

from __future__ import annotations

import streamlit as st
from citecheck.judging import estimate, judge_card

from pages._judge_comparison import CHEAP_KEYS


@st.cache_data(max_entries=8, show_spinner=False, hash_funcs=CHEAP_KEYS)
def _estimate(records, adjudicated, overlap: int, verdicts, items, run: tuple[str, str]):
    """The estimate the card states (``estimate.estimate``), or why there is none."""
    try:
        return estimate.estimate(records, verdicts, items, run[0], run[1], adjudicated=adjudicated,
                                 overlap=overlap), ""
    except estimate.EstimateError as exc:
        return None, str(exc)


def show(report, verdicts, consistency, records, adjudicated, overlap: int, items) -> None:
    estimates, missing = _estimate(records, adjudicated, overlap, verdicts, items, (report.judge, report.prompt_version))
    card = judge_card.judge_card(report, verdicts, consistency, estimates, missing)
    name = judge_card.file_name(card)
    c1, c2, _ = st.columns([1, 1, 3])
    c1.download_button("Download judge card (Markdown)", card.to_markdown(), file_name=f"{name}.md",
                       mime="text/markdown", key="card_md")
    c2.download_button("Download judge card (JSON)", card.to_json(), file_name=f"{name}.json",
                       mime="application/json", key="card_json")
