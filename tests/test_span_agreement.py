"""Span-level agreement: the overlap F1 of the characters two reviewers marked as not supported,
per pair of reviewers and pooled, each with the items it rests on (``labels agreement``)."""

from __future__ import annotations

import json

import pytest
from citecheck.labelling import labels, marked_spans
from citecheck.labelling.span_agreement import (
    overlap_chars,
    overlap_f1,
    span_agreement,
)
from helpers import run_cli
from hypothesis import given
from hypothesis import strategies as st

SPANS = st.lists(st.tuples(st.integers(0, 80), st.integers(0, 80))).map(marked_spans.normalise)


def chars(spans) -> set[int]:
    return {i for a, b in spans for i in range(a, b)}


@given(SPANS, SPANS)
def test_overlap_f1_is_the_f1_of_the_character_sets_and_symmetric(a, b):
    assert overlap_chars(a, b) == len(chars(a) & chars(b))
    f1 = overlap_f1(a, b)
    assert f1 == overlap_f1(b, a)
    if not a and not b:
        assert f1 is None
    else:
        assert f1 == pytest.approx(2 * len(chars(a) & chars(b)) / (len(chars(a)) + len(chars(b))))
        assert 0 <= f1 <= 1


@given(SPANS)
def test_identical_marks_agree_fully(a):
    assert overlap_f1(a, a) == (1.0 if a else None)


@given(SPANS, st.integers(81, 200))
def test_disjoint_marks_do_not_agree(a, shift):
    b = tuple((x + shift, y + shift) for x, y in a)  # every span moved past the last of a
    if a:
        assert overlap_f1(a, b) == 0


@pytest.mark.parametrize("a, b, f1", [
    (((0, 10),), ((5, 15),), 0.5),  # 5 in common, 10 + 10 marked
    (((0, 10),), ((0, 5),), 2 * 5 / 15),  # one marked half of the other's words
    (((0, 4), (10, 14)), ((2, 12),), 2 * 4 / 18),  # 2 + 2 in common, 8 + 10 marked
    (((0, 4),), (), 0.0),  # one marked, the other nothing
])
def test_overlap_f1_by_hand(a, b, f1):
    assert overlap_f1(a, b) == pytest.approx(f1)


def lab(item: str, reviewer: str, spans, label: str = "partial", fingerprint: str = "f", at: str = "t"):
    return labels.Label(1, item, item.split("#")[0], 0, 0, "c", fingerprint, label, "", reviewer, at, "0",
                        spans=tuple(spans))


def test_pairs_and_pooled_by_hand():
    given_labels = [
        lab("a#s0#c0", "ana", [(0, 10)]), lab("a#s0#c0", "ben", [(5, 15)]), lab("a#s0#c0", "cy", [(0, 10)]),
        lab("b#s0#c0", "ana", [(0, 4)]), lab("b#s0#c0", "ben", [(0, 4)]),
        lab("c#s0#c0", "ana", [(0, 8)]), lab("c#s0#c0", "ben", [], label="supported"),  # ben marked nothing: left out
        lab("d#s0#c0", "cy", [(0, 3)]),  # one reviewer only: no pair
    ]
    result = span_agreement(given_labels)
    assert list(result.pairs) == [("ana", "ben"), ("ana", "cy"), ("ben", "cy")]
    ana_ben = result.pairs[("ana", "ben")]
    assert (ana_ben.n, ana_ben.overlap, ana_ben.marked) == (2, 5 + 4, 20 + 8)  # items a and b
    assert ana_ben.f1 == pytest.approx(18 / 28)
    assert result.pairs[("ana", "cy")].f1 == 1.0 and result.pairs[("ana", "cy")].n == 1
    assert result.pairs[("ben", "cy")].f1 == pytest.approx(0.5)
    assert (result.pooled.n, result.pooled.overlap, result.pooled.marked, result.items) == (4, 9 + 10 + 5, 28 + 20 + 20, 2)
    assert result.pooled.f1 == pytest.approx(2 * 24 / 68)


def test_the_latest_label_counts_and_stale_ones_are_left_out():
    given_labels = [lab("a#s0#c0", "ana", [(0, 10)], at="1"), lab("a#s0#c0", "ben", [(0, 10)]),
                    lab("a#s0#c0", "ana", [(20, 30)], at="2"),  # ana changed her mind: no overlap now
                    lab("b#s0#c0", "ana", [(0, 4)]), lab("b#s0#c0", "ben", [(0, 4)], fingerprint="old")]
    assert span_agreement(given_labels).pairs[("ana", "ben")].f1 == pytest.approx(2 * 4 / 28)  # (0 + 4) common of 20 + 8
    current = span_agreement(given_labels, {"a#s0#c0": "f", "b#s0#c0": "f"})
    assert current.pairs[("ana", "ben")].f1 == 0 and current.pairs[("ana", "ben")].n == 1


