"""``judge --repeat K``: K runs per item recorded as repeat 0..K-1, resumable per (item, run), through
the real SDK with a scripted judge (tests/scripted_judge.py)."""

from __future__ import annotations

import dataclasses
import io
import math
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import streamlit as st
from citecheck.cli.main import main
from citecheck.contract.item_keys import VERDICTS
from citecheck.judging import verdicts as verdict_store
from citecheck.judging.judges import BaselineJudge, ClaudeJudge, JudgeItem, Progress, not_yet_judged
from citecheck.llm import client as llm_client
from citecheck.llm import fake_api
from scripted_judge import Script, ScriptedJudge

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "sample_data" / "answers.jsonl"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def items(n: int, truth: dict[str, str] | None = None) -> list[JudgeItem]:
    out = []
    for i in range(n):
        sentence = f"Claim number {i} about leave."
        if truth is not None:
            truth[sentence] = VERDICTS[i % 3]
        out.append(JudgeItem(f"a-{i}#s0#c0", "q?", sentence, "", f"Chunk {i} says leave is granted.", f"fp{i}"))
    return out


def runs_per_item(found) -> dict[str, list[int]]:
    out: dict[str, list[int]] = defaultdict(list)
    for v in found:
        out[v.item].append(v.repeat)
    return {k: sorted(r) for k, r in out.items()}


def changed_share(found) -> float:
    """The share of items whose verdict is not the same in every run."""
    by_item: dict[str, set[str]] = defaultdict(set)
    for v in found:
        by_item[v.item].add(v.verdict)
    return sum(len(s) > 1 for s in by_item.values()) / len(by_item)


def test_k_runs_give_k_verdicts_per_item_numbered_0_to_k_minus_1():
    scripted = ScriptedJudge()
    judge = ClaudeJudge(scripted.client(), concurrency=3)
    todo = not_yet_judged(items(7), [], judge, repeats=3)
    assert [i.repeat for i in todo] == [0] * 7 + [1] * 7 + [2] * 7  # every item's run 0 first
    progress = Progress(total=len(todo))
    found = judge.judge(todo, progress=progress)
    assert runs_per_item(found) == {f"a-{i}#s0#c0": [0, 1, 2] for i in range(7)}
    assert scripted.calls["claude-haiku-4-5"] == 21 and progress.done == 21
    assert all(v.verdicts_version == 2 and v.judge == "claude:claude-haiku-4-5" for v in found)


def test_one_run_is_todays_behaviour():
    judge = BaselineJudge()
    some = items(3)
    done = judge.judge(some[:1])
    assert not_yet_judged(some, done, judge) == some[1:]  # the same objects, repeat 0
    assert not_yet_judged(some, done, judge, repeats=2) == some[1:] + [dataclasses.replace(i, repeat=1) for i in some]
    with pytest.raises(ValueError, match="below 1"):
        not_yet_judged(some, done, judge, repeats=0)


def test_an_unscored_run_or_a_changed_item_is_judged_again():
    judge = BaselineJudge()
    item = items(1)[0]
    unscored = verdict_store.make(item.key, "unscored", "API call failed", judge.name, judge.prompt.version,
                                  judge.prompt.sha256, item.fingerprint, repeat=1)
    scored = verdict_store.make(item.key, "supported", "ok", judge.name, judge.prompt.version, judge.prompt.sha256,
                                item.fingerprint)
    assert [i.repeat for i in not_yet_judged([item], [scored, unscored], judge, 2)] == [1]
    changed = dataclasses.replace(item, fingerprint="other")
    assert [i.repeat for i in not_yet_judged([changed], [scored, unscored], judge, 2)] == [0, 1]


def test_repeats_resume_after_an_interruption_without_duplicates(tmp_path, monkeypatch):
    """A budget stops the first run part-way; the same command without it judges exactly the runs
    that are missing, and no (item, run) is written twice."""
    scripted = ScriptedJudge()
    monkeypatch.setattr(llm_client, "make_client", lambda: scripted.client())
    out = tmp_path / "v.jsonl"
    base = ("judge", "--log", LOG, "--all-items", "--judge", "claude", "--out", out, "--repeat", "3",
            "--concurrency", "1")
    code, _, err = run(*base, "--max-cost-usd", "0.02")
    first, _ = verdict_store.read(out)
    assert code == 0 and "budget" in err and 0 < len(first) == sum(scripted.calls.values())
    code, _, err = run(*base)
    assert code == 0 and f"{len(first)} already judged" in err
    found, _ = verdict_store.read(out)
    pairs = Counter((v.item, v.repeat) for v in found)
    assert max(pairs.values()) == 1  # no (item, run) twice
    per_item = runs_per_item(found)
    assert all(r == [0, 1, 2] for r in per_item.values())
    assert len(found) == sum(scripted.calls.values()) == 3 * len(per_item)
    assert f"{len(per_item)} item(s) × 3 runs; {len(first)} already judged" in err
    assert f"judged {len(found) - len(first)} run(s) of {len(per_item)} item(s) (runs 0 to 2)" in err
    code, _, err = run(*base)
    assert "judging 0" in err and len(verdict_store.read(out)[0]) == len(found)


