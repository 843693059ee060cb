"""The figures tables as people read them: named columns, percentages with their counts, periods
as dates.  The Failures page shows these; :mod:`.figures` computes the numbers."""

from __future__ import annotations

import math

import pandas as pd

from citecheck.reports.rates import percent

# The figures a breakdown by model or prompt version shows, with the name a reader sees.
GROUP_FIGURES = (
    ("failing_answers", "Failing answers"),
    ("citation_failure_rate", "Failed citations"),
    ("refusal_rate", "Refused answers"),
    ("uncited_sentence_rate", "Uncited sentences"),
    ("withheld_answers", "Withheld answers"),
)
# The over-time series' figures: (the report's key, rate column, count column, total column, the
# name the chart legend, the table and the report's text use).
PERIOD_FIGURES = (
    ("failing_answers", "failing_rate", "failing", "answers", "Failing answers"),
    ("citation_failure_rate", "citation_failure_rate", "failed", "citations", "Failed citations"),
    ("refusal_rate", "refusal_rate", "refused", "answers", "Refused answers"),
    ("uncited_sentence_rate", "uncited_sentence_rate", "uncited", "sentences", "Uncited sentences"),
)
DATE_FORMAT = "%Y-%m-%d"  # one format on the axis and in the table (Vega's strftime and pandas')


def share(count, total) -> str:
    """``"29.2% (7 of 24)"``; ``"n/a (0 of 0)"`` when there is nothing to divide by."""
    if count is None or total is None or (isinstance(count, float) and math.isnan(count)):
        return ""
    count, total = int(count), int(total)
    return f"{percent(count, total)} ({count:,} of {total:,})"  # (the one rounding rule: 3 of 48 is 6.3%)


def group_shares(row: dict) -> str:
    """One row of a breakdown (``figures.breakdown``) as the report's text gives it: every figure
    the page's breakdown shows (:data:`GROUP_FIGURES`), by the same names, each a share with its counts."""
    return "; ".join(f"{name.lower()} {share(row[f'{key}.count'], row[f'{key}.total'])}"
                     for key, name in GROUP_FIGURES
                     if f"{key}.count" in row and not pd.isna(row[f"{key}.count"]))


def period_shares(row: dict) -> str:
    """One period of ``figures.over_time`` as the report's text gives it (:data:`PERIOD_FIGURES`)."""
    return "; ".join(f"{name.lower()} {share(row[count], row[total])}" for _, _, count, total, name in PERIOD_FIGURES)


def group_view(frame: pd.DataFrame, column: str, title: str) -> pd.DataFrame:
    """A breakdown (``figures.breakdown``) with a named column per figure, each a share with its counts."""
    out = pd.DataFrame({title: frame[column].astype(str), "Answers": frame["answers"].astype(int)})
    for key, name in GROUP_FIGURES:
        if f"{key}.count" not in frame.columns or frame[f"{key}.count"].isna().all():
            continue  # (withheld: only where the faithfulness gate scored answers)
        out[name] = [share(c, t) for c, t in zip(frame[f"{key}.count"], frame[f"{key}.total"])]
    return out


def reasons_view(reasons: pd.DataFrame, answers: int) -> pd.DataFrame:
    """The reasons table (``figures.by_reason``) as read: the reason, what it means, its occurrences
    as a share of the citations or sentences it is counted over, and the answers it occurs in as a
    share of the ``answers`` loaded."""
    return pd.DataFrame({
        "Reason": reasons["reason"],
        "What it means": reasons["description"],
        "Occurrences": [f"{share(c, t)} {of}" for c, t, of in zip(reasons["count"], reasons["total"], reasons["of"])],
        "Answers with it": [share(a, answers) for a in reasons["answers"]],
    }, columns=["Reason", "What it means", "Occurrences", "Answers with it"])


def group_chart_data(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Long form of a breakdown for a chart: group, figure name, rate, count, total and the share text."""
    rows = []
    for row in frame.to_dict("records"):
        for key, name in GROUP_FIGURES:
            count = row.get(f"{key}.count")
            if count is None or pd.isna(count):
                continue
            rows.append({"group": str(row[column]), "figure": name, "rate": row[f"{key}.rate"],
                         "count": int(count), "total": int(row[f"{key}.total"]),
                         "share": share(count, row[f"{key}.total"])})
    return pd.DataFrame(rows, columns=["group", "figure", "rate", "count", "total", "share"])


def period_label(freq: str) -> str:
    return "Week of" if freq == "W" else "Day"


def period_view(series: pd.DataFrame, freq: str) -> pd.DataFrame:
    """An over-time series (``figures.over_time``): the period as a date (a week by its Monday),
    answers, and each rate as a share with its counts."""
    out = pd.DataFrame({period_label(freq): pd.to_datetime(series["period"]).dt.strftime(DATE_FORMAT),
                        "Answers": series["answers"].astype(int)})
    for _, _, count, total, name in PERIOD_FIGURES:
        out[name] = [share(c, t) for c, t in zip(series[count], series[total])]
    return out


def period_chart_data(series: pd.DataFrame) -> pd.DataFrame:
    """Long form of an over-time series for a line chart, with readable figure names."""
    rows = []
    for row in series.to_dict("records"):
        for _, rate, count, total, name in PERIOD_FIGURES:
            if pd.isna(row[rate]):
                continue
            rows.append({"period": pd.Timestamp(row["period"]).strftime(DATE_FORMAT), "figure": name,
                         "rate": row[rate], "share": share(row[count], row[total])})
    return pd.DataFrame(rows, columns=["period", "figure", "rate", "share"])