def test_no_pairs():
    result = span_agreement([lab("a#s0#c0", "ana", [(0, 3)])])
    assert result.pairs == {} and result.pooled.f1 is None and result.pooled.n == 0


def test_labels_agreement_command(tmp_path):
    path = tmp_path / "labels.jsonl"
    for record in [lab("a-001#s0#c0", "ana", [(4, 15), (25, 32)]), lab("a-001#s0#c0", "ben", [(4, 15)])]:
        labels.append(path, record)
    code, out, err = run_cli("labels", "agreement", path)
    assert code == 0 and err == ""
    assert out.splitlines() == ["span agreement (overlap F1 of the characters marked as not supported):",
                                f"  ana / ben: {2 * 11 / 29:.3f} (n=1 item(s))",
                                f"  pooled: {2 * 11 / 29:.3f} (n=1 item-pair(s) over 1 item(s))"]
    code, out, err = run_cli("labels", "agreement", path, "--format", "json")
    figures = json.loads(out)
    assert figures["pairs"] == [{"reviewers": ["ana", "ben"], "f1": pytest.approx(22 / 29), "n": 1,
                                 "overlap_chars": 11, "marked_chars": 29}]
    assert figures["items"] == 1


def test_labels_agreement_with_the_log_leaves_out_changed_items(tmp_path):
    from pathlib import Path

    log = Path(__file__).parent / "data" / "span_marking" / "answers.jsonl"
    path = tmp_path / "labels.jsonl"
    for who in ("ana", "ben"):  # fingerprint "f" is not the item's: both labels are stale
        labels.append(path, lab("a-001#s0#c0", who, [(4, 15)]))
    code, out, _ = run_cli("labels", "agreement", path, "--log", log)
    assert code == 0 and out == "span agreement: no item has marked spans from two reviewers\n"


def test_labels_agreement_leaves_out_marks_that_no_longer_fit_their_sentence(tmp_path):
    from pathlib import Path

    from citecheck.labelling import dataset

    log = Path(__file__).parent / "data" / "span_marking" / "answers.jsonl"
    items = dataset.load([log]).items_by_answer[0]
    path = tmp_path / "labels.jsonl"
    labels.append(path, labels.make_label(items[1], "partial", "ana", spans=((60, 62),)))
    labels.append(path, labels.make_label(items[1], "partial", "ben", spans=((60, 62),)))
    labels.append(path, labels.make_label(items[1], "partial", "cy", spans=((4, 15),)))  # sentence 0's words
    code, out, err = run_cli("labels", "agreement", path, "--log", log, "--format", "json")
    assert code == 0 and [p["reviewers"] for p in json.loads(out)["pairs"]] == [["ana", "ben"]]
    assert "warning: cy's label of a-001#s1#c1" in err and "spans[0] [4, 15] is outside the item's sentence" in err


def test_calibrate_reports_the_reviewers_span_agreement_beside_their_kappa(tmp_path):
    """The calibration report says how far reviewers agree on the words they marked, with n, in text
    and JSON, with the same figures as ``labels agreement``."""
    from citecheck.judging import verdicts as verdict_store

    path, verdicts = tmp_path / "labels.jsonl", tmp_path / "verdicts.jsonl"
    for record in [lab("a-001#s0#c0", "ana", [(4, 15), (25, 32)]), lab("a-001#s0#c0", "ben", [(4, 15)])]:
        labels.append(path, record)
    verdict_store.append(verdicts, [verdict_store.make("a-001#s0#c0", "partial", "", "baseline", "baseline.v1", "")])
    code, out, err = run_cli("calibrate", "--labels", path, "--verdicts", verdicts)
    assert code == 0, err
    assert f"  ana / ben: {2 * 11 / 29:.3f} (n=1 item(s))" in out.splitlines()
    code, out, err = run_cli("calibrate", "--labels", path, "--verdicts", verdicts, "--format", "json")
    spans = json.loads(out)["reviewers"]["span_agreement"]
    assert spans["pairs"] == [{"reviewers": ["ana", "ben"], "f1": pytest.approx(22 / 29), "n": 1,
                               "overlap_chars": 11, "marked_chars": 29}]
