"""HTML fragments for the review page, built from escaped text only (rendered with ``st.html``)."""

from __future__ import annotations

import bisect
import dataclasses
import itertools
from collections.abc import Iterable

from citecheck.checking import answer_problems
from citecheck.checking.checker import AnswerResult, CitationResult
from citecheck.contract import reasons
from citecheck.contract.item_keys import LABEL_TEXT
from citecheck.contract.log import Chunk
from citecheck.review.paging import MAX_SENTENCE_CHARS, clip
from citecheck.review.tokens import is_token, new_token
from citecheck.text.highlight import Span, closest_passage, escape, highlight, highlight_window

STYLE = """<style>
.cc-answer{font-size:1.05rem;line-height:1.6}
.cc-answer sup{color:#1a5fb4;font-weight:600;margin-left:1px}
mark.cc-quote{background:#fde68a;padding:0 1px}
mark.cc-closest{background:#fecaca;text-decoration:underline dotted}
mark.cc-unsupported{background:#fecdd3;text-decoration:underline wavy #b42318}
.cc-chunk{border-left:3px solid #d0d7de;padding:4px 10px;white-space:pre-wrap;font-size:.92rem}
.cc-meta{color:#57606a;font-size:.8rem}
.cc-inputs{color:#57606a;font-size:.8rem;margin:-.25rem 0 .25rem 0;overflow-wrap:anywhere}
.cc-fail{color:#b42318;font-weight:600}
.cc-judge{background:#f2f4f7;border-left:3px solid #475467;padding:4px 8px;margin:4px 0;font-size:0.9em}
.cc-ok{color:#067647;font-weight:600}
.cc-closest-note{color:#b42318;font-size:.8rem;font-style:italic}
.cc-focus{color:#1a5fb4;font-weight:600;font-size:.85rem}
.cc-whole>summary{cursor:pointer;color:#57606a;font-size:.85rem;margin:4px 0}
.cc-nv{color:#9a6700;font-weight:600}
.cc-answer sup.cc-nv{color:#9a6700}
.cc-answer,.cc-chunk,.cc-fail,.cc-meta,.cc-judge,.cc-sentence{overflow-wrap:anywhere;unicode-bidi:plaintext}
.cc-field,h1,h2,h3{overflow-wrap:anywhere}
[class*="st-key-cc-frame-"]{position:absolute;width:1px;height:1px;overflow:hidden;opacity:0;pointer-events:none}
</style>"""
FRAME_KEY = "cc-frame-"  # the key prefix of the containers of the script frames (STYLE takes them out of the flow)


def flags_html(flags: list[str], refusal: bool) -> str:
    """A sentence's flags (``sentence_flags``) as lines: problems in red; the note that a sentence
    is the refusal sentence (which is no error) in grey."""
    out = []
    for n, flag in enumerate(flags):
        css = "cc-meta" if refusal and n == 0 else "cc-fail"
        out.append(f'<div class="{css}">{escape(flag)}</div>')
    return "".join(out)


CLOSEST_MIN_SCORE = 60  # below this the "closest passage" is noise, and is not shown


def footnotes(result: AnswerResult) -> dict[int, list[int]]:
    """Per sentence, the footnote numbers a reader may see: only verified citations, numbered by chunk."""
    out: dict[int, list[int]] = {}
    for s in result.sentences:
        nums = sorted({result.citations[i].chunk_index + 1 for i in s.citations  # type: ignore[operator]
                       if result.citations[i].verified})
        out[s.index] = nums
    return out


def unverifiable_notes(result: AnswerResult) -> dict[int, list[int]]:
    """Per sentence, the footnote numbers of its not-verifiable citations (shown with their mark)."""
    out: dict[int, list[int]] = {}
    for s in result.sentences:
        nums = sorted({result.citations[i].chunk_index + 1 for i in s.citations  # type: ignore[operator]
                       if result.citations[i].not_verifiable})
        if nums:
            out[s.index] = nums
    return out


