"""The review page's answers from a checked store: one answer at a time, never all of them.

``StoreAnswers`` answers what the review page asks of an in-memory ``Dataset`` (``len``, ``get``,
``items``, ``answer_ids``, ``errors``) without holding the log: an answer's line is read back from
its log by the byte offset kept in the store when the answer is shown, then checked with its
log's options (a few recent answers are kept).  Which answers pass a filter, where an answer is
among them and which comes next are SQL over the store (DuckDB): ``AnswerIds`` is the filtered
sequence of answer ids, in log order, read a row at a time.

The queue and the team's progress (``queue_next``, ``progress``, ``filtered_ids``) work on either
kind of answers: on a store they look only at the answers that carry labels (labels are few: each
is a person's work) and at the answers the queue walks through, in order, until it finds an item.

An answer id logged twice is found at its first line (as ``Dataset.get`` finds it).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pandas as pd

from citecheck.checking.checker import AnswerResult, check_answer
from citecheck.contract.item_keys import parse_item_key
from citecheck.contract.log import answer_of
from citecheck.errors import CheckedStoreError, RecordError
from citecheck.labelling.items import Item, items_of
from citecheck.labelling.labels import Label, is_done
from citecheck.review import queue, tally
from citecheck.storage.checked.folder import Store, options_from
from citecheck.storage.checked.index import hash_int, open_index
from citecheck.storage.checked.query import StoreQuery, _list, read_line, release_memory

KEPT = 64  # checked answers kept (the one shown, and those a queue walk just looked at)
ROWS_KEPT = 4096  # answers whose row of the index is kept: finding it by id is a scan of every row
ITEMS_KEPT = 200_000  # answers whose review items are kept (cleared when full)
ITEM_SLICE = 50_000  # answers counted at a time for the item total
_ORDER = "pos"
_ROWS = "nav"
# The review page's index of the answers, made once per store: one row per answer in log order
# (``pos``), only the columns navigation and reading back need (about 75 bytes an answer in DuckDB's
# memory; each query on it is a scan of a column in memory, not of the Parquet files).
# Made by store.index.make_index a slice of one log at a time: one window over a million rows held
# about 350 MB more than the index itself at its peak (bench/bench_app_store.py).


class StoreAnswers:
    """The answers of a checked store, read one at a time (thread-safe: one is shared by sessions)."""

    def __init__(self, folder: str | Path):
        self.store = Store(folder)
        self.query = StoreQuery(self.store)
        self._lock = threading.RLock()
        self._kept: OrderedDict[str, tuple[AnswerResult | None, list[Item]]] = OrderedDict()
        self._rows: OrderedDict[str, tuple | None] = OrderedDict()
        self._changed: dict[str, RecordError] = {}
        self._items: dict[str, list[Item]] = {}
        self._options = {e["source"]: options_from(e["options"]) for e in self.store.logs}
        self._counts: dict[tuple, int] = {}  # rows per filter (the store does not change under an instance)
        self._files = {e["source"]: e["file"] for e in self.store.logs}
        self._count = open_index(self.query.con, self.store, self.query.sources)  # (saved with the store, or made now)
        release_memory(self.query.con)  # (what the slices' sorts left: about 25 MB at a million answers)

    # --- what a Dataset answers -----------------------------------------------------------------

    def __len__(self) -> int:
        return self._count

    @property
    def errors(self) -> tuple[RecordError, ...]:
        """The answers whose line changed in its log since it was checked (found when shown)."""
        return tuple(self._changed.values())

    def get(self, answer_id: str) -> AnswerResult | None:
        return self._entry(answer_id)[0]

    def items(self, answer_id: str) -> list[Item]:
        """The answer's review items; kept for every answer asked (a few hundred bytes each: the queue
        and the progress look at every labelled answer on each run, the answers not again)."""
        found = self._items.get(answer_id)
        if found is None:
            if len(self._items) >= ITEMS_KEPT:
                self._items.clear()
            found = self._items[answer_id] = self._entry(answer_id)[1]
        return found

    @property
    def answer_ids(self) -> AnswerIds:
        return AnswerIds(self)

    # --- SQL --------------------------------------------------------------------------------------

    def one(self, sql: str, params: Sequence = ()) -> tuple | None:
        rows = self.rows(sql, params)  # (fetched through: an unfinished result blocks the connection)
        return rows[0] if rows else None

    def number(self, sql: str, params: Sequence = ()) -> int:
        """The one number a ``SELECT count(*)`` gives."""
        return int(self.rows(sql, params)[0][0])

    def rows(self, sql: str, params: Sequence = ()) -> list[tuple]:
        with self._lock:
            return self.query.con.execute(sql, list(params)).fetchall()

    def register(self, name: str, frame: pd.DataFrame) -> None:
        with self._lock:
            self.query.con.register(name, frame)

    # --- one answer, read back by offset ----------------------------------------------------------

    def row_of(self, answer_id: str) -> tuple | None:
        """(pos, log, line, offset, line_hash) of the answer's first line in the index, None when
        the store has no such answer.  Finding a row by id scans every row (2 to 5 ms at a million
        answers, asked three to five times per key press on the review page), so the rows of the
        last ``ROWS_KEPT`` answers asked are kept: the store does not change under an instance."""
        with self._lock:
            if answer_id in self._rows:
                self._rows.move_to_end(answer_id)
                return self._rows[answer_id]
        row = self.one(f'SELECT pos, log, line, "offset", line_hash FROM {_ROWS} WHERE answer_id = ? '
                       f"ORDER BY {_ORDER} LIMIT 1", [answer_id])
        with self._lock:
            self._rows[answer_id] = row
            while len(self._rows) > ROWS_KEPT:
                self._rows.popitem(last=False)
        return row

    def _entry(self, answer_id: str) -> tuple[AnswerResult | None, list[Item]]:
        with self._lock:
            found = self._kept.get(answer_id)
            if found is not None:
                self._kept.move_to_end(answer_id)
                return found
        row = self.row_of(answer_id)
        result = None
        if row is not None:
            source = self.query.sources[row[1]]
            result = self._read(answer_id, source, self._files[source], *row[2:])
        entry = (result, items_of(result) if result is not None else [])
        with self._lock:
            self._kept[answer_id] = entry
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)
        return entry

    def _read(self, answer_id: str, source: str, file: str, line: int, offset: int, digest: int):
        try:
            found = read_line(self.store.log_file(source), offset)
        except CheckedStoreError as exc:  # the log is gone: says which, and where it was looked for
            return self._gone(answer_id, file, line, str(exc))
        except OSError as exc:
            return self._gone(answer_id, file, line, f"cannot read the log: {exc}")
        if hash_int(self.store.line_hash(found.raw)) != digest:
            return self._gone(answer_id, file, line, f"the line of answer {answer_id} at byte {offset} changed "
                                                     "since it was checked; check the log into the store again")
        record = answer_of(file, found._replace(number=line))
        if isinstance(record, RecordError):  # (the hash matched, so the store says it parsed: a newer reader's line)
            return self._gone(answer_id, file, line, f"{record.field}: {record.message}")
        return check_answer(record, self._options[source]) if record is not None else None

    def _gone(self, answer_id: str, file: str, line: int, message: str) -> None:
        with self._lock:
            self._changed[answer_id] = RecordError(file, line, "(store)", message)
        return None

    # --- items counted in SQL ---------------------------------------------------------------------

    def count(self, where: str, params: Sequence = ()) -> int:
        """Rows of ``answers`` that pass ``where`` (counted once per filter)."""
        key = (where, tuple(params))
        if key not in self._counts:
            self._counts[key] = self.number(f"SELECT count(*) FROM {_ROWS} WHERE {where}", params)
        return self._counts[key]

    def item_total(self) -> int:
        """How many review items the store's answers hold (``len(Dataset.all_items)``): one per
        resolved citation of a sentence that is not a refusal, one per such sentence with none
        (counted once)."""
        if ("items",) not in self._counts:
            # recorded per answer when it was checked (``review_items``); parts written before that
            # column was added read it as null, and the total is then counted from the sentences
            recorded, missing = self.one("SELECT coalesce(sum(review_items), 0)::BIGINT, "
                                         "count(*) - count(review_items) FROM answers") or (0, 0)
            self._counts[("items",)] = int(recorded) if not missing else self._item_total()
        return self._counts[("items",)]

    def _item_total(self) -> int:
        """Counted a slice of answers at a time (``ITEM_SLICE`` answers of one log), over that log's
        own Parquet files: the join of sentences to citations of a whole store of a million answers
        took 1.5 GB of DuckDB memory.  Per answer, the indexes of its citations that resolve to a
        chunk are gathered in one list; each sentence that is not a refusal then counts the entries
        of its ``citations`` found in that list (an index listed twice counts twice, as in
        ``items_of``), or 1 when none is: no hash table of every (sentence, citation) pair."""
        slices = self.rows(f'SELECT log, min("offset") FROM {_ROWS} GROUP BY log, pos // {ITEM_SLICE} '
                           'ORDER BY 1, 2')
        total = 0
        for n, (log, low) in enumerate(slices):
            high = slices[n + 1][1] if n + 1 < len(slices) and slices[n + 1][0] == log else None
            source = self.query.sources[log]
            where = '"offset" >= ?' + ('' if high is None else ' AND "offset" < ?')
            params = [low] + ([] if high is None else [high])
            sentences, citations = (_parts(self.store, table, source) for table in ("sentences", "citations"))
            row = self.one(
                f"WITH c AS (SELECT \"offset\", list(\"index\") AS resolved FROM {citations} "
                f"WHERE chunk_index IS NOT NULL AND {where} GROUP BY ALL) "
                "SELECT coalesce(sum(greatest(1, coalesce(len(list_filter(s.citations, "
                "lambda i: list_contains(c.resolved, i))), 0))), 0)::BIGINT "
                f"FROM (SELECT \"offset\", citations FROM {sentences} WHERE NOT refusal AND {where}) s "
                "LEFT JOIN c USING (\"offset\")",
                params + params)
            total += int(row[0]) if row is not None else 0
            with self._lock:  # (DuckDB keeps each slice's blocks: 25 MB more over a million answers)
                release_memory(self.query.con)
        return total


def _parts(store: Store, table: str, source: str) -> str:
    """SQL reading the Parquet files of one log's ``table`` (every part writes every table; parts
    written by different citecheck versions are read by column name, as the views read them)."""
    return f"read_parquet({_list(store.files(table, [source]))}, union_by_name = true)"


class AnswerIds(Sequence):
    """The ids of a store's answers that pass ``where`` (SQL over ``answers``), in log order; each
    lookup is one query, so nothing but the count and the places already asked are held (an
    instance lives for one run of the page and its callbacks: the page asks an answer's place several
    times in a run)."""

    FOUND_KEPT = 4096

    def __init__(self, answers: StoreAnswers, where: str = "TRUE", params: Sequence = ()):
        self.answers = answers
        self.where = where
        self.params = list(params)
        self._len: int | None = None
        self._found: dict[str, int | None] = {}

    def __len__(self) -> int:
        if self._len is None:
            self._len = self.answers.count(self.where, self.params)
        return self._len

    def __bool__(self) -> bool:
        return len(self) > 0

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"answer {i} of {n}")
        if self.where == "TRUE":  # every answer: its position is its row
            rows = self.answers.rows(f"SELECT answer_id FROM {_ROWS} WHERE pos = ?", [i])
        else:
            rows = self.answers.rows(f"SELECT answer_id FROM {_ROWS} WHERE {self.where} ORDER BY {_ORDER} "
                                     "LIMIT 1 OFFSET ?", [*self.params, i])
        return rows[0][0]  # (i is within the count: the row is there)

    def _first(self, answer_id: str) -> int | None:
        """The position among all answers of the answer's first line, when that line passes the filter."""
        if answer_id in self._found:
            return self._found[answer_id]
        row = self.answers.row_of(answer_id)
        pos = None if row is None else int(row[0])
        if pos is not None and self.where != "TRUE":  # (a row by its place: the index is in place order)
            passes = self.answers.one(f"SELECT ({self.where}) FROM {_ROWS} WHERE pos = ?", [*self.params, pos])
            pos = pos if passes is not None and passes[0] else None
        if len(self._found) >= self.FOUND_KEPT:
            self._found.clear()
        self._found[answer_id] = pos
        return pos

    def __contains__(self, answer_id) -> bool:
        return isinstance(answer_id, str) and self._first(answer_id) is not None

    def index(self, answer_id, start: int = 0, stop: int | None = None) -> int:
        key = self._first(answer_id) if isinstance(answer_id, str) else None
        if key is None:
            raise ValueError(f"{answer_id!r} is not among these answers")
        if self.where == "TRUE":
            return int(key)
        return self.answers.number(f"SELECT count(*) FROM {_ROWS} WHERE {self.where} AND pos < ?",
                                   [*self.params, key])

    def __iter__(self) -> Iterator[str]:
        return self.since(0)

    def since(self, position: int, page: int = 256) -> Iterator[str]:
        """The ids from ``position`` on, read ``page`` at a time (keyset: each page one short query)."""
        if position >= len(self):
            return
        first = self.answers.one(f"SELECT pos FROM {_ROWS} WHERE {self.where} ORDER BY {_ORDER} LIMIT 1 OFFSET ?",
                                 [*self.params, position])
        key, op = (None if first is None else first[0]), ">="
        while key is not None:
            rows = self.answers.rows(f"SELECT answer_id, pos FROM {_ROWS} WHERE {self.where} AND pos {op} ? "
                                     f"ORDER BY {_ORDER} LIMIT {page}", [*self.params, key])
            yield from (r[0] for r in rows)
            key, op = (rows[-1][1], ">") if len(rows) == page else (None, ">")


