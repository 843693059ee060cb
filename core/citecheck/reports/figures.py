"""The product owner's figures, computed from the checker's results as a table (docs/report.md).

``answer_table`` turns checked answers into one pandas row per answer; every other function here
is a pure function of that table (plus, where named, a golden set), so the page, the
``citecheck report`` command and the tests all compute the same numbers the same way.

Each figure is a count over a denominator, so it can be shown as both: a rate alone hides
whether 50% means 1 of 2 or 5,000 of 10,000.
"""

from __future__ import annotations

import contextlib
import gc
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from citecheck.checking.checker import AnswerResult
from citecheck.contract import reasons, spreadsheet
from citecheck.labelling.items import items_of
from citecheck.labelling.labels import Label
from citecheck.reports import timestamps
from citecheck.reports.answer_row import COLUMNS, NONE, answer_row  # noqa: F401  (made without pandas: the store writes them)
from citecheck.reports.golden import GoldenQuestion, RetrievalEval, evaluate_retrieval, index, question_key
from citecheck.reports.rates import json_rate
from citecheck.text.utf8 import utf8_text

_TEXT_COLUMNS = COLUMNS[:7]
_COUNT_COLUMNS = COLUMNS[7:]
_BOOL_COLUMNS = ("refused", "ok", "failing", "unsupported_number", "withheld")


def answer_table(
    results: Iterable[AnswerResult | tuple[str, int, AnswerResult]], labels: Mapping[tuple[str, str], Label] | None = None
) -> pd.DataFrame:
    """One row per checked answer (columns: ``COLUMNS`` plus ``time``), in input order.

    ``results`` are AnswerResults or ``(file, line, AnswerResult)`` triples, consumed as a stream
    (nothing but the row is kept).  ``labels`` are the current human labels (``labels.latest``):
    ``labelled`` counts an answer's citations that have a label from anyone, ``not_supported``
    those that at least one reviewer judged "not supported".  A label whose item has changed
    since it was written (stale fingerprint) does not count.
    """
    by_answer: dict[str, list[Label]] = {}
    for label in (labels or {}).values():
        if label.citation is not None:
            by_answer.setdefault(label.answer_id, []).append(label)
    texts: list[tuple] = []
    counts: list[list] = []
    if isinstance(results, Sequence):  # all in memory: pause the collector (see no_gc)
        with no_gc():
            _collect(results, by_answer, texts, counts)
            return _frame(texts, counts)
    _collect(results, by_answer, texts, counts)  # a stream, checked as it is read: little is held
    return _frame(texts, counts)



def dataset_table(data) -> pd.DataFrame:
    """``answer_table`` of a loaded dataset, without labels, computed once and kept with it."""
    origins = getattr(data, "origins", ())
    if len(origins) == len(data):  # the file and line of each answer: the CSV export names them
        return data.memo("figures.answer_table",
                         lambda: answer_table([(f, n, r) for (f, n), r in zip(origins, data.results)]))
    return data.memo("figures.answer_table", lambda: answer_table(data.results))

def _frame(texts: list[tuple], counts: list[list]) -> pd.DataFrame:
    # Columns built whole (numpy for the counts): several times faster than a frame of row lists.
    matrix = np.array(counts, dtype=np.int64).reshape(len(counts), len(_COUNT_COLUMNS))
    by_column = list(zip(*texts)) or [()] * len(_TEXT_COLUMNS)
    data: dict = {name: list(values) for name, values in zip(_TEXT_COLUMNS, by_column)}
    data["line"] = np.array(data["line"], dtype=np.int64)
    for i, name in enumerate(_COUNT_COLUMNS):
        data[name] = matrix[:, i].astype(bool) if name in _BOOL_COLUMNS else matrix[:, i]
    df = pd.DataFrame(data, columns=list(COLUMNS))
    df["faithfulness"] = df["faithfulness"].where(df["faithfulness"] >= 0) / 1000  # NaN: not scored
    df["time"] = timestamps.read_times(df["timestamp"])
    return df


