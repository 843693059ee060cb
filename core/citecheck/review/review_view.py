"""What the review page shows besides the answer itself, built without Streamlit: the reviewer's
progress, the focused item's heading and history, the sentence rows of the page shown, and for
each item what blind mode lets the reviewer see (their own label, the judges' verdicts, the other
reviewers' labels) or the count of what it hides.

HTML comes from :mod:`.html` and :mod:`.history` (every text escaped); the plain texts here hold
only counts, names and ids, shown by the page with ``st.html`` notices.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from citecheck.checking import answer_problems
from citecheck.checking.checker import AnswerResult
from citecheck.labelling import history
from citecheck.labelling.items import LABEL_TEXT, Item
from citecheck.labelling.labels import Label, Progress
from citecheck.review import paging
from citecheck.review.html import (
    agent_trace_html,
    citation_html,
    fields_html,
    focus_marker_html,
    focus_token,
    labelled_html,
    notice_html,
    others_html,
    own_label_html,
    reader_html,
    unresolved_html,
    verdict_html,
    withheld_html,
)
from citecheck.review.queue import TeamProgress
from citecheck.text.highlight import escape
from citecheck.text.markup import md_literal


def judged_by_item(verdicts: Iterable) -> dict[str, dict]:
    """Item key -> the latest verdict on it of each run (judge and prompt version), in the order read:
    the ordinary runs only (``judge --repeat`` adds repeats that measure self-consistency)."""
    out: dict[str, dict] = {}
    for v in verdicts:
        if not getattr(v, "repeat", 0):
            out.setdefault(v.item, {})[v.run] = v
    return out


def progress_text(reviewer: str, overall: TeamProgress, here: Progress, overlap: int) -> str:
    """The reviewer's and the team's progress, overall and in the open answer."""
    return (f"{reviewer}: labelled {overall.mine:,} of {overall.total:,} items overall, "
            f"{here.labelled:,} of {here.total:,} in this answer"
            + (f" ({here.stale} stale)" if here.stale else "")
            + f" \u00b7 team: {overall.done:,} of {overall.total:,} items done"
            + (f" ({overlap} reviewers each)" if overlap > 1 else ""))


def share_done(overall: TeamProgress) -> float:
    """The progress bar's fill: the team's share of items done (full when there is no item)."""
    return overall.done / overall.total if overall.total else 1.0


def sample_text(sample_id: str, done: int, total: int) -> str:
    """The reviewer's progress through a calibration sample; Resume is offered only while an item is left."""
    if done >= total:
        return (f"Calibration sample {sample_id}: all {total:,} sampled items labelled by you; "
                "none is left for Resume (U) to open.")
    return (f"Calibration sample {sample_id}: {done:,} of {total:,} sampled items labelled by you; "
            "Resume (U) opens the next one.")


def focused_heading(items: Sequence[Item], focus: int) -> list[tuple[str, str]]:
    """The focused item's heading (for ``labelled_html``): its place, its sentence and chunk."""
    item = items[focus]
    return [(f"Focused item {focus + 1} of {len(items)}",
             f"sentence {item.sentence + 1}" + ("" if item.citation is None else f", citation of {item.chunk_id}"))]


def chosen_label(item: Item, current: Mapping[tuple[str, str], Label], reviewer: str) -> str | None:
    """The reviewer's current label on the item, None when they have none or it is stale."""
    lab = current.get((item.key, reviewer)) if reviewer else None
    return lab.label if lab is not None and lab.fingerprint == item.fingerprint else None


def label_help(rules, label: str) -> str | None:
    """A label button's tooltip: the guidelines' definition of the label, as literal text."""
    definition = rules.definitions.get(label) if rules else None
    return md_literal(definition) if definition else None


@dataclass(frozen=True, slots=True)
class LabelButton:
    label: str  # the label it gives
    text: str  # what it says; the reviewer's current label ticked
    key: str  # the widget key: ``prefix-label``
    primary: bool  # the reviewer's current label
    shortcut: str | None  # "1".."4" on the focused item's buttons
    help: str | None  # the guidelines' definition, as literal text


def label_buttons(item: Item, chosen: str | None, rules, prefix: str, shortcuts: bool) -> list[LabelButton]:
    """One button per label of the item, in order (``chosen`` from :func:`chosen_label`)."""
    return [LabelButton(label, ("\u2713 " if label == chosen else "") + LABEL_TEXT[label], f"{prefix}-{label}",
                        label == chosen, str(k + 1) if shortcuts else None, label_help(rules, label))
            for k, label in enumerate(item.labels)]


def row_labels_data(item: Item, chosen: str | None, rules) -> dict:
    """What a sentence row's label buttons are drawn from (pages/row_labels/row.js): the item's
    labels in order with their texts and the guidelines' definitions (plain text: the browser puts
    them in ``title``), the reviewer's current label, and a token naming the item (its key is
    untrusted text).  One component per row: a Streamlit button per label cost the browser about
    10 ms each on every key press."""
    definitions = rules.definitions if rules else {}
    return {"token": focus_token(item.key), "chosen": chosen,
            "labels": [[label, LABEL_TEXT[label], definitions.get(label) or ""] for label in item.labels]}


def row_choice(value: object, item: Item) -> str | None:
    """The label a click on a row's buttons gives (``{"token", "label"}`` from the browser, not
    trusted), or None when it is not for this item or not one of its labels."""
    if not isinstance(value, Mapping) or value.get("token") != focus_token(item.key):
        return None
    label = value.get("label")
    return label if isinstance(label, str) and label in item.labels else None