# --- the queue, on answers in memory or in a store --------------------------------------------------


def _labelled_answers(current: Mapping[tuple[str, str], Label], reviewer: str | None = None) -> list[str]:
    """The answers holding labels (by ``reviewer`` only, when given), in first-seen order."""
    out: dict[str, None] = {}
    for key, who in current:
        if reviewer is None or who == reviewer:
            out[parse_item_key(key).answer_id] = None
    return list(out)


def filtered_ids(data, filter_name: str, current: dict[tuple[str, str], Label], reviewer: str) -> Sequence[str]:
    """``queue.answer_ids``: the answers that pass the review page's filter, in log order."""
    if not isinstance(data, StoreAnswers):
        return queue.answer_ids(data, filter_name, current, reviewer)
    kind = queue.FILTERS.get(filter_name, "all")
    if kind == "failing":
        return AnswerIds(data, "failing")
    if kind == "failed":
        return AnswerIds(data, "failed > 0")
    if kind == "refused":
        return AnswerIds(data, "refused")
    if kind == "unlabelled":
        done = [aid for aid in _labelled_answers(current, reviewer)
                if all(is_done(i, current, reviewer) for i in data.items(aid)) and data.items(aid)]
        name = f"done_{abs(hash((reviewer, tuple(done))))}"
        data.register(name, pd.DataFrame({"answer_id": done}, dtype=object))
        # (an answer with no item, only the refusal sentence, is never "unlabelled": ``items`` is false)
        return AnswerIds(data, f"answer_id NOT IN (SELECT answer_id FROM {name}) AND items")
    return AnswerIds(data)


