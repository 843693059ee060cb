"""The product owner's figures (core.figures, core.golden, core.overview) on a hand-made log whose
every figure is worked out by hand below."""

import dataclasses
import io
import math
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest
from citecheck.checking.checker import check_answer
from citecheck.labelling import labels
from citecheck.labelling.items import items_of
from citecheck.reports import failures as overview
from citecheck.reports import figures as report_figures
from citecheck.reports import timestamps
from citecheck.reports.golden import GoldenQuestion, evaluate_retrieval, rank_of
from helpers import answer, chunk, marker
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent

C1 = chunk("Employees get 18 days of earned leave per year.", "c1")
C2 = chunk("Casual leave is 8 days per year.", "c2")
CHUNKS = [C1, C2]

# a1 clean; a2 a number not in its source; a3 marker [4] of 2 chunks (invalid, so uncited);
# a4 refused; a5 quote not in the chunk (and its number is then in no verified source), undated.
ANSWERS = [
    answer("You get 18 days of earned leave per year [1].", CHUNKS, [marker(1, "18 days of earned leave")],
           answer_id="a1", question="How many earned leave days?", model="m1", prompt_version="p1",
           timestamp="2026-11-02T09:00:00Z"),
    answer("Casual leave is 9 days [2].", CHUNKS, [marker(2, "Casual leave is 8 days")],
           answer_id="a2", question="How much casual leave?", model="m1", prompt_version="p2",
           timestamp="2026-11-03T09:00:00Z"),
    answer("Sick leave is 12 days [4].", CHUNKS, [], answer_id="a3", question="How much sick leave?",
           model="m2", prompt_version="p2", timestamp="2026-11-10T09:00:00Z"),
    answer("I cannot answer from the sources.", CHUNKS, [], answer_id="a4", question="Can I carry casual leave?",
           model="m2", prompt_version="p1", timestamp="2026-11-11T09:00:00+01:00"),
    answer("You get 18 days [1].", CHUNKS, [marker(1, "twenty days")], answer_id="a5", question="Leave days?",
           model="m1", prompt_version="p1", timestamp="not a time"),
]
RESULTS = [check_answer(a) for a in ANSWERS]
GOLDEN = [
    GoldenQuestion("how many EARNED leave days?", True, ("c1",)),
    GoldenQuestion("Can I carry casual leave?", True, ("c2",)),
    GoldenQuestion("How much sick leave?", False, ()),
]


@pytest.fixture
def table():
    return report_figures.answer_table(RESULTS)


def figures(df):
    return {f.key: (f.count, f.total) for f in report_figures.headline(df)}


def test_headline_figures(table):
    assert figures(table) == {
        "failing_answers": (3, 5),  # a2, a3, a5
        "refusal_rate": (1, 5),
        "citation_failure_rate": (2, 4),  # a3's marker, a5's quote
        "quote_in_source_rate": (2, 3),  # a1, a2 of a1, a2, a5 (a3's marker resolves to no chunk)
        "citation_to_unretrieved_rate": (0, 4),
        "marker_out_of_range_rate": (1, 4),
        "checksum_failure_rate": (0, 4),
        "source_changed_rate": (0, 4),
        "uncited_sentence_rate": (1, 4),  # a3; the refusal sentence is not counted
        "invalid_marker_answers": (1, 5),
        "unsupported_number_answers": (3, 5),  # a2 (9); a3 (12) and a5 (18) have no verified source
    }
    rates = {f.key: f.rate for f in report_figures.headline(table)}
    assert rates["citation_failure_rate"] == 0.5 and rates["refusal_rate"] == 0.2


def test_reasons_table(table):
    rs = report_figures.by_reason(table).set_index("reason")
    assert rs.loc["number_not_in_source", "count"] == 3 and rs.loc["number_not_in_source", "of"] == "sentences"
    assert rs.loc["number_not_in_source", "rate"] == 0.75
    assert rs.loc["quote_not_found", "answers"] == 1 and rs.loc["quote_not_found", "rate"] == 0.25
    assert rs["count"].sum() == 5


