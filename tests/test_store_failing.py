"""The failing-answers table from a store, ranked on its narrow columns first (core/citecheck/storage/checked/query.py):
the rows kept, their order and every column are those of ranking every column at once, and of the
pandas table (``figures.failing``) cut at the same length."""

from __future__ import annotations

import pandas as pd
import pytest
from citecheck.checking.checker import CheckOptions
from citecheck.checking.files import check_files
from citecheck.contract import reasons
from citecheck.contract.corpus import Corpus
from citecheck.labelling import labels
from citecheck.labelling.items import items_of
from citecheck.reports import figures
from citecheck.storage.checked.folder import Store
from citecheck.storage.checked.query import StoreQuery
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_store import CORPUS, FILTERS, MODELS, generated_log

OPTIONS = CheckOptions(corpus=Corpus(CORPUS))


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Three logs; the first two share answer ids (ties on the id are broken by log order), and the
    sample's answers repeat, so many rows tie on problems and failure rate."""
    folder = tmp_path_factory.mktemp("failing")
    return [generated_log(folder / f"log-{seed}.jsonl", n, seed) for n, seed in ((240, 11), (90, 12), (60, 13))]


@pytest.fixture(scope="module")
def store(tmp_path_factory, logs):
    store = Store(tmp_path_factory.mktemp("failing-store") / "store", create=True)
    for log in logs:
        store.check_log(str(log), OPTIONS)
    return store


@pytest.fixture(scope="module")
def table(logs):
    return figures.answer_table((f, n, r) for f, n, r in check_files([str(p) for p in logs], OPTIONS)
                          if isinstance(r, figures.AnswerResult))


def some_labels(logs, every: int = 3) -> dict:
    """Labels on some answers' first citations (every ``every``-th cited answer of the first log)."""
    out = []
    n = 0
    for _, _, result in check_files([str(logs[0])], OPTIONS):
        if isinstance(result, figures.AnswerResult) and result.citations:
            n += 1
            if n % every == 0:
                item = next(it for it in items_of(result) if it.citation is not None)
                out.append(labels.make_label(item, "not_supported" if n % 2 else "supported", "ana"))
    return labels.latest(out)


def rows(frame: pd.DataFrame) -> tuple[list[str], list[list]]:
    """The columns and the rows' values, a null as None (DuckDB gives a string column of nulls
    only, or of no row, as objects, and one with values as strings: the same rows)."""
    return list(frame.columns), frame.astype(object).where(frame.notna(), None).values.tolist()


filters = st.builds(
    figures.Filters,
    reason=st.none() | st.sampled_from(reasons.ALL_REASONS),
    model=st.none() | st.sampled_from([m or figures.NONE for m in MODELS]),
    prompt_version=st.none() | st.sampled_from(("answer.v1", "answer.v2", "answer.v3")),
    refused=st.none() | st.booleans(),
    human_not_supported=st.none() | st.booleans(),
    labelled=st.none() | st.booleans(),
    failing_only=st.booleans(),
)


def test_the_narrow_ranking_keeps_the_rows_of_the_whole_ranking(store, table):
    query = StoreQuery(store)
    for f in FILTERS:
        whole = query.failing_whole(f)
        assert len(whole), f
        for limit in (0, 1, 2, 7, len(whole) // 2, len(whole) - 1, len(whole), len(whole) + 5):
            got = query.failing(f, limit)
            pd.testing.assert_frame_equal(got, query.failing_whole(f, limit))
            assert rows(got) == rows(whole.head(limit))
        want = figures.failing(table, f)[list(figures.TABLE_COLUMNS)].reset_index(drop=True)
        cut = query.failing(f, len(want) // 3)[list(figures.TABLE_COLUMNS)]
        assert cut.to_dict("records") == want.head(len(want) // 3).to_dict("records")


def test_rows_that_tie_on_every_rank_key_but_the_log_keep_log_order(store):
    query = StoreQuery(store)
    whole = query.failing_whole(figures.Filters(failing_only=False))
    twice = whole[whole.duplicated("answer_id", keep=False)]
    assert len(twice) > 50  # the first two logs share their ids
    cut = len(whole) // 2
    got = query.failing(figures.Filters(failing_only=False), cut)
    assert got[["answer_id", "source", "offset"]].values.tolist() == \
        whole.head(cut)[["answer_id", "source", "offset"]].values.tolist()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(f=filters, limit=st.integers(min_value=0, max_value=420), with_labels=st.booleans())
def test_any_filter_and_limit_gives_the_whole_rankings_rows(store, logs, f, limit, with_labels):
    query = StoreQuery(store)
    if with_labels:
        query.use_labels(some_labels(logs))
    pd.testing.assert_frame_equal(query.failing(f, limit), query.failing_whole(f, limit))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(min_value=1, max_value=60), min_size=1, max_size=3),
       seed=st.integers(min_value=0, max_value=10_000), limit=st.integers(min_value=1, max_value=80))
def test_on_generated_logs_the_narrow_ranking_equals_the_pandas_table(tmp_path_factory, sizes, seed, limit):
    folder = tmp_path_factory.mktemp("gen-failing")
    paths = [generated_log(folder / f"log-{i}.jsonl", n, seed + i) for i, n in enumerate(sizes)]
    store = Store(folder / "store", create=True)
    for p in paths:
        store.check_log(str(p), OPTIONS)
    table = figures.answer_table((f, n, r) for f, n, r in check_files([str(p) for p in paths], OPTIONS)
                           if isinstance(r, figures.AnswerResult))
    query = StoreQuery(store)
    for f in (figures.Filters(), figures.Filters(failing_only=False)):
        want = figures.failing(table, f)[list(figures.TABLE_COLUMNS)].reset_index(drop=True).head(limit)
        got = query.failing(f, limit)
        assert got[list(figures.TABLE_COLUMNS)].to_dict("records") == want.to_dict("records")
        pd.testing.assert_frame_equal(got, query.failing_whole(f, limit))


def test_the_label_counts_ride_with_the_narrow_ranking(store, logs):
    query = StoreQuery(store)
    query.use_labels(some_labels(logs))
    for f in (figures.Filters(labelled=True, failing_only=False), figures.Filters(human_not_supported=True, failing_only=False)):
        whole = query.failing_whole(f)
        assert len(whole) > 10 and (whole["labelled"] > 0).all()
        for limit in (1, 5, len(whole)):
            pd.testing.assert_frame_equal(query.failing(f, limit), query.failing_whole(f, limit))


def test_the_cut_leaves_out_rows_ranked_below_the_last_kept(store):
    query = StoreQuery(store)
    f = figures.Filters(failing_only=False)
    where, params = query._where(f)
    total = query.one(f"SELECT count(*) FROM a WHERE {where}", params)[0]
    for limit in (1, 10, 100):
        cut, more = query._cut(where, params, limit)
        kept = query.one(f"SELECT count(*) FROM a WHERE {where} AND {cut}", params + more)[0]
        assert limit <= kept < total  # (the whole ranking's first rows are kept: the tests above)
    assert query._cut(where, params, total) == ("TRUE", [])
