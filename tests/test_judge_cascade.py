"""``judge --cascade A,B``: the cheap model first, the strong one only when the cheap one is unsure,
through the real SDK with a scripted judge that counts the requests each model receives."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from citecheck.cli.main import main
from citecheck.contract.item_keys import VERDICTS
from citecheck.errors import CitecheckError
from citecheck.judging import verdicts as verdict_store
from citecheck.judging.cascade import CascadeJudge, parse_models
from citecheck.judging.judges import ClaudeJudge, JudgeItem, Progress
from citecheck.llm import client as llm_client
from citecheck.llm import fake_api
from citecheck.llm.pricing import price_for
from scripted_judge import Script, ScriptedJudge

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "sample_data" / "answers.jsonl"
CHEAP, STRONG = "claude-haiku-4-5", "claude-sonnet-4-5"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def items(n: int, truth: dict[str, str]) -> list[JudgeItem]:
    out = []
    for i in range(n):
        sentence = f"Statement {i} on the refund window."
        truth[sentence] = VERDICTS[i % 3]
        out.append(JudgeItem(f"a-{i}#s0#c0", "q?", sentence, "", f"Passage {i} about refunds.", f"fp{i}"))
    return out


def cost(model: str, script: Script, calls: int = 1) -> float:
    return calls * price_for(model).cost(fake_api.usage(script.input_tokens, script.output_tokens))


def test_a_cheap_model_that_is_always_sure_never_calls_the_strong_one():
    truth: dict[str, str] = {}
    some = items(12, truth)
    scripted = ScriptedJudge(truth, default_script=Script(confidence=0.95))
    judge = CascadeJudge(scripted.client(), model=CHEAP, strong=STRONG, prompt_version="judge.v3")
    progress = Progress(total=12)
    found = judge.judge(some, progress=progress)
    assert scripted.calls == {CHEAP: 12} and scripted.calls[STRONG] == 0
    assert all(v.decided_by == CHEAP and v.confidence == 0.95 for v in found) and progress.escalated == 0
    assert {v.judge for v in found} == {f"cascade:{CHEAP}>{STRONG}<0.7"}
    assert [v.verdict for v in sorted(found, key=lambda v: int(v.item[2:].split("#")[0]))] == \
        [VERDICTS[i % 3] for i in range(12)]


def test_an_unsure_cheap_model_escalates_exactly_those_items_and_records_the_summed_cost():
    truth: dict[str, str] = {}
    some = items(10, truth)
    unsure = frozenset(some[i].sentence for i in (1, 4, 7))
    # A is biased (always "supported"), B is right: each verdict shows which model decided it
    cheap = Script(bias=1.0, confidence=0.9, unsure=unsure, unsure_confidence=0.4, input_tokens=1000, output_tokens=40)
    strong = Script(confidence=0.8, input_tokens=1200, output_tokens=60)
    scripted = ScriptedJudge(truth, scripts={CHEAP: cheap, STRONG: strong})
    judge = CascadeJudge(scripted.client(), model=CHEAP, strong=STRONG, prompt_version="judge.v3", concurrency=3)
    progress = Progress(total=10)
    found = {v.item: v for v in judge.judge(some, progress=progress)}
    assert scripted.calls[CHEAP] == 10 and scripted.calls[STRONG] == 3
    assert sorted(scripted.sentences[STRONG]) == sorted(unsure) and progress.escalated == 3
    for i, item in enumerate(some):
        v = found[item.key]
        if item.sentence in unsure:
            assert v.decided_by == STRONG and v.confidence == 0.8 and v.verdict == truth[item.sentence]
            assert v.cost_usd == pytest.approx(cost(CHEAP, cheap) + cost(STRONG, strong), abs=1e-6)
        else:
            assert v.decided_by == CHEAP and v.cost_usd == pytest.approx(cost(CHEAP, cheap), abs=1e-6)
            assert v.verdict == "supported"
    assert progress.spent == pytest.approx(10 * cost(CHEAP, cheap) + 3 * cost(STRONG, strong), abs=1e-5)


def test_the_threshold_decides_and_is_part_of_the_name():
    truth: dict[str, str] = {}
    some = items(4, truth)
    scripted = ScriptedJudge(truth, default_script=Script(confidence=0.6))
    low = CascadeJudge(scripted.client(), model=CHEAP, strong=STRONG, prompt_version="judge.v3", escalate_below=0.5)
    assert all(v.decided_by == CHEAP for v in low.judge(some)) and scripted.calls[STRONG] == 0
    high = CascadeJudge(scripted.client(), model=CHEAP, strong=STRONG, prompt_version="judge.v3", escalate_below=0.6)
    assert all(v.decided_by == CHEAP for v in high.judge(some))  # at the threshold is sure enough
    higher = CascadeJudge(scripted.client(), model=CHEAP, strong=STRONG, prompt_version="judge.v3",
                          escalate_below=0.61)
    assert all(v.decided_by == STRONG for v in higher.judge(some)) and scripted.calls[STRONG] == 4
    assert len({low.name, high.name, higher.name}) == 3


def test_without_a_confidence_two_samples_that_disagree_escalate():
    """judge.v2's tool has no confidence: A is asked twice, and B only where the samples differ."""
    truth: dict[str, str] = {}
    some = items(9, truth)
    flaky = frozenset(some[i].sentence for i in (0, 5))
    scripted = ScriptedJudge(truth, scripts={CHEAP: Script(alternate=flaky)})
    judge = CascadeJudge(scripted.client(), model=CHEAP, strong=STRONG, prompt_version="judge.v2")
    assert judge.rule == "samples" and judge.name == f"cascade:{CHEAP}>{STRONG}"
    found = judge.judge(some)
    assert scripted.calls[CHEAP] == 18 and sorted(scripted.sentences[STRONG]) == sorted(flaky)
    assert {v.item for v in found if v.decided_by == STRONG} == {some[0].key, some[5].key}
    assert all(v.confidence is None for v in found)  # judge.v2 gives none, whatever a reply holds


