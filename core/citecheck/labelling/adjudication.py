"""The disagreements view: items whose reviewers' current labels differ, for a lead to adjudicate.

An item is listed when its current (not stale) labels, one per reviewer, are not all the same.
So that the view cannot spoil independent labelling, an item still open to the viewer (they have
not labelled it and it has fewer than ``overlap`` labels, so their queue may still bring it) is
held back and only counted.  HTML here is built from escaped text only (rendered with ``st.html``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from citecheck.checking.checker import AnswerResult
from citecheck.contract.item_keys import LABEL_TEXT
from citecheck.labelling import consensus
from citecheck.labelling.agreement import TeamAgreement
from citecheck.labelling.events import Adjudication
from citecheck.labelling.items import Item
from citecheck.labelling.labels import Label
from citecheck.text.highlight import escape


@dataclass(frozen=True, slots=True)
class Disagreement:
    item: Item
    labels: tuple[Label, ...]  # the current labels, by reviewer name
    adjudication: Adjudication | None  # the current adjudication, if any

    @property
    def settled(self) -> bool:
        return self.adjudication is not None


def current_by_item(items: Iterable[Item], current: Mapping[tuple[str, str], Label]) -> dict[str, list[Label]]:
    """Per item key, the current (not stale) label of each reviewer; one pass over each."""
    fingerprint = {i.key: i.fingerprint for i in items}
    out: dict[str, list[Label]] = {}
    for (key, _), lab in current.items():
        if fingerprint.get(key) == lab.fingerprint:
            out.setdefault(key, []).append(lab)
    return out


def disagreements(items: Iterable[Item], current: Mapping[tuple[str, str], Label],
                  adjudicated: Mapping[str, Adjudication], viewer: str = "",
                  overlap: int = 1) -> tuple[list[Disagreement], int]:
    """(the disagreements in log order, how many were held back from ``viewer``)."""
    items = list(items)
    given = current_by_item(items, current)
    out: list[Disagreement] = []
    held = 0
    for item in items:
        labels = given.get(item.key, [])
        if len({lab.label for lab in labels}) < 2:
            continue
        if len(labels) < overlap and all(lab.reviewer != viewer for lab in labels):
            held += 1
            continue
        adj = adjudicated.get(item.key)
        if adj is not None and adj.fingerprint != item.fingerprint:
            adj = None
        out.append(Disagreement(item, tuple(sorted(labels, key=lambda lab: lab.reviewer)), adj))
    return out, held


def first_words(text: str, words: int = 8) -> str:
    """The first ``words`` words of ``text`` on one line, with an ellipsis when there are more
    (control characters and line breaks become spaces: the result goes into a one-line picker)."""
    parts = "".join(ch if ch.isprintable() else " " for ch in text[: words * 40]).split()
    return " ".join(parts[:words]) + ("\u2026" if len(parts) > words or len(text) > words * 40 else "")


def picker_text(d: Disagreement, result: AnswerResult) -> str:
    """One line naming a disagreement for a lead: the answer, the sentence number and the first
    words of the sentence and of the cited chunk (plain text: a selectbox option)."""
    item = d.item
    sentence = first_words(result.sentences[item.sentence].text)
    head = f"{item.answer_id} \u00b7 sentence {item.sentence + 1} \u00b7 \u201c{sentence}\u201d"
    if item.citation is None:
        return head + " (uncited)"
    c = result.citations[item.citation]
    chunk = result.answer.chunks[c.chunk_index] if c.chunk_index is not None else None
    if chunk is None:
        return head
    return head + f" \u2192 {first_words(chunk.chunk_id or '', 1)}: \u201c{first_words(chunk.text)}\u201d"


def focused(keys: list[str], at: str | None, position: int = 0) -> str | None:
    """The disagreement to show: ``at`` while it is listed, else the one now at ``position`` (the
    item after one just decided, which has left the "awaiting" list), else the last."""
    if not keys:
        return None
    if at in keys:
        return at
    return keys[min(max(position, 0), len(keys) - 1)]


def step(keys: list[str], at: str | None, delta: int) -> str | None:
    """The disagreement ``delta`` places from ``at`` (J: +1, K: -1), staying at either end."""
    if not keys:
        return None
    here = keys.index(at) if at in keys else 0
    return keys[min(max(here + delta, 0), len(keys) - 1)]


def decide(target, d: Disagreement, label: str, adjudicator: str, note: str, guidelines: str) -> tuple[str, str]:
    """Append the lead's adjudication of ``d`` to the labels store ``target``; returns the notice
    (kind, text) saying what was recorded, or why nothing was."""
    from citecheck.errors import StoreError
    from citecheck.labelling import events, labels

    try:
        labels.append_event(target, events.make_adjudication(d.item, label, adjudicator, list(d.labels), note,
                                                             guidelines))
    except events.EventError as exc:
        return "error", f"Not recorded: {exc}."
    except (OSError, StoreError) as exc:
        return "error", f"Not recorded: could not write the labels store ({exc})."
    return "success", f"Recorded \u201c{LABEL_TEXT[label]}\u201d for {d.item.key}, resolving {len(d.labels)} label(s)."


def after_decision(keys: list[str], position: int) -> str | None:
    """The disagreement to show once the one at ``position`` is decided: the next one, else (at the
    end) the one ``focused`` finds nearest to that position."""
    return keys[position + 1] if position + 1 < len(keys) else None


def remaining_text(waiting: Sequence[Disagreement], found: int, overlap: int) -> str:
    """How many disagreements remain, the words the page and its tests share.  Those of them that
    a majority of reviewers settles meanwhile (``consensus.majority_settles``: calibration counts
    the majority's label) are said apart: the page's count of items "with no majority (adjudicate
    them)" leaves them out, and "remain to adjudicate" alone read as if it did not."""
    if not found:
        return "No disagreements."
    text = f"{len(waiting):,} of {found:,} disagreement(s) remain to adjudicate"
    by_majority = sum(consensus.majority_settles(d.labels, overlap) for d in waiting)
    if by_majority:
        text += f"; a majority of reviewers settles {by_majority:,} of them until then"
    return text + "."


