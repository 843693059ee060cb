"""What the Failures page shows, built without Streamlit (core/citecheck/reports/failures_view.py), on the
bundled sample log and golden set."""

from __future__ import annotations

import inspect
import json
import re
import shutil

import pandas as pd
import pytest
from citecheck.checking.files import check_options
from citecheck.contract import reasons
from citecheck.labelling import dataset
from citecheck.reports import failures_view, figures, readable, views
from citecheck.reports.failures import build
from citecheck.reports.golden import read_golden
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_GOLDEN, DEFAULT_LOG
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs


@pytest.fixture(scope="module")
def sample():
    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    table = figures.dataset_table(data)
    golden, problems = read_golden(DEFAULT_GOLDEN)
    assert not problems
    return table, build(table, golden, [figures.retrieval_run(r) for r in data.results])


def test_tiles_show_each_headline_figure_with_its_counts(sample):
    _, report = sample
    tiles = failures_view.tiles(report.headline)
    assert len(tiles) == len(report.headline) > 5
    for t, f in zip(tiles, report.headline):
        assert t.title == failures_view.TITLES.get(f.key, f.label)
        assert t.value == failures_view.pct(f.rate) and t.value.endswith("%")
        assert t.help == f"{f.label}: {f.count} of {f.total} {f.unit}"
        assert t.caption == f"{f.count:,} of {f.total:,} {f.unit}"
    failing = next(t for t in tiles if t.title == "Failing answers")
    assert failing.caption.endswith(" answers") and failing.value != "n/a"
    assert failures_view.pct(None) == failures_view.pct(float("nan")) == "n/a"


@given(n=hs.integers(0, 30), per_row=hs.integers(1, 6))
def test_tiles_are_laid_out_in_full_rows_and_one_shorter_last(n, per_row):
    rows = failures_view.in_rows(list(range(n)), per_row)
    assert [x for row in rows for x in row] == list(range(n))
    assert all(len(row) == per_row for row in rows[:-1]) and all(0 < len(row) <= per_row for row in rows)


def test_retrieval_and_refusal_tiles_on_the_golden_set(sample):
    _, report = sample
    r = report.retrieval
    hit, mrr, unanswerable = failures_view.retrieval_tiles(r, report.refusals)
    assert hit.title == f"hit rate@{r.k}" and hit.value == failures_view.pct(r.hit_rate) == r.shown()[0]
    assert hit.caption == f"{r.hits} of {r.answerable} answerable questions"
    assert mrr.value == f"{r.mrr:.2f}" and unanswerable.value == str(r.unanswerable)
    assert f"{report.refusals.not_in_golden} answer(s) have a question" in unanswerable.caption
    texts = failures_view.refused_ids_texts(report.refusals)
    wanted = [ids for ids in (report.refusals.over_refused_ids, report.refusals.under_refused_ids) if ids]
    assert len(texts) == len(wanted) and all(t.endswith(", ".join(ids)) for t, ids in zip(texts, wanted))
    assert failures_view.no_miss_text(r) == f"Every answerable question had a correct chunk in its first {r.k}."


def test_the_golden_set_is_read_with_a_warning_for_its_bad_lines(tmp_path):
    golden, warning = failures_view.golden_set(DEFAULT_GOLDEN)
    assert warning is None and golden == read_golden(DEFAULT_GOLDEN)[0]
    broken = tmp_path / "golden.jsonl"
    shutil.copy(DEFAULT_GOLDEN, broken)
    with broken.open("a", encoding="utf-8") as f:
        f.write('{"question": 3}\n[]\n')
    golden2, warning = failures_view.golden_set(broken)
    assert golden2 == golden  # the readable questions are all used
    assert warning.startswith("2 unreadable line(s) in the golden set golden.jsonl; first: ")
    assert failures_view.golden_set(None) == (None, None) == failures_view.golden_set(tmp_path / "missing.jsonl")


