"""The failed-answers report: every figure the product owner's page shows, in one value that
``citecheck report`` prints as text, JSON or CSV (docs/report.md, report version 1)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from citecheck.contract import spreadsheet
from citecheck.reports import figures, readable
from citecheck.reports.golden import GoldenQuestion, RetrievalEval, evaluate_retrieval
from citecheck.reports.inputs import Inputs
from citecheck.reports.rates import json_rate, percent

OVERVIEW_VERSION = 1


@dataclass(frozen=True)
class Overview:
    table: pd.DataFrame
    headline: list[figures.Figure]
    reasons: pd.DataFrame
    by_model: pd.DataFrame
    by_prompt: pd.DataFrame
    weekly: pd.DataFrame
    refusals: figures.RefusalFigures | None
    retrieval: RetrievalEval | None
    unreadable: int = 0
    faithfulness: pd.DataFrame | None = None  # score distribution, when any answer was scored
    inputs: Inputs | None = None  # what the figures come from (said first by every format)

    @property
    def has_models(self) -> bool:
        return bool(len(self.table)) and (self.table["model"] != figures.NONE).any()

    @property
    def has_prompts(self) -> bool:
        return bool(len(self.table)) and (self.table["prompt_version"] != figures.NONE).any()

    def to_dict(self) -> dict:
        def records(df: pd.DataFrame) -> list[dict]:
            return [{k: _plain(v) for k, v in row.items()} for row in df.to_dict("records")]

        return {
            "record": "overview",
            "report_version": OVERVIEW_VERSION,
            "answers": len(self.table),
            "unreadable_lines": self.unreadable,
            "inputs": None if self.inputs is None else self.inputs.to_dict(),
            "headline": [f.to_dict() for f in self.headline],
            "reasons": records(self.reasons),
            "by_model": records(self.by_model),
            "by_prompt_version": records(self.by_prompt),
            "by_week": records(self.weekly),
            "refusals": None if self.refusals is None else {
                "figures": [f.to_dict() for f in self.refusals.figures()],
                "over_refused": list(self.refusals.over_refused_ids),
                "under_refused": list(self.refusals.under_refused_ids),
                "not_in_golden": self.refusals.not_in_golden,
            },
            "retrieval": None if self.retrieval is None else self.retrieval.to_dict(),
            "faithfulness_scores": None if self.faithfulness is None else records(self.faithfulness),
        }

    def to_text(self) -> str:
        lines = [f"{len(self.table)} answers" + (f", {self.unreadable} unreadable line(s)" if self.unreadable else "")
                 if self.inputs is None else self.inputs.text()]
        if not len(self.table):
            lines.append("no answers to report on")
            return "\n".join(lines) + "\n"
        lines += ["", "headline"] + [f"  {_fig(f)}" for f in self.headline]
        lines += ["", "failure reasons"]
        for row in self.reasons.itertuples():
            if row.count:
                lines.append(f"  {row.reason:<28} {row.count:>6} of {row.total} {row.of} = {_pct(row.rate)}"
                             f", in {row.answers} answer{'' if row.answers == 1 else 's'}")
        for title, df, col, present in (("by model", self.by_model, "model", self.has_models),
                                        ("by prompt version", self.by_prompt, "prompt_version", self.has_prompts)):
            lines += ["", title]
            if not present:
                lines.append(f"  the logs have no {col} field")
                continue
            for row in df.to_dict("records"):
                lines.append(f"  {row[col]:<24} {row['answers']:>6} answers: " + readable.group_shares(row))
        lines += ["", "by week"]
        if self.weekly.empty:
            lines.append("  no readable timestamps")
        for row in self.weekly.to_dict("records"):
            lines.append(f"  {row['period']:%Y-%m-%d}  {row['answers']:>6} answers: " + readable.period_shares(row))
        if self.faithfulness is not None:
            lines += ["", "faithfulness scores (scored answers; withheld below the threshold)"]
            for row in self.faithfulness.itertuples():
                lines.append(f"  {row.bin}  {row.answers:>6} answers ({_pct(row.share)}), {row.withheld} withheld")
        if self.refusals is not None:
            lines += ["", "refusals against the golden set"] + [f"  {_fig(f)}" for f in self.refusals.figures()]
            if self.refusals.over_refused_ids:
                lines.append("  over-refused: " + ", ".join(self.refusals.over_refused_ids))
            if self.refusals.under_refused_ids:
                lines.append("  under-refused: " + ", ".join(self.refusals.under_refused_ids))
        if self.retrieval is not None:
            r = self.retrieval
            hit, mrr = r.shown()
            lines += ["", f"retrieval against the golden set (k={r.k})",
                      f"  hit rate@{r.k}: {hit} ({r.hits} of {r.answerable} answerable)"
                      f"   MRR: {mrr}",
                      f"  unanswerable questions (not in hit rate or MRR): {r.unanswerable}"
                      f"; answers whose question is not in the golden set: {r.not_in_golden}"]
            for m in r.misses:
                lines.append(f"  missed {m.label}: {m.question} (wanted {', '.join(m.expected)})")
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        """Every figure as one long table: section, group, figure, count, total, rate."""
        buf = io.StringIO()
        w = spreadsheet.Writer(buf)  # (a group is a model or prompt version from the logs)
        w.writerow(["section", "group", "figure", "count", "total", "rate"])
        for f in self.headline:
            w.writerow(["headline", "", f.key, f.count, f.total, _csv_rate(f.rate)])
        for row in self.reasons.itertuples():
            w.writerow(["reason", "", row.reason, row.count, row.total, _csv_rate(row.rate)])
        for section, df, col in (("model", self.by_model, "model"), ("prompt_version", self.by_prompt, "prompt_version")):
            for row in df.to_dict("records"):
                for key in figures.FIGURE_KEYS + figures.OPTIONAL_KEYS:
                    if f"{key}.count" in row and not pd.isna(row[f"{key}.count"]):
                        w.writerow([section, row[col], key, int(row[f"{key}.count"]), int(row[f"{key}.total"]),
                                    _csv_rate(row[f"{key}.rate"])])
        for row in self.weekly.to_dict("records"):
            for key, rate, count, total, _ in readable.PERIOD_FIGURES:
                w.writerow(["week", f"{row['period']:%Y-%m-%d}", key, int(row[count]), int(row[total]),
                            _csv_rate(row[rate])])
        if self.faithfulness is not None:
            for row in self.faithfulness.itertuples():
                w.writerow(["faithfulness_score", row.bin, "answers", row.answers, int(self.faithfulness["answers"].sum()),
                            _csv_rate(row.share)])
        if self.refusals is not None:
            for f in self.refusals.figures():
                w.writerow(["refusals", "", f.key, f.count, f.total, _csv_rate(f.rate)])
        if self.retrieval is not None:
            r = self.retrieval
            w.writerow(["retrieval", f"k={r.k}", "hit_rate", r.hits, r.answerable, _csv_rate(r.hit_rate)])
            w.writerow(["retrieval", f"k={r.k}", "mrr", "", r.answerable, _csv_rate(r.mrr)])
        return buf.getvalue()


def _plain(v):
    if isinstance(v, pd.Timestamp):
        return v.strftime("%Y-%m-%d")
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float):
        return json_rate(v)
    return v


def _pct(x) -> str:
    return percent(None if x is None or pd.isna(x) else x)


def _csv_rate(x) -> str:
    return "" if x is None or pd.isna(x) else f"{x:.4f}"


def _fig(f: figures.Figure) -> str:
    return f"{f.label}: {f.count} of {f.total} {f.unit} = {_pct(f.rate)}"


def build(
    table: pd.DataFrame,
    golden: Sequence[GoldenQuestion] | None = None,
    runs: Sequence[tuple[str, str, list[str]]] = (),
    k: int = 5,
    unreadable: int = 0,
) -> Overview:
    """Every figure of the report from an ``answer_table``; with a golden set, also refusals and
    retrieval (``runs`` are ``figures.retrieval_run`` of each answer)."""
    with figures.no_gc():  # many small objects and no cycles: see figures.no_gc
        return _build(table, golden, runs, k, unreadable)


def _build(table, golden, runs, k, unreadable) -> Overview:
    return Overview(
        table=table,
        headline=figures.headline(table),
        reasons=figures.by_reason(table),
        by_model=figures.breakdown(table, "model"),
        by_prompt=figures.breakdown(table, "prompt_version"),
        weekly=figures.over_time(table, "W"),
        refusals=figures.refusals(table, golden) if golden is not None else None,
        retrieval=evaluate_retrieval(golden, runs, k) if golden is not None else None,
        unreadable=unreadable,
        faithfulness=figures.faithfulness_scores(table) if len(table) and table["faithfulness"].notna().any() else None,
    )
