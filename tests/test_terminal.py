"""A log's text cannot drive the terminal of whoever runs citecheck: control characters (escape
sequences, carriage returns, bidirectional overrides) are printed as visible escapes, by every
command, and JSON output keeps its meaning."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from citecheck.cli.main import main
from citecheck.text.terminal import visible
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "answers.jsonl"
HOSTILE = "a-\x1b[2J\x1b]0;pwned\x07\r ok: verified \u202e\x9b31m"
BAD = {chr(c) for c in [*range(0, 9), *range(11, 32), *range(0x7F, 0xA0), 0x202E]}


def _log(tmp_path: Path) -> Path:
    first = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])
    first["answer_id"] = HOSTILE
    first["question"] = "Why?\x1b[31m"
    path = tmp_path / "hostile.jsonl"
    bad_line = '{"answer_id": "' + "\\u001b[2J" + '", "log_version": 99}'
    path.write_text(json.dumps(first) + "\n" + bad_line + "\n", encoding="utf-8")
    return path


def run(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", [["check"], ["check", "--quiet"], ["report"], ["report", "--format", "csv"]],
                         ids=" ".join)
def test_no_control_character_reaches_the_terminal(tmp_path, argv):
    log = _log(tmp_path)
    code, out, err = run([*argv, log])
    assert code in (1, 4)
    assert not (set(out) | set(err)) & BAD
    if argv == ["check"]:
        assert visible(HOSTILE) in out and "\\u001b[2J" in out


def test_json_output_keeps_the_text_it_escapes(tmp_path):
    log = _log(tmp_path)
    code, out, _ = run(["check", log, "--format", "json"])
    records = [json.loads(line) for line in out.splitlines()]
    assert HOSTILE in [r.get("answer_id") for r in records]
    assert not set(out) & BAD


def test_a_store_check_and_its_report_are_as_harmless(tmp_path):
    log = _log(tmp_path)
    for argv in (["check", log, "--store", tmp_path / "s"], ["report", "--store", tmp_path / "s"]):
        code, out, err = run(argv)
        assert not (set(out) | set(err)) & BAD, argv


@given(st.text())
def test_visible_text_has_no_control_character(text):
    assert not set(visible(text)) & BAD


@given(st.text(st.characters(blacklist_characters='\\"\n\t')))
def test_visible_escapes_are_json_escapes_of_the_same_characters(text):
    assert json.loads('"' + visible(text) + '"') == text


def test_check_never_says_verified_of_a_citation_it_could_not_verify(tmp_path):
    """A Cohere answer's citations carry no quote: not verifiable.  The per-answer line said
    "ok (4 citations verified)"; it must give the counts the summary gives."""
    data = ROOT / "tests" / "data" / "importers"
    log = tmp_path / "cohere.jsonl"
    code, _, err = run(["import", "cohere", "--response", data / "cohere_v2_response.json",
                        "--request", data / "cohere_v2_request.json", "--out", log])
    assert code == 0, err
    code, out, _ = run(["check", log])
    line = out.splitlines()[0]
    summary = next(s for s in out.splitlines() if s.startswith("citations:"))
    not_verifiable = int(summary.split("not verifiable ")[1])
    assert not_verifiable > 0 and f"{not_verifiable} not verifiable" in line
    records = [json.loads(r) for r in run(["check", log, "--format", "json"])[1].splitlines()]
    statuses = [c["status"] for r in records if r["record"] == "answer" for c in r["citations"]]
    verified, failed = statuses.count("verified"), statuses.count("failed")
    if failed:
        assert f"{failed} of {len(statuses)} citations failed, {not_verifiable} not verifiable" in line
    else:
        assert f"({verified} citation{'s' * (verified != 1)} verified, {not_verifiable} not verifiable)" in line


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_progress_line_overwrites_itself_on_a_terminal_and_is_a_line_in_a_pipe():
    """Issue found by a newcomer: ``citecheck judge`` printed its carriage returns as ``\\u000d``."""
    from citecheck.text.terminal import VisibleWriter, progress_line

    tty, pipe = _Tty(), io.StringIO()
    for stream in (tty, pipe):
        for n in (1, 2):
            progress_line(VisibleWriter(stream), f"[{n}/2] $0.0000 spent \x1b[2J")
    assert tty.getvalue() == "\r[1/2] $0.0000 spent \\u001b[2J\r[2/2] $0.0000 spent \\u001b[2J"
    assert pipe.getvalue() == "[1/2] $0.0000 spent \\u001b[2J\n[2/2] $0.0000 spent \\u001b[2J\n"
    assert "\\u000d" not in tty.getvalue() + pipe.getvalue()
