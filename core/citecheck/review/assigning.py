"""What a lead assigns: the item keys of a calibration sample, of a filter over the answers, or of a
list of answer ids, each with the ``source`` an assignment records (docs/labels-format.md, "Assignments").

The filter is the review page's search (``review.search``: model, prompt version, reason code,
judge verdict) plus a date range on the answers' logged ``timestamp`` (the UTC date, both ends
included; an answer that logs no timestamp is left out once a range is asked).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from citecheck.contract.item_keys import parse_item_key
from citecheck.errors import CitecheckError
from citecheck.labelling.dataset import AnswerSource, Dataset
from citecheck.labelling.sample import Sample
from citecheck.review.search import Facts, Search, search_dataset


class WorkError(CitecheckError, ValueError):
    """Work that cannot be picked as asked (the message says what to give instead)."""


@dataclass(frozen=True, slots=True)
class Picked:
    keys: tuple[str, ...]  # item keys, in the order the queue will serve them
    source: str  # what an assignment records as its source
    missing: tuple[str, ...] = ()  # answer ids or item keys asked for that the loaded answers lack


def from_sample(data: AnswerSource, sample: Sample) -> Picked:
    """The sample's items that the loaded answers hold, in the sample's (random) order."""
    keys: list[str] = []
    missing: list[str] = []
    known: dict[str, set[str]] = {}
    for key in sample.items:
        answer_id = parse_item_key(key).answer_id
        if answer_id not in known:
            known[answer_id] = {i.key for i in data.items(answer_id)} if data.get(answer_id) is not None else set()
        (keys if key in known[answer_id] else missing).append(key)
    return Picked(tuple(keys), f"sample:{sample.sample_id}", tuple(missing))


def from_answers(data: AnswerSource, answer_ids: Iterable[str]) -> Picked:
    """Every item of each answer given, answers in the order given (each once)."""
    keys: list[str] = []
    missing: list[str] = []
    for answer_id in dict.fromkeys(a.strip() for a in answer_ids if a.strip()):
        if data.get(answer_id) is None:
            missing.append(answer_id)
        keys += [item.key for item in data.items(answer_id)]
    return Picked(tuple(keys), "answers", tuple(missing))


def _day(value: str, name: str) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise WorkError(f"{name} {value!r} is not a date written YYYY-MM-DD") from None


def _logged_day(timestamp: str | None) -> date | None:
    try:
        return date.fromisoformat(timestamp[:10]) if timestamp else None
    except ValueError:
        return None


def from_filter(data: Dataset, model: str = "", prompt_version: str = "", reason: str = "", verdict: str = "",
                since: str = "", until: str = "", verdicts: Mapping[str, Mapping[str, str]] | None = None) -> Picked:
    """The items of the answers that pass the filter, in log order.  ``verdicts``: judge run ->
    item key -> verdict (needed for ``verdict``); with a verdict, only the items it was given to."""
    first, last = _day(since, "since"), _day(until, "until")
    if first and last and first > last:
        raise WorkError(f"since {since} is after until {until}: give the earlier date first")
    if verdict and not verdicts:
        raise WorkError("a judge verdict filter needs the verdicts: give --verdicts (or run a judge first)")
    try:
        found = search_dataset(data, Search(model=model, prompt_version=prompt_version, reason=reason,
                                            verdict=verdict), Facts(verdicts=verdicts or {}))
    except CitecheckError as exc:
        raise WorkError(str(exc)) from None
    keys: list[str] = []
    for answer_id in found.answers:
        if first or last:
            result = data.get(answer_id)
            day = _logged_day(result.answer.timestamp if result is not None else None)
            if day is None or (first and day < first) or (last and day > last):
                continue
        keys += found.items.get(answer_id, ())
    asked = [f"{k}={v}" for k, v in (("model", model), ("prompt", prompt_version), ("reason", reason),
                                     ("verdict", verdict), ("since", since), ("until", until)) if v]
    return Picked(tuple(keys), "filter:" + (",".join(asked) or "all"))


def answer_list(text: str) -> list[str]:
    """Answer ids typed or given as ``a-001,a-002`` (commas, spaces or lines between them)."""
    return [part for part in text.replace(",", " ").split() if part]


def not_loaded_note(missing: Sequence[str]) -> str:
    """What the page or command says about ids asked for that the loaded answers lack ("" when none)."""
    if not missing:
        return ""
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5:,} more" if len(missing) > 5 else "")
    return f"{len(missing):,} asked for but not in the loaded answers, left out: {shown}"
