"""The review page's answer index (core/citecheck/storage/checked/index.py), made a slice of one log at a time, holds
exactly the rows, in exactly the order, of one window over the whole store."""

from __future__ import annotations

from pathlib import Path

import pytest
from citecheck.checking.checker import CheckOptions
from citecheck.contract.corpus import Corpus
from citecheck.storage.checked.folder import Store
from citecheck.storage.checked.index import make_index
from citecheck.storage.checked.query import StoreQuery
from hypothesis import given, settings
from hypothesis import strategies as st
from test_store import CORPUS, generated_log

# The index as one window over every answer of the store (what the review page made before).
WHOLE = ('SELECT (row_number() OVER (ORDER BY seq, "offset") - 1)::BIGINT AS pos, answer_id, seq::INTEGER, line, '
         '"offset", (\'0x\' || hex(line_hash))::UHUGEINT, failing, failed, refused, sentences > 0 FROM answers '
         'JOIN logs USING (source) ORDER BY pos')


def parts(query: StoreQuery) -> list[list[str]]:
    return [query.store.files("answers", [source]) for source in query.sources]


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
    rows = make_index(query.con, parts(query), "nav_test", slice_lines=slice_lines)
    got = query.con.execute("SELECT * FROM nav_test ORDER BY pos").fetchall()
    assert rows == len(want) == len(got) > 400
    assert got == want
    assert [r[0] for r in got] == list(range(len(got)))


def test_the_index_follows_the_order_of_the_logs_asked_for(store):
    sources = list(reversed(StoreQuery(store).sources))
    query = StoreQuery(store, sources)
    make_index(query.con, parts(query), "nav_rev", slice_lines=50)
    logs = [log for (log,) in query.con.execute("SELECT log FROM nav_rev ORDER BY pos").fetchall()]
    sizes = dict(query.con.execute("SELECT source, count(*) FROM answers GROUP BY source").fetchall())
    assert logs == [n for n, source in enumerate(sources) for _ in range(sizes[source])]  # log = place in sources
    assert query.con.execute("SELECT * FROM nav_rev ORDER BY pos").fetchall() == query.con.execute(WHOLE).fetchall()


def test_items_says_which_answers_have_a_sentence_to_review(store):
    """``items`` (``sentences > 0``) is the answers that hold a sentence that is not the refusal
    sentence: what the "unlabelled" filter found by joining every sentence of the store."""
    query = StoreQuery(store)
    make_index(query.con, parts(query), "nav_items", slice_lines=64)
    got = query.con.execute('SELECT log, "offset" FROM nav_items WHERE NOT items ORDER BY pos').fetchall()
    want = query.con.execute(
        'SELECT seq, "offset" FROM answers JOIN logs USING (source) ANTI JOIN (SELECT DISTINCT source, "offset" '
        'FROM sentences WHERE NOT refusal) USING (source, "offset") ORDER BY seq, "offset"').fetchall()
    assert got == want and len(want) > 3  # the sample's refusals
    assert query.one("SELECT count(*) FROM nav_items WHERE items")[0] > 400


def test_the_index_keeps_each_lines_hash(store):
    from citecheck.storage.checked.index import hash_int

    query = StoreQuery(store)
    make_index(query.con, parts(query), "nav_hash", slice_lines=7)
    rows = query.con.execute('SELECT n.line_hash, a.line_hash FROM nav_hash n JOIN logs l ON l.seq = n.log '
                             'JOIN answers a ON a.source = l.source AND a."offset" = n."offset"').fetchall()
    assert len(rows) > 400 and all(got == hash_int(bytes(want)) for got, want in rows)
    assert len({got for got, _ in rows}) > 100


@pytest.mark.parametrize("slice_", [50_000, 13])
def test_item_total_over_several_logs_is_every_items_of(store, monkeypatch, slice_):
    from citecheck.checking.files import check_files
    from citecheck.labelling.items import items_of
    from citecheck.reports import figures
    from citecheck.storage.checked import answers

    monkeypatch.setattr(answers, "ITEM_SLICE", slice_)
    logs = [e["file"] for e in store.logs]
    want = sum(len(items_of(r)) for _, _, r in check_files(logs, CheckOptions(corpus=Corpus(CORPUS)))
               if isinstance(r, figures.AnswerResult))
    assert answers.StoreAnswers(store.root)._item_total() == want > 400


