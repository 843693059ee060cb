"""An answer's time, as every report reads its logged ``timestamp``: ISO 8601, by pandas, in UTC,
and only within the years pandas holds at any resolution (1677-09-22 to 2262-04-10).

Why the range: pandas 3 picks a column's resolution from the strings it parses together, and a
fraction of seven digits or more makes it nanoseconds, where any year outside 1677-2262 does not
fit.  So ``0001-01-01T00:00:00Z`` (Go's zero time) was dated when parsed alone and undated beside
a nanosecond stamp: the in-memory report (one parse of the whole log) and the store (one parse per
batch, of the unusual stamps only) disagreed on whether the answer had a date.  Within this range
an answer is dated, or not, whatever the other answers' timestamps are (and as pandas 2 read it).
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

EARLIEST = pd.Timestamp("1677-09-22", tz="UTC")
LATEST = pd.Timestamp("2262-04-10", tz="UTC")  # (exclusive)


def read_times(stamps: Iterable) -> pd.Series:
    """The logged timestamps as UTC times; NaT for one that is missing, not ISO 8601, or outside
    ``EARLIEST`` .. ``LATEST``."""
    times = pd.to_datetime(pd.Series(list(stamps), dtype=object), utc=True, errors="coerce", format="ISO8601")
    return times.where((times >= EARLIEST) & (times < LATEST))
