"""The server of ``citecheck app`` and ``python3 dev.py run``: Streamlit's ``streamlit run``, plus a
warm-up.  Once the server answers, a background thread imports what the pages import and makes
what a first visit to Review or Failures would make (the answers checked or the store opened,
the labels read, the Failures figures, a first chart), into the caches every session shares.  A
fresh server's first visitor then finds them made, or being made (the caches make each value
once: a visitor who comes first waits for the same work, not for it twice).  Issue #36.

    python pages/_server.py run app.py [Streamlit options] -- [app settings]

Nothing here decides what a page shows: the warm-up calls the functions the pages call, with the
arguments they pass, and a failure is left for the page to say (it is only logged here).
"""

from __future__ import annotations

import ast
import importlib
import logging
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the folder holding app.py and pages/
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(ROOT)  # (run as a script: pages/ itself is no place to import from, the app's folder is)
WARMED_PAGES = ("review.py", "failures.py")  # the pages a first visitor opens (Review is the default)


def page_imports(root: Path = ROOT, pages: tuple[str, ...] | None = None) -> list[str]:
    """The modules the app's pages import at their top level, in order, each once; for ``from M
    import N``, ``M`` and ``M.N`` (N may be a module of M, or only a name in it).  ``pages``: only
    those of ``pages/`` (with app.py and the ``pages/_*.py`` modules they import)."""
    files = [root / "app.py", *sorted((root / "pages").glob("*.py"))]
    if pages is not None:
        files = [root / "app.py", *(root / "pages" / name for name in pages)]
        for file in files:  # (and the page modules they import, ``from pages import _review``)
            for name in _imports_of(file):
                if name.startswith("pages._") and "." not in name[6:]:
                    module = root / "pages" / f"{name[6:]}.py"
                    if module.is_file() and module not in files:
                        files.append(module)
    return list(dict.fromkeys(name for file in files for name in _imports_of(file)))