def test_breakdown_by_model(table):
    b = report_figures.breakdown(table, "model").set_index("model")
    assert b.loc["m1", "answers"] == 3 and b.loc["m2", "answers"] == 2
    assert (b.loc["m1", "failing_answers.count"], b.loc["m1", "failing_answers.total"]) == (2, 3)
    assert b.loc["m2", "refusal_rate.rate"] == 0.5
    assert b.loc["m1", "citation_failure_rate.count"] == 1 and b.loc["m1", "citation_failure_rate.total"] == 3


def test_missing_model_is_its_own_group():
    df = report_figures.answer_table([check_answer(answer("x [1].", CHUNKS, [marker(1, "Casual")]))])
    assert list(report_figures.breakdown(df, "model")["model"]) == [report_figures.NONE]
    assert not overview.build(df).has_models


def test_weeks_run_monday_to_sunday_and_undated_answers_are_left_out(table):
    weekly = report_figures.over_time(table, "W")
    assert [d.strftime("%Y-%m-%d") for d in weekly["period"]] == ["2026-11-02", "2026-11-09"]
    assert list(weekly["answers"]) == [2, 2] and list(weekly["failing"]) == [1, 1]
    daily = report_figures.over_time(table, "D")
    # a4 at 09:00+01:00 is 08:00 UTC on the 11th
    assert [d.strftime("%d") for d in daily["period"]] == ["02", "03", "10", "11"]
    assert daily["refusal_rate"].tolist() == [0, 0, 0, 1]


@pytest.mark.parametrize("freq", ["D", "W"])
def test_the_periods_add_up_to_the_headline_of_the_dated_answers_every_figure_the_same_way(freq):
    """Every figure a period shows (uncited sentences too, as the breakdowns show them) is counted
    as the headline counts it: the periods' counts and totals sum to the headline's over the
    answers that have a timestamp."""
    from citecheck.checking.files import check_files
    from citecheck.reports import readable

    table = report_figures.answer_table((f, n, r) for f, n, r in check_files([ROOT / "sample_data" / "answers.jsonl"]))
    series = report_figures.over_time(table, freq)
    headline = {f.key: f for f in report_figures.headline(table[table["time"].notna()])}
    assert {key for key, *_ in readable.PERIOD_FIGURES} >= {"failing_answers", "uncited_sentence_rate"}
    for key, rate, count, total, _ in readable.PERIOD_FIGURES:
        assert (int(series[count].sum()), int(series[total].sum())) == (headline[key].count, headline[key].total), key
        expected = [c / t if t else None for c, t in zip(series[count], series[total])]
        assert [None if pd.isna(r) else r for r in series[rate]] == expected, key
    assert list(series.columns) == report_figures.PERIOD_COLUMNS


def test_failing_table_is_worst_first_and_filters(table):
    assert list(report_figures.failing(table)["answer_id"]) == ["a3", "a5", "a2"]
    assert list(report_figures.failing(table, report_figures.Filters(reason="number_not_in_source"))["answer_id"]) == ["a3", "a5", "a2"]
    assert list(report_figures.failing(table, report_figures.Filters(model="m2"))["answer_id"]) == ["a3"]
    assert list(report_figures.failing(table, report_figures.Filters(start="2026-11-03", end="2026-11-10"))["answer_id"]) == ["a3", "a2"]
    assert list(report_figures.failing(table, report_figures.Filters(refused=True, failing_only=False))["answer_id"]) == ["a4"]
    assert list(report_figures.failing(table, report_figures.Filters(prompt_version="p1"))["answer_id"]) == ["a5"]
    assert report_figures.failing(table, report_figures.Filters(labelled=True)).empty


def test_csv_export_has_the_filtered_rows(table):
    text = report_figures.to_csv(report_figures.failing(table, report_figures.Filters(model="m1")))
    lines = text.splitlines()
    assert lines[0].startswith("answer_id,model,prompt_version")
    assert [line.split(",")[0] for line in lines[1:]] == ["a5", "a2"]


