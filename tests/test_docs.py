import re
from pathlib import Path

import pytest
from citecheck.cli.main import build_parser
from citecheck.contract import reasons as R

ROOT = Path(__file__).resolve().parent.parent
CHECKS = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("code", R.ALL_REASONS)
def test_every_reason_code_is_documented(code):
    assert f"| `{code}` |" in CHECKS
    assert R.DESCRIPTIONS[code]


def test_every_check_option_is_documented():
    check = build_parser()._subparsers._group_actions[0].choices["check"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8") + CHECKS
    for action in check._actions:
        for opt in action.option_strings:
            if opt.startswith("--") and opt != "--help":
                assert opt in readme, opt


def test_readme_gives_exactly_two_setup_free_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", readme, re.S).group(1)
    commands = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert commands == ["python3 dev.py run", "python3 dev.py test"]
    assert "python3 dev.py test" in (ROOT / ".ci" / "run").read_text()
