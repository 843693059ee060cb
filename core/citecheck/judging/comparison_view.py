"""What the Judge calibration page shows about improving a judge, built without Streamlit: the
side-by-side table and the chart of differences of two runs (``comparison``), the self-consistency
tiles and unstable items (``consistency``) and the alignment chart (``alignment``).  Every text in
these frames is shown by a table or chart widget, which does not read Markdown."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from citecheck.judging.alignment import Point, rows
from citecheck.judging.calibration import Estimate
from citecheck.judging.captions import estimate_caption
from citecheck.judging.comparison import FIGURES, LEVEL, TITLES, Comparison
from citecheck.judging.consistency import Consistency


def _value(e: Estimate) -> str:
    if e.value is None:
        return "n/a"
    interval = f" [{e.low:.2f}, {e.high:.2f}]" if e.low is not None and e.high is not None else ""
    return f"{e.value:.2f}{interval}"


def side_by_side(result: Comparison) -> pd.DataFrame:
    """One row per figure: A's and B's value with its 95% interval, and B - A with its paired interval."""
    return pd.DataFrame([{"figure": TITLES[d.figure], "A": _value(result.figures_a[d.figure]),
                          "B": _value(result.figures_b[d.figure]), "B - A": d.text(), "n": d.n}
                         for d in result.differences])


def differences_frame(result: Comparison) -> pd.DataFrame:
    """The differences that have an interval (the chart's points and bars)."""
    return pd.DataFrame([{"figure": TITLES[d.figure], "difference": d.value, "low": d.low, "high": d.high, "n": d.n}
                         for d in result.differences if d.value is not None and d.low is not None])


def differences_chart(result: Comparison) -> alt.LayerChart | None:
    """Each difference B - A as a point with its interval, beside a rule at 0; None when none has an interval."""
    frame = differences_frame(result)
    if frame.empty:
        return None
    y = alt.Y("figure:N", sort=[TITLES[f] for f in FIGURES], title=None)
    bars = alt.Chart(frame).mark_rule(strokeWidth=3).encode(
        x=alt.X("low:Q", title=f"B - A ({LEVEL:.2%} paired interval each)"), x2="high:Q", y=y)
    dots = alt.Chart(frame).mark_point(filled=True, size=70).encode(
        x="difference:Q", y=y, tooltip=["figure", "difference", "low", "high", "n"])
    zero = alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(strokeDash=[4, 4], color="gray").encode(x="zero:Q")
    return zero + bars + dots


def differing_frame(result: Comparison) -> pd.DataFrame:
    return pd.DataFrame([{"item": d.item, "human": d.human, "A": d.a, "B": d.b} for d in result.differing],
                        columns=["item", "human", "A", "B"])


def consistency_tiles(c: Consistency) -> list[tuple[str, str, str]]:
    """(title, value, caption) of each self-consistency figure."""
    def tile(title: str, e: Estimate) -> tuple[str, str, str]:
        return title, "n/a" if e.value is None else f"{e.value:.2f}", estimate_caption(e)
    return [tile("Verdict changed across runs", c.changed), tile(f"Fleiss' kappa ({c.runs} runs)", c.fleiss),
            tile("Majority verdict vs humans", c.majority), tile("Run 0 alone vs humans", c.single)]


def unstable_frame(c: Consistency) -> pd.DataFrame:
    return pd.DataFrame([{"item": r.item, "verdicts by run": " / ".join(r.verdicts), "majority": r.majority,
                          "instability": round(r.instability, 2)} for r in c.unstable],
                        columns=["item", "verdicts by run", "majority", "instability"])


def alignment_frame(points: Sequence[Point], by: str) -> pd.DataFrame:
    return pd.DataFrame(rows(points, by), columns=["run", by, "figure", "value", "low", "high", "n"])


def alignment_chart(points: Sequence[Point], by: str) -> alt.FacetChart | None:
    """Each run's figures over the weeks (or guidelines versions), with their intervals, one panel per figure."""
    frame = alignment_frame(points, by).dropna(subset=["value"])
    if frame.empty:
        return None
    x = alt.X(f"{by}:O", title=by)
    line = alt.Chart().mark_line(point=True).encode(x=x, y=alt.Y("value:Q", title=None), color="run:N",
                                                    tooltip=["run", by, "figure", "value", "low", "high", "n"])
    bars = alt.Chart().mark_rule().encode(x=x, y="low:Q", y2="high:Q", color="run:N")
    # (wrapped three panels a row, each wide enough for its title and axis: as one row of narrow
    # panels the titles ran into each other, "Cohen's kappTNR")
    return (alt.layer(bars, line, data=frame).properties(width=200, height=160)
            .facet(facet=alt.Facet("figure:N", title=None, header=alt.Header(labelFontSize=13)), columns=3)
            .configure_legend(orient="bottom", labelLimit=400))
