"""``citecheck import FORMAT``: turn other tools' formats into citecheck log lines."""

from __future__ import annotations

import argparse
from typing import TextIO

import orjson

from citecheck.cli.common import EXIT_UNREADABLE
from citecheck.contract.log import answer_to_dict, dumps
from citecheck.errors import RecordError
from citecheck.storage.durable import ReplacedText


def _line(answer) -> bytes:
    """The log line of an imported answer, as UTF-8 with its newline: orjson's encoding (a fifth of
    the time of the standard library's, the same JSON), the standard library's for what orjson
    refuses (integers past 64 bits)."""
    try:
        return orjson.dumps(answer_to_dict(answer), option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return (dumps(answer) + "\n").encode("utf-8")


def cmd_import(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from citecheck.importers import run_importer

    args.err = err
    # --out appears whole or not at all: written beside it and renamed into place when complete,
    # so a kill or a full disk leaves the previous file as it was
    replaced = ReplacedText(args.out, what=f"the imported log {args.out}") if args.out else None
    write = replaced.write_bytes if replaced is not None else (lambda line: out.write(line.decode("utf-8")))
    written = errors = 0
    try:
        for item in run_importer(args):
            if isinstance(item, RecordError):
                errors += 1
                err.write(f"skipped: {item}\n")
            else:
                write(_line(item))
                written += 1
    except BaseException:
        if replaced is not None:
            replaced.abort()
        raise
    if replaced is not None and written:
        replaced.commit()
    elif replaced is not None:  # nothing to write: an existing --out stays exactly as it was
        replaced.abort()
        err.write(f"nothing imported: {args.out} left as it was\n")
    err.write(f"imported {written} answer(s)" + (f"; {errors} unreadable record(s) left out, each said above"
                                                  if errors else "") + "\n")
    for line in getattr(args, "summary", list)():  # (trace importers: what they found and did)
        err.write(f"  {line}\n")
    return EXIT_UNREADABLE if errors else 0


def register(sub: argparse._SubParsersAction) -> None:
    from citecheck.importers import add_import_parsers

    imp = sub.add_parser("import", help="turn other formats into citecheck log lines")
    add_import_parsers(imp.add_subparsers(dest="format", required=True))
    imp.set_defaults(func=cmd_import)
