"""What a reviewer's browser asks for, in real Chromium: every page of the app, served as
``citecheck app`` serves it, fetches nothing from another host.  The browser tab's icon (the open
page's material icon) was fetched from fonts.gstatic.com: a reviewer's browser told Google of every
page it opened, and offline it waited on a name that did not resolve.  app.py now gives the tab an
emoji, which the browser draws itself."""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request

import pytest
from appserver import free_port
from citecheck.web import serve
from test_server_warm_up import ROOT

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists("/usr/bin/chromium"), reason="needs Debian's chromium (.ci/run installs it)"),
]

# (each page, with its own icon; the script-run mark each waits for)
PAGES = ("", "failures", "disagreements", "team", "assign", "calibration", "data")


def test_no_page_fetches_anything_from_another_host(tmp_path):
    from playwright.sync_api import sync_playwright
    from test_browser import launch

    port = free_port()
    command = serve.launch(["--labels", str(tmp_path / "labels.jsonl"), "--verdicts", str(tmp_path / "v.jsonl")],
                           port=port, address="127.0.0.1", environ={})
    proc = subprocess.Popen(command.argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=5)
                break
            except OSError:
                assert proc.poll() is None and time.time() < deadline
                time.sleep(0.2)
        with sync_playwright() as pw:
            browser = launch(pw)
            context = browser.new_context(viewport={"width": 1280, "height": 900})  # (an empty cache)
            tab = context.new_page()
            asked: list[str] = []
            elsewhere: list[str] = []
            tab.on("request", lambda r: asked.append(r.url))
            tab.on("request", lambda r: None if r.url.startswith((url, "data:", "blob:", "about:"))
                   else elsewhere.append(r.url))
            for path in PAGES:
                tab.goto(f"{url}/{path}?reviewer=ana", timeout=60_000)
                tab.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=60_000)
                tab.wait_for_load_state("networkidle", timeout=30_000)
                assert elsewhere == [], path
            assert len(asked) > 50  # (the pages' own scripts and styles were watched too)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
