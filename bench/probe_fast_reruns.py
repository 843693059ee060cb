#!/usr/bin/env python3
"""Show how Streamlit runs one session's button callbacks when a press arrives mid-callback.

    python bench/probe_fast_reruns.py [--lock]

Starts a one-button app (its callback takes 1.5 s, as a label save on a slow disk may) under a
freshly started ``streamlit run``, presses the button's shortcut twice 0.2 s apart in Chromium,
and prints when each call entered and left, and in which thread.  With Streamlit's fast reruns
(on by default) the second press's run starts in a new thread while the first call is still
going: the two calls overlap.  With ``--lock`` the callback holds the session's lock
(``citecheck.review.session_state.acting``), as every review callback does: the second call
waits for the first, and the first is stopped at its next use of the session once the newer
message has arrived (its "left" line is missing), which is why a callback records what it did
before it touches the session again (docs/app.md, Labelling).
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SLOW = 1.5  # seconds each call works before it uses the session

APP = '''
import sys, threading, time
sys.path.insert(0, {core!r})
import streamlit as st
from citecheck.review.session_state import acting

LOG = {log!r}


def note(what):
    with open(LOG, "a") as f:
        f.write(f"{{what}} thread {{threading.get_ident()}} at {{time.monotonic():.3f}}\\n")


def slow():
    note("entered")
    time.sleep({slow!r})
    st.session_state["calls"] = st.session_state.get("calls", 0) + 1  # (a use of the session)
    note("left")


def locked():
    with acting(st.session_state):
        slow()


st.button("Go", on_click=locked if {lock!r} else slow, shortcut="3")
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lock", action="store_true", help="the callback holds the session's lock")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="fast-reruns-"))
    log = folder / "calls.txt"
    log.touch()
    (folder / "app.py").write_text(APP.format(core=str(ROOT / "core"), log=str(log), lock=args.lock, slow=SLOW), encoding="utf-8")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                               "--server.port", str(port), "--browser.gatherUsageStats", "false"],
                              cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page()
            for _ in range(60):
                try:
                    page.goto(f"http://127.0.0.1:{port}", timeout=5_000)
                    break
                except Exception:  # (the server is not up yet)
                    time.sleep(0.5)
            page.get_by_text("Go").wait_for(timeout=60_000)
            time.sleep(1)
            page.keyboard.press("3")
            time.sleep(0.2)
            page.keyboard.press("3")
            time.sleep(4)
            browser.close()
    finally:
        server.terminate()
        server.wait(10)
    lines = log.read_text(encoding="utf-8").splitlines()
    print(f"streamlit fast reruns, the callback {'with' if args.lock else 'without'} the session's lock:")
    for line in lines:
        print("  " + line)
    spans: dict[str, list[float]] = {}
    for line in lines:
        what, _, thread, _, at = line.split()
        spans.setdefault(thread, []).append(float(at))
    enters = sorted(s[0] for s in spans.values())  # (each call works SLOW seconds before it uses the session)
    overlap = any(later - earlier < SLOW for earlier, later in zip(enters, enters[1:]))
    print(f"calls: {len(spans)}; a call entered while another was still working: {'yes' if overlap else 'no'}; "
          f"calls stopped before they left: {sum(len(s) == 1 for s in spans.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
