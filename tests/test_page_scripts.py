"""Every script the pages put in the browser parses as JavaScript (``node --check``).

A syntax error in one of them breaks the page in the browser without a word in Python: the key
queue's listener is never installed, so label keys go straight to Streamlit again (issue #12's
lost and doubled keys), or the reconnect guard never holds a key.  The browser tests find that,
slowly and indirectly (nine of them failed on one misnamed function); this finds it in a second and
names the script.  ``.ci/run`` installs Node.js; without it these tests skip, unless
``CITECHECK_REQUIRE_NODE`` is set.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from citecheck.review import keypresses, reconnect

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None and not os.environ.get("CITECHECK_REQUIRE_NODE"),
                                reason="needs Node.js for node --check (.ci/run installs it)")


def _inline(html: str) -> list[str]:
    """The code of each ``<script>`` element of an HTML snippet."""
    found = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
    assert found, "no script element"
    return found


def scripts() -> dict[str, str]:
    """(name, JavaScript) of every script the pages run."""
    out = {"keypresses.script()": keypresses.script()}
    out.update((f"keypresses.installer_html() #{i}", code) for i, code in enumerate(_inline(keypresses.installer_html())))
    out.update((f"reconnect.reconnect_script() #{i}", code)
               for i, code in enumerate(_inline(reconnect.reconnect_script(reconnect.session_token()))))
    for path in sorted((ROOT / "pages").glob("*/*.js")):
        out[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return out


def node_check(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    file = tmp_path / "script.js"
    file.write_text(code, encoding="utf-8")
    return subprocess.run([NODE or "node", "--check", str(file)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name", sorted(scripts()))
def test_the_script_parses(name, tmp_path):
    checked = node_check(scripts()[name], tmp_path)
    assert checked.returncode == 0, f"{name} does not parse:\n{checked.stderr}"


def test_a_broken_script_is_caught(tmp_path):
    """The check itself: the key queue's script with one name declared twice (the mistake that once
    broke the review page) does not parse."""
    script = keypresses.script()
    declared = script.index("let idleSince = 0")  # (its line declares ``shown``)
    end = script.index("\n", declared)
    broken = script[:end] + "\nfunction shown() {}" + script[end:]
    assert "shown = " in script[declared:end]
    checked = node_check(broken, tmp_path)
    assert checked.returncode != 0 and "shown" in checked.stderr
