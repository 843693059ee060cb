"""Prediction-powered estimates, calibration samples and the labelling planner.

References: ``ppi_py.ppi_mean_ci`` / ``ppi_mean_pointestimate`` (the authors' package),
statsmodels' Wilson interval, closed forms written out by hand here, and a small simulation with
a known truth (the full coverage table is bench/bench_estimate.py)."""

import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from citecheck.cli.main import main
from citecheck.judging import estimate, estimate_report
from citecheck.judging import ppi as ppi_stats
from citecheck.judging import verdicts as verdict_store
from citecheck.labelling import sample as samples
from citecheck.labelling.items import Item
from citecheck.labelling.labels import LABELS_VERSION, Label
from hypothesis import given
from hypothesis import strategies as st
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from statsmodels.stats.proportion import proportion_confint

ROOT = Path(__file__).resolve().parent.parent
EQA_LOG = ROOT / "sample_data" / "expertqa" / "answers.jsonl"
EQA_LABELS = ROOT / "sample_data" / "expertqa" / "labels.jsonl"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def synthetic(seed, n=300, N=4000, prevalence=0.2, tpr=0.85, tnr=0.9):
    rng = np.random.default_rng(seed)

    def judge(truth):
        hit = np.where(truth == 1, rng.random(len(truth)) < tpr, rng.random(len(truth)) >= tnr)
        return hit.astype(float)
    y = (rng.random(n) < prevalence).astype(float)
    truth_all = (rng.random(N) < prevalence).astype(float)
    return y, judge(y), judge(truth_all)


# --- PPI++ against the authors' package and by hand -----------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_ppi_matches_ppi_py(seed, confidence):
    y, f, f_all = synthetic(seed)
    ours = ppi_stats.ppi_mean(y, f, f_all, confidence)
    low, high = ppi_mean_ci(y, f, f_all, alpha=1 - confidence)
    assert ours.value == pytest.approx(float(ppi_mean_pointestimate(y, f, f_all)[0]), abs=1e-12)
    assert (ours.low, ours.high) == pytest.approx((float(low[0]), float(high[0])), abs=1e-12)


def test_weighted_ppi_matches_ppi_py():
    y, f, f_all = synthetic(7, n=250)
    w = np.random.default_rng(8).uniform(1, 4, len(y))  # inverse inclusion probabilities
    ours = ppi_stats.ppi_mean(y, f, f_all, 0.95, w=w)
    low, high = ppi_mean_ci(y, f, f_all, alpha=0.05, w=w)
    assert ours.value == pytest.approx(float(ppi_mean_pointestimate(y, f, f_all, w=w)[0]), abs=1e-12)
    assert (ours.low, ours.high) == pytest.approx((float(low[0]), float(high[0])), abs=1e-12)


def test_ppi_closed_form_by_hand():
    # four labels, eight judged items, lambda fixed at 1 (plain PPI)
    y, f = [1, 0, 1, 0], [1, 0, 0, 0]
    f_all = [1, 0, 0, 0, 1, 0, 0, 0]
    est = ppi_stats.ppi_mean(y, f, f_all, 0.95, lam=1.0)
    # theta = mean(f_all) + mean(y - f) = 2/8 + 1/4
    assert est.value == pytest.approx(0.5)
    # var(f_all) = 0.25 * 0.75; y - f = [0, 0, 1, 0]: var = 0.25 * 0.75
    se = math.sqrt(0.1875 / 8 + 0.1875 / 4)
    assert est.se == pytest.approx(se)
    assert est.low == pytest.approx(0.5 - 1.959963984540054 * se)


def test_tuned_lambda_closed_form():
    y, f, f_all = synthetic(4, n=200, N=1000)
    n, N = len(y), len(f_all)
    cov = np.mean((y - y.mean()) * (f - f.mean()))
    var = np.var(np.concatenate([f, f_all]), ddof=1)
    assert ppi_stats.tuned_lambda(y, f, f_all) == pytest.approx(min(1, max(0, cov / ((1 + n / N) * var))))
    # lambda = 0 is the labels alone; lambda = 1 is plain PPI
    assert ppi_stats.ppi_mean(y, f, f_all, lam=0.0).value == pytest.approx(y.mean())


