"""Marking the words of a sentence that its chunk does not support, on the review page
(``pages/_span_marking.py`` draws the marker; this is what it sends and what it saves).

A reviewer marks words once their label is ``partial`` or ``not_supported``.  Each change (a span
marked or unmarked) is saved as a new label record: the same label, note, sample and guidelines
with the new ``spans`` and time; the latest record per (item, reviewer) counts, so nothing is
rewritten and undo (a retraction) brings back the spans before.  The browser speaks UTF-16
offsets into the sentence; everything here and in the store is code-point offsets into the answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from citecheck import __version__
from citecheck.errors import StoreError
from citecheck.labelling import labels, marked_spans
from citecheck.labelling.items import LABEL_TEXT, Item
from citecheck.labelling.labels import Label
from citecheck.review.html import focus_token
from citecheck.review.paging import MAX_SENTENCE_CHARS
from citecheck.storage.durable import WriteFailed
from citecheck.storage.lines import after


def can_mark(item: Item, label: Label | None) -> bool:
    """Whether the reviewer's current label lets them mark words: partial or not supported, and not stale."""
    return label is not None and label.label in marked_spans.SPAN_LABELS and label.fingerprint == item.fingerprint


def too_long(sentence: tuple[int, int]) -> str | None:
    """Why a sentence is not offered for marking (longer than a sentence row shows), or None."""
    length = sentence[1] - sentence[0]
    if length <= MAX_SENTENCE_CHARS:
        return None
    return (f"This sentence is {length:,} characters long, more than the {MAX_SENTENCE_CHARS:,} a row shows: its words "
            "cannot be marked here. Say in the note which words are not supported.")


def browser_data(answer: str, sentence: tuple[int, int], item: Item, spans: marked_spans.Spans) -> dict:
    """What the marker is given: the sentence's text, its words and the spans marked so far (UTF-16
    offsets into the sentence) and a token naming the item (the key itself is untrusted text)."""
    lo, hi = sentence
    return {"text": answer[lo:hi], "words": marked_spans.to_browser(answer, sentence, marked_spans.words(answer, lo, hi)),
            "spans": marked_spans.to_browser(answer, sentence, spans), "token": focus_token(item.key)}


def received(value: object, item: Item, answer: str, sentence: tuple[int, int]) -> marked_spans.Spans | None:
    """The spans the marker sent (``{"token", "spans"}``), as answer offsets snapped to words; None
    when the value is not for this item or not of that shape (the browser is not trusted)."""
    if not isinstance(value, Mapping) or value.get("token") != focus_token(item.key):
        return None
    spans = value.get("spans")
    if not isinstance(spans, list):
        return None
    return marked_spans.from_browser(answer, sentence, spans)


def remarked(label: Label, spans: marked_spans.Spans, at: str | None = None) -> Label:
    """A new record of ``label`` with ``spans``: same item, label, note and provenance, a new time,
    always later than ``label``'s (an undo withdraws a label by its time: two records of one label
    in one millisecond were withdrawn together)."""
    marked_spans.check_label(label.label, spans)
    return dataclasses.replace(label, spans=marked_spans.normalise(spans), at=at or after(label.at),
                               citecheck=__version__)


def save_latest(target: str | Path, label: Label | None, item: Item, spans: marked_spans.Spans) -> tuple[str, str]:
    """:func:`save` against ``label``, the reviewer's label of ``item`` as the store holds it when
    the change arrives (a change sent twice, or sent before the page was drawn again after the last
    one, is then saved once); nothing when that label no longer lets words be marked."""
    if not can_mark(item, label):
        return "info", ("Nothing saved: your label of this item is no longer Partially or Not supported, "
                        "so no words can be marked.")
    assert label is not None
    return save(target, label, spans)


def save(target: str | Path, label: Label, spans: marked_spans.Spans) -> tuple[str, str]:
    """Append ``label`` with ``spans`` (nothing when they are what it holds).  Returns a notice
    (kind, text): what was saved, or plainly that nothing was and why."""
    if tuple(spans) == label.spans:
        return "info", "Nothing changed."
    head = (f"The words marked for sentence {label.sentence + 1} of {label.answer_id} "
            f"({LABEL_TEXT[label.label]}) were NOT saved")
    try:
        labels.append(target, remarked(label, spans))
    except OSError as exc:  # (a full disk said as such, as for a label)
        reason = "the disk is full" if isinstance(exc, WriteFailed) and exc.disk_full else \
            f"could not write the labels store ({exc.strerror or exc})"
        return "error", f"{head}: {reason}. Mark them again."
    except StoreError as exc:  # its message names the database without the password
        return "error", f"{head}: {exc}. Mark them again."
    count = len(spans)
    return "success", (f"Saved {count} marked span(s) for sentence {label.sentence + 1} of {label.answer_id}."
                       if count else f"Saved: no words marked for sentence {label.sentence + 1} of {label.answer_id}.")
