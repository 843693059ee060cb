"""One rounding rule: the same log gives the same percentages in check, report and the app."""

import io
import json
from fractions import Fraction
from pathlib import Path

import pytest
import streamlit as st
from citecheck.cli.main import main
from citecheck.contract.log import checksum
from citecheck.reports.rates import json_rate, percent, points, share
from hypothesis import given, strategies
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TEXT = "Employees get 18 days of earned leave per year."


def _log(path: Path, failing: int, total: int) -> Path:
    """``total`` answers with one citation each; the first ``failing`` cite a chunk never retrieved."""
    lines = []
    for n in range(total):
        chunk = {"chunk_id": "c1", "source": "leave.md", "text": TEXT, "checksum": checksum(TEXT)}
        cited = "c9" if n < failing else "c1"
        lines.append(json.dumps({
            "log_version": 1, "answer_id": f"a-{n:03d}", "question": "How many days?", "refused": False,
            "model": "m", "prompt_version": "p1", "chunks": [chunk], "answer": "You get 18 days of earned leave.",
            "citations": [{"kind": "span", "answer_start": 0, "answer_end": 32, "chunk_id": cited,
                           "quote": "18 days of earned leave"}]}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("count, total, shown", [(9, 59, "15.3%"), (3, 48, "6.3%"), (1, 8, "12.5%"),
                                                 (1, 3, "33.3%"), (2, 3, "66.7%"), (0, 5, "0.0%"), (5, 5, "100.0%"),
                                                 (1, 0, "n/a")])
def test_percent_rounds_half_up_from_the_counts(count, total, shown):
    assert percent(count, total) == shown


def test_percent_of_a_rate_and_of_nothing():
    assert percent(9 / 59) == "15.3%" and percent(0.0625) == "6.3%"
    assert percent(None) == "n/a" and percent(float("nan")) == "n/a"
    assert json_rate(9 / 59) == 0.1525 and json_rate(None) is None and share(1, 0) is None


@given(strategies.integers(0, 10**6), strategies.integers(1, 10**6))
def test_percent_is_the_exact_share_rounded_half_up(count, total):
    shown = Fraction(percent(count, total).rstrip("%"))
    exact = Fraction(count * 100, total)
    assert abs(shown - exact) <= Fraction(1, 20)
    if abs(shown - exact) == Fraction(1, 20):  # a tie goes up
        assert shown > exact


@given(strategies.integers(0, 10**7), strategies.integers(1, 10**7))
def test_a_rate_shows_as_its_counts_show(count, total):
    """The Failures page's tiles hold a rate (a float), its tables and ``check`` the counts: both
    show the same figure, ties included (3 of 80 is 3.75%, the float 0.037499...: 3.8% on both)."""
    from citecheck.reports import readable

    count = min(count, total)
    assert percent(count / total) == percent(count, total)
    assert readable.share(count, total) == f"{percent(count, total)} ({count:,} of {total:,})"


def test_the_ties_a_float_rate_used_to_round_down():
    from citecheck.reports import readable

    assert [percent(c / t) for c, t in [(3, 80), (7, 80), (3, 48), (1, 8)]] == ["3.8%", "8.8%", "6.3%", "12.5%"]
    assert readable.share(3, 48) == "6.3% (3 of 48)" and readable.share(0, 0) == "n/a (0 of 0)"


def _cli(*argv) -> str:
    out, err = io.StringIO(), io.StringIO()
    main([str(a) for a in argv], out, err)
    return out.getvalue()


def test_9_of_59_is_15_3_percent_in_check_report_and_the_failures_page(tmp_path, monkeypatch):
    log = _log(tmp_path / "answers.jsonl", 9, 59)
    assert "citations: 59, failed 9 = 15.3%" in _cli("check", log)
    assert "9 of 59 citations = 15.3%" in _cli("report", log)
    summary = json.loads(_cli("check", log, "--format", "json").splitlines()[-1])
    assert summary["citation_failure_rate"] == 0.1525

    st.cache_resource.clear()
    monkeypatch.setenv("CITECHECK_LOGS", str(log))
    monkeypatch.setenv("CITECHECK_CORPUS", "")
    monkeypatch.setenv("CITECHECK_GOLDEN", "")
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/failures.py").run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Failed citations"] == "15.3%"


def test_the_gate_compares_the_unrounded_rate(tmp_path):
    log = _log(tmp_path / "answers.jsonl", 9, 59)  # 0.152542...: above 0.15254 though it prints as 0.1525
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", str(log), "--quiet", "--max-failure-rate", "0.15254"], out, err) == 1
    assert main(["check", str(log), "--quiet", "--max-failure-rate", "0.15255"], out, err) == 0


def test_the_app_honours_refusal_and_casefold_settings_as_check_does(tmp_path, monkeypatch):
    from citecheck.web.settings import load_settings

    cfg = load_settings(["--refusal", "We cannot say.", "--casefold"], {})
    assert cfg.check_options().refusals == ("We cannot say.",) and cfg.check_options().casefold
    env = load_settings([], {"CITECHECK_REFUSALS": "We cannot say.\nNo idea.", "CITECHECK_CASEFOLD": "1"})
    assert env.check_options().refusals == ("We cannot say.", "No idea.") and env.check_options().casefold

    log = tmp_path / "answers.jsonl"
    log.write_text(json.dumps({"log_version": 1, "answer_id": "r-1", "question": "q", "refused": False,
                               "chunks": [], "answer": "We cannot say.", "citations": []}) + "\n", encoding="utf-8")
    assert "1 refused = 100.0%" in _cli("check", log, "--refusal", "We cannot say.")
    assert "0 refused = 0.0%" in _cli("check", log)
    st.cache_resource.clear()
    monkeypatch.setenv("CITECHECK_LOGS", str(log))
    monkeypatch.setenv("CITECHECK_CORPUS", "")
    monkeypatch.setenv("CITECHECK_GOLDEN", "")
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    for refusals, shown in (("", "0.0%"), ("We cannot say.", "100.0%")):
        st.cache_resource.clear()
        monkeypatch.setenv("CITECHECK_REFUSALS", refusals)
        at = AppTest.from_file(APP, default_timeout=60).run()
        at.switch_page("pages/failures.py").run()
        assert not at.exception
        assert {m.label: m.value for m in at.metric}["Refused"] == shown


def test_a_difference_in_points_is_rounded_as_the_figures_are():
    assert points(Fraction(1, 16)) == "+6.3 pts" and percent(1, 16) == "6.3%"  # (the float 0.0625 formatted gave +6.2)
    assert points(Fraction(-1, 16)) == "-6.3 pts"
    assert points(0.0) == points(Fraction(-1, 10**6)) == "+0.0 pts"
    assert points(3 / 80) == "+3.8 pts" == points(Fraction(3, 80))
    assert points(None) is None and points(float("nan")) is None


@given(strategies.integers(0, 500), strategies.integers(1, 500), strategies.integers(1, 500))
def test_against_nothing_the_difference_is_the_figure(count, extra, other):
    """B - A with A at 0 of anything reads as B's own percentage, signed, as the Compare tab shows both."""
    total = count + extra
    assert points(Fraction(count, total) - Fraction(0, other)) == f"+{percent(count, total)[:-1]} pts"
    assert points(Fraction(0, other) - Fraction(count, total)) == \
        ("+0.0 pts" if percent(count, total) == "0.0%" else f"-{percent(count, total)[:-1]} pts")


def test_the_compare_table_gives_b_minus_a_from_the_counts():
    from citecheck.reports import views
    from citecheck.reports.figures import Difference, Figure

    a, b = Figure("failing_answers", "failing answers", 0, 10, "answers"), Figure("failing_answers", "failing answers", 1, 16, "answers")
    row = views.compare_table([Difference("failing_answers", "failing answers", a, b, 1 / 16, -0.05, 0.17, 0.4)],
                              "m1", "m2").iloc[0]
    assert (row["A: m1"], row["B: m2"], row["B - A"]) == ("0.0% (0/10)", "6.3% (1/16)", "+6.3 pts")
    assert row["95% interval"] == "-5.0 to +17.0 pts"
