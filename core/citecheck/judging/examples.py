"""Few-shot examples for a judge, taken from labelled items of the **dev** split only (docs/judge.md,
"Few-shot examples from the dev split").

The examples file is JSON, ``examples_version`` 1::

    {"examples_version": 1,
     "examples": [{"item": "a-1#s0#c0", "sentence": "...", "excerpt": "...", "label": "not_supported",
                   "note": "...", "why": "adjudicated"}, ...],
     "source": {...}}

``why`` is ``adjudicated`` (a lead settled the item) or ``disagreement`` (the judge the file was
built against said otherwise than the human label).  ``source`` says how the file was built; it is
not part of the examples.  The examples' hash (:func:`canonical_bytes`: ``examples_version`` and
``examples`` as JSON with sorted keys, no spaces, UTF-8) is recorded on every verdict of a judge
built with them and becomes part of its prompt version, so verdicts of judges built from
different examples are never mixed.  A test-split item is never an example: the builder never
picks one and :func:`load` refuses a file that holds one, naming the entry and the item.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from citecheck.contract.item_keys import VERDICTS
from citecheck.errors import CitecheckError
from citecheck.judging.calibration import split_of

if TYPE_CHECKING:
    from citecheck.judging.judge_item import JudgeItem
    from citecheck.judging.verdicts import Verdict
    from citecheck.labelling.consensus import Resolution
    from citecheck.labelling.events import Adjudication

EXAMPLES_VERSION = 1
READS = (1,)
WHY = ("adjudicated", "disagreement")  # in the order they are preferred
EXCERPT_CHARS = 600  # the chunk excerpt of an example: at most this many characters, around the quote
NOTE_CHARS = 300
DEFAULT_MAX = 6
FIELDS = ("item", "sentence", "excerpt", "label", "note", "why")


class ExamplesError(CitecheckError):
    """An examples file that cannot be used: every bad entry, with its place and what to do."""


@dataclass(frozen=True, slots=True)
class Example:
    item: str  # the item key; it is not shown to the judge
    sentence: str
    excerpt: str  # of the cited chunk
    label: str  # the human label, one of VERDICTS
    note: str  # the adjudication's note, else the reviewers' notes ("" when none)
    why: str  # one of WHY

    def to_record(self) -> dict:
        return {name: getattr(self, name) for name in FIELDS}


@dataclass(frozen=True, slots=True)
class Examples:
    examples: tuple[Example, ...]
    sha256: str  # of canonical_bytes(examples)

    @property
    def version_suffix(self) -> str:
        """What the examples add to a prompt version: ``+ex.`` and the first 12 hex of their hash."""
        return f"+ex.{self.sha256[:12]}"

    def fenced(self, tag: str | None = None) -> str:
        """The examples as the system prompt carries them: one block fenced by a random tag name
        (``examples_`` and 12 hex, never a name that occurs in their texts), each text escaped so
        that none can close a tag or pose as the fence, the verdict of an item or an instruction."""
        texts = [t for e in self.examples for t in (e.sentence, e.excerpt, e.note)]
        while tag is None or any(tag in t for t in texts):
            tag = f"examples_{secrets.token_hex(6)}"
        lines = [f"<{tag}>"]
        for e in self.examples:
            lines += ["<example>", f"<sentence>{_escaped(e.sentence)}</sentence>",
                      f"<passage>{_escaped(e.excerpt)}</passage>", f"<human_label>{e.label}</human_label>",
                      f"<note>{_escaped(e.note)}</note>", "</example>"]
        return "\n".join([*lines, f"</{tag}>"])


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def canonical_bytes(examples: Sequence[Example]) -> bytes:
    """The bytes the examples' hash is taken of: version and examples, sorted keys, no spaces, UTF-8."""
    document = {"examples_version": EXAMPLES_VERSION, "examples": [e.to_record() for e in examples]}
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def of(examples: Sequence[Example]) -> Examples:
    return Examples(tuple(examples), hashlib.sha256(canonical_bytes(examples)).hexdigest())


# --- choosing ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    item: str
    label: str  # the human label
    why: str  # one of WHY


def _order(c: Candidate) -> tuple[int, str]:
    """Adjudicated before disagreements; then a fixed order that mixes answers (a hash of the key)."""
    return WHY.index(c.why), hashlib.sha256(c.item.encode("utf-8")).hexdigest()


def choose(candidates: Sequence[Candidate], max_n: int) -> list[Candidate]:
    """At most ``max_n`` dev-split candidates, balanced by label: labels take turns (supported,
    partial, not_supported), each giving its best left (adjudicated before disagreements), until
    ``max_n`` are chosen or none is left.  A test-split candidate is never chosen.  The result is
    ordered adjudicated first, then disagreements."""
    queues = {label: sorted((c for c in candidates if c.label == label and split_of(c.item) == "dev"), key=_order)
              for label in VERDICTS}
    chosen: list[Candidate] = []
    while len(chosen) < max_n and any(queues.values()):
        for label in VERDICTS:
            if queues[label] and len(chosen) < max_n:
                chosen.append(queues[label].pop(0))
    return sorted(chosen, key=_order)


