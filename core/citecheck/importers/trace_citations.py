"""Citations in a traced answer, which no span records as citations: read from the answer itself.

- **Provider citations.**  When the LLM span that wrote the final answer recorded the provider's
  raw response (``output.value`` holding an Anthropic Messages, an OpenAI Responses / Chat
  Completions, a Gemini ``generateContent`` or a Cohere Chat body), that response goes through
  the provider's own importer, with the span's request (``input.value``) when it recorded one.
  An Anthropic or Cohere response whose request (with its documents) was not recorded has its
  citations read against the trace's documents in order, and the note says so.
- **``[n]`` markers** point at the n-th document as the model was given them
  (:func:`as_prompted`): by the number the prompt of the LLM call that wrote the answer put
  before each document (``[2]``, ``Source 2:``, ``<document index="2">``), else in the order the
  documents appear in that prompt, else (a prompt that was not recorded, or holds none of them
  word for word) in the order they were retrieved.  Each
  gets a marker entry marked ``no_quote`` (:func:`marker_entries`): a trace records no quote, so
  ``check`` reports the citation *not verifiable* rather than *quote missing*, and still checks
  that the chunk was retrieved and that the sentence's numbers and quoted words are in it.
- **Links**: a markdown link or a bare URL cites the document whose url (or ``source``/``url``
  metadata) is that URL; a URL no document has stays as written, so the checker reports
  ``unretrieved_source``.  A link just after a sentence's full stop cites that sentence (the
  OpenAI importer's rule): an empty span on the full stop, the link's own offsets kept in
  ``locator.link_start``/``link_end`` so the checker still finds the URL there.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

from citecheck.contract.log import Chunk, Citation
from citecheck.errors import FieldError
from citecheck.importers.spans import Span, maybe_json, span_value
from citecheck.text.sentences import marker_spans

_LINK = re.compile(r"\[([^\[\]\n]{0,500})\]\((https?://[^\s()<>]+(?:\([^\s()<>]*\))?[^\s()<>]*)\)")
_BARE_URL = re.compile(r"https?://[^\s<>\"'\]\[()]+")
_TRAILING = ".,;:!?"
_new: Final = tuple.__new__  # (a NamedTuple built from its fields' tuple, past its Python-level __new__)


def normal_url(url: str) -> str:
    """A URL as links and metadata are compared: no fragment, no trailing slash, case of the host ignored."""
    url = url.split("#", 1)[0].rstrip("/")
    scheme, sep, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}{sep}{host.lower()}{slash}{path}"


def _links(text: str) -> list[tuple[int, int, str]]:
    """(start, end, url) of every markdown link and bare URL, in text order."""
    found: list[tuple[int, int, str]] = []
    covered: list[tuple[int, int]] = []
    for m in _LINK.finditer(text):
        found.append((m.start(), m.end(), m.group(2)))
        covered.append((m.start(), m.end()))
    for m in _BARE_URL.finditer(text):
        if any(s <= m.start() < e for s, e in covered):
            continue
        url = m.group(0).rstrip(_TRAILING)
        found.append((m.start(), m.start() + len(url), url))
    return sorted(found)


def link_citations(text: str, chunks: Sequence[Chunk], urls: Sequence[str | None]) -> list[Citation]:
    """A span citation for every link in ``text`` (see the module's rule)."""
    if "http" not in text:  # (every link and bare URL holds it)
        return []
    by_url: dict[str, Chunk] = {}
    for each, url in zip(chunks, urls, strict=True):
        for candidate in (url, each.source):
            if candidate and candidate.startswith(("http://", "https://")):
                by_url.setdefault(normal_url(candidate), each)
    out = []
    for start, end, url in _links(text):
        chunk: Chunk | None = by_url.get(normal_url(url))
        locator: dict[str, Any] = {"type": "link", "no_quote": True, "url": url, "span_contains": url}
        lead = text[:start].rstrip().rstrip("([").rstrip().rstrip("\"'\u201d\u2019)]")
        if start and lead.endswith((".", "!", "?")):
            locator.update(link_start=start, link_end=end)
            start = end = len(lead) - 1
        out.append(Citation("span", answer_start=start, answer_end=end,
                            chunk_id=chunk.chunk_id if chunk else url,
                            document_id=chunk.document_id if chunk else url, locator=locator))
    return out


def marker_entries(text: str, count: int) -> tuple[Citation, ...]:
    """A ``kind: marker`` entry for every ``[n]`` in ``text`` that names one of ``count`` chunks,
    with ``locator.no_quote``: the answer gives the marker and no quote, so ``check`` reports the
    citation *not verifiable* (it checks the chunk was retrieved, and the sentence's numbers and
    quoted words against it), never *quote missing*."""
    out = []
    for start, end in marker_spans(text, 0):
        inside = text[start + 1:end - 1]
        for part in inside.split(",") if "," in inside else (inside,):
            part = part.strip()
            if part.isdigit() and 1 <= (number := int(part)) <= count:
                out.append(_new(Citation, ("marker", number, start, None, None, None, None, None, None, None, None,
                                           {"type": "marker", "no_quote": True})))
    return tuple(out)


def has_markers(text: str, count: int) -> bool:
    """True when ``text`` has an ``[n]`` marker (n from 1 to ``count``, or any n when there are no documents)."""
    for start, end in marker_spans(text, 0):
        for part in text[start + 1:end - 1].split(","):
            part = part.strip()
            if part.isdigit() and (count == 0 or 1 <= int(part) <= count):
                return True
    return False


# --- provider responses recorded on LLM spans ---------------------------------------------------

def provider_of(body: Any) -> str | None:
    """Which provider's response body ``body`` is: ``anthropic``, ``openai``, ``gemini``, ``cohere``, or None."""
    if not isinstance(body, dict):
        return None
    if body.get("type") == "message" and isinstance(body.get("content"), list):
        return "anthropic"
    if body.get("object") in ("response", "chat.completion") or isinstance(body.get("output"), list):
        return "openai"
    if isinstance(body.get("candidates"), list):
        return "gemini"
    message = body.get("message")
    if (isinstance(message, dict) and isinstance(message.get("content"), list) and "citations" in message) or \
            (isinstance(body.get("text"), str) and isinstance(body.get("citations"), list)):
        return "cohere"
    return None


def document_request(chunks: Sequence[Chunk], question: str) -> dict:
    """An Anthropic request with the trace's documents as document blocks, in order (for a span
    that recorded the response but not the request)."""
    blocks: list[dict] = [{"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": c.text},
                           "title": c.title, "citations": {"enabled": True},
                           "context": json.dumps({"chunk_id": c.chunk_id, "document_id": c.document_id,
                                                  "source": c.source})} for c in chunks]
    blocks.append({"type": "text", "text": question})
    return {"messages": [{"role": "user", "content": blocks}]}