def history_html(events: Iterable, item: Item, reviewer: str, blind: bool, chosen: str | None) -> str:
    """The item's label history; in blind mode, until the reviewer has labelled it, only their own
    entries (the others counted as hidden)."""
    entries = history.by_item(e for e in events if getattr(e, "item", None) == item.key).get(item.key, [])
    mine = history.visible(entries, reviewer if blind and chosen is None else None)
    return history.history_html(mine, hidden=len(entries) - len(mine))


# --- the sentence rows ------------------------------------------------------------------------------


def unresolved(result: AnswerResult, sentence) -> list[str]:
    """The sentence's citations that name no chunk of the answer, as HTML (they have no item)."""
    return [unresolved_html(result, c) for c in (result.citations[i] for i in sentence.citations)
            if c.chunk_index is None]


def answer_parts(result: AnswerResult) -> tuple[list[str], list[str]]:
    """The answer as the reader sees it, as HTML: its fields, question and text; then what the
    pipeline recorded beside it (withheld sentences, the search agent's trace), when it did."""
    a = result.answer
    why = answer_problems.why_text(result)
    head = [fields_html([a.model, a.prompt_version, a.timestamp])]
    if why:  # why the answer fails, in one line: each problem with its sentence and marker
        head.append(f'<div class="cc-fail cc-why">{escape(why)}</div>')
    if a.question.strip():  # (an answer logged without its question shows no bare "Question:")
        head.append(labelled_html([("Question", a.question)]))
    head.append(reader_html(result, paging.MAX_ANSWER_CHARS))
    return head, [h for h in (withheld_html(a.extra), agent_trace_html(a.extra)) if h]


def start_page(items: Sequence[Item], focus: int) -> int:
    """The sentences page holding the focused item (the first when the answer has no item)."""
    return paging.page_of(items[focus].sentence) if items else 1


def by_sentence(items: Sequence[Item], shown: paging.Window) -> dict[int, list[int]]:
    """Sentence index -> the positions in ``items`` of its items, for the sentences shown only."""
    out: dict[int, list[int]] = {}
    for n in paging.items_in(items, shown):
        out.setdefault(items[n].sentence, []).append(n)
    return out


@dataclass(frozen=True, slots=True)
class ItemView:
    """What an item's box shows, HTML parts in order: the focus marker and the citation (``head``),
    the whole chunk (folded), the reviewer's own label and what blind mode lets them see
    (``shown``: the judges' verdicts, then the others' labels), or the note (counts only) in
    place of what it hides."""

    head: tuple[str, ...]
    whole: str | None  # the cited chunk in full; None for an uncited sentence
    shown: tuple[str, ...]
    hidden: str | None  # "2 judge verdict(s) and 1 other reviewer label(s) hidden ..."
    fold: str = ""  # the item's token (hex, ``focus_token``): the key listener keeps its fold open

    def html(self) -> str:
        """The box's HTML, for one ``st.html`` element: what the item is (the focus marker, the
        citation), the whole chunk in a ``<details>`` fold, then what is said of it (labels,
        verdicts, or the count of what blind mode hides).  Each Streamlit element costs the browser
        about a millisecond per key press, so a box holds one, not one per part (the key listener,
        :mod:`.keypresses`, keeps a fold the reviewer opened open when a run draws the box again)."""
        fold = "" if self.whole is None else (f'<details class="cc-whole" data-fold="{self.fold}">'
                                           f"<summary>Whole chunk</summary>{self.whole}</details>")
        said = "".join(self.shown) + (f'<div class="cc-meta">{escape(self.hidden)}</div>' if self.hidden else "")
        return "".join(self.head) + fold + said


def item_view(result: AnswerResult, items: Sequence[Item], n: int, focus: int,
              current: Mapping[tuple[str, str], Label], reviewer: str, verdicts: Mapping,
              others: Sequence[Label], blind: bool, moves: int = 0,
              notice: tuple[str, str] | None = None, run: str = "") -> ItemView:
    """The box of item ``n`` of ``items`` (the focused one marked, with the session's count of focus
    ``moves``); ``verdicts`` is the item's entry of :func:`judged_by_item`, ``others`` its entry of
    ``labels.others_by_item``.  ``notice`` (kind, text), what the reviewer's last key or click did
    ("Saved ...", "This is the last item ..."), goes under the focus mark: where the page has just
    scrolled to, not at the top of the page, out of view (and shifting everything below it).
    ``run`` names the page's run (``html.run_token``), carried by the focus mark."""
    item = items[n]
    head, whole = [], None
    if n == focus:
        head.append(focus_marker_html(item.key, n + 1, len(items), moves, len(item.labels), run))
        if notice is not None:
            head.append(notice_html(*notice))
    if item.citation is not None:
        c = result.citations[item.citation]
        head.append(citation_html(result, c))
        whole = citation_html(result, c, whole=True)
    mine = current.get((item.key, reviewer)) if reviewer else None
    unlabelled = mine is None or mine.fingerprint != item.fingerprint
    shown = [] if mine is None else [own_label_html(LABEL_TEXT[mine.label], mine.note, unlabelled)]
    if blind and unlabelled and (verdicts or others):
        return ItemView(tuple(head), whole, tuple(shown),
                        f"{len(verdicts)} judge verdict(s) and {len(others)} other reviewer label(s) hidden "
                        "until you label this item (blind mode).", focus_token(item.key))
    shown += [verdict_html(v.judge, v.prompt_version, v.verdict, v.rationale) for v in verdicts.values()]
    if others:
        shown.append(others_html([(lab.reviewer, LABEL_TEXT[lab.label]) for lab in others]))
    return ItemView(tuple(head), whole, tuple(shown), None, focus_token(item.key))
