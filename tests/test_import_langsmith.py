"""``citecheck import langsmith``: LangSmith runs (run trees with child_runs, flat runs) to answers.

The fixtures in tests/fixtures/traces/langsmith_* are written by hand in the shapes the LangSmith
SDK gives runs (``Run.dict()``, ``Client.list_runs``): LangChain's serialised messages and
documents, ``generations`` of llm runs, ``dotted_order``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from citecheck.checking.checker import check_answer
from citecheck.importers.langsmith import read_langsmith
from citecheck.importers.otel import import_spans
from citecheck.importers.spans import Span
from citecheck.importers.traces import TraceSummary
from helpers import imported_traces, run_cli

TRACES = Path(__file__).parent / "fixtures" / "traces"
AGENT = "7a6b5c4d-3e2f-4a1b-8c0d-9e8f7a6b5c4d"


def test_a_run_tree_gives_the_chains_answer_and_the_retrievers_documents():
    [a], errors, _ = imported(TRACES / "langsmith_rag_tree.json")
    assert errors == []
    assert a.answer_id == "1e0f3a52-6b7c-4d8e-9f01-23456789abcd"
    assert a.question == "How many sick days can I take without a doctor's note?"
    assert a.answer == ("You can take up to 2 consecutive sick days without a note [1]. "
                        "From the third day a medical certificate is required [2].")
    assert [(c.chunk_id, c.source, c.retrieval_score) for c in a.chunks] == [
        ("sick-02", "handbook/sick-leave.md", 0.87), ("sick-03", "handbook/sick-leave.md", 0.83),
        ("casual-01", "handbook/casual-leave.md", 0.52)]
    assert a.chunks[0].text == "Sick leave of up to two consecutive days does not need a medical certificate."
    assert a.model == "gpt-4o-mini" and a.prompt_version == "hr-rag-v5"  # invocation_params; root extra.metadata
    assert a.timestamp == "2024-10-02T11:20:30.512Z"  # no zone written: UTC
    assert a.extra["trace"]["citations"] == "markers"
    assert [c.chunk_id for c in check_answer(a).citations] == ["sick-02", "sick-03"]


def test_the_llm_runs_messages_and_generations_are_read_from_langchains_serialised_objects():
    spans = {s.name: s for s in read_langsmith(str(TRACES / "langsmith_rag_tree.json")) if isinstance(s, Span)}
    llm = spans["ChatOpenAI"]
    assert llm.kind == "LLM" and llm.parent_id == "1e0f3a52-6b7c-4d8e-9f01-23456789abcd"
    assert [m["message"]["role"] for m in llm.attributes["llm.input_messages"]] == ["system", "user"]
    assert llm.attributes["llm.output_messages"][0]["message"]["content"].startswith("You can take up to 2")
    assert spans["ChatPromptTemplate"].kind == "PROMPT" and spans["StrOutputParser"].kind == "CHAIN"


def test_flat_agent_runs_in_any_order_give_the_final_answer_and_both_retrievals():
    [agent, translate], errors, summary = imported(TRACES / "langsmith_agent_runs.jsonl")
    assert agent.answer_id == AGENT
    assert agent.question == "Can I carry over unused leave, and is the office closed on Diwali?"
    # the root's last AI message, not the intermediate calls
    assert agent.answer == "Yes: up to 45 days of unused earned leave carry over [1]. The office is closed on Diwali [4]."
    # the retriever, the search tool's JSON inside a ToolMessage, then a retriever with no trace_id (its parent's trace)
    assert [c.chunk_id for c in agent.chunks] == ["leave-3", "leave-9", f"{AGENT}:7a6b5c4d-0000-4000-8000-000000000006:0",
                                                  "cal-2024-11"]
    assert agent.chunks[1].text == "" and agent.extra["trace"]["documents_without_text"] == ["leave-9"]
    assert agent.chunks[2].source == "https://www.example.gov.in/holidays-2025"
    assert agent.chunks[3].retrieval_score == 0.77  # the score kept in the document's metadata
    assert agent.model == "claude-sonnet-4-5" and agent.prompt_version == "agent-v7"
    assert agent.extra["trace"]["citations"] == "markers" and "notes" not in agent.extra["trace"]
    # a trace without retrieval: epoch-millisecond times, a child found by its dotted_order
    assert translate.question == "Translate 'leave policy' into Hindi." and translate.answer == "अवकाश नीति"
    assert translate.model == "gpt-4o-mini" and translate.timestamp == "2024-11-06T09:20:00.000Z"
    assert translate.extra["trace"]["notes"] == ["no retrieval among the spans read for this request"]
    path = str(TRACES / "langsmith_agent_runs.jsonl")
    assert [(e.file, e.line, e.field) for e in errors] == [(path, 5, "(json)"), (path, 13, "start_time")]
    assert summary.without_retrieval == 1


def test_the_apis_runs_page_and_nested_child_runs_name_the_bad_run(tmp_path):
    tree = json.loads((TRACES / "langsmith_rag_tree.json").read_text(encoding="utf-8"))
    tree["child_runs"][2]["end_time"] = "later"
    tree["child_runs"].append("not a run")
    path = tmp_path / "page.json"
    path.write_text(json.dumps({"runs": [tree], "cursors": {"next": None}}), encoding="utf-8")
    [a], errors, _ = imported(path)
    assert [(e.line, e.field) for e in errors] == [(1, "runs[0].child_runs[4]"), (1, "runs[0].child_runs[2].end_time")]
    assert a.answer.startswith("You can take up to 2") and len(a.chunks) == 3  # the rest still read


@pytest.mark.parametrize("run,field", [
    ({"name": "no id", "run_type": "chain"}, "id"),
    ({"id": "r1", "run_type": "chain", "start_time": True}, "start_time"),
    ({"id": "r1", "run_type": "chain", "start_time": "2024-10-02T11:20:30", "end_time": "2024-02-30T00:00:00"},
     "end_time"),
])
def test_an_unreadable_run_is_named_and_the_next_line_still_comes(tmp_path, run, field):
    path = tmp_path / "runs.jsonl"
    good = (TRACES / "langsmith_rag_tree.json").read_text(encoding="utf-8")
    path.write_text(json.dumps(run) + "\n" + json.dumps(json.loads(good)) + "\n", encoding="utf-8")
    answers, errors, _ = imported(path)
    assert [(e.line, e.field) for e in errors] == [(1, field)]
    assert [a.answer_id for a in answers] == ["1e0f3a52-6b7c-4d8e-9f01-23456789abcd"]


def test_the_cli_writes_a_log_that_citecheck_check_reads(tmp_path):
    log = tmp_path / "langsmith.jsonl"
    code, _, err = run_cli("import", "langsmith", TRACES / "langsmith_rag_tree.json",
                           TRACES / "langsmith_agent_runs.jsonl", "--out", log)
    assert code == 4
    assert f"{TRACES / 'langsmith_agent_runs.jsonl'}:13: start_time: expected a time" in err
    assert "imported 3 answer(s); 2 unreadable record(s) left out, each said above" in err
    code, out, _ = run_cli("check", log, "--format", "json")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["answer_id"] for r in records if r["record"] == "answer"] == [
        "1e0f3a52-6b7c-4d8e-9f01-23456789abcd", AGENT, "9c8b7a6f-5e4d-4c3b-a291-0f1e2d3c4b5a"]
    assert [r for r in records if r["record"] == "summary"][0]["unreadable_lines"] == 0


def test_a_run_without_a_type_is_a_bad_record_not_an_empty_answer(tmp_path):
    from citecheck.importers.langsmith import read_langsmith

    path = tmp_path / "runs.jsonl"
    path.write_text('{"id": "bad", "run_type": 5}\n')
    [error] = list(import_spans([str(path)], read_langsmith, "langsmith", TraceSummary()))
    assert error.line == 1 and error.field == "run_type" and "is required" in error.message


def imported(*paths):
    return imported_traces(paths, read_langsmith, "langsmith")
