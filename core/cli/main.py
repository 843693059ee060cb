"""The ``citecheck`` command line: assembles one parser from the command groups and dispatches.

Each command group (``check``, ``imports``, ``pipeline``, ``judging``, ``labels``) is a module of this
package with a ``register(subparsers)`` that adds its parsers, each with ``set_defaults(func=...)``.
Exit codes are in :mod:`.common`.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from .. import __version__
from ..contract.durable import WriteFailed
from ..contract.errors import CitecheckError
from . import check, imports, judging, labels, pipeline
from .common import EXIT_FAILED, EXIT_GATE, EXIT_UNREADABLE, EXIT_USAGE

__all__ = ["EXIT_GATE", "EXIT_UNREADABLE", "EXIT_USAGE", "build_parser", "main"]

# The order of the groups is the order of the commands in ``citecheck --help``.
GROUPS = (check, pipeline, judging, imports, labels)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citecheck", description="Check RAG answers against their sources.")
    parser.add_argument("--version", action="version", version=f"citecheck {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.register(sub)
    return parser


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        return args.func(args, out, err)
    except WriteFailed as exc:  # the disk filled...: what was not saved is said, nothing half-written
        err.write(f"citecheck {args.command}: {exc}\n")
        return EXIT_FAILED
    except (CitecheckError, OSError) as exc:
        err.write(f"citecheck {args.command}: {exc}\n")
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
