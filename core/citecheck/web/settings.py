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

from citecheck.checking.checker import CheckOptions
from citecheck.checking.files import check_options
from citecheck.storage import streams

# The checkout's root.  For an editable install (the README's commands) this file is under
# core/citecheck/web/; the app passes its own folder (``load_settings(root=...)``), which is right for a
# non-editable install too, where this file lives in site-packages.
ROOT = Path(__file__).resolve().parents[3]  # core/citecheck/web/settings.py -> the checkout
DEFAULT_LOG = ROOT / "sample_data" / "answers.jsonl"
DEFAULT_CORPUS = ROOT / "sample_data" / "corpus"
DEFAULT_LABELS = ROOT / "local_data" / "labels.jsonl"
DEFAULT_GOLDEN = ROOT / "sample_data" / "golden.jsonl"
DEFAULT_VERDICTS = ROOT / "local_data" / "verdicts.jsonl"
EXPERTQA_LOG = ROOT / "sample_data" / "expertqa" / "answers.jsonl"
EXPERTQA_LABELS = ROOT / "sample_data" / "expertqa" / "labels.jsonl"

ENV_LOGS = "CITECHECK_LOGS"  # several paths separated by os.pathsep
ENV_CORPUS = "CITECHECK_CORPUS"  # "" for no corpus
ENV_LABELS = "CITECHECK_LABELS"
ENV_GOLDEN = "CITECHECK_GOLDEN"  # "" for none
ENV_VERDICTS = "CITECHECK_VERDICTS"
ENV_STORE = "CITECHECK_STORE"  # a checked store folder (docs/store-format.md): Failures reads it with DuckDB
ENV_REFUSALS = "CITECHECK_REFUSALS"  # several sentences separated by newlines
ENV_CASEFOLD = "CITECHECK_CASEFOLD"  # "1" to compare quotes case-insensitively
ENV_OVERLAP = "CITECHECK_OVERLAP"  # reviewers per item before it is done (default 1)
ENV_GUIDELINES = "CITECHECK_GUIDELINES"  # a Markdown guidelines file ("" or unset: the bundled default)


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


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="app.py", description="citecheck review app settings")
    p.add_argument("--log", action="append", help=f"answer log to review (repeatable; env {ENV_LOGS})")
    p.add_argument("--corpus", help=f"folder of current source documents (env {ENV_CORPUS})")
    p.add_argument("--labels", help=f"labels file or postgresql:// URL to append to (env {ENV_LABELS})")
    p.add_argument("--golden", help=f"golden set for refusal and retrieval figures (env {ENV_GOLDEN})")
    p.add_argument("--verdicts", help=f"judge verdicts file or postgresql:// URL to read and append to "
                                      f"(env {ENV_VERDICTS})")
    p.add_argument("--store", help=f"checked store the Failures page reads with DuckDB (env {ENV_STORE})")
    p.add_argument("--refusal", action="append",
                   help=f"the exact refusal sentence, as for citecheck check (repeatable; env {ENV_REFUSALS})")
    p.add_argument("--casefold", action="store_true",
                   help=f"compare quotes case-insensitively, as for citecheck check (env {ENV_CASEFOLD}=1)")
    p.add_argument("--overlap", type=int,
                   help=f"reviewers per item: an item is done when K different reviewers have labelled it "
                        f"(default 1; env {ENV_OVERLAP})")
    p.add_argument("--guidelines", help=f"labelling guidelines, a Markdown file shown on the review page "
                                        f"(default: the bundled ones; env {ENV_GUIDELINES})")
    return p


def _overlap(arg: int | None, env: str | None) -> int:
    raw = arg if arg is not None else (env or "1")
    try:
        value = int(raw)
    except ValueError:
        raise SystemExit(f"--overlap / {ENV_OVERLAP} must be a whole number of reviewers, not {raw!r}") from None
    if value < 1:
        raise SystemExit(f"--overlap / {ENV_OVERLAP} must be at least 1, not {value}")
    return value


def _optional(arg: str | None, env: str | None, default: Path | None) -> Path | None:
    """A path that may be switched off: the argument, else the variable ("" for none), else ``default``."""
    value = arg if arg is not None else env
    if value is None:
        return default
    return Path(value) if value else None


def _store(value: str | None, default: Path) -> Path | str:
    """A labels or verdicts setting: a database URL as given, else a resolved file path."""
    if value and streams.is_database(value):
        return value
    return Path(value or default).resolve()


def load_settings(argv: Sequence[str] = (), environ: Mapping[str, str] = os.environ,
                  root: Path | None = None) -> Settings:
    """Settings from arguments, then environment variables, then defaults under ``root`` (the
    checkout holding ``sample_data/``; default: the one this package was installed from)."""
    root = Path(root).resolve() if root is not None else ROOT
    sample_log = root / "sample_data" / "answers.jsonl"
    args, _ = _parser().parse_known_args(list(argv))
    if args.log:
        logs = tuple(Path(p) for p in args.log)
    elif environ.get(ENV_LOGS):
        logs = tuple(Path(p) for p in environ[ENV_LOGS].split(os.pathsep) if p)
    else:
        logs = (sample_log,)
    sample = logs == (sample_log,)
    corpus = _optional(args.corpus, environ.get(ENV_CORPUS), root / "sample_data" / "corpus" if sample else None)
    labels = _store(args.labels or environ.get(ENV_LABELS), root / "local_data" / "labels.jsonl")
    golden = _optional(args.golden, environ.get(ENV_GOLDEN), root / "sample_data" / "golden.jsonl" if sample else None)
    verdicts = _store(args.verdicts or environ.get(ENV_VERDICTS), root / "local_data" / "verdicts.jsonl")
    refusals = tuple(args.refusal or [r for r in environ.get(ENV_REFUSALS, "").splitlines() if r.strip()])
    casefold = args.casefold or environ.get(ENV_CASEFOLD, "").strip().lower() in ("1", "true", "yes")
    store = _optional(args.store, environ.get(ENV_STORE), None)
    guidelines = _optional(args.guidelines, environ.get(ENV_GUIDELINES), None)
    return Settings(tuple(p.resolve() for p in logs), corpus.resolve() if corpus else None, labels,
                    golden.resolve() if golden else None, verdicts, root, casefold, refusals,
                    _overlap(args.overlap, environ.get(ENV_OVERLAP)), store.resolve() if store else None,
                    guidelines.resolve() if guidelines else None)


_loaded: dict[tuple, Settings] = {}


def server_settings(argv: Sequence[str], root: Path | None = None) -> Settings:
    """:func:`load_settings` of a running server (its arguments, ``os.environ``), parsed once per
    distinct arguments, CITECHECK_* variables and working folder: the pages ask many times per run,
    and parsing took a fifth of the review page's run.  Only the last is kept (they change only
    between tests)."""
    key = (tuple(argv), str(root), os.getcwd(),
           tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("CITECHECK_"))))
    found = _loaded.get(key)
    if found is None:
        found = load_settings(argv, root=root)
        _loaded.clear()
        _loaded[key] = found
    return found