def with_labels(df: pd.DataFrame, results: Sequence[AnswerResult], labels: Mapping[tuple[str, str], Label]) -> pd.DataFrame:
    """``df`` with its ``labelled`` and ``not_supported`` columns counted from ``labels`` (see
    ``answer_table``); ``results[i]`` is the checked answer of row ``i``.  Each row is scored
    against its own answer, not the first with its id: two lines with one id are two answers, and
    a label counts only for the one whose item it was given on (the fingerprint).  Only the answers
    that have labels are looked at.  ``df`` is not changed."""
    by_answer: dict[str, list[Label]] = {}
    for label in labels.values():
        if label.citation is not None:
            by_answer.setdefault(label.answer_id, []).append(label)
    out = df.copy()
    if not by_answer:
        return out
    if len(results) != len(out):
        raise ValueError(f"{len(results)} results for a table of {len(out)} answers")
    labelled = out["labelled"].to_numpy(copy=True)
    not_supported = out["not_supported"].to_numpy(copy=True)
    for row, answer_id in enumerate(out["answer_id"]):
        found = by_answer.get(answer_id)
        if found:
            labelled[row], not_supported[row] = label_counts(results[row], found)
    out["labelled"] = labelled
    out["not_supported"] = not_supported
    return out


@contextlib.contextmanager
def no_gc():
    """Pause the cyclic garbage collector: building 100,000 small rows (or retrieval records)
    otherwise triggers collections that walk every checked answer held in memory; what is
    built here holds no reference cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _collect(results, by_answer: dict[str, list[Label]], texts: list[tuple], counts: list[list]) -> None:
    last, named = "", ""  # (a log's name as the table's UTF-8 text holds it: one not UTF-8 escaped)
    for entry in results:
        if isinstance(entry, tuple):
            file, line, result = entry
        else:
            file, line, result = "", 0, entry
        if file != last:
            last, named = file, utf8_text(file)
        text, count = answer_row(result, named, line)
        found = by_answer.get(result.answer.answer_id) if by_answer else None
        if found:
            count[-2], count[-1] = label_counts(result, found)
        texts.append(text)
        counts.append(count)


def label_counts(result: AnswerResult, found: list[Label]) -> tuple[int, int]:
    """(citations labelled by anyone, citations judged not supported by at least one reviewer)."""
    prints = {item.key: item.fingerprint for item in items_of(result) if item.citation is not None}
    verdicts: dict[str, bool] = {}
    for label in found:
        if prints.get(label.item) == label.fingerprint:
            verdicts[label.item] = verdicts.get(label.item, False) or label.label == "not_supported"
    return len(verdicts), sum(verdicts.values())


# --- figures ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Figure:
    key: str
    label: str
    count: int
    total: int
    unit: str  # what ``total`` counts: answers, citations, sentences...

    @property
    def rate(self) -> float | None:
        return self.count / self.total if self.total else None

    def to_dict(self) -> dict:
        rate = self.rate
        return {"key": self.key, "label": self.label, "count": self.count, "total": self.total,
                "unit": self.unit, "rate": json_rate(rate)}


def _sum(df: pd.DataFrame, column: str) -> int:
    return int(df[column].sum()) if len(df) else 0


# The sums a headline is made of (``headline_of``): these columns, summed over the answers.
HEADLINE_SUMS = ("failing", "refused", "failed", "citations", "quote_in_source", "with_quote",
                 reasons.UNRETRIEVED_SOURCE, reasons.MARKER_OUT_OF_RANGE, reasons.CHECKSUM_MISMATCH, reasons.SOURCE_CHANGED, "uncited",
                 "sentences", "unsupported_number", "withheld", "labelled", "not_supported")


def headline(df: pd.DataFrame) -> list[Figure]:
    """The headline figures for a table of answers (any subset of ``answer_table``)."""
    sums = {column: _sum(df, column) for column in HEADLINE_SUMS}
    sums["invalid_marker_answers"] = int((df["invalid_markers"] > 0).sum())
    sums["scored"] = int(df["faithfulness"].notna().sum()) if len(df) else 0
    return headline_of(sums, len(df))


def headline_of(s: Mapping[str, int], n: int) -> list[Figure]:
    """The headline figures of ``n`` answers from their sums: ``HEADLINE_SUMS`` plus
    ``invalid_marker_answers`` (answers with an invalid marker) and ``scored`` (answers with a
    faithfulness score).  The same figures whether the sums come from pandas or from SQL."""
    cites = s["citations"]
    figures = [
        Figure("failing_answers", "answers with a failed citation, uncited sentence or unsupported text",
               s["failing"], n, "answers"),
        Figure("refusal_rate", "answers refused", s["refused"], n, "answers"),
        Figure("citation_failure_rate", "citations that failed a check", s["failed"], cites, "citations"),
        Figure("quote_in_source_rate", "quotes found in the cited chunk", s["quote_in_source"],
               s["with_quote"], "quoted citations"),
        Figure("citation_to_unretrieved_rate", "citations to a chunk that was not retrieved",
               s[reasons.UNRETRIEVED_SOURCE], cites, "citations"),
        Figure("marker_out_of_range_rate", "markers outside 1..n", s[reasons.MARKER_OUT_OF_RANGE], cites,
               "citations"),
        Figure("checksum_failure_rate", "citations whose chunk fails its checksum", s[reasons.CHECKSUM_MISMATCH],
               cites, "citations"),
        Figure("source_changed_rate", "citations whose source document has changed", s[reasons.SOURCE_CHANGED],
               cites, "citations"),
        Figure("uncited_sentence_rate", "sentences with no valid citation", s["uncited"],
               s["sentences"], "sentences"),
        Figure("invalid_marker_answers", "answers with an invalid marker", s["invalid_marker_answers"],
               n, "answers"),
        Figure("unsupported_number_answers", "answers with a number not in its sources",
               s["unsupported_number"], n, "answers"),
    ]
    if s["scored"]:
        figures.append(Figure("withheld_answers", "answers withheld by the faithfulness gate", s["withheld"],
                              s["scored"], "scored answers"))
    if s["labelled"]:
        figures.append(Figure("human_not_supported_rate", "labelled citations judged not supported by a reviewer",
                              s["not_supported"], s["labelled"], "labelled citations"))
    return figures


FIGURE_KEYS = tuple(f.key for f in headline(pd.DataFrame(columns=list(COLUMNS))))


OPTIONAL_KEYS = ("withheld_answers", "human_not_supported_rate")  # present only when the data has them
SCORE_BINS = (0.0, 0.5, 0.7, 0.8, 0.9, 1.0)


def faithfulness_scores(df: pd.DataFrame) -> pd.DataFrame:
    """How the faithfulness scores of the scored answers are distributed: one row per bin
    (``low`` <= score < ``high``; the last bin holds 1.0), with answers and withheld answers."""
    scored = df[df["faithfulness"].notna()] if len(df) else df
    rows = []
    for low, high in zip(SCORE_BINS, SCORE_BINS[1:]):
        last = high == SCORE_BINS[-1]
        inside = scored[(scored["faithfulness"] >= low) & ((scored["faithfulness"] <= high) if last
                                                           else (scored["faithfulness"] < high))]
        rows.append({"bin": f"{low:.1f}-{high:.1f}", "low": low, "high": high, "answers": len(inside),
                     "withheld": _sum(inside, "withheld"), "share": len(inside) / len(scored) if len(scored) else None})
    return pd.DataFrame(rows)


def by_reason(df: pd.DataFrame) -> pd.DataFrame:
    """Per reason code: occurrences, answers affected, and the rate over what it is counted on."""
    n = len(df)
    counts = {code: (_sum(df, code), int((df[code] > 0).sum()) if n else 0) for code in reasons.ALL_REASONS}
    return reasons_of(counts, _sum(df, "citations"), _sum(df, "sentences"), n)


def reasons_of(counts: Mapping[str, tuple[int, int]], cites: int, sentences: int, n: int) -> pd.DataFrame:
    """``by_reason`` from sums: per code (occurrences, answers it occurs in), citations, sentences, answers."""
    rows = []
    for code in reasons.ALL_REASONS:
        count, answers = counts[code]
        total = cites if code in reasons.CITATION_REASONS else sentences
        rows.append({
            "reason": code, "description": reasons.DESCRIPTIONS[code], "count": count,
            "of": "citations" if code in reasons.CITATION_REASONS else "sentences", "total": total,
            "rate": count / total if total else None, "answers": answers, "answer_rate": answers / n if n else None,
        })
    return pd.DataFrame(rows)


def breakdown(df: pd.DataFrame, column: str) -> pd.DataFrame:
    """The headline figures per value of ``column`` (model, prompt_version...): one row per group,
    a count, total and rate column per figure."""
    rows = []
    for value, group in df.groupby(column, sort=True, dropna=False):
        row: dict = {column: value, "answers": len(group)}
        for f in headline(group):
            row[f"{f.key}.count"] = f.count
            row[f"{f.key}.total"] = f.total
            row[f"{f.key}.rate"] = f.rate
        rows.append(row)
    return pd.DataFrame(rows)


# The sums each period of ``over_time`` is made of, and its columns: each sum with the rate made
# from it (``period_rates``), the same from pandas or from SQL.
PERIOD_SUMS = ("failing", "citations", "failed", "refused", "sentences", "uncited")
PERIOD_COLUMNS = ["period", "answers", "failing", "citations", "failed", "refused", "failing_rate",
                  "citation_failure_rate", "refusal_rate", "sentences", "uncited", "uncited_sentence_rate"]


def period_rates(sums: pd.DataFrame) -> pd.DataFrame:
    """An over-time series from each period's sums (``period``, ``answers`` and
    :data:`PERIOD_SUMS`, one row a period): the rates added, the columns in :data:`PERIOD_COLUMNS`'
    order.  A rate over no citations or no sentences is missing, as a group's is."""
    if sums.empty:
        return pd.DataFrame(columns=PERIOD_COLUMNS)
    out = sums.copy()
    out["failing_rate"] = out["failing"] / out["answers"]
    out["citation_failure_rate"] = (out["failed"] / out["citations"]).where(out["citations"] > 0)
    out["refusal_rate"] = out["refused"] / out["answers"]
    out["uncited_sentence_rate"] = (out["uncited"] / out["sentences"]).where(out["sentences"] > 0)
    return out[PERIOD_COLUMNS]


