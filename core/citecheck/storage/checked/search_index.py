"""Searching a checked store: an index of its words built beside it, and the search in SQL.

The store keeps no answer or chunk text (they stay in the logs), so searching them needs an
index: one folder per log, ``DIR/search/log-<id>/`` (docs/store-format.md, "The search index"),
made by reading each log once, by ``citecheck store index`` (or ``check --search-index``), or by
the review page's first search when few answers need indexing (``BUILD_ON_PAGE``; above it the
page says which command to run: ``unbuilt``).  Chunks are indexed once per log however many
answers retrieved them (a corpus's chunks come back again and again).  Each folder holds Parquet
files, and ``stamp.json`` last:

    answers.parquet      source, row, offset, answer_id, model, prompt_version, reasons, items
    words.parquet        source, word, row        each word (and pair of words) of an answer's question and answer
    chunk_words.parquet  source, word, chunk      each word (and pair of words) of a distinct chunk text
    chunks.parquet       source, row, chunk       the chunks each answer retrieved
    texts.parquet        source, row, text        the answer's question and answer as searched (for phrases)
    chunk_texts.parquet  source, chunk, text      each distinct chunk text as searched
    items.parquet        source, row, answer_id, n, sentence, citation, status   the review items

``row`` is the answer's place among its log's answers in the store, in byte-offset order: the
review page's index of the store (``index.make_index``) numbers a log's answers in that order, so
an answer's place among all answers is its log's first place plus ``row``, and a search works on
those places (a bitmap of the store's answers per word, ANDed in numpy) until its result.

``stamp.json`` names the index version and the log's parts, digests and options from
``store.json``: a log checked again (or with other options) has another stamp, and its index is
made again the next time a search needs it; an index of a log no longer in the store is removed.

The word tables are made in SQL from the texts as searched (``_TERMS``), not word by word in
Python: reading the log, parsing and checking each answer is what is left to Python.

A word, and a pair of words that follow one another, is found from the sorted ``word`` columns
(DuckDB reads only the row groups that can hold it); a longer phrase by ``contains`` over the
texts as searched (``review.search.field_text``) that hold each of its pairs: the comparison
``review.search.search_dataset`` makes in memory.

The item filters (labels, verdicts, assignments, comments) name few items: a rule's item keys and
answer ids are placed once (answer, item) and kept while the set stays the same or changes by a
few names (a label added); an item no rule names passes each negated rule and fails the others,
so "nobody's label yet" is every item less the labelled ones, counted per answer in numpy.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import json
import os
import re
import shlex
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from citecheck.checking.checker import check_answer
from citecheck.contract import reasons as reason_codes
from citecheck.contract.item_keys import item_key
from citecheck.contract.log import Answer, FastReader, answer_of
from citecheck.errors import CitecheckError
from citecheck.labelling.items import items_of
from citecheck.review import search as searching
from citecheck.storage.checked.answers import AnswerIds, StoreAnswers
from citecheck.storage.checked.folder import Store, open_log, options_from
from citecheck.storage.checked.query import _list, release_memory
from citecheck.storage.lines import numbered_lines

INDEX_VERSION = 1
FOLDER = "search"
STAMP = "stamp.json"
ROW_GROUP = 65_536  # rows per Parquet row group: a word's rows are read a group at a time
BATCH = 20_000  # answers indexed before their rows are written out
FOUND_KEPT = 16  # searches whose matching answers are kept (a temp table of positions each)
PLACED_KEPT = 8  # sets of item keys or answer ids whose items are kept placed (``StoreSearch._placed``)
# an item key as ``contract.item_keys.item_key`` writes it (answer id, sentence, citation), for DuckDB's regexp_extract
_ITEM_KEY = r"(?s)^(.*)#s(0|[1-9][0-9]{0,17})#(uncited|c(0|[1-9][0-9]{0,17}))$"
DENSE = 0.125  # a pair of words held by this share of answers (or chunks) or more is not listed for a longer phrase
_NAMES = itertools.count()  # numbers the temp tables and frames searches make
_SURROGATE = re.compile(r"[\ud800-\udfff]")  # (a string holding one cannot be given to DuckDB, nor be an item's key)

_TABLES = {
    "answers": pa.schema([("source", pa.string()), ("row", pa.int64()), ("offset", pa.int64()),
                          ("answer_id", pa.string()), ("model", pa.string()), ("prompt_version", pa.string()),
                          ("reasons", pa.list_(pa.string())), ("items", pa.int64())]),
    "words": pa.schema([("source", pa.string()), ("word", pa.string()), ("row", pa.int64())]),
    "chunk_words": pa.schema([("source", pa.string()), ("word", pa.string()), ("chunk", pa.int64())]),
    "chunks": pa.schema([("source", pa.string()), ("row", pa.int64()), ("chunk", pa.int64())]),
    "texts": pa.schema([("source", pa.string()), ("row", pa.int64()), ("text", pa.string())]),
    "chunk_texts": pa.schema([("source", pa.string()), ("chunk", pa.int64()), ("text", pa.string())]),
    "items": pa.schema([("source", pa.string()), ("row", pa.int64()), ("answer_id", pa.string()),
                        ("n", pa.int64()), ("sentence", pa.int64()), ("citation", pa.int64()),
                        ("status", pa.string())]),
}
# the texts a phrase of three words or more is looked for in are read in full: LZ4 decompresses them
# twice as fast as zstd (bench/bench_search.py), for a file about 1.6 times the size; the rest is zstd
COMPRESSION = {"texts": "lz4", "chunk_texts": "lz4"}
ORDER = {"answers": "row", "words": "word, row", "chunk_words": "word, chunk", "chunks": "row, chunk",
         "texts": "row", "chunk_texts": "chunk", "items": "row, n"}


def compression(table: str) -> str:
    """The Parquet compression of one of the index's tables (a reader takes any)."""
    return COMPRESSION.get(table, "zstd")


