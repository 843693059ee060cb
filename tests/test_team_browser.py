"""A labelling team in a real browser (Debian's headless Chromium, Playwright): two reviewers in
two browser contexts with ``--overlap 2``, the queue bringing the second to the item the first
started, the first's label hidden in blind mode, the Disagreements page and an adjudication;
then undo, which appends a retraction that calibration ignores."""

from __future__ import annotations

import io
import json
import os
import re

import pytest
from citecheck.cli.main import main
from citecheck.judging import verdicts as verdict_store
from citecheck.labelling import labels
from citecheck.storage import streams
from test_browser import CHROMIUM
from test_review_browser import LINES, browser, make_app, progress  # noqa: F401 (fixtures)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


def open_as(browser, url: str):  # noqa: F811 (the fixture's value)
    """A page in a new browser context: its own cookies and session, as another person's browser."""
    from playwright.sync_api import expect

    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(url, timeout=60_000)
    expect(page.get_by_role("heading", name="Answer", exact=False).first).to_be_visible(timeout=60_000)
    return page


def idle(page) -> None:
    """Wait until the app has finished its run (a key pressed mid-run was seen lost once under load)."""
    from playwright.sync_api import expect

    expect(page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')).to_have_count(1, timeout=20_000)


def choose(page, box, option) -> None:
    """Open the select box ``box`` and click ``option`` in its list.  A list opened just as the page
    drew again closes with it, before its option shows or before it can be clicked (Playwright
    clicks nothing it finds detached): it is opened again, up to three times, once the run has ended."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(2):
        box.click()
        try:
            option.wait_for(timeout=5_000)
            option.click(timeout=5_000)
            return
        except PlaywrightTimeout:
            idle(page)
    box.click()
    option.click()


def press(page, key: str, anchor: str = "Focused item") -> None:
    """A key press on the page itself (not in a box or a script frame), once the app is idle and
    the page's last frame (the reconnect script) has run, as the review tests' open_review waits for."""
    idle(page)
    if anchor == "Focused item":
        page.wait_for_function("() => !!document.__ccRun", timeout=60_000)
    page.get_by_text(anchor, exact=False).first.click()
    page.keyboard.press(key)


def raw(path) -> list[dict]:
    return streams.read_all(path, labels.STREAM, lambda v: v)[0]


def test_two_reviewers_blind_queue_disagreement_adjudication_and_undo(make_app, browser, tmp_path):  # noqa: F811
    from playwright.sync_api import expect

    app = make_app(LINES[:3], "--overlap", "2")  # a-001 (2 items), a-002 (1), a-003 (2)
    ana = open_as(browser, f"{app.url}/review?answer=a-002&reviewer=ana")
    progress(ana, "ana: labelled 0 of 5")
    press(ana, "1")  # a-002#s0#c0: Supported
    progress(ana, "ana: labelled 1 of 5")

    ben = open_as(browser, f"{app.url}/?reviewer=ben")  # opens where his queue starts, not on a-001:
    progress(ben, "ben: labelled 0 of 5")
    # the queue prefers the item ana started over a-001's untouched ones
    expect(ben.get_by_role("heading", name="Answer a-002")).to_be_visible(timeout=20_000)
    press(ben, "u")  # Resume: already there, the focus stays
    expect(ben.get_by_role("heading", name="Answer a-002")).to_be_visible(timeout=20_000)
    expect(ben.get_by_text("1 other reviewer label(s) hidden until you label this item")).to_be_visible()
    expect(ben.get_by_text("Others: ana")).to_have_count(0)  # blind: ana's label is not shown
    ben.get_by_text("Label history of this item").click()
    expect(ben.get_by_text("1 entry by others hidden")).to_be_visible()
    press(ben, "3")  # Not supported: the two disagree
    progress(ben, "ben: labelled 1 of 5")
    progress(ben, "team: 1 of 5 items done (2 reviewers each)")
    assert [(r.reviewer, r.item, r.label) for r in app.records()] == [
        ("ana", "a-002#s0#c0", "supported"), ("ben", "a-002#s0#c0", "not_supported")]

    ben.goto(f"{app.url}/?answer=a-002&reviewer=ben", timeout=60_000)  # now labelled: nothing hidden
    expect(ben.get_by_text("Others: ana: Supported")).to_be_visible(timeout=60_000)

    lead = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    lead.goto(f"{app.url}/disagreements?reviewer=lee", timeout=60_000)
    expect(lead.get_by_role("heading", name="Disagreements")).to_be_visible(timeout=60_000)
    expect(lead.get_by_text("n = 1 items with two or more labels")).to_be_visible(timeout=20_000)
    side = lead.locator("table.cc-side").last
    expect(side).to_contain_text("ana")
    expect(side).to_contain_text("Supported")
    expect(side).to_contain_text("ben")
    expect(side).to_contain_text("Not supported")
    expect(lead.get_by_text("Not adjudicated yet")).to_be_visible()
    lead.get_by_role("button", name="Partially supported").click()
    expect(lead.get_by_text("Recorded \u201cPartially supported\u201d for a-002#s0#c0")).to_be_visible(timeout=20_000)
    adjudication = raw(app.labels)[-1]
    assert (adjudication["event"], adjudication["adjudicator"], adjudication["label"]) == (
        "adjudication", "lee", "partial")
    assert [(r["reviewer"], r["label"]) for r in adjudication["resolves"]] == [
        ("ana", "supported"), ("ben", "not_supported")]

    # ana labels a-001's first item by mistake, then undoes it with Z
    ana.goto(f"{app.url}/?answer=a-001&reviewer=ana", timeout=60_000)
    progress(ana, "ana: labelled 1 of 5")
    press(ana, "3")
    progress(ana, "ana: labelled 2 of 5")
    press(ana, "z")
    progress(ana, "ana: labelled 1 of 5")
    expect(ana.get_by_text("Withdrew your \u201cNot supported\u201d for sentence 1 of a-001").first).to_be_visible()
    records = raw(app.labels)
    assert len(records) == 5 and records[3]["item"] == "a-001#s0#c0"  # the slip stays in the file ...
    assert {k: records[4][k] for k in ("event", "item", "reviewer", "label")} == {
        "event": "retraction", "item": "a-001#s0#c0", "reviewer": "ana", "label": "not_supported"}
    assert records[4]["retracts"] == records[3]["at"]

    # ... and calibration ignores it: the judge's verdicts on both items, one human label (adjudicated)
    verdicts = tmp_path / "verdicts.jsonl"
    verdict_store.append(verdicts, [verdict_store.make("a-002#s0#c0", "partial", "", "j", "v1", "h"),
                        verdict_store.make("a-001#s0#c0", "supported", "", "j", "v1", "h")])
    out, err = io.StringIO(), io.StringIO()
    code = main(["calibrate", "--labels", str(app.labels), "--verdicts", str(verdicts), "--format", "json",
                 "--log", str(app.log), "--overlap", "2"], out, err)
    report = json.loads(out.getvalue())
    assert code == 0 and report["items"] == 1 and report["unjudged"] == 0
    assert report["human_label_rules"] == {"adjudicated": 1, "majority": 0, "single": 0, "no_majority": 0,
                                           "incomplete": 0}
    assert report["confusion"][1][1] == 1  # partial / partial


def test_a_lead_adjudicates_three_disagreements_in_a_row_with_the_keyboard(make_app, browser):  # noqa: F811
    """Three disagreements decided with keys 1-4 and J: the picker names each by answer, sentence
    and first words; the page says how many remain; each item's note box starts empty (a note used
    to carry over, one click from recording it on another item); Enter in the note box records
    nothing; each stored decision is the one chosen for its item."""
    from citecheck.labelling.dataset import load
    from playwright.sync_api import expect

    app = make_app(LINES[:3], "--overlap", "2")
    data = load([app.log])
    items = [i for i in data.all_items if i.citation is not None][:3]
    for item in items:  # two reviewers disagree on each of three items
        labels.append(app.labels, labels.make_label(item, "supported", "ana"))
        labels.append(app.labels, labels.make_label(item, "not_supported", "ben"))
    lead = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    lead.goto(f"{app.url}/disagreements?reviewer=lee", timeout=60_000)
    expect(lead.get_by_text("3 of 3 disagreement(s) remain to adjudicate.")).to_be_visible(timeout=60_000)
    first = items[0]
    sentence = data.get(first.answer_id).sentences[first.sentence].text.split()[0]
    picker = lead.get_by_role("combobox", name="Disagreement")
    expect(picker).to_have_value(re.compile(re.escape(
        f"{first.answer_id} \u00b7 sentence {first.sentence + 1} \u00b7 \u201c{sentence}") + ".* \u2192 .*"))
    note = lead.get_by_placeholder("optional")
    note.fill("the passage says the opposite")
    note.press("Enter")
    idle(lead)
    assert [r for r in raw(app.labels) if r.get("event") == "adjudication"] == []  # Enter decided nothing
    press(lead, "3", "focused disagreement")  # Not supported, with the note
    expect(lead.get_by_text("2 of 3 disagreement(s) remain to adjudicate.")).to_be_visible(timeout=20_000)
    idle(lead)
    expect(lead.get_by_placeholder("optional")).to_have_value("")  # the next item's note box is empty
    expect(lead.get_by_text("focused disagreement 1 of 2")).to_be_visible()
    press(lead, "j", "focused disagreement")  # skip to the third
    expect(lead.get_by_text("focused disagreement 2 of 2")).to_be_visible(timeout=20_000)
    press(lead, "2", "focused disagreement")  # Partially supported
    expect(lead.get_by_text("1 of 3 disagreement(s) remain to adjudicate.")).to_be_visible(timeout=20_000)
    press(lead, "1", "focused disagreement")  # the one skipped: Supported
    expect(lead.get_by_text("Every disagreement is adjudicated")).to_be_visible(timeout=20_000)
    decided = {r["item"]: (r["label"], r.get("note", "")) for r in raw(app.labels) if r.get("event") == "adjudication"}
    assert decided == {items[0].key: ("not_supported", "the passage says the opposite"),
                       items[1].key: ("supported", ""), items[2].key: ("partial", "")}
