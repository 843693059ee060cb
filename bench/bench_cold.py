#!/usr/bin/env python3
"""Benchmark a freshly started server as a user meets it (issue #36, "Cold server").

    python bench/bench_cold.py [--store DIR] [--pages review,failures] [--rounds 3]

For each round and page, a new server is started as ``python3 dev.py run`` starts one (``python -m
citecheck app``, on the bundled sample data, or with ``--store DIR`` on a checked store), and the
clock starts when it reports ready (its health check answers).  Chromium (already running, through
Playwright) then opens the page in a new browser context, and the time until the page is fully
drawn is the first session's figure; a second context (a second reviewer's session on the same
server, a browser with an empty cache) opening the same page gives the second session's, and a
new tab of a browser that has had the app open (a new session, Streamlit's scripts cached) the
last.  "Fully drawn": the app's script run has
finished, no element is still a placeholder, every chart has drawn its canvas or SVG, and the page's
own mark is there (Review: the focused item; Failures: the headline figures).

``--floor`` also times, the same way and in the same run, a minimal Streamlit app served with the
same options (one heading, a metric and a caption): what Streamlit's own page costs this browser on
this machine before citecheck draws anything, the reference the figures above are read against.
Neither page's first view draws a chart (Failures opens on its reasons table); ``--chart-floor``
times the minimal page with one Altair bar chart as well, what a chart would add.

Targets: first session under 2 s on the sample and under 3 s on a 1,000,000-answer store, for
Review and for Failures; a second session under 1 s.  The figures are wall seconds on a shared
2-core machine: the load average is printed before and after, and each figure is the median of
``--rounds`` (each round a new server).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

# the page's own mark, once its run has finished
MARKS = {
    "review": "() => !!document.querySelector('.cc-focus')",
    "failures": "() => !!document.querySelector('[data-testid=\"stMetric\"]')",
    "floor": "() => !!document.querySelector('[data-testid=\"stMetric\"]')",
}
# the minimal app of --floor (with ?chart=1, --chart-floor's, one chart: Vega's code is loaded on first use)
FLOOR_APP = """import streamlit as st
st.set_page_config(page_title="floor", layout="wide")
st.title("A minimal page")
st.metric("answers", 48)
st.caption("Streamlit's own cost, nothing of citecheck's")
if st.query_params.get("chart"):
    import altair as alt
    import pandas as pd
    st.altair_chart(alt.Chart(pd.DataFrame({"x": ["a", "b"], "y": [1, 2]})).mark_bar().encode(x="x", y="y"))
"""
DRAWN = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  for (const c of document.querySelectorAll('[data-testid="stVegaLiteChart"], [data-testid="stArrowVegaLiteChart"]'))
    if (c.offsetParent !== null && !c.querySelector('canvas, svg')) return false;  // (charts in closed tabs wait)
  return true;
}"""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(settings: list[str], floor_app: Path | None = None) -> tuple[subprocess.Popen, str, float]:
    """A server as ``dev.py run`` starts it (or ``floor_app`` with the same Streamlit options);
    returns it, its URL and the seconds until it was ready."""
    port = free_port()
    began = time.perf_counter()
    if floor_app is None:
        argv = [sys.executable, "-m", "citecheck", "app", "--port", str(port), "--address", "127.0.0.1", *settings]
    else:
        from citecheck.web.serve import SERVER_OPTIONS

        argv = [sys.executable, "-m", "streamlit", "run", str(floor_app), *SERVER_OPTIONS,
                "--server.port", str(port), "--server.address", "127.0.0.1"]
    proc = subprocess.Popen(argv, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT / "core")),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 180
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                return proc, url, time.perf_counter() - began
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("the app did not start within 180 s")


