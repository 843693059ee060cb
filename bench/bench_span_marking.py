#!/usr/bin/env python3
"""Benchmark marking unsupported words (issue #34): the core work per marker and per save, span
agreement at the issue's scale, and a mark saved in a real browser.

    python bench/bench_span_marking.py [--labels 100000] [--marks 5] [--no-browser]

* marker data: ``span_marks.browser_data`` (words, UTF-16 offsets) and ``span_marks.received``
  (back to code points, snapped) for a sentence of 4,000 characters (the longest a row offers for
  marking) with an emoji every 40 characters;
* span agreement: ``span_agreement`` over ``--labels`` labels with marked spans (20 reviewers, two
  labels per item, spans of random words);
* in Chromium (Debian's, headless, Playwright) on the test page that hosts the marker
  (tests/data/span_marking/host.py): Right then Enter, timed from the key press until the page says
  the new span is saved (the label record is on disk), ``--marks`` times after one unmeasured mark.
  Target: median under 250 ms, as the review page's label keys.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from citecheck.labelling import dataset, labels, marked_spans  # noqa: E402
from citecheck.labelling.items import Item  # noqa: E402
from citecheck.labelling.span_agreement import span_agreement  # noqa: E402
from citecheck.review import span_marks  # noqa: E402

DATA = ROOT / "tests" / "data" / "span_marking"


def per_call_ms(fn, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) * 1000 / repeat


def bench_marker_data() -> None:
    words = ["fee", "\U0001F600", "Cafe\u0301", "2027.", "(refund)", "days"]
    text = ""
    while len(text) < 4_000:
        text += random.choice(words) + " "
    text = text[:4_000]
    item = Item("a-1", 0, 0, "c", "f")
    sentence = (0, len(text))
    spans = marked_spans.normalise(random.sample(marked_spans.words(text), 20))
    shown = span_marks.browser_data(text, sentence, item, spans)
    sent = {"token": shown["token"], "spans": shown["spans"]}
    assert span_marks.received(sent, item, text, sentence) == spans
    print(f"marker data for a 4,000-character sentence: {per_call_ms(lambda: span_marks.browser_data(text, sentence, item, spans), 50):.2f} ms; "
          f"spans received back: {per_call_ms(lambda: span_marks.received(sent, item, text, sentence), 50):.2f} ms")


def bench_agreement(count: int) -> None:
    rng = random.Random(34)
    reviewers = [f"r{n:02d}" for n in range(20)]
    made = []
    for n in range(count // 2):
        pair = rng.sample(reviewers, 2)
        for who in pair:
            start = rng.randrange(0, 200)
            spans = marked_spans.normalise([(start, start + rng.randrange(3, 30)), (start + 40, start + 50)])
            made.append(labels.Label(1, f"a-{n}#s0#c0", f"a-{n}", 0, 0, "c", "f", "partial", "", who, "t", "0",
                                     spans=spans))
    start = time.perf_counter()
    result = span_agreement(made)
    seconds = time.perf_counter() - start
    print(f"span agreement over {len(made):,} labels ({len(result.pairs)} pairs, {result.items:,} items): "
          f"{seconds * 1000:.0f} ms, pooled F1 {result.pooled.f1:.3f}")


@contextlib.contextmanager
def host(log: Path, target: Path, reviewer: str):
    """The marker's test page (tests/data/span_marking/host.py) served for ``reviewer``: its URL."""
    from appserver import free_port, healthy

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(DATA / "host.py"), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none", "--", str(log), str(target), reviewer],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        if not healthy(url):
            raise SystemExit("the span marker's page did not start within 60 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def bench_browser(marks: int) -> None:
    from playwright.sync_api import expect, sync_playwright
    from test_browser import launch

    log = DATA / "answers.jsonl"
    data = dataset.load([log])
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "labels.jsonl"
        labels.append(target, labels.make_label(data.items_by_answer[0][0], "not_supported", "ana"))
        with host(log, target, "ana") as url, sync_playwright() as pw:
            browser = launch(pw)
            page = browser.new_page(viewport={"width": 1100, "height": 700})
            page.goto(url, timeout=60_000)
            sentence = page.locator(".ccsm-text").first
            expect(sentence).to_be_visible(timeout=60_000)
            page.keyboard.press("m")
            ms = []
            for n in range(1, marks + 2):
                page.keyboard.press("ArrowRight")
                start = time.perf_counter()
                page.keyboard.press("Enter")
                expect(page.get_by_text(f"Saved {n} marked span(s)")).to_be_visible(timeout=30_000)
                if n > 1:
                    ms.append((time.perf_counter() - start) * 1000)
                page.keyboard.press("ArrowRight")  # leave a word between marks, so they stay apart
            browser.close()
    ms.sort()
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    print(f"a mark saved in Chromium (Enter until the page says it is on disk): median {statistics.median(ms):.0f} ms, "
          f"p95 {p95:.0f} ms, max {ms[-1]:.0f} ms (n = {len(ms)}); target median 250 ms: "
          f"{statistics.median(ms) / 250:.2f} of it")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--labels", type=int, default=100_000)
    parser.add_argument("--marks", type=int, default=5, choices=range(1, 6), help="at most 5 (the sentence has 12 words)")
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    random.seed(34)
    bench_marker_data()
    bench_agreement(args.labels)
    if not args.no_browser:
        bench_browser(args.marks)


if __name__ == "__main__":
    main()
