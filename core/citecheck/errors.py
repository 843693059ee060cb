"""The root of every error citecheck raises on purpose (:class:`CitecheckError`), the errors of bad input
(:class:`FieldError`, :class:`RecordError`) and the storage family (:class:`StoreError`).

Each names where the bad input is and what to do.  Errors of one domain live beside its code
(``labelling.labels.LabelError``, ``judging.estimate.EstimateError``...) and derive from
:class:`CitecheckError`, so ``citecheck``'s ``main`` handles them all in one place."""

from __future__ import annotations

from dataclasses import dataclass


class CitecheckError(Exception):
    """Base class for every error citecheck raises on purpose."""


class FieldError(CitecheckError):
    """One field of one record is missing or has the wrong type.

    ``field`` is a dotted path such as ``chunks[2].checksum``.
    """

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True, slots=True)
class RecordError:
    """A record that could not be read, with its position, so the rest can still be processed."""

    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "field": self.field, "message": self.message}


class StoreError(CitecheckError):
    """A store cannot be read or written: the family of every storage failure that is not a bad record."""


class DatabaseError(StoreError):
    """A PostgreSQL event store cannot be reached or used; the message names it without its password."""


class CheckedStoreError(StoreError):
    """A folder is not a checked store this citecheck can read or write, or a line changed under it."""


class DamagedStoreError(CheckedStoreError):
    """A checked store's part is missing or unreadable; the message names it and the command that
    repairs it (``citecheck`` exits with its own code, 6)."""
