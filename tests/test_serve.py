"""``citecheck app`` (web.serve, cli.app_commands): the Streamlit command for the app's settings,
the same from ``dev.py run`` and from an installed package."""

from __future__ import annotations

import sys

from citecheck.cli.app_commands import settings_argv
from citecheck.cli.main import build_parser
from citecheck.web import serve


def test_streamlit_options_and_app_settings_are_told_apart():
    mine, rest = serve.split_streamlit(["--server.port", "8600", "--log", "a.jsonl", "--", "--theme.base=dark",
                                        "--overlap", "2"])
    assert mine == ["--server.port", "8600", "--theme.base=dark"]
    assert rest == ["--log", "a.jsonl", "--overlap", "2"]


def test_the_app_settings_reach_the_app_as_given():
    args, extra = build_parser().parse_known_args(["app", "--port", "8700", "--log", "a.jsonl", "--log", "b.jsonl",
                                                   "--casefold", "--overlap", "2", "--corpus", "docs"])
    assert extra == [] and args.port == 8700
    assert settings_argv(args) == ["--log", "a.jsonl", "--log", "b.jsonl", "--corpus", "docs", "--casefold",
                                   "--overlap", "2"]


def test_the_command_serves_the_checkouts_app_with_every_servers_options():
    command = serve.launch(["--log", "a.jsonl"], port=8700, address="127.0.0.1", streamlit_options=["--theme.base=dark"],
                           environ={})
    assert command.argv[:4] == [sys.executable, str(serve.CHECKOUT / "pages" / "_server.py"), "run",
                                str(serve.CHECKOUT / "app.py")]
    assert "--client.toolbarMode" in command.argv and command.argv[command.argv.index("--client.toolbarMode") + 1] == "viewer"
    assert command.argv[-3:] == ["--", "--log", "a.jsonl"] and "--theme.base=dark" in command.argv
    assert command.url == "http://127.0.0.1:8700" and command.notes == []  # a checkout keeps its local_data/
    assert serve.launch([], streamlit_options=["--server.port", "8777"], environ={}).url == "http://localhost:8777"
    assert not serve.installed()


def test_the_printed_address_has_the_base_path_the_proxy_serves():
    command = serve.launch([], port=8700, streamlit_options=["--server.baseUrlPath", "/citecheck/"], environ={})
    assert command.url == "http://localhost:8700/citecheck"
    assert serve.launch([], streamlit_options=["--server.baseUrlPath=team"], environ={}).url == "http://localhost:8501/team"


def _as_streamlit_reads(command: serve.Launch) -> dict:
    """The options of ``command`` as ``streamlit run`` parses them (its own click command)."""
    from streamlit.web import cli

    options = command.argv[3:command.argv.index("--")]
    return cli.main_run.make_context("run", list(options)).params


def test_a_server_watches_no_files_unless_asked():
    # Streamlit's file watcher walks the app's folder (a checkout with .venv: over 4,000 folders)
    # for every new session before its first run: off for a review server, on when a developer asks
    served = _as_streamlit_reads(serve.launch([], port=8700, environ={}))
    assert served["server_fileWatcherType"] == "none"
    assert served["client_toolbarMode"] == "viewer" and served["server_headless"] is True
    asked = _as_streamlit_reads(serve.launch([], port=8700, environ={},
                                             streamlit_options=["--server.fileWatcherType", "auto"]))
    assert asked["server_fileWatcherType"] == "auto"
