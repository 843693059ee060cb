"""Reports on checked answers: a streaming summary, per-answer JSON records and text for people.

The JSON shapes here are the documented check report format (docs/check-report.md), version 1.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import orjson

from citecheck.checking.checker import AnswerResult, CitationResult, SentenceResult
from citecheck.contract import reasons as reason_codes
from citecheck.errors import RecordError
from citecheck.reports.inputs import Inputs
from citecheck.reports.rates import json_rate, percent, share

REPORT_VERSION = 1
_NUMBER_AT = reason_codes.ALL_REASONS.index(reason_codes.NUMBER_NOT_IN_SOURCE)


def _rate(part: int, whole: int) -> float | None:
    return json_rate(share(part, whole))


@dataclass
class Summary:
    """Running totals over a stream of checked answers; memory does not grow with the stream."""

    answers: int = 0
    unreadable_lines: int = 0
    refused: int = 0
    citations: int = 0
    failed: int = 0
    with_quote: int = 0
    quote_in_source: int = 0
    sentences: int = 0
    uncited: int = 0
    multi_claim: int = 0
    answers_ok: int = 0
    answers_with_unsupported_number: int = 0
    invalid_markers: int = 0
    not_verifiable: int = 0
    _reasons: list[int] = field(default_factory=lambda: [0] * len(reason_codes.ALL_REASONS))

    @property
    def reasons(self) -> dict[str, int]:
        return dict(zip(reason_codes.ALL_REASONS, self._reasons))

    def add(self, result: AnswerResult) -> None:
        t = result.tally
        self.answers += 1
        self.refused += result.refused
        self.answers_ok += not t.problems
        self.invalid_markers += len(result.invalid_markers)
        self.citations += t.citations
        self.failed += t.failed
        self.with_quote += t.with_quote
        self.quote_in_source += t.quote_in_source
        self.sentences += t.sentences
        self.uncited += t.uncited
        self.multi_claim += t.multi_claim
        self.not_verifiable += t.not_verifiable
        for i, n in enumerate(t.reasons):
            if n:
                self._reasons[i] += n
        self.answers_with_unsupported_number += t.reasons[_NUMBER_AT] > 0

    def add_error(self, _error: RecordError) -> None:
        self.unreadable_lines += 1

    @property
    def failure_rate(self) -> float | None:
        """The share of failed citations, unrounded (the ``--max-failure-rate`` gate compares it)."""
        return share(self.failed, self.citations)

    def to_dict(self) -> dict:
        reasons = self.reasons
        return {
            "answers": self.answers,
            "unreadable_lines": self.unreadable_lines,
            "answers_ok": self.answers_ok,
            "answers_failing": self.answers - self.answers_ok,
            "failing_answer_rate": _rate(self.answers - self.answers_ok, self.answers),
            "refused": self.refused,
            "refusal_rate": _rate(self.refused, self.answers),
            "citations": self.citations,
            "citations_failed": self.failed,
            "citation_failure_rate": _rate(self.failed, self.citations),
            "citations_not_verifiable": self.not_verifiable,
            "citations_with_quote": self.with_quote,
            "quote_in_source": self.quote_in_source,
            "quote_in_source_rate": _rate(self.quote_in_source, self.with_quote),
            "citation_to_unretrieved": reasons[reason_codes.UNRETRIEVED_SOURCE],
            "citation_to_unretrieved_rate": _rate(reasons[reason_codes.UNRETRIEVED_SOURCE], self.citations),
            "checksum_failures": reasons[reason_codes.CHECKSUM_MISMATCH],
            "source_changed_failures": reasons[reason_codes.SOURCE_CHANGED],
            "sentences": self.sentences,
            "uncited_sentences": self.uncited,
            "uncited_sentence_rate": _rate(self.uncited, self.sentences),
            "multi_claim_sentences": self.multi_claim,
            "invalid_markers": self.invalid_markers,
            "sentences_with_unsupported_number": reasons[reason_codes.NUMBER_NOT_IN_SOURCE],
            "answers_with_unsupported_number": self.answers_with_unsupported_number,
            "reasons": reasons,
        }


# (The records hold the results' tuples as they are: both JSON writers write a tuple as a list,
# and copying each into a list was a tenth of the time the records take.)


def citation_dict(c: CitationResult) -> dict:
    return {
        "index": c.index,
        "kind": c.kind,
        "marker": c.marker,
        "label": c.label,
        "answer_start": c.answer_start,
        "answer_end": c.answer_end,
        "sentence": c.sentence,
        "chunk_index": c.chunk_index,
        "chunk_id": c.chunk_id,
        "quote": c.quote,
        "quote_start": c.quote_start,
        "quote_end": c.quote_end,
        "status": "failed" if c.reasons else "not_verifiable" if c.not_verifiable else "verified",
        "reasons": c.reasons,
    }


def sentence_dict(s: SentenceResult) -> dict:
    return {
        "index": s.index,
        "start": s.start,
        "end": s.end,
        "text": s.text,
        "citations": s.citations,
        "uncited": s.uncited,
        "refusal": s.refusal,
        "multi_claim": s.multi_claim,
        "reasons": s.reasons,
        "unsupported_numbers": s.unsupported_numbers,
        "unsupported_quotes": s.unsupported_quotes,
    }


def answer_record(result: AnswerResult, file: str, line: int) -> dict:
    """The per-answer record of the JSON report."""
    a = result.answer
    return {
        "record": "answer",
        "report_version": REPORT_VERSION,
        "file": file,
        "line": line,
        "answer_id": a.answer_id,
        "model": a.model,
        "prompt_version": a.prompt_version,
        "timestamp": a.timestamp,
        "refused": result.refused,
        "ok": result.ok,
        "invalid_markers": result.invalid_markers,
        "counts": {
            "sentences": result.tally.sentences,  # (the refusal sentence left out, as in the summary)
            "uncited_sentences": result.uncited_sentences,
            "citations": len(result.citations),
            "citations_failed": result.failed_citations,
        },
        "sentences": [sentence_dict(s) for s in result.sentences],
        "citations": [citation_dict(c) for c in result.citations],
    }


def report_line(record: dict) -> str:
    """One record of the JSON report as its line (with the newline): compact JSON, UTF-8 text as is.

    orjson writes it (several times faster than the standard library).  A record orjson refuses (a
    string with a lone surrogate, as in the field name of a refused line, or an integer past 64
    bits) is written by the standard library with the same separators and non-ASCII escaped as
    ``\\uXXXX``: still valid JSON and valid UTF-8, and it parses back to the same value."""
    return report_bytes(record).decode()


def report_bytes(record: dict) -> bytes:
    """:func:`report_line` as the UTF-8 bytes it is written as."""
    try:
        return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return (json.dumps(record, separators=(",", ":")) + "\n").encode()


def error_record(error: RecordError) -> dict:
    return {"record": "error", "report_version": REPORT_VERSION, **error.to_dict()}


def summary_record(summary: Summary, inputs: Inputs | None = None) -> dict:
    record = {"record": "summary", "report_version": REPORT_VERSION, **summary.to_dict()}
    if inputs is not None:
        record["inputs"] = inputs.to_dict()
    return record


# --- text for people -------------------------------------------------------------------------


def _short(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def sentence_flags(s: SentenceResult, words: bool = True) -> list[str]:
    """What is wrong or notable about a sentence: reason codes (or their descriptions) and flags."""
    flags = ["refusal sentence"] if s.refusal and words else []
    if s.uncited:  # (in words: a sentence whose every citation failed is not "uncited" beside them)
        flags.append("no valid citation" if words and s.citations else "uncited")
    if s.multi_claim:
        flags.append("several claims, one source")
    for code in s.reasons:
        text = reason_codes.DESCRIPTIONS[code] if words else code
        if code == reason_codes.NUMBER_NOT_IN_SOURCE:
            text += f" ({', '.join(s.unsupported_numbers)})" if words else f" {', '.join(s.unsupported_numbers)}"
        flags.append(text)
    return flags


def answer_text(result: AnswerResult, file: str, line: int) -> list[str]:
    """Lines describing one answer: one line when it is clean, details when it is not."""
    a = result.answer
    head = f"{file}:{line} {a.answer_id}"
    if result.refused and result.ok:
        return [f"{head}: refused"]
    n = len(result.citations)
    unverifiable = sum(1 for c in result.citations if c.not_verifiable and not c.reasons)
    also = f", {unverifiable} not verifiable" if unverifiable else ""  # (as the summary counts them)
    if result.ok:  # "verified" only of the citations whose quote was found: never of the unverifiable
        verified = n - unverifiable
        return [f"{head}: ok ({verified} citation{'s' * (verified != 1)} verified{also})"]
    lines = [f"{head}: {'refused, but ' if result.refused else ''}{result.failed_citations} of {n} citations "
             f"failed{also}, {result.uncited_sentences} uncited sentence(s)"]  # (a refusal that fails says why)
    for s in result.sentences:
        flags = sentence_flags(s, words=False)
        bad = [result.citations[i] for i in s.citations if result.citations[i].reasons]
        if not flags and not bad:
            continue
        lines.append(f"  sentence {s.index + 1} \u201c{_short(s.text)}\u201d" + (f": {'; '.join(flags)}" if flags else ""))
        for c in bad:
            what = f"[{c.marker}]" if c.kind == "marker" else f"span {c.answer_start}-{c.answer_end}"
            lines.append(f"    {what} -> {c.chunk_id or '?'}: {', '.join(c.reasons)}")
    return lines


def summary_text(summary: Summary, inputs: Inputs | None = None) -> list[str]:
    d = summary.to_dict()
    unretrieved = d["citation_to_unretrieved"]
    lines = [
        "",
        *([inputs.text()] if inputs is not None else []),
        f"answers: {d['answers']} ({d['answers_failing']} failing = {percent(d['answers_failing'], d['answers'])}, "
        f"{d['answers_ok']} clean, {d['refused']} refused = {percent(d['refused'], d['answers'])})"
        + (f", {d['unreadable_lines']} unreadable line(s)" if d["unreadable_lines"] else ""),
        f"citations: {d['citations']}, failed {d['citations_failed']} = {percent(d['citations_failed'], d['citations'])}"
        + (f", not verifiable {d['citations_not_verifiable']}" if d["citations_not_verifiable"] else ""),
        f"quote in source: {d['quote_in_source']} of {d['citations_with_quote']} quoted = "
        f"{percent(d['quote_in_source'], d['citations_with_quote'])}",
        f"cite an unretrieved source: {unretrieved} = {percent(unretrieved, d['citations'])}",
        f"checksum failures: {d['checksum_failures']}, source changed: {d['source_changed_failures']}",
        f"uncited sentences: {d['uncited_sentences']} of {d['sentences']} = {percent(d['uncited_sentences'], d['sentences'])}",
        f"invalid markers: {d['invalid_markers']}; answers with a number not in its sources: "
        f"{d['answers_with_unsupported_number']}",
    ]
    counted = [f"{code} {n}" for code, n in d["reasons"].items() if n]
    if counted:
        lines.append("reasons: " + ", ".join(counted))
    return lines