def test_human_labels_count_once_per_citation_and_stale_ones_do_not_count(table):
    a2_item = items_of(RESULTS[1])[0]
    a1_item = items_of(RESULTS[0])[0]
    records = [
        labels.make_label(a2_item, "not_supported", "ann"),
        labels.make_label(a2_item, "supported", "bob"),
        labels.make_label(a1_item, "supported", "ann"),
    ]
    stale = labels.make_label(a1_item, "not_supported", "bob")
    records.append(dataclasses.replace(stale, fingerprint="0" * 16))  # the item changed since
    current = labels.latest(records)
    streamed = report_figures.answer_table(RESULTS, current)
    joined = report_figures.with_labels(table, RESULTS, current)
    for df in (streamed, joined):
        by_id = df.set_index("answer_id")
        assert by_id.loc["a2", "labelled"] == 1 and by_id.loc["a2", "not_supported"] == 1
        assert by_id.loc["a1", "labelled"] == 1 and by_id.loc["a1", "not_supported"] == 0
        assert figures(df)["human_not_supported_rate"] == (1, 2)
        assert list(report_figures.failing(df, report_figures.Filters(human_not_supported=True))["answer_id"]) == ["a2"]
    assert table["labelled"].sum() == 0  # with_labels leaves its input alone
    assert "human_not_supported_rate" not in figures(table)


def test_two_lines_with_one_id_are_two_answers_and_a_label_counts_on_its_own():
    """A log with two lines of one answer id (different sentences, so different items): a label
    given on the second counts on the second only, the same whether the rows were counted as the
    answers were read (``report``, the store) or joined afterwards (the Failures page on a log)."""
    first = answer("Refunds take 5-7 business days [1].", [chunk("Refunds take 5-7 business days.", "c1")],
                   [marker(1, "Refunds take 5-7 business days")], answer_id="dup")
    second = dataclasses.replace(first, answer="Refunds take 5-7 days [1].")
    results = [check_answer(first), check_answer(second)]
    for labelled_on in (0, 1):
        item = items_of(results[labelled_on])[0]
        current = labels.latest([labels.make_label(item, "not_supported", "ana")])
        streamed = report_figures.answer_table(results, current)
        joined = report_figures.with_labels(report_figures.answer_table(results), results, current)
        for df in (streamed, joined):
            assert list(df["labelled"]) == [labelled_on == 0, labelled_on == 1]
            assert list(df["not_supported"]) == [labelled_on == 0, labelled_on == 1]
            assert figures(df)["human_not_supported_rate"] == (1, 1)
    with pytest.raises(ValueError, match="2 results for a table of 1 answers"):
        report_figures.with_labels(report_figures.answer_table(results[:1]), results, current)


def test_refusals_against_golden(table):
    r = report_figures.refusals(table, GOLDEN)
    assert (r.answerable, r.over_refused, r.over_refused_ids) == (2, 1, ("a4",))
    assert (r.unanswerable, r.under_refused, r.under_refused_ids) == (1, 1, ("a3",))
    assert r.not_in_golden == 2


def test_logged_retrieval_against_golden():
    at1 = report_figures.retrieval(RESULTS, GOLDEN, k=1)
    assert (at1.answerable, at1.hits, at1.mrr, at1.unanswerable, at1.not_in_golden) == (2, 1, 0.5, 1, 2)
    assert [m.label for m in at1.misses] == ["a4"]
    at5 = report_figures.retrieval(RESULTS, GOLDEN, k=5)
    assert (at5.hits, at5.mrr, at5.misses) == (2, 0.75, ())


def test_design_document_worked_example():
    tests = {
        "How many earned leave days do I get?": {"leave-1"},
        "Can I carry casual leave forward?": {"leave-2"},
        "Which train class can an M2 employee book?": {"travel-1"},
        "What is the hotel limit in Pune?": {"travel-3"},
    }
    results = {
        "How many earned leave days do I get?": ["leave-1", "leave-2", "travel-1"],
        "Can I carry casual leave forward?": ["leave-1", "leave-2", "leave-3"],
        "Which train class can an M2 employee book?": ["travel-2", "travel-3", "leave-1"],
        "What is the hotel limit in Pune?": ["travel-3", "travel-2", "leave-2"],
    }
    golden = [GoldenQuestion(q, True, tuple(ids)) for q, ids in tests.items()]
    e = evaluate_retrieval(golden, [(q, q, ids) for q, ids in results.items()], k=3)
    assert [r.rank for r in e.ranked] == [1, 2, None, 1]
    assert e.hit_rate == 0.75 and f"{e.mrr:.2f}" == "0.62" and e.mrr == pytest.approx(2.5 / 4)
    assert [m.question for m in e.misses] == ["Which train class can an M2 employee book?"]