def reader_html(result: AnswerResult, max_chars: int | None = None) -> str:
    """The answer as a reader sees it: logged markers removed, a footnote only where it verified.
    With ``max_chars``, only the sentences starting in the first ``max_chars`` characters, and a note."""
    text = result.answer.answer
    if max_chars is not None and len(text) > max_chars:
        shown = [s for s in result.sentences if s.start < max_chars]
        cut = shown[-1].end if shown else max_chars
        cut = min(cut, max_chars * 2)  # a single huge sentence is cut too
        clipped = dataclasses.replace(result, answer=dataclasses.replace(result.answer, answer=text[:cut]),
                                      sentences=tuple(s for s in shown if s.end <= cut))
        note = (f'<div class="cc-meta">\u2026 the answer is {len(text):,} characters long: shown here are its first '
                f"{cut:,}; every sentence is listed below, a page at a time.</div>")
        return reader_html(clipped)[:-len("</div>")] + note + "</div>"
    notes = footnotes(result)
    unverifiable = unverifiable_notes(result)
    marker_spans = sorted((c.answer_start, c.answer_end) for c in result.citations if c.kind == "marker")
    parts: list[str] = []
    pos = 0
    ends = list(itertools.accumulate((b for _, b in marker_spans), max))  # every cut before i ends by ends[i]
    for s in result.sentences:
        parts.append(escape(_without(text, pos, s.start, marker_spans, ends)))
        body = _without(text, s.start, s.end, marker_spans, ends)
        trimmed = body.rstrip()
        sup = "".join(f"<sup>[{n}]</sup>" for n in notes.get(s.index, []))
        sup += "".join(f'<sup class="cc-nv" title="not verifiable: the format gives no quote">[{n} not verifiable]</sup>'
                       for n in unverifiable.get(s.index, []) if n not in notes.get(s.index, []))
        parts.append(escape(trimmed) + sup)
        pos = s.end
    parts.append(escape(_without(text, pos, len(text), marker_spans, ends)))
    return f'<div class="cc-answer">{"".join(parts)}</div>'


def _without(text: str, start: int, end: int, cuts: list[tuple[int, int]], ends: list[int] | None = None) -> str:
    """``text[start:end]`` without the marker spans (and the space before each).  ``ends`` (the
    cuts' ends, in order) lets it skip straight to the first cut that matters: linear over an
    answer, however many markers it has.  ``ends[i]`` is the latest end of cuts 0..i."""
    out, pos = [], start
    first = bisect.bisect_right(ends, start) if ends is not None else 0
    for a, b in itertools.islice(cuts, first, None):
        if a >= end:
            break
        if b <= start:
            continue
        a = max(a, start)
        piece = text[pos:a]
        out.append(piece.rstrip(" ") if piece.endswith(" ") else piece)
        pos = min(b, end)
    out.append(text[pos:end])
    return "".join(out)


def chunk_meta(chunk: Chunk) -> str:
    bits = [chunk.title, chunk.section, chunk.source, chunk.chunk_id]
    return '<div class="cc-meta">' + " \u00b7 ".join(escape(b) for b in bits if b) + "</div>"


def source_link(chunk: Chunk) -> str:
    """The chunk's source as a link when it is an http(s) URL (escaped; any other scheme is text)."""
    source = chunk.source or ""
    if not source.lower().startswith(("http://", "https://")):
        return ""
    url = escape(source)
    return f'<div class="cc-meta"><a href="{url}" target="_blank" rel="noopener noreferrer">{url}</a></div>'


