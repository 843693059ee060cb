"""Issue #11: ``citecheck check LOG | head`` stops quietly, and a kill of ``python3 dev.py run``
stops the Streamlit server with it (the port is freed)."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "answers.jsonl"
CITECHECK = Path(sys.executable).parent / "citecheck"


@pytest.mark.parametrize("argv", [["check"], ["check", "--format", "json"]])
def test_a_closed_pipe_ends_the_command_quietly(tmp_path, argv):
    log = tmp_path / "big.jsonl"
    log.write_text(SAMPLE.read_text(encoding="utf-8") * 200, encoding="utf-8")
    proc = subprocess.Popen([str(CITECHECK), argv[0], str(log), *argv[1:]], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # what ``| head -1`` does once it has its line
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 141
    assert "Broken pipe" not in err and "Traceback" not in err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.skipif(os.name != "posix", reason="signals and exec are POSIX")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_killing_dev_py_run_stops_the_server(sig):
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "dev.py"), "run", "--server.port", str(port),
                             "--server.address", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while not _listening(port):
            assert proc.poll() is None, "dev.py run exited before the server listened"
            assert time.monotonic() < deadline, "the server did not start in 90 s"
            time.sleep(0.2)
        os.kill(proc.pid, sig)  # the process a user started, not its group
        proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        while _listening(port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _listening(port), "the Streamlit server outlived dev.py run and holds the port"
    finally:
        if proc.poll() is None:
            proc.kill()
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # (only our own session: a server left by a failed run)
        except ProcessLookupError:
            pass