def _has_documents(provider: str, request: Any) -> bool:
    """Whether a recorded request carries the documents the provider's citations point into."""
    if not isinstance(request, dict):
        return False
    if provider == "anthropic":
        return any(isinstance(m, dict) and isinstance(m.get("content"), list)
                   and any(isinstance(b, dict) and b.get("type") in ("document", "search_result") for b in m["content"])
                   for m in request.get("messages") or [])
    if provider == "cohere":
        return isinstance(request.get("documents"), list)
    return True  # (OpenAI and Gemini responses carry their sources)


_MARKS = ('"type"', '"object"', '"output"', '"candidates"', '"citations"')


def provider_answer(span: Span, chunks: Sequence[Chunk], question: str):
    """``(answer, provider, note, documents_assumed)`` read by the provider's importer from the
    response an LLM span recorded; None when it recorded none.  Without the request's documents,
    the trace's documents stand in for them, in order (``documents_assumed``)."""
    body = span_value(span, "output.value")
    if not isinstance(body, str) or not any(mark in body for mark in _MARKS):
        return None  # (no provider body: not worth decoding)
    from citecheck.importers import anthropic, cohere, gemini, openai
    body = maybe_json(body)
    provider = provider_of(body)
    if provider is None:
        return None
    request = maybe_json(span_value(span, "input.value"))
    request = request if isinstance(request, dict) else None
    assumed = not _has_documents(provider, request)
    note = f"the {provider} citations read against the trace's documents in order" if assumed else None
    try:
        if provider == "anthropic":
            answer = anthropic.convert(document_request(chunks, question) if assumed else request, body, 1)
        elif provider == "cohere":
            documents = [{"id": c.chunk_id, "data": {"text": c.text}} for c in chunks]
            answer = cohere.convert({"documents": documents} if assumed else request, body, 1)
        elif provider == "gemini":
            answer = gemini.convert(request, body, 1)
        else:
            answer = openai.convert(request, body, 1)
    except FieldError as exc:
        return None, provider, f"the recorded {provider} response could not be read ({exc.field}: {exc.message})", False
    return answer, provider, note, assumed and provider in ("anthropic", "cohere")


