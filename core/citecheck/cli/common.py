"""What every command group shares: exit codes, option types, output and log helpers.

Exit codes: 0 all good; 1 the ``--max-failure-rate`` gate failed; 2 bad usage or a file that
cannot be opened; 3 the work could not all be done (the disk filled, API calls failed): what
was done is saved and the same command resumes; 4 some records were unreadable (added to 1 when
both happen, giving 5); 6 a checked store is damaged (a part missing or unreadable): the message
names it and the ``check --store`` that repairs it; 8 a ``--max-failure-rate`` gate had no answer to
measure (an empty log; 12 when every line was unreadable).
"""

from __future__ import annotations

import argparse
import json
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from citecheck.contract.log import dumps
from citecheck.errors import CitecheckError
from citecheck.reports.check_report import report_bytes, report_line
from citecheck.storage.lines import append_lines

EXIT_GATE = 1
EXIT_USAGE = 2
EXIT_FAILED = 3
EXIT_UNREADABLE = 4
EXIT_DAMAGED = 6  # a checked store's part is missing or unreadable: check its logs into it again
EXIT_NO_ANSWERS = 8  # a --max-failure-rate gate with no answer to measure (12 with unreadable lines)


def json_line(obj: dict, out: TextIO) -> None:
    """One record of ``check --format json`` (docs/check-report.md: compact, UTF-8)."""
    out.write(report_line(obj))


REPORT_BLOCK = 1 << 16  # bytes of report records gathered before one write (see json_lines)
PIPE_SIZE = 1 << 20  # what a pipe the report goes to is grown to, where the system lets it (see report_block)