def test_power_tuning_is_never_wider_than_labels_alone_or_plain_ppi():
    y, f, f_all = synthetic(5, tpr=0.6, tnr=0.6)  # a weak judge: plain PPI would be wider
    tuned, plain, alone = (ppi_stats.ppi_mean(y, f, f_all, lam=lam) for lam in (None, 1.0, 0.0))
    assert tuned.se <= plain.se + 1e-12 and tuned.se <= alone.se + 1e-12


def test_effective_n_of_a_perfect_and_a_useless_judge():
    rng = np.random.default_rng(11)
    y = (rng.random(200) < 0.3).astype(float)
    truth = (rng.random(5000) < 0.3).astype(float)
    perfect = ppi_stats.ppi_mean(y, y, truth)
    share = y.mean()
    # a perfect judge: the labels only correct nothing, so the 5,000 judged items count almost fully
    assert ppi_stats.effective_labels(perfect, share * (1 - share)) > 2000
    noise = (rng.random(200) < 0.5).astype(float)
    useless = ppi_stats.ppi_mean(y, noise, (rng.random(5000) < 0.5).astype(float))
    assert ppi_stats.effective_labels(useless, share * (1 - share)) == pytest.approx(200, rel=0.1)


def test_coverage_with_known_truth():
    # 400 repetitions, truth known: the 95% interval must cover it about 95% of the time
    prevalence, covered = 0.15, 0
    for seed in range(400):
        y, f, f_all = synthetic(seed, n=150, N=3000, prevalence=prevalence, tpr=0.8, tnr=0.85)
        est = ppi_stats.ppi_mean(y, f, f_all)
        covered += est.low <= prevalence <= est.high
    assert covered / 400 >= 0.92


def test_pseudo_labels_by_hand():
    y, f = [1, 0, 1, 0], [1, 0, 0, 0]
    f_all = [1, 0, 0, 0, 1, 0, 0, 0]
    est = ppi_stats.ppi_mean(y, f, f_all, lam=1.0, pseudo=1.0)
    assert est.value == pytest.approx(0.5)  # theta never sees the pseudo-labels
    # the rectifier's variance over y - f = [0, 0, 1, 0] plus one pseudo-label per cell: 0, -1, 1, 0
    r = np.array([0, 0, 1, 0, 0, -1, 1, 0], float)
    assert est.se == pytest.approx(math.sqrt(0.1875 / 8 + r.var() / 4))


def test_small_sample_corrections_restore_coverage_where_the_plain_interval_falls_short():
    # a good judge, 20% prevalence, 50 labels: the plain interval covers well under 95%
    covered = {"plain": 0, "citecheck": 0}
    for seed in range(400):
        y, f, f_all = synthetic(seed, n=50, N=5000, prevalence=0.2, tpr=0.95, tnr=0.95)
        truth = 0.2
        if y.min() == y.max():
            continue
        plain = ppi_stats.ppi_mean(y, f, f_all)
        ours = ppi_stats.ppi_mean(y, f, f_all, pseudo=estimate.PSEUDO, student=True)
        covered["plain"] += plain.low <= truth <= plain.high
        covered["citecheck"] += ours.low <= truth <= ours.high
    assert covered["plain"] / 400 < 0.92 and covered["citecheck"] / 400 >= 0.94


@pytest.mark.parametrize("df", [5, 10, 49, 500])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_student_quantile_matches_scipy(df, confidence):
    from scipy.stats import t

    assert ppi_stats.t_of(confidence, df) == pytest.approx(t.ppf((1 + confidence) / 2, df), abs=1e-4 if df >= 10 else 4e-3)


# --- Wilson -------------------------------------------------------------------------------------


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (5, 20), (50, 706), (139, 706), (20, 20)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_matches_statsmodels(k, n, confidence):
    low, high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    assert ppi_stats.wilson(k / n, n, confidence) == pytest.approx((low, high), abs=1e-12)


def test_wilson_by_hand():
    # 5 of 20 at 95%: centre (0.25 + z^2/40) / (1 + z^2/20), spread z sqrt(0.25*0.75/20 + z^2/1600) / (1 + z^2/20)
    z = 1.959963984540054
    d = 1 + z * z / 20
    centre, spread = (0.25 + z * z / 40) / d, z * math.sqrt(0.1875 / 20 + z * z / 1600) / d
    assert ppi_stats.wilson(0.25, 20) == pytest.approx((centre - spread, centre + spread))


def test_bad_confidence_is_refused():
    with pytest.raises(ValueError, match="between 0 and 1"):
        ppi_stats.z_of(1.5)


# --- the planner --------------------------------------------------------------------------------


