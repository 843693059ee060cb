#!/usr/bin/env python3
"""Set-up-free entry points: ``python3 dev.py run`` starts the app, ``python3 dev.py test`` runs the tests.

Needs only Python 3.11+ with pip and venv.  On first use it creates ``.venv/`` beside this file and
installs citecheck with its test dependencies into it; later runs reuse it (reinstalling when
pyproject.toml changes).  Extra arguments are passed on (to pytest, or to the app after ``--``).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".citecheck-installed"


def ensure_venv() -> None:
    if sys.version_info < (3, 11):
        sys.exit(f"citecheck needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == want and PY.exists():
        return
    if not PY.exists():
        print(f"creating {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print("installing citecheck and its dependencies (first run only) ...", flush=True)
    subprocess.run([str(PY), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[test,compiled]"], check=True)
    STAMP.write_text(want)


def ensure_compiled() -> None:
    """The mypyc build of the hot modules (core/citecheck/text/compiled.py), when their sources changed since
    the last build; without a C compiler it fails once, quietly, and everything runs as Python."""
    subprocess.run([str(PY), "-c", "from citecheck.text.compiled import main; import sys; main(sys.argv[1:])"],
                   cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), check=False)


def workers(args: list[str]) -> list[str]:
    """pytest-xdist's options for the whole suite: three workers, each test file on one worker (its
    module's server and browser shared by its tests).  Most of the suite's time is spent waiting on
    app servers and browsers rather than computing, so three workers finish it in about half the time
    even on two cores.  Not when pytest is asked for something else (``-n``, ``-p no:xdist``, a
    ``--version``, one test...), nor with ``CITECHECK_TEST_WORKERS=0``."""
    wanted = os.environ.get("CITECHECK_TEST_WORKERS", "3")
    picked = any(a.startswith(("-n", "--numprocesses", "-p", "--version", "--collect-only", "--co")) or "::" in a
                 or a.endswith(".py") for a in args)
    if picked or wanted == "0":
        return []
    return ["-n", wanted, "--dist", "loadfile", "--no-loadscope-reorder"]  # (tests/conftest.py orders the files)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test", "check"}:
        print(__doc__)
        return 2
    ensure_venv()
    ensure_compiled()
    command, rest = argv[0], argv[1:]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if command == "test":
        return subprocess.call([str(PY), "-m", "pytest", *workers(rest), *rest], cwd=ROOT, env=env)
    if command == "check":
        log = ROOT / "sample_data" / "answers.jsonl"
        corpus = ROOT / "sample_data" / "corpus"
        return subprocess.call([str(BIN / "citecheck"), "check", str(log), "--corpus", str(corpus), *rest],
                               cwd=ROOT, env=env)
    # the same code as an installed ``citecheck app`` (core/citecheck/web/serve.py): Streamlit's own
    # options (--server.port 8600) before a "--", the app's settings (--log, --corpus ...) after it
    cut = rest.index("--") if "--" in rest else len(rest)
    args = [str(PY), "-m", "citecheck", "app", *rest[:cut], *rest[cut + 1:]]
    if os.name == "posix":
        # Become the server (same process id), so that a kill of ``python3 dev.py run`` stops it
        # and frees its port, instead of leaving an orphaned server behind.
        os.chdir(ROOT)
        sys.stdout.flush()
        os.execve(args[0], args, env)
    return subprocess.call(args, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
