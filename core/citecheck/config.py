"""Every setting citecheck reads, declared once: its option, type, environment variable and help.

The app (``web.settings``) and the command line (``cli``) both build their options from
:data:`SETTINGS`, so ``--labels`` means the same thing, says the same thing in ``--help`` and reads
the same ``CITECHECK_LABELS`` wherever it is taken.  An option given wins over its variable; a
variable set to ``""`` switches an optional path off (no corpus, no golden set).  What differs
between the two is only the last default: the app falls back to the bundled sample data and
``local_data/`` (docs/app.md), a command to nothing (a required option then says which variable
would also do).  :data:`VARIABLES` are the environment variables that have no option.
``tests/test_docs.py`` checks that docs/app.md and docs/cli.md document every one of them.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# How a setting is written, as an option and as its variable.
PATH = "path"  # a file or folder
TARGET = "target"  # a file, or a postgresql:// URL (labels, verdicts)
PATHS = "paths"  # repeatable option; the variable joins paths with os.pathsep
TEXTS = "texts"  # repeatable option; the variable holds one per line
FLAG = "flag"  # an option without a value; the variable is 1/true/yes
COUNT = "count"  # a whole number

_TRUE = ("1", "true", "yes")


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: ``--NAME`` as an option, ``env`` as a variable, ``help`` what it is."""

    name: str
    kind: str
    env: str
    help: str
    metavar: str | None = None

    @property
    def option(self) -> str:
        return f"--{self.name}"

    def from_env(self, raw: str) -> Any:
        """The value of the variable as the option would give it (``""``: none, for a path)."""
        if self.kind == PATHS:
            return [p for p in raw.split(os.pathsep) if p]
        if self.kind == TEXTS:
            return [line for line in raw.splitlines() if line.strip()]
        if self.kind == FLAG:
            return raw.strip().lower() in _TRUE
        return raw


SETTINGS: tuple[Setting, ...] = (
    Setting("log", PATHS, "CITECHECK_LOGS", "answer log (repeatable)", "LOG"),
    Setting("corpus", PATH, "CITECHECK_CORPUS", "folder of the current source documents, to detect source_changed",
            "DIR"),
    Setting("labels", TARGET, "CITECHECK_LABELS", "the reviewers' labels: a labels file or a postgresql:// URL",
            "FILE"),
    Setting("verdicts", TARGET, "CITECHECK_VERDICTS", "the judges' verdicts: a verdicts file or a postgresql:// URL",
            "FILE"),
    Setting("golden", PATH, "CITECHECK_GOLDEN", "golden set (JSON lines) for refusal and retrieval figures", "FILE"),
    Setting("store", PATH, "CITECHECK_STORE", "checked store folder (docs/store-format.md), read with DuckDB", "DIR"),
    Setting("refusal", TEXTS, "CITECHECK_REFUSALS", "the exact refusal sentence (repeatable)", "SENTENCE"),
    Setting("casefold", FLAG, "CITECHECK_CASEFOLD", "compare quotes case-insensitively"),
    Setting("overlap", COUNT, "CITECHECK_OVERLAP",
            "reviewers per item: an item is done when K different reviewers have labelled it", "K"),
    Setting("guidelines", PATH, "CITECHECK_GUIDELINES", "labelling guidelines, a Markdown file", "FILE"),
)
BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}


@dataclass(frozen=True, slots=True)
class Variable:
    """An environment variable citecheck reads that has no option."""

    name: str
    help: str


VARIABLES: tuple[Variable, ...] = (
    Variable("ANTHROPIC_API_KEY", "the Anthropic API key for the Claude judge and the answer pipeline; never "
                                  "printed or stored"),
    Variable("CITECHECK_PURE_PYTHON", "1: run the hot modules as Python even when their compiled build is there"),
)

_REQUIRED = "_citecheck_required"


def add_option(parser: argparse.ArgumentParser, name: str, *, required: bool = False, purpose: str = "",
               **extra: Any) -> argparse.Action:
    """Add the setting ``name`` to a command: its option with the one help text (and what it is for
    in this command), read from its variable when not given (:func:`fill_from_environment`)."""
    s = BY_NAME[name]
    text = s.help + (f"; {purpose}" if purpose else "") + f" (env {s.env})"
    kwargs: dict[str, Any] = {"help": text, "default": None}
    if s.kind in (PATHS, TEXTS):
        kwargs["action"] = "append"
    elif s.kind == FLAG:
        kwargs["action"] = "store_const"
        kwargs["const"] = True
    elif s.kind == COUNT:
        kwargs["type"] = int
    if s.metavar and s.kind != FLAG:
        kwargs["metavar"] = s.metavar
    kwargs.update(extra)
    if required:
        parser.set_defaults(**{_REQUIRED: (*(parser.get_default(_REQUIRED) or ()), name)})
    return parser.add_argument(s.option, **kwargs)


def _unset(value: Any) -> bool:
    return value is None or value == []


def fill_from_environment(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> str | None:
    """Give every declared setting the command took but was not given the value of its variable;
    returns what is missing (for the command's usage error), or None."""
    for s in SETTINGS:
        if hasattr(args, s.name) and _unset(getattr(args, s.name)) and s.env in environ:
            value = s.from_env(environ[s.env])
            setattr(args, s.name, None if value in ("", []) else value)
    if hasattr(args, "logs") and not args.logs and environ.get(BY_NAME["log"].env):
        args.logs = BY_NAME["log"].from_env(environ[BY_NAME["log"].env])
    for name in getattr(args, _REQUIRED, ()):
        if _unset(getattr(args, name, None)):
            s = BY_NAME[name]
            return f"the following arguments are required: {s.option} (or set {s.env})"
    return None
