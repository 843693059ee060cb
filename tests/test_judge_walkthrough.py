"""The walkthrough of docs/judge.md "Improving a judge" runs as written, offline, and prints what the
docs quote: its shell block is taken from the docs and each command run by bash in a temporary folder
(the installed ``citecheck`` and ``python`` of this venv first on the PATH, no API key, a proxy that
refuses every connection), then every line of each quoted output (``$ COMMAND`` followed by lines;
``...`` elides) must be a line the command printed.  The scripted stand-in for the second judge
(sample_data/expertqa/scripted_judge.py) is checked against the policy its docstring and the docs give."""

from __future__ import annotations

import importlib.util
import math
import os
import re
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from citecheck.cli.main import build_parser
from citecheck.judging import verdicts as verdict_store
from citecheck.judging.calibration import human_labels
from citecheck.labelling import labels as label_store
from hypothesis import given
from hypothesis import strategies as hs

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "judge.md").read_text(encoding="utf-8")
SCRIPT = ROOT / "sample_data" / "expertqa" / "scripted_judge.py"
LABELS = ROOT / "sample_data" / "expertqa" / "labels.jsonl"
BIN = Path(sys.executable).parent


def section(text: str, title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", text, re.S | re.M)
    assert found, f"docs/judge.md has no section '## {title}'"
    return found.group(1)


SECTION = section(DOC, "Improving a judge")


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)


def logical_lines(block: str) -> list[str]:
    """The block's lines with backslash continuations joined and whitespace folded."""
    return [" ".join(line.split()) for line in re.sub(r"\\\n", " ", block).splitlines()]


def shell(block: str) -> tuple[list[str], list[str]]:
    """(the variable assignments, the commands) of a shell block; comments and blank lines dropped."""
    lines = [line for line in logical_lines(block) if line and not line.startswith("#")]
    assignments = [line for line in lines if re.fullmatch(r"[A-Za-z_]\w*=\S+", line)]
    return assignments, [line for line in lines if line not in assignments]


def quoted(text: str) -> list[tuple[str, list[str]]]:
    """(command, the lines quoted as its output) for every ``$ COMMAND`` in the text blocks."""
    out: list[tuple[str, list[str]]] = []
    for block in blocks(text, "text"):
        raw = re.sub(r"\\\n", " ", block).splitlines()
        assert raw and raw[0].startswith("$ "), f"a quoted output starts with its $ command: {raw[:1]}"
        for line in raw:
            if line.startswith("$ "):
                out.append((" ".join(line[2:].split()), []))
            elif line.strip() != "...":
                out[-1][1].append(line.rstrip())
    return out


def test_the_parsers_of_this_test_read_what_the_docs_are_made_of():
    block = "L=x\n# a comment\ncitecheck a --b $L \\\n    --c d\n\npython p.py\n"
    assert shell(block) == (["L=x"], ["citecheck a --b $L --c d", "python p.py"])
    doc = "x\n```text\n$ citecheck a \\\n   --b\none\n...\n  two  \n$ python p.py\nthree\n```\n"
    assert quoted(doc) == [("citecheck a --b", ["one", "  two"]), ("python p.py", ["three"])]


ASSIGNMENTS, COMMANDS = shell(blocks(SECTION, "sh")[0])