def over_time(df: pd.DataFrame, freq: str = "D") -> pd.DataFrame:
    """Answers, failing answers, citation failures, refusals and uncited sentences per day
    (``freq="D"``) or week (``"W"``, Monday to Sunday).

    Answers with no readable timestamp are left out (``undated`` says how many)."""
    dated = df[df["time"].notna()]
    if dated.empty:
        return period_rates(pd.DataFrame(columns=["period", "answers", *PERIOD_SUMS]))
    rule = {"D": "D", "W": "W-SUN"}[freq]  # weeks run Monday to Sunday
    period = dated["time"].dt.tz_localize(None).dt.to_period(rule).dt.start_time
    g = dated.groupby(period)
    out = pd.DataFrame({"answers": g.size(), **{column: g[column].sum().astype("int64") for column in PERIOD_SUMS}})
    out.index.name = "period"
    return period_rates(out.reset_index())


# --- the failing answers table ----------------------------------------------------------------


# What the failing-answers table's Reasons column names and its Reason filter offers: every reason
# code, then "uncited" (a sentence with no valid citation), which makes an answer fail without
# being any code's; an answer failing for that alone had an empty Reasons cell.
UNCITED = "uncited"
TABLE_REASONS = (*reasons.ALL_REASONS, UNCITED)


