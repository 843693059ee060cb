"""A lead assigns a calibration sample to two reviewers on the Assign page, in a real browser
(Debian's headless Chromium, Playwright); each works their queue with the keyboard (assigned items
first, "N of M assigned to you left"); one leaves with an item open, which is held for them until
the lock (``--lock 1``: one minute) runs out and then goes back to the pool: the other reviewer's
session writes the release and is served the item."""

from __future__ import annotations

import os
import time

import pytest
from citecheck.labelling import labels
from citecheck.labelling import sample as samples
from citecheck.labelling.assignments import Assignment, Open, Release
from citecheck.labelling.dataset import load
from test_browser import CHROMIUM
from test_review_browser import LINES, browser, make_app, progress  # noqa: F401 (fixtures)
from test_team_browser import idle, open_as, press

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


def events(app) -> list:
    found, warnings = labels.read_events(app.labels)
    assert warnings == []
    return found


def wait_for(check, seconds: float = 20.0):
    """``check()``'s first true value within ``seconds`` (the store is written by the server)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if value := check():
            return value
        time.sleep(0.2)
    raise AssertionError(f"not within {seconds} s")


def test_a_lead_assigns_a_sample_two_reviewers_work_it_and_a_lock_returns_an_item(make_app, browser, tmp_path):  # noqa: F811
    from playwright.sync_api import expect

    app = make_app(LINES[:3], "--lock", "1")  # a-001 (2 items), a-002 (1), a-003 (2)
    keys = [i.key for i in load([app.log]).all_items]
    assert len(keys) == 5
    samples.write(app.labels.parent / "sample.jsonl", samples.draw(keys, 5, seed=7))

    lead = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    lead.goto(f"{app.url}/assign?reviewer=lee", timeout=60_000)
    expect(lead.get_by_role("heading", name="Assign work")).to_be_visible(timeout=60_000)
    expect(lead.get_by_text("5 item(s) from sample:")).to_be_visible(timeout=20_000)
    lead.get_by_role("textbox", name="Reviewers").fill("ana,ben")
    lead.get_by_role("textbox", name="Reviewers").press("Enter")
    idle(lead)
    lead.get_by_role("button", name="Assign", exact=True).click()
    expect(lead.get_by_text("Assigned 5 item(s) as")).to_be_visible(timeout=20_000)
    (made,) = [e for e in events(app) if isinstance(e, Assignment)]
    given = dict(made.items)
    assert made.lead == "lee" and [len(given["ana"]), len(given["ben"])] == [3, 2]

    ana = open_as(browser, f"{app.url}/?reviewer=ana")
    progress(ana, "3 of 3 assigned to you left")
    press(ana, "u")  # her queue: her first assigned item
    wait_for(lambda: any(isinstance(e, Open) and e.item == given["ana"][0] and e.reviewer == "ana"
                         for e in events(app)))
    press(ana, "1")
    progress(ana, "2 of 3 assigned to you left")
    press(ana, "1")
    progress(ana, "1 of 3 assigned to you left")
    left_open = given["ana"][2]  # the queue brought her third item, which she opens ... and leaves
    wait_for(lambda: any(isinstance(e, Open) and e.item == left_open and e.reviewer == "ana" for e in events(app)))
    ana.context.close()
    assert [(r.reviewer, r.item) for r in app.records()] == [("ana", given["ana"][0]), ("ana", given["ana"][1])]

    ben = open_as(browser, f"{app.url}/?reviewer=ben")
    progress(ben, "2 of 2 assigned to you left")
    press(ben, "u")
    press(ben, "1")
    progress(ben, "1 of 2 assigned to you left")
    press(ben, "1")
    progress(ben, "All 2 items assigned to you are labelled.")
    expect(ben.get_by_text("Your queue is finished").first).to_be_visible(timeout=20_000)  # ana holds the last
    assert {(r.reviewer, r.item) for r in app.records()} == {("ana", k) for k in given["ana"][:2]} | {
        ("ben", k) for k in given["ben"]}
    assert not any(isinstance(e, Open) and e.item == left_open and e.reviewer == "ben" for e in events(app))

    opened_at = next(e.at for e in events(app) if isinstance(e, Open) and e.item == left_open)
    from datetime import datetime, timezone

    waited = (datetime.now(timezone.utc) - datetime.fromisoformat(opened_at.replace("Z", "+00:00"))).total_seconds()
    time.sleep(max(0.0, 61 - waited))  # ana's lock runs out
    press(ben, "u")  # ben's session notices: a release, and the item is back in the pool
    release = wait_for(lambda: next((e for e in events(app) if isinstance(e, Release)), None))
    assert (release.item, release.reviewer, release.by, release.reason, release.assignment) == (
        left_open, "ana", "ben", "lock-timeout", made.assignment)
    idle(ben)
    press(ben, "u")
    wait_for(lambda: any(isinstance(e, Open) and e.item == left_open and e.reviewer == "ben" for e in events(app)))
    press(ben, "1")
    wait_for(lambda: ("ben", left_open) in {(r.reviewer, r.item) for r in app.records()})
    assert len([e for e in events(app) if isinstance(e, Release)]) >= 1  # (two sessions noticing would write two)
    assert {r.item for r in app.records()} == set(keys)  # every item labelled, none twice
    assert len(app.records()) == 5