def test_the_table_choices_are_the_arguments_of_views_filters(sample):
    table, _ = sample
    values = lambda column: sorted(table[column].unique())  # noqa: E731 (as TableSource.values)
    dated = table["time"].dropna()
    span = (dated.min().date(), dated.max().date())
    choices = failures_view.choices(values, span)
    assert [c.key for c in choices] == ["f_reason", "f_model", "f_prompt", "f_scope", "f_dates", "f_refused",
                                        "f_human", "f_labelled"]
    assert {c.name for c in choices} <= set(inspect.signature(views.filters).parameters)
    assert choices[0].options == ("any", *reasons.ALL_REASONS, figures.UNCITED) and choices[1].options[1:] == tuple(values("model"))
    dates = next(c for c in choices if c.is_dates)
    assert dates.dates == span and dates.options == ()
    # each first option filters nothing but the scope: the failing answers, as views.filters() does
    first = {c.name: (c.dates or ()) if c.is_dates else c.options[0] for c in choices}
    assert len(figures.failing(table, views.filters(**first))) == len(figures.failing(table, views.filters())) == int(table["failing"].sum())
    first["scope"] = "all"
    assert len(figures.failing(table, views.filters(**first))) == len(table)

    def ids(**chosen) -> set[str]:
        return set(figures.failing(table, views.filters(**{**first, **chosen}))["answer_id"])

    every, refused = set(table["answer_id"]), set(table.loc[table["refused"], "answer_id"])
    assert ids(refused="refused") == refused and ids(refused="answered") == every - refused and refused
    assert ids(human="has 'not supported'") == ids(labelled="labelled") == set()  # the sample has no labels
    assert ids(human="no 'not supported'") == ids(labelled="unlabelled") == every
    model = choices[1].options[1]
    assert ids(model=model) == set(table.loc[table["model"] == model, "answer_id"])


def test_captions_and_notices():
    assert failures_view.table_caption(12, None) == ("12 answer(s), worst first. Tick a row's box to open that answer on "
                                                     "the review page at its first failing item.")
    assert failures_view.table_caption(10_000, 10_000).startswith("10,000 answer(s) (the worst 10,000), worst first")
    assert "(the worst" not in failures_view.table_caption(9_999, 10_000)
    assert failures_view.all_clear(True, True) is None
    assert failures_view.all_clear(False, True)[0] == "warning" and failures_view.all_clear(False, False)[0] == "success"
    assert failures_view.undated_text(0) is None and failures_view.undated_text(3).startswith("3 answer(s) without")
    assert failures_view.no_group_text("prompt_version", "prompt version").endswith("Log `prompt_version` on every answer "
                                                                         "to see this.")
    assert failures_view.nothing_to_compare("prompt_version") == ("The loaded logs have fewer than two values of prompt "
                                                       "version; nothing to compare.")


def test_the_selected_row_names_its_answer(sample):
    table, _ = sample
    view = views.failing_view(figures.failing(table))
    assert failures_view.selected_answer(view, []) is None
    assert failures_view.selected_answer(view, [2]) == view["answer_id"].iloc[2]


def test_the_charts_carry_the_report_tables(sample):
    table, report = sample
    shown = failures_view.occurring(report.reasons)
    assert (shown["count"] > 0).all() and set(shown["reason"]) == set(report.reasons.loc[report.reasons["count"] > 0,
                                                                                          "reason"])
    group = failures_view.group_chart(report.by_model, "model", "model").to_dict()
    assert group["encoding"]["tooltip"][0]["title"] == "model"
    groups = pd.DataFrame(group["datasets"][group["data"]["name"]])
    assert set(groups["group"]) == set(report.by_model["model"].astype(str))

    weekly = figures.over_time(table, "W")
    line = failures_view.period_chart(weekly, "W").to_dict()
    assert line["mark"]["type"] == "line" and line["encoding"]["x"]["title"] == "week of"
    assert failures_view.period_chart(figures.over_time(table, "D"), "D").to_dict()["encoding"]["x"]["title"] == "day"


