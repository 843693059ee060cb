"""The review walk's questions (which answers pass a filter, where each one is, the reviewer's
next item, the team's progress) over either kind of answers a page shows: a log's, in memory
(``labelling.dataset.Dataset``), or a checked store's (``storage.checked.answers.StoreAnswers``,
which answers them with its own queries).

Asked without importing the store's module for a log: it brings pandas, pyarrow and DuckDB, about
0.4 s of a fresh server's first Review page that a page over a log never needs (issue #36).  A
store's answers exist only once that module has been imported, so a look in ``sys.modules`` tells
the two apart."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from types import ModuleType

from citecheck.labelling.labels import Label
from citecheck.review import queue, tally

STORE_MODULE = "citecheck.storage.checked.answers"


def store_walk(data) -> ModuleType | None:
    """``citecheck.storage.checked.answers`` when ``data`` is a checked store's answers, else None."""
    module = sys.modules.get(STORE_MODULE)
    return module if module is not None and isinstance(data, module.StoreAnswers) else None


def filtered_ids(data, filter_name: str, current: dict[tuple[str, str], Label], reviewer: str) -> Sequence[str]:
    """The answers that pass the review page's filter, in log order (``queue.answer_ids``)."""
    store = store_walk(data)
    if store is not None:
        return store.filtered_ids(data, filter_name, current, reviewer)
    return queue.answer_ids(data, filter_name, current, reviewer)


def positions_of(data, ids: Sequence[str]) -> Mapping[str, int]:
    """Answer id -> its first place in ``ids`` (``tally.positions_in``)."""
    store = store_walk(data)
    if store is not None:
        return store.positions_of(data, ids)
    return tally.positions_in(data, ids)


def queue_next(data, ids: Sequence[str], where: Mapping[str, int], team: dict[str, dict[str, str]], reviewer: str,
               overlap: int = 1, after: tuple[str, int] | None = None,
               claimed: Mapping[str, int] | None = None) -> tuple[str, int] | None:
    """The reviewer's next item among the answers ``ids`` (``tally.next_item``); ``where`` is
    :func:`positions_of` of them."""
    store = store_walk(data)
    if store is not None:
        return store.queue_next(data, ids, where, team, reviewer, overlap, after, claimed)
    return tally.next_item(ids, where, data.items, team, reviewer, overlap, after, claimed)


def progress(data, team: dict[str, dict[str, str]], reviewer: str, overlap: int = 1) -> queue.TeamProgress:
    """The reviewer's and the team's progress over every item (``tally.team_progress``)."""
    store = store_walk(data)
    if store is not None:
        return store.progress(data, team, reviewer, overlap)
    return tally.team_progress(tally.fingerprints(data), len(data.all_items), team, reviewer, overlap)
