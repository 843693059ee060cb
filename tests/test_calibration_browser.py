"""The Judge calibration page keeps its choices (labels, split, disagreement being read) across a
page switch, a reload and a server restart, in Debian's headless Chromium driven by Playwright."""

from __future__ import annotations

import re

import pytest
from citecheck.cli.main import main
from citecheck.web.settings import EXPERTQA_LOG
from test_review_browser import LINES, browser, idle, make_app  # noqa: F401 (fixtures)


def test_the_calibration_choices_survive_a_page_switch_a_reload_and_a_restart(make_app, browser, tmp_path):  # noqa: F811
    from playwright.sync_api import expect

    assert main(["sample", "--log", str(EXPERTQA_LOG), "--size", "30", "--seed", "1",
                 "--out", str(tmp_path / "sample-1.jsonl")]) == 0
    app = make_app(LINES[:6], "--verdicts", str(tmp_path / "verdicts.jsonl"))  # (samples: beside the verdicts)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{app.url}/calibration", timeout=60_000)
    expertqa = page.get_by_role("radio", name="ExpertQA sample (real expert labels)")
    expertqa.check(force=True)
    idle(page)
    page.get_by_role("button", name="Run", exact=True).click()  # the baseline judge: no key, no network
    expect(page.get_by_role("heading", name="Disagreements")).to_be_visible(timeout=60_000)
    shown = page.get_by_text(re.compile(r"^\d+ of \d+ disagreement\(s\)$"))
    expect(shown).to_be_visible(timeout=20_000)
    in_all = shown.inner_text()
    page.get_by_role("radio", name="test").check(force=True)
    expect(shown).not_to_have_text(in_all, timeout=20_000)  # the test split's disagreements are drawn
    idle(page)
    item_box = page.get_by_role("combobox", name="Item")
    first = item_box.input_value()
    page.get_by_role("button", name="Next", exact=True).click()
    idle(page)
    expect(item_box).not_to_have_value(first, timeout=20_000)  # (a loaded machine may start the run after idle looked)
    chosen = item_box.input_value()
    assert chosen and chosen != first
    expect(page).to_have_url(re.compile(r"[?&]labels=expertqa(&|$)"))
    expect(page).to_have_url(re.compile(r"[?&]split=test(&|$)"))
    expect(page).to_have_url(re.compile(r"[?&]item="))
    counts = shown.inner_text()
    sample_box = page.get_by_role("combobox", name="Calibration sample")
    sample_box.click()
    page.keyboard.type("sample-1")
    page.keyboard.press("Enter")
    idle(page)
    expect(sample_box).to_have_value("sample-1.jsonl")
    slider = page.get_by_role("slider", name="Confidence")
    expect(slider).to_have_attribute("aria-valuetext", "0.95")  # the default
    slider.focus()
    page.keyboard.press("ArrowRight")  # 0.95 -> 0.99
    expect(slider).to_have_attribute("aria-valuetext", "0.99")
    idle(page)
    expect(page).to_have_url(re.compile(r"[?&]sample=sample-1\.jsonl(&|$)"))
    expect(page).to_have_url(re.compile(r"[?&]confidence=0\.99(&|$)"))

    def still_set() -> None:
        expect(page.get_by_role("radio", name="ExpertQA sample (real expert labels)")).to_be_checked(timeout=30_000)
        expect(page.get_by_role("radio", name="test")).to_be_checked(timeout=30_000)
        expect(page.get_by_text(counts, exact=True)).to_be_visible(timeout=30_000)
        expect(page.get_by_role("combobox", name="Item")).to_have_value(chosen, timeout=30_000)
        expect(page.get_by_role("combobox", name="Calibration sample")).to_have_value("sample-1.jsonl")
        expect(page.get_by_role("slider", name="Confidence")).to_have_attribute("aria-valuetext", "0.99")

    nav = page.get_by_test_id("stSidebarNav")
    nav.get_by_text("Failures").click()
    expect(page.get_by_role("heading", name="Failed answers")).to_be_visible(timeout=20_000)
    nav.get_by_text("Judge calibration").click()
    still_set()
    page.reload()
    still_set()
    app.stop()
    app.start()
    page.reload()
    still_set()
    page.close()


pytestmark = pytest.mark.browser
