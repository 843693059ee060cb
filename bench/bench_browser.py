#!/usr/bin/env python3
"""Benchmark the review page's key presses in a real browser (issue 12).

    python bench/bench_browser.py [--answers 20000,100000] [--reference 1000] [--presses 30]
    python bench/bench_browser.py --answers "" --store DIR [--reference 1000]

For each log size, the app is started on a generated log (bench_check.generate, the same log as
the other benchmarks) with an empty labels file; Debian's Chromium, driven by Playwright, opens
the review page with a reviewer name in the address, and then:

* Next: ``N`` pressed, timed from the key press until the next answer's heading and its focused
  item are on the page;
* label-to-next: ``1`` pressed on the focused item, timed until the focus has moved on to the
  reviewer's next item (the label is saved before the page moves on).

Each is pressed ``--presses`` times after a few unmeasured presses; the figures are median, 95th
percentile and max in ms.  ``--reference`` (a small log, measured first in the same run) gives
the ratio of each median to the small log's: near 1 means the work per key press does not grow
with the size of the log.  Target: median under 250 ms and p95 under 400 ms for both.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

import bench_check  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
FOCUS = "() => { const f = document.querySelector('.cc-focus'); return f ? f.dataset.focus : ''; }"
HEADING = "() => { const h = document.querySelector('h3'); return h ? h.innerText : ''; }"
MOVED = """([heading, focus]) => {
  const h = document.querySelector('h3'), f = document.querySelector('.cc-focus');
  return !!h && !!f && h.innerText !== heading && f.dataset.focus !== focus && f.offsetParent !== null;
}"""
FOCUS_MOVED = """(focus) => {
  const f = document.querySelector('.cc-focus');
  return !!f && f.dataset.focus !== focus && f.offsetParent !== null;
}"""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(app_args: list[str], labels: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none",
         "--", *app_args, "--labels", str(labels), "--corpus", "", "--golden", ""],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    sys.exit("the app did not start within 120 s")


def timed(page, key: str, condition: str, arg) -> float:
    start = time.perf_counter()
    page.keyboard.press(key)
    page.wait_for_function(condition, arg=arg, polling="raf", timeout=60_000)
    return (time.perf_counter() - start) * 1000


def settle(page) -> None:
    """Wait until the app is idle (no run in progress), so each press starts from a quiet page."""
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                           polling=50, timeout=60_000)
    time.sleep(0.15)


def log_args(answers: int) -> tuple[list[str], str]:
    """The app's arguments for a generated log of ``answers`` answers, and the address's query."""
    log = ROOT / "bench" / "out" / f"synthetic-v2-{answers}.jsonl"
    if not log.exists():
        bench_check.generate(log, answers)
    first_id = log.open(encoding="utf-8").readline().split('"answer_id": "', 1)[1].split('"', 1)[0]
    return ["--log", str(log)], f"&answer={first_id}"


def measure(browser, app_args: list[str], query: str, presses: int, warmup: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_app(app_args, Path(tmp) / "labels.jsonl")
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto(f"{url}/review?reviewer=bench{query}", timeout=120_000)
            page.get_by_text("bench: labelled", exact=False).first.wait_for(timeout=600_000)
            page.locator("h3").first.click()  # the keys go to the page, not to a text box
            settle(page)
            out: dict[str, list[float]] = {"Next": [], "label-to-next": []}
            for n in range(warmup + presses):
                heading, focus = page.evaluate(HEADING), page.evaluate(FOCUS)
                ms = timed(page, "n", MOVED, [heading, focus])
                settle(page)
                if n >= warmup:
                    out["Next"].append(ms)
                focus = page.evaluate(FOCUS)
                ms = timed(page, "1", FOCUS_MOVED, focus)
                settle(page)
                if n >= warmup:
                    out["label-to-next"].append(ms)
            page.close()
            return out
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def store_answers(store: Path) -> int:
    """How many answers the store holds (for the printed table)."""
    from citecheck.storage.checked.folder import Store
    from citecheck.storage.checked.query import StoreQuery

    query = StoreQuery(Store(store))
    try:
        return query.answers_count()
    finally:
        query.close()


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", default="20000,100000", help="comma-separated log sizes")
    parser.add_argument("--reference", type=int, default=1000, help="small log measured first (0: none)")
    parser.add_argument("--presses", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--store", help="also measure the app started on this checked store")
    args = parser.parse_args()
    sizes = [int(s) for s in args.answers.split(",") if s.strip()]
    from playwright.sync_api import sync_playwright
    from test_browser import launch

    reference: dict[str, float] = {}
    print(f"{'answers':>8} {'action':<14} {'median':>7} {'p95':>7} {'max':>7} {'ratio':>6}  (ms; ratio: median "
          "over the reference log's)")
    with sync_playwright() as pw:
        browser = launch(pw)
        runs = [(str(n), *log_args(n)) for n in ([args.reference] if args.reference else []) + sizes]
        if args.store:
            runs.append((f"store:{store_answers(Path(args.store))}", ["--store", args.store], ""))
        for answers, app_args, query in runs:
            figures = measure(browser, app_args, query, args.presses, args.warmup)
            for action, values in figures.items():
                median = statistics.median(values)
                if answers == str(args.reference) and not reference.get(action):
                    reference[action] = median
                    ratio = ""
                else:
                    ratio = f"{median / reference[action]:.2f}" if reference.get(action) else ""
                print(f"{answers:>8} {action:<14} {median:>7.0f} {p95(values):>7.0f} {max(values):>7.0f} "
                      f"{ratio:>6}", flush=True)
        browser.close()
    print("target: median < 250 ms and p95 < 400 ms for Next and label-to-next")


if __name__ == "__main__":
    main()
