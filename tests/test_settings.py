"""One settings world: every shared setting is declared once (citecheck.config), and the command line
and the app read the same option, help text and environment variable for it."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

import pytest
from citecheck import config
from citecheck.cli.main import build_parser, main
from citecheck.labelling import labels as label_store
from citecheck.labelling.dataset import load
from citecheck.web import settings as app_settings

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "sample_data" / "answers.jsonl"
CORPUS = ROOT / "sample_data" / "corpus"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err):  # argparse writes its usage errors there
            code = main(argv, out, err)
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


def _setting_actions(parser: argparse.ArgumentParser, path: str = "citecheck"):
    """(command, setting, action) for every option of every command that is a declared setting."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    taken = parser.get_default("_citecheck_settings") or {}
    for action in parser._actions:
        if action.dest in taken:
            yield path, config.BY_NAME[taken[action.dest]], action
    for sub in subs:
        for name, child in sub.choices.items():
            yield from _setting_actions(child, f"{path} {name}")


CLI_SETTINGS = list(_setting_actions(build_parser()))


def test_the_walk_finds_the_shared_settings_in_many_commands():
    names = {(command, s.name) for command, s, _ in CLI_SETTINGS}
    assert {("citecheck check", "log"), ("citecheck calibrate", "labels"), ("citecheck estimate", "verdicts"),
            ("citecheck labels export", "labels"), ("citecheck report", "store")} <= names
    assert sum(1 for _, s, _ in CLI_SETTINGS if s.name == "labels") >= 5


@pytest.mark.parametrize("command,setting,action", CLI_SETTINGS,
                         ids=[f"{c}:{s.name}" for c, s, _ in CLI_SETTINGS])
def test_a_setting_says_the_same_in_every_command_and_names_its_variable(command, setting, action):
    assert action.help.startswith(setting.help) and action.help.endswith(f"(env {setting.env})")


def test_the_app_takes_every_setting_with_the_same_help():
    parser = app_settings._parser()
    helps = {a.dest: a.help for a in parser._actions if a.dest in config.BY_NAME}
    assert set(helps) == set(config.BY_NAME)
    for name, text in helps.items():
        setting = config.BY_NAME[name]
        assert text.startswith(setting.help) and text.endswith(f"(env {setting.env})")


