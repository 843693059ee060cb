"""Self-consistency of a repeated judge (core/citecheck/judging/consistency.py): simulated flaky judges
whose flip rate is known, Fleiss' kappa against the textbook example and a hand-computed table,
majority against single run, and the unstable items."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from citecheck.judging import calibration, consistency
from citecheck.judging import verdicts as verdict_store
from citecheck.judging.calibration import CLASSES
from hypothesis import given, settings
from hypothesis import strategies as hs
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss


def v(item: str, verdict: str, repeat: int = 0, judge: str = "flaky", prompt: str = "p1") -> verdict_store.Verdict:
    return verdict_store.make(item, verdict, "", judge, prompt, "sha", repeat=repeat)


def key(i: int) -> str:
    return f"a-{i:04d}#s0#c0"


# --- Fleiss' kappa ---------------------------------------------------------------------------------

# Wikipedia's worked example ("Fleiss' kappa"): 10 subjects, 14 raters, 5 categories; kappa = 0.210.
WIKIPEDIA = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]


def test_fleiss_kappa_of_the_textbook_example():
    assert consistency.fleiss_kappa(np.array(WIKIPEDIA)) == pytest.approx(0.210, abs=5e-4)
    assert consistency.fleiss_kappa(np.array(WIKIPEDIA)) == pytest.approx(statsmodels_fleiss(np.array(WIKIPEDIA)))


def test_fleiss_kappa_by_hand_through_the_verdicts():
    # 4 items x 3 runs: SSS, SSN, NNN, PNN.  P_i = 1, 1/3, 1, 1/3 -> mean 2/3; p_j = 5/12, 1/12, 6/12
    # -> P_e = 62/144; kappa = (2/3 - 31/72) / (1 - 31/72) = 17/41.
    runs = {0: "SSS", 1: "SSN", 2: "NNN", 3: "PNN"}
    names = {"S": "supported", "P": "partial", "N": "not_supported"}
    verdicts = [v(key(i), names[c], r) for i, row in runs.items() for r, c in enumerate(row)]
    result = consistency.consistency(verdicts, "flaky", "p1", draws=100)
    assert result.runs == 3 and result.fleiss.n == 4
    assert result.fleiss.value == pytest.approx(17 / 41)
    assert result.fleiss.low is None and "under 10" in result.fleiss.why  # 4 items: no interval is claimed
    assert result.changed.value == pytest.approx(2 / 4) and result.changed.n == 4


def test_fleiss_kappa_is_undefined_with_one_category_and_refuses_uneven_rows():
    assert consistency.fleiss_kappa(np.array([[3, 0, 0], [3, 0, 0]])) is None
    with pytest.raises(ValueError):
        consistency.fleiss_kappa(np.array([[3, 0, 0], [1, 1, 0]]))


@given(hs.lists(hs.lists(hs.integers(0, 2), min_size=3, max_size=3), min_size=2, max_size=25))
@settings(max_examples=100, deadline=None)
def test_fleiss_kappa_agrees_with_statsmodels(rows):
    table = np.zeros((len(rows), 3), dtype=int)
    for i, row in enumerate(rows):
        for c in row:
            table[i, c] += 1
    ours = consistency.fleiss_kappa(table)
    if ours is None:
        assert (table.sum(axis=0) > 0).sum() == 1  # one category only
    else:
        assert ours == pytest.approx(statsmodels_fleiss(table), abs=1e-9)
        assert ours <= 1.0


# --- a flaky judge with a known flip rate --------------------------------------------------------


def flaky(n: int, runs: int, p: float, seed: int) -> list[verdict_store.Verdict]:
    """Each item has a stable verdict; each run independently gives the other verdict of a fixed
    pair with probability p.  An item changes unless all runs agree: 1 - (1-p)^K - p^K."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        stable = CLASSES[i % 3]
        other = CLASSES[(i + 1) % 3]
        for r in range(runs):
            out.append(v(key(i), other if rng.random() < p else stable, r))
    return out


