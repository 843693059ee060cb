"""Issue #11: every page says what it loaded (unreadable lines, a folder, a missing or empty log, an
uploaded log), and re-reads a log that changed on disk."""

import io
import json
import os
from pathlib import Path

import pytest
import streamlit as st
from citecheck.cli.main import main
from citecheck.errors import RecordError
from citecheck.reports.rates import percent
from citecheck.web import notices
from citecheck.web.settings import DEFAULT_LOG
from helpers import open_tab
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PAGES = ["pages/review.py", "pages/failures.py", "pages/calibration.py", "pages/data.py"]
LINES = DEFAULT_LOG.read_text(encoding="utf-8").splitlines()


@pytest.fixture(autouse=True)
def env(tmp_path, monkeypatch):
    st.cache_resource.clear()
    st.cache_data.clear()
    monkeypatch.setenv("CITECHECK_CORPUS", "")
    monkeypatch.setenv("CITECHECK_GOLDEN", "")
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def use_log(monkeypatch, path) -> None:
    monkeypatch.setenv("CITECHECK_LOGS", str(path))


def page(name: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    if name != PAGES[0]:
        at.switch_page(name).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def banner(at) -> str:
    return "\n".join(str(h.proto.body) for h in at.get("html") if "cc-notice" in str(h.proto.body))


@pytest.mark.parametrize("name", PAGES)
def test_every_page_says_how_many_lines_it_could_not_read(tmp_path, monkeypatch, name):
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join([LINES[0], "not json", "{", "[1]", '{"log_version": 2}', LINES[1]]) + "\n")
    use_log(monkeypatch, log)
    at = page(name)
    text = banner(at)
    assert "4 of 6 line(s) could not be read" in text
    if name != "pages/data.py":
        assert 'href="./data"' in text
    if name == "pages/failures.py":
        assert not any("No answer fails a check" in s.value for s in at.success)


@pytest.mark.parametrize("name", PAGES)
@pytest.mark.parametrize("kind, words", [("dir", "is a folder"), ("missing", "does not exist"), ("empty", "is empty"),
                                         ("blank", "is empty")])
def test_a_folder_a_missing_and_an_empty_log_each_get_their_own_message(tmp_path, monkeypatch, name, kind, words):
    log = tmp_path / "log.jsonl"
    if kind == "dir":
        log.mkdir()
    elif kind == "empty":
        log.write_bytes(b"")
    elif kind == "blank":
        log.write_bytes(b"\n  \n\n")
    use_log(monkeypatch, log)
    text = banner(page(name))
    assert f"The log <code>{log}</code> {words}" in text
    assert "line(s) could not be read" not in text


@pytest.mark.parametrize("kind, words, code", [("dir", "is a folder", 2), ("missing", "does not exist", 2),
                                               ("empty", "is empty", 0)])
def test_the_commands_say_the_same(tmp_path, kind, words, code):
    log = tmp_path / "log.jsonl"
    if kind == "dir":
        log.mkdir()
    elif kind == "empty":
        log.write_bytes(b"")
    for command in ("check", "report"):
        out, err = io.StringIO(), io.StringIO()
        assert main([command, str(log)], out, err) == code
        assert f"{log}: {words}" in err.getvalue()


