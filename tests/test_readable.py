"""Issue #11: the Failures page's tables read well: named columns, percentages with counts, dates."""

import re

import pandas as pd
import pytest
from citecheck.labelling import dataset
from citecheck.reports import figures, readable
from citecheck.web.settings import DEFAULT_LOG


@pytest.fixture(scope="module")
def table():
    return figures.dataset_table(dataset.load([DEFAULT_LOG]))


def test_share_gives_the_percentage_with_its_counts():
    assert readable.share(7, 24) == "29.2% (7 of 24)"
    assert readable.share(0, 0) == "n/a (0 of 0)"
    assert readable.share(1234, 5000) == "24.7% (1,234 of 5,000)"
    assert readable.share(float("nan"), 3) == ""


def test_group_view_names_every_column_and_reconciles_with_the_breakdown(table):
    frame = figures.breakdown(table, "model")
    view = readable.group_view(frame, "model", "Model")
    assert list(view.columns)[:3] == ["Model", "Answers", "Failing answers"]
    assert not any("." in c or "_" in c for c in view.columns)
    for (_, row), (_, raw) in zip(view.iterrows(), frame.iterrows()):
        count, total = int(raw["failing_answers.count"]), int(raw["failing_answers.total"])
        assert row["Failing answers"] == f"{count / total:.1%} ({count:,} of {total:,})"
        assert row["Answers"] == raw["answers"]
    long = readable.group_chart_data(frame, "model")
    assert set(long["figure"]) <= {name for _, name in readable.GROUP_FIGURES}
    assert len(long) >= len(frame) * 4


@pytest.mark.parametrize("freq, head", [("D", "Day"), ("W", "Week of")])
def test_periods_are_dates_in_one_format(table, freq, head):
    series = figures.over_time(table, freq)
    view = readable.period_view(series, freq)
    assert list(view.columns) == [head, "Answers", "Failing answers", "Failed citations", "Refused answers",
                                  "Uncited sentences"]
    assert view[head].str.fullmatch(r"\d{4}-\d{2}-\d{2}").all()
    if freq == "W":  # a week is named by its Monday
        assert all(pd.Timestamp(d).day_of_week == 0 for d in view[head])
    long = readable.period_chart_data(series)
    assert set(long["period"]) == set(view[head])
    assert set(long["figure"]) == {"Failing answers", "Failed citations", "Refused answers", "Uncited sentences"}


def test_reasons_view_names_every_column_and_reconciles_with_the_counts(table):
    reasons = figures.by_reason(table)
    view = readable.reasons_view(reasons, len(table))
    assert list(view.columns) == ["Reason", "What it means", "Occurrences", "Answers with it"]
    for (_, row), (_, raw) in zip(view.iterrows(), reasons.iterrows()):
        assert row["Reason"] == raw["reason"]
        assert row["Occurrences"] == f"{readable.share(raw['count'], raw['total'])} {raw['of']}"
        assert row["Answers with it"] == readable.share(raw["answers"], len(table))
    assert view["Occurrences"].str.endswith(("citations", "sentences")).all()


def test_the_failures_page_shows_the_readable_reasons_table(monkeypatch, tmp_path):
    from pathlib import Path

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_resource.clear()
    monkeypatch.setenv("CITECHECK_LOGS", str(DEFAULT_LOG))
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    app = str(Path(__file__).resolve().parent.parent / "app.py")
    at = AppTest.from_file(app, default_timeout=60).run().switch_page("pages/failures.py").run()
    assert not at.exception
    (reasons,) = [str(h.proto.body) for h in at.get("html") if "cc-reasons" in str(h.proto.body)]
    headers = re.findall(r"<th>(.*?)</th>", reasons)
    assert headers == ["Reason", "What it means", "Occurrences", "Answers with it"]
    shown = [list(d.value.columns) for d in [*at.dataframe, *at.table]]
    raw = {"reason", "count", "rate", "answer_rate", "of", "total"}
    assert not [columns for columns in shown if raw & set(columns)] and not raw & set(headers)


def test_the_report_gives_every_figure_the_page_shows_per_group_and_per_week(table):
    """The page's breakdowns and over-time table against ``report``'s text and CSV, on the sample:
    every figure the page shows for a model, a prompt version or a week is in the text line of that
    group, by the same name and share, and in the CSV with the same counts."""
    import csv
    import io

    from citecheck.reports import failures

    overview = failures.build(table)
    text = overview.to_text().splitlines()
    rows = list(csv.DictReader(io.StringIO(overview.to_csv())))
    checked = 0
    for column, title in (("model", "Model"), ("prompt_version", "Prompt version")):
        frame = figures.breakdown(table, column)
        for _, shown in readable.group_view(frame, column, title).iterrows():
            line = next(t for t in text if t.startswith(f"  {shown[title]} "))
            for name in shown.index[2:]:
                assert f"{name.lower()} {shown[name]}" in line, (name, line)
                checked += 1
    weeks = readable.period_view(overview.weekly, "W")
    assert len(weeks) >= 2
    for _, shown in weeks.iterrows():
        line = next(t for t in text if t.startswith(f"  {shown['Week of']} "))
        assert f"{shown['Answers']:>6} answers" in line
        for key, _, count, total, name in readable.PERIOD_FIGURES:
            assert f"{name.lower()} {shown[name]}" in line, (name, line)
            row = next(r for r in rows if (r["section"], r["group"], r["figure"]) == ("week", shown["Week of"], key))
            assert readable.share(int(row["count"]), int(row["total"])) == shown[name]
            checked += 1
    assert checked >= 20
