"""``citecheck import phoenix``: Phoenix spans dataframes (JSON lines and Parquet) to answers.

The fixtures tests/fixtures/traces/phoenix_* are written by hand as ``get_spans_dataframe()`` rows
saved with ``df.to_json(orient="records", lines=True)``: ``attributes.*`` columns, lists of objects
with dotted keys (``document.content``, ``message.role``), epoch-millisecond or ISO times.  The
Parquet files are made from the same rows with pandas in each test.  phoenix_rag.jsonl is the
request of openinference_rag.jsonl (OTLP JSON), and the two must give the same answer.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest
from citecheck.contract.log import answer_to_dict
from citecheck.errors import FieldError, RecordError
from citecheck.importers.phoenix import nested, read_phoenix
from citecheck.importers.spans import read_otlp
from citecheck.importers.trace_exports import epoch_nanos
from helpers import imported_traces, run_cli

TRACES = Path(__file__).parent / "fixtures" / "traces"


def to_parquet(name: str, tmp_path: Path) -> Path:
    """The fixture's rows as get_spans_dataframe() holds them (times as UTC Timestamps), saved with to_parquet."""
    rows = [json.loads(line) for line in (TRACES / name).read_text(encoding="utf-8").splitlines()]
    frame = pd.DataFrame(rows)
    for column in ("start_time", "end_time"):
        numeric = frame[column].map(lambda v: isinstance(v, int | float))
        frame[column] = pd.to_datetime(frame[column], unit="ms", utc=True) if numeric.all() else \
            pd.to_datetime(frame[column], utc=True, format="ISO8601")
    path = tmp_path / name.replace(".jsonl", ".parquet")
    frame.set_index("context.span_id", drop=False).rename_axis(None).to_parquet(path)
    return path


def comparable(answer):
    data = answer_to_dict(answer)
    trace = data.pop("trace")
    return data, {k: v for k, v in trace.items() if k not in ("format", "service")}


def test_a_rag_request_gives_its_question_answer_and_documents():
    [a], errors, summary = imported(TRACES / "phoenix_rag.jsonl")
    assert errors == []
    assert a.answer_id == "5b8efff798038103d269b633813fc60c"
    assert a.question == "How many days of earned leave do employees get?"
    assert a.answer == "Employees get 18 days of earned leave per year [1]. Unused days carry over up to 45 days [2]."
    assert [(c.chunk_id, c.source, c.retrieval_score) for c in a.chunks] == [
        ("leave-policy-2", "handbook/leave.md", 0.82), ("leave-policy-3", "leave-policy-3", 0.77)]
    assert a.chunks[0].title == "Leave policy"  # document.metadata as the dataframe holds it: an object
    assert a.model == "claude-sonnet-4-5" and a.prompt_version == "rag-v3"
    assert a.timestamp == "2024-12-05T12:00:00.000Z"  # epoch milliseconds, as to_json writes datetimes
    assert a.extra["trace"] == {"format": "phoenix", "trace_id": "5b8efff798038103d269b633813fc60c",
                                "root_span_id": "eee19b7ec3c1b174", "citations": "markers"}
    assert summary.citations == {"markers": 1}


def test_the_same_request_as_otlp_json_and_as_phoenix_rows_gives_the_same_answer(tmp_path):
    [otlp], otlp_errors, _ = imported(TRACES / "openinference_rag.jsonl", read=read_otlp, fmt="otel")
    [rows], row_errors, _ = imported(TRACES / "phoenix_rag.jsonl")
    [parquet], parquet_errors, _ = imported(to_parquet("phoenix_rag.jsonl", tmp_path))
    assert otlp_errors == row_errors == parquet_errors == []
    assert comparable(otlp) == comparable(rows) == comparable(parquet)
    assert (otlp.question, otlp.answer, otlp.citations) == (rows.question, rows.answer, rows.citations)
    assert otlp.chunks == rows.chunks == parquet.chunks
    assert otlp.extra["trace"]["citations"] == rows.extra["trace"]["citations"] == "markers"


def test_an_agent_gives_its_output_with_both_retrievals_and_the_search_tool_in_order():
    [agent, chat], errors, summary = imported(TRACES / "phoenix_agent.jsonl")
    trace = "0af7651916cd43dd8448eb211c80319c"
    assert agent.question == "Which laptop can new engineers order, and who approves it?"
    assert agent.answer.startswith("New engineers can order a 14-inch laptop with 32 GB of memory [1]. "
                                   "Their manager approves the order [3]")
    assert [c.chunk_id for c in agent.chunks] == ["hw-4", f"{trace}:b7ad6b7169203333:1", "hw-9", "hw-10",
                                                  f"{trace}:b7ad6b7169203336:0"]
    assert agent.chunks[2].text == "" and agent.extra["trace"]["documents_without_text"] == ["hw-9"]
    assert agent.chunks[4].source == "https://it.example.com/hardware"
    assert agent.extra["trace"]["citations"] == "markers+links"
    assert [(agent.answer[c.answer_start:c.answer_end], c.chunk_id) for c in agent.citations if c.kind == "span"] == [
        ("https://it.example.com/hardware", f"{trace}:b7ad6b7169203336:0")]
    assert agent.model == "gpt-4.1" and agent.prompt_version == "it-agent-v2"  # the last LLM; the root's metadata
    # a lone LLM span that failed, without retrieval
    assert chat.question == "Good morning!" and chat.answer == "Good morning! How can I help?"
    assert chat.extra["trace"]["span_errors"] == ["RateLimitError: retried once"]
    assert chat.extra["trace"]["notes"] == ["no retrieval among the spans read for this request"]
    path = str(TRACES / "phoenix_agent.jsonl")
    assert [(e.file, e.line, e.field, e.message) for e in errors] == [
        (path, 4, "context.span_id", "is required (the span's id)")]
    assert summary.without_retrieval == 1


