"""Issue #11, in a real browser: every value from a log or a label shows as the text it is (no
Markdown, LaTeX or HTML formatting), and a link built from an id opens that id."""

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from citecheck.web.settings import DEFAULT_LOG
from test_browser import CHROMIUM, free_port, launch

ROOT = Path(__file__).resolve().parent.parent
MARKUP = "**b** _i_ [l](http://x) $x^2$ <i>h</i> :smile:"
ODD_ID = "q&a=1 #/%é"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


@pytest.fixture
def server(tmp_path):
    lines = DEFAULT_LOG.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[1])
    first.update(answer_id=ODD_ID, model="model " + MARKUP, prompt_version="pv " + MARKUP,
                 timestamp="2026-01-01T00:00:00Z")
    other = json.loads(lines[2])
    other["answer_id"] = "q"  # the id a badly encoded link to "q&a=1 ..." would open
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(first) + "\n" + json.dumps(other) + "\n", encoding="utf-8")
    labels = tmp_path / "labels.jsonl"
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--", "--log", str(log), "--labels", str(labels)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("the app did not start within 60 s")
    yield url
    proc.terminate()
    proc.wait(timeout=20)


def test_log_values_show_as_literal_text_and_id_links_round_trip(server):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page()
        page.goto(f"{server}/review?answer={quote(ODD_ID, safe='')}", timeout=60_000)
        heading = page.locator("h3", has_text="Answer ")
        expect(heading.first).to_be_visible(timeout=60_000)
        assert heading.first.inner_text().startswith(f"Answer {ODD_ID}")
        caption = page.locator(".cc-meta", has_text="model ").first
        expect(caption).to_be_visible()
        assert caption.inner_text().replace("\u2068", "").replace("\u2069", "") == \
            f"model {MARKUP} \u00b7 pv {MARKUP} \u00b7 2026-01-01T00:00:00Z"
        main = page.get_by_test_id("stMain")
        assert main.locator("strong, em, .katex, a[href='http://x']").filter(has_text="b").count() == 0
        assert main.locator("i", has_text="h").count() == 0
        browser.close()
