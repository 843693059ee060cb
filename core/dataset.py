"""A checked set of answers held in memory for the app and the exports."""

from __future__ import annotations

import contextlib
import gc
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from .checker import AnswerResult, CheckOptions, check_answer
from .corpus import Corpus
from .errors import RecordError
from .items import Item, items_of
from .log import parse_lines, read_log


@dataclass(frozen=True)
class Dataset:
    results: tuple[AnswerResult, ...]
    errors: tuple[RecordError, ...] = ()
    index: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.results)

    def get(self, answer_id: str) -> AnswerResult | None:
        i = self.index.get(answer_id)
        return None if i is None else self.results[i]

    def items(self, answer_id: str) -> list[Item]:
        i = self.index.get(answer_id)
        return self.items_by_answer[i] if i is not None else []

    @cached_property
    def items_by_answer(self) -> tuple[list[Item], ...]:
        """The review items of every answer, computed once per dataset."""
        return tuple(items_of(r) for r in self.results)

    @cached_property
    def table(self):
        """One row per answer for the figures (``figures.answer_table``), computed once, without labels."""
        from .figures import answer_table

        return answer_table(self.results)

    @cached_property
    def all_items(self) -> list[Item]:
        return [item for items in self.items_by_answer for item in items]


def build(results: Iterable[AnswerResult], errors: Iterable[RecordError] = ()) -> Dataset:
    results = tuple(results)
    index: dict[str, int] = {}
    for i, r in enumerate(results):
        index.setdefault(r.answer.answer_id, i)
    return Dataset(results, tuple(errors), index)


@contextlib.contextmanager
def _long_lived():
    """Build a large set of objects that will live as long as the app: with the cyclic garbage
    collector paused (each collection would walk every answer loaded so far, which took a third
    of the load time of a 20,000-answer log), then frozen out of later collections."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def load(paths: Iterable[Path], corpus: Path | None = None) -> Dataset:
    """Read and check every answer of the logs; unreadable lines are kept as errors."""
    with _long_lived():
        return _load(paths, corpus)


def _load(paths: Iterable[Path], corpus: Path | None) -> Dataset:
    options = CheckOptions(corpus=Corpus(corpus) if corpus and corpus.is_dir() else None)
    results: list[AnswerResult] = []
    errors: list[RecordError] = []
    for path in paths:
        if not path.is_file():
            errors.append(RecordError(str(path), 0, "(file)", "no such log file; check --log or CITECHECK_LOGS"))
            continue
        for _, item in read_log(path):
            if isinstance(item, RecordError):
                errors.append(item)
            else:
                results.append(check_answer(item, options))
    return build(results, errors)


def load_bytes(name: str, data: bytes) -> Dataset:
    """Check an uploaded log held in memory (never written to disk, no corpus)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return build([], [RecordError(name, 0, "(encoding)", f"not UTF-8 text ({exc.reason})")])
    results: list[AnswerResult] = []
    errors: list[RecordError] = []
    for _, item in parse_lines(name, io.StringIO(text, newline="")):
        if isinstance(item, RecordError):
            errors.append(item)
        else:
            results.append(check_answer(item))
    return build(results, errors)