def test_parquet_and_json_lines_of_the_same_rows_give_the_same_answers_and_errors(tmp_path):
    path = to_parquet("phoenix_agent.jsonl", tmp_path)
    from_json, json_errors, _ = imported(TRACES / "phoenix_agent.jsonl")
    from_parquet, parquet_errors, _ = imported(path)
    assert [comparable(a) for a in from_parquet] == [comparable(a) for a in from_json]
    assert [(e.line, e.field) for e in parquet_errors] == [(e.line, e.field) for e in json_errors] == [
        (4, "context.span_id")]


def test_a_file_that_is_not_parquet_is_named(tmp_path):
    path = tmp_path / "spans.parquet"
    path.write_bytes(b"PAR1 not really")
    [error] = list(read_phoenix(str(path)))
    assert isinstance(error, RecordError) and error.file == str(path) and "cannot read this Parquet file" in error.message


@pytest.mark.parametrize("value,expected", [
    ("2024-12-05T12:00:00Z", 1733400000 * 10**9),
    ("2024-12-05T12:00:00.123456789Z", 1733400000 * 10**9 + 123456789),
    ("2024-12-05T17:30:00.5+05:30", 1733400000 * 10**9 + 500_000_000),
    ("2024-12-05 12:00:00.000000", 1733400000 * 10**9),  # no zone: UTC
    (1733400000000, 1733400000 * 10**9),  # epoch milliseconds
    (1733400000, 1733400000 * 10**9),  # seconds
    (1733400000000000000, 1733400000 * 10**9),  # nanoseconds
    (datetime(2024, 12, 5, 12, tzinfo=timezone.utc), 1733400000 * 10**9),
    (pd.Timestamp("2024-12-05T12:00:00.000000001Z"), 1733400000 * 10**9 + 1),
    (None, None), (float("nan"), None), ("", None),
])
def test_times_in_every_written_form(value, expected):
    assert epoch_nanos(value, "start_time") == expected


@pytest.mark.parametrize("value", [True, "yesterday", -5, "2024-02-30T00:00:00Z", [1]])
def test_a_time_that_is_not_one_names_its_column(value):
    with pytest.raises(FieldError) as caught:
        epoch_nanos(value, "start_time")
    assert caught.value.field == "start_time"


def test_dotted_keys_inside_list_items_are_nested_and_empty_cells_dropped():
    assert nested([{"document.id": "a", "document.metadata": {"file.name": "x"}, "document.score": None}]) == [
        {"document": {"id": "a", "metadata": {"file.name": "x"}}}]
    assert nested({"prompt.version": "v1"}) == {"prompt.version": "v1"}  # an object cell keeps its keys


def test_the_cli_reads_parquet_and_writes_a_log_that_citecheck_check_reads(tmp_path):
    log = tmp_path / "phoenix.jsonl"
    code, _, err = run_cli("import", "phoenix", to_parquet("phoenix_agent.jsonl", tmp_path),
                           TRACES / "phoenix_rag.jsonl", "--out", log)
    assert code == 4
    assert "phoenix_agent.parquet:4: context.span_id: is required" in err
    assert "imported 3 answer(s); 1 unreadable record(s) left out, each said above" in err
    code, out, _ = run_cli("check", log, "--format", "json")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["answer_id"] for r in records if r["record"] == "answer"] == [
        "0af7651916cd43dd8448eb211c80319c", "1cb1e6a0f3b94e2b8c7d6e5f4a3b2c1d", "5b8efff798038103d269b633813fc60c"]
    assert [r for r in records if r["record"] == "summary"][0]["unreadable_lines"] == 0


def test_an_id_that_is_a_number_is_refused_naming_its_column(tmp_path):
    from citecheck.importers.phoenix import read_phoenix

    path = tmp_path / "spans.jsonl"
    path.write_text('{"context.span_id": "aa00000000000001", "context.trace_id": 12, "name": "x"}\n')
    [error] = list(read_phoenix(str(path)))
    assert (error.line, error.field) == (1, "context.trace_id") and "as text" in error.message


def imported(*paths, read=read_phoenix, fmt="phoenix"):
    return imported_traces(paths, read, fmt)
