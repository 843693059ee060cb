"""Answers appended to a log while the app runs (an application's AnswerLog, ``citecheck collect``)
show without a restart or a click: a page looks every second whether a log it shows has grown.
Walked in Debian's headless Chromium on a freshly started server.  How soon (the 2 s target of
issue #33) is measured by ``bench/bench_follow.py``, not here: a test does not time things, and
on a loaded CI machine a timed assertion fails for the machine, not the code."""

from __future__ import annotations

import os
import time

import pytest
import test_review_browser
from appserver import running_app
from citecheck import AnswerLog
from test_browser import CHROMIUM
from test_journeys_browser import idle, new_page

browser = test_review_browser.browser

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


def _record(log: AnswerLog, k: int, question: str) -> None:
    log.record(question=question, answer_id=f"live-{k}", answer="Refunds take 5-7 business days [1].",
               chunks=[{"chunk_id": f"faq-{k}", "document_id": "faq", "source": "faq.md",
                        "text": "Refunds take 5-7 business days to arrive."}])


def test_an_answer_appended_while_the_review_page_is_open_shows_without_a_reload(browser, tmp_path):
    path = tmp_path / "live.jsonl"
    log = AnswerLog(path, model="claude-sonnet-4-5")
    _record(log, 1, "How long do refunds take?")
    with running_app(["--log", path, "--labels", tmp_path / "labels.jsonl"]) as url:
        page = new_page(browser)
        page.goto(f"{url}/failures")
        idle(page)
        page.get_by_text("from 1 answer(s)").first.wait_for(timeout=30_000)  # (drawn just after the run ends)
        assert page.get_by_text("from 1 answer(s)").count() >= 1
        time.sleep(1.5)  # (a quiet page: nothing changed, nothing is re-read)
        assert page.get_by_text("from 1 answer(s)").count() >= 1
        _record(log, 2, "Do refunds go back to the card?")
        page.get_by_text("from 2 answer(s)").first.wait_for(timeout=20_000)  # (no reload, no click)
        page.goto(f"{url}/")  # (Review, the default page, at the root)
        idle(page)
        _record(log, 3, "Is there a refund fee?")
        page.get_by_text("from 3 answer(s)").first.wait_for(timeout=20_000)