def test_the_budget_reserves_every_call_an_item_can_need():
    truth: dict[str, str] = {}
    some = items(5, truth)
    scripted = ScriptedJudge(truth, default_script=Script(confidence=0.1))  # every item escalates
    judge = CascadeJudge(scripted.client(), model=CHEAP, strong=STRONG, prompt_version="judge.v3")
    request = judge.request(some[0])
    alone = ClaudeJudge(scripted.client(), model=CHEAP, prompt_version="judge.v3")
    strong = ClaudeJudge(scripted.client(), model=STRONG, prompt_version="judge.v3")
    both = alone._worst(request) + strong._worst(judge.request(some[0], STRONG))
    assert judge._worst(request) == pytest.approx(both)
    # room for A's worst case but not for A's and B's together: no call starts
    judge.max_cost_usd = (alone._worst(request) + both) / 2
    progress = Progress(total=5)
    assert judge.judge(some, progress=progress) == [] and sum(scripted.calls.values()) == 0
    assert progress.stopped.startswith("budget")
    judge.max_cost_usd = 3 * both
    progress = Progress(total=5)
    found = judge.judge(some, progress=progress)
    assert 0 < len(found) < 5 and progress.spent <= judge.max_cost_usd
    assert scripted.calls[CHEAP] == scripted.calls[STRONG] == len(found)