def stamp(entry: dict) -> str:
    """What a log's index was made from: the index version and the log's parts, digests and options."""
    made = {"version": INDEX_VERSION, "parts": entry.get("parts"), "digests": entry.get("digests"),
            "options": entry.get("options")}
    return hashlib.sha256(json.dumps(made, sort_keys=True).encode("utf-8")).hexdigest()


def index_root(store: Store) -> Path:
    """Where a store's search index is kept: in the store folder, else (a store that cannot be
    written to) in a folder of the system's temporary files named after it."""
    inside = store.root / FOLDER
    if os.access(store.root, os.W_OK):
        return inside
    name = hashlib.sha256(str(store.root.resolve()).encode("utf-8")).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"citecheck-search-{name}"


def log_folder(root: Path, source: str) -> Path:
    return root / f"log-{source}"


def is_current(root: Path, entry: dict) -> bool:
    """Whether the log's index is there and made from the log as the store holds it now."""
    try:
        found = json.loads((log_folder(root, entry["source"]) / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(found, dict) and found.get("stamp") == stamp(entry)


_BUILDING = threading.Lock()
LOCK = ".lock"
BUILD_ON_PAGE = 20_000  # answers to index that a page's first search builds in place; more: citecheck store index
SECONDS_PER_ANSWER = 0.0005  # building, wall clock on 2 cores (bench/bench_search.py --build): for the estimate shown


class IndexNotBuilt(CitecheckError):
    """The store's search index is missing or out of date for more answers than a page builds in
    place (``BUILD_ON_PAGE``): the message names the command that builds it, and how long it takes."""


def pending(store: Store) -> list[dict]:
    """The store's logs whose index is missing or out of date."""
    root = index_root(store)
    return [entry for entry in store.logs if not is_current(root, entry)]


def estimate(answers: int) -> str:
    """How long building the index of ``answers`` answers takes, in words (``about 9 min``)."""
    seconds = answers * SECONDS_PER_ANSWER
    return f"about {max(1, round(seconds))} s" if seconds < 90 else f"about {round(seconds / 60)} min"


def not_built(store: Store, limit: int) -> IndexNotBuilt | None:
    """The error to give instead of building the index in place, when more than ``limit`` answers
    need indexing (None: none, or few enough to build now)."""
    waiting = pending(store)
    lines = sum(int(entry.get("lines") or 0) for entry in waiting)
    if lines <= limit:
        return None
    said = (f"The search index of this store is missing or out of date for {len(waiting)} of its "
            f"{len(store.logs)} log(s) ({lines:,} answers), and search and filters need it. ")
    if building(store):
        return IndexNotBuilt(said + f"It is being built now (this takes {estimate(lines)} in all): come back "
                                    "when it is done.")
    return IndexNotBuilt(said + f"Building it takes {estimate(lines)}: run citecheck store index "
                                f"{shlex.quote(str(store.root))} (or check with --search-index), then come back.")


def building(store: Store) -> bool:
    """Whether a build of the store's index is under way (its lock is held), here or in another process."""
    lock = index_root(store) / LOCK
    if _BUILDING.locked():
        return True
    try:
        with open(lock, "a") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    except OSError:  # (no index folder yet, or not writable: nobody builds there)
        return False
    return False


def size(store: Store) -> int:
    """Bytes the store's search index takes on disk."""
    root = index_root(store)
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) if root.is_dir() else 0


Progress = Callable[[str], None]


def ensure(store: Store, progress: Progress | None = None) -> list[str]:
    """Make the index of every log whose index is missing or out of date (and remove those of
    logs no longer in the store, and what a build that stopped left); returns the sources indexed
    now.  ``progress`` is told of each log and of each ``BATCH`` answers read.  One build at a time
    per index, in this process and between processes (a lock file in the index's folder)."""
    root = index_root(store)
    made = []
    with _BUILDING, _locked(root):
        waiting = pending(store)
        for n, entry in enumerate(waiting, 1):
            if progress is not None:
                progress(f"indexing log {n} of {len(waiting)}: {entry['file']} ({int(entry.get('lines') or 0):,} lines)")
            build_log(store, entry, root, progress)
            made.append(entry["source"])
        known = {f"log-{e['source']}" for e in store.logs}
        for folder in root.iterdir():
            if folder.is_dir() and (folder.name.startswith(".log-") or (
                    folder.name.startswith("log-") and folder.name not in known)):
                shutil.rmtree(folder, ignore_errors=True)
    return made


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / LOCK, "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def build_log(store: Store, entry: dict, root: Path, progress: Progress | None = None) -> None:
    """Read the log ``entry`` once and write its index (into a new folder, renamed into place)."""
    source = entry["source"]
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".log-{source}-", dir=root))
    try:
        _write(store, entry, work, progress)
        (work / STAMP).write_text(json.dumps({"search_index_version": INDEX_VERSION, "source": source,
                                              "stamp": stamp(entry)}), encoding="utf-8")
        target = log_folder(root, source)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(work, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _write(store: Store, entry: dict, work: Path, progress: Progress | None) -> None:
    source = entry["source"]
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"SET temp_directory = {_list([str(work / '.spill')])[1:-1]}")  # (a big log's sort spills beside its index)
        files = store.files("answers", [source])
        found = con.execute(f"SELECT \"offset\", line_hash FROM read_parquet({_list(files)}, union_by_name = true) "
                            "ORDER BY \"offset\"").fetchall() if files else []
        kept = {offset: (row, bytes(digest)) for row, (offset, digest) in enumerate(found)}
        del found
        raw = {name: pq.ParquetWriter(work / f"raw-{name}.parquet", _TABLES[name]) for name in _READ}
        try:
            for batch in _batches(store, entry, kept, progress):
                for name, rows in batch.items():
                    raw[name].write_table(pa.Table.from_pydict(rows, schema=_TABLES[name]))
        finally:
            for writer in raw.values():
                writer.close()
        if progress is not None:
            progress("  sorting and writing the index")
        for name in _TABLES:  # sorted, so a word's rows sit in few row groups
            select = _WORDS_OF.get(name, "SELECT * FROM read_parquet({raw})").format(
                raw=_list([str(work / f"raw-{_FROM.get(name, name)}.parquet")]))
            con.execute(f"COPY ({select} ORDER BY {ORDER[name]}) TO {_list([str(work / (name + '.parquet'))])[1:-1]} "
                        f"(FORMAT parquet, COMPRESSION {compression(name)}, ROW_GROUP_SIZE {ROW_GROUP})")
        for name in _READ:
            (work / f"raw-{name}.parquet").unlink()
    finally:
        con.close()
        shutil.rmtree(work / ".spill", ignore_errors=True)