def test_the_breakdown_tabs_and_the_faithfulness_bins(sample, tmp_path):
    _, report = sample
    (model, column, present, what), prompt = failures_view.breakdowns(report)
    assert model is report.by_model and (column, present, what) == ("model", report.has_models, "model")
    assert prompt[1:] == ("prompt_version", report.has_prompts, "prompt version")
    assert failures_view.faithfulness_view(report) is None  # the sample log has no faithfulness scores

    lines = [json.loads(line) for line in DEFAULT_LOG.read_text(encoding="utf-8").splitlines()]
    for record, score in zip(lines, (0.5, 0.95, 0.3)):  # as the pipeline's faithfulness gate logs them
        record["faithfulness"] = {"score": score, "withheld": score < 0.8}  # a field the format keeps as extra
    log = tmp_path / "scored.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    table = figures.dataset_table(dataset.load([log], check_options(DEFAULT_CORPUS)))
    bins = failures_view.faithfulness_view(build(table, None, []))
    assert list(bins.columns) == ["bin", "answers", "withheld", "share"]
    assert bins["answers"].sum() == 3 and bins["withheld"].sum() == 2 and bins["share"].sum() == pytest.approx(1)


@pytest.fixture(scope="module")
def sources(tmp_path_factory, sample):
    """The sample's figures from the log in memory and from the same log checked into a store."""
    import io

    from citecheck.cli.main import main
    from citecheck.storage.checked.sources import StoreSource, TableSource

    store = tmp_path_factory.mktemp("fv") / "store"
    assert main(["check", str(DEFAULT_LOG), "--corpus", str(DEFAULT_CORPUS), "--store", str(store)],
                io.StringIO(), io.StringIO()) == 0
    table, report = sample
    return TableSource(table, report), StoreSource.of(store, None, {})[0]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=hs.lists(hs.integers(0, 40), min_size=8, max_size=8), dated=hs.booleans())
def test_any_choice_of_filters_narrows_the_table_as_each_filter_alone_does(sources, picks, dated):
    memory, store = sources
    choices = failures_view.choices(memory.values, memory.date_range())
    assert choices == failures_view.choices(store.values, store.date_range())  # the same choices from either source
    chosen = {}
    for c, pick in zip(choices, picks):
        if c.is_dates:
            chosen[c.name] = (c.dates[0], c.dates[0] + (c.dates[1] - c.dates[0]) * (pick % 3) / 2) if dated else ()
        else:
            chosen[c.name] = c.options[pick % len(c.options)]
    shown = memory.failing(views.filters(**chosen))
    alone = set(memory.table["answer_id"])
    for name, value in chosen.items():
        if value not in ("any", ()):
            alone &= set(memory.failing(views.filters(**{name: value, "scope": "all"}))["answer_id"])
    if chosen["scope"] == "failing only":
        alone &= set(memory.table.loc[memory.table["failing"], "answer_id"])
    assert set(shown["answer_id"]) == alone
    problems = list(shown["problems"])
    assert problems == sorted(problems, reverse=True)  # worst first
    assert list(store.failing(views.filters(**chosen))["answer_id"]) == list(shown["answer_id"])


def _rows(markup: str) -> list[list[str]]:
    """The reasons table's body as the browser reads it: each row's cell texts, entities decoded."""
    import html as html_lib

    body = markup.split("<tbody>", 1)[1]
    return [[html_lib.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body)]


def test_the_reasons_table_lists_every_reason_the_most_frequent_first_with_its_bar(sample):
    """The reasons tab's table (the page's first view, no chart): every reason once, those that occur
    first by count, then the rest in canonical order; each count's bar as long as its share of the
    largest; the texts are the reasons view's."""
    table, report = sample
    answers = len(table)
    markup = failures_view.reasons_html(report.reasons, answers)
    rows = _rows(markup)
    view = readable.reasons_view(report.reasons, answers).set_index("Reason")
    assert sorted(r[0] for r in rows) == sorted(report.reasons["reason"]) == sorted(reasons.ALL_REASONS)
    counts = dict(zip(report.reasons["reason"], report.reasons["count"]))
    order = [r[0] for r in rows]
    assert order == sorted(order, key=lambda code: (-counts[code], reasons.ALL_REASONS.index(code)))
    for reason, meaning, occurrences, with_it in rows:
        assert [meaning, occurrences, with_it] == list(view.loc[reason])
    widths = {m.group(1): float(m.group(2)) for m in re.finditer(
        r"<code>([a-z_]+)</code>.*?(?:width:([0-9.]+)%|</tr>)", markup) if m.group(2)}
    top = max(counts.values())
    assert top > 0 and set(widths) == {code for code, n in counts.items() if n}
    for code, width in widths.items():
        assert width == pytest.approx(100 * counts[code] / top, abs=0.06)


