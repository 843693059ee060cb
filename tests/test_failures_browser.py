"""The Failures page's tabs in a real browser (Debian's headless Chromium, Playwright): only the open
tab is drawn (a click on another one runs the page again and draws that one), and a filter chosen in
the failing-answers tab is still set when the tab is opened again after another."""

from __future__ import annotations

import os
import re

import pytest
from appserver import running_app
from citecheck.checking.files import check_options
from citecheck.contract.reasons import ALL_REASONS
from citecheck.labelling import dataset
from citecheck.labelling import labels as label_store
from citecheck.reports import figures
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG
from test_browser import CHROMIUM, launch
from test_team_browser import choose, idle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]
MODEL = "claude-haiku-4-5"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    labels = tmp_path_factory.mktemp("failures") / "labels.jsonl"
    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    cited = [item for item in data.items("a-001") if item.citation is not None]
    for item, label in zip(cited, ("supported", "not_supported")):  # (so the labelled tile is drawn too)
        label_store.append(labels, label_store.make_label(item, label, "ana"))
    with running_app(["--log", DEFAULT_LOG, "--corpus", DEFAULT_CORPUS, "--labels", labels]) as url:
        yield url


@pytest.fixture
def page(app):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(f"{app}/failures", timeout=60_000)
        expect(page.get_by_role("heading", name="Failed answers")).to_be_visible(timeout=60_000)
        idle(page)
        yield page
        browser.close()


def failing(model: str | None = None) -> int:
    """How many answers the failing-answers table holds (worked out from the log, not by the page)."""
    table = figures.dataset_table(dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS)))
    return len(figures.failing(table, figures.Filters(model=model)))


def open_tab(page, label: str):
    """Click a tab and wait for the run it starts to draw it; its panel."""
    page.get_by_role("tab", name=label).click()
    idle(page)
    return page.get_by_role("tabpanel", name=label)


def caption(panel):
    return panel.get_by_text(re.compile(r"^\d+ answer\(s\), worst first"))


def test_every_tiles_title_is_read_whole_at_1280_pixels(page):
    """A tile's title is cut with an ellipsis when it is wider than its card: each is short enough
    to be read whole (its full definition is in the tile's help)."""
    from playwright.sync_api import expect

    titles = page.get_by_test_id("stMetricLabel")
    expect(titles.nth(11)).to_be_visible(timeout=20_000)  # 12 tiles: the sample's 11 and the labelled one
    page.wait_for_timeout(300)  # (their fonts laid out)
    expect(titles.filter(has_text="Labelled unsupported")).to_have_count(1)
    cut = page.evaluate("""[...document.querySelectorAll('[data-testid="stMetricLabel"]')]
        .flatMap(label => [label, ...label.querySelectorAll('*')])
        .filter(el => el.scrollWidth > el.clientWidth + 1).map(el => el.textContent)""")
    assert cut == []


def test_a_tab_is_drawn_when_it_is_clicked(page):
    from playwright.sync_api import expect

    reasons = page.get_by_role("tabpanel", name="Reasons")
    expect(reasons.locator("table.cc-reasons tbody tr")).to_have_count(len(ALL_REASONS), timeout=30_000)
    top = reasons.locator("table.cc-reasons tbody tr").first  # the most frequent reason, its bar the whole width
    assert top.locator(".cc-bar").evaluate("b => b.getBoundingClientRect().width") == \
        pytest.approx(top.locator("td.cc-count").first.evaluate("c => c.getBoundingClientRect().width") - 16, abs=1)
    assert page.get_by_test_id("stSelectbox").count() == 0  # the table's filters are not drawn ...
    assert page.get_by_test_id("stVegaLiteChart").count() == 0  # ... nor any tab's chart (none in this one)
    table = open_tab(page, "Failing answers")
    expect(caption(table)).to_have_text(re.compile(rf"^{failing()} answer\(s\)"), timeout=30_000)
    expect(table.get_by_test_id("stSelectbox")).to_have_count(7)
    expect(table.get_by_test_id("stDataFrame")).to_have_count(1)
    by_model = open_tab(page, "By model")
    expect(by_model.get_by_test_id("stVegaLiteChart")).to_have_count(1, timeout=30_000)
    expect(by_model.locator("[data-testid=stVegaLiteChart] svg text", has_text=MODEL).first) \
        .to_be_attached(timeout=30_000)
    expect(page.get_by_test_id("stSelectbox")).to_have_count(0)  # the table's tab is not drawn now


