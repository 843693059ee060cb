"""The current source documents, for the ``source_changed`` check.

A chunk's ``source`` is a path relative to the corpus folder.  Paths that resolve outside the
folder are never read.  Documents are read as UTF-8 with newlines kept as they are (``\\r\\n``
stays two code points), so chunk offsets mean the same thing here as when the chunk was cut.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from citecheck.contract.log import Chunk, checksum


def safe_path(root: Path, relative: str) -> Path | None:
    """``root / relative`` if it stays inside ``root`` (after resolving links), else None."""
    if not relative or "\x00" in relative:
        return None
    try:
        candidate = (root / relative).resolve()
    except (OSError, RuntimeError):
        return None
    if candidate == root or root not in candidate.parents:
        return None
    return candidate


def read_text(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


class Corpus:
    """A folder of source documents, read lazily and kept in a small LRU cache."""

    def __init__(self, root: str | Path, cache_size: int = 128):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise FileNotFoundError(f"corpus folder {root} does not exist; pass --corpus with a folder")
        self._cache: OrderedDict[str, str | None] = OrderedDict()
        self._cache_size = cache_size

    def document(self, source: str) -> str | None:
        """The current text of ``source``, or None when it is missing, unreadable or outside the folder."""
        if source in self._cache:
            self._cache.move_to_end(source)
            return self._cache[source]
        path = safe_path(self.root, source)
        text: str | None = None
        if path is not None and path.is_file():
            try:
                text = read_text(path)
            except (OSError, UnicodeDecodeError):
                text = None
        self._cache[source] = text
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return text

    def changed(self, chunk: Chunk) -> bool | None:
        """True when the source at the chunk's offsets no longer hashes to its checksum.

        None when the chunk cannot be compared (no source, offsets or checksum).
        """
        if not chunk.source or chunk.start is None or chunk.end is None or not chunk.checksum:
            return None
        text = self.document(chunk.source)
        if text is None or chunk.end > len(text):
            return True
        return checksum(text[chunk.start : chunk.end]) != chunk.checksum