def _by_cited_text(citations: tuple[Citation, ...], chunks: Sequence[Chunk]) -> tuple[tuple[Citation, ...], int]:
    """(citations, how many moved): Anthropic's ``cited_text`` is a piece of the document cited,
    word for word, so a citation read against the trace's documents in order (no request
    recorded) whose quote is not in the document in its place, but is in exactly one other, is
    that other's: the application had given the model its documents in another order."""
    by_id = {c.chunk_id or "": c for c in chunks}
    out = []
    moved = 0
    for citation in citations:
        own = by_id.get(citation.chunk_id or "")
        quote = citation.quote
        if quote and own is not None and quote not in own.text:
            holders = [c for c in chunks if quote in c.text]
            if len(holders) == 1:
                citation = citation._replace(chunk_id=holders[0].chunk_id, document_id=holders[0].document_id)
                moved += 1
        out.append(citation)
    return tuple(out), moved


def _same_documents(given: Sequence[Chunk], retrieved: Sequence[Chunk]) -> dict[str, Chunk] | None:
    """The trace's document for each chunk id of a request, when every document the request gave
    the model is one the trace retrieved (the same text); None when one is not."""
    by_text: dict[str, Chunk] = {}
    for chunk in retrieved:
        by_text.setdefault(chunk.text, chunk)
    out = {}
    for chunk in given:
        match = by_text.get(chunk.text)
        if match is None:
            return None
        out[chunk.chunk_id or ""] = match
    return out


def _renamed(citations: tuple[Citation, ...], same: dict[str, Chunk]) -> tuple[Citation, ...]:
    out = []
    for c in citations:
        match = same.get(c.chunk_id or "")
        out.append(c._replace(chunk_id=match.chunk_id, document_id=match.document_id) if match else c)
    return tuple(out)


def _by_url(citations: tuple[Citation, ...], chunks: Sequence[Chunk], urls: Sequence[str | None]
            ) -> tuple[Citation, ...]:
    """Citations that name a URL, pointed at the trace's document with that URL."""
    by_url = {normal_url(u): c for c, u in zip(chunks, urls, strict=True) if u}
    out = []
    for c in citations:
        chunk = by_url.get(normal_url(c.chunk_id or "")) if (c.chunk_id or "").startswith("http") else None
        out.append(c._replace(chunk_id=chunk.chunk_id, document_id=chunk.document_id) if chunk else c)
    return tuple(out)


def cite(text: str, chunks: tuple[Chunk, ...], urls: Sequence[str | None], llm_spans: Sequence[Span],
         question: str) -> tuple[str, tuple[Chunk, ...], tuple[Citation, ...], str, str | None]:
    """(answer text, chunks, citations, kind of citation, a note) of a traced answer.

    ``llm_spans`` are the request's LLM spans, the one that wrote the answer first."""
    note = None
    for span in llm_spans:
        found = provider_answer(span, chunks, question)
        if found is None:
            continue
        answer, provider, note, assumed = found
        if answer is None:
            break
        if text and answer.answer.strip() != text.strip():
            note = None
            continue  # an intermediate call: not the answer the request gave
        if answer.citations:
            if assumed:  # the trace's own documents were the request's: they stay the chunks
                cited = answer.citations
                if provider == "anthropic":
                    cited, moved = _by_cited_text(cited, chunks)
                    if moved:
                        note = (f"{note}; {moved} citation(s) whose cited text is in another of the trace's documents "
                                "than the one in their place, read as that document's")
                return answer.answer, chunks, cited, provider, note
            if chunks and any(c.text for c in answer.chunks):
                same = _same_documents(answer.chunks, chunks)
                if same is not None:  # the request's documents are the trace's: keep the trace's ids
                    return answer.answer, chunks, _renamed(answer.citations, same), provider, note
                note = (f"the {provider} request's documents are not the trace's retrieved documents: "
                        "the request's are the chunks")
            if not chunks or any(c.text for c in answer.chunks):  # the documents as the request or response has them
                return answer.answer, answer.chunks, answer.citations, provider, note
            # sources the provider found itself (web search): cited by URL, matched to the trace's
            # documents with that URL; the others are added from the response
            cited = _by_url(answer.citations, chunks, urls)
            known = {c.chunk_id for c in chunks}
            wanted = {c.chunk_id for c in cited} | {c.document_id for c in cited}
            added = tuple(c for c in answer.chunks if c.chunk_id not in known and c.chunk_id in wanted)
            return answer.answer, chunks + added, cited, provider, note
        text = answer.answer
        note = None
        break
    links = tuple(link_citations(text, chunks, urls))
    if llm_spans and has_markers(text, len(chunks)):
        chunks, note = as_prompted(chunks, prompt_text(llm_spans[0]), note)
    markers = marker_entries(text, len(chunks))
    kinds = (["markers"] if markers or has_markers(text, len(chunks)) else []) + (["links"] if links else [])
    return text, chunks, markers + links, "+".join(kinds) or "none", note


# --- the documents as the prompt numbered them ---------------------------------------------------

