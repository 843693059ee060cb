"""Where the app reads and writes: logs, corpus, labels file (docs/app.md).

Set by command-line arguments after ``--`` (``streamlit run app.py -- --log X``) or by
environment variables; defaults are the bundled sample data and ``local_data/labels.jsonl``.
The browser never chooses a path: it picks among the configured logs or uploads a file, which
is read in memory.  ``allowed`` refuses any path outside the configured folders.

Labels and verdicts may be a ``postgresql://`` URL instead of a file (docs/labels-format.md): a
team's app servers then share one database.  That URL comes from the server's arguments or
environment only, never from the browser, and is shown only through ``shown`` (password masked).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from citecheck import config
from citecheck.checking.checker import CheckOptions
from citecheck.checking.files import check_options
from citecheck.contract.log_identity import once_each
from citecheck.storage import streams

# The checkout's root.  For an editable install (the README's commands) this file is under
# core/citecheck/web/; the app passes its own folder (``load_settings(root=...)``), which is right for a
# non-editable install too, where this file lives in site-packages.
_CHECKOUT = Path(__file__).resolve().parents[3]  # core/citecheck/web/settings.py -> the checkout
# Where sample_data/ is: the checkout's, or the copy an installed wheel carries (citecheck/ui/: web/serve.py)
ROOT = _CHECKOUT if (_CHECKOUT / "sample_data").is_dir() else Path(__file__).resolve().parents[1] / "ui"
DEFAULT_LOG = ROOT / "sample_data" / "answers.jsonl"
DEFAULT_CORPUS = ROOT / "sample_data" / "corpus"
DEFAULT_LABELS = ROOT / "local_data" / "labels.jsonl"
DEFAULT_GOLDEN = ROOT / "sample_data" / "golden.jsonl"
DEFAULT_VERDICTS = ROOT / "local_data" / "verdicts.jsonl"
EXPERTQA_LOG = ROOT / "sample_data" / "expertqa" / "answers.jsonl"
EXPERTQA_LABELS = ROOT / "sample_data" / "expertqa" / "labels.jsonl"

# The variables, as declared once in citecheck.config (the CLI reads the same ones).
ENV_LOGS, ENV_CORPUS, ENV_LABELS, ENV_VERDICTS, ENV_GOLDEN, ENV_STORE, ENV_REFUSALS, ENV_CASEFOLD, ENV_OVERLAP, \
    ENV_GUIDELINES = (config.BY_NAME[n].env for n in ("log", "corpus", "labels", "verdicts", "golden", "store",
                                                      "refusal", "casefold", "overlap", "guidelines"))


@dataclass(frozen=True, slots=True)
class Settings:
    logs: tuple[Path, ...]
    corpus: Path | None
    labels: Path | str  # a file, or a postgresql:// URL
    golden: Path | None = None
    verdicts: Path | str = DEFAULT_VERDICTS
    root: Path = ROOT  # where sample_data/ is: the bundled samples
    casefold: bool = False
    refusals: tuple[str, ...] = ()  # empty: the default refusal sentence
    overlap: int = 1  # an item is done when this many different reviewers have labelled it
    store: Path | None = None  # a checked store: the Failures page reads its figures from it
    guidelines: Path | None = None  # the labelling guidelines (Markdown); None: the bundled default
    roles: Path | None = None  # who is a lead under sign-in (review.roles); None: nobody
    lock_minutes: int = 30  # how long an opened item is held for its reviewer (review.holds)

    def check_options(self) -> CheckOptions:
        """The same options ``citecheck check`` builds from the same settings."""
        return check_options(self.corpus, self.casefold, self.refusals)

    @property
    def expertqa_log(self) -> Path:
        return self.root / "sample_data" / "expertqa" / "answers.jsonl"

    @property
    def expertqa_labels(self) -> Path:
        return self.root / "sample_data" / "expertqa" / "labels.jsonl"

    def shown(self, target: Path | str) -> str:
        """A setting as the app may display it: a database URL with its password masked."""
        return streams.describe(target)

    @property
    def expertqa_verdicts(self) -> Path:
        """Where the ExpertQA sample's verdicts go: beside the verdicts file, or in local_data/."""
        base = self.root / "local_data" / "verdicts.jsonl" if streams.is_database(self.verdicts) else Path(self.verdicts)
        return base.with_name("expertqa-verdicts.jsonl")

    @property
    def folders(self) -> tuple[Path, ...]:
        """The only folders the app may read from or write to."""
        dirs = [p.parent for p in self.logs]
        dirs += [Path(p).parent for p in (self.labels, self.verdicts) if not streams.is_database(p)]
        if self.corpus is not None:
            dirs.append(self.corpus)
        if self.golden is not None:
            dirs.append(self.golden.parent)
        if self.store is not None:
            dirs.append(self.store)
        return tuple(dict.fromkeys(d.resolve() for d in dirs))

    def allowed(self, path: str | Path) -> bool:
        try:
            resolved = Path(path).resolve()
        except (OSError, RuntimeError):
            return False
        return any(resolved == d or d in resolved.parents for d in self.folders)


