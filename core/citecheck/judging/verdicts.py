"""The verdicts file: what a judge said about each item (docs/judge.md), append-only JSON lines.

A verdict is ``supported``, ``partial`` or ``not_supported`` with a short rationale, or
``unscored`` with the reason (no passage text, API failure, unreadable reply...).  Every record
names its judge, the judge's prompt version and prompt hash, so verdicts of different prompts
are never mixed; the latest record per (item, judge, prompt version) counts.

Version 2 (version 1 is still read, its new fields taking their defaults) adds what improving a
judge needs: ``repeat`` (which of K repeated runs of the same judge on the same item: 0 is the
ordinary run, the only one calibration and estimates count; 1..K-1 feed self-consistency only),
``decided_by`` (the model whose answer became the verdict, in a cascade), ``confidence`` (the
judge's own confidence in [0, 1] when its tool call gives one) and ``examples_sha256`` (the hash
of the few-shot examples file the prompt was built with, "" when none).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from citecheck.contract.item_keys import UNSCORED, VERDICTS, parse_item_key
from citecheck.errors import CitecheckError, FieldError, RecordError
from citecheck.storage import streams
from citecheck.storage.lines import expect, expect_object, now, read_jsonl

VERDICTS_VERSION = 2
READS = (1, 2)  # version 1: no repeat, decided_by, confidence, examples_sha256


class ImportFileError(CitecheckError, ValueError):
    """Another tool's verdicts file that cannot be read at all (missing, a folder): the message says what to give."""


@dataclass(frozen=True, slots=True)
class Verdict:
    verdicts_version: int
    item: str  # item key, as in the labels file (answer#s0#c1)
    verdict: str  # one of VERDICTS, or UNSCORED
    rationale: str
    judge: str  # "claude:<model>", "baseline", or an external tool's name
    prompt_version: str
    prompt_sha256: str
    fingerprint: str = ""  # the item's fingerprint when judged ("" when unknown: external verdicts)
    cost_usd: float = 0.0
    at: str = ""
    repeat: int = 0  # 0: the ordinary run (counted); 1..K-1: repeats for self-consistency only
    decided_by: str = ""  # the model whose answer became the verdict ("" when the judge is one model)
    confidence: float | None = None  # the judge's own confidence in [0, 1], when it gives one
    examples_sha256: str = ""  # the few-shot examples file the prompt was built with ("" when none)

    @property
    def scored(self) -> bool:
        return self.verdict != UNSCORED

    @property
    def run(self) -> tuple[str, str]:
        """Which judge and prompt this verdict belongs to."""
        return self.judge, self.prompt_version


def make(item: str, verdict: str, rationale: str, judge: str, prompt_version: str, prompt_sha256: str,
         fingerprint: str = "", cost_usd: float = 0.0, *, repeat: int = 0, decided_by: str = "",
         confidence: float | None = None, examples_sha256: str = "") -> Verdict:
    if verdict not in VERDICTS and verdict != UNSCORED:
        raise ValueError(f"verdict {verdict!r} is not one of {', '.join(VERDICTS)} or {UNSCORED}")
    if repeat < 0:
        raise ValueError(f"repeat {repeat} is negative: 0 is the ordinary run")
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        raise ValueError(f"confidence {confidence} is not in [0, 1]")
    return Verdict(VERDICTS_VERSION, item, verdict, rationale, judge, prompt_version, prompt_sha256,
                   fingerprint, round(cost_usd, 6), now(), repeat, decided_by, confidence, examples_sha256)


STREAM = "verdicts"


def append(target: str | Path, verdicts: Iterable[Verdict]) -> None:
    """Append to a verdicts file or database (``postgresql://`` URL), in one write or transaction."""
    streams.append(target, STREAM, [asdict(v) for v in verdicts])


def parse_verdict_record(value: object) -> Verdict:
    """One verdicts-file record, validated field by field (:class:`FieldError` names the field)."""
    obj = expect_object(value)
    version = obj.get("verdicts_version")
    if version is None:
        raise FieldError("verdicts_version", f"is required: add \"verdicts_version\": {VERDICTS_VERSION}")
    if type(version) is not int or version not in READS:
        raise FieldError("verdicts_version", f"{version!r} is not a version this citecheck reads "
                                             f"({', '.join(map(str, READS))}); upgrade citecheck to read newer files")
    item = expect(obj, "item", str)
    try:
        parse_item_key(item)
    except ValueError as exc:
        if "#claim" not in item:  # the pipeline's claim items (docs/pipeline.md) are not citation items
            raise FieldError("item", str(exc)) from None
    verdict = expect(obj, "verdict", str)
    if verdict not in VERDICTS and verdict != UNSCORED:
        raise FieldError("verdict", f"{verdict!r} is not one of {', '.join(VERDICTS)} or {UNSCORED}")
    return Verdict(
        VERDICTS_VERSION, item, verdict,
        rationale=expect(obj, "rationale", str, optional=True, default=""),
        judge=expect(obj, "judge", str),
        prompt_version=expect(obj, "prompt_version", str),
        prompt_sha256=expect(obj, "prompt_sha256", str, optional=True, default=""),
        fingerprint=expect(obj, "fingerprint", str, optional=True, default=""),
        cost_usd=float(expect(obj, "cost_usd", float, optional=True, default=0.0)),
        at=expect(obj, "at", str, optional=True, default=""),
        **(_version_two(obj) if version == 2 else {}),
    )