def test_a_filter_stays_set_when_its_tab_is_opened_again(page):
    from playwright.sync_api import expect

    table = open_tab(page, "Failing answers")
    model = table.get_by_test_id("stSelectbox").filter(has=page.get_by_role("combobox", name="Model", exact=True))
    choose(page, model, page.get_by_role("option", name=MODEL, exact=True))
    assert failing(MODEL) < failing()
    expect(caption(table)).to_have_text(re.compile(rf"^{failing(MODEL)} answer\(s\)"), timeout=30_000)
    idle(page)
    over_time = open_tab(page, "Over time")
    expect(over_time.get_by_test_id("stVegaLiteChart")).to_have_count(1, timeout=30_000)
    expect(page.get_by_test_id("stSelectbox")).to_have_count(0)
    table = open_tab(page, "Failing answers")  # back: the model chosen, and the table it filters
    expect(model.get_by_role("combobox")).to_have_value(MODEL, timeout=30_000)
    expect(caption(table)).to_have_text(re.compile(rf"^{failing(MODEL)} answer\(s\)"), timeout=30_000)


def test_the_compare_table_shows_every_column_and_row_within_1280_pixels(page):
    """Whether a difference is larger than chance is the table's last column: in a data grid it was
    off the right edge (and the last rows under the fold) at 1280 px; it is a table that wraps."""
    from playwright.sync_api import expect

    compare = open_tab(page, "Compare")
    table = compare.locator("table.cc-reasons")
    rows = figures.dataset_table(dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS)))
    a, b = sorted(rows["prompt_version"].dropna().unique())[:2]
    expect(table.locator("tbody tr")).to_have_count(len(figures.compare(rows, "prompt_version", a, b)), timeout=30_000)
    last = table.locator("th", has_text="larger than chance")
    right = last.evaluate("th => th.getBoundingClientRect().right")
    assert right <= page.evaluate("document.documentElement.clientWidth")
    assert table.evaluate("t => t.scrollWidth <= t.parentElement.clientWidth + 1")


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "Asia/Tokyo"])
def test_the_weekly_chart_has_a_tick_on_each_week_read_in_utc_whatever_the_browsers_time_zone(app, zone):
    """Each tick of the Over time chart is a week the table lists, by its Monday, in a browser west
    and east of Greenwich (in local time the ticks fell on Vega's own days, and a point on the day before)."""
    from citecheck.reports import readable
    from playwright.sync_api import expect, sync_playwright

    table = figures.dataset_table(dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS)))
    weeks = list(readable.period_view(figures.over_time(table, "W"), "W")["Week of"])
    assert len(weeks) >= 3
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 1280, "height": 1000}, timezone_id=zone)
        page.goto(f"{app}/failures", timeout=60_000)
        expect(page.get_by_role("heading", name="Failed answers")).to_be_visible(timeout=60_000)
        panel = open_tab(page, "Over time")
        panel.get_by_text("week", exact=True).click()
        idle(page)
        labels = panel.locator("[data-testid=stVegaLiteChart] svg .role-axis-label text")
        expect(labels.filter(has_text=weeks[-1])).to_have_count(1, timeout=30_000)
        dates = [t for t in labels.all_text_contents() if re.fullmatch(r"\d{4}-\d{2}-\d{2}", t)]
        assert dates == weeks
        browser.close()
