import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from citecheck.cli.main import main
from citecheck.contract import reasons

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"
LOG = SAMPLE / "answers.jsonl"
CORPUS = SAMPLE / "corpus"
GOLDEN = Path(__file__).parent / "data" / "cli"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def records(text):
    return [json.loads(line) for line in text.splitlines()]


def test_check_json_report_matches_golden_file():
    code, out, _ = run("check", str(LOG), "--corpus", str(CORPUS), "--format", "json")
    assert code == 0
    recs = records(out)
    summary = recs[-1]
    assert summary["record"] == "summary" and summary["answers"] == 48
    per_answer = {r["answer_id"]: {"citations": [c["reasons"] for c in r["citations"]],
                                   "sentences": [[*s["reasons"], *(["uncited"] if s["uncited"] else [])]
                                                 for s in r["sentences"]]}
                  for r in recs if r["record"] == "answer"}
    got = {"summary": {k: v for k, v in summary.items() if k != "record"}, "answers": per_answer}
    golden = GOLDEN / "sample_check.json"
    if os.environ.get("CITECHECK_UPDATE_GOLDEN"):
        golden.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert got == json.loads(golden.read_text(encoding="utf-8"))


def test_the_answers_counts_add_up_to_the_summary():
    """Each answer record's counts, summed, are the summary's (the sample has refusals, whose
    refusal sentence neither counts: it used to count in the answer's and not in the summary's)."""
    _, out, _ = run("check", str(LOG), "--corpus", str(CORPUS), "--format", "json")
    recs = records(out)
    summary, answers = recs[-1], [r for r in recs if r["record"] == "answer"]
    assert any(r["refused"] for r in answers)
    for count, total in (("sentences", "sentences"), ("uncited_sentences", "uncited_sentences"),
                         ("citations", "citations"), ("citations_failed", "citations_failed")):
        assert sum(r["counts"][count] for r in answers) == summary[total], count


@pytest.mark.parametrize("argv", [["report", str(LOG), "--golden", str(ROOT / "sample_data" / "golden.jsonl")],
                                  ["report", str(LOG)], ["eval-retrieval", str(LOG), str(ROOT / "sample_data" / "golden.jsonl")]])
@pytest.mark.parametrize("k", ["0", "-3", "two"])
def test_a_k_below_one_is_a_usage_error_not_a_traceback(argv, k, capsys):
    """``--k 0`` raised a ValueError with a traceback and exit 1, the gate's failure code."""
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--k", k])
    assert stopped.value.code == 2 and "argument --k: expected" in capsys.readouterr().err


def test_sample_shows_every_reason_code_and_is_mostly_clean():
    _, out, _ = run("check", str(LOG), "--corpus", str(CORPUS), "--format", "json")
    summary = records(out)[-1]
    assert all(summary["reasons"][code] >= 1 for code in reasons.ALL_REASONS), summary["reasons"]
    assert summary["answers"] >= 40 and summary["answers_ok"] > summary["answers"] / 2
    assert summary["refused"] >= 1 and summary["uncited_sentences"] >= 1 and summary["multi_claim_sentences"] >= 1


def test_without_corpus_source_changed_is_not_reported():
    _, out, _ = run("check", str(LOG), "--format", "json")
    assert records(out)[-1]["reasons"][reasons.SOURCE_CHANGED] == 0


def test_text_report_names_failures():
    code, out, _ = run("check", str(LOG), "--corpus", str(CORPUS))
    assert code == 0
    assert "a-001: ok" in out
    assert "quote_not_found" in out and "marker_out_of_range" in out
    assert "citations: " in out and "uncited sentences:" in out


def test_max_failure_rate_gate():
    assert run("check", str(LOG), "--max-failure-rate", "0.5")[0] == 0
    code, _, err = run("check", str(LOG), "--max-failure-rate", "0.01")
    assert code == 1 and "above --max-failure-rate" in err


def test_unreadable_lines_are_named_and_the_rest_checked(tmp_path):
    lines = LOG.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[2])
    broken["chunks"][0]["checksum"] = 5
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([lines[0], "{oops", json.dumps(broken), lines[1]]) + "\n", encoding="utf-8")
    code, out, err = run("check", str(path), "--format", "json")
    assert code == 4
    recs = records(out)
    assert [r["record"] for r in recs] == ["answer", "error", "error", "answer", "summary"]
    assert recs[2] == {"record": "error", "report_version": 1, "file": str(path), "line": 3,
                       "field": "chunks[0].checksum", "message": "expected a string or null, got int"}
    assert f"{path}:2: (json)" in err
    assert recs[-1]["unreadable_lines"] == 2 and recs[-1]["answers"] == 2
    code, _, _ = run("check", str(path), "--max-failure-rate", "0")
    assert code in (4, 5)


def test_missing_file_is_a_usage_error(tmp_path):
    code, _, err = run("check", str(tmp_path / "nope.jsonl"))
    assert code == 2 and "no such file" in err


def test_import_writes_log_lines_that_check(tmp_path):
    data = Path(__file__).parent / "data" / "importers"
    out_file = tmp_path / "imported.jsonl"
    code, _, err = run("import", "claims", str(data / "claims.jsonl"), "--out", str(out_file))
    assert code == 4 and "skipped" in err and "imported 2 answer(s)" in err
    code, out, _ = run("check", str(out_file), "--format", "json")
    assert code == 0 and records(out)[-1]["answers"] == 2
    code, out, err = run("import", "anthropic", "--request", str(data / "anthropic_request.json"),
                         "--response", str(data / "anthropic_response.json"))
    assert code == 0 and json.loads(out)["answer_id"] == "msg_01XFDUDYJgAACzvnptvVoYEL"


def test_console_script_runs():
    proc = subprocess.run([sys.executable, "-m", "citecheck.cli.main", "check", str(LOG), "--quiet"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and "answers: 48" in proc.stdout


def test_generator_is_deterministic(tmp_path):
    subprocess.run([sys.executable, str(SAMPLE / "generate.py"), str(tmp_path)], check=True, capture_output=True)
    assert (tmp_path / "answers.jsonl").read_bytes() == LOG.read_bytes()
    assert (tmp_path / "golden.jsonl").read_bytes() == (SAMPLE / "golden.jsonl").read_bytes()
    for doc in CORPUS.iterdir():
        assert (tmp_path / "corpus" / doc.name).read_bytes() == doc.read_bytes()


@pytest.mark.parametrize("module", sorted(p for p in (ROOT / "core").rglob("*.py")))
def test_core_never_imports_streamlit(module):
    text = module.read_text(encoding="utf-8")
    assert "import streamlit" not in text and "from streamlit" not in text


def test_a_refused_answer_that_fails_says_why(tmp_path):
    """A refusal with an uncited claim after it fails (the summary counts it failing); its line in
    the text report said only "refused"."""
    log = tmp_path / "rf.jsonl"
    log.write_text(json.dumps({"log_version": 1, "answer_id": "rf", "question": "q", "refused": True, "chunks": [],
                               "answer": "I cannot answer from the sources. But refunds take 9 days."}) + "\n"
                   + json.dumps({"log_version": 1, "answer_id": "r2", "question": "q", "refused": True, "chunks": [],
                                 "answer": "I cannot answer from the sources."}) + "\n", encoding="utf-8")
    _, out, _ = run("check", str(log))
    assert f"{log}:1 rf: refused, but 0 of 0 citations failed, 1 uncited sentence(s)" in out
    assert "\u201cBut refunds take 9 days.\u201d: uncited" in out
    assert f"{log}:2 r2: refused\n" in out
