"""Where the Failures page's figures come from: the checked answers in memory (small logs, the
JSONL path) or the checked store through DuckDB (large logs).  Both answer the same questions
with the same figures, so the page does not know which it has."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from citecheck.labelling.labels import Label
from citecheck.reports import figures
from citecheck.reports.failures import Overview, build
from citecheck.reports.golden import GoldenQuestion
from citecheck.storage.checked.folder import Store
from citecheck.storage.checked.query import StoreQuery

TABLE_LIMIT = 10_000  # rows of the failing-answers table the page shows from a store
KEPT_ANSWERS = 64  # answers to the Failures page's questions a store's source keeps


@dataclass(frozen=True)
class TableSource:
    """The in-memory table of checked answers (``figures.answer_table``)."""

    table: pd.DataFrame
    report: Overview
    limit: int | None = None

    @classmethod
    def of(cls, table: pd.DataFrame, golden: Sequence[GoldenQuestion] | None, runs, k: int = 5) -> TableSource:
        return cls(table, build(table, golden, runs, k))

    @property
    def answers(self) -> int:
        return len(self.table)

    def any_failing(self) -> bool:
        return bool(self.table["failing"].any())

    def over_time(self, freq: str) -> pd.DataFrame:
        return figures.over_time(self.table, freq)

    def undated(self) -> int:
        return int(self.table["time"].isna().sum())

    def values(self, column: str) -> list[str]:
        return sorted(self.table[column].unique())

    def date_range(self):
        dated = self.table["time"].dropna()
        return (dated.min().date(), dated.max().date()) if len(dated) else None

    def failing(self, filters: figures.Filters) -> pd.DataFrame:
        return figures.failing(self.table, filters)

    def compare(self, column: str, a: str, b: str) -> list[figures.Difference]:
        return figures.compare(self.table, column, a, b)


@dataclass(frozen=True)
class StoreSource:
    """The checked store: every figure is SQL over its Parquet; no answer is held in memory.
    Shared by the sessions of a server (``web.failures_source``): its queries take turns on the
    one DuckDB connection (``_turn``), which is not for two threads at once, and their answers
    are kept (``_kept``)."""

    query: StoreQuery
    report: Overview
    limit: int | None = TABLE_LIMIT
    _turn: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)
    _answers: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, folder, golden: Sequence[GoldenQuestion] | None, labels: Mapping[tuple[str, str], Label],
           k: int = 5) -> tuple[StoreSource, list[str]]:
        query = StoreQuery(Store(folder))
        warnings = query.use_labels(labels) if labels else []
        return cls(query, query.overview(golden, k)), warnings

    @property
    def answers(self) -> int:
        return len(self.report.table)

    def _kept(self, key: tuple, ask):
        """``ask()`` under the connection's turn, kept: the store and labels the source was made
        from do not change under it, so each session after the first gets the answer made
        (shared: not to be changed).  At most ``KEPT_ANSWERS`` answers (the filters vary)."""
        with self._turn:
            if key not in self._answers:
                if len(self._answers) >= KEPT_ANSWERS:
                    self._answers.clear()
                self._answers[key] = ask()
            return self._answers[key]

    def any_failing(self) -> bool:
        return self._kept(("any_failing",), self.query.any_failing)

    def over_time(self, freq: str) -> pd.DataFrame:
        return self._kept(("over_time", freq), lambda: self.query.over_time(freq))

    def undated(self) -> int:
        return self._kept(("undated",), self.query.undated)

    def values(self, column: str) -> list[str]:
        return list(self._kept(("values", column), lambda: self.query.values(column)))

    def date_range(self):
        return self._kept(("date_range",), self.query.date_range)

    def failing(self, filters: figures.Filters) -> pd.DataFrame:
        return self._kept(("failing", filters, self.limit), lambda: self.query.failing(filters, self.limit))

    def compare(self, column: str, a: str, b: str) -> list[figures.Difference]:
        return self._kept(("compare", column, a, b), lambda: self.query.compare(column, a, b))

    def unreadable(self) -> list:
        """The store's unreadable lines (``StoreQuery.unreadable``)."""
        with self._turn:
            return list(self.query.unreadable())
