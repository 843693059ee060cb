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

from ..contract import store

ROOT = Path(__file__).resolve().parent.parent.parent
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


@dataclass(frozen=True, slots=True)
class Settings:
    logs: tuple[Path, ...]
    corpus: Path | None
    labels: Path | str  # a file, or a postgresql:// URL
    golden: Path | None = None
    verdicts: Path | str = DEFAULT_VERDICTS

    @property
    def folders(self) -> tuple[Path, ...]:
        """The only folders the app may read from or write to."""
        dirs = [p.parent for p in self.logs]
        dirs += [p.parent for p in (self.labels, self.verdicts) if not store.is_database(p)]
        if self.corpus is not None:
            dirs.append(self.corpus)
        if self.golden is not None:
            dirs.append(self.golden.parent)
        return tuple(dict.fromkeys(d.resolve() for d in dirs))

    def allowed(self, path: str | Path) -> bool:
        try:
            resolved = Path(path).resolve()
        except (OSError, RuntimeError):
            return False
        return any(resolved == d or d in resolved.parents for d in self.folders)

    def shown(self, target: Path | str) -> str:
        """A setting as the app may display it: a database URL with its password masked."""
        return store.describe(target)

    @property
    def expertqa_verdicts(self) -> Path:
        """Where the ExpertQA sample's verdicts go: beside the verdicts file, or in local_data/."""
        base = DEFAULT_VERDICTS if store.is_database(self.verdicts) else Path(self.verdicts)
        return base.with_name("expertqa-verdicts.jsonl")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="app.py", description="citecheck review app settings")
    p.add_argument("--log", action="append", help=f"answer log to review (repeatable; env {ENV_LOGS})")
    p.add_argument("--corpus", help=f"folder of current source documents (env {ENV_CORPUS})")
    p.add_argument("--labels", help=f"labels file or postgresql:// URL to append to (env {ENV_LABELS})")
    p.add_argument("--golden", help=f"golden set for refusal and retrieval figures (env {ENV_GOLDEN})")
    p.add_argument("--verdicts", help=f"judge verdicts file or postgresql:// URL to read and append to "
                                      f"(env {ENV_VERDICTS})")
    return p


def _optional(arg: str | None, env: str | None, default: Path | None) -> Path | None:
    """A path that may be switched off: the argument, else the variable ("" for none), else ``default``."""
    value = arg if arg is not None else env
    if value is None:
        return default
    return Path(value) if value else None


def _store(value: str | None, default: Path) -> Path | str:
    """A labels or verdicts setting: a database URL as given, else a resolved file path."""
    if value and store.is_database(value):
        return value
    return Path(value or default).resolve()


def load_settings(argv: Sequence[str] = (), environ: Mapping[str, str] = os.environ) -> Settings:
    args, _ = _parser().parse_known_args(list(argv))
    if args.log:
        logs = tuple(Path(p) for p in args.log)
    elif environ.get(ENV_LOGS):
        logs = tuple(Path(p) for p in environ[ENV_LOGS].split(os.pathsep) if p)
    else:
        logs = (DEFAULT_LOG,)
    sample = logs == (DEFAULT_LOG,)
    corpus = _optional(args.corpus, environ.get(ENV_CORPUS), DEFAULT_CORPUS if sample else None)
    labels = _store(args.labels or environ.get(ENV_LABELS), DEFAULT_LABELS)
    golden = _optional(args.golden, environ.get(ENV_GOLDEN), DEFAULT_GOLDEN if sample else None)
    verdicts = _store(args.verdicts or environ.get(ENV_VERDICTS), DEFAULT_VERDICTS)
    return Settings(tuple(p.resolve() for p in logs), corpus.resolve() if corpus else None, labels,
                    golden.resolve() if golden else None, verdicts)