def test_the_app_re_reads_a_log_that_changed_on_disk(tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    log.write_text(LINES[0] + "\n" + LINES[1] + "\n")
    use_log(monkeypatch, log)
    at = page("pages/data.py")
    assert at.metric[0].value == "2"
    with open(log, "a") as handle:
        handle.write(LINES[2] + "\n")
    os.utime(log, ns=(os.stat(log).st_atime_ns, os.stat(log).st_mtime_ns + 10**9))
    at.run()
    assert at.metric[0].value == "3"


def test_notice_facts_and_terminal_lines():
    errors = [RecordError("a.jsonl", 0, "(file)", "is a folder, not a log file"),
              RecordError("b.jsonl", 3, "(json)", "not valid JSON"), RecordError("b.jsonl", 5, "answer_id", "x")]
    facts = notices.load_facts(10, errors)
    assert facts == notices.LoadFacts((("a.jsonl", "is a folder, not a log file"),), 2, 10)
    assert notices.plain_lines(facts) == ["citecheck: log a.jsonl is a folder, not a log file",
                                          "citecheck: 2 of 12 lines could not be read (listed on the Data page)"]
    assert notices.notice_html(notices.load_facts(3, [])) == ""
    html = notices.notice_html(notices.load_facts(0, [RecordError("<b>x</b>.jsonl", 0, "(file)", "is empty")]),
                               uploaded="**up**<i>.jsonl")
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;.jsonl" in html
    assert "<code>**up**&lt;i&gt;.jsonl</code>" in html


def test_the_data_page_shows_an_uploaded_log_in_use(tmp_path, monkeypatch):
    use_log(monkeypatch, DEFAULT_LOG)
    at = page("pages/data.py")
    from citecheck.labelling import dataset

    at.session_state["uploaded"] = dataset.load_bytes("mine.jsonl", (LINES[0] + "\n").encode())
    at.session_state["uploaded_name"] = "mine.jsonl"
    at.session_state["use_upload"] = True
    at.run()
    assert "Showing the uploaded log <code>mine.jsonl</code>" in banner(at)
    assert at.metric[0].value == "1"


def test_a_row_of_the_failures_table_opens_its_answer_whatever_its_id(tmp_path, monkeypatch):
    from citecheck.checking.checker import check_answer
    from citecheck.contract.log import parse_line

    failing = next(line for line in LINES if not check_answer(parse_line(line)).ok)
    ids = ["q&a=1", "a#b", "why?x", "a/b", "100%", "two words", "é中"]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({**json.loads(failing), "answer_id": i}) + "\n" for i in ids))
    use_log(monkeypatch, log)
    got = {}
    for i in ids:
        at = open_tab(page("pages/failures.py"), "Failing answers")
        table = next(d for d in at.dataframe if "reasons" in d.value.columns).value
        at.session_state["failing_table"] = {"selection": {"rows": [list(table["answer_id"]).index(i)],
                                                          "columns": [], "cells": []}}
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        got[i] = at.query_params["answer"]
    assert got == {i: i for i in ids}


def test_an_upload_may_be_a_json_array_or_one_pretty_printed_answer():
    from citecheck.labelling import dataset

    array = dataset.load_bytes("a.json", ("[" + ",\n".join(LINES[:3]) + "]").encode())
    assert [a.answer_id for a in array.answers] == [json.loads(line)["answer_id"] for line in LINES[:3]]
    assert not array.errors
    pretty = dataset.load_bytes("a.json", json.dumps(json.loads(LINES[0]), indent=2).encode())
    assert [a.answer_id for a in pretty.answers] == [json.loads(LINES[0])["answer_id"]] and not pretty.errors
    mixed = dataset.load_bytes("a.json", ("[" + LINES[0] + ', {"x": 1}, "\\ud800"]').encode())
    assert len(mixed.answers) == 0 and mixed.errors[0].field == "[2]"  # a lone surrogate: the whole document
    bad_item = dataset.load_bytes("a.json", ("[" + LINES[0] + ', {"x": 1}]').encode())
    assert len(bad_item.answers) == 1
    (error,) = bad_item.errors
    assert error.field == "[1].log_version" and "JSON Lines" in error.message
    lines = dataset.load_bytes("a.jsonl", ("\n".join(LINES[:3]) + "\n").encode())
    assert len(lines.answers) == 3 and not lines.errors


