"""The mechanical citation checker: no model involved.

``check_answer`` decides, for every citation of one logged answer, whether it is verified and,
if not, why (stable codes from :mod:`citecheck.contract.reasons`); and for every sentence whether it is cited,
whether its numbers and quoted text appear in its verified sources, and whether it joins several
claims under one citation.  See docs/checks.md for the rules.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass
from typing import Final, NamedTuple

from citecheck.contract import reasons as reason_codes
from citecheck.contract.corpus import Corpus
from citecheck.contract.log import Answer, Chunk, Citation, checksum
from citecheck.text.normalise import find_quote, normalise, same_text
from citecheck.text.sentences import (
    COMPILED,
    MARKER,
    Sentence,
    digit_at,
    digits_end,
    marker_spans,
    sentence_at,
    split_sentences,
)

DEFAULT_REFUSAL = "I cannot answer from the sources."

# NamedTuples built in the hot loop are made with tuple.__new__ directly: every field given in
# order, without the generated __new__'s extra call (a few per cent of the check's time).
_new: Final = tuple.__new__

_MARKER: Final = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
# A marker of 19 digits or more cites no retrieved chunk: it is checked as this number (out of range).
_HUGE_MARKER: Final = 10 ** 18
# Up to this many entries logged inside one marker are searched in turn; more get a queue per number.
_FEW: Final = 8
_ANY_MARKER: Final = re.compile(MARKER)
# A number; one glued to a preceding letter ("M2", "sha256") is a name, not a quantity (see _numbers).
# (Checking the letter in Python is faster than a lookbehind, which the regex engine would try at
# every position of the sentence.  It starts with one digit, ``\d\d*`` rather than ``\d+``: a
# pattern that starts with a character class is searched for by a quick scan of the text for that
# class, one that starts with a repeat is tried as a match at every position, a fifth slower.)
_NUMBER: Final = re.compile(r"\d\d*(?:[.,]\d+)*")
# The same for ASCII text, where \d is [0-9]: a range test per character instead of a Unicode lookup.
_ASCII_NUMBER: Final = re.compile(r"[0-9][0-9]*(?:[.,][0-9]+)*")
_QUOTED: Final = re.compile(r"\"([^\"\n]+)\"|\u201c([^\u201d\n]+)\u201d")
_CLAUSE_HINT = re.compile(r";| (?:and|but|while|whereas|plus) ")
_CLAUSE_SPLIT: Final = re.compile(r";|,?\s+(?:and|but|while|whereas|plus)\s+", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """How to check. ``refusals`` are the exact sentences that mean "the sources do not answer"."""

    casefold: bool = False
    refusals: tuple[str, ...] = (DEFAULT_REFUSAL,)
    corpus: Corpus | None = None

    def __reduce__(self):  # pickled by field (Dask sends it to workers); the compiled class needs it
        return (CheckOptions, (self.casefold, self.refusals, self.corpus))


class CitationResult(NamedTuple):
    index: int  # type: ignore[assignment]  # a field, not tuple.index
    kind: str
    marker: int | None
    label: str | None
    answer_start: int
    answer_end: int
    chunk_index: int | None  # into answer.chunks; None when it resolves to no retrieved chunk
    chunk_id: str | None
    quote: str | None
    quote_start: int | None  # where the quote is in the chunk, when it was found there
    quote_end: int | None
    reasons: tuple[str, ...]
    sentence: int | None  # the first sentence this citation supports
    # points at a retrieved chunk in a format that gives no quote (locator.no_quote), and nothing
    # else failed: neither verified nor failed (docs/checks.md, "Not verifiable")
    not_verifiable: bool = False

    @property
    def verified(self) -> bool:
        return not self.reasons and not self.not_verifiable

    @property
    def status(self) -> str:
        """``verified``, ``not_verifiable`` or ``failed``."""
        return "failed" if self.reasons else "not_verifiable" if self.not_verifiable else "verified"

    @property
    def valid(self) -> bool:
        """Points at a retrieved chunk (whether or not its quote checks out)."""
        return self.chunk_index is not None


class SentenceResult(NamedTuple):
    index: int  # type: ignore[assignment]  # a field, not tuple.index
    start: int
    end: int
    text: str
    citations: tuple[int, ...]
    uncited: bool
    refusal: bool
    multi_claim: bool
    reasons: tuple[str, ...]
    unsupported_numbers: tuple[str, ...] = ()
    unsupported_quotes: tuple[str, ...] = ()


class Tally(NamedTuple):
    """An answer's counts, taken while it is checked, so reports need not walk it again."""

    citations: int
    failed: int  # citations with any reason
    with_quote: int  # citations of a retrieved chunk that carry a non-blank quote
    quote_in_source: int  # ... whose quote is in the chunk (at its offsets or elsewhere)
    sentences: int  # sentences that are not the refusal sentence
    uncited: int
    multi_claim: int
    sentence_problems: int  # sentence-level reason codes
    reasons: tuple[int, ...]  # occurrences of each code, in R.ALL_REASONS order
    not_verifiable: int = 0  # citations neither verified nor failed

    @property
    def problems(self) -> int:
        return self.failed + self.uncited + self.sentence_problems


