"""What the Judge calibration page shows, computed without Streamlit (core/citecheck/judging/calibration_view.py),
on the bundled ExpertQA sample: real expert labels, judged by the baseline judge."""

from __future__ import annotations

import pytest
from citecheck.contract.item_keys import parse_item_key
from citecheck.judging import calibration, calibration_view
from citecheck.judging import verdicts as verdict_store
from citecheck.judging.judges import BaselineJudge, Progress, judge_items, not_yet_judged
from citecheck.labelling import dataset
from citecheck.labelling import labels as label_store
from citecheck.web.settings import EXPERTQA_LABELS, EXPERTQA_LOG
from hypothesis import given
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def expertqa():
    data = dataset.load([EXPERTQA_LOG])
    labels, problems = label_store.read(EXPERTQA_LABELS)
    assert not problems
    return data, labels


def _judged(data, labels, target):
    keys = {r.item for r in labels if r.citation is not None}
    items = judge_items(data.results, keys, data.items_by_answer)
    progress = Progress(total=len(items))
    seen = []
    run = calibration_view.run_judge(BaselineJudge(), items, progress, target, on_saved=lambda p: seen.append(p.done))
    return items, run, seen


def test_a_run_saves_every_verdict_before_counting_it(expertqa, tmp_path):
    data, labels = expertqa
    target = tmp_path / "verdicts.jsonl"
    items, run, seen = _judged(data, labels, target)
    on_disk, problems = verdict_store.read(target)
    assert not problems and run.write_error is None
    assert run.saved == len(on_disk) == len(items) > 10
    assert len(seen) == len(items)  # the bar moved once per saved verdict
    unscored = {v.item for v in on_disk if not v.scored}  # no chunk text to judge: retried by a second run
    assert {i.key for i in not_yet_judged(items, on_disk, BaselineJudge())} == unscored


def test_a_write_error_stops_the_run_and_is_returned(expertqa, tmp_path):
    data, labels = expertqa
    target = tmp_path / "not-a-file"
    target.mkdir()  # appending to a folder fails like a full disk would: with an OSError
    _, run, seen = _judged(data, labels, target)
    assert isinstance(run.write_error, OSError) and run.saved == 0 and seen == []


def test_tiles_captions_and_disagreements_agree_with_the_report(expertqa, tmp_path):
    data, labels = expertqa
    target = tmp_path / "verdicts.jsonl"
    _judged(data, labels, target)
    verdicts, _ = verdict_store.read(target)
    (judge, prompt), = verdict_store.runs(verdicts)
    fingerprints = {i.key: i.fingerprint for i in data.all_items}
    report = calibration.calibrate(labels, verdicts, judge, prompt, "all", fingerprints, draws=200, adjudicated={}, overlap=1)

    tiles = calibration_view.figure_tiles(report)
    assert [t.title for t in tiles] == list(calibration_view.FIGURE_TITLES.values())
    accuracy = report.figures["accuracy"]
    assert tiles[0].value == f"{accuracy.value:.2f}" and tiles[0].caption.endswith(f"n = {accuracy.n}")
    assert tiles[0].warn == (accuracy.n < 30)
    assert calibration_view.pairs_caption(report, 1).startswith(f"{len(report.pairs.keys):,} items with a human label")

    rows = calibration_view.disagreements(report)
    p = report.pairs
    assert len(rows) == sum(int(h != j) for h, j in zip(p.human, p.judge)) > 0
    assert all(r.human != r.judge and r.rationale == report.verdicts[r.item].rationale for r in rows)
    choices = calibration_view.kind_choices(rows)
    assert choices[0] == calibration_view.ALL_KINDS and choices[1:] == sorted({f"{r.human} / {r.judge}" for r in rows})
    assert sum(len(calibration_view.of_kind(rows, k)) for k in choices[1:]) == len(calibration_view.of_kind(rows, calibration_view.ALL_KINDS))

    result, sentence, citation = calibration_view.cited_pair(data, rows[0].item)
    key = parse_item_key(rows[0].item)
    assert result.answer.answer_id == key.answer_id
    assert sentence is result.sentences[key.sentence] and citation is result.citations[key.citation]
    assert calibration_view.cited_pair(data, f"{key.answer_id}#s9999#c0") is None  # the log changed since labelling
    assert calibration_view.cited_pair(data, "no-such-answer#s0#c0") is None

    chart = calibration_view.matrix_chart(report).to_dict()
    cells = chart["datasets"][next(iter(chart["datasets"]))]
    assert sum(c["items"] for c in cells) == len(p.keys)