@settings(max_examples=200, deadline=None)
@given(digests=st.lists(st.binary(min_size=16, max_size=16), min_size=1, max_size=40), skip=st.integers(0, 5))
def test_hash_halves_give_each_hash_int_binary_or_fixed_width(digests, skip):
    import pyarrow as pa
    from citecheck.storage.checked.index import _hash_halves, hash_int

    for kind in (pa.binary(), pa.binary(16)):
        array = pa.array(digests, type=kind).slice(min(skip, len(digests) - 1))  # (an array with an offset too)
        hi, lo = _hash_halves(array)
        want = [hash_int(d) for d in digests[min(skip, len(digests) - 1):]]
        assert [(int(h) << 64) | int(low) for h, low in zip(hi, lo)] == want
    assert _hash_halves(pa.array(digests + [b"short"])) is None  # (then DuckDB converts each, as before)


def test_a_log_whose_parts_are_not_in_offset_order_is_sorted(store, tmp_path):
    import pyarrow.parquet as pq

    query = StoreQuery(store)
    (first,), *_ = parts(query)
    table = pq.read_table(first)
    half = table.num_rows // 2
    early, late = tmp_path / "early.parquet", tmp_path / "late.parquet"
    pq.write_table(table.slice(0, half), early)
    pq.write_table(table.slice(half), late)
    make_index(query.con, [[str(late), str(early)]], "nav_sorted", slice_lines=16)
    want = query.con.execute(f"SELECT answer_id, \"offset\" FROM read_parquet('{first}') ORDER BY \"offset\"").fetchall()
    assert query.con.execute('SELECT answer_id, "offset" FROM nav_sorted ORDER BY pos').fetchall() == want


def test_item_total_is_the_recorded_review_items_and_counted_for_older_parts(store, tmp_path):
    """``review_items`` (recorded per answer when checked) sums to the items counted from the
    sentences; a store whose parts predate the column (the column dropped here) counts them."""
    import shutil

    import pyarrow.parquet as pq
    from citecheck.checking.files import check_files
    from citecheck.labelling.items import item_count, items_of
    from citecheck.reports import figures
    from citecheck.storage.checked import answers

    results = [r for _, _, r in check_files([e["file"] for e in store.logs], CheckOptions(corpus=Corpus(CORPUS)))
               if isinstance(r, figures.AnswerResult)]
    assert all(item_count(r) == len(items_of(r)) for r in results)
    want = sum(len(items_of(r)) for r in results)
    recorded = answers.StoreAnswers(store.root)
    assert recorded.item_total() == recorded._item_total() == want > 400
    older = tmp_path / "older"
    shutil.copytree(store.root, older)
    for part in (older / "answers").rglob("*.parquet"):
        pq.write_table(pq.read_table(part).drop_columns(["review_items"]), part)
    assert answers.StoreAnswers(older).item_total() == want


# --- the index saved with the store (issue #36: a freshly started page need not make it) ----------

def _nav(data) -> list[tuple]:
    return data.rows("SELECT * FROM nav ORDER BY pos")


def _attached(data) -> bool:
    names = data.rows("SELECT database_name FROM duckdb_databases()")
    return ("review_index",) in names


@pytest.fixture()
def copied(store, tmp_path):
    import shutil

    shutil.copytree(store.root, tmp_path / "store")
    return Store(tmp_path / "store")


def test_the_saved_index_is_the_index_made_in_memory_and_the_page_attaches_it(copied):
    from citecheck.storage.checked import answers
    from citecheck.storage.checked.index import save_index, saved_index

    made = answers.StoreAnswers(copied.root)  # nothing saved yet: made in memory
    assert not _attached(made)
    path = save_index(copied)
    assert path == saved_index(copied) and path.is_file() and path.parent.name == "review"
    assert save_index(copied) == path  # (saved once per state of the store)
    saved = answers.StoreAnswers(copied.root)
    assert _attached(saved)
    assert _nav(saved) == _nav(made) and len(saved) == len(made) > 400
    aid = _nav(made)[123][1]
    assert saved.get(aid) == made.get(aid) and saved.row_of(aid) == made.row_of(aid)