def test_failures_behave_as_for_one_model():
    truth: dict[str, str] = {}
    some = items(1, truth)
    # a 429 on A is retried by the SDK, and A's sure answer stands
    scripted = ScriptedJudge(truth, errors=[fake_api.error(429, "rate_limit_error", "slow down")])
    [v] = CascadeJudge(scripted.client(), model=CHEAP, strong=STRONG, prompt_version="judge.v3").judge(some)
    assert v.decided_by == CHEAP and scripted.calls[CHEAP] == 2 and scripted.calls[STRONG] == 0
    # a failed call of A is not a sure answer: B decides
    scripted = ScriptedJudge(truth, errors=[fake_api.error(500, "api_error", "boom")] * 2)
    [v] = CascadeJudge(scripted.client(max_retries=1), model=CHEAP, strong=STRONG,
                       prompt_version="judge.v3").judge(some)
    assert v.decided_by == STRONG and v.scored
    # both fail: unscored, with the reason, counted as a failed call
    scripted = ScriptedJudge(truth, errors=[fake_api.error(500, "api_error", "boom")] * 4)
    progress = Progress(total=1)
    [v] = CascadeJudge(scripted.client(max_retries=1), model=CHEAP, strong=STRONG,
                       prompt_version="judge.v3").judge(some, progress=progress)
    assert not v.scored and "InternalServerError, HTTP 500" in v.rationale and progress.failed == 1
    # B replies without a valid verdict call: the item is asked once more, then unscored with both costs
    scripted = ScriptedJudge(truth, scripts={CHEAP: Script(confidence=0.2),
                                             STRONG: Script(malformed=frozenset(truth))})
    [v] = CascadeJudge(scripted.client(), model=CHEAP, strong=STRONG, prompt_version="judge.v3").judge(some)
    assert not v.scored and "(asked twice)" in v.rationale and scripted.calls == {CHEAP: 2, STRONG: 2}
    assert v.cost_usd == pytest.approx(2 * cost(CHEAP, Script()) + 2 * cost(STRONG, Script()), abs=1e-6)


def test_the_cascade_is_one_command_and_says_how_many_escalated(tmp_path, monkeypatch):
    scripted = ScriptedJudge(default_script=Script(confidence=0.5))
    monkeypatch.setattr(llm_client, "make_client", lambda: scripted.client())
    out = tmp_path / "v.jsonl"
    code, _, err = run("judge", "--log", LOG, "--all-items", "--judge", "claude", "--prompt", "judge.v3",
                       "--cascade", f"{CHEAP},{STRONG}", "--escalate-below", "0.6", "--out", out,
                       "--max-cost-usd", "0.05")
    found, _ = verdict_store.read(out)
    assert code == 0 and found and all(v.decided_by == STRONG for v in found)  # written and read back
    assert f"{len(found)} of {len(found)} escalated to {STRONG}" in err and "(rule: confidence)" in err
    assert all(v.judge == f"cascade:{CHEAP}>{STRONG}<0.6" for v in found)
    # judge.v2 has no confidence: the samples rule, and --escalate-below is said to be unused
    code, _, err = run("judge", "--log", LOG, "--all-items", "--judge", "claude", "--cascade", f"{CHEAP},{STRONG}",
                       "--escalate-below", "0.6", "--out", out, "--max-cost-usd", "0.01")
    assert code == 0 and "(rule: samples)" in err and "--escalate-below is not used" in err


@pytest.mark.parametrize("options, said", [
    (["--judge", "baseline", "--cascade", f"{CHEAP},{STRONG}"], "--cascade is for --judge claude"),
    (["--judge", "claude", "--cascade", f"{CHEAP},{STRONG}", "--batch"], "drop --batch"),
    (["--judge", "claude", "--cascade", f"{CHEAP},{STRONG}", "--price", "1,5"], "price table"),
    (["--judge", "claude", "--escalate-below", "0.5"], "give --cascade"),
    (["--judge", "claude", "--cascade", CHEAP], "MODEL_A,MODEL_B"),
    (["--judge", "claude", "--cascade", f"{CHEAP},{CHEAP}"], "two different models"),
])
def test_options_a_cascade_cannot_take_are_refused(tmp_path, monkeypatch, options, said):
    scripted = ScriptedJudge()
    monkeypatch.setattr(llm_client, "make_client", lambda: scripted.client())
    code, _, err = run("judge", "--log", LOG, "--all-items", "--out", tmp_path / "v.jsonl", *options)
    assert code == 2 and said in err and sum(scripted.calls.values()) == 0


def test_models_are_parsed_cheap_first():
    assert parse_models(" a , b ") == ("a", "b")
    for bad in ("a", "a,b,c", ",b"):
        with pytest.raises(ValueError):
            parse_models(bad)
    with pytest.raises(CitecheckError, match="Batches"):
        CascadeJudge(ScriptedJudge().client(), model=CHEAP, strong=STRONG).judge_batch([])
