"""Issue #11, in a real browser: every value from a log, a label or a verdict shows as the text it is
(no Markdown, LaTeX or HTML formatting) on every page and in every widget fed from one (headings,
captions, notices, tables, selectboxes, chart labels), and a link built from an id opens that id."""

import json
import os
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from appserver import running_app
from citecheck.judging import verdicts as verdict_store
from citecheck.labelling import dataset
from citecheck.labelling import labels as label_store
from citecheck.web.settings import DEFAULT_LOG
from test_browser import CHROMIUM, launch

ROOT = Path(__file__).resolve().parent.parent
MARKUP = "**b** _i_ [l](http://x) $x^2$ <i>h</i> :smile:"
LONG_WORD = "w" * 600  # one unbroken word, far wider than its column
RTL = "\u05e9\u05dc\u05d5\u05dd"  # Hebrew: two right-to-left fields side by side must keep their order
ODD_ID = "q&a=1 #/%é"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


@pytest.fixture(scope="module")
def data_files(tmp_path_factory):
    """A log whose every shown field holds markup (two answers, two models, two prompt versions, an
    unreadable line whose error quotes markup), a label and a verdict whose every text does too."""
    tmp = tmp_path_factory.mktemp("untrusted")
    lines = DEFAULT_LOG.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[1])
    first.update(answer_id=ODD_ID, model="model " + MARKUP, prompt_version="pv " + MARKUP,
                 timestamp="2026-01-01T00:00:00Z", question="question " + MARKUP + " " + LONG_WORD)
    first["chunks"][0]["chunk_id"] = "chunk " + MARKUP  # (cited by marker [1], so no citation names it)
    other = json.loads(lines[2])
    other.update(answer_id="q",  # the id a badly encoded link to "q&a=1 ..." would open
                 model="other " + MARKUP, prompt_version="pv2 " + MARKUP, timestamp="2026-01-08T00:00:00Z")
    rtl = json.loads(lines[3])
    rtl.update(answer_id="rtl", model=RTL + " 1", prompt_version=RTL + " 2", timestamp="2026-01-09T00:00:00Z")
    log = tmp / "log.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in (first, other, rtl, {"log_version": "v " + MARKUP})) + "\n",
                   encoding="utf-8")
    item = next(i for i in dataset.load([log]).items(ODD_ID) if i.citation is not None)
    labels, verdicts = tmp / "labels.jsonl", tmp / "verdicts.jsonl"
    label_store.append(labels, label_store.make_label(item, "supported", "rev " + MARKUP, note="note " + MARKUP))
    verdict_store.append(verdicts, [verdict_store.make(item.key, "not_supported", "why " + MARKUP, "judge " + MARKUP, "jpv " + MARKUP,
                               "sha")])
    return log, labels, verdicts, item


@pytest.fixture(scope="module")
def server(data_files):
    log, labels, verdicts, _ = data_files
    with running_app(["--log", log, "--labels", labels, "--verdicts", verdicts]) as url:
        yield url


@pytest.fixture
def page(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        yield browser.new_page(viewport={"width": 1600, "height": 1200})
        browser.close()


def plain(text: str | None) -> str:
    return (text or "").replace("\u2068", "").replace("\u2069", "")


def no_markup(page) -> None:
    """Nothing the markup would have made: bold, italics, a LaTeX box, a link, an HTML <i>, an emoji."""
    for where in (page.get_by_test_id("stMain"), page.get_by_test_id("stSidebar")):
        if not where.count():
            continue
        assert where.locator("strong, em, .katex, a[href='http://x']").filter(has_text="b").count() == 0
        assert where.locator("i", has_text="h").count() == 0
        assert "\U0001f604" not in plain(where.first.inner_text())  # :smile: stays a shortcode


def cells(page) -> list[str]:
    """The text of every table cell and header (st.dataframe's grid keeps one for screen readers; the
    reasons and Compare tables are escaped HTML, class cc-reasons)."""
    return [plain(t) for t in page.locator("[data-testid=stDataFrame] th, [data-testid=stDataFrame] td, "
                                           "[data-testid=stTable] th, [data-testid=stTable] td, "
                                           "table.cc-reasons th, table.cc-reasons td").all_text_contents()]


def chart_labels(page) -> list[str]:
    return [plain(t) for t in page.locator("[data-testid=stVegaLiteChart] svg text").all_text_contents()]


def _box(where, label: str):
    root = where if not hasattr(where, "page") else where.page  # (a has= locator starts at the page)
    return where.get_by_test_id("stSelectbox").filter(has=root.get_by_role("combobox", name=label, exact=True)).first


def options(page, label: str) -> list[str]:
    """The choices a selectbox lists, read from its open menu."""
    _box(page, label).get_by_role("button", name="Open").click()
    listed = page.get_by_role("option")
    listed.first.wait_for()
    texts = [plain(t) for t in listed.all_text_contents()]
    page.keyboard.press("Escape")
    return texts


def eventually(read, want, timeout: float = 30.0):
    """``read()`` once it satisfies ``want`` (a page still drawing gets that long), else its last value."""
    end = time.monotonic() + timeout
    while True:
        value = read()
        if want(value) or time.monotonic() > end:
            return value
        time.sleep(0.2)


def shown(page, label: str) -> str:
    """The value a closed selectbox shows."""
    return plain(_box(page, label).get_by_role("combobox").input_value())


def test_review_page_shows_every_value_as_its_text_and_id_links_round_trip(server, page):
    from playwright.sync_api import expect

    page.goto(f"{server}/review?answer={quote(ODD_ID, safe='')}", timeout=60_000)
    heading = page.locator("h3", has_text="Answer ")
    expect(heading.first).to_be_visible(timeout=60_000)
    assert heading.first.inner_text().startswith(f"Answer {ODD_ID}")
    caption = page.locator(".cc-meta", has_text="model ").first
    expect(caption).to_be_visible()
    assert plain(caption.inner_text()) == f"model {MARKUP} \u00b7 pv {MARKUP} \u00b7 2026-01-01T00:00:00Z"
    main = page.get_by_test_id("stMain")
    expect(main).to_contain_text("Question:", timeout=30_000)  # the whole page is drawn, not only its top
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=60_000)
    assert f"question {MARKUP}" in plain(main.inner_text())
    assert f"chunk {MARKUP}" in plain(main.inner_text())  # the cited chunk's id, over its text
    page.get_by_test_id("stSidebar").get_by_text("Blind mode").click()  # show the verdict and the label
    expect(main.get_by_text(f"why {MARKUP}").first).to_be_visible(timeout=30_000)
    text = plain(main.inner_text())
    for value in (f"judge {MARKUP}", f"jpv {MARKUP}", f"why {MARKUP}", f"rev {MARKUP}"):
        assert value in text, value
    no_markup(page)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "a long word widened the page"
    question = main.locator("p", has_text="Question:").first  # the long word wraps inside its paragraph
    assert question.evaluate("e => e.scrollWidth <= e.clientWidth"), "a long word overflows its column"


