"""The judge card (core/citecheck/judging/judge_card.py) and ``citecheck calibrate --card``: the card
holds the figures calibrate prints for the same inputs, self-consistency when the judge was repeated,
the estimate it supports, and escapes the names and keys that come from files."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from citecheck.cli.calibration_commands import card_paths
from citecheck.judging import calibration, consistency, judge_card
from citecheck.judging import verdicts as verdict_store
from citecheck.judging.calibration import CLASSES
from citecheck.labelling.labels import Label
from citecheck.web.settings import EXPERTQA_LABELS, EXPERTQA_LOG
from helpers import run_cli


@pytest.fixture(scope="module")
def expertqa(tmp_path_factory):
    """Baseline verdicts on the ExpertQA sample, then a repeated run of a scripted judge with examples."""
    folder = tmp_path_factory.mktemp("card")
    out = folder / "verdicts.jsonl"
    code, _, err = run_cli("judge", "--log", EXPERTQA_LOG, "--labels", EXPERTQA_LABELS, "--judge", "baseline",
                           "--out", out)
    assert code == 0, err
    base = [v for v in verdict_store.read(out)[0] if v.scored]
    repeated = []
    for n, v in enumerate(base):
        for r in range(3):
            flip = r == 2 and n % 10 == 0  # every tenth item changes its verdict in the third run
            repeated.append(dataclasses.replace(
                v, judge="claude:claude-haiku-4-5", prompt_version="judge.v3", prompt_sha256="p" * 16,
                examples_sha256="e" * 64, cost_usd=0.002, repeat=r,
                verdict=CLASSES[(CLASSES.index(v.verdict) + 1) % 3] if flip else v.verdict))
    verdict_store.append(out, repeated)
    return folder, out, len(base)


def test_the_card_holds_the_figures_calibrate_prints(expertqa):
    folder, verdicts, _ = expertqa
    code, out, err = run_cli("calibrate", "--labels", EXPERTQA_LABELS, "--verdicts", verdicts, "--judge", "baseline",
                             "--split", "test", "--format", "json", "--card", folder / "baseline.md")
    assert code == 0, err
    printed = json.loads(out)
    md, js = folder / "baseline.md", folder / "baseline.json"
    assert f"judge card written: {md} and {js}" in err
    card = json.loads(js.read_text(encoding="utf-8"))
    assert card["figures"] == printed["figures"] and card["items"] == printed["items"]
    assert card["guidelines_versions"] == printed["guidelines_versions"] and card["split"] == "test"
    assert card["judge"] == "baseline" and card["model"] is None and card["prompt_version"] == "baseline.v1"
    assert card["examples_sha256"] == [] and card["self_consistency"] == {"not_measured": judge_card.NOT_MEASURED}
    assert "--log" in card["estimate"]["not_computed"]  # no logs given: the judged population is unknown
    text = md.read_text(encoding="utf-8")
    for key, title in judge_card.FIGURE_NAMES.items():
        f = printed["figures"][key]
        if f["value"] is None:
            continue
        row = next(line for line in text.splitlines() if line.startswith(f"| {title} |"))
        assert f"| {f['value']:.2f} |" in row and row.endswith(f"| {f['n']} |")
        if f["ci95"][0] is not None:
            assert f"{f['ci95'][0]:.2f} to {f['ci95'][1]:.2f}" in row
    assert "Not measured: run judge --repeat K" in text


def test_the_card_of_a_repeated_judge_with_examples_and_an_estimate(expertqa):
    folder, verdicts, scored = expertqa
    code, out, err = run_cli("calibrate", "--labels", EXPERTQA_LABELS, "--verdicts", verdicts, "--judge",
                             "claude:claude-haiku-4-5", "--log", EXPERTQA_LOG, "--card", folder / "claude")
    assert code == 0, err
    assert f"examples: sha256 {'e' * 64}" in out
    assert "self-consistency of claude:claude-haiku-4-5, prompt judge.v3" in out and "unstable items" in out
    card = json.loads((folder / "claude.json").read_text(encoding="utf-8"))
    assert card["model"] == "claude-haiku-4-5" and card["examples_sha256"] == ["e" * 64]
    assert card["prompt_sha256"] == ["p" * 16]
    sc = card["self_consistency"]
    assert sc["runs"] == 3 and sc["items"] == scored and len(sc["unstable"]) == len(range(0, scored, 10))
    assert sc["changed"]["value"] == pytest.approx(len(range(0, scored, 10)) / scored, abs=1e-4)
    assert card["cost_per_item"]["mean_usd"] == pytest.approx(0.002)
    est = card["estimate"]
    assert est["method"] == "ppi++" and est["n"] > 0 and est["N"] >= est["n"]
    assert est["interval"][0] <= est["value"] <= est["interval"][1]
    text = (folder / "claude.md").read_text(encoding="utf-8")
    assert "Not-supported citation rate by PPI++" in text and "## Self-consistency" in text
    assert f"| examples sha256 | {'e' * 64} |" in text
    calibrate_json = json.loads(run_cli("calibrate", "--labels", EXPERTQA_LABELS, "--verdicts", verdicts, "--judge",
                                        "claude:claude-haiku-4-5", "--log", EXPERTQA_LOG, "--format", "json")[1])
    assert calibrate_json["self_consistency"] == sc and calibrate_json["examples_sha256"] == ["e" * 64]
    assert calibrate_json["figures"] == card["figures"]


def test_card_needs_one_run_and_an_existing_folder(expertqa):
    folder, verdicts, _ = expertqa
    code, _, err = run_cli("calibrate", "--labels", EXPERTQA_LABELS, "--verdicts", verdicts, "--card", folder / "x")
    assert code == 2 and "--card describes one judge and prompt version" in err
    assert "baseline baseline.v1" in err and "claude:claude-haiku-4-5 judge.v3" in err
    code, _, err = run_cli("calibrate", "--labels", EXPERTQA_LABELS, "--verdicts", verdicts, "--judge", "baseline",
                           "--card", folder / "no-such-folder" / "card")
    assert code == 2 and "does not exist" in err


def test_card_paths():
    assert card_paths("out/card") == (card_paths("out/card.md")[0], card_paths("out/card.json")[1])
    md, js = card_paths("out/judge.v2")
    assert md.name == "judge.v2.md" and js.name == "judge.v2.json"


# --- hostile text from files ------------------------------------------------------------------------

HOSTILE_JUDGE = "claude:<script>alert(1)</script>|**bold**_[x](http://e.vil)$x$"
HOSTILE_ANSWER = "a<img src=x onerror=alert(1)>|*_`"


def test_hostile_names_and_keys_are_escaped_in_markdown_and_kept_in_json():
    keys = [f"{HOSTILE_ANSWER}{i}#s0#c0" for i in range(12)]
    labels = [Label(1, k, k.split("#")[0], 0, 0, "c", "", CLASSES[i % 3], "", "ana", "", "", guidelines="<b>g1</b>")
              for i, k in enumerate(keys)]
    verdicts = [verdict_store.make(k, CLASSES[(i + r * (i == 0)) % 3], "", HOSTILE_JUDGE, "v|<i>1</i>", "sha",
                                   repeat=r) for i, k in enumerate(keys) for r in range(2)]
    report = calibration.calibrate(labels, verdicts, HOSTILE_JUDGE, "v|<i>1</i>", draws=100, adjudicated={}, overlap=1)
    repeats = consistency.consistency(verdicts, HOSTILE_JUDGE, "v|<i>1</i>", draws=50)
    card = judge_card.judge_card(report, verdicts, repeats, made="2026-12-06")
    text = card.to_markdown()
    assert not re.search(r"(?<!\\)[<>]", text)  # no tag can open or close: every < and > is escaped
    for raw in ("**bold**", "](http", "$x$", "*_`"):
        assert raw not in text, raw
    assert r"\<script\>alert\(1\)\</script\>" in text and r"\*\*bold\*\*" in text
    unstable = [line for line in text.splitlines() if line.startswith("- ")]
    assert unstable == [r"- a\<img src=x onerror=alert\(1\)\>\|\*\_\`0\#s0\#c0: supported, partial"]
    for line in text.splitlines():  # no table row gains a column from a | in a name
        if line.startswith("| ") and not line.startswith("|---"):
            assert len(re.findall(r"(?<!\\)\|", line)) in (3, 5), line
    data = card.to_dict()
    assert data["judge"] == HOSTILE_JUDGE and data["prompt_version"] == "v|<i>1</i>"
    assert data["guidelines_versions"] == {"<b>g1</b>": 12}
    assert data["self_consistency"]["unstable"][0]["item"] == keys[0]
    name = judge_card.file_name(card)
    assert re.fullmatch(r"[A-Za-z0-9._-]+", name) and name.startswith("judge-card-claude-script-alert-1-")


def test_model_of_a_judge_name():
    assert judge_card.model_of("claude:claude-haiku-4-5") == "claude-haiku-4-5"
    assert judge_card.model_of("cascade:claude-haiku-4-5>claude-sonnet-4-5") == "claude-haiku-4-5>claude-sonnet-4-5"
    assert judge_card.model_of("baseline") == ""
