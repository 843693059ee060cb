"""The ``citecheck`` command line: assembles one parser from the command groups and dispatches.

Each command group (``check``, ``imports``, ``pipeline``, ``judging``, ``estimate``, ``labels``) is a module of this
package with a ``register(subparsers)`` that adds its parsers, each with ``set_defaults(func=...)``.
Exit codes are in :mod:`.common`.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO, cast

from citecheck import __version__
from citecheck.cli import (
    app_commands,
    calibration_commands,
    check_commands,
    collect_commands,
    comparison_commands,
    estimate_commands,
    import_commands,
    judge_commands,
    label_commands,
    pipeline_commands,
    store_commands,
)
from citecheck.cli.common import EXIT_DAMAGED, EXIT_FAILED, EXIT_GATE, EXIT_UNREADABLE, EXIT_USAGE
from citecheck.config import fill_from_environment
from citecheck.contract.log_identity import once_each
from citecheck.errors import CitecheckError, DamagedStoreError
from citecheck.storage.durable import WriteFailed
from citecheck.text.terminal import VisibleWriter

__all__ = ["EXIT_GATE", "EXIT_UNREADABLE", "EXIT_USAGE", "build_parser", "main"]

# The order of the groups is the order of the commands in ``citecheck --help``.
GROUPS = (app_commands, check_commands, pipeline_commands, judge_commands, calibration_commands, comparison_commands,
          estimate_commands, import_commands, collect_commands, label_commands, store_commands)


def version_text() -> str:
    """``citecheck 0.2.0 (compiled)``: the version, and whether the checker runs compiled (mypyc) or as Python."""
    from citecheck.text.compiled import build_kind

    return f"citecheck {__version__} ({build_kind()})"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citecheck", description="Check RAG answers against their sources.")
    parser.add_argument("--version", action="version", version=version_text())
    sub = parser.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.register(sub)
    return parser


def _subparser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the command given (so a usage error shows that command's usage)."""
    for dest in ("command", "labels_command", "verdicts_command", "store_command", "format"):
        name = getattr(args, dest, None)
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if name is None or not subs or name not in subs[0].choices:
            continue
        parser = subs[0].choices[name]
    return parser


def _command_name(args: argparse.Namespace) -> str:
    """``labels export``, ``store verify``, ``check``: the command as typed, for its messages."""
    sub = next((getattr(args, d) for d in ("labels_command", "verdicts_command", "store_command")
                if getattr(args, d, None)), None)
    return f"{args.command} {sub}" if sub else str(args.command)


# The exit status of a process ended by SIGPIPE, as ``head`` leaves other Unix tools.
EXIT_CLOSED_PIPE = 128 + 13


def _closed_pipe(out: TextIO) -> int:
    """The reader of our output went away (``citecheck check LOG | head``): stop quietly, as other
    Unix tools do.  Standard output is pointed at /dev/null so that Python's final flush of what
    is still buffered does not fail again with a message at exit."""
    if out is sys.stdout:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
    return EXIT_CLOSED_PIPE


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    # everything printed goes through VisibleWriter: a log's text cannot drive the terminal
    stdout = out or sys.stdout
    out = cast(TextIO, VisibleWriter(stdout))
    err = cast(TextIO, VisibleWriter(err or sys.stderr))
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and getattr(args, "accepts_streamlit", False):  # citecheck app --server.baseUrlPath x: Streamlit's
        from citecheck.web.serve import split_streamlit

        args.streamlit, extra = split_streamlit(extra)
    if extra:  # a mistyped option: the usage of the command it was given to, not the top level's
        _subparser(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    missing = fill_from_environment(args, os.environ)  # a setting not given: its CITECHECK_* variable
    if missing is not None:
        _subparser(parser, args).error(missing)
    if getattr(args, "logs", None):  # a log named twice is read once (by the store's identity of a log)
        args.logs, repeated = once_each(args.logs)
        for path in dict.fromkeys(map(str, repeated)):
            err.write(f"citecheck {_command_name(args)}: {path} names a log given already: it is read once\n")
    try:
        code = args.func(args, out, err)
        out.flush()  # (here, so that a reader gone away is met below, not in Python's flush at exit)
        return code
    except BrokenPipeError:
        return _closed_pipe(stdout)
    except WriteFailed as exc:  # the disk filled...: what was not saved is said, nothing half-written
        err.write(f"citecheck {_command_name(args)}: {exc}\n")
        return EXIT_FAILED
    except DamagedStoreError as exc:  # its own code: the store needs repairing, not the command line
        err.write(f"citecheck {_command_name(args)}: {exc}\n")
        return EXIT_DAMAGED
    except (CitecheckError, OSError) as exc:
        err.write(f"citecheck {_command_name(args)}: {exc}\n")
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