@pytest.mark.parametrize("flip_rate", [0.1, 0.3])
def test_the_flip_share_of_a_flaky_judge_is_near_its_set_rate(flip_rate):
    """With K runs an item keeps one verdict only if every run gives the truth, or every run gives
    the same one of the other two: P = (1-p)^K + 2 (p/2)^K.  The observed share of items that
    changed lies within 4 standard errors of 1 - P (seeded, so the test is repeatable)."""
    n, k = 300, 3
    truth: dict[str, str] = {}
    some = items(n, truth)
    scripted = ScriptedJudge(truth, default_script=Script(flip_rate=flip_rate), seed=35)
    found = ClaudeJudge(scripted.client(), concurrency=4).judge(not_yet_judged(some, [], ClaudeJudge(scripted.client()),
                                                                               k))
    expected = 1 - ((1 - flip_rate) ** k + 2 * (flip_rate / 2) ** k)
    se = math.sqrt(expected * (1 - expected) / n)
    assert abs(changed_share(found) - expected) <= 4 * se
    run0 = [v for v in found if v.repeat == 0]
    wrong = sum(v.verdict != truth[f"Claim number {v.item[2:].split('#')[0]} about leave."] for v in run0)
    assert abs(wrong / n - flip_rate) <= 4 * math.sqrt(flip_rate * (1 - flip_rate) / n)


def test_a_consistent_judge_and_the_baseline_never_flip():
    truth: dict[str, str] = {}
    some = items(30, truth)
    scripted = ScriptedJudge(truth)
    claude = ClaudeJudge(scripted.client())
    assert changed_share(claude.judge(not_yet_judged(some, [], claude, 4))) == 0.0
    baseline = BaselineJudge()
    found = baseline.judge(not_yet_judged(some, [], baseline, 3))
    assert len(found) == 90 and changed_share(found) == 0.0 and {v.repeat for v in found} == {0, 1, 2}


def test_the_baseline_repeats_through_the_command(tmp_path):
    out = tmp_path / "v.jsonl"
    code, _, err = run("judge", "--log", LOG, "--all-items", "--judge", "baseline", "--out", out, "--repeat", "2")
    found, _ = verdict_store.read(out)
    per_item = runs_per_item(found)
    assert code == 0 and per_item and all(r == [0, 1] for r in per_item.values())
    assert "deterministic" in err and f"judged {len(per_item)} item(s) × 2 run(s)" in err
    assert changed_share(found) == 0.0
    # a third run asked later: only run 2 is judged, and the line says so (it read "N item(s) × 1 run(s)")
    code, _, err = run("judge", "--log", LOG, "--all-items", "--judge", "baseline", "--out", out, "--repeat", "3")
    assert code == 0 and f"judged {len(per_item)} run(s) of {len(per_item)} item(s) (run 2)" in err, err
    assert "× 1 run(s)" not in err


def test_temperature_is_sent_only_when_set_and_zero_is_called_out(tmp_path, monkeypatch, capsys):
    scripted = ScriptedJudge()
    ClaudeJudge(scripted.client()).judge(items(1))
    ClaudeJudge(scripted.client(), temperature=0.4).judge(items(1))
    # (the SDK has no temperature argument: it travels in extra_body, and reaches the API as a field)
    assert "temperature" not in scripted.bodies[0] and scripted.bodies[1]["temperature"] == 0.4
    monkeypatch.setattr(llm_client, "make_client", lambda: scripted.client())
    code, _, err = run("judge", "--log", LOG, "--all-items", "--judge", "claude", "--out", tmp_path / "v.jsonl",
                       "--repeat", "2", "--temperature", "0", "--max-cost-usd", "0.005")
    assert code == 0 and "--temperature 0" in err and "measure little" in err
    assert scripted.bodies[-1]["temperature"] == 0
    with pytest.raises(SystemExit) as stopped:
        run("judge", "--log", LOG, "--all-items", "--judge", "claude", "--out", tmp_path / "v.jsonl",
            "--temperature", "1.5")
    assert stopped.value.code == 2 and "from 0 to 1, not 1.5" in capsys.readouterr().err


