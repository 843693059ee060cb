#!/usr/bin/env python3
"""Benchmark an installed citecheck: the compiled wheel against the pure-Python wheel.

    python bench/bench_installed.py [--answers 20000] [--rounds 3]

Builds two wheels from this source (offline, without build isolation: this environment's
setuptools and mypy), one with the mypyc-compiled hot modules and one with
``CITECHECK_PURE_PYTHON=1`` (pure Python), installs each into a fresh virtual environment outside
the checkout (dependencies read through a path file, as tests/test_installed_wheel.py does), then
times ``citecheck check --quiet`` of each on a log of bench_check.py's answers (8 quoted
citations and ~800-character chunks each), alternately, best of --rounds, as whole processes.
Prints answers/s of each and their ratio (compiled over pure; issue #37 wants the installed
checker at the checkout's compiled speed, about twice pure Python).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_check import generate  # noqa: E402

SOURCE = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "CHANGELOG.md", "LICENSE", "app.py", "pages", "sample_data",
          "core")


def wheel(work: Path, pure: bool) -> Path:
    src = work / ("src-pure" if pure else "src-compiled")
    src.mkdir()
    for name in SOURCE:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info"))
        else:
            shutil.copy2(path, src / name)
    env = {**os.environ, "CITECHECK_PURE_PYTHON": "1" if pure else ""}
    out = work / ("dist-pure" if pure else "dist-compiled")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(src)],
                   check=True, capture_output=True, env=env)
    return next(out.glob("*.whl"))


def venv(work: Path, name: str, whl: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(work / name)], check=True)
    bin_dir = work / name / "bin"
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(whl)],
                   check=True)
    site = subprocess.run([str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return bin_dir


def timed(bin_dir: Path, log: Path) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("CITECHECK_")}
    start = time.perf_counter()
    done = subprocess.run([str(bin_dir / "citecheck"), "check", str(log), "--quiet"], capture_output=True, env=env)
    elapsed = time.perf_counter() - start
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="citecheck-installed-") as tmp:
        work = Path(tmp)
        log = work / "answers.jsonl"
        generate(log, args.answers)
        builds = {}
        for pure in (False, True):
            start = time.perf_counter()
            whl = wheel(work, pure)
            bin_dir = venv(work, "pure" if pure else "compiled", whl)
            version = subprocess.run([str(bin_dir / "citecheck"), "--version"], capture_output=True, text=True,
                                     env={k: v for k, v in os.environ.items() if not k.startswith("CITECHECK_")}
                                     ).stdout.strip()
            print(f"{whl.name}: built and installed in {time.perf_counter() - start:.1f} s; {version}", flush=True)
            builds["pure" if pure else "compiled"] = bin_dir
        best = {name: float("inf") for name in builds}
        for _ in range(args.rounds):
            for name, bin_dir in builds.items():
                best[name] = min(best[name], timed(bin_dir, log))
        for name, seconds in best.items():
            print(f"installed {name:<9} check --quiet: {seconds:6.2f} s = {args.answers / seconds:8,.0f} answers/s")
        print(f"ratio compiled/pure speed: {best['pure'] / best['compiled']:.2f}x")


if __name__ == "__main__":
    main()
