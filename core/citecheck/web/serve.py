"""``citecheck app``: start the review app, from a checkout or from an installed package.

The app's entry and pages are the top-level ``app.py`` and ``pages/`` of the checkout, the one
source; the wheel carries a copy of them, with the bundled sample data, as the package data
``citecheck/ui/`` (written by ``setup.py`` at build time, never kept in the repository).  This
module finds whichever is there (the checkout's first), and starts Streamlit on it with the
options every citecheck server runs with.  ``python3 dev.py run`` calls it too.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent  # the citecheck package
CHECKOUT = PACKAGE.parent.parent  # core/citecheck/ -> the checkout, when this is one
PACKAGED = PACKAGE / "ui"  # the copy a wheel carries

# Streamlit options of every citecheck server: no browser opened on the server, no usage
# statistics sent, no developer toolbar (Deploy, Rerun, Clear cache) for reviewers, and no file
# watcher: Streamlit's watches the app's folder recursively and walks it again for every new
# session (a checkout with its .venv holds over 4,000 folders: 0.4-0.8 s before a session's first
# run, bench/bench_cold.py).  A server for reviewers does not reload on edits; a developer who wants
# that passes ``--server.fileWatcherType auto`` (a later option wins).
SERVER_OPTIONS = ("--server.headless", "true", "--browser.gatherUsageStats", "false",
                  "--client.toolbarMode", "viewer", "--server.fileWatcherType", "none")
STREAMLIT_PREFIXES = ("--server.", "--browser.", "--client.", "--theme.", "--logger.", "--runner.", "--global.")


def app_root() -> Path:
    """The folder holding ``app.py``, ``pages/`` and ``sample_data/``: the checkout's, else the package's."""
    if (CHECKOUT / "app.py").is_file() and (CHECKOUT / "pages").is_dir():
        return CHECKOUT
    if (PACKAGED / "app.py").is_file():
        return PACKAGED
    raise FileNotFoundError("the review app is not in this installation (no app.py in the checkout or in "
                            f"{PACKAGED}): reinstall citecheck from its wheel or sdist")


def installed() -> bool:
    """Whether the app runs from the package's copy (an installed citecheck, no checkout)."""
    return app_root() == PACKAGED


@dataclass(frozen=True)
class Launch:
    argv: list[str]  # the command that becomes the server
    url: str
    notes: list[str]  # what the terminal is told before the server starts


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def launch(settings: Sequence[str], port: int | None = None, address: str | None = None,
           streamlit_options: Sequence[str] = (), environ: dict[str, str] | None = None) -> Launch:
    """The Streamlit command for these app settings (``--log``, ``--corpus``... as ``dev.py run --``
    takes them).  An installed app keeps its labels and verdicts in ``./local_data/`` of the
    working folder unless the settings or their variables say otherwise (never in site-packages)."""
    environ = dict(os.environ if environ is None else environ)
    root = app_root()
    settings = list(settings)
    notes = []
    if root == PACKAGED:
        for option, variable, name in (("--labels", "CITECHECK_LABELS", "labels.jsonl"),
                                       ("--verdicts", "CITECHECK_VERDICTS", "verdicts.jsonl")):
            if option not in settings and not environ.get(variable):
                target = Path.cwd() / "local_data" / name
                settings += [option, str(target)]
                notes.append(f"{option[2:]}: {target}")
    options = list(SERVER_OPTIONS)
    if port is not None:
        options += ["--server.port", str(port)]
    if address is not None:
        options += ["--server.address", address]
    options += list(streamlit_options)
    given = _values(streamlit_options)
    shown_port = port if port is not None else int(given.get("--server.port", 8501))
    address = address if address is not None else given.get("--server.address")
    host = address if address not in (None, "0.0.0.0", "::", "") else "localhost"
    base = given.get("--server.baseUrlPath", "").strip("/")
    # Streamlit's ``streamlit run``, started by the app's own launcher: it also warms the pages up
    # in the background once the server answers (pages/_server.py)
    argv = [sys.executable, str(root / "pages" / "_server.py"), "run", str(root / "app.py"), *options, "--", *settings]
    return Launch(argv, f"http://{host}:{shown_port}" + (f"/{base}" if base else ""), notes)


def _values(options: Sequence[str]) -> dict[str, str]:
    """``--server.port 8600`` and ``--server.port=8600`` alike, as {option: value}."""
    out, options = {}, list(options)
    for i, a in enumerate(options):
        if "=" in a:
            key, value = a.split("=", 1)
            out[key] = value
        elif i + 1 < len(options) and not options[i + 1].startswith("--"):
            out[a] = options[i + 1]
    return out


def split_streamlit(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """(Streamlit's own options such as ``--server.port 8600``, the rest): ``dev.py run`` passes both."""
    mine, rest = [], []
    args = list(args)
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith(STREAMLIT_PREFIXES):
            mine.append(a)
            if "=" not in a and i + 1 < len(args) and not args[i + 1].startswith("--"):
                mine.append(args[i + 1])
                i += 1
        elif a != "--":
            rest.append(a)
        i += 1
    return mine, rest


def become(command: Launch) -> int:
    """Run the server as this process (on POSIX: same process id, so a kill of ``citecheck app``
    stops the server and frees its port), in the working folder (relative paths in the settings
    mean what they mean to the person who typed them)."""
    import subprocess

    sys.stdout.flush()
    if os.name == "posix":
        os.execv(command.argv[0], command.argv)
    return subprocess.call(command.argv)