def side_by_side_html(d: Disagreement) -> str:
    """Every reviewer's label and note on the item, and the adjudication under them."""
    rows = "".join(f"<tr><td>{escape(lab.reviewer)}</td><td><b>{escape(LABEL_TEXT.get(lab.label, lab.label))}</b></td>"
                   f"<td>{escape(lab.note)}</td><td>{escape(lab.at)}</td></tr>" for lab in d.labels)
    table = ('<table class="cc-side"><tr><th>reviewer</th><th>label</th><th>note</th><th>when (UTC)</th></tr>'
             + rows + "</table>")
    a = d.adjudication
    if a is None:
        return table + '<div class="cc-meta">Not adjudicated yet.</div>'
    return table + (f'<div class="cc-ok">Adjudicated by {escape(a.adjudicator)} at {escape(a.at)}: '
                    f"<b>{escape(LABEL_TEXT.get(a.label, a.label))}</b>"
                    + (f" \u2014 {escape(a.note)}" if a.note else "") + "</div>")


def _figure(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def agreement_html(team: TeamAgreement) -> str:
    """Krippendorff's alpha with its n, and Cohen's kappa per pair of reviewers with theirs."""
    if not team.n:
        return '<div class="cc-meta">No item has labels from two reviewers yet: agreement is unknown.</div>'
    head = (f"<p><b>Krippendorff's alpha (nominal), all reviewers:</b> {_figure(team.alpha)} "
            f"(n = {team.n} items with two or more labels, {team.values} labels)</p>")
    rows = "".join(f"<tr><td>{escape(p.first)}</td><td>{escape(p.second)}</td><td>{_figure(p.kappa)}</td>"
                   f"<td>{p.n}</td></tr>" for p in team.pairs)
    return (head + '<table class="cc-side"><tr><th>reviewer</th><th>reviewer</th><th>Cohen\'s kappa</th>'
            "<th>n (items both labelled)</th></tr>" + rows + "</table>")
