"""The paired comparison of two judges (core/citecheck/judging/comparison.py) and ``citecheck
compare-judges``: McNemar's exact test by hand, simulated judges that are truly better or equally
good, properties of the paired intervals, and the command on the bundled ExpertQA sample with the
baseline judge against a scripted Claude judge (the real SDK over a mock transport)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from citecheck.judging import comparison
from citecheck.judging import verdicts as verdict_store
from citecheck.judging.calibration import CLASSES, bootstrap
from citecheck.labelling import labels as label_store
from citecheck.labelling.labels import Label
from citecheck.llm import client as llm_client
from citecheck.llm import fake_api
from citecheck.web.settings import EXPERTQA_LABELS, EXPERTQA_LOG
from helpers import run_cli
from hypothesis import given, settings
from hypothesis import strategies as hs
from scipy.stats import binomtest

NOT_SUPPORTED = CLASSES.index("not_supported")


# --- McNemar ------------------------------------------------------------------------------------


def test_mcnemar_exact_by_hand():
    assert comparison.mcnemar_p(0, 10) == pytest.approx(2 * 0.5 ** 10)
    assert comparison.mcnemar_p(10, 0) == pytest.approx(2 * 0.5 ** 10)
    assert comparison.mcnemar_p(1, 9) == pytest.approx(2 * (1 + 10) / 1024)
    assert comparison.mcnemar_p(2, 3) == 1.0  # 2 P(X <= 2), X ~ B(5, 1/2) = 2 * 16/32, capped at 1
    assert comparison.mcnemar_p(0, 0) == 1.0
    assert comparison.mcnemar_p(5, 5) == 1.0
    assert comparison.mcnemar_p(0, 2000) == 0.0  # far below what a float holds: no overflow


@given(hs.integers(0, 60), hs.integers(0, 60))
@settings(max_examples=200, deadline=None)
def test_mcnemar_agrees_with_scipys_exact_binomial_test(a_only, b_only):
    n = a_only + b_only
    expected = 1.0 if n == 0 else binomtest(min(a_only, b_only), n, 0.5).pvalue
    assert comparison.mcnemar_p(a_only, b_only) == pytest.approx(expected, rel=1e-9, abs=1e-300)
    assert comparison.mcnemar_p(a_only, b_only) == comparison.mcnemar_p(b_only, a_only)


# --- simulated judges ---------------------------------------------------------------------------


def humans(rng, n: int) -> np.ndarray:
    return rng.choice(3, n, p=[0.5, 0.2, 0.3])


def judge(rng, h: np.ndarray, error_positive: float, error_negative: float) -> np.ndarray:
    """A judge that errs on not-supported items at one rate and on the others at another, independently
    per item; an error is one of the two other classes at random."""
    rate = np.where(h == NOT_SUPPORTED, error_positive, error_negative)
    wrong = rng.random(len(h)) < rate
    return np.where(wrong, (h + rng.integers(1, 3, len(h))) % 3, h)


def test_a_judge_truly_better_on_tnr_is_found_better():
    rng = np.random.default_rng(3)
    h = humans(rng, 300)
    a = judge(rng, h, 0.2, 0.35)  # A: wrong on 35% of the supported / partial items
    b = judge(rng, h, 0.2, 0.10)  # B: 10%
    diffs = comparison.paired_differences(h, a, b, draws=1000)
    tnr = next(d for d in diffs if d.figure == "tnr")
    assert tnr.sign == 1 and tnr.low > 0
    line = comparison.verdict_line(diffs, 300)
    assert line.startswith("B is better on") and "TNR by" in line and line.endswith("no worse elsewhere at this n (n=300)")
    assert comparison.verdict_tone(diffs) == "success"
    worse = comparison.paired_differences(h, b, a, draws=1000)
    swapped = comparison.verdict_line(worse, 300)
    assert swapped.startswith("B is worse on") and "TNR by" in swapped
    assert comparison.verdict_tone(worse) == "warning"  # (its line holds "no better elsewhere": not good news)


def test_a_judge_better_on_tnr_and_worse_on_tpr_is_mixed():
    rng = np.random.default_rng(4)
    h = humans(rng, 400)
    a = judge(rng, h, 0.1, 0.4)
    b = judge(rng, h, 0.6, 0.1)
    diffs = comparison.paired_differences(h, a, b, draws=1000)
    line = comparison.verdict_line(diffs, 400)
    assert line.startswith("Mixed: B is better on") and "TNR" in line and "worse on TPR" in line
    assert comparison.verdict_tone(diffs) == "info"


def test_identical_judges_are_found_not_different_in_at_least_95_percent_of_repetitions():
    """Two judges with the same error rates and independent errors: the verdict says "no difference"
    in at least 95% of 1,000 simulated comparisons (the family-wise level the intervals promise).
    (The coverage of each interval over many more simulations: bench/bench_paired_intervals.py.)"""
    rng = np.random.default_rng(2026)
    same = 0
    repetitions = 1000
    for r in range(repetitions):
        h = humans(rng, 40)
        a, b = judge(rng, h, 0.3, 0.3), judge(rng, h, 0.3, 0.3)
        line = comparison.verdict_line(comparison.paired_differences(h, a, b, draws=600, seed=r), 40)
        same += line.startswith(("No difference found", "Too few items"))
    assert same / repetitions >= 0.95


def test_too_few_items_gives_no_interval_and_says_so():
    h = np.array([0, 1, 2, 0, 2])
    diffs = comparison.paired_differences(h, h, np.array([0, 0, 2, 0, 0]), draws=200)
    assert all(d.low is None and "under 10" in d.why for d in diffs if d.value is not None)
    assert comparison.verdict_line(diffs, 5) == "Too few items to compare (n=5): label and judge more items"


pairs = hs.integers(12, 60).flatmap(lambda n: hs.tuples(*(hs.lists(hs.integers(0, 2), min_size=n, max_size=n)
                                                          for _ in range(3))))


@given(pairs, hs.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_swapping_a_and_b_negates_the_differences_and_mirrors_their_intervals(data, seed):
    h, a, b = (np.array(x) for x in data)
    ab = comparison.paired_differences(h, a, b, draws=200, seed=seed)
    ba = comparison.paired_differences(h, b, a, draws=200, seed=seed)
    for x, y in zip(ab, ba):
        assert x.n == y.n and x.a == y.b and x.b == y.a
        if x.value is None:
            assert y.value is None
            continue
        assert y.value == pytest.approx(-x.value)
        assert (x.low is None) == (y.low is None)
        if x.low is not None:
            assert y.low == pytest.approx(-x.high) and y.high == pytest.approx(-x.low)
            assert x.low <= x.value <= x.high
        assert x.sign == -y.sign
    assert comparison.verdict_line(ab, len(h)).startswith("B is better") == \
        comparison.verdict_line(ba, len(h)).startswith("B is worse")


@given(pairs, hs.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_a_judge_compared_with_itself_differs_by_zero_exactly(data, seed):
    h, a, _ = (np.array(x) for x in data)
    for d in comparison.paired_differences(h, a, a, draws=200, seed=seed, identical=True):
        if d.value is not None:
            assert d.value == 0 and (d.low, d.high) == (0.0, 0.0) and d.sign == 0
    assert comparison.mcnemar_p(0, 0) == 1.0


@given(pairs, hs.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_two_runs_that_happen_to_agree_claim_no_certainty(data, seed):
    """Two different runs with the same verdicts on every item: the difference is 0 here, but another
    sample could differ, so a share's interval has width and kappa has none."""
    h, a, _ = (np.array(x) for x in data)
    for d in comparison.paired_differences(h, a, a.copy(), draws=200, seed=seed):
        if d.value is None:
            continue
        assert d.value == 0 and d.sign == 0
        if d.figure == "kappa":
            assert d.low is None and d.why
        elif d.n >= 10:
            assert d.low < 0 < d.high