def test_the_section_has_one_shell_block_of_offline_commands():
    assert len(blocks(SECTION, "sh")) == 1
    assert [c.split()[0] for c in COMMANDS] == ["citecheck"] * 3 + ["python"] + ["citecheck"] * 3
    assert not any("--judge claude" in c for c in COMMANDS)  # the real judge is shown, not run
    assert "0123456789ab" not in SECTION  # no placeholder prompt version


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """Every command of the block run in order in one fresh folder: (folder, command -> its output,
    standard output then standard error)."""
    assert (BIN / "citecheck").is_file() and (BIN / "python").is_file(), f"no citecheck installed in {BIN}"
    folder = tmp_path_factory.mktemp("walkthrough")
    (folder / "sample_data").symlink_to(ROOT / "sample_data", target_is_directory=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CITECHECK_", "ANTHROPIC_")) and k.lower() not in ("no_proxy", "http_proxy", "https_proxy")}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", HTTPS_PROXY="http://127.0.0.1:9",
               HTTP_PROXY="http://127.0.0.1:9", PYTHONDONTWRITEBYTECODE="1")
    outputs: dict[str, str] = {}
    for command in COMMANDS:
        proc = subprocess.run(["bash", "-c", "\n".join([*ASSIGNMENTS, command])], cwd=folder, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"{command}\nexit {proc.returncode}\n{proc.stderr[-3000:]}"
        outputs[command] = proc.stdout + "\n" + proc.stderr
    return folder, outputs


def test_every_command_runs_offline_and_writes_what_the_docs_say(walkthrough):
    folder, _ = walkthrough
    for name in ("v.jsonl", "examples.json", "judge-card.md", "judge-card.json"):
        assert (folder / name).is_file(), name
    runs = verdict_store.runs(verdict_store.read(folder / "v.jsonl")[0])
    assert runs == [("baseline", "baseline.v1"), ("scripted", "scripted.v1")]


def test_every_quoted_output_is_what_its_command_prints(walkthrough):
    _, outputs = walkthrough
    quotes = quoted(SECTION)
    assert len(quotes) >= 6 and all(lines for _, lines in quotes)
    for command, lines in quotes:
        assert command in outputs, f"quoted command not in the shell block: {command}"
        printed = {line.rstrip() for line in outputs[command].replace("\r", "\n").splitlines()}
        missing = [line for line in lines if line not in printed]
        assert not missing, f"{command}: quoted but not printed: {missing}\n--- printed:\n{outputs[command][-4000:]}"


def test_the_docs_quote_the_figures_each_step_is_about():
    def said(*words: str) -> str:
        found = ["\n".join(lines) for command, lines in quoted(SECTION) if all(w in command for w in words)]
        assert found, words
        return "\n".join(found)

    assert "will show no flips" in said("citecheck judge ", "--judge baseline --repeat 3")
    assert "verdict changed across runs      0.00" in said("citecheck calibrate", "--judge baseline")  # zero flips
    assert "verdict changed across runs" in said("citecheck calibrate", "--judge scripted --split dev")
    assert "unstable items (" in said("citecheck calibrate", "--judge scripted --split dev")
    assert "verdict: " in said("citecheck compare-judges", "--split test")
    assert "recorded as judge.v3+ex." in said("citecheck judge-examples")
    assert "judge card written" in said("citecheck calibrate", "--card")


def test_the_real_command_the_stand_in_stands_for_is_shown_and_valid():
    comments = [line.lstrip("# ") for line in logical_lines(blocks(SECTION, "sh")[0]) if line.startswith("#")]
    real = [line for line in comments if line.startswith("citecheck judge") and "--judge claude" in line]
    assert len(real) == 1
    args = build_parser().parse_args(shlex.split(real[0])[1:])
    assert (args.judge, args.examples, args.repeat) == ("claude", "examples.json", 3)
    # the prompt version the docs tell a reader to use is the one judge-examples prints
    printed = re.search(r"recorded as (judge\.v3\+ex\.[0-9a-f]{12})", SECTION).group(1)
    folded = " ".join(SECTION.split())
    assert f"@{printed}`" in folded and f"--prompt {printed}`" in folded


# --- the scripted stand-in ------------------------------------------------------------------------


def load_script():
    spec = importlib.util.spec_from_file_location("scripted_judge", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


scripted = load_script()


def test_the_shares_the_docs_give_are_the_scripts_defaults():
    defaults = scripted.parser().parse_args(["--labels", "l", "--verdicts", "v", "--out", "o"])
    for name in ("learn", "forget", "flip"):
        assert f" {round(getattr(defaults, name) * 100)}% " in " ".join(SECTION.split()), name
    assert defaults.repeat == 3 and "python $L/scripted_judge.py" in SECTION


@given(hs.sampled_from(scripted.VERDICTS), hs.floats(0, 1, exclude_max=True))
def test_another_verdict_is_never_the_same_one(verdict, u):
    assert scripted.other(verdict, u) in set(scripted.VERDICTS) - {verdict}


@given(hs.integers(), hs.text(max_size=30), hs.integers(0, 9))
def test_draws_are_shares_fixed_by_their_inputs(seed, item, run):
    u = scripted.draw(seed, "flip", item, run)
    assert 0 <= u < 1 and u == scripted.draw(seed, "flip", item, run)


def wilson_holds(successes: int, n: int, p: float, z: float = 3.29) -> bool:
    """Whether the Wilson interval of successes/n at z (99.9% for the default) holds p."""
    share = successes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half <= p <= centre + half


def test_the_stand_in_follows_its_documented_policy(walkthrough):
    folder, _ = walkthrough
    found, errors = verdict_store.read(folder / "v.jsonl")
    assert not errors
    events, _ = label_store.read_events(LABELS)
    human = human_labels(label_store.effective(events), None, adjudicated=label_store.adjudications(events), overlap=1)
    base = {v.item: v for v in found if v.judge == "baseline" and v.repeat == 0}
    mine = {(v.item, v.repeat): v for v in found if v.judge == "scripted"}
    assert set(mine) == {(item, r) for item in base for r in range(3)}
    moves: Counter[str] = Counter()
    for item, b in base.items():
        first = mine[(item, 0)]
        assert first.fingerprint == b.fingerprint and first.prompt_sha256 and first.verdicts_version == 2
        if not b.scored:
            assert all(not mine[(item, r)].scored for r in range(3))
            continue
        h = human.get(item)
        if b.verdict != h:
            moves["disagreements"] += 1
            assert first.verdict in (b.verdict, h)  # a disagreement is fixed to the human label or left
            moves["learned"] += first.verdict == h
        else:
            moves["agreements"] += 1
            moves["forgot"] += first.verdict != b.verdict
        for r in (1, 2):
            moves["repeats"] += 1
            moves["flipped"] += mine[(item, r)].verdict != first.verdict
            assert ("flipped" in mine[(item, r)].rationale) == (mine[(item, r)].verdict != first.verdict)
    assert wilson_holds(moves["learned"], moves["disagreements"], 0.3)
    assert wilson_holds(moves["forgot"], moves["agreements"], 0.05)
    assert wilson_holds(moves["flipped"], moves["repeats"], 0.1)


def test_the_stand_in_is_deterministic_and_writes_each_run_once(walkthrough, tmp_path, capsys):
    folder, _ = walkthrough
    again = tmp_path / "again.jsonl"
    common = ["--labels", str(LABELS), "--verdicts", str(folder / "v.jsonl"), "--repeat", "3", "--out", str(again)]
    assert scripted.main(common) == 0
    assert scripted.main(common) == 0  # a second run finds every (item, run) written
    err = capsys.readouterr().err
    assert "written to" in err and "3228 verdict(s)" in err and "0 verdict(s)" in err and "3228 already there" in err

    def key(path):
        return sorted((v.item, v.repeat, v.verdict, v.rationale) for v in verdict_store.read(path)[0]
                      if v.judge == "scripted")

    assert key(again) == key(folder / "v.jsonl")


def test_the_stand_in_says_what_is_missing(tmp_path, capsys):
    empty = tmp_path / "v.jsonl"
    empty.write_text("", encoding="utf-8")
    code = scripted.main(["--labels", str(LABELS), "--verdicts", str(empty), "--out", str(empty)])
    assert code == 2 and "has no run-0 verdicts of baseline@baseline.v1" in capsys.readouterr().err
    code = scripted.main(["--labels", str(LABELS), "--verdicts", str(empty), "--out", str(empty), "--baseline", "x"])
    assert code == 2 and "is not JUDGE@PROMPT" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        scripted.parser().parse_args(["--labels", "l", "--verdicts", "v", "--out", "o", "--flip", "1.5"])
