#!/usr/bin/env python3
"""Benchmark the Disagreements page's keys in a real browser (issue #31): a lead deciding
disagreements one after another with keys 1-4, and moving with J.

    python bench/bench_adjudication_keys.py [--presses 20]

On a freshly started server over the bundled sample (``--overlap 2``), two reviewers disagree on
every cited item (57).  Debian's Chromium, driven by Playwright at 1280 x 800, opens the page; then

* decide: a label key pressed, timed from the key press until the page says one fewer remains
  (the adjudication is on disk before the page moves on);
* J: timed from the key press until the focus marker names the next disagreement.

Each is pressed ``--presses`` times after two unmeasured presses; the figures are median, 95th
percentile and max in ms.  Target (as the review page's keys): median under 250 ms, p95 under 400 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from appserver import running_app  # noqa: E402
from citecheck.checking.files import check_options  # noqa: E402
from citecheck.labelling import dataset  # noqa: E402
from citecheck.labelling import labels as label_store  # noqa: E402
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG  # noqa: E402


def figures(ms: list[float]) -> str:
    ms = sorted(ms)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return f"median {statistics.median(ms):6.0f} ms, p95 {p95:6.0f} ms, max {ms[-1]:6.0f} ms (n = {len(ms)})"


def main() -> None:
    from playwright.sync_api import expect, sync_playwright

    parser = argparse.ArgumentParser()
    parser.add_argument("--presses", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        labels = Path(tmp) / "labels.jsonl"
        cited = [i for i in dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS)).all_items if i.citation is not None]
        for item in cited:
            label_store.append(labels, label_store.make_label(item, "supported", "ana"))
            label_store.append(labels, label_store.make_label(item, "not_supported", "ben"))
        total = len(cited)
        with running_app(["--labels", str(labels), "--verdicts", str(Path(tmp) / "v.jsonl"), "--overlap", "2"]) as url, \
                sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            start = time.perf_counter()
            page.goto(f"{url}/disagreements?reviewer=lee", timeout=60_000)
            expect(page.get_by_text(f"{total} of {total} disagreement(s) remain", exact=False)).to_be_visible(
                timeout=60_000)
            print(f"first view on a fresh server: {1000 * (time.perf_counter() - start):.0f} ms")
            page.get_by_text("focused disagreement", exact=False).first.click()
            decide, move = [], []
            remain = total
            for n in range(args.presses + 2):
                t = time.perf_counter()
                page.keyboard.press("1")
                remain -= 1
                expect(page.get_by_text(f"{remain} of {total} disagreement(s) remain", exact=False)).to_be_visible(
                    timeout=20_000)
                if n >= 2:
                    decide.append(1000 * (time.perf_counter() - t))
            print(f"decide (1) to one fewer remaining: {figures(decide)}", flush=True)
            here = int(page.locator(".cc-focus").last.inner_text().split("disagreement ")[1].split(" of")[0])
            skipped = 0  # J presses that moved more than one place (a key served twice)
            for n in range(args.presses + 2):
                t = time.perf_counter()
                page.keyboard.press("j")
                expect(page.locator(".cc-focus").last).not_to_contain_text(f"disagreement {here} of", timeout=20_000)
                if n >= 2:
                    move.append(1000 * (time.perf_counter() - t))
                now = int(page.locator(".cc-focus").last.inner_text().split("disagreement ")[1].split(" of")[0])
                skipped += now != here + 1
                here = now
            browser.close()
        print(f"J to the next disagreement:       {figures(move)}; {skipped} press(es) moved more than one place")


if __name__ == "__main__":
    main()