def test_newcombes_paired_interval_is_the_square_and_add_one_when_the_pairs_are_uncorrelated():
    """With ad = bc (phi = 0), method 10 for paired data is Newcombe's method 10 for two independent
    shares, which statsmodels implements."""
    from statsmodels.stats.proportion import confint_proportions_2indep

    for both, b_only, a_only, neither in [(6, 3, 2, 1), (20, 10, 4, 2), (9, 3, 3, 1)]:
        assert both * neither == b_only * a_only
        n = both + b_only + a_only + neither
        low, high = comparison.newcombe_paired(both, b_only, a_only, neither, 0.95)
        ref = confint_proportions_2indep(both + b_only, n, both + a_only, n, method="newcomb", alpha=0.05)
        assert (low, high) == pytest.approx(ref, abs=1e-9)


@given(hs.integers(0, 40), hs.integers(0, 40), hs.integers(0, 40), hs.integers(0, 40))
@settings(max_examples=200, deadline=None)
def test_newcombes_paired_interval_holds_its_estimate_and_mirrors(both, b_only, a_only, neither):
    if both + b_only + a_only + neither == 0:
        return
    n = both + b_only + a_only + neither
    low, high = comparison.newcombe_paired(both, b_only, a_only, neither)
    assert -1 <= low <= (b_only - a_only) / n <= high <= 1
    mirrored = comparison.newcombe_paired(both, a_only, b_only, neither)
    assert mirrored == pytest.approx((-high, -low))
    # Newcombe's interval collapses to [0, 0] when the pairs are perfectly correlated (no discordant
    # item, both shares strictly between 0 and 1); the interval the comparison reports never does
    shown_low, shown_high = comparison._share_interval(both, b_only, a_only, neither)
    assert shown_low <= low and shown_high >= high and shown_high > shown_low


