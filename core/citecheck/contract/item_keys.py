"""What a review item is called: its key, and the labels reviewers and verdicts judges may give it.

An item is one (answer, sentence, citation), or one uncited sentence.  Its key is written into
the labels and verdicts files (docs/labels-format.md), so the format is fixed:
``ANSWER_ID#sSENTENCE#cCITATION`` or ``ANSWER_ID#sSENTENCE#uncited``.  The answer id is free
text and may itself contain ``#``; the last two ``#`` fields are the item's own, so a key is
parsed from the right and every answer id round-trips.

The judge's verdicts are the citation labels a reviewer can give, minus ``cant_tell`` (a judge
that cannot tell says ``unscored``); both sets are derived from one tuple so they cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass

# Ordered from best to worst support; calibration's confusion matrix uses this order.
VERDICTS = ("supported", "partial", "not_supported")
UNSCORED = "unscored"  # what a judge records when it could not score an item
CANT_TELL = "cant_tell"
CITATION_LABELS = (*VERDICTS, CANT_TELL)
UNCITED_LABELS = ("needs_citation", "no_claim")
ALL_LABELS = CITATION_LABELS + UNCITED_LABELS

LABEL_TEXT = {
    "supported": "Supported",
    "partial": "Partially supported",
    "not_supported": "Not supported",
    "cant_tell": "Can't tell",
    "needs_citation": "Needs a citation",
    "no_claim": "No claim to cite",
}

_UNCITED = "uncited"


@dataclass(frozen=True, slots=True)
class ItemKey:
    answer_id: str
    sentence: int
    citation: int | None  # None for an uncited sentence

    def __str__(self) -> str:
        tail = _UNCITED if self.citation is None else f"c{self.citation}"
        return f"{self.answer_id}#s{self.sentence}#{tail}"


def item_key(answer_id: str, sentence: int, citation: int | None) -> str:
    return str(ItemKey(answer_id, sentence, citation))


def _index(part: str, prefix: str, key: str) -> int:
    digits = part[len(prefix):]
    if not part.startswith(prefix) or not digits.isascii() or not digits.isdigit() or len(digits) > 9:
        raise ValueError(f"item key {key!r} does not end in '#s<sentence>#c<citation>' or '#s<sentence>#uncited'")
    return int(digits)


def parse_item_key(key: str) -> ItemKey:
    """The inverse of :func:`item_key`; ``ValueError`` naming the key when it is not one."""
    parts = key.rsplit("#", 2) if isinstance(key, str) else []
    if len(parts) != 3:
        raise ValueError(f"item key {key!r} is not ANSWER_ID#s<sentence>#c<citation> (or #uncited)")
    answer_id, sentence, citation = parts
    return ItemKey(answer_id, _index(sentence, "s", key),
                   None if citation == _UNCITED else _index(citation, "c", key))
