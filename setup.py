"""The build steps pyproject.toml cannot declare (everything else is there).

* The review app in the wheel: the top-level ``app.py``, ``pages/`` and the bundled sample data
  are copied into the package as ``citecheck/ui/`` when the wheel is built (they stay in one
  place in the repository; ``citecheck app`` serves the copy: core/citecheck/web/serve.py).
* The compiled checker in the wheel: the hot modules (``citecheck.text.compiled.MODULES``) are
  compiled with mypyc when a wheel is built and a C compiler is present, as mypy and black
  publish theirs; without a compiler (or with ``CITECHECK_PURE_PYTHON=1``) the wheel holds the
  Python modules only.  An editable install (``dev.py``) compiles nothing here: a checkout keeps
  its own build in build/mypyc/ (core/citecheck/text/compiled.py).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
UI = ("app.py", "pages", "sample_data")  # copied into citecheck/ui/ of the built package


def hot_modules() -> tuple[str, ...]:
    """``citecheck.text.compiled.MODULES``, read from its file (the one list of the compiled modules)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_citecheck_compiled", HERE / "core/citecheck/text/compiled.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return tuple(module.MODULES)


class BuildWithApp(build_py):
    """build_py, then the app's entry, pages and sample data as package data of ``citecheck/ui/``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install serves the checkout's own app.py
        target = Path(self.build_lib) / "citecheck" / "ui"
        for name in UI:
            source = HERE / name
            if not source.exists():
                raise SystemExit(f"{source} is missing: the wheel must carry the review app ({', '.join(UI)})")
            dest = target / name
            if source.is_dir():
                shutil.copytree(source, dest, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "local_data"))
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest)


class OptionalBuildExt(build_ext):
    """Compile the mypyc extensions; if that fails (no C compiler), leave none behind, so the
    wheel's Python modules are used (a shim without its shared library would not import)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # CompileError, a missing compiler, ...: the wheel stays pure Python
            for ext in self.extensions:
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
            print(f"citecheck: the compiled build failed ({exc}); building a pure-Python wheel", file=sys.stderr)


def compiled_modules() -> list:
    wanted = ("bdist_wheel" in sys.argv or "build_ext" in sys.argv) and "editable_wheel" not in sys.argv
    if not wanted or os.environ.get("CITECHECK_PURE_PYTHON", "") not in ("", "0"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("citecheck: mypy is not installed; building a pure-Python wheel", file=sys.stderr)
        return []
    try:
        return mypycify([f"core/citecheck/{m}" for m in hot_modules()]
                        + ["--follow-imports=silent", "--ignore-missing-imports"], opt_level="3")
    except (Exception, SystemExit) as exc:  # (mypyc reports type errors as SystemExit or an exception)
        print(f"citecheck: mypyc could not compile the hot modules ({exc}); building a pure-Python wheel",
              file=sys.stderr)
        return []


setup(cmdclass={"build_py": BuildWithApp, "build_ext": OptionalBuildExt}, ext_modules=compiled_modules())
