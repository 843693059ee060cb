"""Tables shaped for the Failures page: each a pure function of the report, tested directly,
so the page only lays out widgets (tests/test_views.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from fractions import Fraction

import pandas as pd

from citecheck.reports import figures
from citecheck.reports.golden import RetrievalEval
from citecheck.reports.rates import percent, points

ANY = "any"

def filters(reason: str = ANY, model: str = ANY, prompt_version: str = ANY, dates: Sequence[date] = (),
            refused: str = ANY, human: str = ANY, labelled: str = ANY, scope: str = "failing only") -> figures.Filters:
    """:class:`~.figures.Filters` from the page's choices (``"any"`` means no filter)."""
    start = end = None
    if isinstance(dates, (tuple, list)) and len(dates) == 2:
        start, end = dates[0].isoformat(), dates[1].isoformat()
    return figures.Filters(
        reason=None if reason == ANY else reason,
        model=None if model == ANY else model,
        prompt_version=None if prompt_version == ANY else prompt_version,
        start=start, end=end,
        refused=None if refused == ANY else refused == "refused",
        human_not_supported=None if human == ANY else human == "has 'not supported'",
        labelled=None if labelled == ANY else labelled == "labelled",
        failing_only=scope == "failing only",
    )


# The failing-answers table as the page shows it: the columns a product owner reads first (what is
# wrong, and the question) next to the answer, then the rest; each under a header in words.
FAILING_HEADERS = {
    "answer_id": "Answer", "reasons": "Reasons", "question": "Question", "model": "Model",
    "prompt_version": "Prompt version", "timestamp": "When", "problems": "Problems", "failed": "Failed citations",
    "citations": "Citations", "uncited": "Uncited sentences", "sentences": "Sentences",
    "invalid_markers": "Invalid markers", "refused": "Refused", "labelled": "Labelled citations",
    "not_supported": "Judged not supported by a reviewer",
}


def failing_view(shown: pd.DataFrame) -> pd.DataFrame:
    """The failing-answers table as shown (``FAILING_HEADERS`` order; no file or line: the CSV
    download has them).  Selecting a row opens the answer on the review page, in the same tab."""
    return shown[[c for c in FAILING_HEADERS if c in shown.columns]].copy()


def misses_table(r: RetrievalEval) -> pd.DataFrame:
    return pd.DataFrame([{"answer_id": m.label, "question": m.question, "wanted": ", ".join(m.expected),
                          "retrieved": ", ".join(m.retrieved[:r.k])} for m in r.misses],
                        columns=["answer_id", "question", "wanted", "retrieved"])


def compare_table(diffs: Sequence[figures.Difference], a: str, b: str) -> pd.DataFrame:
    """Figures of A and B side by side, with the difference (from the counts, rounded as the
    figures are), its interval and the test."""
    def exact(d: figures.Difference) -> Fraction | None:
        if d.diff is None or not d.a.total or not d.b.total:
            return None
        return Fraction(d.b.count, d.b.total) - Fraction(d.a.count, d.a.total)

    return pd.DataFrame([{
        "figure": d.label,
        f"A: {a}": f"{percent(d.a.count, d.a.total)} ({d.a.count}/{d.a.total})",
        f"B: {b}": f"{percent(d.b.count, d.b.total)} ({d.b.count}/{d.b.total})",
        "B - A": points(exact(d)),
        "95% interval": None if d.low is None else f"{(points(d.low) or '')[:-4]} to {points(d.high)}",
        "p-value": d.p_value, "larger than chance": "yes" if d.significant else "no",
    } for d in diffs])
