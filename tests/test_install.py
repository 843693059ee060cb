"""A non-editable ``pip install .`` works: the import name is ``citecheck`` (not ``core``), the
package data is installed, ``citecheck check`` runs, and the app's settings find the samples or
say where to point them."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "answers.jsonl"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The project installed (not editable) into a folder of its own, from a copy of the source
    so the build leaves nothing in the checkout."""
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "setup.py", "MANIFEST.in", "CHANGELOG.md", "LICENSE", "app.py"):
        shutil.copy(ROOT / name, src / name)
    for name in ("core", "pages", "sample_data"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info"))
    site = tmp / "site"
    # offline (this environment's setuptools), and pure Python: the compiled wheel is in test_installed_wheel.py
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--target", str(site), str(src)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "CITECHECK_PURE_PYTHON": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp, site


def _run(installed, *argv, code=None):
    tmp, site = installed
    env = {**os.environ, "PYTHONPATH": str(site)}
    argv = [sys.executable, "-c", code] if code else [str(site / "bin" / "citecheck"), *argv]
    return subprocess.run(argv, capture_output=True, text=True, cwd=tmp, env=env, timeout=120)


def test_the_import_name_is_citecheck_from_the_installed_copy(installed):
    _, site = installed
    done = _run(installed, code="import citecheck, importlib.util; print(citecheck.__file__); "
                                "print(importlib.util.find_spec('core'))")
    where, core = done.stdout.split()
    assert Path(where).is_relative_to(site) and core == "None"  # no top-level 'core' package is installed


def test_package_data_is_installed(installed):
    done = _run(installed, code="from citecheck.llm.prompts import load_prompt; import citecheck.contract.log as log_module, "
                                "pathlib; print(load_prompt('judge.v1').version); "
                                "print((pathlib.Path(log_module.__file__).parent / 'schema' / 'log.v1.schema.json').is_file())")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["judge.v1", "True"]


def test_citecheck_check_runs_from_the_installed_copy(installed):
    done = _run(installed, "check", str(SAMPLE), "--corpus", str(ROOT / "sample_data" / "corpus"), "--quiet")
    assert done.returncode == 0, done.stderr
    assert "answers: 48" in done.stdout and "citations:" in done.stdout


def test_app_settings_find_the_samples_of_the_checkout_or_the_bundled_ones(installed):
    code = ("from pathlib import Path; import sys; from citecheck.web.settings import load_settings; "
            "from citecheck.labelling import dataset; "
            "s = load_settings([], {}, root=Path(sys.argv[1])); print(s.logs[0].is_file(), s.corpus.is_dir()); "
            "d = dataset.load(load_settings([], {}).logs); print(len(d), d.errors, load_settings([], {}).logs[0])")
    tmp, site = installed
    done = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, cwd=tmp,
                          env={**os.environ, "PYTHONPATH": str(site)}, timeout=120)
    assert done.returncode == 0, done.stderr
    found, bundled = done.stdout.splitlines()
    assert found == "True True"
    count, errors, where = bundled.split(" ", 2)
    assert (count, errors) == ("48", "()") and Path(where).is_relative_to(site / "citecheck" / "ui" / "sample_data")
