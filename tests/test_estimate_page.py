"""The "Estimated rates" section of the Judge calibration page, through AppTest, on ExpertQA."""

import io
from pathlib import Path

import pytest
import streamlit as st
from citecheck.cli.main import main
from citecheck.labelling import sample as samples
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG, EXPERTQA_LOG
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def settings(tmp_path, monkeypatch):
    st.cache_resource.clear()
    st.cache_data.clear()
    monkeypatch.setenv("CITECHECK_LOGS", str(DEFAULT_LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(DEFAULT_CORPUS))
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def cli(*argv):
    assert main([str(a) for a in argv], io.StringIO(), io.StringIO()) == 0


def html(at) -> str:
    return "\n".join(str(h.proto.body) for h in at.get("html"))


def test_estimates_with_a_sample_on_the_calibration_page(tmp_path):
    verdicts = tmp_path / "expertqa-verdicts.jsonl"  # where the page looks for the ExpertQA set's verdicts
    cli("judge", "--log", EXPERTQA_LOG, "--all-items", "--judge", "baseline", "--out", verdicts)
    cli("sample", "--log", EXPERTQA_LOG, "--size", "300", "--seed", "2", "--out", tmp_path / "eqa-sample.jsonl")
    (tmp_path / "not-a-sample.jsonl").write_text('{"record": "item"}\n')
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.switch_page("pages/calibration.py").run()
    at.radio(key="cal_set").set_value("expertqa").run()
    assert not at.exception
    page = html(at)
    assert "Rate of not-supported citations" in page and "PPI++ (power-tuned)" in page
    assert "no --sample given" in page
    choices = at.selectbox(key="est_sample").options
    assert choices == ["none: all labels", "eqa-sample.jsonl"]
    at.selectbox(key="est_sample").set_value(tmp_path / "eqa-sample.jsonl").run()
    assert not at.exception
    page = html(at)
    sample = samples.read(tmp_path / "eqa-sample.jsonl")
    assert sample.sample_id in page and "not in sample" in page and "Left out" in page
    charts = [c.proto.spec for c in at.get("vega_lite_chart")]
    assert any('"facet"' in spec and '"x2"' in spec for spec in charts)  # the chart of the intervals
    at.number_input(key="est_target").set_value(5.0).run()
    assert "to reach +/- 5.0%" in html(at)


def test_review_page_works_through_a_sample(tmp_path):
    from citecheck.labelling import labels

    cli("sample", "--log", DEFAULT_LOG, "--corpus", DEFAULT_CORPUS, "--size", "5", "--seed", "8",
        "--out", tmp_path / "s.jsonl")
    sample = samples.read(tmp_path / "s.jsonl")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.sidebar.text_input[0].input("ana").run()
    at.sidebar.selectbox(key="review_sample").set_value(tmp_path / "s.jsonl").run()
    assert "0 of 5 sampled items labelled by you" in html(at)
    at.button(key="resume").click().run()
    first = sample.items[0]
    assert at.session_state.answer_id == first.rsplit("#", 2)[0]
    at.button(key="key-supported").click().run()  # the focused item: the first sampled one
    records, _ = labels.read(tmp_path / "labels.jsonl")
    assert [(r.item, r.sample) for r in records] == [(first, sample.sample_id)]
    assert "1 of 5 sampled items labelled by you" in html(at)
    at.button(key="resume").click().run()
    assert at.session_state.answer_id == sample.items[1].rsplit("#", 2)[0]