_PROMPT_KEYS = ("llm.input_messages", "llm.prompts", "gen_ai.input.messages", "gen_ai.prompt", "input.value")
# a number the prompt puts before a document's text, between it and the document before:
# [2] (with a title after it, or a title and a URL), (2), 2. or 2), Source 2:, [Document 2],
# <document index="2"> (with tags after it, and a short text in them: <source>leave.pdf</source>)
_LABEL = re.compile(r"(?:\[(\d{1,4})\][^\[\]]{0,300}?|\((\d{1,4})\)|(?:^|\s)(\d{1,4})[.):]"
                    r"|\b(?:sources?|documents?|docs?|context|passages?|chunks?|references?|refs?|results?)\s*#?\s*"
                    r"(\d{1,4})\b\]?[^\[\]<>]{0,300}?|(?:index|id)\s*=\s*[\"']?(\d{1,4})[\"']?[^<>]{0,80}>"
                    r"(?:[^<>]{0,100}<[^<>]{0,80}>)*)"
                    r"\s*[:-]?\s*$", re.IGNORECASE)
_WORD = re.compile(r"\w+")
_PROBE = 12  # words of a document's text (its first ones) looked for in the prompt
# places where a document's first words are in the prompt, looked at for it (its first ones), and
# copies of one text (retrieved more than once) placed, at most: a prompt that repeats a document's
# opening (a text of one word over and over) is still read in time linear in its length
_MANY = 50
_FEW = 32  # documents found with str.find, at most (more are looked up place by place)


def prompt_text(span: Span) -> str:
    """Every text of the prompt an LLM span recorded (its input messages, or its raw request), one after another."""
    parts: list[str] = []
    for key, value in span.attributes.items():
        if key.startswith(_PROMPT_KEYS):
            _texts(maybe_json(value), parts, 0)
    return "\n".join(parts)


def _texts(value: Any, out: list[str], depth: int) -> None:
    if isinstance(value, str):
        out.append(value)
    elif depth < 20 and isinstance(value, dict):
        for item in value.values():
            _texts(maybe_json(item) if depth == 0 else item, out, depth + 1)
    elif depth < 20 and isinstance(value, list):
        for item in value:
            _texts(item, out, depth + 1)


# str.lower called as a value: compiled, ``text.lower()`` is mypyc's own, which lowers a final
# capital sigma as any other (σ) where Python gives ς; the compiled build must read as Python does
_lower: Callable[[str], str] = str.lower
_GAPS = str.maketrans({chr(c): " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")})


def _words(text: str) -> list[str]:
    """The words of ``text`` (letters, digits and ``_``, as ``\\w+`` finds them), lowercased: a
    document as a prompt may show it.  An ASCII text is lowered whole and split in C where it
    holds no letter or digit; another is lowered whole when that keeps its length (each word where
    it was), else word by word."""
    if text.isascii():
        return text.lower().translate(_GAPS).split()
    low = _lower(text)
    return _WORD.findall(low) if len(low) == len(text) else [_lower(w) for w in _WORD.findall(text)]


_SPLIT = re.compile(r"(\W+)")
_Seq = TypeVar("_Seq", str, list[str])


class _Places:
    """Where each word of :func:`_placed_words`' text is, the text split into ``parts`` with ``gap``
    characters between two parts: word k is the k-th part that is not empty (``sparse``), else part
    ``first + step * k``.  Found by walking the parts from the last place asked (:func:`as_prompted`
    asks in the text's order), so no list of every word's place is made."""

    def __init__(self, parts: list[str], gap: int, sparse: bool, first: int, step: int) -> None:
        self.parts = parts
        self.gap = gap
        self.sparse = sparse  # (words are the parts that are not empty; else part first + step * k)
        self.first = first
        self.step = step
        self.j = 0  # (the part the walk is at, where it starts, and the words before it)
        self.at = 0
        self.words = 0

    def _to(self, k: int) -> int:
        """Walk to the part word ``k`` is; its start in the text."""
        parts = self.parts
        if self.sparse:
            if self.words > k:  # (a word before the walk's place: walked again from the start)
                self.j, self.at, self.words = 0, 0, 0
            while not (parts[self.j] and self.words == k):
                if parts[self.j]:
                    self.words += 1
                self.at += len(parts[self.j]) + self.gap
                self.j += 1
            return self.at
        target = self.first + self.step * k
        if self.j > target:
            self.j, self.at = 0, 0
        while self.j < target:
            self.at += len(parts[self.j]) + self.gap
            self.j += 1
        return self.at

    def start(self, k: int) -> int:
        """Where word k starts in the text."""
        return self._to(k)

    def end(self, k: int) -> int:
        """Where word k ends in the text (lowered, a word may be longer)."""
        return self._to(k) + len(self.parts[self.j])


