"""Commands and pages tell the truth about what they saved (issue 17): a full disk, a killed
``--out``, a torn answer log, calls that all failed, a batch API that cannot be reached."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx2 as httpx
import pytest
import streamlit as st
from citecheck.checking.files import check_options
from citecheck.cli.common import append_answer
from citecheck.cli.main import main
from citecheck.contract.log import read_log
from citecheck.errors import RecordError
from citecheck.judging import verdicts as verdict_store
from citecheck.judging.judges import ClaudeJudge, Progress, judge_items
from citecheck.judging.outcome import run_outcome
from citecheck.labelling import dataset
from citecheck.labelling import labels as label_store
from citecheck.llm import fake_api
from citecheck.storage.durable import WriteFailed
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG
from disk import FlakyWrite
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_judge_on_a_full_disk_says_so_exits_non_zero_and_counts_only_saved_verdicts(small_disk):
    out = small_disk / "verdicts.jsonl"
    (small_disk / "ballast").write_bytes(b"x" * (64 * 1024 - 4096))  # room for a few verdicts only
    code, _, err = run("judge", "--log", DEFAULT_LOG, "--corpus", DEFAULT_CORPUS, "--all-items",
                       "--judge", "baseline", "--out", out)
    saved, errors = verdict_store.read(out)
    assert code == 3 and errors == []
    assert "NOT saved: the disk is full" in err and "[Errno" not in err
    assert f"{len(saved)} verdict(s) saved in {out} before that" in err
    assert "verdict(s) written" not in err


def test_labels_export_out_keeps_the_previous_export_when_the_disk_fills(tmp_path, monkeypatch):
    labels = tmp_path / "labels.jsonl"
    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    for item in [i for i in data.all_items if i.citation is not None][:20]:
        label_store.append(labels, label_store.make_label(item, "supported", "ana", note="x" * 200))
    export = tmp_path / "export.csv"
    export.write_text("the previous export\n")
    FlakyWrite(monkeypatch, step=512, room=2048)
    code, _, err = run("labels", "export", labels, "--log", DEFAULT_LOG, "--corpus", DEFAULT_CORPUS,
                       "--format", "csv", "--out", export)
    assert code == 3 and f"the export {export} NOT saved: the disk is full" in err
    assert export.read_text() == "the previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.csv", "labels.jsonl"]


def test_import_out_killed_midway_leaves_the_previous_file_whole(tmp_path):
    source = tmp_path / "claims.jsonl"
    one = json.loads((ROOT / "tests" / "data" / "importers" / "claims.jsonl").read_text().splitlines()[0])
    with open(source, "w") as f:
        for n in range(100_000):
            f.write(json.dumps({**one, "answer_id": f"cl-{n}"}) + "\n")
    target = tmp_path / "imported.jsonl"
    target.write_text("the previous import\n")
    proc = subprocess.Popen([sys.executable, "-m", "citecheck.cli.main", "import", "claims", str(source),
                             "--out", str(target)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        seen = False
        while proc.poll() is None:  # kill as soon as the output is being written
            if any(p.name.startswith(".imported.jsonl.") for p in tmp_path.iterdir()):
                seen = True
                proc.send_signal(signal.SIGKILL)
                break
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert seen, "the import never wrote to a temporary file beside --out"
    assert target.read_text() == "the previous import\n"


def test_import_out_replaces_the_file_whole_when_done(tmp_path):
    target = tmp_path / "imported.jsonl"
    target.write_text("the previous import\n")
    code, _, err = run("import", "claims", ROOT / "tests" / "data" / "importers" / "claims.jsonl", "--out", target)
    assert code == 4 and "imported 2 answer(s)" in err
    answers = [a for _, a in read_log(target)]
    assert len(answers) == 2 and not any(isinstance(a, RecordError) for a in answers)
    assert [p.name for p in tmp_path.iterdir()] == ["imported.jsonl"]


def test_answer_log_appends_after_a_torn_line_on_a_fresh_line(tmp_path):
    log = tmp_path / "answers.jsonl"
    answers = [a for _, a in read_log(DEFAULT_LOG)][:2]
    append_answer(log, answers[0])
    with open(log, "ab") as f:
        f.write(b'{"log_version": 1, "answer_id": "torn')  # a crash mid-write
    append_answer(log, answers[1])
    read = list(read_log(log))
    assert [n for n, a in read if isinstance(a, RecordError)] == [2]
    assert [a.answer_id for _, a in read if not isinstance(a, RecordError)] == [answers[0].answer_id,
                                                                                answers[1].answer_id]


def test_api_errors_are_said_in_our_words_with_the_sdks_text_and_no_key():
    """The SDK's wording changes between releases (2.17 says "Connection to api.anthropic.com failed"
    where earlier ones said "Connection error."): what the commands print is ours, the SDK's in brackets."""
    import anthropic
    from citecheck.cli.common import api_error_text

    def call(reply):
        try:
            fake_api.client(reply, max_retries=0).messages.create(model="claude-haiku-4-5", max_tokens=10,
                                                           messages=[{"role": "user", "content": "hi"}])
        except anthropic.APIError as exc:
            return exc
        raise AssertionError("the call should have failed")

    def refused(body):
        raise httpx.ConnectError("connection refused")

    def slow(body):
        raise httpx.ReadTimeout("read timed out")

    said = {kind: api_error_text(call(reply)) for kind, reply in [
        ("connect", refused), ("timeout", slow),
        ("status", lambda body: fake_api.error(529, "overloaded_error", "Overloaded"))]}
    assert said["connect"].startswith("could not reach the Anthropic API (") and "ANTHROPIC_BASE_URL" in said["connect"]
    assert said["timeout"].startswith("the Anthropic API did not answer in time (")
    assert said["status"].startswith("the Anthropic API answered HTTP 529 (") and "Overloaded" in said["status"]
    assert not any("sk-ant-test-not-a-key" in text for text in said.values())