_REASON_AT: Final = {code: i for i, code in enumerate(reason_codes.ALL_REASONS)}
_OUT_OF_RANGE: Final = (reason_codes.MARKER_OUT_OF_RANGE,)


@dataclass(frozen=True, slots=True, init=False)
class AnswerResult:
    answer: Answer
    sentences: tuple[SentenceResult, ...]
    citations: tuple[CitationResult, ...]
    refused: bool
    invalid_markers: tuple[int, ...]
    tally: Tally

    # (written out, as Answer's is: the compiled build runs it as code, the generated one as Python)
    def __init__(self, answer: Answer, sentences: tuple[SentenceResult, ...], citations: tuple[CitationResult, ...],
                 refused: bool, invalid_markers: tuple[int, ...], tally: Tally) -> None:
        object.__setattr__(self, "answer", answer)
        object.__setattr__(self, "sentences", sentences)
        object.__setattr__(self, "citations", citations)
        object.__setattr__(self, "refused", refused)
        object.__setattr__(self, "invalid_markers", invalid_markers)
        object.__setattr__(self, "tally", tally)

    def __reduce__(self):  # pickled by field: a compiled frozen class cannot be set field by field
        return (AnswerResult, (self.answer, self.sentences, self.citations, self.refused, self.invalid_markers,
                               self.tally))

    @property
    def failed_citations(self) -> int:
        return self.tally.failed

    @property
    def uncited_sentences(self) -> int:
        return sum(1 for s in self.sentences if s.uncited)

    @property
    def ok(self) -> bool:
        """No citation failed, no sentence is uncited or has a sentence-level reason."""
        return not self.tally.problems

    def reason_counts(self) -> dict[str, int]:
        return {code: n for code, n in zip(reason_codes.ALL_REASONS, self.tally.reasons) if n}


def review_item_count(result: AnswerResult) -> int:
    """How many review items the answer has (``labelling.items.items_of``: one per cited chunk of
    each sentence that is not a refusal, one for a sentence without any), without making them:
    here, in the compiled build, because the checked store counts them for every answer."""
    citations = result.citations
    total = 0
    for s in result.sentences:
        if s.refusal:
            continue
        cited = 0
        for i in s.citations:
            if citations[i].chunk_index is not None:
                cited += 1
        total += cited if cited else 1
    return total


# --- citations -------------------------------------------------------------------------------


class _Raw:
    """A citation before checking: where it sits in the answer, and the logged citation it checks
    (its quote, offsets, label, and for a span the chunk or document it names).  A marker found in
    the text with no logged entry checks :data:`_BARE`; a marker never names a chunk by id (its
    number does), so ``cited.chunk_id`` is read for spans only.  A plain class, not a NamedTuple:
    the compiled build makes one without ``tuple.__new__``'s generic call (eight per answer)."""

    def __init__(self, kind: str, answer_start: int, answer_end: int, marker: int | None, cited: Citation,
                 span_mismatch: bool = False, no_quote: bool = False) -> None:
        self.kind = kind
        self.answer_start = answer_start
        self.answer_end = answer_end
        self.marker = marker
        self.cited = cited
        self.span_mismatch = span_mismatch  # the answer text at the span is not the provider's text for it
        self.no_quote = no_quote  # the format gives no quote (locator.no_quote): not verifiable, not missing


