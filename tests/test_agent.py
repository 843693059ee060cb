"""The capped search agent behind the support-floor gate, through the real SDK and a mock
transport: tool-use turns as the API shapes them, the turn and budget caps, tool errors, and the
citation contract (an answer citing a chunk it never read fails the check)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from citecheck.checking.checker import CheckOptions, check_answer
from citecheck.contract import reasons
from citecheck.llm import fake_api
from citecheck.pipeline import answering
from citecheck.pipeline.assembly import REFUSAL
from citecheck.pipeline.retrieval import load_index

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sample_data"))
import scripted_agent  # noqa: E402

GAP = "Maternity time off length?"  # BM25 top score 0.0: the gate refuses
AGENT = answering.PipelineConfig(agent_fallback=True)


@pytest.fixture(scope="module")
def index():
    return load_index(ROOT / "sample_data" / "source")


def ask(index, reply, config=AGENT, log=None, budget=None):
    return answering.answer_question(fake_api.client(reply, log), index, GAP, "g-1", config, budget or answering.Budget())


def test_without_the_flag_the_gate_refuses_with_no_call(index):
    log: list = []
    a = ask(index, scripted_agent.reply, answering.PipelineConfig(), log)
    assert a.refused and a.answer == REFUSAL and a.extra["refused_by"] == "gate" and log == []
    assert "agent" not in a.extra


def test_the_agent_recovers_a_refused_question_and_keeps_the_citation_contract(index):
    log: list = []
    a = ask(index, scripted_agent.reply, log=log)
    trace = a.extra["agent"]
    assert not a.refused and a.extra["answered_by"] == "agent" and a.extra["gate"]["decision"] == "refuse"
    assert trace["queries"] == [GAP, scripted_agent.rephrase(GAP)] and trace["read"] == ["leave-policy-4"]
    assert trace["turns"] == 4 and len(log) == 4 and trace["stopped"] is None
    assert [c.chunk_id for c in a.chunks] == ["leave-policy-4"]
    # The tool turns went out as the API shapes them: tool_use answered by tool_result with its id.
    second = log[1]["body"]["messages"]
    assert second[1]["content"][0]["type"] == "tool_use"
    assert second[2]["content"][0]["type"] == "tool_result"
    assert second[2]["content"][0]["tool_use_id"] == second[1]["content"][0]["id"]
    assert log[3]["body"]["messages"][-1]["content"][0]["content"].startswith("Source [1] (leave-policy-4")
    result = check_answer(a, CheckOptions(refusals=(REFUSAL,)))
    assert result.tally.failed == 0 and result.tally.uncited == 0 and a.citations[0].quote in a.chunks[0].text
    assert a.extra["cost_usd"] == pytest.approx(trace["cost_usd"]) and trace["cost_usd"] > 0


def test_the_turn_cap_gives_the_exact_refusal(index):
    log: list = []
    a = ask(index, scripted_agent.reply, answering.PipelineConfig(agent_fallback=True, agent_max_turns=3), log)
    assert a.refused and a.answer == REFUSAL and a.extra["refused_by"] == "agent_cap"
    assert a.extra["agent"]["turns"] == 3 and len(log) == 3 and a.extra["agent"]["stopped"].startswith("turns")


def test_the_budget_cap_is_checked_before_each_call(index):
    log: list = []
    # Each call's worst case is about $0.016 here (Sonnet 4.5, 800 output tokens) and a call really
    # costs about $0.003: two calls fit in $0.02, a third could go over.
    a = ask(index, scripted_agent.reply, answering.PipelineConfig(agent_fallback=True, agent_budget_usd=0.02), log)
    trace = a.extra["agent"]
    assert a.refused and a.answer == REFUSAL and trace["stopped"].startswith("budget")
    assert len(log) == trace["turns"] == 2 and trace["cost_usd"] <= 0.02


def test_an_unknown_chunk_id_is_a_tool_error_and_the_loop_goes_on(index):
    def reply(body):
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turn == 0:
            return fake_api.message([scripted_agent.tool_use("read", {"chunk_id": "no-such-chunk"}, 0)], stop_reason="tool_use")
        if turn == 1:
            return fake_api.message([scripted_agent.tool_use("read", {"chunk_id": "leave-policy-4"}, 1)], stop_reason="tool_use")
        return fake_api.message(
            'Parental leave is 16 weeks at full pay for the primary caregiver [1].\nQUOTES:\n'
            '[1] "Parental leave is 16 weeks at full pay for the primary caregiver"')

    log: list = []
    a = ask(index, reply, log=log)
    first_result = log[1]["body"]["messages"][2]["content"][0]
    assert first_result["is_error"] is True and "unknown chunk id 'no-such-chunk'" in first_result["content"]
    assert a.extra["agent"]["tool_errors"] and a.extra["agent"]["read"] == ["leave-policy-4"]
    assert not a.refused and check_answer(a).tally.failed == 0


def test_an_answer_citing_a_chunk_it_never_read_fails_the_check(index):
    def reply(body):
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turn == 0:
            return fake_api.message([scripted_agent.tool_use("read", {"chunk_id": "leave-policy-4"}, 0)], stop_reason="tool_use")
        return fake_api.message('Parental leave is 16 weeks [1]. Sick leave is 10 days per year [2].\nQUOTES:\n'
                         '[1] "Parental leave is 16 weeks"\n[2] "Sick leave is 10 days per year"')

    a = ask(index, reply)
    result = check_answer(a, CheckOptions(refusals=(REFUSAL,)))
    assert result.invalid_markers == (2,)  # only one chunk was read: [2] points at nothing
    second = result.sentences[1]
    assert second.uncited and not result.sentences[0].uncited
    assert reasons.MARKER_OUT_OF_RANGE in {r for c in result.citations for r in c.reasons}


def test_an_api_error_ends_the_loop_with_the_refusal(index):
    a = ask(index, lambda body: fake_api.error(400, "invalid_request_error", "bad"))
    assert a.refused and a.answer == REFUSAL and a.extra["refused_by"] == "agent_error"
    assert "HTTP 400" in a.extra["agent"]["stopped"]


def test_the_question_is_fenced_and_the_log_line_round_trips(index):
    from citecheck.contract.log import dumps, parse_line

    log: list = []
    a = ask(index, scripted_agent.reply, log=log)
    first = log[0]["body"]["messages"][0]["content"]
    assert first.startswith("<question_") and GAP in first
    assert parse_line(dumps(a)).extra["agent"] == json.loads(dumps(a))["agent"]


def test_every_vocabulary_gap_question_is_refused_by_the_gate_and_names_a_real_chunk(index):
    from citecheck.pipeline.gate import SAMPLE_FLOOR, decide
    from citecheck.reports.golden import read_golden

    questions, errors = read_golden(ROOT / "sample_data" / "vocabulary_gap.jsonl")
    ids = {c.chunk_id for c in index.chunks}
    assert not errors and len(questions) >= 10
    for q in questions:
        assert not decide(index.search(q.question, 8), SAMPLE_FLOOR).passed, q.question
        assert q.answerable and set(q.chunk_ids) <= ids


@pytest.mark.live
@pytest.mark.skipif(not (__import__("os").environ.get("CITECHECK_LIVE") == "1"
                         and __import__("os").environ.get("ANTHROPIC_API_KEY")),
                    reason="calls the real Anthropic API: set CITECHECK_LIVE=1 and ANTHROPIC_API_KEY")
def test_live_the_agent_keeps_the_citation_contract_on_vocabulary_gap_questions(index):
    """With a real model: every answer the agent gives cites only chunks it read and passes the
    mechanical checks; prints how many refused questions it recovered and their cost."""
    from citecheck.reports.golden import read_golden

    client = answering.make_client()
    questions = read_golden(ROOT / "sample_data" / "vocabulary_gap.jsonl")[0]
    config = answering.PipelineConfig(agent_fallback=True, agent_budget_usd=0.05)
    budget = answering.Budget(limit=1.0)
    answered = 0
    for i, q in enumerate(questions):
        a = answering.answer_question(client, index, q.question, f"live-{i}", config, budget)
        if not a.refused:
            answered += 1
            assert check_answer(a, CheckOptions(refusals=(REFUSAL,))).invalid_markers == ()
    print(f"live: {answered} of {len(questions)} recovered, ${budget.spent:.4f}")
