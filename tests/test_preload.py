"""The scripts of the first views' elements, named in the page the server sends (core/citecheck/web/preload.py,
pages/_server.py; issue #36): found from the module files themselves, and in real Chromium, a fresh
browser's first view of Review and of Failures fetches no script that the page did not name."""

from __future__ import annotations

import os
import re
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import streamlit
from appserver import free_port
from citecheck.web import preload, serve
from test_server_warm_up import ROOT, _server_module

JS = Path(streamlit.__file__).parent / "static" / "static" / "js"


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_an_elements_closure_follows_its_static_imports_only(tmp_path):
    js = _write(tmp_path, {
        "Radio.AbC1.js": 'import{a}from"./useRadio.X_1.js";import"./side.Q.js";const l=()=>import("./Later.Z.js");',
        "useRadio.X_1.js": 'import{b}from"./shared.S.js";export const a=1;',
        "side.Q.js": "", "shared.S.js": 'import{a}from"./useRadio.X_1.js";', "Later.Z.js": "",
        "Button.B1.js": "", "Button.B2.js": "",  # (two modules of one name: neither is guessed)
    })
    assert preload.closure(js, ["Radio"]) == ["Radio.AbC1.js", "useRadio.X_1.js", "side.Q.js", "shared.S.js"]
    assert preload.module_of(js, "Button") is None and preload.module_of(js, "Nothing") is None
    assert preload.module_of(js, "../Radio") is None
    assert preload.closure(js, ["Button", "Nothing"]) == []


def test_the_page_names_each_module_once_in_its_head():
    page = '<html><head><link rel="modulepreload" crossorigin href="./static/js/a.1.js">\n</head><body></body></html>'
    out = preload.with_preloads(page, ["a.1.js", "b.2.js", "b.2.js"])
    assert out.count('href="./static/js/b.2.js"') == 1 and out.count('href="./static/js/a.1.js"') == 1
    assert out.index("b.2.js") < out.index("</head>")
    assert preload.with_preloads(out, ["a.1.js", "b.2.js"]) == out
    assert preload.with_preloads("no head here", ["b.2.js"]) == "no head here"


def test_every_element_the_server_preloads_is_found_in_the_streamlit_installed():
    """If a Streamlit upgrade renames an element's module, this says which (the page would work,
    only fetching it later, as before)."""
    elements = _server_module().PRELOADED_ELEMENTS
    assert {e: preload.module_of(JS, e) is not None for e in elements} == {e: True for e in elements}
    found = preload.closure(JS, elements)
    assert len(found) > len(elements) and all((JS / name).is_file() for name in found)


def _named(page: str) -> set[str]:
    return set(re.findall(r'(?:src|href)="\./static/js/([^"]+\.js)"', page))


@pytest.mark.browser
@pytest.mark.skipif(not os.path.exists("/usr/bin/chromium"), reason="needs Debian's chromium (.ci/run installs it)")
def test_a_fresh_browsers_first_views_fetch_only_scripts_the_page_named_and_nothing_elsewhere(tmp_path):
    """Served as ``citecheck app`` serves it: Review (at the root) and Failures, each in a new
    browser context (an empty cache), fetch no script that the page's head did not name (no
    element's code waits for the script run to ask for it), and nothing from another host (the
    tab's icon, a page's material icon, was fetched from fonts.gstatic.com: a reviewer's browser
    told Google of every page it opened, and offline it waited for a name that did not resolve)."""
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
                page = urllib.request.urlopen(f"{url}/", timeout=5).read().decode("utf-8")
                break
            except OSError:
                assert proc.poll() is None and time.time() < deadline
                time.sleep(0.2)
        named = _named(page)
        assert len(named) > len(_named((JS.parent.parent / "index.html").read_text(encoding="utf-8"))) + 20
        with sync_playwright() as pw:
            browser = launch(pw)
            for path, mark in (("", ".cc-focus"), ("failures", '[data-testid="stMetric"]')):
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                tab = context.new_page()
                fetched: list[str] = []
                elsewhere: list[str] = []
                tab.on("request", lambda r: fetched.append(r.url) if r.resource_type == "script" else None)
                tab.on("request", lambda r: None if r.url.startswith((url, "data:", "blob:", "about:"))
                       else elsewhere.append(r.url))
                tab.goto(f"{url}/{path}?reviewer=ana", timeout=60_000)
                tab.wait_for_selector(mark, timeout=60_000)
                tab.wait_for_load_state("networkidle", timeout=30_000)
                scripts = {u.split("?")[0].rsplit("/", 1)[-1] for u in fetched if "/static/js/" in u}
                assert scripts and scripts <= named, (path, sorted(scripts - named))
                assert elsewhere == [], path
                context.close()
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            tab = context.new_page()
            elsewhere = []
            tab.on("request", lambda r: None if r.url.startswith((url, "data:", "blob:", "about:"))
                   else elsewhere.append(r.url))
            for path in ("disagreements", "team", "assign", "calibration", "data"):  # (each with its own icon)
                tab.goto(f"{url}/{path}?reviewer=ana", timeout=60_000)
                tab.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=60_000)
                tab.wait_for_load_state("networkidle", timeout=30_000)
            assert elsewhere == []
            context.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
