"""The typical mistakes of a new user, each with the one-line message that says what to do: the
table the CLI tests walk (argv, exit code, what standard error must say).  Paths are relative to
the checkout, as in the README."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from citecheck.cli.main import main
from citecheck.labelling import labels as label_store
from citecheck.labelling.dataset import load

ROOT = Path(__file__).resolve().parent.parent
LOG, CORPUS = "sample_data/answers.jsonl", "sample_data/corpus"
EQA_LABELS = "sample_data/expertqa/labels.jsonl"

MISTAKES = [
    # (what the user typed, exit code, what the message must say)
    (["labels", "export", "sample_data/", "--log", LOG], 2,
     ["citecheck labels export: the labels file sample_data/ is a folder: give the labels file itself"]),
    (["labels", "export", "no-such-labels.jsonl", "--log", LOG], 2,
     ["citecheck labels export: the labels file no-such-labels.jsonl does not exist"]),
    (["labels", "export", EQA_LABELS, "--log", LOG], 2,
     ["none of the 1,076 label(s) in", "the labels were made on other answers. Give the logs they were made on with --log"]),
    (["calibrate", "--labels", EQA_LABELS, "--log", LOG, "--verdicts", "{verdicts}"], 2,
     ["citecheck calibrate: none of the 1,076 label(s)", "Give the logs they were made on with --log"]),
    (["calibrate", "--labels", "sample_data/", "--verdicts", "{verdicts}"], 2,
     ["citecheck calibrate: the labels file sample_data/ is a folder"]),
    (["estimate", "--labels", "sample_data/", "--log", LOG, "--verdicts", "{verdicts}"], 2,
     ["citecheck estimate: the labels file sample_data/ is a folder"]),
    (["check", LOG, "--corpus", LOG], 2,
     [f"citecheck check: --corpus {LOG} is a file, not a folder: give the folder of the current source documents"]),
    (["report", LOG, "--corpus", "no-such-folder"], 2, ["corpus folder no-such-folder does not exist"]),
    (["labels", "export", "x.jsonl", "--lgo", LOG], 2,
     ["usage: citecheck labels export", "citecheck labels export: error: unrecognized arguments: --lgo"]),
    (["check", "--bogus", LOG], 2, ["usage: citecheck check", "citecheck check: error: unrecognized arguments: --bogus"]),
    (["store", "verify", "x", "--deep"], 2, ["usage: citecheck store verify", "unrecognized arguments: --deep"]),
    (["report", LOG, "--labels", "no-such-labels.jsonl"], 2,
     ["citecheck report: the labels file no-such-labels.jsonl does not exist"]),
    (["report", LOG, "--golden", "sample_data/"], 2, ["citecheck report: the golden set sample_data/ is a folder"]),
    (["report", LOG, "--golden", "no-such-golden.jsonl"], 2, ["the golden set no-such-golden.jsonl does not exist"]),
    (["app", "--corpus", "no-such-folder", "--port", "1"], 2, ["citecheck app: corpus folder ", "no-such-folder does not exist"]),
    (["app", "--log", "no-such.jsonl", "--port", "1"], 2, ["citecheck app: --log ", "no-such.jsonl: does not exist"]),
    (["app", "--store", "sample_data", "--port", "1"], 2, ["citecheck app: --store ", "sample_data is not a checked store"]),
    (["check", "sample_data/"], 2, ["citecheck check: sample_data/: is a folder, not a log file: give the .jsonl log file"]),
]


@pytest.fixture
def verdicts(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    assert main(["judge", "--log", LOG, "--all-items", "--judge", "baseline", "--out", str(path)],
                io.StringIO(), io.StringIO()) == 0
    return path


@pytest.mark.parametrize("argv, code, said", MISTAKES, ids=lambda v: " ".join(v) if isinstance(v, list) and
                         v and isinstance(v[0], str) and not v[0].startswith("citecheck") else None)
def test_a_typical_mistake_gets_a_message_that_says_what_to_do(argv, code, said, verdicts, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    argv = [a.replace("{verdicts}", str(verdicts)) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    try:
        got = main(argv, out, err)
    except SystemExit as exc:  # argparse's usage errors
        got = exc.code
    text = err.getvalue() + capsys.readouterr().err
    assert got == code, text
    for words in said:
        assert words in text, text
    assert "Errno" not in text and "Traceback" not in text
    if "usage: citecheck " in "".join(said):  # the command's own usage, not the top level's list of commands
        assert "{check,report" not in text


def test_labels_of_other_logs_mixed_in_are_counted_not_silently_dropped(tmp_path, monkeypatch):
    """Some labels of the sample, some from another log: export and calibrate use the sample's and
    say how many were for other items."""
    monkeypatch.chdir(ROOT)
    mixed = tmp_path / "labels.jsonl"
    shutil.copy(ROOT / EQA_LABELS, mixed)
    item = next(i for i in load([ROOT / LOG]).all_items if i.citation is not None)
    label_store.append(mixed, label_store.make_label(item, "supported", "ana"))
    out, err = io.StringIO(), io.StringIO()
    assert main(["labels", "export", str(mixed), "--log", LOG], out, err) == 0, err.getvalue()
    assert "note: 1,076 of 1,077 label(s) are for items not in the logs given and are left out" in err.getvalue()
    assert len(out.getvalue().splitlines()) == 1


@pytest.mark.parametrize("argv, instead", [
    (["judge", "--log", LOG, "--labels", EQA_LABELS, "--judge", "claude", "--out", "{tmp}/v.jsonl"],
     "or use --judge baseline, which needs no key and no network"),
    (["ask", "How many earned leave days do I get?", "--corpus", "sample_data/source"],
     "or use --dry-run to see the gate and the request"),
    (["run", "--questions", "{tmp}/q.jsonl", "--log", "{tmp}/log.jsonl", "--corpus", "sample_data/source"],
     "citecheck ask QUESTION --corpus DIR --dry-run shows"),
])
def test_a_command_that_needs_a_key_says_what_to_do_without_one(argv, instead, tmp_path, monkeypatch):
    """Without ANTHROPIC_API_KEY each command names what it can do instead: judge and run once said
    "or use --dry-run", an option neither has (argparse then refused it)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / "q.jsonl").write_text('{"id": "q1", "question": "How many earned leave days do I get?"}\n')
    out, err = io.StringIO(), io.StringIO()
    code = main([a.replace("{tmp}", str(tmp_path)) for a in argv], out, err)
    text = err.getvalue()
    assert code == 2 and "set ANTHROPIC_API_KEY in the environment to call Claude" in text and instead in text, text
    assert argv[0] == "ask" or "--dry-run)" not in text
    assert "Traceback" not in text


def test_the_judge_prompt_version_is_given_by_either_spelling_on_every_judging_command():
    """``judge`` and ``calibrate`` said ``--prompt``, ``estimate`` and ``sample`` ``--prompt-version``
    for the same thing; a user who learnt one was refused by the others.  Each now takes both."""
    from citecheck.cli.main import build_parser

    parser = build_parser()
    for argv, dest in ((["judge", "--labels", "l.jsonl", "--out", "v.jsonl"], "prompt"), (["calibrate", "--labels", "l", "--verdicts", "v"], "prompt"),
                       (["estimate", "--labels", "l", "--verdicts", "v", "--log", "a.jsonl"], "prompt_version"),
                       (["sample", "--size", "5", "--seed", "1", "--out", "s.jsonl", "--log", "a.jsonl"], "prompt_version")):
        for spelling in ("--prompt", "--prompt-version"):
            assert getattr(parser.parse_args([*argv, spelling, "judge.v3"]), dest) == "judge.v3", (argv[0], spelling)