_BARE = Citation("marker")  # what a marker with no logged entry asks: nothing beyond its number


def span_text(answer: str, c: Citation) -> str:
    """The answer text a provider's span account is about: the citation's span, or the inline link
    it was moved from (``locator.link_start``/``link_end``, see docs/importers.md)."""
    loc = c.locator or {}
    start, end = loc.get("link_start"), loc.get("link_end")
    if type(start) is int and type(end) is int:
        return answer[start:end]
    return answer[c.answer_start or 0:c.answer_end or 0]


def span_mismatch(answer: str, c: Citation) -> bool:
    """A provider's own account of its span (``locator.span_text``, or ``span_contains`` for a
    link) disagrees with the answer text at the span's offsets (see docs/importers.md)."""
    loc = c.locator
    if not loc or ("span_text" not in loc and "span_contains" not in loc):
        return False
    found = span_text(answer, c)
    if "span_text" in loc:
        expected = loc["span_text"]
        return not (isinstance(expected, str) and (found == expected or same_text(found, expected, False)))
    return not (isinstance(loc["span_contains"], str) and loc["span_contains"] in found)


def _marker_citations(answer: Answer) -> tuple[list[_Raw], bool]:
    """One citation per ``[n]`` in the answer, with the quote of a matching ``kind: marker`` entry;
    and whether the list is in text order (it is unless entries with no marker were added).

    The entry for a marker at ``start:end`` is the first unused one logged at that marker (``at``
    inside the marker), else the first unused one with no position.  Linear however many entries
    share a marker: the entries with a position are walked once alongside the markers (which do
    not overlap), those without one wait in a queue per marker number."""
    text = answer.answer
    entries = [c for c in answer.citations if c.kind == "marker"]
    placed: list[tuple[int, int]] = []  # (at, entry) of the entries with a position, by position
    free: dict[int | None, deque[int]] = {}
    for i, entry in enumerate(entries):
        at = entry.at
        if at is None:
            queue = free.get(entry.marker)
            if queue is None:
                queue = free[entry.marker] = deque()
            queue.append(i)
        else:
            placed.append((at, i))
    placed.sort()  # (by position, then by entry: the first logged comes first; mostly sorted already)
    used = 0
    taken: list[bool] = [False] * len(entries)
    out: list[_Raw] = []
    inside: list[int] = []  # (one list, cleared for each marker)
    k, end_k = 0, len(placed)
    for start, end in _marker_spans(text):
        group = text[start + 1:end - 1]
        inside.clear()  # the entries logged inside this marker, in log order
        while k < end_k and placed[k][0] < start:
            k += 1
        while k < end_k and placed[k][0] < end:
            inside.append(placed[k][1])
            k += 1
        here: dict[int | None, deque[int]] | None = None
        if len(inside) > _FEW:  # many entries at one marker: a queue per number, as for ``free``
            inside.sort()
            here = {}
            for i in inside:
                queue = here.get(entries[i].marker)
                if queue is None:
                    queue = here[entries[i].marker] = deque()
                queue.append(i)
        elif len(inside) > 1:
            inside.sort()
        for part in (group.split(",") if "," in group else (group,)):
            # (no slow or refused conversion of 5,000 digits: 19 digits or more is out of range)
            if len(part) == 1 and "0" <= part <= "9":
                n = ord(part) - 48  # (one ASCII digit, the common case, without a call of int)
            else:
                n = int(part) if len(part) < 19 else _HUGE_MARKER
            pick = -1
            if here is not None:
                queue = here.get(n)
                if queue:
                    pick = queue.popleft()
            else:  # a few entries: the first unused one for this number, in log order
                for i in inside:
                    if not taken[i] and entries[i].marker == n:
                        pick = i
                        break
            if pick < 0 and free:
                queue = free.get(n)
                if queue:
                    pick = queue.popleft()
            if pick >= 0:
                taken[pick] = True
                used += 1
                entry = entries[pick]
                loc = entry.locator
                # (a format that gives the marker and no quote: not verifiable, not "quote missing")
                out.append(_Raw("marker", start, end, n, entry, False, loc is not None and loc.get("no_quote") is True))
            else:
                out.append(_Raw("marker", start, end, n, _BARE, False, False))
    if used == len(entries):
        return out, True
    for i, entry in enumerate(entries):  # entries whose marker is not in the text still get checked
        if not taken[i]:
            at = entry.at if entry.at is not None and entry.at <= len(text) else len(text)
            out.append(_Raw("marker", at, at, entry.marker, entry,
                            no_quote=entry.locator is not None and entry.locator.get("no_quote") is True))
    return out, False