def test_the_corrected_rate_and_agreement_texts():
    agreement = calibration.Agreement(("ana", "bo"), 12, 0.5, 0.48)
    text = calibration_view.agreement_text(agreement)
    assert text.startswith("12 items labelled by two or more of ana, bo; Cohen's kappa 0.50.")
    assert "; Cohen's kappa" not in calibration_view.agreement_text(calibration.Agreement(("a", "b", "c"), 3, None, 0.2))


@given(st.lists(st.text(min_size=1), min_size=1, max_size=8, unique=True), st.data())
def test_next_visits_every_item_once_and_previous_undoes_it(keys, data):
    start = data.draw(st.sampled_from(keys))
    seen, at = [], start
    for _ in keys:
        at = calibration_view.step(keys, at, 1)
        seen.append(at)
    assert sorted(seen) == sorted(keys) and seen[-1] == start  # wraps round to where it began
    assert calibration_view.step(keys, calibration_view.step(keys, start, 1), -1) == start
    assert calibration_view.step(keys, None, 0) == keys[0]  # an item no longer shown: start from the first


def test_a_move_steps_from_the_item_it_was_drawn_on_once_however_often_it_is_called():
    """Streamlit can deliver one Previous/Next press twice, or run its callback in two threads at
    once: the page moves one place, from the item the button was drawn on."""
    import threading

    keys = ["a", "b", "c", "d"]
    state: dict = {"cal_item": "b"}
    assert calibration_view.step_item(state, keys, "b", 1) and state["cal_item"] == "c"
    assert not calibration_view.step_item(state, keys, "b", 1) and state["cal_item"] == "c"  # the same press again
    assert calibration_view.step_item(state, keys, "c", -1) and state["cal_item"] == "b"  # a new press, drawn on c
    moved = []
    calls = [threading.Thread(target=lambda: moved.append(calibration_view.step_item(state, keys, "b", 1)))
             for _ in range(8)]
    for call in calls:
        call.start()
    for call in calls:
        call.join()
    assert sorted(moved) == [False] * 7 + [True] and state["cal_item"] == "c"


def test_a_rate_that_cannot_be_corrected_says_why_on_the_page_as_calibrate_does():
    """A judge that calls every item supported has TPR 0: Rogan-Gladen cannot correct its raw rate on
    the unlabelled items it judged.  The page said "judge more than the labelled items (--all-items)",
    advice that could not help, while calibrate printed "n/a"; both now give the one reason."""
    def lab(key: str, value: str) -> label_store.Label:
        return label_store.Label(1, key, key.split("#")[0], 0, 0, "c", "fp", value, "", "ann", "1", "t")

    labels = [lab(f"k{i}#s0#c0", v) for i, v in enumerate(["supported", "not_supported", "partial", "supported"])]
    verdicts = [verdict_store.make(f"{k}#s0#c0", "supported", "", "j", "v1", "h")
                for k in ("k0", "k1", "k2", "k3", "u1", "u2")]  # u1, u2: judged, not labelled
    report = calibration.calibrate(labels, verdicts, "j", "v1", draws=200, adjudicated={}, overlap=1)
    assert report.corrected is not None and report.corrected.value is None and report.corrected.n == 2
    assert report.corrected.why == calibration.NO_CORRECTION
    assert f"Rogan-Gladen corrected n/a: {calibration.NO_CORRECTION} (n=2)" in report.to_text()
    value, caption = calibration_view.corrected_texts(report)
    assert value == "n/a" and caption.endswith(f"Rogan-Gladen correction not possible: {calibration.NO_CORRECTION}")
    assert caption.startswith("raw judge rate 0.0% over 2 unlabelled item(s)")
    # no unlabelled item judged: the page's advice to judge more is the right one
    assert calibration_view.corrected_texts(
        calibration.calibrate(labels, verdicts[:4], "j", "v1", draws=200, adjudicated={}, overlap=1)) is None