# The word tables are made in SQL from the texts as searched (``searching.field_text``: words with
# one space either side, an answer's question and answer a line each): each word of a line, and
# each two words that follow one another in it, once per answer or chunk.
_TERMS = ("SELECT DISTINCT source, unnest(list_concat(w, list_transform(range(1, len(w)), "
          "lambda i: w[i] || ' ' || w[i + 1]))) AS word, {key} FROM (SELECT source, {key}, "
          "list_filter(string_split(line, ' '), lambda x: x <> '') AS w FROM (SELECT source, {key}, "
          "unnest(string_split(text, chr(10))) AS line FROM read_parquet({{raw}})))")
_WORDS_OF = {"words": _TERMS.format(key="row"), "chunk_words": _TERMS.format(key="chunk")}
_FROM = {"words": "texts", "chunk_words": "chunk_texts"}
_READ = [name for name in _TABLES if name not in _FROM]  # the tables made while reading the log


def _empty() -> dict[str, dict[str, list]]:
    return {name: {f.name: [] for f in _TABLES[name]} for name in _READ}


def _batches(store: Store, entry: dict, kept: Mapping[int, tuple[int, bytes]],
             progress: Progress | None = None) -> Iterator[dict[str, dict[str, list]]]:
    """The index's rows of the log's answers, ``BATCH`` answers at a time.  A line whose bytes
    changed since it was checked is left out (the review page says so when it shows it)."""
    source, file = entry["source"], entry["file"]
    options = options_from(entry["options"])
    chunks: dict[str, int] = {}  # chunk text -> its key (the blake2b of the text as searched)
    seen: set[int] = set()
    rows = _empty()
    count = 0
    fast = FastReader()
    with open_log(store.log_file(source)) as handle:
        for line in numbered_lines(handle):
            place = kept.get(line.offset)
            if place is None or place[1] != store.line_hash(line.raw):
                continue
            record = answer_of(file, line, fast)
            if not isinstance(record, Answer):
                continue
            _add(rows, source, place[0], line.offset, record, chunks, seen, options)
            count += 1
            if count % BATCH == 0:
                if progress is not None:
                    progress(f"  {count:,} of {len(kept):,} answers read")
                yield rows
                rows = _empty()
    yield rows


