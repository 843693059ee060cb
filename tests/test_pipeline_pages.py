"""What the answer pipeline logs about itself shows in the app: a withheld answer with its claims,
the search agent's trace, and withheld counts on the Failures page (AppTest)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import streamlit as st
from citecheck.contract.log import dumps
from citecheck.llm import fake_api
from citecheck.pipeline import answering
from citecheck.pipeline.retrieval import load_index
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sample_data"))
import scripted_agent  # noqa: E402

GOOD = ('You get 18 days of earned leave per year [1]. It accrues at 1.5 days per month [1].\n\nQUOTES:\n'
        '[1] "Employees get 18 days of earned leave per year."')


def _tool(name, args):
    return {"type": "tool_use", "id": "toolu_01", "name": name, "input": args}


def gated(body):
    names = [t["name"] for t in body.get("tools", [])]
    if "record_claims" in names:
        return fake_api.message([_tool("record_claims", {"claims": [
            {"sentence": 1, "claim": "You get 18 days of earned leave per year."},
            {"sentence": 2, "claim": "Earned leave accrues at 1.5 days per month."}]})], stop_reason="tool_use")
    if "record_verdict" in names:
        claim = body["messages"][0]["content"].split("<sentence>")[1].split("</sentence>")[0]
        verdict = "not_supported" if "accrues" in claim else "supported"
        return fake_api.message([_tool("record_verdict", {"verdict": verdict, "rationale": "checked"})],
                         stop_reason="tool_use")
    if "search" in names:
        return scripted_agent.reply(body)
    return fake_api.message(GOOD)


@pytest.fixture
def log(tmp_path, monkeypatch):
    index = load_index(ROOT / "sample_data" / "source")
    client = fake_api.client(gated)
    config = answering.PipelineConfig(faithfulness=True, agent_fallback=True)
    answers = [answering.answer_question(client, index, "How many earned leave days do I get?", "withheld-1", config),
               answering.answer_question(client, index, "Maternity time off length?", "agent-1", config)]
    path = tmp_path / "pipeline.jsonl"
    path.write_text("".join(dumps(a) + "\n" for a in answers), encoding="utf-8")
    st.cache_resource.clear()
    st.cache_data.clear()
    monkeypatch.setenv("CITECHECK_LOGS", str(path))
    monkeypatch.setenv("CITECHECK_CORPUS", "")
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    return answers


def run(**query) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def html(at) -> str:
    return "\n".join(str(h.proto.body) for h in at.get("html"))


def test_a_withheld_answer_shows_why_and_its_claims(log):
    assert log[0].refused and log[0].extra["faithfulness"]["score"] == 0.5
    at = run(answer="withheld-1")
    assert not at.exception
    page = html(at)
    assert "Withheld by the faithfulness gate" in page and "0.50 is below the threshold 0.80" in page
    assert "Earned leave accrues at 1.5 days per month." in page and "not supported" in page


def test_the_agent_trace_shows_on_the_review_page(log):
    assert log[1].extra["answered_by"] == "agent"
    at = run(answer="agent-1")
    assert not at.exception
    page = html(at)
    assert "Search agent" in page and "searched Maternity time off length?" in page and "leave-policy-4" in page


def test_the_failures_page_counts_withheld_answers(log):
    at = run()
    at.switch_page("pages/failures.py").run()
    assert not at.exception
    titles = [m.label for m in at.metric]
    assert "Withheld answers" in titles
