"""The review page's answer index (core/store/index.py), made a slice of one log at a time, holds
exactly the rows, in exactly the order, of one window over the whole store."""

from __future__ import annotations

import pytest
from citecheck.checking.checker import CheckOptions
from citecheck.contract.corpus import Corpus
from citecheck.store.index import make_index
from citecheck.store.query import StoreQuery
from citecheck.store.store import Store
from test_store import CORPUS, generated_log

# The index as one window over every answer of the store (what the review page made before).
WHOLE = ('SELECT (row_number() OVER (ORDER BY seq, "offset") - 1)::BIGINT AS pos, answer_id, source, line, '
         '"offset", line_hash, failed, refused FROM answers JOIN logs USING (source) ORDER BY pos')


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("index")
    store = Store(folder / "store", create=True)
    options = CheckOptions(corpus=Corpus(CORPUS))
    for n, seed in ((300, 1), (7, 2), (150, 3)):  # three logs of different sizes, with unreadable lines
        store.check_log(str(generated_log(folder / f"log-{seed}.jsonl", n, seed)), options)
    return store


@pytest.mark.parametrize("slice_lines", [1, 7, 64, 100_000])
def test_the_index_in_slices_equals_one_window(store, slice_lines):
    query = StoreQuery(store)
    want = query.con.execute(WHOLE).fetchall()
    rows = make_index(query.con, query.sources, "nav_test", slice_lines=slice_lines)
    got = query.con.execute("SELECT * FROM nav_test ORDER BY pos").fetchall()
    assert rows == len(want) == len(got) > 400
    assert got == want
    assert [r[0] for r in got] == list(range(len(got)))


def test_the_index_follows_the_order_of_the_logs_asked_for(store):
    sources = list(reversed(StoreQuery(store).sources))
    query = StoreQuery(store, sources)
    make_index(query.con, query.sources, "nav_rev", slice_lines=50)
    first = query.con.execute("SELECT source FROM nav_rev ORDER BY pos LIMIT 1").fetchone()[0]
    assert first == sources[0]
    assert query.con.execute("SELECT * FROM nav_rev ORDER BY pos").fetchall() == query.con.execute(WHOLE).fetchall()
