"""Alignment over time (core/citecheck/judging/alignment.py): calibration figures by the ISO week of
the verdicts and by the guidelines version of the labels, each calibrate's figures on its group."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from citecheck.judging import alignment, comparison_view
from citecheck.judging import verdicts as verdict_store
from citecheck.judging.calibration import CLASSES, bootstrap
from citecheck.labelling.events import Adjudication
from citecheck.labelling.labels import Label


def key(i: int) -> str:
    return f"a-{i:04d}#s0#c0"


def label(i: int, value: str, reviewer: str = "ana", guidelines: str = "g1") -> Label:
    return Label(1, key(i), f"a-{i:04d}", 0, 0, "c", "", value, "", reviewer, "", "", guidelines=guidelines)


def verdict(i: int, value: str, at: str, prompt: str = "v1", repeat: int = 0) -> verdict_store.Verdict:
    return dataclasses.replace(verdict_store.make(key(i), value, "", "j", prompt, "sha", repeat=repeat), at=at)


@pytest.mark.parametrize(("at", "week"), [
    ("2026-12-06T07:15:16.602Z", "2026-W49"),  # a Sunday: the end of ISO week 49
    ("2026-12-07T00:00:00Z", "2026-W50"),  # the Monday after starts week 50
    ("2027-01-01T12:00:00+00:00", "2026-W53"),  # ISO weeks belong to the year of their Thursday
    ("", "unknown"), ("yesterday", "unknown"),
])
def test_week_of(at, week):
    assert alignment.week_of(at) == week


def test_figures_by_week_are_calibrates_on_each_weeks_verdicts():
    labels = [label(i, CLASSES[i % 3]) for i in range(30)]
    week1 = [verdict(i, CLASSES[i % 3] if i % 5 else "not_supported", "2026-11-30T09:00:00Z") for i in range(30)]
    week2 = [verdict(i, CLASSES[i % 3], "2026-12-08T09:00:00Z") for i in range(10)]  # 10 items judged again
    week2 += [verdict(i, "partial", "2026-12-08T09:00:00Z", repeat=1) for i in range(30)]  # repeats never count
    week2 += [verdict(40, "supported", "2026-12-08T09:00:00Z")]  # unlabelled: not compared
    points = alignment.alignment(labels, week1 + week2, adjudicated={}, overlap=1, draws=100)
    weeks = [p for p in points if p.by == "week"]
    assert [(p.group, p.n) for p in weeks] == [("2026-W49", 30), ("2026-W50", 10)]
    h = np.array([i % 3 for i in range(30)])
    j = np.array([i % 3 if i % 5 else 2 for i in range(30)])
    expected = bootstrap(h, j, 100)
    for name in alignment.FIGURES:
        assert weeks[0].figures[name] == expected[name]
    assert weeks[1].figures["accuracy"].value == 1.0
    by_guidelines = [p for p in points if p.by == "guidelines"]
    assert [(p.group, p.n) for p in by_guidelines] == [("g1", 30)]  # the latest verdict per item, as calibrate
    assert by_guidelines[0].figures["accuracy"].value == pytest.approx(sum(  # items 0..9 judged again, right
        (CLASSES[i % 3] if i < 10 or i % 5 else "not_supported") == CLASSES[i % 3] for i in range(30)) / 30)


def test_groups_by_the_guidelines_version_the_label_was_settled_under():
    labels = [label(i, "supported", guidelines="g1") for i in range(4)]
    labels += [label(i, "supported", guidelines="g2") for i in range(4, 8)]
    labels += [label(8, "supported", guidelines="g1"), label(8, "supported", "bo", guidelines="g2")]  # mixed
    labels += [label(9, "supported", guidelines="")]  # older labels do not say
    labels += [label(10, "partial", guidelines="g1"), label(10, "supported", "bo", guidelines="g1")]  # adjudicated
    adjudicated = {key(10): Adjudication(key(10), "a-0010", 0, 0, "c", "", "supported", "", "lead", (), "",
                                         guidelines="g3")}
    verdicts = [verdict(i, "supported", "2026-12-01T00:00:00Z") for i in range(11)]
    verdicts += [verdict(i, "partial", "2026-12-01T00:00:00Z", prompt="v2") for i in range(11)]
    points = alignment.alignment(labels, verdicts, adjudicated=adjudicated, overlap=2, draws=50)
    groups = {(p.prompt_version, p.group): p.n for p in points if p.by == "guidelines"}
    assert groups == {("v1", "g1"): 4, ("v1", "g2"): 4, ("v1", "g3"): 1, ("v1", "mixed"): 1, ("v1", "unknown"): 1,
                      ("v2", "g1"): 4, ("v2", "g2"): 4, ("v2", "g3"): 1, ("v2", "mixed"): 1, ("v2", "unknown"): 1}
    assert all(p.figures["accuracy"].value == (1.0 if p.prompt_version == "v1" else 0.0) for p in points)
    frame = comparison_view.alignment_frame(points, "guidelines")
    assert set(frame["run"]) == {"j @ v1", "j @ v2"} and len(frame) == 10 * len(alignment.FIGURES)
    assert comparison_view.alignment_chart(points, "guidelines") is not None
    assert comparison_view.alignment_chart([], "week") is None


def test_split_keeps_only_that_splits_items():
    from citecheck.judging.calibration import split_of

    labels = [label(i, "supported") for i in range(40)]
    verdicts = [verdict(i, "supported", "2026-12-01T00:00:00Z") for i in range(40)]
    test = alignment.alignment(labels, verdicts, "test", adjudicated={}, overlap=1, draws=20)
    assert test[0].n == sum(split_of(key(i)) == "test" for i in range(40)) < 40