@given(st.floats(0.01, 0.6), st.floats(0.01, 0.1))
def test_wilson_planner_gives_the_smallest_n(share, target):
    n = ppi_stats.labels_needed_wilson(share, target, 0.95, 1, 100_000)
    assert n is not None
    lo, hi = ppi_stats.wilson(share, n)
    assert (hi - lo) / 2 <= target
    if n > 1:
        lo, hi = ppi_stats.wilson(share, n - 1)
        assert (hi - lo) / 2 > target


def test_ppi_planner_needs_fewer_labels_with_a_good_judge_and_matches_the_interval_it_predicts():
    y, f, f_all = synthetic(3, n=200, N=20_000, tpr=0.95, tnr=0.95)
    share = y.mean()
    alone = ppi_stats.labels_needed_wilson(share, 0.02, 0.95, 200, 20_000)
    ppi = ppi_stats.labels_needed_ppi(y, f, f_all, 0.02, 0.95, 20_000)
    assert ppi < alone
    # drawing that many labels from the same process gives about that half-width
    y2, f2, f_all2 = synthetic(30, n=ppi, N=20_000, tpr=0.95, tnr=0.95)
    assert ppi_stats.ppi_mean(y2, f2, f_all2).half_width == pytest.approx(0.02, rel=0.15)


def test_planner_says_when_the_population_is_too_small():
    y, f, f_all = synthetic(3, n=100, N=150)
    assert ppi_stats.labels_needed_ppi(y, f, f_all, 0.001, 0.95, 150) is None
    assert ppi_stats.labels_needed_wilson(0.2, 0.001, 0.95, 100, 150) is None


# --- samples ------------------------------------------------------------------------------------


KEYS = [f"a-{i:03d}#s0#c0" for i in range(100)]


def test_uniform_sample_is_reproducible_and_records_probabilities(tmp_path):
    a, b, c = samples.draw(KEYS, 10, seed=1), samples.draw(KEYS, 10, seed=1), samples.draw(KEYS, 10, seed=2)
    assert a.items == b.items and set(a.items) != set(c.items) and len(set(a.items)) == 10
    assert all(a.probability[k] == pytest.approx(0.1) for k in a.items)
    samples.write(tmp_path / "s.jsonl", a)
    back = samples.read(tmp_path / "s.jsonl")
    assert back.items == a.items and back.probability == a.probability and back.sample_id == a.sample_id
    with pytest.raises(samples.SampleError, match="never overwritten"):
        samples.write(tmp_path / "s.jsonl", c)


def test_uniform_draw_is_uniform():
    counts = np.zeros(len(KEYS))
    for seed in range(2000):
        for k in samples.draw(KEYS, 10, seed).items:
            counts[KEYS.index(k)] += 1
    # each item is drawn with probability 0.1: 200 times expected, sd about 13.4
    assert counts.min() > 140 and counts.max() < 260


def test_stratified_sample_probabilities_and_neyman_allocation():
    strata = {k: ("not_supported" if i < 10 else "supported") for i, k in enumerate(KEYS)}
    prop = samples.draw(KEYS, 20, 3, strata, stratify="judge")
    assert prop.strata == {"not_supported": (10, 2), "supported": (90, 18)}
    assert [prop.probability[k] for k in prop.items if strata[k] == "supported"] == [pytest.approx(0.2)] * 18
    # Neyman: n_h proportional to N_h * sd_h; sd 0.5 in the small stratum, 0.1 in the large one
    ney = samples.draw(KEYS, 20, 3, strata, {"not_supported": 0.5, "supported": 0.1}, "judge")
    assert ney.strata == {"not_supported": (10, 7), "supported": (90, 13)}  # 20 * 5/14 = 7.1
    assert ney.allocation == "neyman"
    assert [ney.probability[k] for k in ney.items if strata[k] == "not_supported"] == [pytest.approx(0.7)] * 7


@given(st.dictionaries(st.sampled_from("abcdef"), st.integers(0, 50), min_size=1),
       st.integers(1, 200), st.booleans())
def test_allocation_sums_and_caps(sizes, total, neyman):
    spread = {s: (i + 1) / 10 for i, s in enumerate(sorted(sizes))} if neyman else None
    out = samples.allocate(sizes, total, spread)
    assert sum(out.values()) == min(total, sum(sizes.values()))
    assert all(0 <= out[s] <= sizes[s] for s in sizes)
    if total >= sum(1 for v in sizes.values() if v):
        assert all(out[s] >= 1 for s in sizes if sizes[s])