def report_block(raw: object) -> int:
    """How many bytes of report records to gather before each write to ``raw``.

    :data:`REPORT_BLOCK`, but a quarter of the pipe when ``raw`` is a pipe (``citecheck check
    --format json | consumer``) that could be grown to :data:`PIPE_SIZE` (Linux lets a process grow
    a pipe to 1 MiB, ``/proc/sys/fs/pipe-max-size``): the writer then never waits for the reader,
    where a pipe of 64 KiB stopped it at every block.  A pipe already larger is left as it is."""
    try:
        import fcntl

        fd = raw.fileno()  # type: ignore[attr-defined]
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return REPORT_BLOCK
        size = fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
        if size < PIPE_SIZE:
            size = fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    except (ImportError, AttributeError, OSError, ValueError):  # (not a file, not Linux, over the user's share)
        return REPORT_BLOCK
    return max(REPORT_BLOCK, min(size, PIPE_SIZE) // 4)


@contextmanager
def json_lines(out: TextIO) -> Iterator[Callable[[dict], object]]:
    """A writer of report records to ``out``, as :func:`json_line` writes them, for the ``with``
    block; whatever it holds is written when the block ends, an error included.

    When ``out`` is UTF-8 text over a byte stream (stdout, a file), the records' bytes go straight
    to that stream, without being decoded to text and encoded back (a few per cent of ``check
    --format json``), in blocks (:func:`report_block`): stdout's buffer on a pipe holds 8 KiB, about
    two records, and a write per record woke the reader so often that a report piped to another
    program cost about half as much again as one sent to /dev/null (docs/scale.md).  Text
    written to ``out`` before and after stays in order: ``out`` is flushed first.  (A terminal's
    line-buffered stdout is written as text, each record at once, so that each line still shows
    when it is done.)"""
    raw = getattr(out, "buffer", None)
    encoding = (getattr(out, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    if raw is None or encoding != "utf8" or os.linesep != "\n" or getattr(out, "line_buffering", False):
        yield lambda obj: out.write(report_line(obj))
        return
    out.flush()
    block = report_block(raw)
    pending: list[bytes] = []
    held = 0

    def write(obj: dict) -> None:
        nonlocal held
        data = report_bytes(obj)
        pending.append(data)
        held += len(data)
        if held >= block:
            data = b"".join(pending)
            pending.clear()
            held = 0
            raw.write(data)

    try:
        yield write
    finally:
        if pending:
            raw.write(b"".join(pending))


def append_answer(path: str, answer) -> None:
    """One answer-log line, appended durably on a fresh line (after a torn one, too)."""
    append_lines(path, [dumps(answer)], what=f"the answer {answer.answer_id!r}")


def anthropic_errors() -> tuple[type[BaseException], ...]:
    """The SDK's errors (connection, status, timeout), for an ``except`` that keeps what was done."""
    import anthropic

    return (anthropic.APIError,)


def api_error_text(exc: BaseException) -> str:
    """One of :func:`anthropic_errors` in our words, with the SDK's own text (whose wording changes
    between SDK releases) in brackets; it says what to check.  No key is in either."""
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):  # (a connection error too: tested first)
        return f"the Anthropic API did not answer in time ({exc}); run the same command again later"
    if isinstance(exc, anthropic.APIConnectionError):
        return (f"could not reach the Anthropic API ({exc}); check the network, a proxy or "
                "ANTHROPIC_BASE_URL")
    if isinstance(exc, anthropic.APIStatusError):
        return f"the Anthropic API answered HTTP {exc.status_code} ({exc})"
    return str(exc)


def price(value: str) -> tuple[float, float]:
    """``--price IN,OUT``: USD per million input and output tokens."""
    try:
        a, b = (float(x) for x in value.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError("give IN,OUT in USD per million tokens, for example 3,15") from None
    return a, b


def rate(value: str) -> float:
    """``--max-failure-rate R``: a share between 0 and 1."""
    share = float(value)
    if not 0 <= share <= 1:
        raise argparse.ArgumentTypeError("give a share between 0 and 1, for example 0.05")
    return share


def positive(raw: str) -> int:
    """An argparse type: a whole number of at least 1 (``--k 0`` was a traceback and exit 1)."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {raw!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, not {value}")
    return value


def overlap(value: str) -> int:
    """``--overlap K``: how many reviewers label each item (at least 1)."""
    try:
        k = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"give a whole number of reviewers, not {value!r}") from None
    if k < 1:
        raise argparse.ArgumentTypeError(f"give at least 1 reviewer, not {k}")
    return k


def load_checked(paths: list[str], corpus: str | None, err: TextIO):
    """The checked dataset of ``paths``; each unreadable record is said on ``err``."""
    from citecheck.checking.files import check_options
    from citecheck.labelling import dataset

    data = dataset.load([Path(p) for p in paths], check_options(corpus))
    for e in data.errors:
        err.write(f"unreadable: {e}\n")
    return data


def read_golden_set(path: str | None, err: TextIO):
    """The golden set of ``report --golden`` (None without one); each skipped record said on ``err``."""
    from citecheck.reports.golden import read_golden

    if not path:
        return None
    if Path(path).is_dir() or not Path(path).exists():
        what = "is a folder" if Path(path).is_dir() else "does not exist"
        raise CitecheckError(f"the golden set {path} {what}: give the golden set file (JSON lines, "
                             "docs/golden-format.md), for example sample_data/golden.jsonl")
    golden, errors = read_golden(path)
    for e in errors:
        err.write(f"golden set: skipped {e}\n")
    return golden


def read_current_labels(target: str | None, err: TextIO, typed: bool = True):
    """The labels that count (latest per reviewer and item) of ``--labels``, None without it; each
    skipped record said on ``err`` as a warning.  A labels file typed on the command line
    (``typed``) must exist; one from ``CITECHECK_LABELS`` (set for the app, which writes it on the
    first label) may not exist yet and then means no labels."""
    from citecheck.labelling import labels
    from citecheck.storage.streams import require

    if not target:
        return None
    if typed:
        require(target, labels.STREAM)  # a mistyped path must not read as "no labels yet"
    records, warnings = labels.read(target)
    for w in warnings:
        err.write(f"warning: {w}\n")
    return labels.latest(records)


def write_overview(report, output_format: str, out: TextIO, failing=None) -> None:
    """The failure report (``reports.failures.Overview``) as ``report --format`` asks: the same
    from a log in memory and from a checked store.  ``failing``: the failing answers, worst first
    (``--format failing-csv``, the table the Failures page downloads)."""
    if output_format == "failing-csv":
        from citecheck.reports.figures import to_csv

        out.write(to_csv(failing()))
    elif output_format == "json":
        out.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
    elif output_format == "csv":
        out.write(report.to_csv())
    else:
        out.write(report.to_text())


def check_inputs(summary, args: argparse.Namespace):
    """What ``check`` read: the logs (or, with --store, the store too) and the corpus."""
    from citecheck.reports.inputs import Inputs

    given = {"logs": list(args.logs)}
    if getattr(args, "store", None):
        given["store"] = args.store
    return Inputs.of(summary.answers, summary.unreadable_lines, **given, corpus=args.corpus or None)


def finish_check(summary, args: argparse.Namespace, as_json: bool, out: TextIO, err: TextIO) -> int:
    """The summary, the ``--max-failure-rate`` gate and the exit code: the same with or without a store."""
    from citecheck.reports.check_report import summary_record, summary_text

    inputs = check_inputs(summary, args)
    if as_json:
        json_line(summary_record(summary, inputs), out)
    else:
        out.write("\n".join(summary_text(summary, inputs)) + "\n")
    code = 0
    failure_rate = summary.failure_rate
    if args.max_failure_rate is not None and not summary.answers:  # a gate must not pass when logging broke
        err.write(f"--max-failure-rate {args.max_failure_rate}: no answers to measure (the log is empty or every "
                  "line was unreadable), so the gate fails\n")
        code |= EXIT_NO_ANSWERS
    if args.max_failure_rate is not None and failure_rate is not None and failure_rate > args.max_failure_rate:
        err.write(f"citation failure rate {failure_rate:.4f} is above --max-failure-rate {args.max_failure_rate}\n")
        code |= EXIT_GATE
    if summary.unreadable_lines:
        err.write(f"{summary.unreadable_lines} unreadable line(s); see above\n")
        code |= EXIT_UNREADABLE
    return code

