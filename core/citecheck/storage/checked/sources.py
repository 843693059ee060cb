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
    one DuckDB connection (``_turn``), which is not for two threads at once."""

    query: StoreQuery
    report: Overview
    limit: int | None = TABLE_LIMIT
    _turn: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    @classmethod
    def of(cls, folder, golden: Sequence[GoldenQuestion] | None, labels: Mapping[tuple[str, str], Label],
           k: int = 5) -> tuple[StoreSource, list[str]]:
        query = StoreQuery(Store(folder))
        warnings = query.use_labels(labels) if labels else []
        return cls(query, query.overview(golden, k)), warnings

    @property
    def answers(self) -> int:
        return len(self.report.table)

    def any_failing(self) -> bool:
        with self._turn:
            return self.query.any_failing()

    def over_time(self, freq: str) -> pd.DataFrame:
        with self._turn:
            return self.query.over_time(freq)

    def undated(self) -> int:
        with self._turn:
            return self.query.undated()

    def values(self, column: str) -> list[str]:
        with self._turn:
            return self.query.values(column)

    def date_range(self):
        with self._turn:
            return self.query.date_range()

    def failing(self, filters: figures.Filters) -> pd.DataFrame:
        with self._turn:
            return self.query.failing(filters, self.limit)

    def compare(self, column: str, a: str, b: str) -> list[figures.Difference]:
        with self._turn:
            return self.query.compare(column, a, b)

    def unreadable(self) -> list:
        """The store's unreadable lines (``StoreQuery.unreadable``)."""
        with self._turn:
            return list(self.query.unreadable())
