"""Comment threads in a real browser (Debian's headless Chromium, Playwright): blind mode hides an
item's thread until the reviewer has labelled it; a reviewer comments with a mention, the other
sees it highlighted and resolves the thread; the lead sees open threads on the Disagreements page.

The review page does not draw threads yet, so the thread is drawn by tests/comment_thread_app.py,
a test-only app around ``pages._comments.show`` and the real Disagreements page."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from appserver import free_port, healthy
from citecheck.labelling import labels
from citecheck.storage import streams
from test_browser import CHROMIUM, launch
from test_review_browser import LINES

ROOT = Path(__file__).resolve().parent.parent
KEY = "a-001#s0#c0"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


@contextlib.contextmanager
def thread_app(tmp_path: Path):
    log, store = tmp_path / "log.jsonl", tmp_path / "labels.jsonl"
    log.write_text("".join(line + "\n" for line in LINES[:3]), encoding="utf-8")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "tests" / "comment_thread_app.py"),
         "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
         "--browser.gatherUsageStats", "false", "--", "--log", str(log), "--labels", str(store), "--corpus", ""],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        if not healthy(url):
            pytest.fail("the test app did not start within 60 s")
        yield url, store
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def idle(page) -> None:
    from playwright.sync_api import expect

    expect(page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')).to_have_count(1, timeout=20_000)


def open_thread(browser, url: str, reviewer: str):
    from playwright.sync_api import expect

    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{url}/?thread={quote(KEY, safe='')}&reviewer={reviewer}", timeout=60_000)
    expect(page.get_by_role("heading", name="Thread")).to_be_visible(timeout=60_000)
    idle(page)
    return page


def raw(store) -> list[dict]:
    return streams.read_all(store, labels.STREAM, lambda v: v)[0]


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


def test_blind_mode_a_mention_and_a_resolve(browser, tmp_path):
    from playwright.sync_api import expect

    with thread_app(tmp_path) as (url, store):
        hidden = "Comments show once you have labelled this item"
        ben = open_thread(browser, url, "ben")
        expect(ben.get_by_text(hidden)).to_be_visible()
        expect(ben.get_by_role("button", name="Comment", exact=True)).to_have_count(0)
        ben.get_by_role("button", name="Label it Supported").click()
        expect(ben.get_by_role("button", name="Comment", exact=True)).to_be_visible(timeout=20_000)
        expect(ben.get_by_text(hidden)).to_have_count(0)

        ana = open_thread(browser, url, "ana")  # blind, not labelled: hidden, whatever the thread holds
        expect(ana.get_by_text(hidden)).to_be_visible()
        ana.get_by_role("button", name="Label it Supported").click()
        box = ana.get_by_label("Comment (mention a reviewer with @name)")
        box.fill("@ben is the <b>fee</b> in the chunk?")
        box.press("Control+Enter")  # commit the text, then click (as a reviewer would)
        idle(ana)
        ana.get_by_role("button", name="Comment", exact=True).click()
        expect(ana.get_by_text("Comment saved.")).to_be_visible(timeout=20_000)
        mention = ana.locator("mark.cc-mention")
        expect(mention).to_have_text("@ben")
        expect(ana.locator(".cc-comment-text")).to_have_text("@ben is the <b>fee</b> in the chunk?")  # shown as typed
        assert (raw(store)[-1]["event"], raw(store)[-1]["mentions"]) == ("comment", ["ben"])

        cy = open_thread(browser, url, "cy")  # a third reviewer in blind mode: ana's comment stays hidden
        expect(cy.get_by_text(hidden)).to_be_visible()
        expect(cy.get_by_text("in the chunk?")).to_have_count(0)
        cy.goto(f"{url}/?thread={quote(KEY, safe='')}&reviewer=cy&blind=off", timeout=60_000)
        expect(cy.get_by_text("in the chunk?")).to_be_visible(timeout=20_000)  # blind mode off: shown

        lead = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        lead.goto(f"{url}/disagreements?reviewer=lee", timeout=60_000)
        expect(lead.get_by_role("heading", name="Open comment threads")).to_be_visible(timeout=60_000)
        expect(lead.get_by_role("link", name=KEY)).to_be_visible()

        ben.reload()
        expect(ben.locator("mark.cc-mention")).to_have_text("@ben", timeout=60_000)
        expect(ben.get_by_text("Open, 1 comment")).to_be_visible()
        idle(ben)
        ben.get_by_role("button", name="Resolve").click()
        expect(ben.get_by_text("Resolved by ben")).to_be_visible(timeout=20_000)
        expect(ben.get_by_role("button", name="Resolve")).to_have_count(0)
        assert (raw(store)[-1]["event"], raw(store)[-1]["by"], raw(store)[-1]["thread"]) == ("resolve", "ben", KEY)

        lead.reload()
        expect(lead.get_by_text("No open comment thread.")).to_be_visible(timeout=60_000)
