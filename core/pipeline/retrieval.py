"""BM25 retrieval over a corpus's chunks (``rank-bm25``), and the index snapshot id.

The snapshot id names exactly what answers were retrieved from: a hash of every document's
path and bytes, the chunking parameters and the tokeniser version.  It goes into every log
line the pipeline writes, so two logs can be compared only when they searched the same index.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from rank_bm25 import BM25Okapi

from ..contract.log import Chunk
from .chunking import ChunkingParams, chunk_folder, documents

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


@dataclass(frozen=True)
class Index:
    chunks: tuple[Chunk, ...]
    snapshot: str
    bm25: BM25Okapi | None  # None for an empty corpus

    def search(self, question: str, k: int = 5) -> list[Scored]:
        """The ``k`` best chunks for ``question``, best first (ties in corpus order)."""
        if self.bm25 is None or k <= 0:
            return []
        scores = self.bm25.get_scores(tokenise(question))
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
        return [Scored(self.chunks[i]._replace(retrieval_score=round(float(scores[i]), 4)), float(scores[i]), rank)
                for rank, i in enumerate(order, start=1)]

    def top_score(self, question: str) -> float:
        found = self.search(question, 1)
        return found[0].score if found else 0.0


def build_index(root: str | Path, params: ChunkingParams = ChunkingParams()) -> Index:
    """Chunk every document under ``root`` and index the chunks for BM25."""
    chunks = tuple(chunk_folder(root, params))
    corpus = [tokenise(f"{c.title or ''} {c.section or ''} {c.text}") for c in chunks]
    bm25 = BM25Okapi(corpus) if chunks else None
    return Index(chunks, snapshot_id(root, params), bm25)


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