def test_api_failures_keep_their_behaviour_in_every_run():
    """A 429 is retried by the SDK; a 500 is an unscored verdict naming the failure; a reply
    without a valid verdict call is asked once more for that run alone."""
    scripted = ScriptedJudge(errors=[fake_api.error(429, "rate_limit_error", "slow down")])
    judge = ClaudeJudge(scripted.client(), concurrency=1)
    found = judge.judge(not_yet_judged(items(1), [], judge, 2))
    assert [v.verdict for v in found] == ["supported", "supported"] and sum(scripted.calls.values()) == 3

    failing = ScriptedJudge(errors=[fake_api.error(500, "api_error", "boom")] * 2)
    found = ClaudeJudge(failing.client(max_retries=1), concurrency=1).judge(
        [dataclasses.replace(items(1)[0], repeat=2)])
    assert found[0].verdict == "unscored" and "InternalServerError, HTTP 500" in found[0].rationale
    assert found[0].repeat == 2

    some = items(1)
    malformed = ScriptedJudge(default_script=Script(malformed=frozenset({some[0].sentence})))
    judge = ClaudeJudge(malformed.client(), concurrency=2)
    found = judge.judge(not_yet_judged(some, [], judge, 2))
    assert sorted(v.repeat for v in found) == [0, 1] and sum(malformed.calls.values()) == 4  # each run asked twice
    assert all(v.verdict == "unscored" and "(asked twice)" in v.rationale for v in found)


# --- the page control ----------------------------------------------------------------------------------


def test_the_page_runs_the_judge_several_times_per_item(tmp_path, monkeypatch):
    from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG
    from streamlit.testing.v1 import AppTest

    st.cache_resource.clear()
    st.cache_data.clear()
    monkeypatch.setenv("CITECHECK_LOGS", str(DEFAULT_LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(DEFAULT_CORPUS))
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.switch_page("pages/calibration.py").run()
    at.radio(key="cal_set").set_value("expertqa").run()
    at.number_input(key="cal_repeat").set_value(2).run()
    assert any("deterministic" in c.value for c in at.caption)
    next(b for b in at.button if b.label == "Run").click().run()
    assert not at.exception
    found, _ = verdict_store.read(tmp_path / "expertqa-verdicts.jsonl")
    per_item = runs_per_item(found)
    assert per_item and all(r == [0, 1] for r in per_item.values())
    assert any(f"2 runs per item: {len(found)} run(s) of {len(per_item)} item(s)" in c.value for c in at.caption)


def test_repeats_go_through_the_message_batches_api_too():
    from test_judge_budget import batch_api

    log: list = []
    import anthropic

    client = anthropic.Anthropic(api_key="sk-ant-test-not-a-key", max_retries=0, http_client=batch_api(log))
    judge = ClaudeJudge(client, model="claude-haiku-4-5")
    found = judge.judge_batch(not_yet_judged(items(3), [], judge, 2), poll_seconds=0, sleep=lambda s: None)
    assert runs_per_item(found) == {f"a-{i}#s0#c0": [0, 1] for i in range(3)}
    assert all(v.confidence is None for v in found)  # judge.v2's tool has no confidence


def test_imported_verdicts_keep_their_repeat_column_and_name_a_bad_one(tmp_path):
    """Another tool's repeated runs come in with their run number, so their self-consistency can be
    measured; a run number that is not a whole number of 0 or more is a bad row naming the field."""
    from citecheck.judging import verdicts as verdict_store

    theirs = tmp_path / "theirs.csv"
    theirs.write_text("item,verdict,repeat\na-1#s0#c0,supported,0\na-1#s0#c0,partial,1\n"
                      "a-2#s0#c0,no,\na-3#s0#c0,yes,-1\na-4#s0#c0,yes,two\n", encoding="utf-8")
    found, errors = verdict_store.import_external(theirs, "theirs")
    assert [(v.item, v.verdict, v.repeat) for v in found] == [
        ("a-1#s0#c0", "supported", 0), ("a-1#s0#c0", "partial", 1), ("a-2#s0#c0", "not_supported", 0)]
    assert [(e.line, e.field) for e in errors] == [(5, "repeat"), (6, "repeat")]
