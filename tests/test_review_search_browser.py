"""Search on the review page, in a real browser (Debian's headless Chromium, Playwright): a word
typed in the sidebar's Search box narrows the queue and says how many answers and items match;
N and J walk only the matching answers; clearing the box restores the whole queue."""

from __future__ import annotations

import json
import os
import re

import pytest
from appserver import running_app
from citecheck.labelling.dataset import load
from citecheck.web.settings import DEFAULT_LOG
from test_browser import CHROMIUM, launch
from test_review_browser import progress
from test_team_browser import choose, idle, open_as, press

WORD = "carry"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    store = tmp_path_factory.mktemp("search") / "labels.jsonl"
    with running_app(["--log", DEFAULT_LOG, "--labels", store, "--corpus", ""]) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


def matching(word: str) -> list[str]:
    """The answers whose question, answer or a chunk holds ``word`` whole, in any case, in log order
    (worked out here from the log's JSON, not by the search itself)."""
    pattern = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)", re.IGNORECASE)
    found = []
    for line in DEFAULT_LOG.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        texts = [record.get("question") or "", record.get("answer") or "",
                 *(c.get("text") or "" for c in record.get("chunks") or [])]
        if any(pattern.search(t) for t in texts) and record["answer_id"] not in found:
            found.append(record["answer_id"])
    return found


def heading(page, answer: str, at: int, of: int) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_role("heading", name=f"Answer {answer} ({at} of {of})")).to_be_visible(timeout=20_000)


def test_a_word_in_the_search_box_narrows_the_queue_and_clearing_it_restores_it(app, browser):
    from playwright.sync_api import expect

    data = load([DEFAULT_LOG])
    everything = [a.answer_id for a in data.answers]
    wanted = matching(WORD)
    items = {a: len(data.items(a)) for a in wanted}
    assert 2 < len(wanted) < len(everything) and max(items.values()) > 1  # a queue worth walking
    assert everything[0] not in wanted

    page = open_as(browser, f"{app}/?reviewer=ana")
    heading(page, everything[0], 1, len(everything))
    count = page.locator(".search-count")
    expect(count).to_have_count(0)  # nothing asked: no count, the whole queue
    box = page.get_by_role("textbox", name="Search")
    box.fill(WORD)
    box.press("Enter")
    expect(count).to_have_text(f"{len(wanted)} answers, {sum(items.values())} items match", timeout=20_000)
    expect(page.get_by_role("heading", name=f"Answer {everything[0]} (outside the filter)")).to_be_visible()
    for n, answer in enumerate(wanted, start=1):  # N from there: the first match, then the next ...
        press(page, "n")
        heading(page, answer, n, len(wanted))
        progress(page, "focused item 1 of")
        for k in range(2, items[answer] + 1):  # J walks the answer's items, and stays in it
            press(page, "j")
            progress(page, f"focused item {k} of {items[answer]}")
        press(page, "j")
        progress(page, "This is the last item of this answer")
        heading(page, answer, n, len(wanted))
    press(page, "n")  # no answer past the last match
    progress(page, f"This is the last answer ({len(wanted)} of {len(wanted)})")
    heading(page, wanted[-1], len(wanted), len(wanted))

    box.fill("")
    box.press("Enter")
    expect(count).to_have_count(0, timeout=20_000)
    last = everything.index(wanted[-1])
    heading(page, wanted[-1], last + 1, len(everything))  # the same answer, in the whole queue again
    press(page, "n")
    heading(page, everything[last + 1], last + 2, len(everything))  # N goes on to answers that did not match
    idle(page)
    page.context.close()


def test_the_filters_are_drawn_while_open_and_stay_on_while_closed(app, browser):
    """The Filters expander draws its eleven select boxes only while open (a closed one costs every
    run nothing); a filter set there stays on once it is closed, a line says so, and opening it
    again shows the value chosen."""
    from playwright.sync_api import expect

    page = open_as(browser, f"{app}/?reviewer=fay")
    side = page.get_by_test_id("stSidebar")
    filters = side.locator("summary").filter(has_text="Filters")
    status = side.get_by_test_id("stSelectbox").filter(has_text="Mechanical status")
    expect(status).to_have_count(0)  # closed: not drawn
    filters.click()
    expect(status).to_have_count(1, timeout=20_000)
    idle(page)  # (the run that draws the filters has ended: a click during it can land on a box it replaces)
    choose(page, status, page.get_by_role("option", name="Failed"))
    count = page.locator(".search-count")
    expect(count.last).to_have_text(re.compile(r"\d+ answers?, \d+ items? match"), timeout=20_000)
    matched = count.last.inner_text()
    idle(page)
    filters.click()  # closed again: the filter stays on, and says so
    expect(status).to_have_count(0, timeout=20_000)
    expect(side.get_by_text("1 filter on (open Filters to change it)")).to_be_visible(timeout=20_000)
    expect(count.last).to_have_text(matched)
    idle(page)
    filters.click()  # opened again: the value chosen
    expect(status.get_by_role("combobox")).to_have_value("Failed", timeout=20_000)
    expect(count.last).to_have_text(matched)
    idle(page)
    page.context.close()
