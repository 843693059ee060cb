"""What the Judge calibration page shows, built without Streamlit: the figure tiles, the texts beside
the corrected rate and the reviewers' agreement, the confusion-matrix chart, the disagreements and
their filter, and one judge run that saves each verdict before it counts it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import altair as alt

from citecheck.contract.item_keys import parse_item_key
from citecheck.judging import verdicts
from citecheck.judging.calibration import CLASSES, Agreement, Calibration
from citecheck.judging.captions import CLASS_NAMES, estimate_caption, matrix_frame, small
from citecheck.judging.judges import JudgeItem, Progress
from citecheck.labelling.consensus import counts_text
from citecheck.reports.rates import percent
from citecheck.review.session_state import State, acting

FIGURE_TITLES = {
    "accuracy": "Accuracy (3 classes)", "kappa": "Cohen's kappa", "weighted_kappa": "Weighted kappa (linear)",
    "tpr": "TPR: not supported caught", "tnr": "TNR: others left alone", "precision": "Precision",
    "recall": "Recall", "f1": "F1",
}
ALL_KINDS = "all"


@dataclass(frozen=True, slots=True)
class Tile:
    title: str
    value: str  # "0.83", or "n/a" when the figure cannot be computed
    caption: str  # interval and n
    warn: bool  # too few items: the caption is shown as a warning


def figure_tiles(report: Calibration) -> list[Tile]:
    """One tile per figure, in FIGURE_TITLES order."""
    tiles = []
    for key, title in FIGURE_TITLES.items():
        est = report.figures[key]
        value = "n/a" if est.value is None else f"{est.value:.2f}"
        tiles.append(Tile(title, value, estimate_caption(est), small(est)))
    return tiles


def pairs_caption(report: Calibration, overlap: int) -> str:
    """How many items were compared, and which rule settled their human label."""
    p = report.pairs
    return (f"{len(p.keys):,} items with a human label and a verdict; {p.unscored} unscored by the judge; "
            f"{p.unjudged} not judged yet. Human labels: {counts_text(report.rules)} (overlap {overlap}).")


def corrected_texts(report: Calibration) -> tuple[str, str] | None:
    """The corrected not-supported rate of unlabelled items and its caption, or None when the judge
    has judged no unlabelled item (the page then says how to get one).  When the rate cannot be
    corrected, "n/a" and why (as ``calibrate`` says it): judging more items would not help then."""
    ce = report.corrected
    if ce is None:
        return None
    if ce.value is None:
        raw = "n/a" if report.raw_rate is None else percent(report.raw_rate)
        return "n/a", (f"raw judge rate {raw} over {ce.n} unlabelled item(s); Rogan-Gladen correction not "
                       f"possible: {ce.why or 'too few items'}")
    interval = (f"95% CI {percent(ce.low)} to {percent(ce.high)}" if ce.low is not None
                else f"(no interval: {ce.why or 'too few items'})")
    return percent(ce.value), (f"raw judge rate {percent(report.raw_rate)} over {ce.n} unlabelled item(s); "
                               f"Rogan-Gladen correction {interval}")


def agreement_text(a: Agreement) -> str:
    """What the reviewers' agreement says about the judge (plain text: names come from the labels file)."""
    kappa = "" if a.kappa is None else f"; Cohen's kappa {a.kappa:.2f}"
    return (f"{a.shared_items} items labelled by two or more of {', '.join(a.reviewers)}{kappa}. A judge cannot "
            "be expected to agree with people better than they agree with each other.")


def matrix_chart(report: Calibration) -> alt.LayerChart:
    """The confusion matrix as a heat map with the counts written in each cell."""
    matrix = matrix_frame(report.matrix)
    order = list(CLASS_NAMES.values())
    heat = alt.Chart(matrix).mark_rect().encode(
        x=alt.X("judge:N", sort=order, title="judge says", axis=alt.Axis(labelAngle=0, orient="top")),
        y=alt.Y("human:N", sort=order, title="human says", axis=alt.Axis(labelLimit=200)),
        color=alt.Color("items:Q", scale=alt.Scale(scheme="blues"), legend=None),
        tooltip=["human", "judge", "items"])
    half = float(matrix["items"].max()) / 2
    counts = alt.Chart(matrix).mark_text(fontSize=16).encode(
        x=alt.X("judge:N", sort=order), y=alt.Y("human:N", sort=order), text="items:Q",
        color=alt.condition(alt.datum.items > half, alt.value("white"), alt.value("black")))
    return heat + counts


# --- disagreements -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Disagreement:
    item: str
    human: str
    judge: str
    rationale: str

    @property
    def kind(self) -> str:
        return f"{self.human} / {self.judge}"


def disagreements(report: Calibration) -> list[Disagreement]:
    """The compared items where the judge's class differs from the human's, in the pairs' order."""
    p = report.pairs
    return [Disagreement(k, CLASSES[h], CLASSES[j], report.verdicts[k].rationale)
            for k, h, j in zip(p.keys, p.human, p.judge) if h != j]


def kind_choices(rows: Sequence[Disagreement]) -> list[str]:
    """``all`` and then each human / judge pair that occurs, sorted."""
    return [ALL_KINDS] + sorted({r.kind for r in rows})


def of_kind(rows: Sequence[Disagreement], kind: str) -> list[Disagreement]:
    return [r for r in rows if kind == ALL_KINDS or r.kind == kind]


def step(keys: Sequence[str], current: str | None, delta: int) -> str:
    """The key ``delta`` places from ``current`` (from the first when it is not among them), wrapping."""
    at = keys.index(current) if current in keys else 0
    return keys[(at + delta) % len(keys)]


def step_item(state: State, keys: Sequence[str], drawn: str, delta: int, key: str = "cal_item") -> bool:
    """Previous/Next among the disagreements: ``state[key]`` becomes the item ``delta`` places from
    ``drawn``, the one the button was drawn on; False, nothing done, when the page has moved on since
    (Streamlit can deliver one press twice: stepping from the current item moved two places)."""
    with acting(state):
        if state.get(key) != drawn:
            return False
        state[key] = step(keys, drawn, delta)
        return True


def cited_pair(data, item: str):
    """``(result, sentence, citation)`` of an item key in the loaded answers, or None when the log
    changed since the item was labelled (the answer, the sentence or the citation is gone)."""
    key = parse_item_key(item)
    result = data.get(key.answer_id)
    if result is None or key.citation is None or key.sentence >= len(result.sentences) \
            or key.citation >= len(result.citations):
        return None
    return result, result.sentences[key.sentence], result.citations[key.citation]


# --- one judge run -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunResult:
    saved: int  # verdicts on disk
    write_error: OSError | None  # the error that stopped saving (a full disk), if any


def run_judge(judge, todo: Sequence[JudgeItem], progress: Progress, target: str | Path,
              on_saved: Callable[[Progress], None] = lambda p: None) -> RunResult:
    """Judge ``todo``, appending each verdict to ``target`` before it counts as saved; a write error
    stops the run and is returned, the verdicts saved before it are kept."""
    saved = 0

    def record(v: verdicts.Verdict) -> None:
        nonlocal saved
        verdicts.append(target, [v])
        saved += 1
        on_saved(progress)

    try:
        judge.judge(todo, on_verdict=record, progress=progress)
    except OSError as exc:
        return RunResult(saved, exc)
    return RunResult(saved, None)
