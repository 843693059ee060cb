"""The labelling guidelines: a Markdown file the review page shows, and each label's definition.

The bundled default (``guidelines.md`` beside this module) defines every label with one example; a
team points the app's ``--guidelines FILE`` setting at its own (docs/app.md).  A label's
definition is the first paragraph under the heading named like the label (``## Supported``,
``## Can't tell``...); the review page shows it when the pointer rests on the label's button.

Each label records the guidelines' version, :func:`version_of` (a hash of the file's text), so
calibration can tell which labels were made under which guidelines.

The file is the server's, but it is still rendered as Markdown with raw HTML escaped
(:func:`to_html`, markdown-it-py with ``html`` off; its link check refuses ``javascript:`` and
the like), never passed to a widget that would run HTML from it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from citecheck.contract.item_keys import LABEL_TEXT
from citecheck.errors import CitecheckError

DEFAULT = Path(__file__).with_name("guidelines.md")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


class GuidelinesError(CitecheckError, ValueError):
    """The configured guidelines file cannot be read."""


@dataclass(frozen=True, slots=True)
class Guidelines:
    text: str
    version: str  # "sha256:" and 16 hex digits of the text
    definitions: dict[str, str]  # label -> its definition (labels without a section are absent)
    source: str  # the file it was read from


def version_of(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _fold(title: str) -> str:
    return " ".join(title.replace("\u2019", "'").casefold().split())


def definitions(text: str) -> dict[str, str]:
    """Per label, the first paragraph under its heading, on one line."""
    wanted = {_fold(words): label for label, words in LABEL_TEXT.items()}
    out: dict[str, str] = {}
    current: str | None = None
    paragraph: list[str] = []
    for line in [*text.splitlines(), "# end"]:
        heading = _HEADING.match(line)
        if heading or not line.strip():
            if current is not None and paragraph and current not in out:
                out[current] = " ".join(paragraph)
            paragraph = []
            if heading:
                current = wanted.get(_fold(heading.group(1)))
            continue
        if current is not None and current not in out:
            paragraph.append(line.strip())
    return out


def load(path: str | Path | None = None) -> Guidelines:
    """The guidelines in ``path`` (None: the bundled default)."""
    where = Path(path) if path is not None else DEFAULT
    try:
        text = where.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GuidelinesError(f"cannot read the guidelines file {where}: {exc}; fix the --guidelines setting "
                              "(docs/app.md) or leave it out for the bundled guidelines") from None
    return Guidelines(text, version_of(text), definitions(text), str(where))


def to_html(text: str) -> str:
    """The Markdown as HTML, with any raw HTML in it shown as text, not run."""
    from markdown_it import MarkdownIt

    return '<div class="cc-guidelines">' + MarkdownIt("commonmark", {"html": False}).render(text) + "</div>"


def missing(guidelines: Guidelines) -> list[str]:
    """The labels the file gives no definition for (their buttons get no hover text)."""
    return [LABEL_TEXT[label] for label in LABEL_TEXT if label not in guidelines.definitions]