@pytest.mark.parametrize(("p", "runs"), [(0.05, 3), (0.1, 2), (0.2, 5)])
def test_the_changed_share_recovers_the_flip_rate(p, runs):
    """Its 95% interval holds the share implied by p in about 95% of simulated judges (at least 35 of 40)."""
    expected = 1 - (1 - p) ** runs - p ** runs
    held = 0
    for seed in range(40):
        result = consistency.consistency(flaky(300, runs, p, seed), "flaky", "p1", draws=20)
        assert result.runs == runs and result.changed.n == 300
        assert len(result.unstable) == round(result.changed.value * 300)
        held += result.changed.low <= expected <= result.changed.high
    assert held >= 35


def test_a_stable_judge_has_kappa_one_and_no_unstable_item():
    result = consistency.consistency(flaky(30, 3, 0.0, 0), "flaky", "p1", draws=200)
    assert result.changed.value == 0 and result.fleiss.value == pytest.approx(1.0) and not result.unstable


def test_more_flips_lower_fleiss_kappa():
    kappas = [consistency.consistency(flaky(400, 3, p, 7), "flaky", "p1", draws=50).fleiss.value
              for p in (0.02, 0.1, 0.3)]
    assert kappas[0] > kappas[1] > kappas[2]


# --- which verdicts count ---------------------------------------------------------------------------


def test_the_latest_verdict_per_repeat_counts_and_unscored_runs_are_left_out():
    verdicts = [v(key(1), "supported", 0), v(key(1), "partial", 1), v(key(1), "supported", 1),  # rewritten: agrees
                v(key(2), "supported", 0), v(key(2), "unscored", 1),  # one scored run: not measured
                v(key(3), "supported", 0), v(key(3), "partial", 1),
                v(key(3), "not_supported", 0, judge="other")]  # another judge's verdict never mixes in
    rows = consistency.item_runs(verdicts, "flaky", "p1")
    assert rows[key(1)].verdicts == ("supported", "supported") and not rows[key(1)].changed
    assert rows[key(2)].repeats == (0,)
    result = consistency.consistency(verdicts, "flaky", "p1")
    assert [r.item for r in result.items] == [key(1), key(3)]
    assert [r.item for r in result.unstable] == [key(3)]
    assert consistency.unstable_keys(verdicts) == {key(3)}
    assert consistency.unstable_keys(verdicts, "other") == frozenset()


def test_items_with_fewer_runs_are_left_out_of_fleiss_kappa_only():
    verdicts = [v(key(i), "supported", r) for i in range(12) for r in range(3)]
    verdicts += [v(key(20), "supported", 0), v(key(20), "partial", 1)]  # two runs only
    result = consistency.consistency(verdicts, "flaky", "p1", draws=100)
    assert result.runs == 3 and result.fleiss.n == 12 and result.changed.n == 13
    assert result.changed.value == pytest.approx(1 / 13)


def test_majority_against_single_run_with_the_tie_rule():
    human = {key(i): "supported" for i in range(4)}
    verdicts = [v(key(0), "partial", 0), v(key(0), "supported", 1), v(key(0), "supported", 2),  # majority right
                v(key(1), "supported", 0), v(key(1), "partial", 1),  # a tie: run 0 decides (right)
                v(key(2), "partial", 0), v(key(2), "supported", 1),  # a tie: run 0 decides (wrong)
                v(key(3), "supported", 0), v(key(3), "partial", 1), v(key(3), "partial", 2)]  # majority wrong
    result = consistency.consistency(verdicts, "flaky", "p1", human)
    assert [r.majority for r in result.items] == ["supported", "supported", "partial", "partial"]
    assert result.majority.value == pytest.approx(2 / 4) and result.majority.n == 4
    assert result.single.value == pytest.approx(2 / 4)
    del human[key(3)]  # an item without a human label counts in neither
    result = consistency.consistency(verdicts, "flaky", "p1", human)
    assert result.majority.n == result.single.n == 3
    assert result.majority.value == pytest.approx(2 / 3) and result.single.value == pytest.approx(1 / 3)


