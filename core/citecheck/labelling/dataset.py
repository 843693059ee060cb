"""A set of answers held in memory for the app and the exports, checked on demand.

Loading parses every line (fast); an answer is checked the first time something asks for it,
and all of them the first time a view needs every result (a filter, progress, the figures).
So the review page opens on a large log without waiting for the whole log to be checked.
"""

from __future__ import annotations

import contextlib
import gc
import io
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Protocol, runtime_checkable

from citecheck.checking.checker import AnswerResult, CheckOptions, check_answer
from citecheck.contract.log import Answer, decode, log_problem, parse_answer, parse_lines, read_log
from citecheck.errors import FieldError, RecordError
from citecheck.labelling.items import Item, items_of
from citecheck.storage.lines import physical_lines


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


_MISSING = object()


@runtime_checkable
class AnswerSource(Protocol):
    """What the review flow asks of its answers, whether they are a log held in memory
    (:class:`Dataset`) or a checked store read one answer at a time
    (``storage.checked.answers.StoreAnswers``): the pages, the queue and the label buttons take
    either through this."""

    @property
    def errors(self) -> tuple[RecordError, ...]:
        """Lines (or answers) that could not be read."""
        ...

    @property
    def answer_ids(self) -> Sequence[str]:
        """Every answer id, in log order."""
        ...

    def __len__(self) -> int: ...

    def get(self, answer_id: str) -> AnswerResult | None:
        """The answer checked, None when there is no such answer."""
        ...

    def items(self, answer_id: str) -> list[Item]:
        """The answer's review items ([] when there is no such answer)."""
        ...


@dataclass(frozen=True)
class Dataset:
    answers: tuple[Answer, ...]
    errors: tuple[RecordError, ...] = ()
    index: dict[str, int] = field(default_factory=dict)
    options: CheckOptions = CheckOptions()
    origins: tuple[tuple[str, int], ...] = ()  # (file, line) of each answer, when read from files
    _checked: dict[int, AnswerResult] = field(default_factory=dict, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.answers)

    def result(self, i: int) -> AnswerResult:
        """The checked result of the ``i``-th answer (checked once, on first use)."""
        found = self._checked.get(i)
        if found is None:
            found = self._checked.setdefault(i, check_answer(self.answers[i], self.options))
        return found

    @cached_property
    def results(self) -> tuple[AnswerResult, ...]:
        """Every answer checked, in log order (checks those not checked yet)."""
        with self._lock, _long_lived():
            return tuple(self.result(i) for i in range(len(self.answers)))

    def get(self, answer_id: str) -> AnswerResult | None:
        i = self.index.get(answer_id)
        return None if i is None else self.result(i)

    def items(self, answer_id: str) -> list[Item]:
        i = self.index.get(answer_id)
        if i is None:
            return []
        if "items_by_answer" in self.__dict__:
            return self.items_by_answer[i]
        return self.memo(f"items:{i}", lambda: items_of(self.result(i)))  # once per answer, not per rerun

    @property
    def answer_ids(self) -> list[str]:
        return [a.answer_id for a in self.answers]

    @cached_property
    def items_by_answer(self) -> tuple[list[Item], ...]:
        """The review items of every answer, computed once per dataset."""
        return tuple(items_of(r) for r in self.results)

    def memo(self, key: str, compute):
        """A value derived from this dataset, computed once by ``compute()`` and kept with it.

        Lets higher layers (the figures table, for one) cache what they derive from a dataset
        without this module knowing about them."""
        found = self._memo.get(key, _MISSING)
        if found is _MISSING:
            found = self._memo.setdefault(key, compute())
        return found

    @cached_property
    def all_items(self) -> list[Item]:
        return [item for items in self.items_by_answer for item in items]


