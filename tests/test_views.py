"""Page-shaped pieces built in core: HTML fragments (escaped) and the Failures page's tables."""

from datetime import date

import pandas as pd
import pytest
from citecheck.checking.files import check_options
from citecheck.labelling import dataset
from citecheck.reports import figures, views
from citecheck.review import html
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG

HOSTILE = '<img src=x onerror="alert(1)"> **bold** # head $x$ &amp;'


@pytest.fixture(scope="module")
def table():
    return figures.dataset_table(dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS)))


@pytest.mark.parametrize("fragment", [
    lambda t: html.heading_html(t), lambda t: html.notice_html("warning", t), lambda t: html.labelled_html([(t, t)]),
    lambda t: html.verdict_html(t, t, t, t), lambda t: html.own_label_html(t, t, True), lambda t: html.others_html([(t, t)]),
    lambda t: html.disagreement_html(t, t, t, t, t),
])
def test_fragments_escape_untrusted_text(fragment):
    out = fragment(HOSTILE)
    assert "<img" not in out and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in out
    assert "&amp;amp;" in out  # already-escaped text is escaped again, not trusted


def test_own_label_says_stale_and_carries_the_note():
    assert html.own_label_html("Supported", "", False).startswith('<div class="cc-meta">Your label: <b>Supported</b>')
    stale = html.own_label_html("Not supported", "typo in 18", True)
    assert "STALE" in stale and "typo in 18" in stale


def test_filters_from_the_page_choices():
    assert views.filters() == figures.Filters()
    f = views.filters("quote_not_found", "m", "p1", (date(2026, 11, 1), date(2026, 11, 3)), "refused",
                  "has 'not supported'", "unlabelled", "all")
    assert f == figures.Filters("quote_not_found", "m", "p1", "2026-11-01", "2026-11-03", True, True, False, False)
    assert views.filters(dates=(date(2026, 11, 1),)).start is None  # a half-picked range is no range


def test_failing_view_puts_what_is_wrong_and_the_question_beside_the_answer(table):
    odd = table.copy()
    odd.loc[odd.index[0], "answer_id"] = "conv-12#turn 3&x=/y"
    view = views.failing_view(figures.failing(odd, figures.Filters(failing_only=False)))
    assert "file" not in view.columns and list(view.columns[:3]) == ["answer_id", "reasons", "question"]
    assert list(view.columns) == [c for c in views.FAILING_HEADERS if c in view.columns]
    assert "conv-12#turn 3&x=/y" in set(view["answer_id"])  # kept as it is: the page passes it as a query value
    assert all(h[0].isupper() and "_" not in h for h in views.FAILING_HEADERS.values())


def test_compare_table_shows_counts_and_points(table):
    values = sorted(table["prompt_version"].unique())
    diffs = figures.compare(table, "prompt_version", values[0], values[1])
    out = views.compare_table(diffs, values[0], values[1])
    assert len(out) == len(diffs)
    d = diffs[0]
    assert out.iloc[0][f"A: {values[0]}"].endswith(f"({d.a.count}/{d.a.total})")
    assert out.iloc[0]["B - A"] is None or out.iloc[0]["B - A"].endswith(" pts")


def test_misses_table_has_its_columns_even_when_empty():
    from citecheck.reports.golden import evaluate_retrieval

    empty = evaluate_retrieval([], [], 5)
    assert list(views.misses_table(empty).columns) == ["answer_id", "question", "wanted", "retrieved"]
    assert isinstance(views.misses_table(empty), pd.DataFrame)


def test_a_judges_verdict_and_a_human_label_read_as_the_label_buttons_name_them():
    """The Calibration page's disagreements and the Review page's judge line said "partial" and
    "not supported" where every label button and list says "Partially supported"."""
    shown = html.disagreement_html("q", "s", "partial", "not_supported", "r")
    assert "<b>Human:</b> Partially supported" in shown and "<b>Judge:</b> Not supported" in shown
    assert "<b>Partially supported</b>" in html.verdict_html("j", "v1", "partial", "r")
    assert "<b>unscored</b>" in html.verdict_html("j", "v1", "unscored", "r")
    assert "&lt;b&gt;" in html.verdict_html("j", "v1", "<b>x", "r")  # (an unknown code is still escaped)


def test_the_compare_table_is_one_escaped_html_table_with_every_column_and_row(table):
    from citecheck.reports.failures_view import compare_html

    values = sorted(table["prompt_version"].unique())
    diffs = figures.compare(table, "prompt_version", values[0], values[1])
    frame = views.compare_table(diffs, values[0], values[1])
    hostile = frame.rename(columns={f"A: {values[0]}": "A: <img src=x onerror=alert(1)>"})
    out = compare_html(hostile)
    assert "<img" not in out and "A: &lt;img src=x onerror=alert(1)&gt;" in out
    assert out.count("<tr>") == len(frame) + 1 and out.count("<th>") == len(frame.columns)
    for header in ("p-value", "larger than chance", "95% interval", "B - A"):
        assert f"<th>{header}</th>" in out
    p = diffs[0].p_value
    shown = "< 0.001" if p < 0.0005 else f"{p:.3f}"
    assert f'<td class="cc-count">{shown.replace("<", "&lt;")}</td>' in out