def _placed_words(text: str) -> tuple[list[str], _Places]:
    """(words, places): the words of ``text`` as :func:`_words` gives them, and where each is
    (:class:`_Places`).  The splits are made in C, whatever the number of words."""
    if text.isascii():  # (split at each gap character: a word is a part that is not empty)
        parts = text.lower().translate(_GAPS).split(" ")
        words = list(filter(None, parts))
        return words, _Places(parts, 1, len(words) != len(parts), 0, 1)
    low = _lower(text)
    if len(low) == len(text):
        parts = _SPLIT.split(low)
        words = parts[0::2]
    else:  # (lowered one by one: the words stay where text has them)
        parts = _SPLIT.split(text)
        words = [_lower(w) for w in parts[0::2]]
    lead = 1 if words and not words[0] else 0  # (text opens with no word: the first part is empty)
    count = len(words) - lead - (1 if len(words) > lead and not words[-1] else 0)
    return words[lead:lead + count], _Places(parts, 0, False, 2 * lead, 2)


def _common(seq: _Seq, at: int, mine: _Seq, known: int = 0) -> int:
    """How many of the first items of ``mine`` ``seq`` holds from ``at`` on (``known`` of them known
    to match): characters of a text, or words of a list of them.  Slices compared whole, doubling
    then halving, so a long run costs few steps."""
    if seq[at:at + len(mine)] == mine:
        return len(mine)
    low, step = known, max(known, 1)  # (seq holds mine[:low] from at; past low + step it may not)
    while low + step < len(mine) and seq[at:at + low + step] == mine[:low + step]:
        low, step = low + step, 2 * step
    high = min(low + step, len(mine))
    while high - low > 1:
        mid = (low + high) // 2
        if seq[at:at + mid] == mine[:mid]:
            low = mid
        else:
            high = mid
    return low


def _placed(documents: list[list[str]], words: list[str]) -> list[tuple[int, int, int]]:
    """(first word, document, words in a row) of each document whose first words the prompt's
    ``words`` hold, each at a place of its own: the longest runs are placed first, and a place
    goes to no document another runs further from, so that documents that begin alike each
    find their own place and one never shown takes none (even in a second copy of the prompt).
    A document that runs as far at several places (quoted whole in an earlier answer, or a word
    or two the question holds too) takes the one nearest the documents placed at a place of their own.

    Documents whose first words all differ, a few of them (as most prompts show them), are found
    by :func:`_runs_found`, in C; others by :func:`_runs_looked_up`, linear in the prompt however
    many documents begin alike.  Both give the same runs (a test compares them)."""
    probes = {tuple(mine[:_PROBE]) for mine in documents if mine}
    shown = sum(1 for mine in documents if mine)
    runs = _runs_found(documents, words) if len(probes) == shown <= _FEW else _runs_looked_up(documents, words)
    best: dict[int, int] = {}  # (the most words in a row from a place, of any document)
    for minus, k, _ in runs:
        best[k] = max(best.get(k, 0), -minus)
    runs = [run for run in runs if -run[0] == best[run[1]]]
    most: dict[int, int] = {}  # (a document's most words in a row, and at how many places)
    places: dict[int, int] = {}
    for minus, _, i in runs:
        if -minus > most.get(i, 0):
            most[i], places[i] = -minus, 1
        elif -minus == most[i]:
            places[i] += 1
    runs.sort()
    placed: list[tuple[int, int, int]] = []  # (first word, document, words in a row), by first word
    taken: set[int] = set()
    # a document whose text runs as far at two places or more (an earlier answer quoting it whole,
    # a short one named in the question) is placed after the others, nearest them
    _put([run for run in runs if places[run[2]] == 1], placed, taken)
    if len(taken) < len(places):
        near = [(minus, _apart(placed, k, -minus), k, i) for minus, k, i in runs if places[i] > 1]
        near.sort()
        _put([(minus, k, i) for minus, _, k, i in near], placed, taken)
    return placed


def _put(runs: list[tuple[int, int, int]], placed: list[tuple[int, int, int]], taken: set[int]) -> None:
    """Place each document of ``runs`` (- words in a row, first word, document), in that order,
    at its first place not taken: a document once, the places not overlapping."""
    for minus, k, i in runs:
        if i in taken:
            continue
        at = bisect.bisect_left(placed, (k, -1, 0))  # (the places taken do not overlap: only the neighbours can)
        if (at and placed[at - 1][0] + placed[at - 1][2] > k) or (at < len(placed) and placed[at][0] < k - minus):
            continue
        placed.insert(at, (k, i, -minus))
        taken.add(i)


