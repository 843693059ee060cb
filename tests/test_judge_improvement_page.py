"""The Judge calibration page's parts for improving a judge, through AppTest on the ExpertQA sample:
self-consistency and unstable items, the comparison of two runs, alignment over time and the judge
card download."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import streamlit as st
from citecheck.judging import verdicts as verdict_store
from citecheck.judging.calibration import CLASSES
from citecheck.text.markup import md_literal
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG, EXPERTQA_LABELS, EXPERTQA_LOG
from helpers import run_cli
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTED = ("scripted:<b>m</b>", "fixed.v1")  # a name with markup: shown as text, never as HTML


@pytest.fixture(autouse=True)
def settings(tmp_path, monkeypatch):
    st.cache_resource.clear()
    st.cache_data.clear()
    monkeypatch.setenv("CITECHECK_LOGS", str(DEFAULT_LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(DEFAULT_CORPUS))
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def html(at) -> str:
    return "\n".join(str(h.proto.body) for h in at.get("html"))


def two_runs(tmp_path: Path) -> None:
    """The baseline, and a scripted judge run three times (every fifth item changes in the last run)
    that is right on every other supported item the baseline gets wrong, in the page's ExpertQA file."""
    target = tmp_path / "expertqa-verdicts.jsonl"  # where the page looks for the ExpertQA set's verdicts
    code, _, err = run_cli("judge", "--log", EXPERTQA_LOG, "--labels", EXPERTQA_LABELS, "--judge", "baseline",
                           "--out", target)
    assert code == 0, err
    from citecheck.labelling import labels as label_store

    human = {lb.item: lb.label for lb in label_store.read(EXPERTQA_LABELS)[0]}
    scripted = []
    for n, v in enumerate(x for x in verdict_store.read(target)[0] if x.scored):
        better = "supported" if human.get(v.item) == "supported" and n % 2 else v.verdict
        for r in range(3):
            value = CLASSES[(CLASSES.index(better) + 1) % 3] if r == 2 and n % 5 == 0 else better
            scripted.append(dataclasses.replace(v, judge=SCRIPTED[0], prompt_version=SCRIPTED[1], verdict=value,
                                                repeat=r, cost_usd=0.001, examples_sha256="e" * 64))
    verdict_store.append(target, scripted)


def test_the_improvement_parts_on_the_calibration_page(tmp_path):
    two_runs(tmp_path)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("pages/calibration.py").run()
    at.radio(key="cal_set").set_value("expertqa").run()
    assert not at.exception, [e.value for e in at.exception]
    # the baseline was not repeated
    assert any("Not measured: run `citecheck judge --repeat K`" in c.value for c in at.caption)
    at.selectbox(key="cal_run").set_value(SCRIPTED).run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    assert {"Verdict changed across runs", "Fleiss' kappa (3 runs)", "Majority verdict vs humans",
            "Run 0 alone vs humans"} <= set(metrics)
    assert any(c.value == md_literal(f"examples: sha256 {'e' * 64}") for c in at.caption)
    assert any(c.value.startswith("Unstable items, most unstable first:") for c in at.caption)
    page = html(at)
    assert "<b>m</b>" not in page and "&lt;b&gt;m&lt;/b&gt;" in page  # the judge's name as text in the verdict
    # the comparison: baseline (A) against the scripted judge (B)
    assert at.selectbox(key="cmp_a").value == ("baseline", "baseline.v1") and at.selectbox(key="cmp_b").value == SCRIPTED
    assert "B is better on" in page and "no worse elsewhere at this n" in page
    assert "Cost per item: A unknown" in page and "B $0.00100 per item" in page
    specs = [c.proto.spec for c in at.get("vega_lite_chart")]
    assert any("B - A" in spec for spec in specs)  # the chart of the differences
    assert any('"facet"' in spec and "week" in spec for spec in specs)  # alignment by week
    assert any(str(h.proto.body).startswith('<div class="cc-ok">B is better on') for h in at.get("html"))
    at.selectbox(key="cmp_b").set_value(("baseline", "baseline.v1")).run()
    assert "No difference found at this n" in html(at)
    # the other way round, B is worse: marked as a warning, never as good news (the page once looked for
    # the word "better", which "B is worse on ..., no better elsewhere" holds)
    at.selectbox(key="cmp_a").set_value(SCRIPTED).run()
    worse = [str(h.proto.body) for h in at.get("html") if "B is worse on" in str(h.proto.body)]
    assert len(worse) == 1 and worse[0].startswith('<div class="cc-fail">'), worse
    at.radio(key="align_by").set_value("guidelines").run()
    assert not at.exception
    assert any('"facet"' in c.proto.spec and "guidelines" in c.proto.spec for c in at.get("vega_lite_chart"))
    downloads = [e for e in at.get("download_button")]
    assert len(downloads) == 2
