"""Choosing what a reviewer sees next: answer filters and the resume point."""

from __future__ import annotations

from .dataset import Dataset
from .labels import Label, is_done

FILTERS = {
    "All answers": "all",
    "With failed citations": "failed",
    "Refused": "refused",
    "Not yet labelled by me": "unlabelled",
}


def answer_ids(data: Dataset, filter_name: str, current: dict[tuple[str, str], Label], reviewer: str) -> list[str]:
    """Ids of the answers that pass the filter, in log order."""
    kind = FILTERS.get(filter_name, "all")
    if kind == "all":
        return data.answer_ids  # needs no check at all
    out = []
    for r, items in zip(data.results, data.items_by_answer):
        if kind == "failed" and not r.failed_citations:
            continue
        if kind == "refused" and not r.refused:
            continue
        if kind == "unlabelled" and all(is_done(i, current, reviewer) for i in items):
            continue
        out.append(r.answer.answer_id)
    return out


def first_unlabelled(data: Dataset, current: dict[tuple[str, str], Label], reviewer: str) -> tuple[str, int] | None:
    """(answer id, item position) of the first item this reviewer has no current label for."""
    for r, items in zip(data.results, data.items_by_answer):
        for n, item in enumerate(items):
            if not is_done(item, current, reviewer):
                return r.answer.answer_id, n
    return None