def test_answer_unit_sample_lists_all_items_of_each_answer():
    members = {f"a{i}": tuple(f"a{i}#s{j}#c{j}" for j in range(i % 3 + 1)) for i in range(30)}
    s = samples.draw(list(members), 5, 9, members=members)
    answers = {k.split("#")[0] for k in s.items}
    assert len(answers) == 5 and s.unit == "answer"
    assert sorted(s.items) == sorted(k for a in answers for k in members[a])
    assert list(s.probability.values()) == [pytest.approx(5 / 30)] * len(s.items)


def test_bad_sample_file_names_the_line_and_field(tmp_path):
    path = tmp_path / "s.jsonl"
    samples.write(path, samples.draw(KEYS, 3, 1))
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace('"inclusion_probability": 0.03', '"inclusion_probability": 3')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(samples.SampleError, match=r"s.jsonl:3: inclusion_probability: 3 is not in"):
        samples.read(path)
    with pytest.raises(samples.SampleError, match="more than the 100"):
        samples.draw(KEYS, 101, 1)


# --- estimate: joining and bad input ---------------------------------------------------------------


def items(n):
    return [Item(f"a{i // 2}", i % 2, i % 2, f"c{i}", f"fp{i}") for i in range(n)]


def label(item, value, reviewer="r1"):
    return Label(LABELS_VERSION, item.key, item.answer_id, item.sentence, item.citation, item.chunk_id,
                 item.fingerprint, value, "", reviewer, "2026-12-01T00:00:00Z", "0.1.0")


def verdict(item, value, judge="baseline"):
    return verdict_store.make(item.key, value, "", judge, "baseline.v1", "", item.fingerprint)


def world(seed=0, n_items=400, n_labels=120, judge_quality=0.85):
    rng = np.random.default_rng(seed)
    its = items(n_items)
    truth = {i.key: ("not_supported" if rng.random() < 0.25 else "supported") for i in its}

    def judged(key):
        right = rng.random() < judge_quality
        t = truth[key]
        return t if right else ("supported" if t == "not_supported" else "not_supported")
    verdicts = [verdict(i, judged(i.key)) for i in its]
    labelled = [its[j] for j in rng.choice(n_items, n_labels, replace=False)]
    return its, truth, verdicts, [label(i, truth[i.key]) for i in labelled]


def test_estimate_rows_agree_with_the_functions():
    its, truth, verdicts, labels = world()
    e = estimate.estimate(labels, verdicts, its, "baseline", "baseline.v1", target=0.06, adjudicated={}, overlap=1)
    cit = e.rate("citations")
    assert (cit.n, cit.N) == (120, 400)
    keys = sorted(lb.item for lb in labels)
    y = np.array([truth[k] == "not_supported" for k in keys], float)
    by = {v.item: v.verdict == "not_supported" for v in verdicts}
    f = np.array([by[k] for k in keys], float)
    f_all = np.array([by[i.key] for i in its], float)
    ref = ppi_stats.ppi_mean(y, f, f_all, pseudo=estimate.PSEUDO, student=True)
    assert cit.row("ppi").value == pytest.approx(ref.value) and cit.row("ppi").low == pytest.approx(ref.low)
    assert cit.row("labels").value == pytest.approx(y.mean())
    assert cit.row("judge").value == pytest.approx(f_all.mean()) and cit.row("judge").low is None
    assert 120 == cit.plan.ppi_total < cit.plan.labels_total <= 400  # PPI++ is there already
    assert cit.row("ppi").half_width <= 0.06 < cit.row("labels").half_width
    assert e.notes and "no --sample" in e.notes[0] and not any("are labelled" in n for n in e.notes)
    most = estimate.estimate(labels + [label(i, truth[i.key]) for i in its[:200]], verdicts, its, "baseline", "baseline.v1", adjudicated={}, overlap=1)
    assert any("of the 400 judged items are labelled" in n for n in most.notes)


