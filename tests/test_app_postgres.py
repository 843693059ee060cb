"""The app on a PostgreSQL store: labelling through AppTest, the password masked everywhere, the
store never chosen by the browser, and two real app servers sharing one database."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import streamlit as st
from appserver import healthy
from citecheck.labelling import labels
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG
from streamlit.testing.v1 import AppTest
from test_browser import CHROMIUM, free_port, launch

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PAGES = ["pages/review.py", "pages/failures.py", "pages/calibration.py", "pages/data.py"]
SHOWN = ("markdown", "caption", "error", "warning", "info", "success", "table", "dataframe", "text", "html",
         "code", "metric", "subheader", "header", "exception")


@pytest.fixture
def db(pg_url, monkeypatch):
    st.cache_resource.clear()
    st.cache_data.clear()
    monkeypatch.setenv("CITECHECK_LOGS", str(DEFAULT_LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(DEFAULT_CORPUS))
    monkeypatch.setenv("CITECHECK_LABELS", pg_url)
    monkeypatch.setenv("CITECHECK_VERDICTS", pg_url)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return pg_url


def app(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def everything(at: AppTest) -> str:
    """Every element the page shows, as its protobuf text (values included)."""
    return "\n".join(str(el.proto) for kind in SHOWN for el in at.get(kind)) + \
        "\n".join(str(el.proto) for el in at.sidebar)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_the_database_and_never_shows_the_password(db, pg_cluster, page):
    at = app()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    assert pg_cluster.password not in everything(at)


def test_label_flow_on_the_database(db, pg_cluster):
    at = app(answer="a-001")
    at.sidebar.text_input[0].input("ana").run()
    at.button(key="key-supported").click().run()
    assert not at.exception
    records, errors = labels.read(db)
    assert errors == [] and [(r.answer_id, r.sentence, r.label, r.reviewer) for r in records] == \
        [("a-001", 0, "supported", "ana")]
    fresh = app()  # another session (or server) on the same database
    fresh.sidebar.text_input[0].input("ana").run()
    fresh.button(key="resume").click().run()
    page = "\n".join(str(h.proto.body) for h in fresh.get("html"))
    assert '<h3>Answer <bdi class="cc-field">a-001</bdi>' in page and "ana: labelled 1 of" in page
    data = app().switch_page("pages/data.py").run()
    shown = everything(data)
    assert db.replace(pg_cluster.password, "***") in shown and pg_cluster.password not in shown


def test_the_browser_cannot_choose_the_store(db, pg_cluster, tmp_path):
    elsewhere = pg_cluster.create_database()
    at = app(answer="a-001", labels=elsewhere, verdicts=elsewhere, CITECHECK_LABELS=elsewhere)
    at.sidebar.text_input[0].input("ana").run()
    for box in at.sidebar.text_input[1:]:
        box.input(elsewhere).run()  # typed into every other box the app has
    at.button(key="key-supported").click().run()
    assert not at.exception
    assert len(labels.read(db)[0]) == 1 and labels.read(elsewhere)[0] == []
    assert pg_cluster.password not in everything(at)


def test_an_unreachable_database_is_named_without_its_password(db, pg_cluster, monkeypatch):
    closed = db.replace(f":{pg_cluster.port}/", f":{free_port()}/")
    monkeypatch.setenv("CITECHECK_LABELS", closed)
    at = app()
    assert not at.exception
    shown = everything(at)
    assert "cannot use postgresql://citecheck:***@127.0.0.1" in shown and pg_cluster.password not in shown


# --- two real app servers, one database -------------------------------------------------------------


def serve(port: int, url: str, tmp_path: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), CITECHECK_LABELS=url, CITECHECK_VERDICTS=url,
               CITECHECK_LOGS=str(DEFAULT_LOG), CITECHECK_CORPUS=str(DEFAULT_CORPUS))
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", APP, "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_healthy(port: int) -> None:
    if not healthy(f"http://127.0.0.1:{port}"):
        pytest.fail(f"the app on port {port} did not start within 60 s")


@pytest.mark.browser
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)")
def test_two_app_servers_share_one_database(pg_url, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    ports = [free_port(), free_port()]
    servers = [serve(port, pg_url, tmp_path) for port in ports]
    try:
        for port in ports:
            wait_healthy(port)
        with sync_playwright() as pw:
            browser = launch(pw)
            one, two = browser.new_page(), browser.new_page()
            for page, port in ((one, ports[0]), (two, ports[1])):
                page.goto(f"http://127.0.0.1:{port}/?answer=a-033", timeout=60_000)
                expect(page.get_by_text("Answer a-033")).to_be_visible(timeout=60_000)
                name = page.get_by_role("textbox", name="Reviewer name")
                name.fill("ana")
                name.press("Enter")
                expect(page.get_by_text("ana: labelled 0 of")).to_be_visible(timeout=20_000)
            one.locator("h3").first.click()
            one.keyboard.press("1")  # label on server one
            expect(one.get_by_text("ana: labelled 1 of")).to_be_visible(timeout=20_000)
            two.get_by_role("button", name="Resume").click()  # any rerun on server two
            expect(two.get_by_text("ana: labelled 1 of")).to_be_visible(timeout=20_000)
            browser.close()
    finally:
        for proc in servers:
            proc.terminate()
            proc.wait(timeout=20)
    assert [(r.answer_id, r.label) for r in labels.read(pg_url)[0]] == [("a-033", "supported")]
