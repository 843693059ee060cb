"""Comment threads on the review page, in a real browser (Debian's headless Chromium, Playwright):
blind mode hides the focused item's thread ("Comments on this item") until the reviewer has
labelled it; a reviewer comments with a mention, the other (in another browser context) sees it
highlighted and resolves the thread; the lead sees open threads on the Disagreements page."""

from __future__ import annotations

import os

import pytest
from appserver import running_app
from citecheck.labelling import labels
from citecheck.storage import streams
from test_browser import CHROMIUM, launch
from test_review_browser import LINES, progress
from test_team_browser import idle, open_as, press

KEY = "a-001#s0#c0"  # the first item of a-001, focused when the answer opens
HIDDEN = "Comments show once you have labelled this item"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("comments")
    log, store = folder / "log.jsonl", folder / "labels.jsonl"
    log.write_text("".join(line + "\n" for line in LINES[:3]), encoding="utf-8")
    with running_app(["--log", log, "--labels", store, "--corpus", ""]) as url:
        yield url, store


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


def raw(store) -> list[dict]:
    return streams.read_all(store, labels.STREAM, lambda v: v)[0]


def review(browser, url: str, reviewer: str, blind: bool = True):
    """The review page on a-001 as ``reviewer`` in a browser context of their own, the focused
    item's thread opened."""
    page = open_as(browser, f"{url}/?answer=a-001&reviewer={reviewer}" + ("" if blind else "&blind=off"))
    progress(page, f"{reviewer}: labelled")
    open_thread(page)
    return page


def open_thread(page) -> None:
    """Open the "Comments on this item" expander, unless it is open (its state is kept across reruns;
    a click that lands while a run is under way can be undone by that run, so it is checked)."""
    from playwright.sync_api import expect

    details = page.locator("details", has=page.get_by_text("Comments on this item"))
    for _ in range(3):
        idle(page)
        if details.get_attribute("open") is not None:
            break
        page.get_by_text("Comments on this item").click()
        idle(page)
    expect(details).to_have_attribute("open", "")


def label_first_item(page, reviewer: str) -> None:
    """Supported (key 1) on the focused item, which moves the focus on; K brings it back."""
    progress(page, "focused item 1 of")
    press(page, "1")
    progress(page, f"{reviewer}: labelled 1 of")
    progress(page, "focused item 2 of")
    press(page, "k")
    progress(page, "focused item 1 of")
    open_thread(page)


def test_blind_mode_a_mention_and_a_resolve_on_the_review_page(app, browser):
    from playwright.sync_api import expect

    url, store = app
    ben = review(browser, url, "ben")
    comment = ben.get_by_role("button", name="Comment", exact=True)
    expect(ben.get_by_text(HIDDEN)).to_be_visible()  # blind and not labelled: no thread, no box
    expect(comment).to_have_count(0)
    label_first_item(ben, "ben")
    expect(comment).to_be_visible(timeout=20_000)  # labelled: the thread (empty yet) and its box
    expect(ben.get_by_text(HIDDEN)).to_have_count(0)
    press(ben, "j")  # the next item, not labelled by ben: hidden again
    progress(ben, "focused item 2 of")
    open_thread(ben)
    expect(ben.get_by_text(HIDDEN)).to_be_visible(timeout=20_000)

    ana = review(browser, url, "ana")
    expect(ana.get_by_text(HIDDEN)).to_be_visible()
    label_first_item(ana, "ana")
    box = ana.get_by_label("Comment (mention a reviewer with @name)")
    box.fill("@ben is the <b>fee</b> in the chunk?")
    box.press("Control+Enter")  # commit the text, then click (as a reviewer would)
    idle(ana)
    ana.get_by_role("button", name="Comment", exact=True).click()
    expect(ana.get_by_text("Comment saved.")).to_be_visible(timeout=20_000)
    expect(ana.locator("mark.cc-mention")).to_have_text("@ben")
    expect(ana.locator(".cc-comment-text")).to_have_text("@ben is the <b>fee</b> in the chunk?")  # shown as typed
    assert ana.locator(".cc-comment-text b").count() == 0
    made = raw(store)[-1]
    assert (made["event"], made["thread"], made["author"], made["mentions"]) == ("comment", KEY, "ana", ["ben"])

    cy = review(browser, url, "cy")  # a third reviewer in blind mode: ana's comment stays hidden
    expect(cy.get_by_text(HIDDEN)).to_be_visible()
    expect(cy.get_by_text("in the chunk?")).to_have_count(0)
    cy.context.close()
    cy = review(browser, url, "cy", blind=False)  # blind mode off: shown before labelling
    expect(cy.get_by_text("in the chunk?")).to_be_visible(timeout=20_000)
    cy.context.close()

    lead = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    lead.goto(f"{url}/disagreements?reviewer=lee", timeout=60_000)
    expect(lead.get_by_role("heading", name="Open comment threads")).to_be_visible(timeout=60_000)
    link = lead.get_by_role("link", name=KEY)
    expect(link).to_be_visible(timeout=20_000)
    link.click()  # the thread's answer on the review page (served at the root: no "Page not found")
    expect(lead.get_by_role("heading", name="Answer a-001", exact=False)).to_be_visible(timeout=60_000)
    progress(lead, "lee: labelled 0 of")
    idle(lead)
    expect(lead.get_by_text("Page not found")).to_have_count(0)

    ben.goto(f"{url}/?answer=a-001&reviewer=ben&item=1", timeout=60_000)  # his page, on the item again
    progress(ben, "focused item 1 of")
    open_thread(ben)
    expect(ben.locator("mark.cc-mention")).to_have_text("@ben", timeout=20_000)
    expect(ben.get_by_text("Open, 1 comment")).to_be_visible()
    idle(ben)
    ben.get_by_role("button", name="Resolve").click()
    expect(ben.get_by_text("Resolved by ben")).to_be_visible(timeout=20_000)
    expect(ben.get_by_role("button", name="Resolve")).to_have_count(0)
    done = raw(store)[-1]
    assert (done["event"], done["by"], done["thread"]) == ("resolve", "ben", KEY)

    lead.goto(f"{url}/disagreements?reviewer=lee", timeout=60_000)
    expect(lead.get_by_text("No open comment thread.")).to_be_visible(timeout=60_000)