def test_the_difference_figures_are_calibrates_figures():
    rng = np.random.default_rng(8)
    h = humans(rng, 120)
    a, b = judge(rng, h, 0.3, 0.2), judge(rng, h, 0.2, 0.3)
    diffs = {d.figure: d for d in comparison.paired_differences(h, a, b, draws=100)}
    fa, fb = bootstrap(h, a, 50), bootstrap(h, b, 50)
    for name in comparison.FIGURES:
        assert diffs[name].a == pytest.approx(fa[name].value) and diffs[name].b == pytest.approx(fb[name].value)
        assert diffs[name].n == fa[name].n


# --- from labels and verdicts -------------------------------------------------------------------


def key(i: int) -> str:
    return f"a-{i:04d}#s0#c0"


def label(i: int, value: str) -> Label:
    return Label(1, key(i), f"a-{i:04d}", 0, 0, "c", "", value, "", "ana", "", "")


def verdict(i: int, value: str, judge_name: str, prompt: str, cost: float = 0.0, repeat: int = 0):
    return verdict_store.make(key(i), value, "", judge_name, prompt, "sha", cost_usd=cost, repeat=repeat)


def scripted(n: int = 60):
    """Humans: item i is CLASSES[i % 3].  A is right on every item but calls items 0..9 (i % 3 != 2)
    not supported; B is right everywhere; B also has repeats that must not count."""
    labels = [label(i, CLASSES[i % 3]) for i in range(n)]
    a = [verdict(i, "not_supported" if i < 10 else CLASSES[i % 3], "claude:m@x", "v1", 0.002) for i in range(n)]
    b = [verdict(i, CLASSES[i % 3], "claude:m@x", "v2", 0.001) for i in range(n)]
    b += [verdict(i, "partial", "claude:m@x", "v2", 0.001, repeat=1) for i in range(n)]
    return labels, a + b