def _marker_spans(text: str) -> list[tuple[int, int]]:
    """The spans of the plain markers (``[1]``, ``[1, 2]``) in ``text``: by :data:`_MARKER`, or
    compiled by ``str.find`` and a walk (:func:`~citecheck.text.sentences.marker_end`), alike."""
    if not COMPILED:
        return [m.span() for m in _MARKER.finditer(text)]
    return marker_spans(text, 0)


def _position(raw: _Raw) -> tuple[int, int]:
    return raw.answer_start, raw.answer_end


def _raw_citations(answer: Answer) -> list[_Raw]:
    raws, ordered = _marker_citations(answer)
    for c in answer.citations:
        if c.kind == "span":
            ordered = False
            raws.append(_Raw("span", c.answer_start or 0, c.answer_end or 0, None, c,
                             span_mismatch=c.locator is not None and span_mismatch(answer.answer, c),
                             no_quote=c.locator is not None and c.locator.get("no_quote") is True))
    if not ordered:  # markers found in the text are in text order already
        raws.sort(key=_position)
    return raws


class _Chunks:
    """Per-answer lookups and caches over the retrieved chunks."""

    def __init__(self, chunks: tuple[Chunk, ...], options: CheckOptions):
        self.chunks = chunks
        self.options = options
        # chunk id and document id -> chunk: made when a span citation first needs them
        self.by_id: dict[str, int] | None = None
        self.by_doc: dict[str, list[int]] = {}
        self._integrity: dict[int, tuple[str, ...]] = {}
        self._numbers: dict[int, dict[str, bool]] = {}  # chunk -> number -> in its text
        self._normalised: dict[int, str] = {}

    def _index(self) -> dict[str, int]:
        by_id: dict[str, int] = {}
        for i, chunk in enumerate(self.chunks):
            if chunk.chunk_id is not None:
                by_id.setdefault(chunk.chunk_id, i)
            if chunk.document_id is not None:
                self.by_doc.setdefault(chunk.document_id, []).append(i)
        self.by_id = by_id
        return by_id

    def resolve(self, raw: _Raw) -> int | None:
        if raw.kind == "marker":
            n = raw.marker or 0
            return n - 1 if 1 <= n <= len(self.chunks) else None
        by_id = self.by_id if self.by_id is not None else self._index()
        cited = raw.cited
        if cited.chunk_id is not None:
            return by_id.get(cited.chunk_id)
        candidates = self.by_doc.get(cited.document_id or "", [])
        quote = cited.quote
        if len(candidates) > 1 and quote:
            for i in candidates:
                if self.find(i, quote):
                    return i
        return candidates[0] if candidates else None

    def find(self, i: int, quote: str) -> tuple[int, int] | None:
        """``find_quote`` in chunk ``i``, with its normalised text made once for every quote."""
        text = self.chunks[i].text
        if not quote.strip():
            return None
        pos = text.find(quote)  # (find_quote's first step, before the normalised text is needed)
        if pos >= 0:
            return pos, pos + len(quote)
        return find_quote(text, quote, self.options.casefold, self.normalised(i))

    def integrity(self, i: int) -> tuple[str, ...]:
        """Reasons that concern the chunk itself, whatever is quoted from it (cached)."""
        found = self._integrity.get(i)
        if found is None:
            chunk = self.chunks[i]
            codes = []
            if not chunk.chunk_id or not chunk.source or not chunk.checksum:
                codes.append(reason_codes.MISSING_SOURCE_METADATA)
            if chunk.checksum and checksum(chunk.text) != chunk.checksum:
                codes.append(reason_codes.CHECKSUM_MISMATCH)
            corpus = self.options.corpus
            if corpus is not None and corpus.changed(chunk):
                codes.append(reason_codes.SOURCE_CHANGED)
            found = self._integrity[i] = tuple(codes)
        return found

    def has_number(self, i: int, number: str) -> bool:
        known = self._numbers.get(i)
        if known is None:
            known = self._numbers[i] = {}
        found = known.get(number)
        if found is None:
            found = known[number] = number_in(self.chunks[i].text, number)
        return found

    def normalised(self, i: int) -> str:
        found = self._normalised.get(i)
        if found is None:
            found = self._normalised[i] = normalise(self.chunks[i].text, self.options.casefold)
        return found


