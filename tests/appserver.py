"""The real app, started as a user would (``streamlit run app.py -- SETTINGS``), for browser tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str, seconds: float = 60) -> bool:
    """Whether the Streamlit server at ``url`` answers its health check within ``seconds``."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                return True
        except OSError:
            time.sleep(0.3)
    return False


@contextlib.contextmanager
def running_app(settings: list[str], output=subprocess.DEVNULL) -> Iterator[str]:
    """The app's URL while a server with these app settings runs; its output goes to ``output``.
    The test fails if the server is not healthy within 60 s; the server is stopped afterwards."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--", *map(str, settings)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=output, stderr=output)
    url = f"http://127.0.0.1:{port}"
    try:
        if not healthy(url):
            pytest.fail("the app did not start within 60 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
