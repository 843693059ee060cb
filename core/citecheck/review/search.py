"""Searching and filtering the review queue: what a reviewer types and picks, and what matches.

One meaning, two paths: :func:`search_dataset` walks a log held in memory;
``storage.checked.search_index.search_store`` asks the same of a checked store in SQL over an
index built beside it.  Both take the words through :func:`terms` and compare texts made by
:func:`field_text`, so what matches is decided in one place (docs/app.md, "Searching and filtering
the queue"):

- A text is folded (Unicode NFKC, then case folding) and cut into words (runs of letters, digits
  and ``_``).  A word of the query matches a text holding that word whole; a quoted phrase
  matches a text holding its words one after another.  Every word and phrase must match (AND),
  each in any of the answer's texts: its question, its answer, any retrieved chunk, any label
  note on it.  An unclosed quote runs to the end of the query; only the first ``MAX_TERMS`` terms
  count.
- The answer filters (model, prompt version, reason code) pick answers; the item filters (status,
  judge verdict, human label, reviewer, assignment, comments, unstable) pick items, and an answer
  is kept when at least one of its items passes all of them.  Without an item filter every item
  of a kept answer matches (an answer with no item too).
- An answer id logged twice is the answer at its first line (as ``Dataset.get`` finds it), listed
  once.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field, fields

from citecheck.checking.checker import AnswerResult
from citecheck.contract import reasons as reason_codes
from citecheck.contract.item_keys import ALL_LABELS
from citecheck.contract.log import Answer
from citecheck.errors import CitecheckError
from citecheck.labelling.dataset import Dataset
from citecheck.labelling.items import Item
from citecheck.labelling.labels import Label

MAX_TERMS = 20  # words and phrases of a query that count; the rest are dropped (and the page says so)
NONE = "(none)"  # the model or prompt version of an answer that logs none (as in the figures)
NO_LABEL = "none"  # the label filter's value for items nobody has labelled
STATUSES = ("verified", "failed", "not_verifiable", "uncited")  # an item's mechanical status
COMMENT_STATES = ("open", "resolved", "none")
_WORD = re.compile(r"\w+")


def filters_on_text(count: int) -> str:
    """What the review page says under its closed Filters when ``count`` filters are set ("" for none)."""
    if not count:
        return ""
    return f"{count} filter{'s' if count > 1 else ''} on (open Filters to change {'them' if count > 1 else 'it'})"


class SearchError(CitecheckError, ValueError):
    """A filter given a value it does not take (the field and the values it takes are named)."""


# --- words ----------------------------------------------------------------------------------------


def fold(text: str) -> str:
    """``text`` as searched: Unicode NFKC (so a composed and a decomposed ``é`` are one), then case folded."""
    return unicodedata.normalize("NFKC", text).casefold()


def words(text: str) -> list[str]:
    """The words of ``text`` as searched (lone surrogates and punctuation are never part of one)."""
    return _WORD.findall(fold(text))


def field_text(text: str) -> str:
    """One text as the search compares it: its words, each with one space either side."""
    return " " + " ".join(words(text)) + " "


def needle(term: tuple[str, ...]) -> str:
    """What a text made by :func:`field_text` holds when ``term`` (a word or a phrase) matches it."""
    return " " + " ".join(term) + " "


def terms(query: str) -> tuple[tuple[str, ...], ...]:
    """The words (1-tuples) and quoted phrases of ``query``, each once, in the order typed, at most
    ``MAX_TERMS`` of them (:func:`dropped` says how many more there were)."""
    return _all_terms(query)[:MAX_TERMS]


def dropped(query: str) -> int:
    return max(0, len(_all_terms(query)) - MAX_TERMS)


def _all_terms(query: str) -> tuple[tuple[str, ...], ...]:
    out: dict[tuple[str, ...], None] = {}
    for n, part in enumerate(query.split('"')):
        found = words(part)
        if n % 2 and found:  # (inside quotes: one phrase)
            out[tuple(found)] = None
        elif not n % 2:
            out.update(((w,), None) for w in found)
    return tuple(out)


def answer_texts(answer: Answer) -> list[str]:
    """The texts of one answer searched besides its notes: question, answer, each retrieved chunk."""
    return [answer.question, answer.answer, *(chunk.text for chunk in answer.chunks)]


def haystack(texts: Sequence[str]) -> str:
    """Texts as one string to look for needles in (no needle spans two texts)."""
    return "\n".join(field_text(t) for t in texts)


# --- what the reviewer asks ----------------------------------------------------------------------


@dataclass(frozen=True)
class Search:
    """A search of the review queue.  Empty strings (and False) are "any"."""

    text: str = ""
    model: str = ""  # an answer's model (NONE: answers that log none)
    prompt_version: str = ""
    reason: str = ""  # a reason code the answer has (docs/checks.md)
    status: str = ""  # the item's mechanical status, one of STATUSES
    judge: str = ""  # a judge run's name: items it gave a verdict (``verdict`` when given)
    verdict: str = ""  # a judge verdict, in ``judge``'s run or any run
    label: str = ""  # a current human label on the item, or NO_LABEL
    reviewer: str = ""  # labelled by (with ``label``: that label by this reviewer)
    assigned_to: str = ""
    assignment: str = ""  # an assignment id
    comments: str = ""  # one of COMMENT_STATES
    unstable: bool = False  # only items whose judge verdicts are unstable

    def __post_init__(self) -> None:
        for name, value, allowed in (("reason", self.reason, reason_codes.ALL_REASONS),
                                     ("status", self.status, STATUSES),
                                     ("label", self.label, (*ALL_LABELS, NO_LABEL)),
                                     ("comments", self.comments, COMMENT_STATES)):
            if value and value not in allowed:
                raise SearchError(f"search field {name}: {value!r} is not one of {', '.join(allowed)}; "
                                  "pick one of those or leave it empty for any")

    @property
    def empty(self) -> bool:
        """Nothing asked: every answer matches."""
        return not terms(self.text) and not any(getattr(self, f.name) for f in fields(self) if f.name != "text")

    @property
    def item_filtered(self) -> bool:
        return bool(self.status or self.judge or self.verdict or self.label or self.reviewer or self.assigned_to
                    or self.assignment or self.comments or self.unstable)


@dataclass(frozen=True)
class Facts:
    """What the item filters are decided from, besides the answers: each given by its owner."""

    labels: Mapping[tuple[str, str], Label] = field(default_factory=dict)  # (item key, reviewer) -> current label
    verdicts: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # judge run -> item key -> verdict
    assigned: Mapping[str, Set[str]] = field(default_factory=dict)  # item key -> reviewers it is assigned to
    assignment_of: Mapping[str, str] = field(default_factory=dict)  # item key -> assignment id
    threads: Mapping[str, str] = field(default_factory=dict)  # item key or answer id -> "open" | "resolved"
    unstable: Set[str] = frozenset()  # item keys whose judge verdicts are unstable


@dataclass(frozen=True)
class Rule:
    """One item filter as sets: an item passes when its key is in ``keys`` or its answer's id is in
    ``answers`` (a thread on the whole answer), or, with ``negate``, when neither is."""

    keys: frozenset[str]
    answers: frozenset[str] = frozenset()
    negate: bool = False

    def passes(self, key: str, answer_id: str) -> bool:
        return (key in self.keys or answer_id in self.answers) != self.negate


def rules(search: Search, facts: Facts) -> tuple[Rule, ...]:
    """The item filters of ``search`` but the mechanical status, each as a :class:`Rule`."""
    out: list[Rule] = []
    by = search.reviewer
    if search.label == NO_LABEL:
        out.append(Rule(frozenset(k for k, who in facts.labels if not by or who == by), negate=True))
    elif search.label or by:
        out.append(Rule(frozenset(k for (k, who), label in facts.labels.items()
                                  if (not by or who == by) and (not search.label or label.label == search.label))))
    if search.judge or search.verdict:
        out.append(Rule(frozenset(k for run, given in facts.verdicts.items() if not search.judge or run == search.judge
                                  for k, v in given.items() if not search.verdict or v == search.verdict)))
    if search.assigned_to:
        out.append(Rule(frozenset(k for k, who in facts.assigned.items() if search.assigned_to in who)))
    if search.assignment:
        out.append(Rule(frozenset(k for k, a in facts.assignment_of.items() if a == search.assignment)))
    if search.comments:
        opened = frozenset(k for k, state in facts.threads.items() if state == "open")
        if search.comments == "open":
            out.append(Rule(opened, opened))
        elif search.comments == "resolved":
            closed = frozenset(k for k, state in facts.threads.items() if state != "open")
            out += [Rule(closed, closed), Rule(opened, opened, negate=True)]
        else:
            every = frozenset(facts.threads)
            out.append(Rule(every, every, negate=True))
    if search.unstable:
        out.append(Rule(frozenset(facts.unstable)))
    return tuple(out)


def verdicts_by_run(verdicts: Iterable) -> dict[str, dict[str, str]]:
    """``Facts.verdicts`` from verdict records (``judging.verdicts.Verdict``, in the order read): per
    judge run ("judge · prompt version"), item key -> the verdict of its latest ordinary pass
    (repeats, kept for self-consistency, are left out)."""
    out: dict[str, dict[str, str]] = {}
    for v in verdicts:
        if not getattr(v, "repeat", 0):
            out.setdefault(f"{v.judge} \u00b7 {v.prompt_version}", {})[v.item] = v.verdict
    return out


def notes_by_answer(labels: Mapping[tuple[str, str], Label]) -> dict[str, list[str]]:
    """Answer id -> the notes of the labels on its items (those that have one)."""
    out: dict[str, list[str]] = {}
    for label in labels.values():
        if label.note:
            out.setdefault(label.answer_id, []).append(label.note)
    return out


def status(result: AnswerResult, item: Item) -> str:
    """The item's mechanical status: its citation's (``verified``, ``failed``, ``not_verifiable``),
    or ``uncited`` for a sentence with no citation."""
    return "uncited" if item.citation is None else result.citations[item.citation].status


# --- what matches ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """The queue a search leaves: matching answers in log order, and the matching items of each."""

    search: Search
    answers: Sequence[str]  # answer ids in log order, each once (a list, or a store's lazy sequence)
    items: Mapping[str, tuple[str, ...]]  # answer id -> its matching item keys, in reading order
    answer_count: int
    item_count: int
    dropped: int = 0  # query terms beyond MAX_TERMS, not used

    @property
    def summary(self) -> str:
        """``37 answers, 52 items match``."""
        a, i = self.answer_count, self.item_count
        return (f"{a:,} answer{'' if a == 1 else 's'}, {i:,} item{'' if i == 1 else 's'} "
                f"match{'es' if i == 1 else ''}")


def search_dataset(data: Dataset, search: Search, facts: Facts = Facts()) -> Found:
    """The answers and items of a log in memory that match ``search``."""
    wanted = [needle(t) for t in terms(search.text)]
    notes = notes_by_answer(facts.labels) if wanted else {}
    texts = data.memo("search:texts", lambda: {}) if wanted else {}
    item_rules = rules(search, facts)
    code = reason_codes.ALL_REASONS.index(search.reason) if search.reason else -1
    out: list[str] = []
    items: dict[str, tuple[str, ...]] = {}
    for i, answer in enumerate(data.answers):
        aid = answer.answer_id
        if data.index.get(aid) != i:  # (a later line of an id logged twice)
            continue
        if search.model and (answer.model or NONE) != search.model:
            continue
        if search.prompt_version and (answer.prompt_version or NONE) != search.prompt_version:
            continue
        if wanted:
            text = texts.get(i)
            if text is None:
                text = texts.setdefault(i, haystack(answer_texts(answer)))
            own = haystack(notes.get(aid, ()))
            if not all(n in text or n in own for n in wanted):
                continue
        if code >= 0 and not data.result(i).tally.reasons[code]:
            continue
        keep = tuple(item.key for item in data.items(aid) if _passes(data, i, item, search, item_rules))
        if search.item_filtered and not keep:
            continue
        out.append(aid)
        items[aid] = keep
    return Found(search, out, items, len(out), sum(len(k) for k in items.values()), dropped(search.text))


def _passes(data: Dataset, i: int, item: Item, search: Search, item_rules: tuple[Rule, ...]) -> bool:
    if search.status and status(data.result(i), item) != search.status:
        return False
    return all(rule.passes(item.key, item.answer_id) for rule in item_rules)


def values(data: Dataset, column: str) -> list[str]:
    """The models (``column`` "model") or prompt versions ("prompt_version") the answers log, sorted
    (NONE for those that log none): what the filters offer."""
    if column not in ("model", "prompt_version"):
        raise ValueError(f"no filter by {column!r}")
    return data.memo(f"search:values:{column}",
                     lambda: sorted({getattr(a, column) or NONE for a in data.answers}))