def test_check_reads_its_logs_from_the_variable_as_the_app_does(monkeypatch):
    given = run(["check", str(LOG), "--corpus", str(CORPUS), "--format", "json"])
    monkeypatch.setenv("CITECHECK_LOGS", str(LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(CORPUS))
    from_env = run(["check", "--format", "json"])
    assert given == from_env and given[0] in (0, 1)
    assert app_settings.load_settings([], {"CITECHECK_LOGS": str(LOG)}).logs == (LOG.resolve(),)


def test_an_option_given_wins_over_its_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("CITECHECK_CORPUS", str(tmp_path / "no such folder"))
    code, out, err = run(["check", str(LOG), "--corpus", str(CORPUS), "--quiet"])
    assert code in (0, 1) and "does not exist" not in err
    code, _, err = run(["check", str(LOG), "--quiet"])  # the variable, naming a missing folder, is used
    assert code == 2 and "does not exist" in err


def test_labels_from_the_variable_in_every_command_that_takes_them(monkeypatch, tmp_path):
    data = load([LOG])
    item = data.all_items[0]
    labels_file = tmp_path / "labels.jsonl"
    label_store.append(labels_file, label_store.make_label(item, "not_supported", "ana"))
    monkeypatch.setenv("CITECHECK_LABELS", str(labels_file))
    by_arg = run(["labels", "export", str(labels_file), "--log", str(LOG)])
    by_env = run(["labels", "export", "--log", str(LOG)])
    assert by_arg == by_env and by_env[0] == 0
    assert json.loads(by_env[1].splitlines()[0])["item"] == item.key
    code, out, _ = run(["report", str(LOG), "--format", "json"])
    human = [row for row in json.loads(out)["headline"] if row["key"] == "human_not_supported_rate"]
    assert code == 0 and human and (human[0]["count"], human[0]["total"]) == (1, 1)


def test_a_required_setting_missing_names_its_variable(monkeypatch):
    monkeypatch.delenv("CITECHECK_LABELS", raising=False)
    code, _, err = run(["calibrate", "--verdicts", "v.jsonl"])
    assert code == 2 and "--labels (or set CITECHECK_LABELS)" in err
    monkeypatch.delenv("CITECHECK_LOGS", raising=False)
    code, _, err = run(["check"])
    assert code == 2 and "LOG (or set CITECHECK_LOGS)" in err


def test_a_bad_count_is_said_the_same_way_by_the_cli_and_the_app(monkeypatch):
    monkeypatch.setenv("CITECHECK_OVERLAP", "two")
    code, _, err = run(["calibrate", "--labels", "l.jsonl", "--verdicts", "v.jsonl"])
    assert code == 2 and "--overlap / CITECHECK_OVERLAP must be a whole number of reviewers, not 'two'" in err
    with pytest.raises(SystemExit, match="CITECHECK_OVERLAP must be a whole number of reviewers, not 'two'"):
        app_settings.load_settings([], {"CITECHECK_OVERLAP": "two"})
    with pytest.raises(SystemExit, match="must be at least 1, not 0"):
        app_settings.load_settings(["--overlap", "0"], {})


def test_an_empty_variable_switches_an_optional_path_off():
    assert app_settings.load_settings([], {"CITECHECK_CORPUS": ""}).corpus is None
    assert app_settings.load_settings([], {}).corpus == CORPUS.resolve()


def test_commands_whose_options_only_look_alike_do_not_read_the_variables(monkeypatch, tmp_path):
    """``check --store`` writes a store: CITECHECK_STORE (what the app and ``report`` read) must not
    turn every ``check`` into a store write."""
    monkeypatch.setenv("CITECHECK_STORE", str(tmp_path / "store"))
    code, _, _ = run(["check", str(LOG), "--corpus", str(CORPUS), "--quiet"])
    assert code in (0, 1) and not (tmp_path / "store").exists()
    args = build_parser().parse_args(["ask", "q?", "--corpus", str(CORPUS)])
    monkeypatch.setenv("CITECHECK_LOGS", str(LOG))
    assert config.fill_from_environment(args) is None and args.log is None


def test_report_from_a_store_ignores_check_options_set_for_the_app(monkeypatch, tmp_path):
    """``report --store`` refuses --corpus/--casefold/--refusal given on its line (they belong to the
    check into the store), but the same variables set for the app must not make it fail."""
    store = tmp_path / "store"
    assert run(["check", str(LOG), "--corpus", str(CORPUS), "--store", str(store), "--quiet"])[0] in (0, 1)
    code, _, err = run(["report", "--store", str(store), "--corpus", str(CORPUS)])
    assert code == 2 and "--corpus, --casefold and --refusal are set when checking" in err
    monkeypatch.setenv("CITECHECK_CORPUS", str(CORPUS))
    monkeypatch.setenv("CITECHECK_CASEFOLD", "1")
    code, out, err = run(["report", "--store", str(store)])
    assert code == 0 and "answers" in out, err


def test_judge_without_labels_or_all_items_says_what_to_give(monkeypatch, tmp_path):
    """It crashed with a TypeError (labels.read(None)) before; the variable does as the option."""
    monkeypatch.delenv("CITECHECK_LABELS", raising=False)
    code, _, err = run(["judge", "--log", str(LOG), "--out", str(tmp_path / "v.jsonl")])
    assert code == 2 and "give --labels (or set CITECHECK_LABELS)" in err
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "no labels yet.jsonl"))
    code, _, err = run(["judge", "--log", str(LOG), "--out", str(tmp_path / "v.jsonl")])
    assert code == 2 and f"the labels file {tmp_path / 'no labels yet.jsonl'} does not exist" in err  # (named)
    (tmp_path / "no labels yet.jsonl").write_text("", encoding="utf-8")
    code, _, err = run(["judge", "--log", str(LOG), "--out", str(tmp_path / "v.jsonl")])
    assert code == 0, err


@pytest.mark.parametrize("data,code", [(b"", 8), (b"garbage\n{\n", 12)], ids=["empty", "all-unreadable"])
def test_a_gate_over_no_answers_fails(tmp_path, data, code):
    """``check empty.jsonl --max-failure-rate 0.05`` exited 0: a CI gate passed when logging broke."""
    log = tmp_path / "log.jsonl"
    log.write_bytes(data)
    got, _, err = run(["check", str(log), "--max-failure-rate", "0.05"])
    assert got == code and "no answers to measure" in err
    got, _, err = run(["check", str(log), "--max-failure-rate", "0.05", "--store", str(tmp_path / "store")])
    assert got == code and "no answers to measure" in err
    assert run(["check", str(log)])[0] == code & 4  # without a gate: as before


def test_the_sample_golden_set_and_corpus_go_with_the_sample_answers_only(tmp_path):
    """The bundled golden set and corpus are the sample log's: an app given its own log or a store
    (whose answers are not the sample's) has none unless told (a new user's Failures page on their
    own store named the sample's golden set)."""
    from citecheck.web.settings import load_settings

    plain = load_settings([], {})
    assert plain.golden == ROOT / "sample_data" / "golden.jsonl" and plain.corpus == CORPUS
    for argv in (["--log", str(tmp_path / "mine.jsonl")], ["--store", str(tmp_path / "store")]):
        own = load_settings(argv, {})
        assert (own.golden, own.corpus) == (None, None), argv
    told = load_settings(["--store", str(tmp_path / "store"), "--golden", str(LOG)], {})
    assert told.golden == LOG and told.store == tmp_path / "store"
    sample_store = load_settings(["--store", str(tmp_path / "store"), "--log", str(LOG)], {})  # (the sample's, said)
    assert sample_store.golden == ROOT / "sample_data" / "golden.jsonl" and sample_store.corpus == CORPUS
    assert load_settings([], {"CITECHECK_STORE": str(tmp_path / "store")}).golden is None
