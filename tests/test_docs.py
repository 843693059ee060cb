import argparse
import re
from pathlib import Path

import pytest
from citecheck.cli.main import build_parser
from citecheck.contract import reasons

ROOT = Path(__file__).resolve().parent.parent
CHECKS = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
CLI = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("code", reasons.ALL_REASONS)
def test_every_reason_code_is_documented(code):
    assert f"| `{code}` |" in CHECKS
    assert reasons.DESCRIPTIONS[code]


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("citecheck",)):
    """Every leaf command of the parser with its option strings and positional names."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        names = []
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            names += [o for o in action.option_strings if o.startswith("--")] or [action.dest]
        yield " ".join(path), names
    for sub in subs:
        for name, child in sub.choices.items():
            yield from _commands(child, (*path, name))


def _sections() -> dict[str, str]:
    parts = re.split(r"^## (citecheck[^\n]*)\n", CLI, flags=re.M)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2])}


COMMANDS = dict(_commands(build_parser()))


def test_the_parser_walk_finds_every_command_group():
    assert {"citecheck check", "citecheck import anthropic", "citecheck labels export"} <= set(COMMANDS)
    assert "--max-failure-rate" in COMMANDS["citecheck check"] and "logs" in COMMANDS["citecheck check"]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_and_option_is_in_the_cli_reference(command):
    sections = _sections()
    assert command in sections, f"docs/cli.md has no section '## {command}'"
    missing = [name for name in COMMANDS[command] if f"`{name}" not in sections[command]]
    assert not missing, f"docs/cli.md, section {command}: undocumented {missing}"


def test_the_cli_reference_names_no_command_that_does_not_exist():
    assert set(_sections()) <= set(COMMANDS)


def test_readme_gives_exactly_two_setup_free_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", readme, re.S).group(1)
    commands = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert commands == ["python3 dev.py run", "python3 dev.py test"]
    assert "python3 dev.py test" in (ROOT / ".ci" / "run").read_text()