def _apart(placed: list[tuple[int, int, int]], k: int, n: int) -> int:
    """How many words lie between the ``n`` words from ``k`` and the nearest document placed (0 if none is)."""
    at = bisect.bisect_left(placed, (k, -1, 0))
    gaps = ([k - placed[at - 1][0] - placed[at - 1][2]] if at else []) + \
        ([placed[at][0] - k - n] if at < len(placed) else [])
    return max(0, min(gaps)) if gaps else 0


def _runs_found(documents: list[list[str]], words: list[str]) -> list[tuple[int, int, int]]:
    """(- words in a row, first word, document) at every place where a document's first words
    are in the prompt, each document's first words differing from every other's: found with
    ``str.find`` in the prompt's words joined by spaces, the run measured in characters."""
    joined = " " + " ".join(words) + " "
    runs: list[tuple[int, int, int]] = []
    for i, mine in enumerate(documents):
        if not mine:
            continue
        text = " " + " ".join(mine) + " "
        probe = " " + " ".join(mine[:_PROBE]) + " "
        at, k, counted, places = joined.find(probe), 0, 0, 0
        while at >= 0 and places < _MANY:
            k += joined.count(" ", counted, at)  # (the word that starts after the space at ``at``)
            counted = at
            runs.append((-text.count(" ", 1, _common(joined, at, text, len(probe))), k, i))
            at = joined.find(probe, at + 1)
            places += 1
    return runs


def _runs_looked_up(documents: list[list[str]], words: list[str]) -> list[tuple[int, int, int]]:
    """The runs of :func:`_runs_found`, for documents that begin alike or many documents: each
    place of the prompt looked up once per probe length in a dict of the documents' first words;
    of the documents that begin alike (sorted, so those that run furthest from a place are next
    to each other, beside where the prompt's words from there would go, found by bisection) the
    one that runs furthest, the first in that order, with its copies.  A probe shared by m
    documents is looked at in its first ``_MANY * m`` places, as each document's own in
    :func:`_runs_found`."""
    by_probe: dict[tuple[str, ...], list[int]] = {}
    for i, mine in enumerate(documents):
        if mine:
            by_probe.setdefault(tuple(mine[:_PROBE]), []).append(i)
    longest: dict[tuple[str, ...], int] = {}
    for probe, alike in by_probe.items():
        alike.sort(key=lambda i: (documents[i], i))
        longest[probe] = max(len(documents[i]) for i in alike)
    runs: list[tuple[int, int, int]] = []
    places = dict.fromkeys(by_probe, 0)
    for size in sorted({len(probe) for probe in by_probe}):
        for k in range(len(words) - size + 1):
            probe = tuple(words[k:k + size])
            if probe not in by_probe:
                continue
            alike = by_probe[probe]
            if places[probe] >= _MANY * len(alike):
                continue
            places[probe] += 1
            here = words[k:k + longest[probe] + 1]
            at = bisect.bisect_left(alike, here, key=lambda i: documents[i])
            side = {j: _common(words, k, documents[alike[j]]) for j in (at - 1, at) if 0 <= j < len(alike)}
            most = max(side.values())
            lo = hi = min(j for j, n in side.items() if n == most)
            # one document of those that run as far (the first in sorted order), with its copies:
            # a text retrieved twice may be shown twice, each copy at a place of its own
            while lo > 0 and hi - lo < _MANY and documents[alike[lo - 1]] == documents[alike[lo]]:
                lo -= 1
            while hi + 1 < len(alike) and hi - lo < _MANY and documents[alike[hi + 1]] == documents[alike[hi]]:
                hi += 1
            runs.extend((-most, k, alike[j]) for j in range(lo, hi + 1))
    return runs


_PART_WORDS = 8  # words after a source's number that must be in one document's text, in a row


def _part_label(number: int) -> re.Pattern[str]:
    """A source's number as prompts write it (``Source 2:``, ``[2]``, ``(2)``, ``2.``), with what follows it."""
    return re.compile(rf"(?:\[{number}\]|\b(?:sources?|documents?|docs?|context|passages?|chunks?|references?|refs?"
                      rf"|results?)\s*#?\s*{number}\b\]?|\({number}\)|(?<!\S){number}[.):])\s*[:-]?", re.IGNORECASE)


def own_id(chunk: Chunk, ids: set[str]) -> Chunk:
    """``chunk`` with an id none of ``ids`` is (its own, else the first free ``ID#2``, ``ID#3``...),
    which is added to them: the same chunk retrieved or shown twice is two chunks of an answer."""
    chunk_id = chunk.chunk_id or ""
    if chunk_id in ids:
        k = 2
        while f"{chunk_id}#{k}" in ids:
            k += 1
        chunk = chunk._replace(chunk_id=f"{chunk_id}#{k}")
    ids.add(chunk.chunk_id or "")
    return chunk