def test_majority_of_a_flaky_judge_beats_its_single_run():
    """A judge right on every item but flipping each run with p = 0.3: with 5 runs the majority is
    wrong far less often (binomial tail) than one run."""
    verdicts = flaky(500, 5, 0.3, 11)
    human = {key(i): CLASSES[i % 3] for i in range(500)}
    result = consistency.consistency(verdicts, "flaky", "p1", human, draws=50)
    assert result.single.low <= 0.7 <= result.single.high
    majority_right = sum(comb(5, k) * 0.3 ** k * 0.7 ** (5 - k) for k in range(3))  # at most 2 of 5 flipped
    assert result.majority.low <= majority_right <= result.majority.high
    assert result.majority.low > result.single.high


def test_unstable_items_come_most_unstable_first():
    verdicts = [v(key(1), "supported", r) for r in range(4)] + [v(key(1), "partial", 4)]  # 1 of 5 off
    verdicts += [v(key(2), x, r) for r, x in enumerate(["supported", "partial", "not_supported", "supported"])]
    verdicts += [v(key(3), x, r) for r, x in enumerate(["supported", "partial", "partial", "supported"])]
    order = [r.item for r in consistency.consistency(verdicts, "flaky", "p1").unstable]
    assert order == [key(2), key(3), key(1)]  # 2 of 4 off with 3 verdicts, 2 of 4 off with 2, 1 of 5


def test_calibration_counts_the_ordinary_run_only():
    """Repeats feed self-consistency and never change calibrate's figures."""
    from citecheck.labelling.labels import Label

    human = [Label(1, key(i), f"a-{i:04d}", 0, 0, "c", "", CLASSES[i % 3], "", "ana", "", "") for i in range(30)]
    ordinary = [v(key(i), CLASSES[i % 3] if i % 4 else "partial", 0) for i in range(30)]
    repeats = flaky(30, 3, 0.4, 5)
    repeats = [r for r in repeats if r.repeat > 0]
    before = calibration.calibrate(human, ordinary, "flaky", "p1", draws=100, adjudicated={}, overlap=1)
    after = calibration.calibrate(human, ordinary + repeats, "flaky", "p1", draws=100, adjudicated={}, overlap=1)
    assert before.to_dict() == after.to_dict()


def test_text_and_json_say_what_was_measured():
    result = consistency.consistency(flaky(50, 3, 0.2, 9), "flaky", "p1", draws=100)
    text = result.to_text(limit=3)
    assert "verdict changed across runs" in text and "Fleiss kappa" in text and "... and" in text
    d = result.to_dict()
    assert d["runs"] == 3 and d["changed"]["n"] == 50 and len(d["unstable"]) == len(result.unstable)
    empty = consistency.consistency([v(key(1), "supported")], "flaky", "p1")
    assert not empty.measured and "run judge --repeat K" in empty.to_text()


@given(hs.lists(hs.lists(hs.integers(0, 2), min_size=4, max_size=4), min_size=2, max_size=15), hs.integers(0, 99))
@settings(max_examples=50, deadline=None)
def test_the_resampled_fleiss_kappas_are_fleiss_kappa_of_each_resample(rows, seed):
    table = np.zeros((len(rows), 3), dtype=int)
    for i, row in enumerate(rows):
        for c in row:
            table[i, c] += 1
    idx = np.random.default_rng(seed).integers(0, len(rows), (5, len(rows)))
    for got, sample in zip(consistency._fleiss_resampled(table, idx), idx):
        want = consistency.fleiss_kappa(table[sample])
        assert (want is None and np.isnan(got)) or got == pytest.approx(want)