def test_the_reasons_table_shows_every_text_as_written():
    """Every text of the reasons table is escaped HTML (it is drawn with st.html): markup in a reason
    or its meaning shows as typed, and no reason occurring draws no bar."""
    frame = pd.DataFrame({"reason": ["<script>x</script>", "a & b"], "description": ["**bold** <b>no</b>", "plain"],
                          "count": [0, 0], "total": [4, 4], "of": ["citations", "sentences"], "answers": [0, 0]})
    markup = failures_view.reasons_html(frame, 2)
    assert "<script>x" not in markup and "<b>no</b>" not in markup and "cc-bar" not in markup.split("</style>")[1]
    assert _rows(markup) == [["<script>x</script>", "**bold** <b>no</b>", "0.0% (0 of 4) citations", "0.0% (0 of 2)"],
                             ["a & b", "plain", "0.0% (0 of 4) sentences", "0.0% (0 of 2)"]]


def test_an_answer_marked_withheld_without_a_score_is_neither_scored_nor_withheld(tmp_path):
    """The withheld figure is "withheld of scored answers": a line the gate marked withheld but
    without a score in 0..1 counts in neither, so the figure stays within 0..100% in every group,
    agrees with the score bins, and Compare works (it raised a math domain error at 200%); the
    same from the log and from the store."""
    import io

    from citecheck.cli.main import main
    from citecheck.storage.checked.sources import StoreSource, TableSource

    def line(aid: str, prompt: str, gate: dict) -> str:
        return json.dumps({"log_version": 1, "answer_id": aid, "question": "q", "answer": "Plain.", "chunks": [],
                           "prompt_version": prompt, "faithfulness": gate}) + "\n"

    log = tmp_path / "gate.jsonl"
    log.write_text(line("w1", "v1", {"withheld": True}) + line("w2", "v1", {"score": 0.5, "withheld": True})
                   + line("w3", "v2", {"score": 0.9, "withheld": False})
                   + line("w4", "v2", {"score": "0.2", "withheld": True}), encoding="utf-8")
    store = tmp_path / "store"
    assert main(["check", str(log), "--store", str(store)], io.StringIO(), io.StringIO()) in (0, 1)
    table = figures.dataset_table(dataset.load([log], check_options()))
    memory = TableSource(table, build(table, None, []))
    stored = StoreSource.of(store, None, {})[0]
    for source in (memory, stored):
        headline = {f.key: (f.count, f.total) for f in source.report.headline}
        assert headline["withheld_answers"] == (1, 2)
        assert int(failures_view.faithfulness_view(source.report)["withheld"].sum()) == 1
        withheld = next(d for d in source.compare("prompt_version", "v1", "v2") if d.key == "withheld_answers")
        assert (withheld.a.count, withheld.a.total, withheld.b.count, withheld.b.total) == (1, 1, 0, 1)
    with pytest.raises(ValueError, match="a count outside its total"):
        figures.two_proportions(2, 1, 0, 1)


def test_an_empty_table_of_failing_answers_says_how_many_answers_the_filters_match(sources):
    """Refused = "refused" with the default Answers = "failing only" showed an empty table and
    nothing more, though the Refused tile counts the sample's refusals: the caption now says how
    many answers of any kind match, the same from the log and from the store."""
    for source in sources:
        wanted = views.filters(refused="refused")
        shown = len(source.failing(wanted))
        among_all = failures_view.matching_any(source, wanted, shown)
        refused = next(f for f in source.report.headline if f.key == "refusal_rate").count
        assert shown == 0 and refused >= 1 and among_all == refused  # (the sample's refusals do not fail)
        assert failures_view.table_caption(shown, source.limit, among_all).startswith(
            f"No failing answer matches these filters; {refused} answer(s) do among all answers")
        assert failures_view.matching_any(source, views.filters(), len(source.failing(views.filters()))) is None
        assert failures_view.matching_any(source, views.filters(scope="all", refused="refused"), 0) is None