def _locate(chunks: _Chunks, i: int, cited: Citation, casefold: bool) -> tuple[str | None, int | None, int | None]:
    """(reason or None, quote start, quote end) for a quote against the text of chunk ``i``."""
    quote = cited.quote
    if not quote or quote.isspace():
        return reason_codes.QUOTE_MISSING, None, None
    qs, qe = cited.quote_start, cited.quote_end
    if qs is not None and qe is not None:
        text = chunks.chunks[i].text
        at = text[qs:qe]
        if at == quote or (qe <= len(text) and same_text(at, quote, casefold)):
            return None, qs, qe
        return (reason_codes.OFFSET_MISMATCH if chunks.find(i, quote) else reason_codes.QUOTE_NOT_FOUND), None, None
    found = chunks.find(i, quote)
    if found is None:
        return reason_codes.QUOTE_NOT_FOUND, None, None
    return None, found[0], found[1]


def _check_citation(index: int, raw: _Raw, chunks: _Chunks, sentence: int | None) -> CitationResult:
    if raw.kind == "marker":  # (resolve's common case, inline)
        n = raw.marker or 0
        i = n - 1 if 0 < n <= len(chunks.chunks) else None
    else:
        i = chunks.resolve(raw)
    qs = qe = None
    blind = False
    cited = raw.cited
    if i is None:
        codes: tuple[str, ...] = (reason_codes.MARKER_OUT_OF_RANGE if raw.kind == "marker" else reason_codes.UNRETRIEVED_SOURCE,)
        chunk_id = None if raw.kind == "marker" else cited.chunk_id
    else:
        chunk = chunks.chunks[i]
        chunk_id = chunk.chunk_id
        reason, qs, qe = _locate(chunks, i, cited, chunks.options.casefold)
        if reason == reason_codes.QUOTE_MISSING and raw.no_quote:
            reason, blind = None, True
        integrity = chunks.integrity(i)
        codes = integrity + (reason,) if reason else integrity
    if raw.span_mismatch:
        codes = (*codes, reason_codes.SPAN_MISMATCH)
    return _new(CitationResult, (
        index, raw.kind, raw.marker, cited.label, raw.answer_start, raw.answer_end, i, chunk_id,
        cited.quote, qs, qe, reason_codes.ordered(list(codes)) if len(codes) > 1 else codes, sentence, blind and not codes,
    ))


# --- sentences -------------------------------------------------------------------------------


def _numbers(text: str) -> list[str]:
    """The numbers of ``text`` (commas removed), in order; one glued to a preceding letter is a name."""
    return _numbers_scan(text) if COMPILED else _numbers_regex(text)


