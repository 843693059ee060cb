"""The label that counts for an item when several reviewers (and perhaps a lead) labelled it.

Per item, in this order (docs/judge.md, "Calibration"):

1. ``adjudicated``: the latest adjudication on the item (``labelling.events``), if it is current;
2. ``majority``: with at least ``overlap`` (and at least two) current labels, the label more than
   half of them give;
3. ``single``: the one current label, when only one reviewer has labelled the item.

An item none of these settle is left out, under its reason: ``no_majority`` (enough labels, but
no label has more than half: it waits for an adjudication) or ``incomplete`` (two or more labels
but fewer than ``overlap``: it waits for its other reviewers).  Current means not stale: with
``fingerprints`` (item key to the item's fingerprint in the logs) a label or adjudication made on
another version of the item is left out.  Each reviewer counts once (their latest label).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from citecheck.labelling.events import Adjudication
from citecheck.labelling.labels import Label, latest

RULES = ("adjudicated", "majority", "single")
LEFT_OUT = ("no_majority", "incomplete")


@dataclass(frozen=True, slots=True)
class Resolution:
    item: str
    label: str | None  # None when the item is left out
    rule: str  # one of RULES or LEFT_OUT
    labels: tuple[Label, ...]  # the current labels, one per reviewer, by reviewer name


def _current(label_or_adj: Label | Adjudication, fingerprints: Mapping[str, str] | None) -> bool:
    if fingerprints is None or label_or_adj.item not in fingerprints:
        return True
    return fingerprints[label_or_adj.item] == label_or_adj.fingerprint


def resolve(labels: Iterable[Label], adjudicated: Mapping[str, Adjudication] | None = None, overlap: int = 1,
            fingerprints: Mapping[str, str] | None = None) -> dict[str, Resolution]:
    """The resolution of every item with a current label or adjudication.  ``labels``: the labels
    that count (retracted ones already left out, as ``labels.read`` gives them)."""
    by_item: dict[str, list[Label]] = {}
    for (key, _), label in latest(labels).items():
        if _current(label, fingerprints):
            by_item.setdefault(key, []).append(label)
    adjudicated = {k: a for k, a in (adjudicated or {}).items() if _current(a, fingerprints)}
    out: dict[str, Resolution] = {}
    for key in dict.fromkeys([*by_item, *adjudicated]):
        given = tuple(sorted(by_item.get(key, []), key=lambda lab: lab.reviewer))
        if key in adjudicated:
            out[key] = Resolution(key, adjudicated[key].label, "adjudicated", given)
        elif len(given) == 1:
            out[key] = Resolution(key, given[0].label, "single", given)
        elif len(given) < overlap:
            out[key] = Resolution(key, None, "incomplete", given)
        else:
            value = majority_label(given)
            out[key] = Resolution(key, value, "majority" if value is not None else "no_majority", given)
    return out


def majority_label(given: Iterable[Label]) -> str | None:
    """The label more than half of ``given`` (one current label per reviewer) give; None when none does."""
    counts = Counter(lab.label for lab in given)
    if not counts:
        return None
    value, votes = counts.most_common(1)[0]
    return value if votes * 2 > sum(counts.values()) else None


def majority_settles(given: Sequence[Label], overlap: int) -> bool:
    """Whether :func:`resolve` settles an item with these current labels (and no adjudication) by
    the majority rule: at least two labels, at least ``overlap``, and a label more than half give."""
    return len(given) >= max(2, overlap) and majority_label(given) is not None


def rule_counts(resolutions: Iterable[Resolution]) -> dict[str, int]:
    """How many items each rule settled and how many were left out for each reason (every key present)."""
    counts = dict.fromkeys(RULES + LEFT_OUT, 0)
    for r in resolutions:
        counts[r.rule] += 1
    return counts


def counts_text(counts: Mapping[str, int]) -> str:
    """``12 adjudicated, 30 by majority, 8 single; left out: 2 with no majority, 1 incomplete``."""
    settled = f"{counts['adjudicated']} adjudicated, {counts['majority']} by majority, {counts['single']} single label"
    return (settled + f"; left out: {counts['no_majority']} with no majority (adjudicate them), "
            f"{counts['incomplete']} with fewer labels than the overlap")