def test_right_to_left_fields_keep_their_order(server, page):
    from playwright.sync_api import expect

    page.goto(f"{server}/review?answer=rtl", timeout=60_000)
    meta = page.locator(".cc-meta", has_text=RTL).first
    expect(meta).to_be_visible(timeout=60_000)
    fields = meta.locator("bdi")  # each value isolated: the two Hebrew fields cannot swap places
    assert fields.all_text_contents() == [f"{RTL} 1", f"{RTL} 2", "2026-01-09T00:00:00Z"]
    boxes = [f.evaluate("e => e.getBoundingClientRect().left") for f in fields.all()]
    assert boxes == sorted(boxes), "the fields are laid out left to right in the order written"


def test_failures_page_tables_charts_and_choices_show_values_as_text(server, page):
    from playwright.sync_api import expect

    page.goto(f"{server}/failures", timeout=60_000)
    expect(page.get_by_text("Failed answers").first).to_be_visible(timeout=60_000)
    models, prompts = [f"model {MARKUP}", f"other {MARKUP}"], [f"pv {MARKUP}", f"pv2 {MARKUP}"]
    for tab, values in (("By model", models), ("By prompt version", prompts)):
        page.get_by_role("tab", name=tab).click()
        panel = page.get_by_role("tabpanel", name=tab)
        expect(panel.locator("[data-testid=stVegaLiteChart] svg text", has_text=values[1]).first) \
            .to_be_attached(timeout=30_000)
        expect(panel.locator("[data-testid=stDataFrame] td", has_text=values[1]).first).to_be_attached(timeout=30_000)
        labels, table = chart_labels(panel), cells(panel)
        for value in values:
            assert value in labels, (tab, value, labels)  # a chart label is the whole value, not cut
            assert value in table, (tab, value)
        no_markup(page)
    page.get_by_role("tab", name="Failing answers").click()
    assert set(models) <= set(options(page, "Model"))
    assert set(prompts) <= set(options(page, "Prompt version"))
    _box(page, "Answers").get_by_role("button", name="Open").click()
    page.get_by_role("option", name="all", exact=True).click()  # every answer, failing or not
    panel = page.get_by_role("tabpanel", name="Failing answers")
    expect(panel.locator("[data-testid=stDataFrame] td", has_text=ODD_ID).first).to_be_attached(timeout=30_000)
    table = cells(panel)
    assert ODD_ID in table and set(models) <= set(table)
    page.get_by_role("tab", name="Compare").click()
    panel = page.get_by_role("tabpanel", name="Compare")
    expect(panel.get_by_test_id("stSelectbox").first).to_be_visible(timeout=30_000)
    assert {shown(panel, "A"), shown(panel, "B")} == set(prompts)
    expect(panel.locator("table.cc-reasons th", has_text=f"B: {prompts[1]}").first).to_be_attached(timeout=30_000)
    assert {f"A: {prompts[0]}", f"B: {prompts[1]}"} <= set(cells(panel))
    no_markup(page)


def test_calibration_page_shows_judges_items_and_rationales_as_text(server, page, data_files):
    from playwright.sync_api import expect

    item = data_files[3]
    page.goto(f"{server}/calibration", timeout=60_000)
    expect(page.get_by_text("Judge calibration").first).to_be_visible(timeout=60_000)
    expect(page.get_by_text("Disagreements").first).to_be_visible(timeout=60_000)
    judge = f"judge {MARKUP} \u00b7 jpv {MARKUP}"
    assert eventually(lambda: shown(page, "Judge and prompt version"), lambda v: v == judge) == judge
    assert eventually(lambda: shown(page, "Item"), lambda v: v == item.key) == item.key
    main = eventually(lambda: plain(page.get_by_test_id("stMain").inner_text()),  # the item draws after the boxes
                      lambda v: f"why {MARKUP}" in v and f"question {MARKUP}" in v)
    assert f"why {MARKUP}" in main and f"question {MARKUP}" in main
    no_markup(page)


def test_data_page_lists_an_unreadable_line_as_its_text(server, page):
    from playwright.sync_api import expect

    page.goto(f"{server}/data", timeout=60_000)  # (the log's fourth line is the unreadable one)
    expect(page.get_by_text("1 unreadable line(s)").first).to_be_visible(timeout=60_000)
    expect(page.locator("[data-testid=stDataFrame] td", has_text=f"v {MARKUP}").first).to_be_attached(timeout=30_000)
    assert any(f"v {MARKUP}" in c for c in cells(page)), cells(page)
    no_markup(page)
