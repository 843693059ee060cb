#!/usr/bin/env python3
"""Benchmark how soon an answer appended to a log shows on an open page (issue #33: "the review
page shows a newly collected answer within 2 s").

    python bench/bench_follow.py [--rounds 5]

A server is started on a log written by ``citecheck.AnswerLog`` (as ``python3 dev.py run -- --log``
starts one), Chromium (Playwright, Debian's) opens Failures and then Review, and each round
appends one answer with ``AnswerLog.record`` and times, from the append returning to the page
showing the new count ("from N answer(s)"), how long the page took: a page looks every second
whether a log it shows has grown (``pages/_common._follow``).  Prints each time, the median and the
worst per page, against the 2 s target, and the load average before and after (the machine is
shared).  tests/test_follow_browser.py checks that the answers show; this measures how soon.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)

from appserver import running_app  # noqa: E402
from citecheck import AnswerLog  # noqa: E402
from test_browser import launch  # noqa: E402
from test_journeys_browser import idle, new_page  # noqa: E402

TARGET = 2.0


def record(log: AnswerLog, k: int) -> None:
    log.record(question=f"Question {k}?", answer_id=f"live-{k}", answer="Refunds take 5-7 business days [1].",
               chunks=[{"chunk_id": f"faq-{k}", "document_id": "faq", "source": "faq.md",
                        "text": "Refunds take 5-7 business days to arrive."}])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print("load average before:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        path = Path(tmp) / "live.jsonl"
        log = AnswerLog(path, model="claude-sonnet-4-5")
        record(log, 1)
        n = 1
        browser = launch(pw)
        with running_app(["--log", path, "--labels", Path(tmp) / "labels.jsonl"]) as url:
            page = new_page(browser)
            for name, address in (("failures", f"{url}/failures"), ("review", f"{url}/")):
                page.goto(address)
                idle(page)
                page.get_by_text(f"from {n} answer(s)").first.wait_for(timeout=30_000)
                times = []
                for _ in range(args.rounds):
                    time.sleep(1.5)  # (a quiet page first: the append lands anywhere in the poll's second)
                    started = time.monotonic()
                    n += 1
                    record(log, n)
                    page.get_by_text(f"from {n} answer(s)").first.wait_for(timeout=30_000)
                    times.append(time.monotonic() - started)
                print(f"{name}: " + ", ".join(f"{t:.2f}" for t in times)
                      + f" s; median {statistics.median(times):.2f} s, worst {max(times):.2f} s (target < {TARGET:.0f} s)")
        browser.close()
    print("load average after:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