def _add(rows: dict[str, dict[str, list]], source: str, row: int, offset: int, answer: Answer,
         chunks: dict[str, int], seen: set[int], options) -> None:
    _append(rows["texts"], source, row, searching.haystack([answer.question, answer.answer]))
    for chunk in dict.fromkeys(c.text for c in answer.chunks):
        key = chunks.get(chunk)
        if key is None:  # (a chunk text met before in this log is not read again)
            folded = searching.field_text(chunk)
            key = chunks[chunk] = int.from_bytes(hashlib.blake2b(folded.encode("utf-8"), digest_size=8).digest(),
                                                 "big", signed=True)
            if key not in seen:  # (two texts that fold alike are one chunk of the index)
                seen.add(key)
                _append(rows["chunk_texts"], source, key, folded)
        _append(rows["chunks"], source, row, key)
    result = check_answer(answer, options)
    items = items_of(result)
    aid = answer.answer_id
    for n, item in enumerate(items):
        _append(rows["items"], source, row, aid, n, item.sentence, item.citation, searching.status(result, item))
    _append(rows["answers"], source, row, offset, aid, answer.model or searching.NONE,
            answer.prompt_version or searching.NONE,
            [code for code, k in zip(reason_codes.ALL_REASONS, result.tally.reasons) if k], len(items))


def _append(columns: dict[str, list], *values) -> None:
    """One row: a value for each of the table's columns, in the schema's order (``_TABLES``)."""
    for column, value in zip(columns.values(), values, strict=True):
        column.append(value)


# --- the search -----------------------------------------------------------------------------------


