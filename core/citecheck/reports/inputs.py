"""The inputs a figure comes from, said the same way by every surface.

The same log gives different figures with and without the corpus folder (a changed source is a
failure only when the corpus is there to compare with), and with or without a golden set or the
labels.  So every surface that shows figures (``citecheck check`` and ``report``, in text and
JSON, and each page of the app) first says what it read: the logs or the checked store, how many
answers and unreadable lines, and each other input it uses, or that it uses none.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from citecheck.storage import streams

# Every input a surface may use, in the order they are said; and what "not given" means for each.
KINDS = ("logs", "store", "corpus", "golden", "labels", "verdicts")
TITLES = {"logs": "logs", "store": "checked store", "corpus": "corpus", "golden": "golden set",
          "labels": "labels", "verdicts": "verdicts"}
NONE_MEANS = {
    "corpus": "none: changed sources are not checked",
    "golden": "none: no refusal or retrieval figures",
    "labels": "none",
    "verdicts": "none",
    "store": "none",
    "logs": "none",
}


class Shown(str):
    """A value already in the words a person reads (``Inputs.of`` keeps it as it is)."""


def shown_path(target: Path | str) -> str:
    """A path as a person reads it: relative to the working folder when it is under it; a database
    URL with its password masked."""
    if isinstance(target, str) and streams.is_database(target):
        return streams.describe(target)
    path = Path(target)
    try:
        relative = os.path.relpath(os.path.abspath(path), os.getcwd())  # (a link named as given, as a log is known)
    except ValueError:  # another drive
        return str(path)
    if not relative.startswith(".."):
        return relative
    bundled = Path(__file__).resolve().parents[1] / "ui"  # an installed wheel's sample data (web/serve.py)
    if path.resolve().is_relative_to(bundled):
        return "citecheck's bundled " + path.resolve().relative_to(bundled).as_posix()
    return str(path)


@dataclass(frozen=True, slots=True)
class Inputs:
    """What one surface's figures come from.  ``used``: the kinds this surface reads (the others
    are not said at all); a used kind whose value is None was not given."""

    answers: int
    unreadable: int
    values: tuple[tuple[str, str | None], ...]  # (kind, shown path or None), in KINDS order

    @classmethod
    def of(cls, answers: int, unreadable: int, **given: Path | str | Iterable[Path | str] | None) -> Inputs:
        """``Inputs.of(48, 0, logs=[...], corpus=path_or_None, golden=None)``: each keyword a kind
        this surface uses."""
        unknown = set(given) - set(KINDS)
        if unknown:
            raise TypeError(f"unknown input kind(s): {', '.join(sorted(unknown))}")
        values: list[tuple[str, str | None]] = []
        for kind in KINDS:
            if kind not in given:
                continue
            value = given[kind]
            if value is None:
                values.append((kind, None))
            elif isinstance(value, Shown):
                values.append((kind, str(value)))
            elif kind == "logs" and not isinstance(value, (str, Path)):
                paths = [shown_path(p) for p in value]
                values.append((kind, ", ".join(paths) if paths else None))
            else:
                values.append((kind, shown_path(value)))  # type: ignore[arg-type]
        return cls(answers, unreadable, tuple(values))

    def counts_text(self) -> str:
        return (f"{self.answers:,} answer(s)"
                + (f", {self.unreadable:,} unreadable line(s) left out" if self.unreadable else ", no unreadable line"))

    def rows(self) -> list[tuple[str, str]]:
        """(title, value) per input used, then the counts: the Data page's table."""
        out = [(TITLES[kind], value if value is not None else NONE_MEANS[kind]) for kind, value in self.values]
        return out + [("answers", f"{self.answers:,}"), ("unreadable lines", f"{self.unreadable:,}")]

    def text(self) -> str:
        """One line: ``from 48 answer(s), no unreadable line; logs: sample_data/answers.jsonl; corpus: ...``."""
        parts = [f"{TITLES[kind]}: {value if value is not None else NONE_MEANS[kind]}" for kind, value in self.values]
        return "from " + self.counts_text() + "; " + "; ".join(parts)

    def html(self) -> str:
        """The line a page shows above its figures (escaped: paths are text from the settings)."""
        from html import escape

        parts = "".join(f" \u00b7 <b>{escape(TITLES[kind])}</b> {escape(value) if value is not None else escape(NONE_MEANS[kind])}"
                        for kind, value in self.values)
        return f'<div class="cc-inputs">Figures {escape(self.text().split(";")[0])}{parts}</div>'

    def to_dict(self) -> dict:
        """The inputs in a JSON report: every kind used, None when not given."""
        return {**{kind: value for kind, value in self.values}, "answers": self.answers,
                "unreadable_lines": self.unreadable}


def store_corpus(logs: Iterable[dict]) -> str | None:
    """The corpus the logs of a checked store were checked against (``store.json``): one folder,
    several (each log its own), or None when none was given."""
    corpora = {(entry.get("options") or {}).get("corpus") or "" for entry in logs}
    if corpora == {""} or not corpora:
        return None
    if len(corpora) == 1:
        return Shown(shown_path(corpora.pop()))
    return Shown("per log: " + ", ".join(shown_path(c) if c else "none" for c in sorted(corpora)))
