"""The byte form of ``check --format json`` (docs/check-report.md): compact JSON in UTF-8 with
non-ASCII text as itself; a record with a lone surrogate (the field name of a refused line) is
written with \\u escapes, so every line is valid UTF-8 and parses back to the same record."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
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
    with json_lines(out) as write:
        write({"a": "caf\u00e9"})
        write({"b": "trace.\udc00x"})
    out.write("after\n")
    out.flush()
    assert raw.getvalue().decode("utf-8").splitlines() == [
        "before", '{"a":"caf\u00e9"}', '{"b":"trace.\\udc00x"}', "after"]

    tty = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", line_buffering=True)
    with json_lines(tty) as write:
        write({"c": 1})
        assert tty.buffer.getvalue() == b'{"c":1}\n'  # (written as text, flushed at its newline)


class _Writes(io.RawIOBase):
    """A byte stream that keeps each write it is given."""

    def __init__(self):
        self.writes: list[bytes] = []

    def writable(self):
        return True

    def write(self, data):
        self.writes.append(bytes(data))
        return len(data)


def test_records_go_to_a_byte_stream_in_blocks_and_the_rest_when_the_block_ends_even_by_an_error():
    """A pipe's reader is woken once a block of records, not once a record; nothing is lost or
    reordered, and what is held when the work stops (an error included) is still written."""
    from citecheck.cli.common import REPORT_BLOCK, json_lines

    sink = _Writes()
    out = io.TextIOWrapper(sink, encoding="utf-8")
    records = [{"answer_id": f"a-{i}", "text": "x" * (i % 500)} for i in range(2000)]
    with pytest.raises(KeyboardInterrupt):
        with json_lines(out) as write:
            for record in records:
                write(record)
            raise KeyboardInterrupt
    whole = b"".join(sink.writes)
    assert whole == b"".join(orjson.dumps(r) + b"\n" for r in records)
    assert len(sink.writes) <= len(whole) // REPORT_BLOCK + 1
    assert all(len(w) >= REPORT_BLOCK for w in sink.writes[:-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipes are grown on Linux only")
def test_a_pipe_the_report_goes_to_is_grown_and_written_in_quarters_of_it(tmp_path):
    """Piped to another program, the report is written in blocks of a quarter of a pipe grown to
    1 MiB, so the writer does not stop at each block; a file gets the plain block, and a pipe
    the reader had made larger is not shrunk."""
    import fcntl

    from citecheck.cli.common import PIPE_SIZE, REPORT_BLOCK, report_block

    read, write = os.pipe()
    try:
        with open(write, "wb", closefd=False) as raw:
            assert fcntl.fcntl(write, fcntl.F_GETPIPE_SZ) < PIPE_SIZE
            assert report_block(raw) == PIPE_SIZE // 4
            assert fcntl.fcntl(write, fcntl.F_GETPIPE_SZ) == PIPE_SIZE
            fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, PIPE_SIZE // 16)
            fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, PIPE_SIZE)  # (the reader's own choice, as large)
            assert report_block(raw) == PIPE_SIZE // 4
    finally:
        os.close(read)
        os.close(write)
    with open(tmp_path / "report.jsonl", "wb") as raw:
        assert report_block(raw) == REPORT_BLOCK
    assert report_block(io.BytesIO()) == REPORT_BLOCK  # (no file descriptor at all)


def test_check_piped_to_another_program_writes_the_same_bytes_as_to_a_file(tmp_path):
    """The blocks change when the bytes are written, not which: the report read from a pipe by
    another process is byte for byte the report written to a file."""
    from citecheck.cli.common import PIPE_SIZE

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "core") + os.pathsep + env.get("PYTHONPATH", "")
    log = tmp_path / "answers.jsonl"
    log.write_bytes(SAMPLE.read_bytes() * 20)  # (a report of several blocks)
    command = [sys.executable, "-m", "citecheck", "check", str(log), "--format", "json"]
    to_file = tmp_path / "report.jsonl"
    with open(to_file, "wb") as handle:
        subprocess.run(command, stdout=handle, cwd=ROOT, env=env, timeout=120, check=False)
    piped = subprocess.run(" ".join(map(shlex.quote, command)) + " | cat", shell=True, capture_output=True,
                           cwd=ROOT, env=env, timeout=120, check=False)
    assert piped.stdout == to_file.read_bytes()
    assert piped.stdout.count(b"\n") == 48 * 20 + 1 and len(piped.stdout) > 3 * (PIPE_SIZE // 4)