def test_judge_batch_with_the_api_unreachable_says_what_failed_and_exits_non_zero(tmp_path, monkeypatch):
    from citecheck.llm import client as llm_client

    def unreachable(body):
        raise httpx.ConnectError("connection refused")

    monkeypatch.setattr(llm_client, "make_client", lambda: fake_api.client(unreachable, max_retries=0))
    out = tmp_path / "v.jsonl"
    code, _, err = run("judge", "--log", DEFAULT_LOG, "--corpus", DEFAULT_CORPUS, "--all-items", "--judge", "claude",
                       "--batch", "--out", out, "--max-cost-usd", "0.05")
    assert code == 3 and "Traceback" not in err
    assert "could not reach the Anthropic API" in err and "run the same command again to resume" in err
    assert verdict_store.read(out) == ([], [])


def test_a_run_whose_every_call_failed_is_not_reported_as_judged():
    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    items = judge_items(data.results, None, data.items_by_answer)[:2]

    def unreachable(body):
        raise httpx.ConnectError("connection refused")

    progress = Progress(total=len(items))
    verdicts = ClaudeJudge(fake_api.client(unreachable, max_retries=0)).judge(items, progress=progress)
    assert [v.verdict for v in verdicts] == ["unscored", "unscored"] and progress.failed == 2
    outcome = run_outcome(progress, saved=2, already=0)
    assert outcome.kind == "error" and outcome.text.startswith("2 call(s) FAILED and 0 item(s) judged")
    ok = run_outcome(Progress(done=3, total=3, spent=0.01), saved=3, already=1)
    assert (ok.kind, ok.text) == ("success", "3 item(s) judged for $0.0100 (1 were already judged with this prompt).")
    full = run_outcome(Progress(done=3, total=5), saved=1, already=0,
                       write_error=WriteFailed("v.jsonl", "the verdict", OSError(28, "No space left on device")))
    assert full.kind == "error" and "the disk is full" in full.text and "2 judged but NOT saved" in full.text


@pytest.fixture
def app_on_a_full_disk(small_disk, monkeypatch):
    st.cache_resource.clear()
    st.cache_data.clear()
    labels = small_disk / "labels.jsonl"
    monkeypatch.setenv("CITECHECK_LOGS", str(DEFAULT_LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(DEFAULT_CORPUS))
    monkeypatch.setenv("CITECHECK_LABELS", str(labels))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(small_disk / "verdicts.jsonl"))
    return labels


def test_review_page_on_a_full_disk_says_the_label_is_not_saved(app_on_a_full_disk, small_disk):
    labels = app_on_a_full_disk
    item = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS)).all_items[0]
    (small_disk / "ballast").write_bytes(b"x" * (64 * 1024 - 4096))
    with pytest.raises(WriteFailed):  # fill the last page with other reviewers' labels
        for n in range(100):
            label_store.append(labels, label_store.make_label(item, "supported", f"old-{n}"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["answer"] = "a-001"
    at.run()
    at.sidebar.text_input[0].input("ana").run()
    at.button(key="key-supported").click().run()
    assert not at.exception
    page = "\n".join(str(h.proto.body) for h in at.get("html"))
    assert "Saved" not in page
    errors = page
    assert "\u201cSupported\u201d for sentence 1 was NOT saved: the disk is full" in errors
    assert "Errno" not in errors
    records, problems = label_store.read(labels)
    assert records and all(r.reviewer.startswith("old-") for r in records) and problems == []