class Positions(Mapping):
    """Answer id -> its place in ``ids`` (``tally.positions``), one query per lookup."""

    def __init__(self, ids: AnswerIds):
        self.ids = ids

    def __getitem__(self, answer_id) -> int:
        try:
            return self.ids.index(answer_id)
        except ValueError:
            raise KeyError(answer_id) from None

    def __contains__(self, answer_id) -> bool:
        return answer_id in self.ids

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(self.ids))

    def __len__(self) -> int:
        return len(self.ids)


def positions_of(data, ids: Sequence[str]) -> Mapping[str, int]:
    """``tally.positions_in``: answer id -> its first place in ``ids``."""
    if isinstance(ids, AnswerIds):
        return Positions(ids)
    return tally.positions_in(data, ids) if not isinstance(data, StoreAnswers) else tally.positions(ids)


def queue_next(data, ids: Sequence[str], where: Mapping[str, int], team: dict[str, dict[str, str]], reviewer: str,
               overlap: int = 1, after: tuple[str, int] | None = None,
               claimed: Mapping[str, int] | None = None) -> tuple[str, int] | None:
    """``tally.next_item`` (``queue.next_in_queue``) over the answers ``ids`` of ``data``: the
    reviewer's next item; ``where`` is ``positions_of(data, ids)``; ``claimed`` as for those."""
    if not isinstance(data, StoreAnswers) or not isinstance(ids, AnswerIds):  # (a list: a few answers)
        return tally.next_item(ids, where, data.items, team, reviewer, overlap, after, claimed)
    claimed = claimed or {}
    n = len(ids)
    if not n:
        return None
    start = (ids.index(after[0]), after[1]) if after is not None and after[0] in ids else None
    started = []  # items others have started: only answers that carry a label can hold one
    for aid in ({parse_item_key(key).answer_id for key in team} if overlap > 1 else ()):  # (1: none can be)
        ks = [k for k, item in enumerate(data.items(aid))  # (kept items: the answer's place is a query)
              if not queue.mine(item, team, reviewer) and 0 < queue.count(item, team)
              and queue.count(item, team) + claimed.get(item.key, 0) < overlap]
        if ks and aid in ids:
            pos = ids.index(aid)
            started += [((pos, k), aid) for k in ks]
    if started:
        ahead = [s for s in started if start is None or s[0] > start]
        (_, k), aid = min(ahead or started)
        return aid, k
    begin = 0 if start is None else start[0]
    for turn, aid in enumerate(_round(ids, begin)):  # the first untouched item after ``after``, then round
        items = data.items(aid)
        for k in range(start[1] + 1 if turn == 0 and start is not None else 0, len(items)):
            if queue.count(items[k], team) == 0 and claimed.get(items[k].key, 0) < overlap:
                return aid, k
    if start is not None:  # last, the items of ``after``'s answer up to ``after``
        items = data.items(ids[start[0]])
        for k in range(min(start[1] + 1, len(items))):
            if queue.count(items[k], team) == 0 and claimed.get(items[k].key, 0) < overlap:
                return ids[start[0]], k
    return None


def _round(ids: AnswerIds, begin: int) -> Iterator[str]:
    """The ids from ``begin`` to the end, then from the start up to just before ``begin``."""
    yield from ids.since(begin)
    if begin:
        for k, aid in enumerate(ids.since(0)):
            if k >= begin:
                return
            yield aid


def progress(data, team: dict[str, dict[str, str]], reviewer: str, overlap: int = 1) -> queue.TeamProgress:
    """``queue.team_progress`` over every item of ``data``."""
    if not isinstance(data, StoreAnswers):
        return tally.team_progress(tally.fingerprints(data), len(data.all_items), team, reviewer, overlap)
    own = done = 0
    for aid in dict.fromkeys(parse_item_key(key).answer_id for key in team):
        for item in data.items(aid):
            own += queue.mine(item, team, reviewer)
            done += queue.count(item, team) >= overlap
    return queue.TeamProgress(own, done, data.item_total(), overlap)
