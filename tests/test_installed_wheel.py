"""citecheck as a user installs it (issue #37): the sdist and the wheel built from this source, the
wheel installed into a fresh virtual environment outside the checkout, and there:

* ``citecheck --version`` names the build it runs (compiled where a C compiler built the wheel);
* ``citecheck check`` on the bundled sample writes the same bytes as the checkout's;
* ``citecheck app`` on a free port answers its health check and, in Chromium, shows the sample's
  first answer on the Review page and the Failures page's headline.

Offline (the README's test command): the wheel is built without build isolation from this
environment's setuptools and mypy, installed without its dependencies, and the fresh environment
reads the dependencies through a path file naming this environment's site-packages (their
folder only: its editable-install hooks are not run, so the checkout is not importable there).
``.ci/run`` instead builds the wheel with build isolation before the suite, installs it with its
dependencies from the index into a venv of its own and points ``CITECHECK_INSTALLED_VENV`` at it;
this module then tests that one and builds none.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from appserver import free_port, healthy
from test_browser import CHROMIUM

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "CHANGELOG.md", "LICENSE", "app.py", "pages", "sample_data",
          "core")
SAMPLE = ROOT / "sample_data" / "answers.jsonl"
CORPUS = ROOT / "sample_data" / "corpus"


def _copy_source(dest: Path) -> None:
    dest.mkdir(parents=True)
    for name in SOURCE:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.pyc", "*.so", "*.egg-info", ".mypy_cache", "local_data"))
        else:
            shutil.copy2(source, dest / name)


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """The bin folder of a virtual environment outside the checkout with the built wheel installed."""
    given = os.environ.get("CITECHECK_INSTALLED_VENV")
    if given:
        return Path(given) / "bin"
    tmp = tmp_path_factory.mktemp("installed")
    _copy_source(tmp / "src")
    built = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "dist"),
                            str(tmp / "src")], capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheels = sorted((tmp / "dist").glob("citecheck-*.whl"))
    sdists = sorted((tmp / "dist").glob("citecheck-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1  # (python -m build makes the wheel from the sdist alone)
    subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True, timeout=300)
    bin_dir = tmp / "venv" / "bin"
    done = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                           str(wheels[0])], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    site = subprocess.run([str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "citecheck-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return bin_dir


def run(bin_dir: Path, *argv: str, cwd: Path, **more: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("CITECHECK_")} | more
    return subprocess.run([str(bin_dir / "citecheck"), *argv], capture_output=True, cwd=cwd, env=env, timeout=300)


def test_the_installed_citecheck_is_the_wheel_not_the_checkout(venv, tmp_path):
    code = "import citecheck; print(citecheck.__file__)"
    done = subprocess.run([str(venv / "python"), "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert done.returncode == 0, done.stderr
    where = Path(done.stdout.strip())
    assert not where.is_relative_to(ROOT / "core") and where.is_relative_to(venv.parent)
    packaged = where.parent / "ui"
    assert (packaged / "app.py").read_bytes() == (ROOT / "app.py").read_bytes()  # built from the one source
    assert sorted(p.name for p in (packaged / "pages").glob("*.py")) == sorted(p.name for p in (ROOT / "pages").glob("*.py"))
    assert (packaged / "sample_data" / "answers.jsonl").read_bytes() == SAMPLE.read_bytes()


def test_version_names_the_build_it_runs(venv, tmp_path):
    from citecheck import __version__

    done = run(venv, "--version", cwd=tmp_path)
    expected = "compiled" if shutil.which("cc") or shutil.which("gcc") else "pure Python"
    assert done.stdout.decode().strip() == f"citecheck {__version__} ({expected})"
    pure = run(venv, "--version", cwd=tmp_path, CITECHECK_PURE_PYTHON="1")  # the .py modules, even beside their build
    assert pure.stdout.decode().strip() == f"citecheck {__version__} (pure Python)"


def test_check_writes_the_same_bytes_as_the_checkout(venv, tmp_path):
    from citecheck.cli.main import main

    installed = run(venv, "check", str(SAMPLE), "--corpus", str(CORPUS), "--format", "json", cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(tmp_path)  # (the inputs line names paths as seen from the working folder: the same one)
    try:
        assert main(["check", str(SAMPLE), "--corpus", str(CORPUS), "--format", "json"], out, err) == 0
    finally:
        os.chdir(here)
    assert installed.stdout.decode() == out.getvalue()
    pure = run(venv, "check", str(SAMPLE), "--corpus", str(CORPUS), "--format", "json", cwd=tmp_path,
               CITECHECK_PURE_PYTHON="1")
    assert pure.stdout == installed.stdout  # the compiled and the Python modules, byte for byte
    assert json.loads(out.getvalue().splitlines()[-1])["answers"] == 48


@pytest.mark.browser
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)")
def test_citecheck_app_serves_the_bundled_sample(venv, tmp_path):
    from playwright.sync_api import expect, sync_playwright
    from test_browser import launch

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("CITECHECK_")}
    server = subprocess.Popen([str(venv / "citecheck"), "app", "--port", str(port), "--address", "127.0.0.1"],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        assert healthy(url), "the installed app did not answer its health check within 60 s"
        with sync_playwright() as pw:
            browser = launch(pw)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"{url}/", timeout=60_000)
            expect(page.get_by_role("heading", name="Answer a-001 (1 of 48)")).to_be_visible(timeout=60_000)
            page.goto(f"{url}/failures", timeout=60_000)
            expect(page.get_by_role("heading", name="Failed answers")).to_be_visible(timeout=60_000)
            expect(page.get_by_text("27.1%").first).to_be_visible(timeout=60_000)  # failing answers, as check says
            expect(page.get_by_role("button", name="Deploy")).to_have_count(0)
            browser.close()
    finally:
        server.terminate()
        said = server.communicate(timeout=30)[0]
    assert f"citecheck review app (installed package): {url}" in said
    assert f"labels: {tmp_path / 'local_data' / 'labels.jsonl'}" in said  # never in site-packages