def test_rank_of_stops_at_k():
    assert rank_of(["x", "y", "z"], {"z"}, 3) == 3
    assert rank_of(["x", "y", "z"], {"z"}, 2) is None
    with pytest.raises(ValueError):
        evaluate_retrieval([], [], k=0)


def test_two_proportions_by_hand():
    diff, low, high, p = report_figures.two_proportions(10, 100, 20, 100)
    assert diff == pytest.approx(0.1)
    assert (low, high) == (pytest.approx(0.1 - 1.959964 * 0.05), pytest.approx(0.1 + 1.959964 * 0.05))
    z = 0.1 / math.sqrt(0.15 * 0.85 * 0.02)
    assert p == pytest.approx(math.erfc(z / math.sqrt(2))) and 0.047 < p < 0.048
    assert report_figures.two_proportions(0, 0, 1, 2) == (None, None, None, None)
    assert report_figures.two_proportions(0, 10, 0, 10)[3] == 1.0


def test_compare_prompt_versions(table):
    diffs = {d.key: d for d in report_figures.compare(table, "prompt_version", "p1", "p2")}
    d = diffs["failing_answers"]
    assert (d.a.count, d.a.total, d.b.count, d.b.total) == (1, 3, 2, 2)
    assert d.diff == pytest.approx(1 - 1 / 3)
    assert d.to_dict()["significant"] == d.significant


def test_empty_log_gives_figures_with_no_rates():
    df = report_figures.answer_table([])
    assert all(f.total == 0 and f.rate is None for f in report_figures.headline(df))
    report = overview.build(df, [], [])
    assert "no answers to report on" in report.to_text()
    assert report.to_dict()["answers"] == 0 and report_figures.failing(df).empty and report_figures.over_time(df).empty


def test_overview_text_json_and_csv_agree(table):
    report = overview.build(table, GOLDEN, [report_figures.retrieval_run(r) for r in RESULTS], k=1)
    text = report.to_text()
    assert "citations that failed a check: 2 of 4 citations = 50.0%" in text
    assert "answerable golden questions refused: 1 of 2" in text
    assert "hit rate@1: 50.0% (1 of 2 answerable)" in text and "missed a4" in text
    d = report.to_dict()
    assert d["refusals"]["under_refused"] == ["a3"] and d["retrieval"]["hits"] == 1
    assert d["by_week"][0]["period"] == "2026-11-02"
    rows = pd.read_csv(io.StringIO(report.to_csv()))
    fail = rows[(rows.section == "model") & (rows.group == "m1") & (rows.figure == "failing_answers")].iloc[0]
    assert (fail["count"], fail["total"]) == (2, 3)


STAMPS = st.one_of(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)).map(lambda d: d.isoformat() + "Z"),
    st.from_regex(r"\A[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-][01][0-9]:[0-5][0-9])?\Z"),
    st.text(max_size=12), st.none())


@settings(max_examples=200)
@given(stamp=STAMPS, others=st.lists(STAMPS, max_size=4))
def test_a_timestamp_reads_the_same_alone_and_among_any_others(stamp, others):
    """Whether and when an answer is dated does not depend on the other answers' timestamps
    (pandas 3 picks one resolution per parse; the in-memory report parses the whole log at once,
    the store a batch's unusual stamps), and a time is always inside the range every resolution holds."""
    alone = timestamps.read_times([stamp])[0]
    among = timestamps.read_times([*others, stamp])[len(others)]
    assert (pd.isna(alone) and pd.isna(among)) or alone == among
    if not pd.isna(alone):
        assert timestamps.EARLIEST <= alone < timestamps.LATEST
