"""A reviewer marks two unsupported spans with keys only, in Chromium, and the calibration export
holds exactly those offsets (code points of the answer, though the sentence starts with a ZWJ emoji
sequence and a combining accent, which the browser counts in UTF-16 units).

The marker is hosted by a test-only page (tests/data/span_marking/host.py) that draws it as the
review page does under an item's label buttons (``pages/_span_marking.span_marking``)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from appserver import free_port, healthy
from citecheck.labelling import dataset, labels, marked_spans
from helpers import run_cli
from test_browser import CHROMIUM, launch

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "span_marking"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


@contextlib.contextmanager
def host(log: Path, target: Path, reviewer: str):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(DATA / "host.py"), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none", "--", str(log), str(target), reviewer],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        if not healthy(url):
            pytest.fail("the span marker's page did not start within 60 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_two_spans_marked_with_keys_only_are_exported_as_answer_offsets(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    log, target = DATA / "answers.jsonl", tmp_path / "labels.jsonl"
    data = dataset.load([log])
    result, item = data.results[0], data.items_by_answer[0][0]
    s = result.sentences[0]
    words = marked_spans.words(result.answer.answer, s.start, s.end)
    assert [result.answer.answer[a:b] for a, b in words[:7]] == [
        "\U0001F469\u200d\U0001F4BB", "Cafe\u0301", "staff", "You", "get", "18", "days"]
    labels.append(target, labels.make_label(item, "not_supported", "ana"))
    expected = [[words[1][0], words[2][1]], [words[5][0], words[6][1]]]  # "Café staff", "18 days"

    with host(log, target, "ana") as url, sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 1100, "height": 700})
        page.goto(url, timeout=60_000)
        sentence = page.get_by_role("textbox", name="Sentence: mark the words the chunk does not support")
        expect(sentence).to_have_text(s.text, timeout=60_000)  # the text as text, not markup
        page.keyboard.press("m")  # keys only: M brings the keyboard to the marker
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
        browser.close()

    code, out, err = run_cli("labels", "export", target, "--log", log)
    assert code == 0, err
    row = json.loads(out)
    assert row["labels"]["ana"]["spans"] == expected
    assert row["labels"]["ana"]["marked"] == ["Cafe\u0301 staff", "18 days"]
    stored = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert [r.get("spans") for r in stored] == [None, expected[:1], expected]  # one new record per change


def test_a_mouse_selection_is_snapped_to_whole_words_and_the_sentence_is_text(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    log, target = DATA / "answers.jsonl", tmp_path / "labels.jsonl"
    data = dataset.load([log])
    answer, item = data.results[0].answer.answer, data.items_by_answer[0][0]
    labels.append(target, labels.make_label(item, "partial", "ben"))
    markup = data.results[1].sentences[0].text  # '<img src=x onerror="window.__pwned=1"> <b>Bold</b> $x$ *y* You ...'
    labels.append(target, labels.make_label(data.items_by_answer[1][0], "partial", "ben"))
    with host(log, target, "ben") as url, sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 1100, "height": 700})
        page.goto(url, timeout=60_000)
        expect(page.locator(".ccsm-text").nth(1)).to_have_text(markup, timeout=60_000)  # shown as text
        assert page.locator(".ccsm img, .ccsm b").count() == 0 and page.evaluate("() => window.__pwned") is None
        pieces = page.locator(".ccsm-text span")
        earned, leave = (pieces.filter(has_text=word).first.bounding_box(timeout=60_000) for word in ("earned", "leave"))
        assert earned and leave
        middle = earned["y"] + earned["height"] / 2
        page.mouse.move(earned["x"] + earned["width"] * 0.6, middle)  # from inside "earned"...
        page.mouse.down()
        page.mouse.move(leave["x"] + leave["width"] * 0.3, middle, steps=5)  # ...to inside "leave"
        page.mouse.up()
        page.get_by_role("button", name="Mark selected words").first.click()
        expect(page.get_by_text("Saved 1 marked span(s) for sentence 1 of a-001.")).to_be_visible(timeout=30_000)
        browser.close()
    spans = labels.read(target)[0][-1].spans
    assert [answer[a:b] for a, b in spans] == ["earned leave"]
