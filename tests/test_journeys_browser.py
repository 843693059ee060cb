"""The four journeys of citecheck's users, walked in Debian's headless Chromium at 1280 x 800 on a
freshly started server, each leaving screenshots under the test's temporary folder
(``python3 dev.py test tests/test_journeys_browser.py --basetemp=/tmp/journeys`` keeps them there):

1. a reviewer labels an item and undoes it;
2. a lead adjudicates three disagreements in a row with the keyboard;
3. a product owner goes from a Failures figure to the failing item;
4. a calibration lead reads the judge's figures at n = 2 and at n = 200.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import pytest
import test_review_browser
from appserver import running_app
from citecheck.checking import answer_problems
from citecheck.checking.files import check_options
from citecheck.cli.main import main
from citecheck.judging import verdicts as verdict_store
from citecheck.labelling import dataset
from citecheck.labelling import labels as label_store
from citecheck.labelling.items import items_of
from citecheck.reports import failures_view
from citecheck.storage import streams
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG
from test_browser import CHROMIUM

browser = test_review_browser.browser  # the review tests' fixture: one headless Chromium per test

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]

ROOT = Path(__file__).resolve().parent.parent
EQA_LOG = ROOT / "sample_data" / "expertqa" / "answers.jsonl"
EQA_LABELS = ROOT / "sample_data" / "expertqa" / "labels.jsonl"


def new_page(browser):
    return browser.new_context(viewport={"width": 1280, "height": 800}).new_page()


def idle(page) -> None:
    """The app's run has finished and the page is drawn: no element still a placeholder."""
    from playwright.sync_api import expect

    expect(page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')).to_have_count(1, timeout=30_000)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=30_000)
    page.wait_for_timeout(300)  # (a rerun the run itself asked for, such as writing its choices into the address)
    expect(page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')).to_have_count(1, timeout=30_000)


def key(page, anchor: str, k: str) -> None:
    """A key pressed on the page (not in a box), once the app is idle."""
    idle(page)
    page.get_by_text(anchor, exact=False).first.click()
    page.keyboard.press(k)


def shot(page, folder: Path, name: str) -> Path:
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000  # a drawn page, not a blank one
    return path


def in_view(page, locator) -> bool:
    box = locator.bounding_box()
    return box is not None and 0 <= box["y"] and box["y"] + min(box["height"], 200) <= page.viewport_size["height"]


def raw(target) -> list[dict]:
    return streams.read_all(target, label_store.STREAM, lambda v: v)[0]


def settings(tmp_path: Path, *extra: str) -> list[str]:
    return ["--labels", str(tmp_path / "labels.jsonl"), "--verdicts", str(tmp_path / "verdicts.jsonl"), *extra]


# --- 1. a reviewer labels and undoes --------------------------------------------------------------


def test_journey_reviewer_labels_and_undoes(browser, tmp_path):
    from playwright.sync_api import expect

    with running_app(settings(tmp_path)) as url:
        page = new_page(browser)
        page.goto(f"{url}/review", timeout=60_000)
        expect(page.get_by_role("heading", name="Answer a-001 (1 of 48)")).to_be_visible(timeout=60_000)
        idle(page)
        # the page opens at its top: the answer, its question and the name notice, not scrolled away
        assert page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTop") == 0
        for text in ("Answer a-001 (1 of 48)", "Question:", "Enter your name in the sidebar"):
            assert in_view(page, page.get_by_text(text, exact=False).first), text
        expect(page.get_by_role("button", name="Deploy")).to_have_count(0)  # no developer toolbar for reviewers
        shot(page, tmp_path, "1-review-opened")
        name = page.get_by_role("textbox", name="Reviewer name")
        name.fill("ana")
        name.press("Enter")
        expect(page.get_by_text("ana: labelled 0 of 60 items", exact=False).first).to_be_visible(timeout=20_000)
        key(page, "Focused item", "3")
        expect(page.get_by_text("ana: labelled 1 of 60 items", exact=False).first).to_be_visible(timeout=20_000)
        shot(page, tmp_path, "1-review-labelled")
        key(page, "Focused item", "z")
        expect(page.get_by_text("ana: labelled 0 of 60 items", exact=False).first).to_be_visible(timeout=20_000)
        expect(page.get_by_text("Withdrew your \u201cNot supported\u201d", exact=False).first).to_be_visible()
        shot(page, tmp_path, "1-review-undone")
    events = raw(tmp_path / "labels.jsonl")
    assert [e.get("event", "label") for e in events] == ["label", "retraction"]
    assert events[0]["label"] == "not_supported" and events[1]["retracts"] == events[0]["at"]


# --- 2. a lead adjudicates three disagreements with the keyboard ----------------------------------


def test_journey_lead_adjudicates_three_in_a_row_with_the_keyboard(browser, tmp_path):
    from playwright.sync_api import expect

    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    items = [i for i in data.all_items if i.citation is not None][:3]
    for item in items:
        label_store.append(tmp_path / "labels.jsonl", label_store.make_label(item, "supported", "ana"))
        label_store.append(tmp_path / "labels.jsonl", label_store.make_label(item, "not_supported", "ben"))
    with running_app(settings(tmp_path, "--overlap", "2")) as url:
        page = new_page(browser)
        page.goto(f"{url}/disagreements?reviewer=lee", timeout=60_000)
        expect(page.get_by_text("3 of 3 disagreement(s) remain to adjudicate.", exact=False)).to_be_visible(timeout=60_000)
        expect(page.get_by_role("combobox", name="Disagreement")).to_have_value(re.compile(r"^a-001 \u00b7 sentence 1"))
        shot(page, tmp_path, "2-disagreements-opened")
        for n, (k, remain) in enumerate((("3", 2), ("2", 1), ("1", 0))):
            if n == 0:
                note = page.get_by_placeholder("optional")
                note.fill("the chunk says the opposite")
                note.press("Enter")  # commits the note: records nothing
                idle(page)
                assert not [e for e in raw(tmp_path / "labels.jsonl") if e.get("event") == "adjudication"]
            key(page, "focused disagreement", k)
            if remain:
                expect(page.get_by_text(f"{remain} of 3 disagreement(s) remain", exact=False)).to_be_visible(timeout=20_000)
                idle(page)
                expect(page.get_by_placeholder("optional")).to_have_value("")
                shot(page, tmp_path, f"2-disagreements-after-{n + 1}")
        expect(page.get_by_text("Every disagreement is adjudicated", exact=False)).to_be_visible(timeout=20_000)
        shot(page, tmp_path, "2-disagreements-done")
    decided = {e["item"]: (e["label"], e.get("note", "")) for e in raw(tmp_path / "labels.jsonl")
               if e.get("event") == "adjudication"}
    assert decided == {items[0].key: ("not_supported", "the chunk says the opposite"),
                       items[1].key: ("partial", ""), items[2].key: ("supported", "")}


# --- 3. a product owner goes from a figure to the failing item ------------------------------------


def test_journey_product_owner_from_a_failures_figure_to_the_failing_item(browser, tmp_path):
    from playwright.sync_api import expect

    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    with running_app(settings(tmp_path)) as url:
        page = new_page(browser)
        page.goto(f"{url}/failures", timeout=60_000)
        expect(page.get_by_role("heading", name="Failed answers")).to_be_visible(timeout=60_000)
        expect(page.get_by_text("27.1%").first).to_be_visible(timeout=30_000)  # failing answers, as check says
        expect(page.get_by_text("corpus", exact=True).first).to_be_visible()  # the inputs, stated
        shot(page, tmp_path, "3-failures-headline")
        page.get_by_role("tab", name="Failing answers").click()
        grid = page.locator('[data-testid="stDataFrame"]:visible').first
        expect(grid).to_be_visible(timeout=20_000)
        grid.scroll_into_view_if_needed()
        idle(page)
        # the row box, the answer, its reasons and its question fit in the table's width at 1280 px: no
        # sideways scrolling to read them
        frame = grid.bounding_box()
        first_three = 40 + sum(failures_view.WIDTHS[c] for c in ("answer_id", "reasons", "question"))
        assert frame is not None and frame["width"] >= first_three, frame
        shot(page, tmp_path, "3-failures-table")
        first = data.get("a-035")
        focus = answer_problems.first_failing_item(first, items_of(first))
        row = 35  # Streamlit's row and header height; the first row's box is under the header
        expect(grid.locator("td", has_text="a-035").first).to_be_attached(timeout=20_000)  # (the rows are in)
        heading = page.get_by_role("heading", name=re.compile(r"^Answer a-035"))
        for _ in range(3):  # (on a loaded machine the grid can take a click before it listens for one)
            page.mouse.click(frame["x"] + 18, frame["y"] + row * 1.5)
            try:
                expect(heading).to_be_visible(timeout=10_000)
                break
            except AssertionError:
                if "/failures" not in page.url or grid.locator('tr[aria-selected="true"]').count():
                    break  # (the row was taken: the page is on its way)
        expect(heading).to_be_visible(timeout=30_000)
        idle(page)
        assert "/failures" not in page.url and "answer=a-035" in page.url and f"item={focus + 1}" in page.url
        why = answer_problems.why_text(first)
        expect(page.get_by_text(why, exact=True)).to_be_visible()
        marker = page.locator(".cc-focus").last
        expect(marker).to_contain_text(f"focused item {focus + 1} of")
        page.wait_for_timeout(500)
        assert in_view(page, marker)  # the failing item, scrolled into view
        shot(page, tmp_path, "3-review-failing-item")


# --- 4. a calibration lead reads the figures at n = 2 and at n = 200 -----------------------------


def test_journey_calibration_lead_reads_the_figures_at_2_and_at_200_items(browser, tmp_path):
    from playwright.sync_api import expect

    # n = 2: two labels on the sample, the baseline judge over every item
    small = tmp_path / "small"
    small.mkdir()
    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    cited = [i for i in data.all_items if i.citation is not None]
    label_store.append(small / "labels.jsonl", label_store.make_label(cited[0], "not_supported", "ana"))
    label_store.append(small / "labels.jsonl", label_store.make_label(cited[1], "supported", "ana"))
    assert main(["judge", "--log", str(DEFAULT_LOG), "--all-items", "--judge", "baseline", "--out",
                 str(small / "verdicts.jsonl")], io.StringIO(), io.StringIO()) == 0
    # n = 200: 200 ExpertQA citation items the judge scored, with their experts' labels
    large = tmp_path / "large"
    large.mkdir()
    assert main(["judge", "--log", str(EQA_LOG), "--all-items", "--judge", "baseline", "--out",
                 str(large / "verdicts.jsonl")], io.StringIO(), io.StringIO()) == 0
    scored = {v.item for v in verdict_store.read(large / "verdicts.jsonl")[0] if v.scored}
    kept = [r for r in raw(EQA_LABELS) if r.get("item") in scored and r["label"] != "cant_tell"][:200]
    assert len(kept) == 200
    (large / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    for folder, n, log in ((small, 2, DEFAULT_LOG), (large, 200, EQA_LOG)):
        with running_app(["--log", str(log), *settings(folder)]) as url:
            page = new_page(browser)
            page.goto(f"{url}/calibration", timeout=60_000)
            expect(page.get_by_role("heading", name="Judge calibration")).to_be_visible(timeout=60_000)
            expect(page.get_by_text(f"{n:,} items with a human label and a verdict", exact=False)).to_be_visible(
                timeout=60_000)
            idle(page)
            text = page.locator('[data-testid="stMain"]').inner_text()
            assert not re.search(r"(\d\.\d\d) to \1\b", text), "a zero-width interval"  # "0.00 to 0.00"
            if n == 2:
                assert "no interval: too few items for an interval (under 10)" in text  # kappa at n = 2
                assert re.search(r"95% CI 0\.00 to 0\.[1-9]", text)  # TPR 0 of 1: Wilson, not [0, 0]
            else:
                figures = text.split("Estimated rates", 1)[0]
                assert "no interval" not in figures and figures.count("95% CI") >= 8  # every tile has its interval
            shot(page, tmp_path, f"4-calibration-n{n}")
            page.mouse.wheel(0, 700)
            page.wait_for_timeout(500)
            shot(page, tmp_path, f"4-calibration-n{n}-below")
