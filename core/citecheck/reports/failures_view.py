"""What the Failures page shows, built without Streamlit: the figure tiles, the captions and notices,
the reasons table, the two charts, the failing-answers table's choices and caption, and the
golden-set tiles.  The page lays these out; the numbers come from :mod:`.figures` and its source
(in memory or a store).

The texts hold counts, file names the server was configured with, and ids the page shows with
``st.html`` notices (escaped there); the charts' data are the tables of :mod:`.readable`.  Altair is
imported by the charts only: the first view (tiles and the reasons table) draws none (issue #36).
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from citecheck.reports import readable
from citecheck.reports.failures import Overview
from citecheck.reports.figures import TABLE_REASONS, Figure, Filters, RefusalFigures
from citecheck.reports.golden import GoldenQuestion, RetrievalEval, read_golden
from citecheck.reports.rates import percent

if TYPE_CHECKING:
    import altair as alt

K = 5  # retrieval hit rate @K

TITLES = {  # tile titles short enough to read; the full definition is in the tile's help
    "failing_answers": "Failing answers", "refusal_rate": "Refused", "citation_failure_rate": "Failed citations",
    "quote_in_source_rate": "Quotes in source", "citation_to_unretrieved_rate": "Cite unretrieved chunk",
    "marker_out_of_range_rate": "Markers out of range", "checksum_failure_rate": "Checksum failures",
    "source_changed_rate": "Source changed", "uncited_sentence_rate": "Uncited sentences",
    "invalid_marker_answers": "Bad-marker answers", "unsupported_number_answers": "Unsupported numbers",
    "human_not_supported_rate": "Labelled unsupported", "over_refusal_rate": "Over-refusal",
    "under_refusal_rate": "Under-refusal", "withheld_answers": "Withheld answers",
}
TABS = ["Reasons", "By model", "By prompt version", "Over time", "Failing answers", "Refusals & retrieval", "Compare"]
TAB_KEY = "failures_tab"  # the open tab's label in the session (st.tabs tracking its state: only it is drawn)

NO_ANSWERS = "No answers loaded, so there is nothing to report."
SEE_DATA_PAGE = "Check the Data page: the configured logs may be empty, missing or unreadable."
NO_REASON = "No failure reason occurs in the loaded answers."
NO_TREND = "No answer has a readable timestamp, so there is no trend to show."
NO_GOLDEN = ("No golden set loaded. Start the app with `--golden FILE` (or `CITECHECK_GOLDEN`) to see "  # Markdown
             "over- and under-refusal and retrieval hit rate.")
PERIODS = {"day": "D", "week": "W"}  # the over-time radio's choices and their pandas frequency
COMPARE = ["prompt_version", "model"]


def pct(x) -> str:
    """A rate as the page shows it; "n/a" for none (NaN from a table included)."""
    return percent(None if x is None or pd.isna(x) else x)


@dataclass(frozen=True, slots=True)
class Tile:
    title: str
    value: str  # "15.3%", or "n/a"
    help: str  # the figure's full name and counts
    caption: str  # "9 of 59 answers"


def tiles(figures: Sequence[Figure]) -> list[Tile]:
    return [Tile(TITLES.get(f.key, f.label), pct(f.rate), f"{f.label}: {f.count} of {f.total} {f.unit}",
                 f"{f.count:,} of {f.total:,} {f.unit}") for f in figures]


def in_rows(items: Sequence, per_row: int) -> list[list]:
    """``items`` cut into rows of ``per_row`` (the last one shorter)."""
    return [list(items[start:start + per_row]) for start in range(0, len(items), per_row)]


# --- captions and notices ------------------------------------------------------------------------


def golden_set(path: Path | None) -> tuple[list[GoldenQuestion] | None, str | None]:
    """The configured golden set (None when none is set or the file is not there) and the warning
    naming its unreadable lines, if any (the readable questions are used)."""
    if path is None or not path.is_file():
        return None, None
    golden, errors = read_golden(path)
    return golden, (f"{len(errors)} unreadable line(s) in the golden set {path.name}; first: {errors[0]}"
                    if errors else None)


def all_clear(any_failing: bool, unreadable: bool) -> tuple[str, str] | None:
    """The notice (kind, text) under the headline when no answer fails a check, else None;
    ``unreadable`` when part of the logs could not be read (the answers there are not counted)."""
    if any_failing:
        return None
    if unreadable:
        return "warning", ("No answer that could be read fails a check, but some of the log could not be read "
                           "(see above).")
    return "success", ("No answer fails a check: every cited chunk was retrieved and matches its checksum, every quote found "
                       "in it, every sentence cited, every number and quoted text found in its sources. Whether each "
                       "cited passage supports its sentence is not checked here: reviewers label that on Review.")


REASONS_STYLE = """<style>
table.cc-reasons{border-collapse:collapse;width:100%;font-size:.9rem}
table.cc-reasons th{text-align:left;font-weight:600;border-bottom:1px solid rgba(128,128,128,.45);padding:4px 8px}
table.cc-reasons td{border-bottom:1px solid rgba(128,128,128,.2);padding:4px 8px;vertical-align:top}
table.cc-reasons td.cc-count{white-space:nowrap}
table.cc-reasons .cc-bar{display:block;height:.5rem;margin-top:3px;min-width:2px;background:#4c78a8;border-radius:2px}
table.cc-reasons tr.cc-none td{color:#7d8590}
</style>"""
def _table(head: str, rows: list[str]) -> str:
    """A table in the reasons table's style, of its header cells and rows (markup already escaped)."""
    return f'{REASONS_STYLE}<table class="cc-reasons"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


REASON_HEADERS = ("Reason", "What it means", "Occurrences", "Answers with it")


def reasons_html(reasons: pd.DataFrame, answers: int) -> str:
    """The reasons table (``figures.by_reason``) as one escaped HTML table: the reasons that occur
    first, the most frequent first (then in their canonical order); under each count a bar as long as
    its share of the largest count (what the reasons chart showed, without loading a chart library
    in the browser: the table is the Failures page's first view).  Texts are the reasons view's
    (``readable.reasons_view``)."""
    view = readable.reasons_view(reasons, answers)
    counts = [int(c) for c in reasons["count"]]
    top = max(counts, default=0)
    order = sorted(range(len(counts)), key=lambda i: (-counts[i], i))
    rows = []
    for i in order:
        reason, meaning, occurrences, with_it = (str(view[h].iloc[i]) for h in REASON_HEADERS)
        bar = (f'<span class="cc-bar" style="width:{100 * counts[i] / top:.1f}%" aria-hidden="true"></span>'
               if counts[i] else "")
        row = "<tr>" if counts[i] else '<tr class="cc-none">'
        rows.append(f"{row}<td><code>{html.escape(reason)}</code></td><td>{html.escape(meaning)}</td>"
                    f'<td class="cc-count">{html.escape(occurrences)}{bar}</td>'
                    f'<td class="cc-count">{html.escape(with_it)}</td></tr>')
    head = "".join(f"<th>{h}</th>" for h in REASON_HEADERS)
    return _table(head, rows)


def compare_html(table: pd.DataFrame) -> str:
    """The Compare tab's table (``views.compare_table``) as one escaped HTML table, in the style of
    the reasons table: the figures' names wrap, so every column (the test's p-value and whether the
    difference is larger than chance among them) is in the page's width at 1280 px, and every row
    is shown; the names of A and B in the headers are the logs' own text, escaped."""
    head = "".join(f"<th>{html.escape(str(column))}</th>" for column in table.columns)
    rows = []
    for record in table.itertuples(index=False):
        cells = []
        for column, value in zip(table.columns, record, strict=True):
            missing = value is None or (isinstance(value, float) and value != value)  # (None, or NaN in a float column)
            if missing:
                text = ""
            elif column == "p-value":
                text = "< 0.001" if value < 0.0005 else f"{value:.3f}"
            else:
                text = str(value)
            cells.append(f"<td>{html.escape(text)}</td>" if column == "figure"
                         else f'<td class="cc-count">{html.escape(text)}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return _table(head, rows)


def faithfulness_view(report: Overview) -> pd.DataFrame | None:
    """The faithfulness scores' bins (answers, withheld, share), None when no answer was scored."""
    return None if report.faithfulness is None else report.faithfulness[["bin", "answers", "withheld", "share"]]


def breakdowns(report: Overview) -> list[tuple[pd.DataFrame, str, bool, str]]:
    """The By model and By prompt version tabs: (breakdown, its column, whether the logs have that
    field, what to call it)."""
    return [(report.by_model, "model", report.has_models, "model"),
            (report.by_prompt, "prompt_version", report.has_prompts, "prompt version")]


def no_group_text(column: str, what: str) -> str:
    """Why a breakdown tab is empty (Markdown: only the field's name, in code)."""
    return (f"The loaded logs have no {what} field, so there is nothing to break down by {what}. "
            f"Log `{column}` on every answer to see this.")


def undated_text(undated: int) -> str | None:
    return f"{undated} answer(s) without a readable timestamp are not in this chart." if undated else None


@dataclass(frozen=True, slots=True)
class Choice:
    """One of the failing-answers table's filters: the argument of ``views.filters`` it sets, its
    label and widget key, and its options (the first, "any", filters nothing); for the date range,
    ``dates`` is the range the answers span (None when no answer is dated) and there are no options."""

    name: str
    label: str
    key: str
    options: tuple[str, ...] = ()
    dates: tuple[date, date] | None = None

    @property
    def is_dates(self) -> bool:
        return self.name == "dates"


def choices(values: Callable[[str], list[str]], dates: tuple[date, date] | None) -> list[Choice]:
    """The table's filters in the order they are laid out (two rows of four), from the values the
    answers hold (``values(column)``, sorted) and their date range."""
    return [Choice("reason", "Reason", "f_reason", ("any", *TABLE_REASONS)),
            Choice("model", "Model", "f_model", ("any", *values("model"))),
            Choice("prompt_version", "Prompt version", "f_prompt", ("any", *values("prompt_version"))),
            Choice("scope", "Answers", "f_scope", ("failing only", "all")),
            Choice("dates", "Date range", "f_dates", dates=dates),
            Choice("refused", "Refused", "f_refused", ("any", "refused", "answered")),
            Choice("human", "Human label", "f_human", ("any", "has 'not supported'", "no 'not supported'")),
            Choice("labelled", "Labelled", "f_labelled", ("any", "labelled", "unlabelled"))]


# Column widths of the failing-answers table at 1280 px: the reasons and the question get the room.
# (pixels: the answer, its reasons and its question fill the 820 px a 1280 px window leaves beside the
# sidebar; the other columns follow on the right)
WIDTHS = {"answer_id": 80, "reasons": 380, "question": 320, "model": "small", "prompt_version": "small",
          "timestamp": "small"}


def table_caption(rows: int, limit: int | None, among_all: int | None = None) -> str:
    """How many answers the failing-answers table holds (and when a store's table is cut).  An
    empty table of failing answers says how many answers of any kind the same filters match
    (``among_all``, from :func:`matching_any`): refused answers, say, are mostly not failing."""
    if rows == 0 and among_all:
        more = "+" if limit is not None and among_all >= limit else ""
        return (f"No failing answer matches these filters; {among_all:,}{more} answer(s) do among all answers "
                "(set Answers to all to see them).")
    limited = f" (the worst {limit:,})" if limit is not None and rows >= limit else ""
    return (f"{rows:,} answer(s){limited}, worst first. Tick a row's box to open that answer on the review page "
            "at its first failing item.")


def matching_any(source, chosen: Filters, shown: int) -> int | None:
    """How many answers of any kind match ``chosen`` when it asked for failing answers only and
    none matched (``shown`` is 0); None otherwise.  ``source``: the page's TableSource or StoreSource."""
    if shown or not chosen.failing_only:
        return None
    return len(source.failing(dataclasses.replace(chosen, failing_only=False)))


def selected_answer(view: pd.DataFrame, rows: Sequence[int]) -> str | None:
    """The answer id of the row selected in the table's view, None when none is."""
    return view.iloc[rows[0]]["answer_id"] if rows else None


def compare_label(column: str) -> str:
    return column.replace("_", " ")


def nothing_to_compare(column: str) -> str:
    return f"The loaded logs have fewer than two values of {compare_label(column)}; nothing to compare."


def no_miss_text(r: RetrievalEval) -> str:
    return f"Every answerable question had a correct chunk in its first {r.k}."


COMPARE_NOTE = ("Two-proportion z-test (pooled) of equal rates, two-sided; 95% Wald interval for B - A. "
                "'Larger than chance' means p < 0.05. With small counts neither is reliable: read the counts. "
                "B - A is worked out from the counts, so it can be 0.1 off the difference of the rounded figures.")


def refused_ids_texts(refusals: RefusalFigures) -> list[str]:
    """The over- and under-refused answers, named (ids from the logs: shown escaped)."""
    return [f"{what}: " + ", ".join(ids) for what, ids in (("Over-refused", refusals.over_refused_ids),
                                                         ("Under-refused", refusals.under_refused_ids)) if ids]


def retrieval_tiles(r: RetrievalEval, refusals: RefusalFigures) -> list[Tile]:
    """Hit rate, MRR and the unanswerable questions, each with its caption."""
    hit, mrr = r.shown()
    return [Tile(f"hit rate@{r.k}", hit, "", f"{r.hits} of {r.answerable} answerable questions"),
            Tile("MRR", mrr, "", f"mean reciprocal rank (1 / the rank of the first answering chunk; 0 if "
                               f"missed) over {r.answerable} answerable questions"),
            Tile("unanswerable questions", str(r.unanswerable), "",
                 f"not in hit rate or MRR; {refusals.not_in_golden} answer(s) have a question the golden set "
                 "does not have")]


# --- charts --------------------------------------------------------------------------------------


def occurring(reasons: pd.DataFrame) -> pd.DataFrame:
    """The failure reasons that occur at least once."""
    return reasons[reasons["count"] > 0]


def group_chart(frame: pd.DataFrame, column: str, what: str) -> alt.Chart:
    """A breakdown by model or prompt version: one row of bars per figure, one bar per value."""
    import altair as alt

    return alt.Chart(readable.group_chart_data(frame, column)).mark_bar().encode(
        x=alt.X("rate:Q", axis=alt.Axis(format="%"), title=None, scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("group:N", title=None, axis=alt.Axis(labelLimit=320)),
        color=alt.Color("group:N", legend=None),
        row=alt.Row("figure:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left", labelLimit=200)),
        tooltip=[alt.Tooltip("group:N", title=what), "figure", alt.Tooltip("share:N", title="rate")],
    ).properties(height=alt.Step(24))


# Up to this many periods, the time axis has a tick on each (a week's tick on its Monday); past it
# Vega picks the ticks, still in UTC.
PERIOD_TICKS = 16


def period_chart(series: pd.DataFrame, freq: str) -> alt.Chart:
    """The over-time series (``freq`` "D" or "W") as one line per figure.  Periods are UTC dates,
    and the axis, its ticks and the tooltip read them in UTC whatever the browser's time zone (in
    local time a period's point sat on the day before, west of Greenwich), with a tick on each
    period (:data:`PERIOD_TICKS`) rather than on Vega's own days or Sunday weeks."""
    import altair as alt

    data = readable.period_chart_data(series)
    periods = sorted(set(data["period"]))
    ticks = [alt.DateTime(year=d.year, month=d.month, date=d.day, utc=True)
             for d in (pd.Timestamp(p) for p in periods)] if len(periods) <= PERIOD_TICKS else alt.Undefined
    return alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("period:T", title=readable.period_label(freq).lower(), scale=alt.Scale(type="utc"),
                axis=alt.Axis(format=readable.DATE_FORMAT, labelAngle=-30, values=ticks)),
        y=alt.Y("rate:Q", axis=alt.Axis(format="%"), title=None),
        color=alt.Color("figure:N", legend=alt.Legend(title=None, orient="bottom", labelLimit=300)),
        tooltip=[alt.Tooltip("period:N", title=readable.period_label(freq)), "figure",
                 alt.Tooltip("share:N", title="rate")])