def _numbers_regex(text: str) -> list[str]:
    """:func:`_numbers` by regex: what the pure-Python modules run (the faster way in Python)."""
    found: list[str] = (_ASCII_NUMBER if text.isascii() else _NUMBER).findall(text)
    if not found:
        return found
    # Where each was found, without a match object each: a number starts with a digit and the
    # pattern matches at every digit, so the first occurrence of its text after the previous one
    # is exactly where the search found it.
    out = []
    at = 0
    for number in found:
        at = text.find(number, at)
        if not (at and text[at - 1].isalpha()):
            out.append(number.replace(",", "") if "," in number else number)
        at += len(number)
    return out


def _numbers_scan(text: str) -> list[str]:
    """:func:`_numbers` by one walk over the characters: what the compiled build runs, where it is
    four times faster than the regex search (in Python it would be slower).  It follows the
    patterns above exactly (a property test holds the two equal): digits, then any number of
    ``.`` or ``,`` each followed by digits."""
    out: list[str] = []
    n = len(text)
    i = 0
    while i < n:
        c = ord(text[i])
        if c < 48 or (57 < c and (c < 128 or not text[i].isdecimal())):  # (digit_at, inline)
            i += 1
            continue
        start = i
        i = digits_end(text, i + 1)
        while i + 1 < n and (ord(text[i]) == 46 or ord(text[i]) == 44) and digit_at(text, i + 1):
            i = digits_end(text, i + 2)
        if not (start and text[start - 1].isalpha()):
            number = text[start:i]
            out.append(number.replace(",", "") if "," in number else number)
    return out


def _glued(text: str, i: int, j: int) -> bool:
    """True when ``text[i:j]`` is part of a longer number or of a name such as ``M2``."""
    if i > 0:
        before = text[i - 1]
        if before.isalnum() or (before in ".," and i > 1 and text[i - 2].isdigit()):
            return True
    if j < len(text):
        after = text[j]
        if after.isdigit() or (after in ".," and j + 1 < len(text) and text[j + 1].isdigit()):
            return True
    return False


def number_in(text: str, number: str) -> bool:
    """True when ``number`` (commas removed) occurs in ``text`` as a whole number, with or without
    thousands commas.  A plain substring search: no regex scan of the whole text."""
    forms = [number]
    if number.isdigit() and len(number) > 3:
        head = len(number) % 3 or 3  # thousands commas, by string slicing (no integer conversion)
        forms.append(",".join([number[:head]] + [number[i:i + 3] for i in range(head, len(number), 3)]))
    for form in forms:
        start = text.find(form)
        while start >= 0:
            if not _glued(text, start, start + len(form)):
                return True
            start = text.find(form, start + 1)
    return False


def strip_markers(text: str) -> str:
    """``text`` without citation markers (the spaces before them stay)."""
    return _strip_markers_walk(text) if COMPILED else _ANY_MARKER.sub("", text)


def _strip_markers_walk(text: str) -> str:
    """:func:`strip_markers` as the compiled build runs it: each "[" found by ``str.find``, the
    marker walked (:func:`~citecheck.text.sentences.marker_end`); the regex's result exactly."""
    spans = marker_spans(text)
    if not spans:
        return text
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(text[last:start])
        last = end
    parts.append(text[last:])
    return "".join(parts)


_MARKER_WITH_SPACE: Final = re.compile(rf"\s*{MARKER}")


def _has_clause_hint(text: str) -> bool:
    """``_CLAUSE_HINT.search(text)``, as substring tests (several times faster than the regex)."""
    return (";" in text or " and " in text or " but " in text or " while " in text or " whereas " in text
            or " plus " in text)


def _clauses(text: str) -> int:
    """How many clauses of three or more words ``text`` joins with ';', 'and', 'but', 'while'..."""
    if not _has_clause_hint(text):
        return 1
    return sum(1 for part in _CLAUSE_SPLIT.split(text) if len(part.split()) >= 3)


def _is_multi_claim(text: str, cited: list[CitationResult]) -> bool:
    """Several claims, fewer verified quotes: a quote covers one clause, or as many as it holds itself."""
    claims = _clauses(text)
    if claims < 2:
        return False  # (cheap: most sentences have no joining word at all)
    quotes = {(c.chunk_index, c.quote) for c in cited if not c.reasons}
    return sum(max(1, _clauses(q or "")) for _, q in quotes) < claims


