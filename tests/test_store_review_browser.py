"""The review page on a checked store in Debian's headless Chromium: a row picked in the Failures
table opens on the review page, read from the store, and the server never loads the log into memory."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from appserver import running_app
from citecheck.cli.main import main
from citecheck.reports import figures
from citecheck.storage.checked.folder import Store
from citecheck.storage.checked.query import StoreQuery
from citecheck.storage.checked.sources import TABLE_LIMIT
from test_browser import CHROMIUM, launch

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "sample_data" / "answers.jsonl"
CORPUS = ROOT / "sample_data" / "corpus"
ROW = 3  # the fourth failing answer, worst first

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


@pytest.fixture
def server(tmp_path):
    log = tmp_path / "answers.jsonl"
    # one unreadable line: a server that loads the log into memory says so on its terminal
    log.write_text(LOG.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    store = tmp_path / "store"
    main(["check", str(log), "--corpus", str(CORPUS), "--store", str(store)], io.StringIO(), io.StringIO())
    terminal = tmp_path / "terminal.txt"
    with open(terminal, "w") as sink, running_app(["--log", log, "--corpus", CORPUS, "--store", store,
                                                   "--labels", tmp_path / "labels.jsonl"], sink) as url:
        yield url, store, terminal


def test_a_row_of_the_failures_table_opens_from_the_store(server):
    from playwright.sync_api import expect, sync_playwright

    url, store, terminal = server
    query = StoreQuery(Store(store))
    failing = query.failing(figures.Filters(failing_only=True), TABLE_LIMIT)
    pick = failing.iloc[ROW]["answer_id"]
    everyone = [r[0] for r in query.con.execute(
        'SELECT answer_id FROM answers ORDER BY "offset"').fetchall()]
    query.close()
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        page.goto(f"{url}/failures", timeout=60_000)
        expect(page.get_by_role("heading", name="Failed answers")).to_be_visible(timeout=60_000)
        expect(page.locator(".cc-inputs").get_by_text("checked store")).to_be_visible(timeout=30_000)
        page.get_by_role("tab", name="Failing answers").click()
        grid = page.locator('[data-testid="stDataFrame"]:visible').first
        expect(grid).to_be_visible(timeout=20_000)
        grid.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        box = grid.bounding_box()
        row_height = 35  # Streamlit's default row and header height
        page.mouse.click(box["x"] + 18, box["y"] + row_height * (ROW + 1) + row_height / 2)  # the row's box: opens it
        heading = page.get_by_role("heading", name=f"Answer {pick} ")
        expect(heading).to_be_visible(timeout=30_000)
        expect(heading).to_have_text(f"Answer {pick} ({everyone.index(pick) + 1} of {len(everyone)})")
        assert f"answer={pick}" in page.url
        page.wait_for_function("() => !!document.__ccRun", timeout=60_000)  # (the page's key listener is in)
        heading.click()  # (the keys go to the page, not to the table's box the click left focused)
        page.keyboard.press("n")  # the Next button's shortcut
        after = everyone[everyone.index(pick) + 1]
        expect(page.get_by_role("heading", name=f"Answer {after} ")).to_be_visible(timeout=30_000)
        browser.close()
    said = terminal.read_text()
    assert "could not be read" not in said, said  # the log was never loaded into memory
