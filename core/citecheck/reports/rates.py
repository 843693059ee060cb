"""One rounding rule for every rate citecheck shows or writes.

A rate is computed from its counts and kept unrounded until it is shown.  JSON carries it to
4 decimals; people see it as a percentage with one decimal, rounded half up.  ``check``,
``report`` and every page use these functions, so 9 failing of 59 is 15.3% everywhere.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

JSON_DECIMALS = 4


def share(part: int, whole: int) -> float | None:
    """``part / whole``, unrounded; None when there is nothing to divide by."""
    return part / whole if whole else None


def json_rate(rate: float | None) -> float | None:
    """A rate as written to JSON: 4 decimals, None for no rate (NaN included)."""
    if rate is None or (isinstance(rate, float) and math.isnan(rate)):
        return None
    return round(float(rate), JSON_DECIMALS)


def percent(rate: float | Fraction | None, whole: int | None = None) -> str:
    """``rate`` as a percentage with one decimal, rounded half up ("n/a" for no rate).

    With ``whole``, ``rate`` is a count and the percentage is computed exactly from
    ``rate / whole``, so no binary rounding can tip the last digit.  A float rate is read as the
    shortest decimal that gives that float back (its ``repr``), not as its binary value: 3 / 80 is
    the float 0.037499999..., whose shortest decimal is 0.0375, so it shows as 3.8%, the same as
    ``percent(3, 80)``.  Every surface shows the same figure whether it holds the counts or the
    rate (the Failures page's tiles hold rates, its tables counts).
    """
    if whole is not None:
        if not whole:
            return "n/a"
        value = Fraction(rate) / whole  # type: ignore[arg-type]
    else:
        if rate is None or (isinstance(rate, float) and math.isnan(rate)):
            return "n/a"
        value = _exact(rate)
    return f"{_tenths_of_a_percent(value)}%"


def _exact(rate: float | Fraction) -> Fraction:
    """A float read as the shortest decimal that gives it back (its ``repr``); a Fraction as it is."""
    return Fraction(repr(float(rate))) if isinstance(rate, float) else Fraction(rate)


def _tenths_of_a_percent(value: Fraction) -> Decimal:
    """``value`` in percent, rounded half up to one decimal: the one rounding rule."""
    hundredths = Decimal(value.numerator * 100) / Decimal(value.denominator)
    return hundredths.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


def points(diff: float | Fraction | None) -> str | None:
    """A difference of two rates in percentage points, signed, with one decimal, rounded half up
    as :func:`percent` rounds (``"+6.3 pts"`` for 1 of 16 against 0 of 10, where ``percent`` shows
    6.3%; formatting the float gave +6.2); None for no difference.  Give the exact difference
    (a ``Fraction`` of the counts) where the counts are at hand."""
    if diff is None or (isinstance(diff, float) and math.isnan(diff)):
        return None
    tenths = _tenths_of_a_percent(_exact(diff))
    return f"{tenths if tenths else Decimal('0.0'):+} pts"