class StoreSearch:
    """Searches of one store's answers (``StoreAnswers``, shared by the app's sessions): the index's
    tables as views on its connection, made (or brought up to date) when first asked.  A search
    marks the places of the answers each word, phrase and filter keeps in a bitmap of every
    answer of the store and ANDs them; only its result is kept, as a temp table of places."""

    def __init__(self, data: StoreAnswers):
        self.data = data
        self._lock = threading.Lock()
        self._ready = False
        self._found: OrderedDict[str, None] = OrderedDict()
        self._names = _NAMES  # (shared: two searchers on one connection never name a table alike)
        self.size = 0
        self.searchable = np.zeros(0, dtype=bool)  # answers the index holds, at their first line
        self.item_counts = np.zeros(0, dtype=np.int64)
        self.chunk_total = 0
        self.chunk_places = self.chunk_numbers = np.zeros(0, dtype=np.int32)  # each answer's chunks, by answer
        self.chunk_runs = self.chunk_answers = np.zeros(0, dtype=np.int64)  # where each answer's run starts; its place
        self._counted: dict[str, np.ndarray] = {}
        self._placing = threading.Lock()
        self._placed_sets: OrderedDict[tuple[str, frozenset[str]], _Placed] = OrderedDict()

    @property
    def ready(self) -> bool:
        return self._ready

    def prepare(self, build_limit: int | None = None) -> None:
        """Make the index (when missing or out of date) and its views; note which answers can match.
        With ``build_limit``, an index that needs more answers indexed than that is not built here:
        ``IndexNotBuilt`` says how to build it."""
        with self._lock:
            if self._ready:
                return
            store = self.data.store
            if build_limit is not None and (refused := not_built(store, build_limit)) is not None:
                raise refused
            ensure(store)
            root = index_root(store)
            for name, schema in _TABLES.items():
                files = [str(log_folder(root, e["source"]) / f"{name}.parquet") for e in store.logs]
                if files:
                    self.data.rows(f"CREATE OR REPLACE VIEW s_{name} AS SELECT * FROM read_parquet({_list(files)})")
                else:
                    self.data.register(f"s_{name}", schema.empty_table())
            # each log's first place among all answers (nav numbers a log's answers in offset order)
            self.data.rows("CREATE OR REPLACE TEMP TABLE s_base AS SELECT l.source, min(n.pos) AS base "
                           "FROM nav n JOIN logs l ON l.seq = n.log GROUP BY ALL")
            self.size = len(self.data)
            found = self._columns("SELECT b.base + a.row AS pos, a.items FROM s_answers a JOIN s_base b USING (source)")
            self.searchable = np.zeros(self.size, dtype=bool)
            self.searchable[found["pos"]] = True
            self.item_counts = np.zeros(self.size, dtype=np.int64)
            self.item_counts[found["pos"]] = found["items"]
            later = self._places("SELECT pos FROM nav WHERE answer_id IN (SELECT answer_id FROM nav GROUP BY "
                                 "answer_id HAVING count(*) > 1) QUALIFY row_number() OVER (PARTITION BY answer_id "
                                 "ORDER BY pos) > 1")
            self.searchable[later] = False  # (a later line of an id logged twice)
            # every distinct chunk numbered, and each answer's chunks as two arrays (place, chunk number):
            # the answers holding a word's chunks are found in numpy, not by a join per search
            self.data.rows("CREATE OR REPLACE TEMP TABLE s_chunk_ids AS SELECT source, chunk, "
                           "(row_number() OVER () - 1)::INTEGER AS idx FROM (SELECT DISTINCT source, chunk "
                           "FROM s_chunk_texts)")
            self.chunk_total = int(self.data.rows("SELECT count(*) FROM s_chunk_ids")[0][0])
            chunks = self._columns("SELECT (b.base + c.row)::INTEGER AS pos, i.idx FROM s_chunks c JOIN s_base b "
                                   "USING (source) JOIN s_chunk_ids i USING (source, chunk)")
            order = np.argsort(chunks["pos"], kind="stable")  # (by answer: each answer's chunks one run)
            self.chunk_places = chunks["pos"].astype(np.int32)[order]
            self.chunk_numbers = chunks["idx"].astype(np.int32)[order]
            self.chunk_runs = np.flatnonzero(np.diff(self.chunk_places, prepend=-1)) if len(order) else order
            self.chunk_answers = self.chunk_places[self.chunk_runs].astype(np.int64)
            with self.data._lock:
                release_memory(self.data.query.con)
            self._ready = True

    def _columns(self, sql: str, params: Sequence = ()) -> dict[str, np.ndarray]:
        with self.data._lock:
            got = self.data.query.con.execute(sql, list(params)).fetchnumpy()
        return {name: np.asarray(column) for name, column in got.items()}

    def _places(self, sql: str, params: Sequence = ()) -> np.ndarray:
        with self.data._lock:
            got = self.data.query.con.execute(sql, list(params)).fetchnumpy()
        column = next(iter(got.values()), None)
        return np.zeros(0, dtype=np.int64) if column is None else np.asarray(column, dtype=np.int64)

    def _mask(self, sql: str, params: Sequence = ()) -> np.ndarray:
        out = np.zeros(self.size, dtype=bool)
        out[self._places(sql, params)] = True
        return out

    def search(self, search: searching.Search, facts: searching.Facts = searching.Facts(),
               build_limit: int | None = None) -> searching.Found:
        self.prepare(build_limit)
        n = next(self._names)
        registered: list[str] = []
        item_rules = searching.rules(search, facts) if search.item_filtered else ()
        try:
            keep = self.searchable.copy()
            wanted = searching.terms(search.text)
            if wanted:
                notes = f"s_notes_{n}"
                self._register(notes, _notes(facts), registered)
                for term in wanted:
                    keep &= self._term(term, notes)
            for sql, params in self._answer_tests(search):
                keep &= self._mask(sql, params)
            counts = self.item_counts
            if search.item_filtered and not item_rules:
                counts = self._status_counts(search.status)
                keep &= counts > 0
            elif search.item_filtered:
                counts = self._rule_counts(search, item_rules)
                keep &= counts > 0
        finally:
            self._unregister(registered)
        found = np.flatnonzero(keep)
        name = f"s_found_{n}"
        self.data.register(f"{name}_new", pd.DataFrame({"pos": found}))
        try:
            self.data.rows(f"CREATE TEMP TABLE {name} AS SELECT pos FROM {name}_new ORDER BY pos")
        finally:
            self._unregister([f"{name}_new"])
        self._keep(name)
        ids = AnswerIds(self.data, f"pos IN (SELECT pos FROM {name})")
        return searching.Found(search, ids, _Items(self, search, item_rules, name), int(len(found)),
                           int(counts[found].sum()), searching.dropped(search.text))

    def _term(self, term: tuple[str, ...], notes: str) -> np.ndarray:
        """The answers a word or phrase matches: in their own texts, in a chunk they retrieved, in a note.
        A word or a two-word phrase is one entry of the index; a longer phrase is looked for in the
        texts (``contains``, the test itself) when some answer or chunk holds each of its pairs of
        words.  A pair that many answers hold is not listed first: the texts are read in full anyway,
        and listing a million places twice would cost more than reading them (``_candidates``)."""
        text = searching.needle(term)
        if len(term) <= 2:
            entry = " ".join(term)
            out = self._mask("SELECT b.base + x.row FROM s_words x JOIN s_base b USING (source) WHERE x.word = ?",
                             [entry])
            numbers = self._chunk_numbers(entry)
        else:
            pairs = [" ".join(pair) for pair in zip(term, term[1:])]
            out = self._candidates("words", pairs, self.size, lambda entry: self._mask(
                "SELECT b.base + x.row FROM s_words x JOIN s_base b USING (source) WHERE x.word = ?", [entry]))
            if out.any():
                out &= self._mask("SELECT b.base + x.row FROM s_texts x JOIN s_base b USING (source) "
                                  "WHERE contains(x.text, ?)", [text])
            chunks = self._candidates("chunk_words", pairs, self.chunk_total, lambda entry: self._chunk_hits(entry))
            numbers = np.zeros(0, dtype=np.int64)
            if chunks.any():
                chunks &= self._chunk_hits(text, "SELECT i.idx FROM s_chunk_texts w JOIN s_chunk_ids i "
                                                 "USING (source, chunk) WHERE contains(w.text, ?)")
                numbers = np.flatnonzero(chunks)
        if len(numbers) and len(self.chunk_runs):
            hit = np.zeros(self.chunk_total, dtype=bool)
            hit[numbers] = True
            out[self.chunk_answers] |= np.logical_or.reduceat(hit[self.chunk_numbers], self.chunk_runs)
        out[self._places(f"SELECT v.pos FROM {notes} x JOIN nav v USING (answer_id) WHERE contains(x.text, ?)",
                         [text])] = True
        return out

    def _chunk_numbers(self, entry: str) -> np.ndarray:
        """The numbers of the distinct chunks holding a word or a pair of words."""
        return self._places("SELECT i.idx FROM s_chunk_words w JOIN s_chunk_ids i USING (source, chunk) "
                            "WHERE w.word = ?", [entry])

    def _chunk_hits(self, entry: str, sql: str = "") -> np.ndarray:
        out = np.zeros(self.chunk_total, dtype=bool)
        out[self._places(sql, [entry]) if sql else self._chunk_numbers(entry)] = True
        return out

    def _candidates(self, table: str, pairs: Sequence[str], size: int,
                    mask: Callable[[str], np.ndarray]) -> np.ndarray:
        """The answers (``table`` "words") or chunks ("chunk_words") that may hold a phrase of these
        pairs of words: those holding each pair held by fewer than ``DENSE`` of them (none when a
        pair is held by none; all when every pair is held by many)."""
        out = np.ones(size, dtype=bool)
        for pair in pairs:
            held = int(self.data.rows(f"SELECT count(*) FROM s_{table} WHERE word = ?", [pair])[0][0])
            if not held:
                return np.zeros(size, dtype=bool)
            if held < size * DENSE:
                out &= mask(pair)
        return out

    def _status_counts(self, status: str) -> np.ndarray:
        """Per answer, how many of its items have the mechanical status ``status`` (counted once per store)."""
        found = self._counted.get(status)
        if found is None:
            places = self._places("SELECT b.base + i.row FROM s_items i JOIN s_base b USING (source) WHERE status = ?",
                                  [status])
            found = self._counted[status] = np.bincount(places, minlength=self.size).astype(np.int32)
        return found

    def _answer_tests(self, search: searching.Search) -> Iterator[tuple[str, list]]:
        """SQL giving the places of the answers the answer filters keep."""
        where, args = [], []
        if search.model:
            where.append("model = ?")
            args.append(search.model)
        if search.prompt_version:
            where.append("prompt_version = ?")
            args.append(search.prompt_version)
        if search.reason:
            where.append("list_contains(reasons, ?)")
            args.append(search.reason)
        if where:
            yield (f"SELECT b.base + a.row FROM s_answers a JOIN s_base b USING (source) WHERE {' AND '.join(where)}",
                   args)

    def _rule_counts(self, search: searching.Search, item_rules: Sequence[searching.Rule]) -> np.ndarray:
        """Per answer, how many of its items pass the mechanical status and every rule.  Only the
        items a rule names are placed (``_placed``: its item keys and answer ids, a few thousand);
        an item no rule names fails each rule and passes each negated one, so with no rule but
        negated ones the items that pass are counted as every item (of the status) less the named
        ones: a million unnamed items are never listed."""
        touched = [(k, self._placed(kind, names)) for k, rule in enumerate(item_rules)
                   for kind, names in (("keys", rule.keys), ("answers", rule.answers)) if names]
        pos = np.concatenate([np.zeros(0, dtype=np.int64), *(p.pos for _, p in touched)])
        n = np.concatenate([np.zeros(0, dtype=np.int64), *(p.n for _, p in touched)])
        rule = np.concatenate([np.zeros(0, dtype=np.int64), *(np.full(len(p.pos), k) for k, p in touched)])
        if search.status:
            status = np.concatenate([np.zeros(0, dtype=object), *(p.status for _, p in touched)])
            pos, n, rule = (a[status == search.status] for a in (pos, n, rule))
        width = int(n.max()) + 1 if len(n) else 1
        items, at = np.unique(pos * width + n, return_inverse=True)  # (one entry per item, however often named)
        hits = np.zeros((len(items), len(item_rules)), dtype=bool)
        hits[at, rule] = True
        passes = (hits != np.array([r.negate for r in item_rules], dtype=bool)).all(axis=1)
        places = items // width
        if any(not r.negate for r in item_rules):  # (only named items can pass)
            counts = np.zeros(self.size, dtype=np.int64)
        else:
            every = self._status_counts(search.status) if search.status else self.item_counts
            counts = every.astype(np.int64) - np.bincount(places, minlength=self.size)
        return counts + np.bincount(places[passes], minlength=self.size)

    def _placed(self, kind: str, names: frozenset[str]) -> _Placed:
        """The items that a set of item keys (``kind`` "keys") or of answer ids ("answers") names.
        The last ``PLACED_KEPT`` sets are kept: a set met again is not placed again, and one that
        differs from a kept one by a few names (a label added) places only those."""
        with self._placing:
            found = self._placed_sets.get((kind, names))
            if found is not None:
                self._placed_sets.move_to_end((kind, names))
                return found
            near = min(((len(names ^ known), known, placed) for (k, known), placed in self._placed_sets.items()
                        if k == kind and abs(len(known) - len(names)) <= len(names) // 2),
                       key=lambda x: x[0], default=None)
            if near is not None and near[0] <= len(names) // 2:
                _, known, placed = near
                found = placed.without(known - names).plus(self._place(kind, names - known))
            else:
                found = self._place(kind, names)
            self._placed_sets[(kind, names)] = found
            while len(self._placed_sets) > PLACED_KEPT:
                self._placed_sets.popitem(last=False)
            return found

    def _place(self, kind: str, names: frozenset[str] | set[str]) -> _Placed:
        """``_placed`` without the kept sets: one query joining the names to the review page's index
        (answer id -> place) and to the index's items.  A key is split into answer id, sentence and
        citation in SQL, and only a string that is the key of such an item (``item_key``, exactly)
        is split: any other names no item, as a key compared whole would."""
        listed = np.array([x for x in names if x.isascii() or not _SURROGATE.search(x)], dtype=object)
        if not len(listed):
            return _Placed.empty()
        frame = pd.DataFrame({"i": np.arange(len(listed), dtype=np.int64),
                              "k": pd.Series(listed, dtype=object)})
        name = f"s_place_{next(self._names)}"
        if kind == "keys":
            named = (f"SELECT i, m.a AS a, m.s::BIGINT AS s, CASE WHEN m.t = 'uncited' THEN -1 ELSE m.c::BIGINT END AS c "
                     f"FROM (SELECT i, regexp_extract(k, '{_ITEM_KEY}', ['a', 's', 't', 'c']) AS m FROM {name}) "
                     "WHERE m.s <> ''")
            same = "AND i.sentence = f.s AND coalesce(i.citation, -1) = f.c"
        else:
            named, same = f"SELECT i, k AS a FROM {name}", ""
        sql = (f"SELECT f.i, b.base + i.row AS pos, i.n, i.status FROM ({named}) f JOIN nav v ON v.answer_id = f.a "
               "JOIN logs l ON l.seq = v.log JOIN s_base b ON b.source = l.source JOIN s_items i "
               f"ON i.source = l.source AND i.row = v.pos - b.base {same}")
        registered: list[str] = []
        try:
            self._register(name, frame, registered)
            got = self._columns(sql)
        finally:
            self._unregister(registered)
        return _Placed(listed[got["i"].astype(np.int64)], got["pos"].astype(np.int64), got["n"].astype(np.int64),
                       np.asarray(got["status"], dtype=object))

    def _register(self, name: str, frame: pd.DataFrame, registered: list[str]) -> None:
        self.data.register(name, frame)
        registered.append(name)

    def _unregister(self, names: list[str]) -> None:
        with self.data._lock:
            for table in names:
                self.data.query.con.unregister(table)

    def _keep(self, name: str) -> None:
        self._found[name] = None
        while len(self._found) > FOUND_KEPT:
            old, _ = self._found.popitem(last=False)
            self.data.rows(f"DROP TABLE IF EXISTS {old}")

    def items_of(self, search: searching.Search, item_rules: Sequence[searching.Rule], found: str,
                 answer_id: str) -> tuple[str, ...] | None:
        """The matching item keys of one matching answer (None when it does not match): its items
        of the status asked, each kept when it passes every rule (``Rule.passes``, as in memory)."""
        row = self.data.rows(f"SELECT l.source, n.pos - b.base FROM nav n JOIN logs l ON l.seq = n.log JOIN s_base b "
                             f"USING (source) WHERE n.answer_id = ? AND n.pos IN (SELECT pos FROM {found}) LIMIT 1",
                             [answer_id])
        if not row:
            return None
        source, place = row[0]
        rows = self.data.rows("SELECT answer_id, sentence, citation FROM s_items WHERE source = ? AND row = ? "
                              "AND (? = '' OR status = ?) ORDER BY n", [source, place, search.status, search.status])
        keys = ((item_key(*r), r[0]) for r in rows)
        return tuple(key for key, aid in keys if all(rule.passes(key, aid) for rule in item_rules))


@dataclass(frozen=True)
class _Placed:
    """Items named by a set of item keys or answer ids: for each, the name, its answer's place,
    its place in the answer and its mechanical status (one array each, a row per item named)."""

    names: np.ndarray
    pos: np.ndarray
    n: np.ndarray
    status: np.ndarray

    @classmethod
    def empty(cls) -> _Placed:
        return cls(np.zeros(0, dtype=object), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                   np.zeros(0, dtype=object))

    def without(self, names: Set[str]) -> _Placed:
        if not names:
            return self
        kept = np.fromiter((x not in names for x in self.names), dtype=bool, count=len(self.names))
        return _Placed(self.names[kept], self.pos[kept], self.n[kept], self.status[kept])

    def plus(self, other: _Placed) -> _Placed:
        return _Placed(*(np.concatenate([a, b]) for a, b in zip(
            (self.names, self.pos, self.n, self.status), (other.names, other.pos, other.n, other.status))))


def _notes(facts: searching.Facts) -> pd.DataFrame:
    """The label notes as (answer_id, text as searched), placed by answer id in SQL."""
    rows = [(aid, searching.haystack(notes)) for aid, notes in searching.notes_by_answer(facts.labels).items()]
    return pd.DataFrame(rows, columns=["answer_id", "text"], dtype=object)


class _Items(Mapping):
    """Answer id -> its matching item keys, one query per answer asked (a few per page run)."""

    def __init__(self, searches: StoreSearch, search: searching.Search, item_rules: Sequence[searching.Rule],
                 found: str):
        self.searches, self.search, self.item_rules, self.found = searches, search, item_rules, found
        self._kept: dict[str, tuple[str, ...] | None] = {}

    def __getitem__(self, answer_id: str) -> tuple[str, ...]:
        if answer_id not in self._kept:
            self._kept[answer_id] = self.searches.items_of(self.search, self.item_rules, self.found, answer_id)
        found = self._kept[answer_id]
        if found is None:
            raise KeyError(answer_id)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(AnswerIds(self.searches.data, f"pos IN (SELECT pos FROM {self.found})"))

    def __len__(self) -> int:
        return len(AnswerIds(self.searches.data, f"pos IN (SELECT pos FROM {self.found})"))


def searcher_of(data: StoreAnswers) -> StoreSearch:
    """The searcher kept with ``data`` (one per store, shared by the sessions that share ``data``)."""
    searcher = data.__dict__.get("_search")
    if searcher is None:
        searcher = data.__dict__.setdefault("_search", StoreSearch(data))
    return searcher


def search_store(data: StoreAnswers, search: searching.Search, facts: searching.Facts = searching.Facts(),
                 build_limit: int | None = None) -> searching.Found:
    """``review.search.search_dataset`` on a checked store (one searcher is kept with ``data``).
    ``build_limit``: see ``StoreSearch.prepare``."""
    return searcher_of(data).search(search, facts, build_limit)


def unbuilt(data: StoreAnswers, limit: int | None = None) -> IndexNotBuilt | None:
    """What the review page says instead of searching a store whose index a first search would
    take long to build (more than ``limit`` answers to index, default ``BUILD_ON_PAGE``); None when it can search (the index
    is ready, or small enough to build in place)."""
    searcher = data.__dict__.get("_search")
    if searcher is not None and searcher.ready:
        return None
    return not_built(data.store, BUILD_ON_PAGE if limit is None else limit)


def values(data: StoreAnswers, column: str) -> list[str]:
    """``review.search.values`` of a store (its models or prompt versions, sorted)."""
    return data.query.values(column)


def is_kept(data: StoreAnswers, found: searching.Found) -> bool:
    """Whether a store search's result is still held (a few recent ones are: ``FOUND_KEPT``)."""
    searcher = data.__dict__.get("_search")
    where = getattr(found.answers, "where", "")
    return searcher is not None and any(f"FROM {name})" in where for name in searcher._found)