def drawn(browser, url: str, page_name: str, context=None, floor: bool | str = False) -> float:
    """Seconds from opening ``page_name`` in a new tab of ``context`` (default: a new browser
    context, its cache empty, as a new user's browser) until it is fully drawn."""
    own = context is None
    if own:
        context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    began = time.perf_counter()
    if floor:
        page.goto(f"{url}/" + ("?chart=1" if floor == "chart" else ""), wait_until="commit", timeout=180_000)
    else:
        # (Review, the default page, is served at the root, the address its links and the browser
        # show; /review is sent on there, one more run: app.py)
        path = "" if page_name == "review" else page_name
        page.goto(f"{url}/{path}?reviewer=bench", wait_until="commit", timeout=180_000)
    # polled from here: the first request to a fresh server is handed to the router, and a
    # navigation drops a wait_for_function started before it
    check = f"() => ({MARKS['floor' if floor else page_name]})() && ({DRAWN})()"
    deadline = time.time() + 180
    while True:
        try:
            if page.evaluate(check):
                break
        except Exception:  # (the document was replaced while evaluating)
            pass
        if time.time() > deadline:
            sys.exit(f"{page_name} was not drawn within 180 s")
        time.sleep(0.02)
    seconds = time.perf_counter() - began
    page.close()
    if own:
        context.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", help="a checked store (default: the bundled sample data)")
    parser.add_argument("--pages", default="review,failures")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--floor", action="store_true",
                        help="also time a minimal Streamlit app the same way, alternating with citecheck's")
    parser.add_argument("--chart-floor", action="store_true",
                        help="also time the minimal app with one Altair chart (implies --floor)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright
    from test_browser import launch

    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    results: dict[tuple[str, str], list[float]] = {}
    with sync_playwright() as pw, tempfile.TemporaryDirectory() as tmp:
        browser = launch(pw)
        args.floor = args.floor or args.chart_floor
        apps = ("citecheck", "floor", "chart floor")[:3 if args.chart_floor else 2 if args.floor else 1]
        floor_app = Path(tmp) / "floor_app.py"
        floor_app.write_text(FLOOR_APP)
        for page_name in args.pages.split(","):
            for _ in range(args.rounds):
                for app in apps:  # (alternating, so both meet the same moments of a shared machine)
                    labels = Path(tmp) / "labels.jsonl"
                    settings = ["--labels", str(labels), "--verdicts", str(Path(tmp) / "verdicts.jsonl")]
                    if args.store:
                        settings += ["--store", args.store]
                    floor = {"floor": True, "chart floor": "chart"}.get(app, False)
                    proc, url, ready = start(settings, floor_app if floor else None)
                    try:
                        first = drawn(browser, url, page_name, floor=floor)
                        second = drawn(browser, url, page_name, floor=floor)
                        returning = browser.new_context(viewport={"width": 1440, "height": 900})
                        drawn(browser, url, page_name, returning, floor=floor)  # (fills this browser's cache)
                        tab = drawn(browser, url, page_name, returning, floor=floor)
                        returning.close()
                    finally:
                        proc.terminate()
                        proc.wait(timeout=30)
                        for name in ("labels.jsonl", "verdicts.jsonl"):
                            (Path(tmp) / name).unlink(missing_ok=True)
                        shutil.rmtree(Path(tmp) / "local_data", ignore_errors=True)
                    key = page_name if not floor else f"{page_name} {app}"
                    for what, value in (("ready", ready), ("first", first), ("second", second), ("tab", tab)):
                        results.setdefault((key, what), []).append(value)
                    print(f"  {key}: ready {ready:.2f} s, first session {first:.2f} s, second {second:.2f} s, "
                          f"a new tab of a browser that has the app open {tab:.2f} s", flush=True)
        browser.close()
    where = f"store {args.store}" if args.store else "the sample data"
    print(f"\n{where}: median of {args.rounds} fresh servers (seconds)")
    print(f"{'page':<16} {'ready':>7} {'first':>7} {'second':>7} {'tab':>7}   (tab: a new session in a browser "
          "whose cache has the app)")
    for page_name in args.pages.split(","):
        for key in (page_name, *(f"{page_name} {app}" for app in apps[1:])):
            row = [statistics.median(results[(key, w)]) for w in ("ready", "first", "second", "tab")]
            print(f"{key:<16} {row[0]:>7.2f} {row[1]:>7.2f} {row[2]:>7.2f} {row[3]:>7.2f}")
    if args.floor:
        print("(floor: a minimal Streamlit app, one heading, a metric and a caption: Streamlit's own cost in this "
              "browser; citecheck's page minus its floor is what citecheck adds; chart floor: the same with one chart)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print("targets: first under 2 s (sample) / 3 s (1,000,000-answer store); second under 1 s")


if __name__ == "__main__":
    main()