def test_sample_only_sampled_labels_count_and_the_rest_are_counted():
    its, truth, verdicts, _ = world(1)
    sample = samples.draw([i.key for i in its], 60, 5)
    sampled = [i for i in its if i.key in sample][:50]
    chosen = [i for i in its if i.key not in sample][:30]  # a reviewer's own picks
    labels = [label(i, truth[i.key]) for i in sampled + chosen]
    unsure = [label(i, "cant_tell") for i in sampled[:3]]  # the latest label of 3 sampled items
    changed = [its[k]._replace(fingerprint="old") for k in range(len(its)) if its[k].key in sample][50:52]
    labels += unsure + [label(i, "supported") for i in changed]
    e = estimate.estimate(labels, verdicts, its, "baseline", "baseline.v1", sample, adjudicated={}, overlap=1)
    assert e.rate("citations").n == 47  # 50 sampled labels, 3 of them now can't tell; the 2 stale ones never count
    reasons = dict(e.left_out)
    assert reasons.pop("latest label is can't tell") == 3
    assert reasons.pop("stale: the item changed since it was labelled") == 2
    assert list(reasons.values()) == [30] and sample.sample_id in next(iter(reasons))
    assert any("13 of the 60 sampled items have no usable label" in n for n in e.notes)


def test_stratified_weights_undo_oversampling():
    its, truth, verdicts, _ = world(2, n_items=600)
    strata = {v.item: v.verdict for v in verdicts}
    sample = samples.draw([i.key for i in its], 200, 3, strata, {"not_supported": 0.5, "supported": 0.1}, "judge")
    labels = [label(i, truth[i.key]) for i in its if i.key in sample]
    e = estimate.estimate(labels, verdicts, its, "baseline", "baseline.v1", sample, adjudicated={}, overlap=1)
    keys = sorted(lb.item for lb in labels)
    w = np.array([1 / sample.probability[k] for k in keys])
    y = np.array([truth[k] == "not_supported" for k in keys], float)
    assert e.rate("citations").row("labels").value == pytest.approx(float((w * y).sum() / w.sum()))
    assert e.rate("citations").row("labels").value != pytest.approx(float(y.mean()))


def test_bad_input_gets_a_message_and_no_pretend_interval():
    its, truth, verdicts, labels = world(3)
    other = [Item("zz", 0, 0, "c", "fp") for _ in range(1)]
    with pytest.raises(estimate.EstimateError, match="different items"):
        estimate.estimate([label(other[0], "supported")], verdicts, its, "baseline", "baseline.v1", adjudicated={}, overlap=1)
    with pytest.raises(estimate.EstimateError, match="no item of the logs has a scored verdict"):
        estimate.estimate(labels, verdicts, its, "claude", "judge.v1", adjudicated={}, overlap=1)
    # a sample with no labels yet
    sample = samples.draw([i.key for i in its], 20, 1)
    e = estimate.estimate([], verdicts, its, "baseline", "baseline.v1", sample, adjudicated={}, overlap=1)
    assert all(r.low is None for r in e.rate("citations").rows) and "no labels yet" in e.rate("citations").row("ppi").note
    # all labels one class: Wilson still honest, PPI++ claims nothing
    one = [label(i, "supported") for i in its[:50]]
    ppi = estimate.estimate(one, verdicts, its, "baseline", "baseline.v1", adjudicated={}, overlap=1).rate("citations").row("ppi")
    assert ppi.low is None and "all 50 labels are supported or partial" in ppi.note
    # a judge whose verdicts are constant
    flat = [verdict(i, "supported") for i in its]
    ppi = estimate.estimate(labels, flat, its, "baseline", "baseline.v1", adjudicated={}, overlap=1).rate("citations").row("ppi")
    assert ppi.low is None and "same verdict" in ppi.note
    # N smaller than n
    y = np.array([0, 1, 0, 1.0])
    with pytest.raises(estimate.EstimateError, match="cannot be smaller"):
        estimate.rate_rows(y, y, np.array([0, 1.0]), 0.95)


def test_failing_answer_rate_from_whole_answers():
    its, truth, verdicts, _ = world(4)
    members = {}
    for i in its:
        members.setdefault(i.answer_id, []).append(i.key)
    sample = samples.draw(list(members), 60, 2, members=members)
    labels = [label(i, truth[i.key]) for i in its if i.key in sample]
    e = estimate.estimate(labels, verdicts, its, "baseline", "baseline.v1", sample, adjudicated={}, overlap=1)
    ans = e.rate("answers")
    assert (ans.n, ans.N) == (60, 200)
    fails = [a for a in members if any(truth[k] == "not_supported" for k in members[a])]
    sampled = {k.split("#")[0] for k in sample.items}
    assert ans.row("labels").value == pytest.approx(len(sampled & set(fails)) / 60)


