"""``citecheck import langfuse``: Langfuse trace exports (API pages, the UI's download, JSON lines) to answers.

The fixtures in tests/fixtures/traces/langfuse_* are written by hand in the shapes Langfuse's public
API (``GET /api/public/traces/{id}``, its ``{"data": [...]}`` pages) and the UI's "Download trace as
JSON" give, with inputs and outputs double-encoded as that download writes them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from citecheck.checking.checker import check_answer
from citecheck.contract.log import read_log
from citecheck.errors import RecordError
from citecheck.importers.langfuse import read_langfuse
from citecheck.importers.trace_exports import documents_in, unwrap
from helpers import imported_traces, run_cli

TRACES = Path(__file__).parent / "fixtures" / "traces"


def test_a_rag_trace_gives_its_question_answer_documents_model_and_prompt_version():
    [rag, chat], errors, summary = imported(TRACES / "langfuse_traces.jsonl")
    assert rag.answer_id == "9f0c2d1e-7b3a-4c55-a1f0-3e2b8d6c4a10"
    assert rag.question == "What is the notice period if I resign during probation?"
    assert rag.answer == ("During probation the notice period is 14 days [1]. "
                          "After confirmation it rises to 60 days [2].")
    # LangChain documents from a RETRIEVER observation: ids and scores from their metadata
    assert [(c.chunk_id, c.source, c.title, c.retrieval_score) for c in rag.chunks] == [
        ("hr-exit-07", "policies/exit.md", "Leaving the company", 0.88),
        ("hr-exit-08", "policies/exit.md", "Leaving the company", 0.81)]
    assert rag.chunks[0].text == "Employees on probation may resign by giving 14 days' written notice."
    assert rag.model == "gpt-4o-2024-08-06" and rag.prompt_version == "3"  # the generation's promptVersion
    assert rag.timestamp == "2024-11-05T14:03:12.345Z"
    assert rag.extra["trace"]["citations"] == "markers"
    assert [c.chunk_id for c in check_answer(rag).citations] == ["hr-exit-07", "hr-exit-08"]
    assert summary.citations == {"markers": 1, "none": 1}


def test_a_bad_line_and_a_bad_observation_are_named_and_the_other_traces_still_come():
    [rag, chat], errors, summary = imported(TRACES / "langfuse_traces.jsonl")
    path = str(TRACES / "langfuse_traces.jsonl")
    assert [(e.file, e.line, e.field) for e in errors] == [(path, 2, "(json)"), (path, 3, "observations[0].endTime")]
    assert "'soon'" in errors[1].message
    # the trace whose generation could not be read is still imported from its own input and output
    assert chat.question == "Thanks, that helps!"
    assert chat.answer == "You're welcome! Ask me anything else about HR policies."
    assert chat.chunks == () and chat.extra["trace"]["notes"] == ["no retrieval among the spans read for this request"]
    assert summary.without_retrieval == 1


def test_an_agent_download_gives_the_trace_output_with_every_retrieval_in_order():
    [a], errors, summary = imported(TRACES / "langfuse_agent_download.json")
    assert errors == []
    trace_id = "b7e1c0d2a3f44e5f8a9b0c1d2e3f4a5b"
    assert a.answer_id == trace_id
    # the trace's input and output are JSON text holding JSON text: read layer by layer
    assert a.question == "Can I carry over unused leave, and is the office closed on Diwali?"
    assert a.answer.startswith("Yes: up to 45 days of unused earned leave carry over [1]. The office is closed on "
                               "Diwali [5], as the [gazetted list](https://www.example.gov.in/holidays-2025) shows.")
    assert "I will look up" not in a.answer and "Now the holidays" not in a.answer
    # RETRIEVER (documents as JSON text inside JSON text), the web search TOOL, then a SPAN of documents
    assert [c.chunk_id for c in a.chunks] == ["leave-3", f"{trace_id}:0000000000000003:1",  # no id: trace:span:index
                                              f"{trace_id}:0000000000000005:0", f"{trace_id}:0000000000000005:1",
                                              "cal-2024-11"]
    assert a.chunks[0].source == "handbook/leave.md" and a.chunks[0].retrieval_score == 0.91
    assert a.chunks[2].source == "https://www.example.gov.in/holidays-2025" and a.chunks[2].title == "Gazetted holidays 2025"
    assert a.chunks[3].text == "" and a.extra["trace"]["documents_without_text"] == [f"{trace_id}:0000000000000005:1"]
    assert a.chunks[4].text == "The office is closed on Diwali (1 November 2024)."
    assert a.extra["trace"]["citations"] == "markers+links"
    [link] = [c for c in a.citations if c.kind == "span"]
    assert a.answer[link.answer_start:link.answer_end].startswith("[gazetted list](https://www.example.gov.in/")
    assert link.chunk_id == f"{trace_id}:0000000000000005:0"
    assert a.model == "claude-sonnet-4-5" and a.prompt_version == "7"
    assert summary.documents == 5 and summary.documents_without_text == 1


def test_the_api_page_is_read_and_a_trace_of_observation_ids_is_named():
    [travel, canteen], errors, _ = imported(TRACES / "langfuse_api_page.json")
    assert travel.question == "Who approves travel above 50,000 rupees?"
    # no trace output: the outermost SPAN's; the SPAN whose output holds "hits" retrieved them
    assert travel.answer == "Travel above 50,000 rupees needs the department head's approval [1]."
    assert [(c.chunk_id, c.retrieval_score) for c in travel.chunks] == [("travel-12", 0.93), ("travel-13", 0.41)]
    assert travel.model == "gemini-2.0-flash" and travel.prompt_version == "travel-v2"  # from the span's metadata
    assert travel.extra["trace"]["root_span_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    [error] = errors
    assert (error.line, error.field) == (1, "data[1].observations[0]")
    assert "2 observation(s) given by id only" in error.message and "/api/public/traces/" in error.message
    assert canteen.answer == "On the ground floor." and canteen.chunks == ()


def test_observations_on_their_own_are_grouped_by_their_trace(tmp_path):
    page = json.loads((TRACES / "langfuse_api_page.json").read_text(encoding="utf-8"))
    observations = page["data"][0]["observations"]
    path = tmp_path / "observations.json"
    path.write_text(json.dumps({"data": observations, "meta": {"page": 1}}), encoding="utf-8")
    [a], errors, _ = imported(path)
    assert errors == []
    assert a.answer_id == "4bf92f3577b34da6a3ce929d0e0e4736"  # the root observation is the request's root
    assert a.question == "Who approves travel above 50,000 rupees?"
    assert [c.chunk_id for c in a.chunks] == ["travel-12", "travel-13"]


@pytest.mark.parametrize("record,field", [
    ('[1, 2]', "(record)"),
    ('{"name": "no id", "observations": []}', "id"),
    ('{"id": "t1", "observations": {"id": "o1"}}', "observations"),
    ('{"id": "t1", "observations": [{"id": "o1", "type": "SPAN", "startTime": true}]}', "observations[0].startTime"),
    ('{"id": "t1", "observations": [{"type": "GENERATION"}]}', "observations[0].id"),
    ('{"id": "t1", "timestamp": "2024-13-45T00:00:00Z", "observations": []}', "timestamp"),
])
def test_every_unreadable_part_names_its_field(tmp_path, record, field):
    path = tmp_path / "bad.jsonl"
    path.write_text(record + "\n" + (TRACES / "langfuse_traces.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n",
                    encoding="utf-8")
    answers, errors, _ = imported(path)
    assert [(e.file, e.line, e.field) for e in errors] == [(str(path), 1, field)]
    assert "9f0c2d1e-7b3a-4c55-a1f0-3e2b8d6c4a10" in [a.answer_id for a in answers]  # the good line still comes


def test_json_inside_json_is_parsed_layer_by_layer_but_text_stays_text():
    inner = json.dumps([{"id": "d1", "content": '{"looks": "like json"}'}])
    value = json.dumps(json.dumps({"documents": inner}))  # a string holding a string holding an object
    assert unwrap(value) == {"documents": [{"id": "d1", "content": '{"looks": "like json"}'}]}
    assert documents_in(value) == [{"id": "d1", "content": '{"looks": "like json"}'}]
    layered = "x"
    for _ in range(8):  # JSON text inside JSON text, eight layers: read a bounded number of them
        layered = json.dumps({"a": layered})
    assert isinstance(unwrap(layered), dict)
    deep = "[" * 500 + "]" * 500
    assert unwrap(deep)  # nesting deeper than the bound is kept as it is, no recursion error
    assert documents_in([{"role": "user", "content": "hi"}]) == []  # messages are not documents


def test_the_cli_writes_a_log_that_citecheck_check_reads(tmp_path):
    log = tmp_path / "langfuse.jsonl"
    code, _, err = run_cli("import", "langfuse", TRACES / "langfuse_traces.jsonl",
                           TRACES / "langfuse_agent_download.json", "--out", log)
    assert code == 4  # two malformed records, each named; the answers are written
    assert f"{TRACES / 'langfuse_traces.jsonl'}:3: observations[0].endTime:" in err
    assert "imported 3 answer(s); 2 unreadable record(s) left out, each said above" in err
    assert "citations: 1 with markers, 1 with markers+links, 1 with none" in err
    answers = [a for _, a in read_log(log) if not isinstance(a, RecordError)]
    assert [a.answer_id for a in answers] == ["9f0c2d1e-7b3a-4c55-a1f0-3e2b8d6c4a10",
                                              "2a7c1f90-5e34-4b8d-b0c2-6f9e1d3a5b77",
                                              "b7e1c0d2a3f44e5f8a9b0c1d2e3f4a5b"]
    code, out, _ = run_cli("check", log, "--format", "json")
    assert code == 0
    summary = [json.loads(line) for line in out.splitlines() if json.loads(line)["record"] == "summary"][0]
    assert summary["answers"] == 3 and summary["unreadable_lines"] == 0


def imported(*paths):
    return imported_traces(paths, read_langfuse, "langfuse")
