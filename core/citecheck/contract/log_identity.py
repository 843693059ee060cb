"""Which file a log path names: two paths that name the same log are read once.

A log named twice on a command line (``check logs/*.jsonl logs/a.jsonl``) was read twice by
``check`` and ``report``, each answer counted twice, and once by the store, which keys a log by
this identity (``storage.checked.folder.source_id``): the same command gave two sets of counts.
Every reader now keeps a log's first mention only (:func:`once_each`), by the store's identity.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TypeVar

P = TypeVar("P", bound="str | os.PathLike[str]")


def log_identity(path: str | os.PathLike) -> str:
    """A log's identity: its URL as given, or its absolute path (not resolving links: the store's rule)."""
    name = os.fspath(path)
    return name if "://" in name else os.path.abspath(name)


def once_each(paths: Iterable[P]) -> tuple[list[P], list[P]]:
    """(the paths in order with each log's first mention only, the later mentions left out)."""
    seen: set[str] = set()
    kept: list[P] = []
    repeated: list[P] = []
    for path in paths:
        identity = log_identity(path)
        (repeated if identity in seen else kept).append(path)
        seen.add(identity)
    return kept, repeated
