"""BM25 from postings: the same scores as rank-bm25's BM25Okapi, float for float, and the same
ranking (best first, ties in corpus order) as a full sort."""

from __future__ import annotations

import numpy as np
from citecheck.pipeline.retrieval import Postings, build_index, top_k
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

WORDS = st.sampled_from([f"w{i}" for i in range(12)])  # a small vocabulary: many shared terms, negative IDFs
DOCS = st.lists(st.lists(WORDS, min_size=0, max_size=15), min_size=1, max_size=25)
QUERY = st.lists(st.one_of(WORDS, st.just("unknown")), min_size=0, max_size=6)


@settings(max_examples=300, deadline=None)
@given(DOCS, QUERY)
def test_scores_equal_bm25okapi_exactly(docs, query):
    postings = Postings.build(docs)
    if any(docs):
        expected = BM25Okapi(docs).get_scores(query)
    else:
        expected = np.zeros(len(docs))  # rank-bm25 cannot index a corpus without a term
    assert np.array_equal(postings.scores(query), expected)


def test_negative_idf_floor_and_repeated_terms_match_the_library():
    docs = [["a", "b"], ["a", "c"], ["a", "a", "d"], ["e"]]  # "a" in 3 of 4 chunks: negative IDF, floored
    okapi = BM25Okapi(docs)
    postings = Postings.build(docs)
    assert okapi.idf["a"] == postings.idf[postings.vocab["a"]] == okapi.epsilon * okapi.average_idf
    for query in (["a"], ["a", "a", "b"], ["zzz"], []):
        assert np.array_equal(postings.scores(query), okapi.get_scores(query))


@given(st.lists(st.sampled_from([0.0, 1.0, 1.5, 2.0, -0.5]), min_size=0, max_size=40), st.integers(0, 45))
def test_top_k_is_a_full_sort_cut_at_k(scores, k):
    arr = np.array(scores, dtype=np.float64)
    assert top_k(arr, k) == sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]


def test_index_ranks_the_bundled_corpus_as_rank_bm25_does(tmp_path):
    from pathlib import Path

    from citecheck.pipeline.retrieval import tokenise

    root = Path(__file__).resolve().parent.parent / "sample_data" / "source"
    index = build_index(root)
    corpus = [tokenise(f"{c.title or ''} {c.section or ''} {c.text}") for c in index.chunks]
    okapi = BM25Okapi(corpus)
    for question in ("How many earned leave days do I get?", "refund within 30 days", "rotate credentials"):
        scores = okapi.get_scores(tokenise(question))
        expected = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:5]
        found = index.search(question, 5)
        assert [s.chunk.chunk_id for s in found] == [index.chunks[i].chunk_id for i in expected]
        assert [s.score for s in found] == [float(scores[i]) for i in expected]
