"""The app's launcher (pages/_server.py): Streamlit's server, and once it answers, the pages' imports
and what a first visit to Review or Failures makes, made in the background (issue #36)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from appserver import free_port
from citecheck.web import serve

ROOT = Path(__file__).resolve().parent.parent


def _server_module():
    spec = importlib.util.spec_from_file_location("citecheck_app_server", ROOT / "pages" / "_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_page_imports_are_every_top_level_import_of_the_pages():
    names = _server_module().page_imports()
    assert len(names) == len(set(names))
    for needed in ("streamlit", "citecheck.review.holds", "citecheck.web.failures_source", "pages._common"):
        assert needed in names
    assert "__future__" not in names


def test_a_fresh_server_answers_first_then_warms_the_pages_up(tmp_path):
    """The server is ready (its health check answers) before the warm-up has run; the warm-up then
    runs to its end without an error (it says so on the server's standard error), and the pages work."""
    port = free_port()
    command = serve.launch(["--labels", str(tmp_path / "labels.jsonl"), "--verdicts", str(tmp_path / "v.jsonl")],
                           port=port, address="127.0.0.1", environ={})
    log = tmp_path / "server.err"
    with log.open("wb") as err:
        proc = subprocess.Popen(command.argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.time() + 120
        while "pages ready" not in log.read_text(errors="replace"):
            assert proc.poll() is None, log.read_text(errors="replace")
            assert time.time() < deadline, log.read_text(errors="replace")
            time.sleep(0.2)
        assert urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10).status == 200
        said = log.read_text(errors="replace")
        assert "stopped" not in said and "missing ScriptRunContext" not in said
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_first_session_of_a_fresh_server_goes_to_the_router(monkeypatch):
    from streamlit.runtime.pages_manager import PagesManager

    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)  # (as in a process that served nothing)
    _server_module().router_first()
    assert PagesManager.uses_pages_directory is False
    assert PagesManager("app.py").uses_pages_directory is False  # (a session's manager keeps it)


def test_the_warm_up_imports_the_first_visit_pages_modules_first():
    server = _server_module()
    first, every = server.page_imports(pages=server.WARMED_PAGES), server.page_imports()
    assert len(first) == len(set(first)) and set(first) <= set(every)
    # Review's own modules (imported from pages/review.py through pages/_review_items.py) are among them
    for needed in ("pages._review_items", "pages._row_labels", "citecheck.review.holds", "citecheck.web.failures_source"):
        assert needed in first
    assert not any(name.startswith("citecheck.judging.comparison_view") for name in first)  # (Calibration's)


def test_the_review_page_over_a_log_imports_no_store_module():
    """Review's own imports (the warm-up's first step, and a first visitor's first run) bring neither
    the checked store's module nor pandas, pyarrow or DuckDB (about 0.4 s): a page over a log
    never needs them, and a store's answers come only with its module (web.answer_walk)."""
    code = ("import sys, importlib.util; sys.path.insert(0, sys.argv[1]); "
            "spec = importlib.util.spec_from_file_location('s', sys.argv[1] + '/pages/_server.py'); "
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); "
            "m._import(m.page_imports(pages=('review.py',))); "
            "print(sorted(n for n in ('pandas', 'pyarrow', 'duckdb', 'citecheck.storage.checked.answers') "
            "if n in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_warm_up_renders_the_guidelines_the_review_sidebar_shows(monkeypatch, tmp_path):
    """The sidebar's guidelines (Markdown to HTML, 0.1-0.2 s the first time in a process) are made
    by the warm-up's first_review, into the cache the page reads: the page renders nothing again."""
    from citecheck.labelling import guidelines

    from pages import _common as common
    from pages import _review_sidebar

    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    _review_sidebar.guidelines_html.clear()
    made = []
    real = guidelines.to_html
    monkeypatch.setattr(guidelines, "to_html", lambda text: made.append(text) or real(text))
    _server_module().first_review()
    rules, problem = common.guidelines()
    assert problem is None and made == [rules.text]
    assert _review_sidebar.guidelines_html(rules.text) == real(rules.text) and len(made) == 1


def test_the_failures_pages_first_view_imports_no_chart_library():
    """Failures' first view (its Reasons tab: tiles and the reasons table) draws no chart, so neither
    the page's imports nor its first run, in a clean interpreter, bring Altair (about 0.3 s, with its
    schema); a tab with a chart imports it when opened."""
    code = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/tests']; "
            "from streamlit.testing.v1 import AppTest; from helpers import open_tab; "
            "at = AppTest.from_file(sys.argv[1] + '/app.py', default_timeout=60).run(); "
            "at = at.switch_page('pages/failures.py').run(); assert not at.exception, at.exception; "
            "first = 'altair' in sys.modules; open_tab(at, 'By model'); assert not at.exception; "
            "print(first, 'altair' in sys.modules, len(at.get('vega_lite_chart')))")
    done = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, timeout=180,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False True 1"


def test_streamlits_repl_question_is_asked_at_the_warm_up_start_and_never_by_a_page(monkeypatch):
    """Streamlit asks once per process, at the first element, whether it runs in a REPL, through
    inspect.stack() (0.6 s of a fresh server's first page, the pages' modules imported): the warm-up
    asks it first, before any import, so a page's first element never does."""
    import streamlit as st
    from streamlit import delta_generator, env_util

    server = _server_module()
    asked = []
    monkeypatch.setattr(delta_generator, "_use_warning_has_been_displayed", False)  # (as in a fresh process)
    monkeypatch.setattr(env_util, "is_repl", lambda: asked.append("asked") or False)
    monkeypatch.setattr(server, "_running", lambda: True)
    monkeypatch.setattr(server, "_import", lambda names: asked.append("import"))
    for name in ("first_review", "first_failures", "first_chart"):
        monkeypatch.setattr(server, name, lambda: None)
    monkeypatch.setattr("citecheck.web.memory.settle", lambda now: None)
    server.warm()
    assert asked[0] == "asked" and asked.count("asked") == 1 and "import" in asked
    st.empty()  # an element after it asks nothing
    assert asked.count("asked") == 1


def test_the_warm_up_lets_go_of_the_gil_sooner_while_it_runs_and_not_after(monkeypatch):
    server = _server_module()
    seen = []
    monkeypatch.setattr(server, "_running", lambda: True)
    for name in ("first_review", "first_failures", "first_chart"):
        monkeypatch.setattr(server, name, lambda: seen.append(sys.getswitchinterval()))
    monkeypatch.setattr(server, "_import", lambda names: None)
    monkeypatch.setattr("citecheck.web.memory.settle", lambda now: None)
    before = sys.getswitchinterval()
    server.warm()
    assert seen == [server.WARM_SWITCH_INTERVAL] * 3 and server.WARM_SWITCH_INTERVAL < before
    assert sys.getswitchinterval() == before
    monkeypatch.setattr(server, "first_review", lambda: 1 / 0)  # (a warm-up that stops restores it too)
    server.warm()
    assert sys.getswitchinterval() == before