def _sources(tops: list[int | None], count: int) -> int:
    """How many sources the prompt numbered when it numbered more than its ``count`` documents
    (each document's nearest number, ``tops``, distinct, the largest past ``count`` and at most four
    times it, up to 64); else 0."""
    if not tops or any(top is None for top in tops):
        return 0
    given = [top for top in tops if top is not None]
    largest = max(given)
    if len(set(given)) != len(given) or min(given) < 1 or not count < largest <= min(4 * count, 64):
        return 0
    return largest


def _sources_after(flat: str, end: int, tops: list[int | None], count: int, sources: int) -> int:
    """How many sources the prompt numbered, counting those it numbers after the last document
    found (from ``end``: ``Source 2:`` after a single document shown in two parts, or the last
    part of the last document): from ``sources`` (:func:`_sources`), else from ``count`` when the
    documents found are numbered 1 to ``count`` in some order.  0 when no more than ``count``."""
    top = sources
    if not top:
        if len(tops) != count or sorted(t or 0 for t in tops) != list(range(1, count + 1)):
            return 0
        top = count
    while top < min(4 * count, 64) and _part_label(top + 1).search(flat, end):
        top += 1
    return top if top > count else 0


def _in_parts(flat: str, chunks: tuple[Chunk, ...], runs: list[tuple[int, int]], by_number: dict[int, int],
              top: int) -> tuple[tuple[Chunk, ...], str] | None:
    """(chunks, what to note) when the prompt numbered ``top`` sources, more than its documents,
    because it showed a document in several numbered parts (LlamaIndex's CitationQueryEngine
    shows a long node as ``Source 1:``, ``Source 2:``... in pieces that overlap a little); None
    when some number names no document.  ``by_number``: the documents found at their opening, by
    the number before them; ``runs``: where each runs in ``flat``.

    Each other number is looked for outside those runs, the words after it in one document's text
    (the piece of it the prompt showed).  ``chunks[n-1]`` is then the document shown as n: a
    document shown as two numbers is there twice, its id given a ``#2``."""
    texts = [" " + " ".join(_words(c.text)) + " " for c in chunks]
    numbered = dict(by_number)
    for number in range(1, top + 1):
        if number in numbered:
            continue
        for tried, label in enumerate(_part_label(number).finditer(flat)):
            if tried >= _MANY:  # (a prompt that repeats the label is read in time linear in its length)
                break
            if any(at <= label.start() < end for at, end in runs):
                continue  # (inside a document's own text)
            after = _words(flat[label.end():label.end() + 40 * _PART_WORDS])[:_PART_WORDS]
            if len(after) < _PART_WORDS:
                continue
            probe = " " + " ".join(after) + " "
            holders = [i for i, text in enumerate(texts) if probe in text]
            if len(holders) == 1:
                numbered[number] = holders[0]
                break
        if number not in numbered:
            return None
    order = [numbered[n] for n in range(1, top + 1)]
    shown = set(order)
    order += [i for i in range(len(chunks)) if i not in shown]
    ids: set[str] = set()
    out = [own_id(chunks[i], ids) for i in order]
    parts = [(i, [n for n in range(1, top + 1) if numbered[n] == i]) for i in sorted(shown)]
    return tuple(out), (f"[n] markers read by the numbers the prompt of the LLM call gave its {top} sources, from "
                        f"{len(chunks)} documents; shown in parts: "
                        + "; ".join(f"{chunks[i].chunk_id or '(no id)'} as " + ", ".join(map(str, ns))
                                    for i, ns in parts if len(ns) > 1))


def _label(flat: str, lo: int, at: int, count: int) -> tuple[int | None, int | None]:
    """The number a prompt gives the document at ``at``: of the labels between ``lo`` and it
    (:data:`_LABEL`), the nearest that numbers a document (1 to ``count``; not a marker of the
    instructions before the first document, nor a year in its title), one in brackets, after a
    word (Source 2) or in a tag before one in parentheses or with a full stop; else the first.
    And the nearest of those in brackets, after a word or in a tag, whatever its number (None if none is)."""
    labels: list[tuple[bool, int]] = []  # (in brackets, after a word or in a tag; the number)
    label = _LABEL.search(flat, lo, at)
    while label:
        three = label.group(3)
        if not (three and flat.startswith(")", label.end(3))
                and flat.rfind("(", lo, label.start(3)) > flat.rfind(")", lo, label.start(3))):
            labels.append((bool(label.group(1) or label.group(4) or label.group(5)),
                           next(int(g) for g in label.groups() if g)))
        # (else "2)" closes a parenthesis: the document before's "(handbook.pdf, page 2)")
        label = _LABEL.search(flat, label.start() + 1, at)
    if not labels:
        return None, None
    numbers = [n for strong, n in labels if strong and 1 <= n <= count] or [n for _, n in labels if 1 <= n <= count]
    strong = [n for is_strong, n in labels if is_strong]
    return (numbers[-1] if numbers else labels[0][1]), (strong[-1] if strong else None)