def _sentence_result(
    s: Sentence, cited: list[CitationResult], chunks: _Chunks, refusals: _Refusals, casefold: bool
) -> SentenceResult:
    text = s.text
    plain = strip_markers(text) if "[" in text else text
    is_refusal = refusals.match(text)
    valid = False
    verified: list[int] = []
    textless = False  # a not-verifiable citation whose source has no text: nothing to check against
    for c in cited:
        if c.chunk_index is not None:
            valid = True
            if not c.reasons:
                if c.not_verifiable and not chunks.chunks[c.chunk_index].text:
                    textless = True
                else:
                    verified.append(c.chunk_index)
    codes: tuple[str, ...] = ()
    bad_numbers: tuple[str, ...] = ()
    bad_quotes: tuple[str, ...] = ()
    if cited and not is_refusal and (verified or not textless):
        numbers = _numbers(plain)
        if numbers:
            bad: list[str] | None = None  # (made only for a sentence that has one: most have none)
            for n in dict.fromkeys(numbers) if len(numbers) > 1 else numbers:
                found = False
                for i in verified:
                    if chunks.has_number(i, n):
                        found = True
                        break
                if not found:
                    if bad is None:
                        bad = []
                    bad.append(n)
            if bad is not None:
                bad_numbers = tuple(bad)
                codes = _NUMBER_CODE
        if '"' in plain or "\u201c" in plain:
            quotes: list[str] = []
            for m in _QUOTED.finditer(plain):
                quoted = normalise(m.group(1) or m.group(2), casefold)
                if quoted and not any(quoted in chunks.normalised(i) for i in verified):
                    quotes.append(m.group(1) or m.group(2))
            if quotes:
                bad_quotes = tuple(quotes)
                codes = (*codes, reason_codes.QUOTED_TEXT_NOT_IN_SOURCE)
    multi = bool(verified) and _has_clause_hint(plain) and _is_multi_claim(plain, cited)
    return _new(SentenceResult, (
        s.index, s.start, s.end, text, tuple([c.index for c in cited]) if cited else (),
        not valid and not is_refusal, is_refusal, multi, codes, bad_numbers, bad_quotes,
    ))


_NUMBER_CODE: Final = (reason_codes.NUMBER_NOT_IN_SOURCE,)


class _Refusals:
    """The refusal sentences, normalised, with a cheap length test before normalising a sentence."""

    def __init__(self, sentences: tuple[str, ...]):
        self.normalised = frozenset(normalise(r, True) for r in sentences)
        lengths = [len(r) for r in self.normalised] or [0]
        self.shortest, self.longest = min(lengths), max(lengths)
        self.firsts = frozenset(r[:1] for r in self.normalised) | {"["}

    def match(self, text: str) -> bool:
        """True when ``text`` (markers and whitespace aside, any case) is a refusal sentence."""
        if not self.normalised or len(text) < self.shortest or len(text) > 2 * self.longest + 20:
            return False
        if text.lstrip()[:1].casefold()[:1] not in self.firsts:  # cheap: most sentences differ at once
            return False
        if "[" in text:
            text = _MARKER_WITH_SPACE.sub("", text)
        return normalise(text, True) in self.normalised


def _sentences_of(raw: _Raw, sentences: list[Sentence], starts: list[int]) -> list[int]:
    if raw.kind == "marker" or raw.answer_end <= raw.answer_start:
        i = sentence_at(sentences, starts, raw.answer_start)
        if i is None and sentences and raw.answer_start >= sentences[-1].end:
            i = len(sentences) - 1
        return [] if i is None else [i]
    # The sentences that overlap the span: from the first that ends after its start (sentences are
    # in order and do not overlap), so many span citations do not each walk every sentence.
    lo, hi = 0, len(sentences)
    while lo < hi:
        mid = (lo + hi) // 2
        if sentences[mid].end <= raw.answer_start:
            lo = mid + 1
        else:
            hi = mid
    out = []
    while lo < len(sentences) and sentences[lo].start < raw.answer_end:
        out.append(sentences[lo].index)
        lo += 1
    return out


