import argparse
import re
from pathlib import Path

import pytest
from citecheck import config
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


# --- every setting and variable is documented, for the app and for the command line ------------------

APP = (ROOT / "docs" / "app.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("setting", config.SETTINGS, ids=lambda s: s.name)
def test_every_setting_is_documented_for_the_app_and_the_cli(setting):
    for doc in (APP, CLI):
        assert f"`{setting.option} " in doc or f"`{setting.option}`" in doc, setting.option
        assert f"`{setting.env}" in doc, setting.env


@pytest.mark.parametrize("variable", config.VARIABLES, ids=lambda v: v.name)
def test_every_variable_without_an_option_is_documented(variable):
    assert f"`{variable.name}" in APP and f"`{variable.name}" in CLI


def test_every_citecheck_variable_the_code_reads_is_declared():
    """A CITECHECK_* name in core/ or the pages is a declared setting's or variable's (or a test's)."""
    declared = {s.env for s in config.SETTINGS} | {v.name for v in config.VARIABLES}
    found = set()
    for path in [*(ROOT / "core").rglob("*.py"), *(ROOT / "pages").glob("*.py"), ROOT / "app.py"]:
        found |= set(re.findall(r"CITECHECK_[A-Z_]+", path.read_text(encoding="utf-8")))
    assert found - declared == set()


def test_the_answer_record_example_is_what_check_writes_for_the_sample(monkeypatch):
    """docs/check-report.md's answer record is the sample's a-033 as ``check --format json`` writes
    it (only the sentence's text is shortened there)."""
    import io
    import json

    from citecheck.cli.main import main

    doc = (ROOT / "docs" / "check-report.md").read_text(encoding="utf-8")
    example = json.loads(re.search(r"## `answer`\s+```json\n(.*?)```", doc, re.S).group(1))
    out = io.StringIO()
    monkeypatch.chdir(ROOT)  # (the file as the docs run it: sample_data/answers.jsonl)
    main(["check", "sample_data/answers.jsonl", "--corpus", "sample_data/corpus", "--format", "json"], out, io.StringIO())
    record = next(r for r in map(json.loads, out.getvalue().splitlines()) if r.get("answer_id") == example["answer_id"])
    assert example["sentences"][0]["text"].endswith(" ...")
    assert record["sentences"][0]["text"].startswith(example["sentences"][0]["text"][:-4])
    example["sentences"][0]["text"] = record["sentences"][0]["text"]
    assert example == record


def test_the_cli_docs_name_every_page_of_the_app():
    """docs/cli.md's ``citecheck app`` section names the app's pages (it had left out Team and Assign)."""
    titles = re.findall(r'st\.Page\("pages/[a-z_]+\.py", title="([^"]+)"', (ROOT / "app.py").read_text(encoding="utf-8"))
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    named = re.search(r"Starts the review app \(([^)]*)\)", doc).group(1).split(", ")
    assert len(titles) >= 7 and named == titles
