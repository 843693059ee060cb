"""Logs to checked answers: the check options every entry point builds from the settings
(:func:`check_options`), and :func:`check_files`, the stream that reads logs and hands each parsed
answer to the checker.

``citecheck check``, ``citecheck report``, ``labels export``, ``judge`` and the app all build
their :class:`CheckOptions` here from the same three settings (corpus folder, case folding,
refusal sentences), so one log gives the same figures everywhere.  The checker itself
(:mod:`.checker`) never opens a file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from citecheck.checking.checker import DEFAULT_REFUSAL, AnswerResult, CheckOptions, check_answer
from citecheck.contract.corpus import Corpus
from citecheck.contract.log import read_log
from citecheck.errors import CitecheckError, RecordError


def check_options(corpus: str | Path | None = None, casefold: bool = False,
                  refusals: Sequence[str] = ()) -> CheckOptions:
    """Options from the user's settings; an empty ``refusals`` means the default refusal sentence.

    Raises :class:`CitecheckError` when a corpus folder is named but does not exist: checking
    without it would silently skip every ``source_changed`` check.
    """
    folder = None
    if corpus is not None and str(corpus) != "":
        if Path(corpus).is_file():
            raise CitecheckError(f"--corpus {corpus} is a file, not a folder: give the folder of the current source "
                                 "documents (for example sample_data/corpus)")
        if not Path(corpus).is_dir():
            raise CitecheckError(f"corpus folder {corpus} does not exist; pass --corpus (or CITECHECK_CORPUS) "
                                 "with the folder of the current source documents")
        folder = Corpus(corpus)
    sentences = tuple(s for s in refusals if s.strip()) or (DEFAULT_REFUSAL,)
    return CheckOptions(casefold=bool(casefold), refusals=sentences, corpus=folder)


def check_files(paths: Iterable[str | Path], options: CheckOptions = CheckOptions()
                ) -> Iterator[tuple[str, int, AnswerResult | RecordError]]:
    """Stream ``(file, line, AnswerResult | RecordError)`` over log files, one line at a time."""
    for path in paths:
        name = str(path)
        for line_no, item in read_log(path):
            yield name, line_no, item if isinstance(item, RecordError) else check_answer(item, options)