def test_the_refusal_sentence_is_not_flagged_as_an_error(monkeypatch):
    from citecheck.review.html import flags_html

    assert flags_html(["refusal sentence"], refusal=True) == '<div class="cc-meta">refusal sentence</div>'
    assert flags_html(["refusal sentence", "uncited"], refusal=True).endswith('<div class="cc-fail">uncited</div>')
    assert flags_html(["uncited"], refusal=False) == '<div class="cc-fail">uncited</div>'
    use_log(monkeypatch, DEFAULT_LOG)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["answer"] = "a-046"  # a refusal in the sample log
    at.run()
    assert not at.exception
    html = "\n".join(str(h.proto.body) for h in at.get("html"))
    assert '<div class="cc-meta">refusal sentence</div>' in html
    assert '<div class="cc-fail">refusal sentence</div>' not in html


def test_labels_made_on_an_uploaded_log_go_to_the_labels_file_the_data_page_names(tmp_path, monkeypatch):
    from citecheck.labelling import dataset, labels

    use_log(monkeypatch, DEFAULT_LOG)
    at = page("pages/data.py")
    table = next(d.value for d in at.dataframe if "setting" in d.value.columns)
    shown = dict(zip(table["setting"], table["value"]))
    mine = json.loads(LINES[0])
    mine["answer_id"] = "uploaded-1"
    at.session_state["uploaded"] = dataset.load_bytes("mine.jsonl", (json.dumps(mine) + "\n").encode())
    at.session_state["uploaded_name"] = "mine.jsonl"
    at.session_state["use_upload"] = True
    at.switch_page("pages/review.py").run()
    assert "Showing the uploaded log <code>mine.jsonl</code>" in banner(at)
    at.sidebar.text_input[0].input("ana").run()
    at.button(key="key-supported").click().run()
    assert not at.exception
    records, _ = labels.read(shown["labels"])
    assert [(r.answer_id, r.reviewer) for r in records] == [("uploaded-1", "ana")]


def _readme_command(word: str) -> list[str]:
    """The README's example of ``citecheck <word> sample_data/...``, as its arguments."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(x for x in readme.splitlines() if x.startswith(f"citecheck {word} sample_data/"))
    return line.split("#")[0].split()[1:]


def test_the_sample_headline_is_the_same_from_check_report_failures_and_data(monkeypatch):
    """The README's commands and the app's defaults read the same inputs (the corpus included),
    so the failing-answer and failed-citation shares agree everywhere (#31: 25.0% / 11.9% from
    the command against 27.1% / 15.3% in the app)."""
    monkeypatch.chdir(ROOT)
    for name in ("CITECHECK_CORPUS", "CITECHECK_GOLDEN", "CITECHECK_LOGS", "CITECHECK_STORE"):
        monkeypatch.delenv(name, raising=False)
    out, err = io.StringIO(), io.StringIO()
    assert main(_readme_command("check") + ["--format", "json"], out, err) == 0, err.getvalue()
    summary = json.loads(out.getvalue().splitlines()[-1])
    from_check = {"failing_answers": (summary["answers_failing"], summary["answers"]),
                  "citation_failure_rate": (summary["citations_failed"], summary["citations"])}
    out = io.StringIO()
    assert main(_readme_command("report") + ["--format", "json"], out, err) == 0, err.getvalue()
    report = json.loads(out.getvalue())
    from_report = {f["key"]: (f["count"], f["total"]) for f in report["headline"] if f["key"] in from_check}
    assert from_report == from_check
    assert report["inputs"]["corpus"] == summary["inputs"]["corpus"] == "sample_data/corpus"
    shown = {key: percent(count, total) for key, (count, total) in from_check.items()}
    assert shown == {"failing_answers": "27.1%", "citation_failure_rate": "15.3%"}  # the sample's, with its corpus

    titles = {"failing_answers": "Failing answers", "citation_failure_rate": "Failed citations"}
    for name in ("pages/failures.py", "pages/data.py"):
        at = page(name)
        metrics = {m.label: m.value for m in at.metric}
        assert {key: metrics[titles[key]] for key in shown} == shown, name
        said = "\n".join(str(h.proto.body) for h in at.get("html") if "cc-inputs" in str(h.proto.body))
        assert "<b>corpus</b> sample_data/corpus" in said and "48 answer(s)" in said, name