def citation_html(result: AnswerResult, c: CitationResult, whole: bool = False) -> str:
    """The cited chunk: quote highlighted at its offsets when verified; reasons and no highlight if
    not; for a not-verifiable citation, its mark, the source link and the source text if any."""
    chunk = result.answer.chunks[c.chunk_index]  # type: ignore[index]
    head = chunk_meta(chunk)
    if c.not_verifiable:
        status = ('<div class="cc-nv">not verifiable: this format gives no quote from the source; '
                  "read the source to judge the sentence</div>")
        if not chunk.text:
            return f'{head}{status}{source_link(chunk)}<div class="cc-meta">(no source text in the log)</div>'
        text = chunk.text if whole else chunk.text[:400] + ("\u2026" if len(chunk.text) > 400 else "")
        return f'{head}{status}{source_link(chunk)}<div class="cc-chunk">{escape(text)}</div>'
    if c.verified:
        assert c.quote_start is not None and c.quote_end is not None
        body = (highlight(chunk.text, [Span(c.quote_start, c.quote_end)]) if whole
                else highlight_window(chunk.text, c.quote_start, c.quote_end))
        return f'{head}<div class="cc-ok">verified quote</div><div class="cc-chunk">{body}</div>'
    status = f'<div class="cc-fail">not verified: {escape(answer_problems.citation_words(result, c))}</div>'
    extra = ""
    if reasons.QUOTE_NOT_FOUND in c.reasons and c.quote:
        found = closest_passage(c.quote, chunk.text)
        extra = f'<div class="cc-closest-note">quoted: \u201c{escape(c.quote)}\u201d</div>'
        if found is not None and found.score >= CLOSEST_MIN_SCORE:
            extra += (f'<div class="cc-closest-note">closest text in the chunk, not a match '
                      f"(similarity {found.score:.0f}/100):</div>")
            body = highlight_window(chunk.text, found.start, found.end, css="cc-closest")
            return f'{head}{status}{extra}<div class="cc-chunk">{body}</div>'
        extra += '<div class="cc-closest-note">no similar passage in the chunk</div>'
    elif c.quote:
        extra = f'<div class="cc-closest-note">quoted: \u201c{escape(c.quote)}\u201d</div>'
    text = chunk.text if whole else chunk.text[:400] + ("\u2026" if len(chunk.text) > 400 else "")
    return f'{head}{status}{extra}<div class="cc-chunk">{escape(text)}</div>'


# --- what the answer pipeline logged about itself (untrusted like everything in a log) ------------

_VERDICT_CSS = {"supported": "cc-ok", "partial": "cc-meta", "not_supported": "cc-fail"}


def _claims(record: object) -> list[dict]:
    claims = record.get("claims") if isinstance(record, dict) else None
    return [c for c in claims if isinstance(c, dict)] if isinstance(claims, list) else []


def _claim_row(c: dict) -> str:
    verdict = str(c.get("verdict", ""))
    mech = c.get("mechanical")
    why = ", ".join(str(m) for m in mech) if isinstance(mech, list) and mech else str(c.get("rationale", ""))
    return (f'<li><span class="{_VERDICT_CSS.get(verdict, "cc-meta")}">{escape(verdict.replace("_", " "))}</span> '
            f'{escape(str(c.get("claim", "")))} <span class="cc-meta">{escape(why)}</span></li>')


def claims_html(extra: dict, sentence: int) -> str:
    """The faithfulness gate's claims that came from ``sentence``, with their verdicts ("" when the
    answer was not scored or the sentence gave no claim)."""
    record = extra.get("faithfulness") if isinstance(extra, dict) else None
    mine = [c for c in _claims(record) if c.get("sentence") == sentence]
    if not mine:
        return ""
    return '<div class="cc-meta">Claims (faithfulness gate):</div><ul class="cc-claims">' + "".join(
        _claim_row(c) for c in mine) + "</ul>"