def test_compare_counts_only_items_both_scored_and_labelled():
    labels, verdicts = scripted()
    verdicts += [verdict(60, "supported", "claude:m@x", "v1"), verdict(60, "supported", "claude:m@x", "v2")]  # unlabelled
    verdicts += [verdict(5, "unscored", "claude:m@x", "v2")]  # B's latest on item 5 is unscored
    result = comparison.compare(labels, verdicts, ("claude:m@x", "v1"), ("claude:m@x", "v2"), adjudicated={},
                                overlap=1, draws=300)
    assert len(result.keys) == 59 and key(5) not in result.keys and key(60) not in result.keys
    wrong = [i for i in range(10) if i % 3 != 2 and i != 5]  # A's errors among the compared items
    assert [d.item for d in result.differing] == [key(i) for i in wrong]
    assert all(d.a == "not_supported" and d.b == d.human for d in result.differing)
    assert (result.mcnemar.a_only, result.mcnemar.b_only) == (0, len(wrong))
    assert result.mcnemar.p == pytest.approx(2 * 0.5 ** len(wrong))
    assert result.difference("accuracy").value == pytest.approx(len(wrong) / 59)
    assert result.difference("tpr").value == 0
    assert result.cost_a.mean == pytest.approx(0.002) and result.cost_b.mean == pytest.approx(0.001)
    assert "B is better on" in result.verdict and "TNR" in result.verdict


def test_compare_on_a_split_and_with_itself():
    labels, verdicts = scripted(80)
    test = comparison.compare(labels, verdicts, ("claude:m@x", "v1"), ("claude:m@x", "v2"), "test",
                              adjudicated={}, overlap=1, draws=200)
    from citecheck.judging.calibration import split_of

    assert test.keys and all(split_of(k) == "test" for k in test.keys) and len(test.keys) < 80
    itself = comparison.compare(labels, verdicts, ("claude:m@x", "v1"), ("claude:m@x", "v1"), adjudicated={},
                                overlap=1, draws=200)
    assert itself.mcnemar.p == 1.0 and not itself.differing
    assert all(d.value == 0 and (d.low, d.high) == (0.0, 0.0) for d in itself.differences if d.value is not None)
    assert itself.verdict == "No difference found at this n (n=80)"


def test_compare_names_what_is_missing_and_what_is_there():
    labels, verdicts = scripted()
    with pytest.raises(comparison.ComparisonError) as exc:
        comparison.compare(labels, verdicts, ("claude:m@x", "v9"), ("claude:m@x", "v2"), adjudicated={}, overlap=1)
    assert "A = claude:m@x@v9 has no verdicts; present: claude:m@x@v1, claude:m@x@v2" in str(exc.value)
    with pytest.raises(comparison.ComparisonError, match="no item has a human label"):
        comparison.compare([], verdicts, ("claude:m@x", "v1"), ("claude:m@x", "v2"), adjudicated={}, overlap=1)


def test_a_run_splits_at_the_last_at_sign():
    assert comparison.parse_run("claude:m@x@judge.v3") == ("claude:m@x", "judge.v3")
    assert comparison.parse_run("cascade:a>b@judge.v2") == ("cascade:a>b", "judge.v2")
    for bad in ("baseline", "@v1", "baseline@"):
        with pytest.raises(comparison.ComparisonError, match="JUDGE@PROMPT"):
            comparison.parse_run(bad)


def test_cost_without_records_is_unknown_not_free():
    labels, verdicts = scripted(12)
    free = [verdict(i, CLASSES[i % 3], "baseline", "b1") for i in range(12)]
    result = comparison.compare(labels, verdicts + free, ("baseline", "b1"), ("claude:m@x", "v2"), adjudicated={},
                                overlap=1, draws=100)
    assert result.cost_a.mean is None and "unknown" in result.cost_a.text()
    assert result.cost_b.text().startswith("$0.00100 per item")


# --- the command --------------------------------------------------------------------------------


def tool_reply(verdict_name: str) -> dict:
    return fake_api.message([{"type": "tool_use", "id": "toolu_01", "name": "record_verdict",
                              "input": {"verdict": verdict_name, "rationale": "scripted"}}],
                            model="claude-haiku-4-5", stop_reason="tool_use")


