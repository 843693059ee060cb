"""Two real browser sessions on one server (issue 17): one on a pathological answer (10,000
citations, a quarter of their quotes missing from their chunks, so the closest-passage hint runs
for each shown), the other on a short answer. Both pages come up: the long one a page at a time."""

import json
import os
import sys
from pathlib import Path

import pytest
from appserver import running_app
from test_browser import CHROMIUM, launch
from test_team_browser import idle

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import bench_review_page  # noqa: E402

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


@pytest.fixture
def server(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(bench_review_page.answer_with_citations(10_000)) + "\n" + json.dumps(bench_review_page.answer_with_citations(3)) + "\n")
    with running_app(["--log", log, "--labels", tmp_path / "labels.jsonl"]) as url:
        yield url


def test_a_pathological_answer_does_not_hold_up_another_session(server):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        heavy = browser.new_context().new_page()
        light = browser.new_context().new_page()  # a second session (its own cookies, its own websocket)
        heavy.goto(f"{server}/?answer=cit-10000", timeout=60_000)
        light.goto(f"{server}/?answer=cit-3", timeout=60_000)
        expect(light.get_by_text("Answer cit-3")).to_be_visible(timeout=60_000)  # the data load, once
        expect(heavy.get_by_text("Sentences 1 to 40 of 10,000 (page 1 of 250)")).to_be_visible(timeout=30_000)
        # the heavy session moves to its last page; the light one reruns meanwhile and answers
        heavy.get_by_label("Sentences page").fill("250")
        heavy.get_by_label("Sentences page").press("Enter")
        # (the click lands once the light page's own run has ended: a click on a button that a
        # run of its own session is redrawing can be lost, which is not what this test is about)
        idle(light)
        light.get_by_role("button", name="Next item").click()
        expect(light.get_by_text("Focused item 2 of 3:", exact=True)).to_be_visible(timeout=20_000)
        expect(heavy.get_by_text("Sentences 9,961 to 10,000 of 10,000 (page 250 of 250)")).to_be_visible(timeout=30_000)
        browser.close()
