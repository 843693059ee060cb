"""Choosing what a reviewer sees next: answer filters and the resume point."""

from __future__ import annotations

from ..contract.items import parse_item_key
from .dataset import Dataset
from .labels import Label, is_done
from .sample import Sample

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


# --- working through a calibration sample -------------------------------------------------------


def sample_answer_ids(data: Dataset, sample: Sample) -> list[str]:
    """The answers holding sampled items, in the sample's (random) order; items not in the loaded
    logs are skipped."""
    out: dict[str, None] = {}
    for key in sample.items:
        answer_id = parse_item_key(key).answer_id
        if data.get(answer_id) is not None:
            out[answer_id] = None
    return list(out)


def next_in_sample(data: Dataset, sample: Sample, current: dict[tuple[str, str], Label],
                   reviewer: str) -> tuple[str, int] | None:
    """(answer id, item position) of the first sampled item, in sample order, this reviewer has
    no current label for; None when the sample is done."""
    for key in sample.items:
        answer_id = parse_item_key(key).answer_id
        if data.get(answer_id) is None:
            continue
        for n, item in enumerate(data.items(answer_id)):
            if item.key == key and not is_done(item, current, reviewer):
                return answer_id, n
    return None


def sample_progress(data: Dataset, sample: Sample, current: dict[tuple[str, str], Label],
                    reviewer: str) -> tuple[int, int]:
    """(sampled items this reviewer has a current label for, sampled items in the loaded logs)."""
    wanted = set(sample.items)
    done = total = 0
    for answer_id in sample_answer_ids(data, sample):
        for item in data.items(answer_id):
            if item.key in wanted:
                total += 1
                done += is_done(item, current, reviewer)
    return done, total
