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
    unit: str = "reviewers"  # what a count counts, for its error message

    @property
    def option(self) -> str:
        return f"--{self.name}"

    def from_env(self, raw: str) -> Any:
        """The value of the variable as the option would give it (``""``: none, for a path).
        Raises ValueError, with a sentence naming the variable, for a count that is not one."""
        if self.kind == PATHS:
            return [p for p in raw.split(os.pathsep) if p]
        if self.kind == TEXTS:
            return [line for line in raw.splitlines() if line.strip()]
        if self.kind == FLAG:
            return raw.strip().lower() in _TRUE
        if self.kind == COUNT:
            return count(raw, f"{self.option} / {self.env}", self.unit)
        return raw


def count(raw: object, what: str, unit: str = "reviewers") -> int:
    """A whole number of at least 1 (``--overlap``, ``--lock``), or ValueError saying what it must be."""
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ValueError(f"{what} must be a whole number of {unit}, not {raw!r}") from None
    if value < 1:
        raise ValueError(f"{what} must be at least 1, not {value}")
    return value


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
    Setting("roles", PATH, "CITECHECK_ROLES",
            "roles file (TOML): the emails and groups that are leads when sign-in is configured", "FILE"),
    Setting("lock", COUNT, "CITECHECK_LOCK_MINUTES",
            "minutes an opened item stays held for its reviewer before it goes back to the pool (default 30)",
            "MINUTES", unit="minutes"),
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

_TAKEN = "_citecheck_settings"  # (set on a command's parser) the settings it takes: dest -> setting name
_REQUIRED = "_citecheck_required"  # its settings that must have a value
_FALLBACK = "_citecheck_fallback"  # its settings' values when neither option nor variable gives one
_FROM_ENV = "_citecheck_from_env"  # (set by fill_from_environment) the settings its variables gave


def help_text(name: str, purpose: str = "", env: bool = True) -> str:
    """The one help text of a setting, with what it is for in one command."""
    s = BY_NAME[name]
    return s.help + (f"; {purpose}" if purpose else "") + (f" (env {s.env})" if env else "")


def _remember(parser: argparse.ArgumentParser, dest: str, name: str, required: bool, fallback: Any,
              env: bool = True) -> None:
    if env:
        parser.set_defaults(**{_TAKEN: {**(parser.get_default(_TAKEN) or {}), dest: name}})
    if required:
        parser.set_defaults(**{_REQUIRED: (*(parser.get_default(_REQUIRED) or ()), dest)})
    if fallback is not None:
        parser.set_defaults(**{_FALLBACK: {**(parser.get_default(_FALLBACK) or {}), dest: fallback}})


def add_option(parser: argparse.ArgumentParser, name: str, *, required: bool = False, purpose: str = "",
               fallback: Any = None, env: bool = True, **extra: Any) -> argparse.Action:
    """Add the setting ``name`` to a command: its option with the one help text (and what it is for
    in this command), read from its variable when not given, else ``fallback``
    (:func:`fill_from_environment`).  ``env=False`` for an optional setting whose mere presence
    changes what a command does (``sample --verdicts`` narrows what is drawn): a variable set for
    the app must not do that unasked, so such an option is read only when given."""
    s = BY_NAME[name]
    kwargs: dict[str, Any] = {"help": help_text(name, purpose, env), "default": None}
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
    _remember(parser, name, name, required, fallback, env)
    return parser.add_argument(s.option, **kwargs)


def add_positional(parser: argparse.ArgumentParser, name: str, dest: str, *, required: bool = True,
                   purpose: str = "") -> argparse.Action:
    """The setting ``name`` as the command's positional argument(s) ``dest`` (``check LOG...``,
    ``labels export LABELS``): optional on the line when its variable gives it."""
    s = BY_NAME[name]
    _remember(parser, dest, name, required, None)
    many = s.kind in (PATHS, TEXTS)
    return parser.add_argument(dest, nargs="*" if many else "?", metavar=s.metavar or dest.upper(),
                               help=help_text(name, purpose))


def _unset(value: Any) -> bool:
    return value is None or value == []


def fill_from_environment(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> str | None:
    """Give every setting the command took but was not given the value of its variable, else its
    fallback; returns what is wrong or missing (for the command's usage error), or None."""
    taken: dict[str, str] = getattr(args, _TAKEN, None) or {}
    from_env: set[str] = set()
    setattr(args, _FROM_ENV, from_env)
    for dest, name in taken.items():
        s = BY_NAME[name]
        if not _unset(getattr(args, dest, None)):
            continue
        if s.env in environ:
            try:
                value = s.from_env(environ[s.env])
            except ValueError as exc:
                return str(exc)
            setattr(args, dest, None if value in ("", []) else value)
            from_env.add(dest)
        if _unset(getattr(args, dest)):
            setattr(args, dest, (getattr(args, _FALLBACK, None) or {}).get(dest, getattr(args, dest)))
    for dest in getattr(args, _REQUIRED, ()):
        if _unset(getattr(args, dest, None)):
            s = BY_NAME[taken[dest]]
            what = s.option if dest == s.name else (s.metavar or dest.upper())
            return f"the following arguments are required: {what} (or set {s.env})"
    return None


def given(args: argparse.Namespace, dest: str) -> bool:
    """Whether the command line itself gave ``dest`` (not its variable, not a fallback)."""
    return not _unset(getattr(args, dest, None)) and dest not in getattr(args, _FROM_ENV, set()) and \
        getattr(args, dest) != (getattr(args, _FALLBACK, None) or {}).get(dest, object())
