"""Append-only JSON-lines files that survive crashes: the labels file and the verdicts file."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path


def append_records(path: str | Path, records: list[dict]) -> None:
    """Append records durably: lock, one write (starting on a fresh line), flush, fsync, unlock.

    A crash mid-write can leave at most a torn last line, which readers skip with a warning;
    every earlier record is untouched, and the next append starts a new line after it.
    """
    if not records:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        os.write(fd, data)
        os.fsync(fd)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def read_records(path: str | Path) -> tuple[list[tuple[int, dict]], list[tuple[int, str]]]:
    """``(line, object)`` for every readable line, and ``(line, warning)`` for each skipped one."""
    path = Path(path)
    if not path.exists():
        return [], []
    out: list[tuple[int, dict]] = []
    warnings: list[tuple[int, str]] = []
    with open(path, "rb") as handle:
        raw_lines = handle.read().split(b"\n")
    last = len(raw_lines)
    for n, raw in enumerate(raw_lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
            if not isinstance(obj, dict):
                raise ValueError("expected a JSON object")
            out.append((n, obj))
        except (ValueError, UnicodeDecodeError) as exc:
            torn = " (torn last line, probably a crash while writing)" if n == last else ""
            warnings.append((n, f"{path}:{n}: skipped{torn}: {exc}"))
    return out, warnings


def read_parsed(path: str | Path, parse) -> tuple[list, list[str]]:
    """``parse(obj)`` of every readable record in file order, and one warning per skipped line
    (not JSON, torn, or refused by ``parse`` with a ValueError), in line order."""
    records, warnings = read_records(path)
    out = []
    for n, obj in records:
        try:
            out.append(parse(obj))
        except ValueError as exc:
            warnings.append((n, f"{path}:{n}: skipped: {exc}"))
    return out, [message for _, message in sorted(warnings)]