@dataclass(frozen=True, slots=True)
class Filters:
    """What the failing-answers table is narrowed to; ``None`` means no restriction."""

    reason: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    start: str | None = None  # ISO date, inclusive
    end: str | None = None  # ISO date, inclusive
    refused: bool | None = None
    human_not_supported: bool | None = None
    labelled: bool | None = None
    failing_only: bool = True


def failing(df: pd.DataFrame, filters: Filters = Filters()) -> pd.DataFrame:
    """The answers that match ``filters``, worst first: most problems (failed citations, uncited
    sentences, unsupported numbers and quotes), then highest citation failure rate, then by id."""
    mask = pd.Series(True, index=df.index)
    if filters.failing_only:
        mask &= df["failing"]  # (an invalid marker is a failed citation, so it is in here)
    if filters.reason:
        mask &= df[filters.reason] > 0
    if filters.model:
        mask &= df["model"] == filters.model
    if filters.prompt_version:
        mask &= df["prompt_version"] == filters.prompt_version
    if filters.start:
        mask &= df["time"] >= pd.Timestamp(filters.start, tz="UTC")
    if filters.end:
        mask &= df["time"] < pd.Timestamp(filters.end, tz="UTC") + pd.Timedelta(days=1)
    if filters.refused is not None:
        mask &= df["refused"] == filters.refused
    if filters.human_not_supported is not None:
        mask &= (df["not_supported"] > 0) == filters.human_not_supported
    if filters.labelled is not None:
        mask &= (df["labelled"] > 0) == filters.labelled
    out = df[mask].copy()
    out["failure_rate"] = (out["failed"] / out["citations"]).where(out["citations"] > 0).fillna(0.0)
    out["reasons"] = [", ".join(code for code in TABLE_REASONS if row[code]) for row in
                      out[list(TABLE_REASONS)].to_dict("records")] if len(out) else []
    return out.sort_values(["problems", "failure_rate", "answer_id"], ascending=[False, False, True])


