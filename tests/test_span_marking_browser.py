"""Marking the unsupported words on the review page, in a real browser (Debian's headless Chromium,
Playwright): a reviewer labels an item Not supported with its key, marks two unsupported spans with
keys only, and ``citecheck labels export`` of the labels file the app wrote holds exactly those
offsets (code points of the answer, though the sentence starts with a ZWJ emoji sequence and a
combining accent, which the browser counts in UTF-16 units).  A sentence holding markup is shown
as text, and a mouse selection is snapped to whole words.

The log (tests/data/span_marking/answers.jsonl) holds the two answers these tests need: a-001 (the
emoji sentence) and a-002 (the markup)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from appserver import running_app
from citecheck.labelling import dataset, labels, marked_spans
from citecheck.storage import streams
from helpers import run_cli
from test_browser import CHROMIUM, launch
from test_review_browser import progress
from test_team_browser import idle, open_as, press

LOG = Path(__file__).parent / "data" / "span_marking" / "answers.jsonl"
SENTENCE = "Sentence: mark the words the chunk does not support"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    store = tmp_path_factory.mktemp("spans") / "labels.jsonl"
    with running_app(["--log", LOG, "--labels", store, "--corpus", ""]) as url:
        yield url, store


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


def label_first_item(page, key: str, reviewer: str) -> None:
    """The focused item (the answer's first) labelled with ``key``; the focus moves on, K brings it back."""
    progress(page, "focused item 1 of")
    press(page, key)
    progress(page, f"{reviewer}: labelled 1 of")
    progress(page, "focused item 2 of")
    press(page, "k")
    progress(page, "focused item 1 of")


def test_two_spans_marked_with_keys_only_are_exported_as_answer_offsets(app, browser):
    from playwright.sync_api import expect

    url, store = app
    data = dataset.load([LOG])
    result, item = data.results[0], data.items_by_answer[0][0]
    s = result.sentences[0]
    words = marked_spans.words(result.answer.answer, s.start, s.end)
    assert [result.answer.answer[a:b] for a, b in words[:7]] == [
        "\U0001F469\u200d\U0001F4BB", "Cafe\u0301", "staff", "You", "get", "18", "days"]
    expected = [[words[1][0], words[2][1]], [words[5][0], words[6][1]]]  # "Café staff", "18 days"

    page = open_as(browser, f"{url}/?answer=a-001&reviewer=ana")
    sentence = page.get_by_role("textbox", name=SENTENCE)
    expect(sentence).to_have_count(0)  # nothing to mark before a label that allows it
    label_first_item(page, "3", "ana")  # Not supported
    expect(sentence).to_have_text(s.text, timeout=20_000)  # the marker under the item's buttons, the text as text
    press(page, "m")  # keys only: M brings the keyboard to the focused item's marker
    expect(sentence).to_be_focused()
    for key in ["ArrowRight", "Shift+ArrowRight", "Enter"]:  # "Café staff"
        page.keyboard.press(key)
    expect(page.get_by_text("Saved 1 marked span(s) for sentence 1 of a-001.")).to_be_visible(timeout=30_000)
    expect(sentence).to_be_focused()  # the save's rerun keeps the reviewer where they were
    for key in ["ArrowRight", "ArrowRight", "ArrowRight", "Shift+ArrowRight", "Space"]:  # "18 days"
        page.keyboard.press(key)
    expect(page.get_by_text("Saved 2 marked span(s) for sentence 1 of a-001.")).to_be_visible(timeout=30_000)
    expect(page.locator(".ccsm-status")).to_have_text(
        "2 marked as not supported: \u201cCafe\u0301 staff\u201d, \u201c18 days\u201d")
    page.context.close()

    code, out, err = run_cli("labels", "export", store, "--log", LOG)
    assert code == 0, err
    rows = {row["item"]: row for row in map(json.loads, out.splitlines())}
    assert rows[item.key]["labels"]["ana"]["label"] == "not_supported"
    assert rows[item.key]["labels"]["ana"]["spans"] == expected
    assert rows[item.key]["labels"]["ana"]["marked"] == ["Cafe\u0301 staff", "18 days"]
    stored = [r for r in streams.read_all(store, labels.STREAM, lambda v: v)[0] if r.get("reviewer") == "ana"]
    assert [(r["item"], r["label"], r.get("spans")) for r in stored] == [  # one new record per change
        (item.key, "not_supported", None), (item.key, "not_supported", expected[:1]),
        (item.key, "not_supported", expected)]


def test_a_sentence_with_markup_is_text_and_a_mouse_selection_is_snapped_to_words(app, browser):
    from playwright.sync_api import expect

    url, store = app
    data = dataset.load([LOG])
    answer, item = data.results[1].answer.answer, data.items_by_answer[1][0]
    markup = data.results[1].sentences[0].text  # '<img src=x onerror="window.__pwned=1"> <b>Bold</b> $x$ *y* You ...'
    assert "<img" in markup and "<b>" in markup
    page = open_as(browser, f"{url}/?answer=a-002&reviewer=ben")
    label_first_item(page, "2", "ben")  # Partially supported
    text = page.locator(".ccsm-text")
    expect(text).to_have_text(markup, timeout=20_000)  # shown as text
    assert page.locator(".ccsm img, .ccsm b").count() == 0 and page.evaluate("() => window.__pwned") is None
    pieces = text.locator("span")
    idle(page)
    pieces.filter(has_text="earned").first.scroll_into_view_if_needed()  # (the mouse works in the viewport)
    earned, leave = (pieces.filter(has_text=word).first.bounding_box(timeout=20_000) for word in ("earned", "leave"))
    assert earned and leave
    middle = earned["y"] + earned["height"] / 2
    page.mouse.move(earned["x"] + earned["width"] * 0.6, middle)  # from inside "earned"...
    page.mouse.down()
    page.mouse.move(leave["x"] + leave["width"] * 0.3, middle, steps=5)  # ...to inside "leave"
    page.mouse.up()
    page.get_by_role("button", name="Mark selected words").click()
    expect(page.get_by_text("Saved 1 marked span(s) for sentence 1 of a-002.")).to_be_visible(timeout=30_000)
    page.context.close()
    mine = [r for r in labels.read(store)[0] if r.reviewer == "ben"]
    assert [(r.item, r.label) for r in mine] == [(item.key, "partial")] * 2
    assert [answer[a:b] for a, b in mine[-1].spans] == ["earned leave"]