@pytest.fixture(scope="module")
def expertqa_runs(tmp_path_factory):
    """The baseline's verdicts on the ExpertQA sample, a scripted Claude judge that says "supported"
    to everything (through the SDK and a mock transport), and a scripted verdicts file (the baseline's
    verdicts with the human label on every other supported item)."""
    folder = tmp_path_factory.mktemp("compare")
    out = folder / "verdicts.jsonl"
    code, _, err = run_cli("judge", "--log", EXPERTQA_LOG, "--labels", EXPERTQA_LABELS, "--judge", "baseline",
                           "--out", out)
    assert code == 0, err
    mp = pytest.MonkeyPatch()
    mp.setattr(llm_client, "make_client", lambda: fake_api.client(lambda body: tool_reply("supported")))
    mp.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    try:
        code, _, err = run_cli("judge", "--log", EXPERTQA_LOG, "--labels", EXPERTQA_LABELS, "--judge", "claude",
                               "--out", out, "--max-cost-usd", "5")
    finally:
        mp.undo()
    assert code == 0, err
    baseline, _ = verdict_store.read(out)
    human = {lb.item: lb.label for lb in label_store.read(EXPERTQA_LABELS)[0]}
    fixed = []
    n = 0
    for v in baseline:
        if v.judge != "baseline" or not v.scored:
            continue
        better = v.verdict
        if human.get(v.item) == "supported" and v.verdict != "supported":
            n += 1
            better = "supported" if n % 2 else v.verdict
        fixed.append(verdict_store.make(v.item, better, "scripted", "scripted", "fixed.v1", "sha"))
    verdict_store.append(out, fixed)
    return out


def test_compare_judges_on_expertqa_finds_the_scripted_improvement(expertqa_runs):
    code, out, err = run_cli("compare-judges", "--labels", EXPERTQA_LABELS, "--verdicts", expertqa_runs,
                             "--a", "baseline@baseline.v1", "--b", "scripted@fixed.v1", "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["items"] > 500 and report["verdict"].startswith("B is better on")
    assert "TNR by" in report["verdict"] and report["differences"]["tpr"]["difference"] == 0
    assert report["mcnemar_accuracy"]["a_right_b_wrong"] == 0 and report["mcnemar_accuracy"]["p_value"] < 1e-6
    assert len(report["differing_items"]) == report["mcnemar_accuracy"]["b_right_a_wrong"]
    assert report["interval"]["draws"] == 2000 and report["cost_per_item"]["a"]["mean_usd"] is None
    again = run_cli("compare-judges", "--labels", EXPERTQA_LABELS, "--verdicts", expertqa_runs,
                    "--a", "baseline@baseline.v1", "--b", "scripted@fixed.v1", "--format", "json")
    assert again[1] == out  # a fixed seed: the same inputs give the same output


def test_compare_judges_with_a_scripted_claude_judge_through_the_sdk(expertqa_runs):
    code, out, err = run_cli("compare-judges", "--labels", EXPERTQA_LABELS, "--verdicts", expertqa_runs,
                             "--a", "baseline@baseline.v1", "--b", "claude:claude-haiku-4-5@judge.v2", "--split", "test")
    assert code == 0, err
    # "supported" to everything: it leaves every other item alone (TNR 1) and catches nothing (TPR 0)
    assert "verdict: Mixed: B is better on" in out and "worse on TPR" in out
    assert "split test:" in out and "cost B: $" in out and "cost A: unknown" in out
    assert "McNemar exact test, accuracy:" in out


def test_compare_judges_errors_name_what_is_there(expertqa_runs):
    code, _, err = run_cli("compare-judges", "--labels", EXPERTQA_LABELS, "--verdicts", expertqa_runs,
                           "--a", "baseline@baseline.v9", "--b", "scripted@fixed.v1")
    assert code == 2 and "A = baseline@baseline.v9 has no verdicts; present: baseline@baseline.v1" in err
    assert "scripted@fixed.v1" in err
    code, _, err = run_cli("compare-judges", "--labels", EXPERTQA_LABELS, "--verdicts", expertqa_runs,
                           "--a", "baseline", "--b", "scripted@fixed.v1")
    assert code == 2 and "is not JUDGE@PROMPT" in err
