"""``expertqa``: ExpertQA's long-form answers with expert support labels (docs/importers.md).

Input: the ExpertQA ``lfqa`` JSON lines (Malaviya et al., NAACL 2024, MIT licence): one question
per line with answers from several systems, each with ``answer_string`` (inline ``[n]``
markers), ``attribution`` (``[n] URL``) and ``claims`` (one answer sentence each, its
``evidence`` as ``"[n] URL\\n\\npassage"``, and expert labels).

Output: one log answer per (question, system), id ``eqa-<file stem>-<line>-<system>``; chunk
``n`` is source ``[n]`` (its URL as source and document id, its passage as text, empty when the
data has only the URL).  The citations are the answer's markers; ExpertQA gives no quotes, so
the checker reports them ``quote_missing``: that is right, they cannot be highlighted.  With
``--labels-out``, every claim's ``support`` label becomes a label of each citation item of the
matching answer sentence, reviewer ``expertqa:<annotator_id>``:

    Complete -> supported     Partial -> partial     Incomplete -> not_supported (default)
    Missing -> not_supported  N/A (or no label) -> no label

"Missing" claims carry no evidence at all (so a judge cannot score them); "Incomplete" claims
carry evidence that the expert found did not establish the claim, which is the case a judge
must catch.  ``--incomplete partial`` maps it to partial instead.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from citecheck.checking.checker import check_answer, strip_markers
from citecheck.contract.log import Answer, Chunk, checksum
from citecheck.errors import FieldError, RecordError
from citecheck.importers import read_records
from citecheck.labelling.items import items_of
from citecheck.labelling.labels import Label, make_label
from citecheck.text.normalise import normalise

SUPPORT = {"Complete": "supported", "Partial": "partial", "Incomplete": "not_supported", "Missing": "not_supported"}
_ATTRIBUTION = re.compile(r"^\[(\d+)\]\s*(\S*)")
_EVIDENCE = re.compile(r"^\[(\d+)\]\s*(\S*)\s*(?:\n+(.*))?\Z", re.S)
_MARKER = re.compile(r"\[(\d+)\]")


def _key(text: str) -> str:
    return normalise(strip_markers(text), casefold=True)


def convert_answer(question: str, system: str, data: Any, answer_id: str) -> tuple[Answer, list[dict]]:
    """One system's answer as a log answer, and its claims (for labels)."""
    if not isinstance(data, dict):
        raise FieldError(f"answers.{system}", "expected an object")
    text = data.get("answer_string")
    if not isinstance(text, str):
        raise FieldError(f"answers.{system}.answer_string", "is required (the answer text)")
    urls: dict[int, str] = {}
    for line in data.get("attribution") or []:
        m = _ATTRIBUTION.match(line) if isinstance(line, str) else None
        if m:
            urls.setdefault(int(m.group(1)), m.group(2))
    passages: dict[int, str] = {}
    claims = data.get("claims") or []
    if not isinstance(claims, list):
        raise FieldError(f"answers.{system}.claims", "expected a list")
    for claim in claims:
        for ev in (claim.get("evidence") or []) if isinstance(claim, dict) else []:
            m = _EVIDENCE.match(ev) if isinstance(ev, str) else None
            if m:
                n = int(m.group(1))
                urls.setdefault(n, m.group(2))
                if (m.group(3) or "").strip() and n not in passages:
                    passages[n] = m.group(3).strip()
    highest = max([*urls, *(int(n) for n in _MARKER.findall(text))], default=0)
    chunks = []
    for n in range(1, highest + 1):
        passage = passages.get(n, "")
        url = urls.get(n) or f"unknown-source-{n}"
        chunks.append(Chunk(f"{answer_id}-{n}", url, url, None, None, passage, None, None, checksum(passage), None, None))
    answer = Answer(answer_id=answer_id, question=question, answer=text, chunks=tuple(chunks),
                    model=system, prompt_version="expertqa")
    return answer, [c for c in claims if isinstance(c, dict)]


def labels_for(answer: Answer, claims: list[dict], reviewer: str, mapping: dict = SUPPORT) -> tuple[list[Label], int]:
    """Labels for the citation items of each claim's sentence; and how many labelled claims
    matched no sentence."""
    result = check_answer(answer)
    sentences = [(s.index, _key(s.text)) for s in result.sentences]
    items = items_of(result)
    out: list[Label] = []
    unmatched = 0
    for claim in claims:
        label = mapping.get(claim.get("support") or "")
        text = claim.get("claim_string")
        if label is None or not isinstance(text, str):
            continue
        key = _key(text)
        index = next((i for i, s in sentences if s == key), None)
        if index is None and sentences:
            score, index = max((fuzz.ratio(s, key), i) for i, s in sentences)
            if score < 90:
                index = None
        if index is None:
            unmatched += 1
            continue
        for item in items:
            if item.sentence == index and item.citation is not None:
                out.append(make_label(item, label, reviewer, note="ExpertQA support: " + str(claim.get("support")),
                                      at="2024-06-16T00:00:00Z"))
    return out, unmatched


def convert_file(path: str | Path, incomplete: str = "not_supported") -> tuple[list[Answer], list[Label], list[RecordError], int]:
    mapping = {**SUPPORT, "Incomplete": incomplete}
    name = str(path)
    stem = Path(path).stem
    answers: list[Answer] = []
    labels: list[Label] = []
    errors: list[RecordError] = []
    unmatched = 0
    for position, record in read_records(path):
        if isinstance(record, RecordError):
            errors.append(record)
            continue
        try:
            if not isinstance(record, dict) or not isinstance(record.get("question"), str):
                raise FieldError("question", "is required (a string)")
            if not isinstance(record.get("answers"), dict):
                raise FieldError("answers", "is required (answers keyed by system)")
            reviewer = f"expertqa:{record.get('annotator_id') or 'unknown'}"
            for system, data in record["answers"].items():
                answer, claims = convert_answer(record["question"].strip(), system, data,
                                                f"eqa-{stem}-{position}-{system}")
                found, missed = labels_for(answer, claims, reviewer, mapping)
                answers.append(answer)
                labels.extend(found)
                unmatched += missed
        except FieldError as exc:
            errors.append(RecordError(name, position, exc.field, exc.message))
    return answers, labels, errors, unmatched


def importer(args):
    from dataclasses import asdict

    from citecheck.storage.lines import append_records

    total_labels = unmatched = 0
    for path in args.input:
        answers, labels, errors, missed = convert_file(path, args.incomplete)
        yield from errors
        yield from answers
        if args.labels_out:
            append_records(args.labels_out, [asdict(label) for label in labels])
        total_labels += len(labels)
        unmatched += missed
    if args.labels_out:
        args.err.write(f"wrote {total_labels} label(s) to {args.labels_out}; {unmatched} labelled claim(s) matched "
                       "no answer sentence and were left out\n")


def add_parser(sub, common) -> None:
    p = sub.add_parser("expertqa", parents=[common], help="ExpertQA answers, and their expert support labels")
    p.add_argument("input", nargs="+", help="ExpertQA lfqa JSON-lines file(s)")
    p.add_argument("--labels-out", help="append the expert support labels to this labels file")
    p.add_argument("--incomplete", choices=["not_supported", "partial"], default="not_supported",
                   help="label for ExpertQA's 'Incomplete' support (default not_supported)")
    p.set_defaults(importer=importer)