def _imports_of(file: Path) -> list[str]:
    found: list[str] = []
    for node in ast.parse(file.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
    return [n for n in found if n != "__future__"]


def _running() -> bool:
    from streamlit.runtime import Runtime
    from streamlit.runtime.runtime import RuntimeState

    return Runtime.exists() and Runtime.instance().state in (RuntimeState.NO_SESSIONS_CONNECTED,
                                                              RuntimeState.ONE_OR_MORE_SESSIONS_CONNECTED)


def first_review() -> None:
    """What a first visit to Review makes, into the caches every session shares (the same calls
    the page makes, ``pages/_common``, with the same arguments): the answers (checked) or the
    store (its index), the labels, the verdicts, the guidelines as HTML (the sidebar's)."""
    from pages import _common as common
    from pages import _review_sidebar

    cfg = common.settings()
    if cfg.store is not None:
        from citecheck.storage.checked.folder import META

        data = common._store_answers(str(cfg.store), common._stamp([cfg.store / META]))
        data.item_total()
    else:
        common._load(cfg.logs, cfg.corpus, cfg.casefold, cfg.refusals, common._stamp(cfg.logs))
    common.holds_scan(str(cfg.labels))
    common.label_state()
    common.search_verdict_facts()
    common.judged_by_item()
    rules, _ = common.guidelines()
    if rules is not None:
        _review_sidebar.guidelines_html(rules.text)


def first_failures() -> None:
    """What a first visit to Failures makes, in the same way: its figures (over the store, or the
    log's answers).  Its first view draws no chart (the reasons are a table)."""
    from citecheck.labelling import labels as label_store
    from citecheck.reports import failures_view
    from citecheck.web import failures_source

    from pages import _common as common

    cfg = common.settings()
    records = common.label_state().effective
    labels = label_store.latest(records) if records else {}
    golden, _ = failures_view.golden_set(cfg.golden)
    if cfg.store is not None:
        failures_source.open_store(cfg, golden, labels, k=failures_view.K)
    else:
        data = common._load(cfg.logs, cfg.corpus, cfg.casefold, cfg.refusals, common._stamp(cfg.logs))
        failures_source.open_log(data, golden, labels, cfg, None, failures_view.K)


def first_chart() -> None:
    """Altair's first chart loads its schema (about 0.2 s): made last, for a tab or page with a chart."""
    import altair as alt
    import pandas as pd

    alt.Chart(pd.DataFrame({"x": [0]})).mark_bar().encode(x="x").to_dict()


# While the warm-up runs, the thread serving a first visitor's requests (Streamlit's script files,
# then its websocket) waited up to the interpreter's 5 ms switch interval for the warm-up thread
# to let go of the GIL, request after request: a fresh server's first Review on the sample drew in
# 2.51 and 2.58 s, and in 2.11 and 2.18 s with 0.5 ms, alternating in the same minutes
# (bench/bench_cold.py --rounds 3 --pages review).
WARM_SWITCH_INTERVAL = 0.0005


def warm(deadline_seconds: float = 120) -> None:
    """Wait for the server to answer, then import and make what the first visit would."""
    give_up = time.monotonic() + deadline_seconds
    while not _running():
        if time.monotonic() > give_up:
            return
        time.sleep(0.05)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    started = time.perf_counter()
    settle_use_warning()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(WARM_SWITCH_INTERVAL)  # (until the warm-up ends: the first visitor's requests come first)
    try:
        # what a first visitor's page needs first (a first run waits for a module another thread
        # is importing, and shares the cores with it): Review's imports and data (Review is the
        # default page), then Failures', then the other pages' imports
        _import(page_imports(pages=("review.py",)))
        first_review()
        _import(page_imports(pages=WARMED_PAGES))
        first_failures()
        _import(page_imports())
        first_chart()
        from citecheck.web import memory

        memory.settle(now=True)  # what the first visit made lives as long as the server: out of the collector's way
    except BaseException as exc:  # (StopException included: the page will say what went wrong)
        print(f"citecheck: warming up the pages stopped: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return
    finally:
        sys.setswitchinterval(interval)
    print(f"citecheck: pages ready ({time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True)


def settle_use_warning() -> None:
    """Streamlit's first element in a process asks whether it runs in a Python REPL, to warn that an
    app must be served with ``streamlit run`` (``delta_generator._maybe_print_use_warning``, once per
    process).  It asks with ``inspect.stack()``, which reads the source of every frame of the asking
    thread and resolves the file of every imported module: a fresh server's first page spent 0.6 s
    in it (its first ``st.header``), with the pages' modules imported and a deep stack.  Asked here,
    at the warm-up's start, it costs 0.05 s; the answer (no warning: this is ``streamlit run``) is
    kept for the process."""
    try:
        from streamlit.delta_generator import _maybe_print_use_warning
    except ImportError:  # (another Streamlit: its first page pays it, as before)
        return
    _maybe_print_use_warning()


def _import(names: list[str]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError:  # (``M.N`` where N is a name in M, not a module)
            pass


class _NotFromWarmUp(logging.Filter):
    """Streamlit warns, on each cached call, that the warm-up thread has no script run: expected."""

    def filter(self, record: logging.LogRecord) -> bool:
        return threading.current_thread().name != WARM_THREAD


WARM_THREAD = "citecheck-warm-up"


def router_first() -> None:
    """Every session's first run goes to app.py's router (``st.navigation``), also the first
    session of a fresh server.  Streamlit runs a page of ``pages/`` directly until some session has
    called ``st.navigation`` (its old multipage mode, a flag for the whole process); that page then
    hands over to the router (``_common.enter``), which comes back to it: three runs instead of one
    for the first visitor.  app.py always calls ``st.navigation``, which sets the same flag."""
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # (another Streamlit: the hand-over still works, one visit slower)
        return
    if getattr(PagesManager, "uses_pages_directory", False) is None:
        PagesManager.uses_pages_directory = False


def main(argv: list[str]) -> int:
    router_first()
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(_NotFromWarmUp())
    threading.Thread(target=warm, name=WARM_THREAD, daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", *argv]  # (what ``python -m streamlit`` reads)
    return cli.main(prog_name="streamlit")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