def _with_link_sentence(where: list[int], loc: dict, sentences: list[Sentence], starts: list[int]) -> list[int]:
    """A citation moved onto the full stop of the sentence it cites, from a link just after it
    (``locator.link_start``/``link_end``): the sentence the splitter made of the link alone, such
    as ``([title](url))``, is covered by it too, so the answer's own citation is never an uncited
    sentence.  A sentence with words besides the link is not."""
    start, end = loc.get("link_start"), loc.get("link_end")
    if type(start) is not int or type(end) is not int:
        return where
    i = sentence_at(sentences, starts, start)
    if i is None or i in where:
        return where
    s = sentences[i]
    rest = s.text[:max(0, start - s.start)] + s.text[max(0, end - s.start):]
    if any(ch.isalnum() for ch in rest):
        return where
    return [*where, i]


@functools.lru_cache(maxsize=32)
def _refusals(sentences: tuple[str, ...]) -> _Refusals:
    return _Refusals(sentences)


# --- the answer ------------------------------------------------------------------------------


def check_answer(answer: Answer, options: CheckOptions = CheckOptions()) -> AnswerResult:
    """Check every citation and sentence of one answer."""
    sentences = split_sentences(answer.answer)
    starts = [s.start for s in sentences]
    chunks = _Chunks(answer.chunks, options)
    per_sentence: list[list[CitationResult]] = [[] for _ in sentences]
    results: list[CitationResult] = []
    reasons = [0] * len(reason_codes.ALL_REASONS)
    failed = with_quote = in_source = 0
    last = len(sentences) - 1
    raws = _raw_citations(answer)
    any_no_quote = any(r.no_quote for r in raws) if answer.citations else False
    for raw in raws:
        if raw.kind == "marker":  # (the common case inline: the sentence holding the marker, no list)
            i = bisect_right(starts, raw.answer_start) - 1
            if i >= 0 and (raw.answer_start < sentences[i].end or i == last):
                result = _check_citation(len(results), raw, chunks, i)
                per_sentence[i].append(result)
            else:
                result = _check_citation(len(results), raw, chunks, None)
        else:
            where = _sentences_of(raw, sentences, starts)
            loc = raw.cited.locator
            if loc is not None and "link_start" in loc:
                where = _with_link_sentence(where, loc, sentences, starts)
            result = _check_citation(len(results), raw, chunks, where[0] if where else None)
            for i in where:
                per_sentence[i].append(result)
        results.append(result)
        codes = result.reasons
        if codes:
            failed += 1
            for code in codes:
                reasons[_REASON_AT[code]] += 1
        quote = result.quote  # (the cited quote, as the result keeps it)
        if quote and result.chunk_index is not None and not quote.isspace():
            with_quote += 1
            if reason_codes.QUOTE_NOT_FOUND not in codes:
                in_source += 1
    refusals = _refusals(options.refusals)
    sentence_results = []
    counted = uncited = multi = sentence_problems = 0
    for s in sentences:
        sr = _sentence_result(s, per_sentence[s.index], chunks, refusals, options.casefold)
        sentence_results.append(sr)
        if sr.refusal:
            continue
        counted += 1
        uncited += sr.uncited
        multi += sr.multi_claim
        if sr.reasons:
            sentence_problems += len(sr.reasons)
            for code in sr.reasons:
                reasons[_REASON_AT[code]] += 1
    refused = answer.refused or refusals.match(answer.answer)
    invalid = tuple([c.marker for c in results if c.reasons == _OUT_OF_RANGE and c.marker is not None])
    blind = sum(1 for c in results if c.not_verifiable) if any_no_quote else 0
    tally = _new(Tally, (len(results), failed, with_quote, in_source, counted, uncited, multi, sentence_problems,
                         tuple(reasons), blind))
    return AnswerResult(answer, tuple(sentence_results), tuple(results), refused, invalid, tally)
