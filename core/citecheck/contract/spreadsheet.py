"""Text written into a CSV that people open in a spreadsheet.

A cell whose text begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by a
spreadsheet as a formula (OWASP's "CSV injection"): a question from a log, a reviewer's note or
name, a model's name could run one on the reader's machine.  Every CSV citecheck writes (the
failing answers, the report, the labels export, the Team figures) passes its text cells through
:func:`cell`, which puts a ``'`` before such a text; numbers are written as they are.  The JSON
formats carry every text unchanged.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import TextIO

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: object) -> object:
    """``value`` as a CSV cell: None as empty, a text that a spreadsheet would read as a formula
    after a ``'``, anything else as it is."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class Writer:
    """A ``csv.writer`` with ``\\n`` line ends whose every cell goes through :func:`cell`.  A cell
    holding a carriage return is quoted too: ``csv.writer`` quotes only the characters of its line
    end, so with ``\\n`` a lone ``\\r`` in a note was written bare and the file no longer read back."""

    def __init__(self, out: TextIO):
        self._out = out
        self._row = io.StringIO()
        self._writer = csv.writer(self._row, lineterminator="\r\n")  # (quotes \r and \n alike)

    def writerow(self, row: Iterable[object]) -> None:
        self._row.seek(0)
        self._row.truncate()
        self._writer.writerow([cell(c) for c in row])
        self._out.write(self._row.getvalue()[:-2] + "\n")