TABLE_COLUMNS = ("answer_id", "model", "prompt_version", "timestamp", "problems", "failed", "citations",
                 "uncited", "sentences", "invalid_markers", "refused", "reasons", "labelled", "not_supported",
                 "question", "file", "line")


def to_csv(df: pd.DataFrame) -> str:
    """The failing-answers table as CSV, in ``TABLE_COLUMNS`` order; a text a spreadsheet would run
    as a formula (a question from a log) after a ``'`` (``contract.spreadsheet``)."""
    columns = [c for c in TABLE_COLUMNS if c in df.columns]
    out = io.StringIO()
    writer = spreadsheet.Writer(out)
    writer.writerow(columns)
    for row in df[columns].itertuples(index=False, name=None):
        writer.writerow(_csv_value(v) for v in row)
    return out.getvalue()


def _csv_value(value: object) -> object:
    """A table value as a CSV cell, as pandas' ``to_csv`` wrote it: a missing value (None, NA,
    NaN) empty, a numpy scalar as the Python value it holds."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, np.generic):
        return value.item()
    return value


# --- refusals against a golden set ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RefusalFigures:
    """Over-refusal: answerable golden questions that were refused.  Under-refusal: unanswerable
    golden questions that were answered.  Counted per logged answer whose question is in the set."""

    answerable: int
    over_refused: int
    unanswerable: int
    under_refused: int
    not_in_golden: int
    over_refused_ids: tuple[str, ...]
    under_refused_ids: tuple[str, ...]

    def figures(self) -> list[Figure]:
        return [
            Figure("over_refusal_rate", "answerable golden questions refused", self.over_refused,
                   self.answerable, "answerable answers"),
            Figure("under_refusal_rate", "unanswerable golden questions answered", self.under_refused,
                   self.unanswerable, "unanswerable answers"),
        ]


def refusals(df: pd.DataFrame, golden: Iterable[GoldenQuestion]) -> RefusalFigures:
    by_key = index(golden)
    questions = df["question"].fillna("").astype(object)
    # one golden lookup per distinct question; 1 answerable, 0 unanswerable, -1 not in the set
    kind = {q: (-1 if (g := by_key.get(question_key(q))) is None else int(g.answerable))
            for q in pd.unique(questions)}
    kinds = questions.map(kind).to_numpy(dtype=np.int64) if len(df) else np.zeros(0, dtype=np.int64)
    refused = df["refused"].to_numpy(dtype=bool)
    ids = df["answer_id"].to_numpy(dtype=object)
    over = (kinds == 1) & refused
    under = (kinds == 0) & ~refused
    return RefusalFigures(
        answerable=int((kinds == 1).sum()), over_refused=int(over.sum()),
        unanswerable=int((kinds == 0).sum()), under_refused=int(under.sum()),
        not_in_golden=int((kinds == -1).sum()),
        over_refused_ids=tuple(ids[over]), under_refused_ids=tuple(ids[under]),
    )


def retrieval_run(result: AnswerResult) -> tuple[str, str, list[str]]:
    """What an answer's log says was retrieved: (answer id, question, chunk ids in prompt order)."""
    a = result.answer
    return a.answer_id, a.question or "", [c.chunk_id or "" for c in a.chunks]


