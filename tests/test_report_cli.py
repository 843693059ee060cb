"""`citecheck report`: the failed-answers figures without the browser."""

import csv
import io
import json
from pathlib import Path

from citecheck.cli.main import main
from citecheck.reports.golden import read_golden

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "sample_data" / "answers.jsonl"
CORPUS = ROOT / "sample_data" / "corpus"
GOLDEN = ROOT / "sample_data" / "golden.jsonl"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_report_text_on_the_sample():
    code, out, err = run("report", LOG, "--corpus", CORPUS, "--golden", GOLDEN)
    assert code == 0, err
    assert out.startswith("from 48 answer(s), no unreadable line; logs: ")
    assert "; corpus: " in out.splitlines()[0] and "sample_data/golden.jsonl" in out.splitlines()[0]
    assert "answers refused: 3 of 48 answers = 6.3%" in out  # 6.25 rounds half up
    assert "citations whose source document has changed: 3 of" in out
    for section in ("failure reasons", "by model", "by prompt version", "by week",
                    "refusals against the golden set", "retrieval against the golden set (k=5)"):
        assert f"\n{section}" in out
    assert "claude-haiku-4-5" in out and "answer.v2" in out


def test_report_json_matches_the_check_summary():
    _, out, _ = run("report", LOG, "--corpus", CORPUS, "--golden", GOLDEN, "--format", "json")
    report = json.loads(out)
    _, check_out, _ = run("check", LOG, "--corpus", CORPUS, "--format", "json")
    summary = json.loads(check_out.splitlines()[-1])
    headline = {f["key"]: f for f in report["headline"]}
    assert report["answers"] == summary["answers"] == 48
    assert headline["citation_failure_rate"]["count"] == summary["citations_failed"]
    assert headline["citation_failure_rate"]["total"] == summary["citations"]
    assert headline["uncited_sentence_rate"]["count"] == summary["uncited_sentences"]
    assert headline["unsupported_number_answers"]["count"] == summary["answers_with_unsupported_number"]
    assert {r["reason"]: r["count"] for r in report["reasons"]} == summary["reasons"]
    assert report["retrieval"]["answerable"] + report["retrieval"]["unanswerable"] + \
        report["retrieval"]["not_in_golden"] == 48
    assert sum(m["answers"] for m in report["by_model"]) == 48


def test_report_csv_is_one_long_table():
    _, out, _ = run("report", LOG, "--format", "csv", "--golden", GOLDEN)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert set(rows[0]) == {"section", "group", "figure", "count", "total", "rate"}
    sections = {r["section"] for r in rows}
    assert {"headline", "reason", "model", "prompt_version", "week", "refusals", "retrieval"} <= sections
    refused = next(r for r in rows if r["section"] == "headline" and r["figure"] == "refusal_rate")
    assert (refused["count"], refused["total"], refused["rate"]) == ("3", "48", "0.0625")


def test_report_goes_on_past_bad_lines(tmp_path):
    log = tmp_path / "mixed.jsonl"
    good = LOG.read_text(encoding="utf-8").splitlines()[:3]
    log.write_text("\n".join([good[0], "{not json", good[1], '{"log_version": 1}', good[2]]) + "\n", encoding="utf-8")
    code, out, err = run("report", log)
    assert code == 4
    assert out.startswith("from 3 answer(s), 2 unreadable line(s) left out")
    assert "corpus: none: changed sources are not checked" in out.splitlines()[0]
    assert f"{log}:2" in err and f"{log}:4" in err


def test_report_on_an_empty_log_says_so(tmp_path):
    log = tmp_path / "empty.jsonl"
    log.write_text("", encoding="utf-8")
    code, out, _ = run("report", log)
    assert code == 0 and "no answers to report on" in out


def test_bad_golden_lines_are_named_and_skipped(tmp_path):
    g = tmp_path / "golden.jsonl"
    g.write_text('{"question": "ok?", "chunk_ids": ["c1"]}\n{"question": ""}\n[1]\n'
                 '{"question": "q", "answerable": true, "chunk_ids": []}\n{"question": "none", "answerable": false}\n',
                 encoding="utf-8")
    questions, errors = read_golden(g)
    assert [(q.question, q.answerable, q.line) for q in questions] == [("ok?", True, 1), ("none", False, 5)]
    assert [(e.line, e.field) for e in errors] == [(2, "question"), (3, "(record)"), (4, "chunk_ids")]
    code, _, err = run("report", LOG, "--golden", g)
    assert code == 0 and f"golden set: skipped {g}:2: question" in err