def candidates(settled: Mapping[str, Resolution], judged: Mapping[str, Verdict]) -> list[Candidate]:
    """The labelled dev-split items worth showing: adjudicated ones, and those where the judge's
    scored verdict (``judged``: one verdict per item) differs from the human label."""
    out = []
    for key, r in settled.items():
        if r.label not in VERDICTS or split_of(key) != "dev":
            continue
        v = judged.get(key)
        if r.rule == "adjudicated":
            out.append(Candidate(key, r.label, "adjudicated"))
        elif v is not None and v.scored and v.verdict != r.label:
            out.append(Candidate(key, r.label, "disagreement"))
    return out


def excerpt(chunk: str, quote: str, width: int = EXCERPT_CHARS) -> str:
    """At most ``width`` characters of ``chunk`` (plus an ellipsis at a cut end): around the quote
    when the chunk holds it, else its beginning."""
    at = chunk.find(quote) if quote else -1
    if at < 0:
        start = 0
    else:
        start = max(0, min(at - max(0, width - len(quote)) // 2, len(chunk) - width))
    end = min(len(chunk), start + width)
    return ("\u2026" if start > 0 else "") + chunk[start:end] + ("\u2026" if end < len(chunk) else "")


def note_of(resolution: Resolution, adjudication: Adjudication | None) -> str:
    """The adjudication's note, else the notes of the reviewers who gave the settled label."""
    if adjudication is not None and adjudication.note.strip():
        text = adjudication.note.strip()
    else:
        text = "; ".join(dict.fromkeys(lab.note.strip() for lab in resolution.labels
                                       if lab.label == resolution.label and lab.note.strip()))
    return text[:NOTE_CHARS]


def build(items: Sequence[JudgeItem], settled: Mapping[str, Resolution], adjudicated: Mapping[str, Adjudication],
          judged: Mapping[str, Verdict], max_n: int = DEFAULT_MAX) -> list[Example]:
    """The examples of :func:`choose` over :func:`candidates` among ``items`` (those in the logs)."""
    by_key = {i.key: i for i in items}
    present = [c for c in candidates(settled, judged) if c.item in by_key]
    out = []
    for c in choose(present, max_n):
        item = by_key[c.item]
        out.append(Example(c.item, item.sentence, excerpt(item.chunk, item.quote), c.label,
                           note_of(settled[c.item], adjudicated.get(c.item)), c.why))
    return out


# --- the file ------------------------------------------------------------------------------------


def dumps(examples: Examples, source: Mapping[str, object]) -> str:
    document = {"examples_version": EXAMPLES_VERSION, "examples": [e.to_record() for e in examples.examples],
                "source": dict(source)}
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def load(path: str | Path) -> Examples:
    """The examples of a file, each entry checked; :class:`ExamplesError` lists every bad entry
    (file, ``examples[n]``, field) and every test-split item, naming it."""
    name = str(path)
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExamplesError(f"{name}: no such examples file; build one with citecheck judge-examples") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ExamplesError(f"{name}: not a JSON examples file ({exc}); build one with citecheck judge-examples") \
            from None
    if not isinstance(document, dict):
        raise ExamplesError(f"{name}: an examples file is a JSON object with examples_version and examples")
    version = document.get("examples_version")
    if type(version) is not int or version not in READS:
        raise ExamplesError(f"{name}: examples_version: {version!r} is not a version this citecheck reads "
                            f"({', '.join(map(str, READS))}); rebuild it with citecheck judge-examples")
    entries = document.get("examples")
    if not isinstance(entries, list) or not entries:
        raise ExamplesError(f"{name}: examples: a non-empty list of examples is required")
    errors: list[str] = []
    examples = [e for n, entry in enumerate(entries) if (e := _entry(name, n, entry, errors)) is not None]
    if errors:
        raise ExamplesError(f"{len(errors)} problem(s) in {name}:\n" + "\n".join(f"  {e}" for e in errors))
    return of(examples)


def _entry(name: str, n: int, entry: object, errors: list[str]) -> Example | None:
    where = f"{name}: examples[{n}]"
    if not isinstance(entry, dict):
        errors.append(f"{where}: an example is a JSON object with {', '.join(FIELDS)}")
        return None
    found = len(errors)
    for field in FIELDS:
        if not isinstance(entry.get(field), str):
            errors.append(f"{where}.{field}: a string is required")
    if len(errors) > found:
        return None
    e = Example(*(entry[field] for field in FIELDS))
    if e.label not in VERDICTS:
        errors.append(f"{where}.label: {e.label!r} is not one of {', '.join(VERDICTS)}")
    if e.why not in WHY:
        errors.append(f"{where}.why: {e.why!r} is not one of {', '.join(WHY)}")
    if split_of(e.item) != "dev":
        errors.append(f"{where}.item: {e.item} is a test-split item; only dev-split items may be examples "
                      "(the test split measures the judge): remove it")
    return e if len(errors) == found else None
