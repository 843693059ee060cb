"""The byte form of ``check --format json`` (docs/check-report.md): compact JSON in UTF-8 with
non-ASCII text as itself; a record with a lone surrogate (the field name of a refused line) is
written with \\u escapes, so every line is valid UTF-8 and parses back to the same record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from citecheck.reports.check_report import report_line

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "answers.jsonl"


def test_a_record_is_one_compact_utf8_line():
    record = {"record": "answer", "text": "caf\u00e9 \u201cq\u201d", "n": [1, 2], "rate": 0.0625, "none": None}
    line = report_line(record)
    assert line == '{"record":"answer","text":"caf\u00e9 \u201cq\u201d","n":[1,2],"rate":0.0625,"none":null}\n'
    assert json.loads(line) == record


def test_a_lone_surrogate_is_escaped_and_parses_back():
    record = {"record": "error", "field": "trace.\udc00x", "message": "caf\u00e9"}
    line = report_line(record)
    line.encode("utf-8")  # valid UTF-8: no lone surrogate is written as itself
    assert "\\udc00" in line and "\\u00e9" in line and line.endswith("}\n") and ": " not in line
    assert json.loads(line) == record


def test_check_writes_valid_utf8_lines_for_a_log_with_a_lone_surrogate_key(tmp_path):
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    bad = lines[1][:-1] + ', "trace": {"\\udc00x": 1}}'
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join([lines[0], bad, "\u00e9t\u00e9 not json", lines[2]]) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "citecheck.cli.main", "check", str(log), "--format", "json"],
                          capture_output=True, cwd=ROOT, env=dict(os.environ), timeout=120)
    assert done.returncode == 4, done.stderr[-2000:]
    records = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    assert [r["record"] for r in records] == ["answer", "error", "error", "answer", "summary"]
    assert records[1]["field"] == "trace.\udc00x"
    assert records[2]["line"] == 3


def test_records_written_as_bytes_keep_their_place_between_text_lines():
    """check --format json writes records straight to stdout's byte stream; text written before and
    after (the summary) stays in order, and a line-buffered terminal gets each line as text."""
    import io

    from citecheck.cli.common import json_lines

    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", write_through=False)
    out.write("before\n")
    write = json_lines(out)
    write({"a": "caf\u00e9"})
    write({"b": "trace.\udc00x"})
    out.write("after\n")
    out.flush()
    assert raw.getvalue().decode("utf-8").splitlines() == [
        "before", '{"a":"caf\u00e9"}', '{"b":"trace.\\udc00x"}', "after"]

    tty = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", line_buffering=True)
    json_lines(tty)({"c": 1})
    assert tty.buffer.getvalue() == b'{"c":1}\n'  # (written as text, flushed at its newline)