def test_a_saved_index_is_used_only_for_the_store_it_was_made_from(tmp_path, monkeypatch):
    """``check --store`` saves the index of a store of ``SAVE_FROM`` lines or more (none below);
    another order of the logs, or a log checked again, has another key: the index is made in
    memory then, and the next ``check --store`` saves the new one and removes the old."""
    import io

    from citecheck.cli.main import main
    from citecheck.storage.checked import answers, index
    from citecheck.storage.checked.index import open_index, saved_index

    logs = [str(generated_log(tmp_path / f"log-{seed}.jsonl", n, seed)) for n, seed in ((40, 4), (30, 5))]
    folder = tmp_path / "store"

    def check(*paths: str) -> Store:
        main(["check", *paths, "--corpus", str(CORPUS), "--store", str(folder)], io.StringIO(), io.StringIO())
        return Store(folder)

    monkeypatch.setattr(index, "SAVE_FROM", 71)  # (the two logs hold 70 lines)
    assert not index.worth_saving(check(logs[0])) and not (folder / index.FOLDER).exists()
    monkeypatch.setattr(index, "SAVE_FROM", 70)
    first = check(*logs)
    assert index.worth_saving(first)
    old = saved_index(first)
    (old.parent / ".index-0.duckdb.99.tmp").write_bytes(b"what a save killed midway left")
    assert old.is_file() and _attached(answers.StoreAnswers(folder))
    sources = list(reversed(StoreQuery(first).sources))
    query = StoreQuery(first, sources)
    assert open_index(query.con, first, sources, "nav") == query.con.execute("SELECT count(*) FROM nav").fetchone()[0]
    assert ("review_index",) not in query.con.execute("SELECT database_name FROM duckdb_databases()").fetchall()
    with open(logs[1], "ab") as handle:  # one more line: the log's parts change
        handle.write(Path(logs[1]).read_bytes().splitlines(keepends=True)[0])
    second = check(logs[1])
    new = saved_index(second)
    assert new != old and new.is_file() and not old.exists()
    assert [p.name for p in new.parent.iterdir()] == [new.name]
    data = answers.StoreAnswers(folder)
    made = StoreQuery(second)
    make_index(made.con, parts(made), "nav_made")
    assert _attached(data) and _nav(data) == made.con.execute("SELECT * FROM nav_made ORDER BY pos").fetchall()
    assert len(data) == len(_nav(data)) > 60


def test_an_unreadable_saved_index_is_made_again_and_a_failed_save_is_no_failure(copied):
    from citecheck.storage.checked import answers
    from citecheck.storage.checked.index import save_index, saved_index

    want = _nav(answers.StoreAnswers(copied.root))
    path = saved_index(copied)
    path.parent.mkdir()
    path.write_bytes(b"not a DuckDB file" * 100)
    data = answers.StoreAnswers(copied.root)
    assert not _attached(data) and _nav(data) == want
    path.unlink()
    path.parent.rmdir()
    path.parent.write_text("a file where the folder goes")  # (the save cannot make its folder)
    assert save_index(copied) is None
    assert not list(copied.root.glob("**/.index-*.tmp*"))
    assert _nav(answers.StoreAnswers(copied.root)) == want


def test_a_check_into_a_smaller_store_starts_no_duckdb(tmp_path):
    """Below ``SAVE_FROM`` lines no index is saved, and ``check --store`` does not pay DuckDB's import."""
    import subprocess
    import sys

    log = generated_log(tmp_path / "log.jsonl", 20, 6)
    code = ("import io, sys\nfrom citecheck.cli.main import main\n"
            f"main(['check', {str(log)!r}, '--store', {str(tmp_path / 'store')!r}], io.StringIO(), io.StringIO())\n"
            "print('duckdb' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False" and Store(tmp_path / "store").logs
