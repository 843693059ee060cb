"""BM25 retrieval over a corpus's chunks (``rank-bm25``'s Okapi model), and the index snapshot id.

Scores are rank-bm25's ``BM25Okapi.get_scores`` (k1 1.5, b 0.75, IDF floored at 0.25 x the mean
IDF), computed from precomputed postings: each term's documents and their term weights, so a
query touches only the chunks that hold its terms instead of every chunk in a Python loop, and
the best k are found with a partial sort.  Equal scores to the library's, float for float
(tests/test_retrieval.py compares them on random corpora).

The snapshot id names exactly what answers were retrieved from: a hash of every document's
path and bytes, the chunking parameters and the tokeniser version.  It goes into every log
line the pipeline writes, so two logs can be compared only when they searched the same index.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

from citecheck.contract.log import Chunk
from citecheck.pipeline.chunking import ChunkingParams, chunk_folder, documents

TOKENISER_VERSION = "tokens.v1"  # NFKC, case-folded, runs of letters and digits; no stopwords, no stemming
_TOKEN = re.compile(r"\w+")


def tokenise(text: str) -> list[str]:
    """The BM25 terms of ``text``. Stopwords are kept: the support floor was measured with them."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


def snapshot_id(root: str | Path, params: ChunkingParams = ChunkingParams()) -> str:
    """``snap-<12 hex>``: a hash of the corpus contents, chunking parameters and tokeniser."""
    root = Path(root)
    h = hashlib.sha256()
    h.update(f"{params.version}:{params.max_chars}:{TOKENISER_VERSION}\n".encode())
    for path in documents(root):
        data = path.read_bytes()
        h.update(f"{path.relative_to(root).as_posix()}\0{len(data)}\0".encode())
        h.update(data)
    return "snap-" + h.hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Scored:
    chunk: Chunk
    score: float
    rank: int  # 1-based


@dataclass(frozen=True, eq=False)
class Postings:
    """rank-bm25's Okapi scores from postings: for term ``t`` (an id from ``vocab``), the chunks
    ``docs[start[t]:start[t + 1]]`` hold it, with weights ``weight[...]``
    = tf (k1 + 1) / (tf + k1 (1 - b + b |d| / avgdl)), and ``idf[t]`` is the library's IDF."""

    vocab: dict[str, int]
    idf: np.ndarray
    start: np.ndarray
    docs: np.ndarray
    weight: np.ndarray
    size: int

    @classmethod
    def build(cls, corpus: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75,
              epsilon: float = 0.25) -> Postings:
        if not any(corpus):  # no terms at all (rank-bm25 would divide by zero): nothing ever matches
            empty = np.zeros(0)
            return cls({}, empty, np.zeros(1, dtype=np.int64), empty.astype(np.int64), empty, len(corpus))
        okapi = BM25Okapi(corpus, k1=k1, b=b, epsilon=epsilon)  # the model: IDF with its floor, avgdl
        vocab: dict[str, int] = {}
        term_ids = np.fromiter((vocab.setdefault(t, len(vocab)) for doc in corpus for t in doc), dtype=np.int64)
        lengths = np.fromiter((len(doc) for doc in corpus), dtype=np.int64, count=len(corpus))
        doc_ids = np.repeat(np.arange(len(corpus), dtype=np.int64), lengths)
        keys, tf = np.unique(term_ids * len(corpus) + doc_ids, return_counts=True)  # sorted by term, then doc
        terms, docs = np.divmod(keys, len(corpus))
        start = np.searchsorted(terms, np.arange(len(vocab) + 1))
        doc_len = np.array(okapi.doc_len)
        # The same expression, in the same order, as BM25Okapi.get_scores, so the floats agree.
        weight = tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len[docs] / okapi.avgdl))
        idf = np.array([okapi.idf.get(t) or 0 for t in vocab], dtype=np.float64)
        return cls(vocab, idf, start, docs, weight, len(corpus))

    def scores(self, query: Sequence[str]) -> np.ndarray:
        """Equal to ``BM25Okapi.get_scores(query)`` (repeated query terms count again, as there)."""
        out = np.zeros(self.size)
        for q in query:
            t = self.vocab.get(q)
            if t is None:
                continue
            span = slice(self.start[t], self.start[t + 1])
            out[self.docs[span]] += self.idf[t] * self.weight[span]
        return out


def top_k(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the ``k`` highest scores, best first, equal scores in index order (a partial
    sort: linear in the number of chunks, then k log k)."""
    n = len(scores)
    if k <= 0 or n == 0:
        return []
    if k >= n:
        return sorted(range(n), key=lambda i: (-scores[i], i))
    kth = np.partition(scores, n - k)[n - k]  # the k-th largest value
    above = np.flatnonzero(scores > kth)
    ties = np.flatnonzero(scores == kth)[: k - len(above)]
    chosen = np.concatenate([above, ties])
    order = np.lexsort((chosen, -scores[chosen]))
    return chosen[order].tolist()


@dataclass(frozen=True)
class Index:
    chunks: tuple[Chunk, ...]
    snapshot: str
    postings: Postings | None  # None for an empty corpus

    def search(self, question: str, k: int = 5) -> list[Scored]:
        """The ``k`` best chunks for ``question``, best first (ties in corpus order)."""
        if self.postings is None or k <= 0:
            return []
        scores = self.postings.scores(tokenise(question))
        return [Scored(self.chunks[i]._replace(retrieval_score=round(float(scores[i]), 4)), float(scores[i]), rank)
                for rank, i in enumerate(top_k(scores, k), start=1)]

    def top_score(self, question: str) -> float:
        found = self.search(question, 1)
        return found[0].score if found else 0.0


def build_index(root: str | Path, params: ChunkingParams = ChunkingParams()) -> Index:
    """Chunk every document under ``root`` and index the chunks for BM25."""
    chunks = tuple(chunk_folder(root, params))
    corpus = [tokenise(f"{c.title or ''} {c.section or ''} {c.text}") for c in chunks]
    return Index(chunks, snapshot_id(root, params), Postings.build(corpus) if chunks else None)


def _stamp(root: Path) -> tuple:
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in documents(root))


@functools.lru_cache(maxsize=8)
def _cached(root: str, params: ChunkingParams, stamp: tuple) -> Index:
    return build_index(root, params)


def load_index(root: str | Path, params: ChunkingParams = ChunkingParams()) -> Index:
    """The index of ``root``, built once and reused until a document changes."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"corpus folder {root} does not exist; pass --corpus DIR")
    return _cached(str(root), params, _stamp(root))