def test_table_html_escapes_notes():
    rate = estimate.Rate("citations", (estimate.Row("labels", 0.2, 0.1, 0.3, 10, 20, "<b>x</b>"),), 10, 20)
    out = estimate_report.table_html(rate)
    assert "&lt;b&gt;x&lt;/b&gt;" in out and "<b>x" not in out and "10.0% to 30.0%" in out


# --- the commands end to end on the bundled ExpertQA sample ---------------------------------------


def test_sample_then_estimate_on_expertqa(tmp_path):
    verdicts, sample = tmp_path / "v.jsonl", tmp_path / "sample.jsonl"
    code, _, err = run("judge", "--log", EQA_LOG, "--all-items", "--judge", "baseline", "--out", verdicts)
    assert code == 0, err
    code, _, err = run("sample", "--log", EQA_LOG, "--size", "150", "--seed", "4", "--stratify", "judge",
                       "--verdicts", verdicts, "--labels", EQA_LABELS, "--out", sample)
    assert code == 0, err
    assert "Neyman allocation" in err and "150 item(s) of 772" in err  # only items the judge scored
    code, out, err = run("estimate", "--log", EQA_LOG, "--labels", EQA_LABELS, "--verdicts", verdicts,
                         "--sample", sample, "--target", "0.05", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    cit = doc["rates"]["citations"]
    rows = {r["method"]: r for r in cit["rows"]}
    assert cit["N"] == 772 and 120 < cit["n"] <= 150  # every sampled item is judged; most are labelled
    assert rows["judge"]["interval"] == [None, None]
    assert rows["ppi"]["interval"][0] < rows["ppi"]["value"] < rows["ppi"]["interval"][1]
    assert sum(doc["left_out"].values()) > 0 and doc["sample_id"].startswith("sample-")
    code, out, _ = run("estimate", "--log", EQA_LOG, "--labels", EQA_LABELS, "--verdicts", verdicts,
                       "--sample", sample)
    assert "PPI++ (power-tuned)" in out and "left out" in out


def test_estimate_cli_errors_say_what_to_do(tmp_path):
    verdicts = tmp_path / "v.jsonl"
    code, _, err = run("estimate", "--log", EQA_LOG, "--labels", EQA_LABELS, "--verdicts", verdicts)
    assert code == 2 and "run citecheck judge --all-items first" in err
    code, _, err = run("sample", "--log", EQA_LOG, "--size", "10", "--seed", "1", "--stratify", "judge",
                       "--out", tmp_path / "s.jsonl")
    assert code == 2 and "--stratify judge needs --verdicts" in err


# --- the review queue and labels made from a sample ---------------------------------------------


def test_review_queue_works_through_a_sample_and_labels_record_it(tmp_path):
    from citecheck.labelling import dataset
    from citecheck.labelling import labels as label_store
    from citecheck.review import queue

    data = dataset.load([EQA_LOG])
    keys = [i.key for i in data.all_items if i.citation is not None]
    sample = samples.draw(keys, 12, seed=3)
    first = sample.items[0]
    assert queue.sample_answer_ids(data, sample)[0] == first.rsplit("#", 2)[0]
    answer_id, n = queue.next_in_sample(data, sample, {}, "ana")
    item = data.items(answer_id)[n]
    assert item.key == first
    path = tmp_path / "labels.jsonl"
    label_store.append(path, label_store.make_label(item, "supported", "ana", sample=sample.sample_id))
    records, errors = label_store.read(path)
    assert not errors and records[0].sample == sample.sample_id
    current = label_store.latest(records)
    assert queue.next_in_sample(data, sample, current, "ana")[0] == sample.items[1].rsplit("#", 2)[0]
    assert queue.sample_progress(data, sample, current, "ana") == (1, 12)
    # a label made outside a sample is written exactly as before: no sample field
    label_store.append(path, label_store.make_label(item, "partial", "bo"))
    assert '"sample"' not in path.read_text().splitlines()[1]


def test_planner_makes_no_plan_from_labels_of_one_class():
    its, truth, verdicts, _ = world(6)
    one = [label(i, "supported") for i in its[:40]]
    plan = estimate.estimate(one, verdicts, its, "baseline", "baseline.v1", target=0.05, adjudicated={}, overlap=1).rate("citations").plan
    assert plan.labels_total is None and plan.ppi_total is None and "one class" in plan.unplanned
    assert "label more of the sample before planning" in estimate_report.plan_lines(estimate.estimate(
        one, verdicts, its, "baseline", "baseline.v1", target=0.05, adjudicated={}, overlap=1).rate("citations"))[0]


def test_sample_stratified_by_status_and_by_answer(tmp_path):
    log, corpus = ROOT / "sample_data" / "answers.jsonl", ROOT / "sample_data" / "corpus"
    code, _, err = run("sample", "--log", log, "--corpus", corpus, "--size", "20", "--seed", "1",
                       "--stratify", "status", "--out", tmp_path / "status.jsonl")
    assert code == 0, err
    s = samples.read(tmp_path / "status.jsonl")
    assert set(s.strata) == {"flagged", "verified"} and s.allocation == "proportional"
    for k in s.items:
        population, size = s.strata[s.stratum_of[k]]
        assert s.probability[k] == pytest.approx(size / population)
    assert sum(size for _, size in s.strata.values()) == 20 == len(s)
    code, _, err = run("sample", "--log", log, "--corpus", corpus, "--size", "6", "--seed", "1", "--unit", "answer",
                       "--stratify", "status", "--out", tmp_path / "answers.jsonl")
    assert code == 0, err
    a = samples.read(tmp_path / "answers.jsonl")
    assert a.unit == "answer" and set(a.strata) <= {"failing", "passing"}
    assert len({k.rsplit("#", 2)[0] for k in a.items}) == 6 and len(a) >= 6
    code, _, err = run("sample", "--log", log, "--size", "6", "--seed", "1", "--out", tmp_path / "answers.jsonl")
    assert code == 2 and "never overwritten" in err


def test_an_unreadable_log_line_is_reported_and_the_rest_still_counts(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(EQA_LOG.read_text(encoding="utf-8") + '{"answer_id": "broken"\n', encoding="utf-8")
    verdicts = tmp_path / "v.jsonl"
    run("judge", "--log", EQA_LOG, "--all-items", "--judge", "baseline", "--out", verdicts)
    code, out, err = run("estimate", "--log", log, "--labels", EQA_LABELS, "--verdicts", verdicts, "--format", "json")
    assert code == 4 and f"{log}:{len(EQA_LOG.read_text().splitlines()) + 1}" in err
    assert json.loads(out)["rates"]["citations"]["N"] == 772
    code, _, err = run("sample", "--log", log, "--size", "5", "--seed", "1", "--out", tmp_path / "s.jsonl")
    assert code == 4 and (tmp_path / "s.jsonl").is_file()


@given(st.integers(0, 10_000), st.floats(0.1, 50))
def test_equal_weights_change_nothing(seed, c):
    y, f, f_all = synthetic(seed, n=60, N=600)
    if y.min() == y.max():
        return
    plain = ppi_stats.ppi_mean(y, f, f_all, pseudo=1.0, student=True)
    weighted = ppi_stats.ppi_mean(y, f, f_all, w=np.full(len(y), c), pseudo=1.0, student=True)
    assert (weighted.value, weighted.low, weighted.high) == pytest.approx((plain.value, plain.low, plain.high))


def test_a_file_that_is_not_a_sample_is_said_once_and_many_bad_lines_are_counted(tmp_path):
    """A labels file given as --sample listed every one of its lines (``inclusion_probability: is
    required`` fifty times on one line); it is now said once that it is not a sample file."""
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"labels_version": 1, "item": f"a-{i}#s0#c0", "label": "supported"}) + "\n"
                              for i in range(50)))
    with pytest.raises(samples.SampleError) as caught:
        samples.read(labels)
    said = str(caught.value)
    assert said.startswith(f"{labels}: not a sample file: no line is a sample header (first bad line {labels}:1: "
                           "inclusion_probability: is required)") and said.count("is required") == 1
    assert said.endswith("give the file citecheck sample wrote, or draw a sample with citecheck sample")
    # a real sample with many bad lines: the first ten named, the rest counted
    path = tmp_path / "s.jsonl"
    samples.write(path, samples.draw(KEYS, 30, 1))
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0]] + [ln.replace('"inclusion_probability": ', '"p": ') for ln in lines[1:]]) + "\n")
    with pytest.raises(samples.SampleError) as caught:
        samples.read(path)
    said = str(caught.value)
    assert said.count("inclusion_probability: is required") == samples.MAX_LISTED
    assert said.endswith(f"; and {30 - samples.MAX_LISTED} more bad line(s) (draw the sample again with citecheck sample)")