# What a setting is for in the app, after its one help text (citecheck.config).
_PURPOSE = {
    "log": "the answers to review",
    "verdicts": "read, and appended to by the judge runs started from the app",
    "store": "the Failures and review pages read it instead of the logs",
    "refusal": "as for citecheck check",
    "casefold": "as for citecheck check",
    "overlap": "default 1",
    "guidelines": "shown on the review page (default: the bundled ones)",
    "roles": "only with sign-in; without it everyone is a lead",
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="app.py", description="citecheck review app settings")
    for setting in config.SETTINGS:
        config.add_option(p, setting.name, purpose=_PURPOSE.get(setting.name, ""))
    return p


_UNSET = object()


def _given(args: argparse.Namespace, environ: Mapping[str, str], name: str) -> object:
    """A setting's value from its argument, else its variable (``""`` kept: it switches a path
    off), else ``_UNSET``.  A bad count stops the server with the sentence saying why."""
    value = getattr(args, name)
    if value not in (None, []):
        if config.BY_NAME[name].kind == config.COUNT:
            value = _count(value, name)
        return value
    setting = config.BY_NAME[name]
    if setting.env not in environ:
        return _UNSET
    try:
        return setting.from_env(environ[setting.env])
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


def _count(value: object, name: str) -> int:
    try:
        return config.count(value, f"--{name} / {config.BY_NAME[name].env}", config.BY_NAME[name].unit)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


def _path(value: object, default: Path | None) -> Path | None:
    """A path that may be switched off: the value given ("" for none), else ``default``."""
    if value is _UNSET:
        return default
    return Path(value).resolve() if isinstance(value, str) and value else None


def _target(value: object, default: Path) -> Path | str:
    """A labels or verdicts setting: a database URL as given, else a resolved file path."""
    if isinstance(value, str) and streams.is_database(value):
        return value
    return Path(value if isinstance(value, str) and value else default).resolve()


def load_settings(argv: Sequence[str] = (), environ: Mapping[str, str] = os.environ,
                  root: Path | None = None) -> Settings:
    """Settings from arguments, then environment variables, then defaults under ``root`` (the
    checkout holding ``sample_data/``; default: the one this package was installed from)."""
    root = Path(root).resolve() if root is not None else ROOT
    sample_log = root / "sample_data" / "answers.jsonl"
    args, _ = _parser().parse_known_args(list(argv))

    def given(name: str) -> object:
        return _given(args, environ, name)

    given_logs = given("log")
    logs = tuple(Path(p) for p in given_logs) if isinstance(given_logs, list) and given_logs else (sample_log,)
    store = _path(given("store"), None)
    # the sample's corpus and golden set go with the sample's answers: the sample log by default, or
    # given; a store given without it holds answers of its own (a new user's store showed the sample's
    # golden set on Failures)
    sample = logs == (sample_log,) and (store is None or given_logs is not _UNSET)
    overlap, refusals, lock = given("overlap"), given("refusal"), given("lock")
    return Settings(
        logs=tuple(once_each(p.resolve() for p in logs)[0]),  # (a log given twice is read once, as by the CLI)
        corpus=_path(given("corpus"), root / "sample_data" / "corpus" if sample else None),
        labels=_target(given("labels"), root / "local_data" / "labels.jsonl"),
        golden=_path(given("golden"), root / "sample_data" / "golden.jsonl" if sample else None),
        verdicts=_target(given("verdicts"), root / "local_data" / "verdicts.jsonl"),
        root=root,
        casefold=given("casefold") is True,
        refusals=tuple(refusals) if isinstance(refusals, list) else (),
        overlap=1 if overlap is _UNSET else _count(overlap, "overlap"),
        store=store,
        guidelines=_path(given("guidelines"), None),
        roles=_path(given("roles"), None),
        lock_minutes=30 if lock is _UNSET else _count(lock, "lock"),
    )


_loaded: dict[tuple, Settings] = {}
# the variables :func:`load_settings` reads (looked up by name: going through all of os.environ
# took a fifth of a millisecond, and the pages ask for the settings some thirty times per run)
_ENV_NAMES = tuple(sorted({setting.env for setting in config.SETTINGS if setting.env}))


def server_settings(argv: Sequence[str], root: Path | None = None) -> Settings:
    """:func:`load_settings` of a running server (its arguments, ``os.environ``), parsed once per
    distinct arguments, CITECHECK_* variables and working folder: the pages ask many times per run,
    and parsing took a fifth of the review page's run.  Only the last is kept (they change only
    between tests)."""
    environ = os.environ
    key = (tuple(argv), str(root), os.getcwd(), tuple(environ.get(name) for name in _ENV_NAMES))
    found = _loaded.get(key)
    if found is None:
        found = load_settings(argv, root=root)
        _loaded.clear()
        _loaded[key] = found
    return found
