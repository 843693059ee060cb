"""Issue #11: the calibration page warns on tiny samples, reconciles its counts, says why Run is
disabled, has a legible confusion matrix and a disagreement browser with next / previous."""

import numpy as np
import streamlit as st
from citecheck.judging import captions
from citecheck.judging.calibration import Estimate
from citecheck.labelling.labels import Label
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG
from streamlit.testing.v1 import AppTest
from test_app import APP


def _label(item: str, label: str, fingerprint: str = "f", citation=1) -> Label:
    return Label(1, item, item.split("#")[0], 0, citation, "c", fingerprint, label, "", "ana", "t", "0")


def test_a_tiny_sample_carries_a_warning():
    tiny = captions.estimate_caption(Estimate(1.0, 1.0, 1.0, 3))
    assert tiny.startswith("95% CI 1.00 to 1.00, n = 3") and "under 30 items: read the interval" in tiny
    assert "say anything" not in tiny
    assert captions.small(Estimate(1.0, 1.0, 1.0, 3))
    big = captions.estimate_caption(Estimate(0.7, 0.6, 0.8, 120))
    assert big == "95% CI 0.60 to 0.80, n = 120" and not captions.small(Estimate(0.7, 0.6, 0.8, 120))


def test_left_out_labels_are_counted_by_why():
    labels = [_label("a#s0#c1", "supported"), _label("a#s0#c1", "cant_tell"),  # the latest counts
              _label("b#s0#c1", "partial", "old"), _label("c#s0#c1", "not_supported"),
              _label("d#s1", "needs_citation", citation=None)]
    counts = captions.left_out(labels, {"b#s0#c1": "new", "c#s0#c1": "f"})
    assert counts == {"cant_tell": 1, "stale": 1}
    text = captions.reconcile_caption(3, 3, counts)
    assert "1 labelled \u201cCan't tell\u201d are left out" in text and "1 whose answer or chunk changed" in text


def test_run_disabled_reasons_and_matrix_names():
    assert captions.run_disabled_reason(0, "baseline", True).startswith("Nothing to judge")
    assert "ANTHROPIC_API_KEY" in captions.run_disabled_reason(5, "claude", False)
    assert captions.run_disabled_reason(5, "claude", True) is None
    frame = captions.matrix_frame(np.arange(9).reshape(3, 3))
    assert list(frame["human"].unique()) == ["Supported", "Partially supported", "Not supported"]  # (the buttons' names)
    assert frame["items"].sum() == 36


def test_calibration_page_disagreements_next_previous_and_no_stop_after_the_run(tmp_path, monkeypatch):
    st.cache_resource.clear()
    monkeypatch.setenv("CITECHECK_LOGS", str(DEFAULT_LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(DEFAULT_CORPUS))
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.switch_page("pages/calibration.py").run()
    run = next(b for b in at.button if b.label == "Run")
    assert run.disabled and "Nothing to judge" in run.help  # no labels in the configured file yet
    at.radio(key="cal_set").set_value("expertqa").run()
    next(b for b in at.button if b.label == "Run").click().run()
    assert not at.exception
    assert not [b for b in at.button if b.label == "Stop"]
    keys = at.selectbox(key="cal_item").options
    assert len(keys) > 2
    first = at.selectbox(key="cal_item").value
    at.button(key="cal_next").click().run()
    assert at.selectbox(key="cal_item").value == keys[1]
    at.button(key="cal_prev").click().run()
    at.button(key="cal_prev").click().run()
    assert at.selectbox(key="cal_item").value == keys[-1] and first == keys[0]
