"""The label history of an item: every label, retraction and adjudication on it, oldest first.

Nothing in the store is ever rewritten, so the history is the store's own record: who gave which
label when, which of those were withdrawn (and when), and any adjudication.  In blind mode the
review page asks for the history without other people's entries (``only``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from citecheck.contract.item_keys import LABEL_TEXT
from citecheck.labelling.events import Adjudication, Retraction
from citecheck.labelling.labels import Event, Label
from citecheck.text.highlight import escape


@dataclass(frozen=True, slots=True)
class Entry:
    at: str
    who: str
    what: str  # "label", "retraction" or "adjudication"
    label: str
    note: str = ""
    retracted_at: str = ""  # for a label: when it was withdrawn; "" while it counts
    marked: int = -1  # for a label that only changed the words marked (same label and note): how many spans


def by_item(events: Iterable[Event]) -> dict[str, list[Entry]]:
    """Per item key, its entries in the order written; one pass over the events."""
    out: dict[str, list[Entry]] = {}
    withdrawn: dict[tuple[str, str, str, str], str] = {}
    events = list(events)
    for e in events:
        if isinstance(e, Retraction):
            withdrawn.setdefault((e.item, e.reviewer, e.retracts, e.label), e.at)
    last: dict[tuple[str, str], Label] = {}
    for e in events:
        if isinstance(e, Label):
            before = last.get((e.item, e.reviewer))
            last[(e.item, e.reviewer)] = e
            remarked = (before is not None and (before.label, before.note, before.fingerprint) == (e.label, e.note, e.fingerprint)
                        and before.spans != e.spans)
            entry = Entry(e.at, e.reviewer, "label", e.label, e.note, withdrawn.get((e.item, e.reviewer, e.at, e.label), ""),
                          len(e.spans) if remarked else -1)
        elif isinstance(e, Retraction):
            entry = Entry(e.at, e.reviewer, "retraction", e.label)
        elif isinstance(e, Adjudication):
            entry = Entry(e.at, e.adjudicator, "adjudication", e.label, e.note)
        else:  # the team's events (assignments, opens, comments ...) are no label history
            continue
        out.setdefault(e.item, []).append(entry)
    return out


def visible(entries: list[Entry], only: str | None) -> list[Entry]:
    """``entries``, or only ``only``'s own when other people's must stay hidden (blind mode)."""
    return entries if only is None else [e for e in entries if e.who == only and e.what != "adjudication"]


def history_html(entries: list[Entry], hidden: int = 0) -> str:
    """The history as a table; every field is escaped (names, labels and notes are untrusted)."""
    if not entries:
        rows = '<tr><td colspan="5">No label yet.</td></tr>'
    else:
        rows = "".join(
            f"<tr><td>{escape(e.at)}</td><td>{escape(e.who)}</td><td>{escape(_what(e))}</td>"
            f"<td>{escape(LABEL_TEXT.get(e.label, e.label))}</td><td>{escape(e.note)}</td></tr>" for e in entries)
    note = (f'<div class="cc-meta">{hidden} entr{"y" if hidden == 1 else "ies"} by others hidden until you label '
            "this item (blind mode).</div>") if hidden else ""
    return ('<table class="cc-history"><tr><th>when (UTC)</th><th>who</th><th>what</th><th>label</th><th>note</th></tr>'
            + rows + "</table>" + note)


def _what(e: Entry) -> str:
    if e.what == "label":
        what = "label" if e.marked < 0 else (f"marked words ({e.marked} span{'s' if e.marked != 1 else ''})"
                                             if e.marked else "unmarked every word")
        return f"{what}, withdrawn {e.retracted_at}" if e.retracted_at else what
    return "withdrew the label" if e.what == "retraction" else "adjudicated"