def as_prompted(chunks: tuple[Chunk, ...], prompt: str, note: str | None) -> tuple[tuple[Chunk, ...], str | None]:
    """(chunks, note): the chunks as the prompt numbered them, ``chunks[n-1]`` the one shown as n.

    Each document's text (its first words, case, punctuation and markup aside) is looked for in
    ``prompt``, each at a place of its own.
    When every document found has a number before it (distinct, none past the number of
    documents), the document numbered n is the n-th chunk, the others filling the numbers the
    prompt skipped, in retrieval order.  When none has a number, the chunks are the documents
    found, in the order the prompt gives them: the others were retrieved but not shown (a marker
    past those shown names no document), and the note names them (a number before the first
    document alone is a marker of the instructions before it, "cite as [1]").  Otherwise (nothing found, or
    some numbered and some not) the chunks stay in retrieval order."""
    flat = " ".join(prompt.split())
    if not flat or not chunks:
        return chunks, note
    words, places = _placed_words(flat)
    at_of: list[tuple[int, int, int]] = []  # (where in the prompt, chunk, where its text ends there)
    for k, i, n in _placed([_words(c.text) for c in chunks], words):
        at = places.start(k)
        first = _WORD.search(chunks[i].text)
        lead = re.sub(r"\s+", " ", chunks[i].text[:first.start()]).lstrip() if first else ""
        if lead and flat.endswith(lead, 0, at):  # (the document's own markup before its first word)
            at -= len(lead)
        at_of.append((at, i, places.end(k + n - 1)))
    at_of.sort()
    found: list[tuple[int, int, int | None]] = []  # (where in the prompt, chunk, the number before it)
    tops: list[int | None] = []  # (the nearest number in brackets, after a word or in a tag, whatever its size)
    before = 0  # (a number is looked for between the document before and this one)
    for at, i, end in at_of:
        number, top = _label(flat, max(before, at - 400), at, len(chunks))
        found.append((at, i, number))
        tops.append(top)
        before = max(before, end)
    if not found:
        return chunks, note
    sources = _sources(tops, len(chunks))
    after = _sources_after(flat, before, tops, len(chunks), sources)
    if after:  # (more numbered sources than documents: a document shown in parts)
        parted = _in_parts(flat, chunks, [(at, end) for at, _, end in at_of],
                           {top: i for (_, i, _), top in zip(found, tops) if top is not None}, after)
        if parted is not None:
            return parted[0], f"{note}; {parted[1]}" if note else parted[1]
    if sources:  # (the documents' own numbers said so: the markers may be read wrong, and the note says it)
        said = (f"the prompt of the LLM call numbered {sources} sources for {len(chunks)} documents and they could "
                "not all be matched to them: a marker may name another document than the one shown with its number")
        note = f"{note}; {said}" if note else said
    numbers = [n for _, _, n in found]
    if len(numbers) > 1 and numbers[0] is not None and all(n is None for n in numbers[1:]):
        numbers[0] = None  # (the first document's alone: a marker of the instructions before it, "cite as [1]")
    order: list[int]
    if all(n is not None for n in numbers):
        given = [n for n in numbers if n is not None]
        if len(set(given)) != len(given) or max(given) > len(chunks) or min(given) < 1:
            return chunks, note
        by_number = {n: i for _, i, n in found if n is not None}
        numbered = set(by_number.values())
        rest = iter(i for i in range(len(chunks)) if i not in numbered)
        order = [by_number[n] if n in by_number else next(rest) for n in range(1, len(chunks) + 1)]
        how = "by the numbers the prompt of the LLM call gave them"
    elif all(n is None for n in numbers):
        order = [i for _, i, _ in found]
        how = "in the order the prompt of the LLM call gave them"
    else:
        return chunks, note
    if order == list(range(len(chunks))):
        return chunks, note
    said = f"[n] markers read {how}, not in retrieval order"
    if len(order) < len(chunks):
        shown = set(order)
        unseen = [chunks[i].chunk_id or "(no id)" for i in range(len(chunks)) if i not in shown]
        said += (f"; {len(unseen)} retrieved document(s) not in the prompt left out: "
                 + ", ".join(unseen[:10]) + (" ..." if len(unseen) > 10 else ""))
    return tuple(chunks[i] for i in order), f"{note}; {said}" if note else said