def _number(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "n/a"


def withheld_html(extra: dict) -> str:
    """For an answer the faithfulness gate withheld: why (score and threshold), the answer as
    generated, and every claim with its verdict; "" otherwise."""
    record = extra.get("faithfulness") if isinstance(extra, dict) else None
    if not isinstance(record, dict) or record.get("withheld") is not True:
        return ""
    held = record.get("withheld_answer")
    text = held.get("answer") if isinstance(held, dict) else None
    return (f'<div class="cc-judge"><b>Withheld by the faithfulness gate</b>: score '
            f'{_number(record.get("score"))} is below the threshold {_number(record.get("threshold"))}, so readers '
            f'got the refusal instead. The answer as generated:'
            f'<div class="cc-chunk">{escape(str(text or ""))}</div>'
            f'<ul class="cc-claims">{"".join(_claim_row(c) for c in _claims(record))}</ul></div>')


def agent_trace_html(extra: dict) -> str:
    """The search agent's trace (queries tried, chunks read, turns, cost, why it stopped); ""
    when no agent ran for this answer."""
    trace = extra.get("agent") if isinstance(extra, dict) else None
    if not isinstance(trace, dict):
        return ""
    queries = [q for q in trace.get("queries") or [] if isinstance(q, str)] if isinstance(trace.get("queries"), list) else []
    read = [r for r in trace.get("read") or [] if isinstance(r, str)] if isinstance(trace.get("read"), list) else []
    stopped = trace.get("stopped")
    cost = trace.get("cost_usd")
    parts = [f'<div class="cc-judge"><b>Search agent</b> (the support-floor gate refused; '
             f'{escape(str(trace.get("turns", "?")))} call(s), '
             f'{"$" + format(cost, ".4f") if isinstance(cost, (int, float)) and not isinstance(cost, bool) else "cost n/a"})']
    if stopped:
        parts.append(f' <span class="cc-fail">stopped: {escape(str(stopped))}</span>')
    parts.append("<ol>" + "".join(f"<li>searched {escape(q)}</li>" for q in queries) + "</ol>")
    parts.append('<div class="cc-meta">Read, as sources [1], [2], ...: ' + (", ".join(escape(r) for r in read) or "nothing")
                 + "</div></div>")
    return "".join(parts)


# --- fragments the pages lay out ---------------------------------------------------------------
# Every piece of text below can come from a log, a labels file or a text box: it is escaped
# here, and the pages render the result with ``st.html`` (never as Markdown).


def field(text: str) -> str:
    """One untrusted value among others: escaped, and isolated (``<bdi>``), so that right-to-left text
    cannot reorder the fields beside it; a long unbroken word wraps (``.cc-field``)."""
    return f'<bdi class="cc-field">{escape(text)}</bdi>'


def fields_html(values: list[str | None], sep: str = " \u00b7 ") -> str:
    """Values side by side on one line (model · prompt version · time), each isolated; empty ones left out."""
    return '<div class="cc-meta">' + escape(sep).join(field(v) for v in values if v) + "</div>"


def heading_html(text: str, level: int = 3) -> str:
    return f"<h{level}>{escape(text)}</h{level}>"


def answer_heading_html(answer_id: str, position: int | None, total: int) -> str:
    """``Answer <id> (k of n)``: the id isolated, so a right-to-left id cannot move "(k of n)"."""
    where = f" ({position:,} of {total:,})" if position else " (outside the filter)"
    return f"<h3>Answer {field(answer_id)}{escape(where)}</h3>"


def notice_html(kind: str, text: str) -> str:
    """A warning or error line whose text is untrusted (a file name, a record error, a typed id)."""
    css = {"error": "cc-fail", "warning": "cc-fail", "success": "cc-ok"}.get(kind, "cc-meta")
    return f'<div class="{css}">{escape(text)}</div>'


def labelled_html(pairs: list[tuple[str, str]]) -> str:
    """``<p><b>Name:</b> value</p>`` rows, e.g. the question above an answer."""
    return "".join(f"<p><b>{escape(name)}:</b> {field(value)}</p>" for name, value in pairs)


def sentence_html(result: AnswerResult, index: int, flags: list[str]) -> str:
    """One answer sentence with its numbered position, its flags and, for withheld answers, its claims."""
    s = result.sentences[index]
    text, cut = clip(s.text, MAX_SENTENCE_CHARS)  # a huge sentence is shown clipped, with a note
    return (f'<p class="cc-sentence"><b>{s.index + 1}.</b> {escape(text)}{escape(cut)}</p>'
            + flags_html(flags, s.refusal)
            + claims_html(result.answer.extra, s.index))


def marked_html(text: str, spans: Iterable[tuple[int, int]], offset: int = 0) -> str:
    """``text`` escaped, with the marked spans (the words a reviewer marked as not supported) in
    ``<mark class="cc-unsupported">``.  ``offset``: where ``text`` starts in the coordinates of the
    spans (a sentence's start in its answer), so answer-offset spans mark a sentence's text."""
    return highlight(text, [Span(a - offset, b - offset, "cc-unsupported") for a, b in spans])


def marked_sentence_html(text: str, sentence: tuple[int, int], spans: Iterable[tuple[int, int]]) -> str:
    """The sentence ``[start, end)`` of the answer ``text`` with a label's marked spans highlighted."""
    lo, hi = sentence
    return f'<p class="cc-sentence">{marked_html(text[lo:hi], spans, lo)}</p>'


def unresolved_html(result: AnswerResult, c: CitationResult) -> str:
    """A citation of the answer that points at no retrieved chunk: what it named and why it failed."""
    why = answer_problems.citation_words(result, c)
    return f'<div class="cc-fail">{escape(c.chunk_id or f"[{c.marker}]")}: {escape(why)}</div>'


def label_words(code: str) -> str:
    """A label or verdict as the label buttons name it ("Partially supported"); another code (a
    judge's "unscored") with its underscores as spaces."""
    return LABEL_TEXT.get(code, code.replace("_", " "))


def verdict_html(judge: str, prompt_version: str, verdict: str, rationale: str) -> str:
    return (f'<div class="cc-judge"><b>Judge</b> {field(judge)} ({field(prompt_version)}): '
            f"<b>{escape(label_words(verdict))}</b> \u2014 {field(rationale)}</div>")


def own_label_html(label_text: str, note: str, stale: bool) -> str:
    lead = "STALE (the answer or chunk changed since): " if stale else "Your label: "
    return (f'<div class="cc-meta">{escape(lead)}<b>{escape(label_text)}</b>'
            + (f" \u2014 {field(note)}" if note else "") + "</div>")


def others_html(others: list[tuple[str, str]]) -> str:
    """Other reviewers' labels on an item, as (reviewer, label text)."""
    return ('<div class="cc-meta">Others: ' + "; ".join(f"{field(who)}: {escape(what)}" for who, what in others)
            + "</div>")


def disagreement_html(question: str, sentence: str, human: str, judge: str, rationale: str) -> str:
    """The calibration page's view of one item where the judge and the human label differ."""
    return (labelled_html([("Question", question), ("Sentence", sentence)])
            + f"<p><b>Human:</b> {escape(label_words(human))}<br><b>Judge:</b> "
              f"{escape(label_words(judge))} \u2014 {field(rationale)}</p>")


# --- keyboard flow ------------------------------------------------------------------------------

def focus_token(key: str) -> str:
    """A short, markup-safe token naming the focused item (the item key itself is untrusted text)."""
    import hashlib

    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def label_keys(labels: int) -> str:
    """The keys that label an item with ``labels`` labels, as the pages name them (``keys 1-4``; an
    uncited sentence has two: ``keys 1-2``)."""
    return f"keys 1-{int(labels)}"


def _run_mark(run: str) -> str:
    """The ``data-run`` attribute of a focus mark: ``run`` names one run of the page (hex from
    :func:`run_token`).  The key listener (:mod:`.keypresses`) holds the next key until a mark of a
    new run is drawn: a fragment's run (the page following its log) is not the run a key asked for."""
    if not is_token(run):
        raise ValueError("run must be hex from run_token")
    return f' data-run="{run}"' if run else ""


def run_token() -> str:
    """A new token for one run of a page (hex): what its focus mark carries (``data-run``), and
    what its buttons pass to say which drawing of the page they were pressed on."""
    return new_token(4)


def disagreement_focus_html(key: str, position: int, total: int, moves: int, labels: int, run: str = "") -> str:
    """The focus mark of the disagreement the Disagreements page shows (its item has ``labels``
    labels): the key listener (:mod:`.keypresses`) sends keys only to a page that shows one, and
    scrolls it into view."""
    return (f'<div class="cc-focus" data-focus="{focus_token(key)}" data-move="{int(moves)}"{_run_mark(run)}>\u25b6 '
            f"focused disagreement {position:,} of {total:,} \u00b7 {label_keys(labels)} decide it, J next, K previous</div>")


def focus_marker_html(key: str, position: int, total: int, moves: int, labels: int, run: str = "") -> str:
    """The mark on the focused item's box (the item has ``labels`` labels, so as many keys).  The key
    listener (:mod:`.keypresses`) scrolls it into view when its token or its move count (``moves``:
    the session's count of focus moves) is new; ``run`` names the page's run (:func:`_run_mark`)."""
    return (f'<div class="cc-focus" data-focus="{focus_token(key)}" data-move="{int(moves)}"{_run_mark(run)}>\u25b6 '
            f"focused item {position} of {total} \u00b7 {label_keys(labels)} label it</div>")
