"""The optional compiled build of the hot modules (issue #14): mypyc-compiled copies of
:data:`MODULES`, used when they were built from the very sources beside them.

``python3 dev.py`` builds them (``build_compiled.py``) into ``build/mypyc/`` of the checkout, with
a stamp holding the SHA-256 of each source.  :func:`install` (called by ``citecheck/__init__``, before any of them is imported)
puts a finder first on ``sys.meta_path`` that serves those extension modules instead of the
``.py`` files, but only when every source still has the hash it was built from: an edited module
is never shadowed by a stale build, it is simply run as Python until the next build.
``CITECHECK_PURE_PYTHON=1`` turns the compiled build off (the tests compare both, byte for byte).
The pure-Python modules are always there and always importable.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path

# The modules compiled, as paths under core/citecheck/ (the citecheck package).
MODULES = ("text/normalise.py", "text/sentences.py", "contract/log.py", "checking/checker.py",
           "reports/check_report.py", "reports/answer_row.py", "importers/spans.py", "importers/traces.py", "importers/trace_citations.py")
PACKAGE = Path(__file__).resolve().parent.parent  # core/citecheck/, the citecheck package
BUILD = PACKAGE.parent.parent / "build" / "mypyc"  # in the checkout (git ignores build/)
STAMP = "citecheck-build.json"
PURE_ENV = "CITECHECK_PURE_PYTHON"


def source_hashes() -> dict[str, str]:
    return {m: hashlib.sha256((PACKAGE / m).read_bytes()).hexdigest() for m in MODULES}


def _usable(build: Path) -> bool:
    try:
        stamp = json.loads((build / STAMP).read_text())
    except (OSError, ValueError):
        return False
    return (stamp.get("ok", False) and stamp.get("python") == sys.implementation.cache_tag
            and stamp.get("sources") == source_hashes())


class _Finder:
    """Serves ``citecheck.X`` from ``build/citecheck/X<extension suffix>`` when that file exists."""

    def __init__(self, build: Path):
        self.root = build / "citecheck"

    def find_spec(self, name, path=None, target=None):
        if not name.startswith("citecheck."):
            return None
        base = self.root.joinpath(*name.split(".")[1:])
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            file = base.with_name(base.name + suffix)
            if file.is_file():
                return importlib.util.spec_from_file_location(name, file)
        return None


class _PureFinder:
    """Serves :data:`MODULES` from their ``.py`` files, for ``CITECHECK_PURE_PYTHON=1`` in an
    installed wheel that carries their compiled build (an extension module is otherwise preferred)."""

    def find_spec(self, name, path=None, target=None):
        for module in MODULES:
            if name == "citecheck." + module.removesuffix(".py").replace("/", "."):
                return importlib.util.spec_from_file_location(name, PACKAGE / module)
        return None


def install() -> bool:
    """Use the compiled modules if they are built and current; True when they are used.
    (Only a checkout has a build: an installed citecheck has no ``build/`` beside its package.)
    With ``CITECHECK_PURE_PYTHON=1`` the ``.py`` modules run, in a checkout or an installed wheel."""
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        if not any(isinstance(f, _PureFinder) for f in sys.meta_path):
            sys.meta_path.insert(0, _PureFinder())
        return False
    if not (BUILD / STAMP).is_file():
        return False
    if not _usable(BUILD):
        return False
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder(BUILD))
    return True


def build_kind() -> str:
    """``compiled`` when the hot modules run as mypyc extensions (from a wheel that carries them,
    or a checkout's current build), else ``pure Python``."""
    import importlib

    module = importlib.import_module("citecheck.text.normalise")
    suffix = Path(getattr(module, "__file__", "") or "").name
    return "compiled" if any(suffix.endswith(s) for s in importlib.machinery.EXTENSION_SUFFIXES) else "pure Python"


# --- building (``python -m citecheck.text.compiled``, run by dev.py) ---------------------------

_SETUP = """
import os
import sys
from setuptools import setup
from mypyc.build import mypycify
setup(name="citecheck-compiled", script_args=["build_ext", "--build-lib", sys.argv[1], "--build-temp", sys.argv[2],
                                                "--parallel", str(os.cpu_count() or 1)],
      ext_modules=mypycify(sys.argv[3:] + ["--follow-imports=silent", "--ignore-missing-imports"],
                           separate=True, opt_level="3"))
"""


def _stamp(sources: dict[str, str], ok: bool) -> str:
    return json.dumps({"python": sys.implementation.cache_tag, "sources": sources, "ok": ok}, indent=1)


def build(force: bool = False) -> str:
    """Compile :data:`MODULES` with mypyc into :data:`BUILD` unless it is current; returns what was done.

    A failed build (no C compiler, no mypy) is remembered for these sources, so it is not tried
    on every run; the modules then run as Python, as they do without any build."""
    import shutil
    import subprocess
    import tempfile

    sources = source_hashes()
    try:
        old = json.loads((BUILD / STAMP).read_text())
    except (OSError, ValueError):
        old = {}
    if not force and old.get("sources") == sources and old.get("python") == sys.implementation.cache_tag:
        return "current" if old.get("ok", True) else "failed before (run with --force to try again)"
    BUILD.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="mypyc-", dir=BUILD.parent))
    try:
        (work / "src").mkdir()
        (work / "src" / "citecheck").symlink_to(PACKAGE, target_is_directory=True)
        log = BUILD.parent / "mypyc.log"
        with open(log, "w") as out:
            done = subprocess.run([sys.executable, "-c", _SETUP, str(work / "lib"), str(work / "tmp"),
                                   *(f"citecheck/{m}" for m in MODULES)],
                                  cwd=work / "src", stdout=out, stderr=subprocess.STDOUT).returncode == 0
        lib = work / "lib"
        if not done:
            lib.mkdir(exist_ok=True)
        (lib / STAMP).write_text(_stamp(sources, done))
        if BUILD.exists():
            stale = Path(tempfile.mkdtemp(prefix="old-", dir=BUILD.parent))
            BUILD.rename(stale / "mypyc")
            shutil.rmtree(stale, ignore_errors=True)
        lib.rename(BUILD)
        return "built" if done else f"failed (see {log}); the modules run as Python"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str]) -> None:
    """``python -c "from citecheck.text.compiled import main; main([])"`` (as dev.py runs it)."""
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return
    result = build(force="--force" in argv)
    if result != "current":
        print(f"compiled build of {', '.join(MODULES)}: {result}", flush=True)
