"""The Calibration page's choices kept in its address, so they survive a page switch, a reload and a
restart (as the review page keeps its filter, see :mod:`citecheck.review.address`).

Streamlit drops a widget's state when another page is shown, and a reload or a server restart gives
a new session; the open tab's address is then all that is left. The page keeps five choices:

- ``?labels=expertqa``: which labels it measures against (the configured ones when absent);
- ``?judge=NAME&prompt=VERSION``: the judge run whose figures are shown (the first run when absent);
- ``?split=dev|test``: which items (all when absent);
- ``?kind=HUMAN/JUDGE``: the disagreements shown (all when absent);
- ``?item=KEY``: the disagreement being read (the first shown when absent);
- ``?sample=FILE`` and ``?confidence=0.9`` in its Estimated rates: the calibration sample, by file
  name among the samples found in the configured folders (never a path: the address cannot make
  the page read a file it did not offer), and the confidence level.

Each value is checked against the choices the page offers now: an old link that names a judge run or
an item no longer there falls back to the default instead of failing. The session's value wins over
the address's (the address may be an old link pasted into a live session).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

LABEL_SETS = ("configured", "expertqa")
SPLITS = ("all", "dev", "test")

T = TypeVar("T")
ABSENT = object()  # the session holds no value (None may be a choice: "no calibration sample")


def chosen(url_value: object, session_value: object, choices: Sequence[T]) -> T:
    """The session's value when it is one of ``choices``, else the address's, else the first choice.
    ``session_value`` is ABSENT when the session has none; a ``url_value`` of None is no parameter."""
    if session_value is not ABSENT and session_value in choices:
        return session_value  # type: ignore[return-value]
    if url_value is not None and url_value in choices:
        return url_value  # type: ignore[return-value]
    return choices[0]


def param(value: T, choices: Sequence[T], label: Callable[[T], str] = str) -> str | None:
    """The address value for a choice, ``label(value)``: None (no parameter) for the default, the first choice."""
    return None if not choices or value == choices[0] else label(value)


def from_param(url_value: object, choices: Sequence[T], label: Callable[[T], str] = str) -> T | None:
    """The choice (other than the default) whose address value is ``url_value``, or None."""
    if not isinstance(url_value, str):
        return None
    return next((c for c in choices[1:] if label(c) == url_value), None)


def run_from(judge: object, prompt: object) -> tuple[str, str] | None:
    """The judge run that ``?judge=`` and ``?prompt=`` name, or None when either is missing."""
    if isinstance(judge, str) and isinstance(prompt, str):
        return judge, prompt
    return None


def run_params(run: tuple[str, str], runs: Sequence[tuple[str, str]]) -> tuple[str | None, str | None]:
    """``(judge, prompt)`` address values for a run; both None for the default (the first) run."""
    if not runs or run == runs[0]:
        return None, None
    return run[0], run[1]