def build(answers: Iterable[Answer | AnswerResult], errors: Iterable[RecordError] = (),
          options: CheckOptions = CheckOptions(), origins: Iterable[tuple[str, int]] = ()) -> Dataset:
    """A dataset of answers (or of results already checked, which are kept as they are), with the
    (file, line) each was read from when known."""
    items = tuple(answers)
    plain = tuple(a.answer if isinstance(a, AnswerResult) else a for a in items)
    index: dict[str, int] = {}
    for i, answer in enumerate(plain):
        index.setdefault(answer.answer_id, i)
    data = Dataset(plain, tuple(errors), index, options, tuple(origins))
    for i, a in enumerate(items):
        if isinstance(a, AnswerResult):
            data._checked[i] = a
    return data


def of_answers(source: AnswerSource, answer_ids: Iterable[str]) -> Dataset:
    """The answers ``answer_ids`` of ``source`` (a log in memory or a checked store) as a small
    dataset, in the order given, skipping ids the source does not hold: what the Calibration and
    Disagreements pages need of a store (the labelled answers), without the million others."""
    results = [r for a in dict.fromkeys(answer_ids) if (r := source.get(a)) is not None]
    return build(results, source.errors)


def load(paths: Iterable[Path], options: CheckOptions = CheckOptions()) -> Dataset:
    """Read every answer of the logs (checked on demand with ``options``, built by
    :func:`citecheck.checking.files.check_options`); unreadable lines are kept as errors."""
    answers: list[Answer] = []
    errors: list[RecordError] = []
    origins: list[tuple[str, int]] = []
    with _long_lived():
        for path in paths:
            problem = log_problem(path)
            if problem is not None:  # (line 0, field "(file)": the whole file, not one of its lines)
                errors.append(RecordError(str(path), 0, "(file)", problem))
                continue
            name = str(path)
            for line, item in read_log(path):
                if isinstance(item, RecordError):
                    errors.append(item)
                else:
                    answers.append(item)
                    origins.append((name, line))
        return build(answers, errors, options, origins)


def load_bytes(name: str, data: bytes, options: CheckOptions = CheckOptions()) -> Dataset:
    """An uploaded log held in memory (never written to disk).  Lines are decoded one by one, so
    a line that is not UTF-8 is one error and the other lines are still read."""
    answers: list[Answer] = []
    errors: list[RecordError] = []
    whole = _whole_document(name, data)
    if whole is not None:
        for item in whole:
            if isinstance(item, RecordError):
                errors.append(item)
            else:
                answers.append(item)
        return build(answers, errors, options)
    origins: list[tuple[str, int]] = []
    for line, item in parse_lines(name, physical_lines(io.BytesIO(data))):  # (the one line source's rules)
        if isinstance(item, RecordError):
            errors.append(item)
        else:
            answers.append(item)
            origins.append((name, line))
    return build(answers, errors, options, origins)


def _whole_document(name: str, data: bytes) -> list[Answer | RecordError] | None:
    """An upload that is one JSON document rather than JSON Lines: a JSON array of answers, or one
    answer pretty-printed over several lines.  Each answer is read as a log line would be (an
    error names the array item); None when ``data`` is not such a document (read it as lines)."""
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if head not in (b"[", b"{") or (head == b"{" and len(data.strip().splitlines()) < 2):
        return None
    try:
        value = decode(data)
    except FieldError:
        return None  # not one document: the lines are read (and each bad one named) as usual
    hint = "the upload is a JSON array, read item by item; a log is JSON Lines (one answer per line)"
    if type(value) is dict:
        items, hint = [value], "the upload is one JSON object over several lines; a log is JSON Lines"
    elif type(value) is list:
        items = value
    else:
        return None
    out: list[Answer | RecordError] = []
    for i, obj in enumerate(items):
        try:
            out.append(parse_answer(obj))
        except FieldError as exc:
            where = f"[{i}]" if type(value) is list else ""
            out.append(RecordError(name, i + 1, f"{where}.{exc.field}" if where else exc.field,
                                   f"{exc.message} ({hint})"))
    return out