def retrieval(results: Iterable[AnswerResult], golden: Iterable[GoldenQuestion], k: int = 5) -> RetrievalEval:
    """Hit rate at k and MRR of the logged retrievals (chunks in prompt order)."""
    return evaluate_retrieval(golden, (retrieval_run(r) for r in results), k)


# --- comparing two groups ----------------------------------------------------------------------


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2))


@dataclass(frozen=True, slots=True)
class Difference:
    """One figure in two groups, with the two-proportion z-test of "same rate" and a 95% Wald
    interval for the difference (b minus a)."""

    key: str
    label: str
    a: Figure
    b: Figure
    diff: float | None
    low: float | None
    high: float | None
    p_value: float | None

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < 0.05

    def to_dict(self) -> dict:
        def r(x):
            return json_rate(x)
        return {"key": self.key, "label": self.label, "a": self.a.to_dict(), "b": self.b.to_dict(),
                "diff": r(self.diff), "ci95": [r(self.low), r(self.high)], "p_value": r(self.p_value),
                "significant": self.significant}


def two_proportions(x1: int, n1: int, x2: int, n2: int) -> tuple[float | None, float | None, float | None, float | None]:
    """(p2 - p1, 95% low, 95% high, two-sided p-value of the pooled z-test); Nones when a group is empty."""
    if not n1 or not n2:
        return None, None, None, None
    if not (0 <= x1 <= n1 and 0 <= x2 <= n2):
        raise ValueError(f"a count outside its total ({x1} of {n1}, {x2} of {n2}): the figure is counted wrongly")
    p1, p2 = x1 / n1, x2 / n2
    diff = p2 - p1
    se = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    low, high = diff - 1.959964 * se, diff + 1.959964 * se
    pooled = (x1 + x2) / (n1 + n2)
    se0 = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    p_value = 1.0 if se0 == 0 else 2 * _normal_sf(abs(diff) / se0)
    return diff, low, high, p_value


def compare(df: pd.DataFrame, column: str, a: str, b: str) -> list[Difference]:
    """Every headline figure for ``column == a`` against ``column == b``."""
    return differences(headline(df[df[column] == a]), headline(df[df[column] == b]))


def differences(figures_a: list[Figure], figures_b: list[Figure]) -> list[Difference]:
    """Each headline figure of group a against the same figure of group b (``compare``)."""
    fa = {f.key: f for f in figures_a}
    fb = {f.key: f for f in figures_b}
    out = []
    for key, x in fa.items():
        y = fb.get(key)
        if y is None:
            continue
        diff, low, high, p = two_proportions(x.count, x.total, y.count, y.total)
        out.append(Difference(key, x.label, x, y, diff, low, high, p))
    return out