def _version_two(obj: dict) -> dict:
    """The fields version 2 added, validated (a version-1 record has their defaults)."""
    repeat = expect(obj, "repeat", int, optional=True, default=0)
    if repeat < 0:
        raise FieldError("repeat", f"{repeat} is negative: 0 is the ordinary run")
    confidence = expect(obj, "confidence", float, optional=True, default=None)
    if confidence is not None and not 0.0 <= float(confidence) <= 1.0:
        raise FieldError("confidence", f"{confidence} is not in [0, 1]")
    return {"repeat": repeat, "decided_by": expect(obj, "decided_by", str, optional=True, default=""),
            "confidence": None if confidence is None else float(confidence),
            "examples_sha256": expect(obj, "examples_sha256", str, optional=True, default="")}


def read(target: str | Path) -> tuple[list, list[RecordError]]:
    """Every readable record in the order written (a file, or a ``postgresql://`` URL), and one
    error (file or database, line or row, field) per skipped record."""
    return streams.read_all(target, STREAM, parse_verdict_record)


def runs(verdicts: Iterable[Verdict]) -> list[tuple[str, str]]:
    """The (judge, prompt version) pairs present, in first-seen order."""
    return list(dict.fromkeys(v.run for v in verdicts))


# --- another tool's verdicts ---------------------------------------------------------------------

_ALIASES = {
    "supported": "supported", "support": "supported", "yes": "supported", "complete": "supported",
    "fully supported": "supported", "entailment": "supported", "true": "supported", "1": "supported",
    "partial": "partial", "partially supported": "partial", "partially_supported": "partial",
    "not_supported": "not_supported", "not supported": "not_supported", "unsupported": "not_supported",
    "no": "not_supported", "contradiction": "not_supported", "false": "not_supported", "0": "not_supported",
}


def normalise_verdict(value: object) -> str | None:
    return _ALIASES.get(str(value).strip().lower().replace("-", " ").replace("_", " ")) or \
        _ALIASES.get(str(value).strip().lower())


def _item_key(value: object) -> str | None:
    """``value`` when it is an item key (a string :func:`parse_item_key` reads), else None."""
    if not isinstance(value, str):
        return None
    try:
        parse_item_key(value)
    except ValueError:
        return None
    return value


def import_external(path: str | Path, judge: str, prompt_version: str = "external") -> tuple[list[Verdict], list[RecordError]]:
    """Verdicts from another tool: CSV (header) or JSONL, each row with ``item`` (the item key)
    and ``verdict`` (supported / partial / not_supported or a common synonym), and optionally
    ``rationale`` and ``repeat`` (which run of a judge repeated on the same items: 0, the default, is the
    ordinary run; see ``judge --repeat``).  Each bad row is reported with its line and field; the rest are imported."""
    path = Path(path)
    name = str(path)
    if path.is_dir():
        raise ImportFileError(f"{name} is a folder: give the other tool's verdicts file itself (CSV or JSON lines)")
    if not path.is_file():
        raise ImportFileError(f"{name} does not exist: give the other tool's verdicts file (CSV or JSON lines)")
    rows: list[tuple[int, dict]] = []
    errors: list[RecordError] = []
    if path.suffix.lower() == ".csv":
        raw = path.read_bytes()
        try:  # (utf-8-sig: a spreadsheet's "CSV UTF-8" starts with a byte order mark, which hid the item column)
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:  # (it was a traceback)
            line = raw[:exc.start].count(b"\n") + 1
            return [], [RecordError(name, line, "(encoding)", "not UTF-8 text, so no row was imported: save the file "
                                                              "as UTF-8 (a spreadsheet's \"CSV UTF-8\")")]
        reader = csv.DictReader(io.StringIO(text, newline=""))
        columns = [c.strip() for c in reader.fieldnames or []]
        for needed, names in (("item", ("item", "item_key")), ("verdict", ("verdict",))):
            if not any(c in names for c in columns):
                return [], [RecordError(name, 1, needed, f"no {needed} column (the columns are "
                                                         f"{', '.join(columns) or 'none'}): name it {names[0]}")]
        for n, row in enumerate(reader, start=2):
            rows.append((n, {str(k).strip(): v for k, v in row.items()}))
    else:
        for n, value in read_jsonl(path, expect_object):
            if isinstance(value, RecordError):
                errors.append(value)
            else:
                rows.append((n, value))
    out: list[Verdict] = []
    for n, row in rows:
        item = _item_key(row.get("item") or row.get("item_key"))
        if item is None:
            errors.append(RecordError(name, n, "item", "missing or not an item key such as a-001#s0#c0"))
            continue
        verdict = normalise_verdict(row.get("verdict", ""))
        if verdict is None:
            given = row.get("verdict")
            errors.append(RecordError(name, n, "verdict", ("missing" if given is None or given == "" else f"{given!r}")
                                      + " is not supported / partial / not_supported"))
            continue
        repeat = _repeat(row.get("repeat"))
        if repeat is None:
            errors.append(RecordError(name, n, "repeat", f"{row.get('repeat')!r} is not a whole number of 0 or more "
                                                         "(0: the ordinary run; 1..K-1: repeats of the same judge)"))
            continue
        out.append(make(item, verdict, str(row.get("rationale") or ""), judge, prompt_version, "", repeat=repeat))
    return out, errors


def _repeat(value: object) -> int | None:
    """An imported row's ``repeat`` (missing or empty: 0, the ordinary run), or None when it is not one."""
    if value is None or value == "":
        return 0
    if type(value) is int:
        return value if value >= 0 else None
    text = str(value).strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) < 6 else None
