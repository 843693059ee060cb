"""A file's identity for a cache key: what tells a changed file from the one read before without
reading it (its path, modification time and size).  Kept light: every page imports it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def stamp(path: str | Path) -> tuple[str, int, int]:
    """``(path, mtime_ns, size)``; zeros when the file cannot be read (so it differs from the stamp
    it has once it can)."""
    try:
        s = os.stat(path)
    except OSError:
        return str(path), 0, 0
    return str(path), s.st_mtime_ns, s.st_size


def stamps(paths: Iterable[str | Path]) -> tuple[tuple[str, int, int], ...]:
    return tuple(stamp(p) for p in paths)
