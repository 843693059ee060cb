"""A label given or withdrawn on the review page: written to the labels store, and the notice that
says what happened (the session's ``flash``, as in :mod:`.navigation`).  A label is acknowledged only
once the store has taken it; a failure says plainly that nothing was saved, and why."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from citecheck.errors import StoreError
from citecheck.labelling import labels, marked_spans
from citecheck.labelling.dataset import AnswerSource
from citecheck.labelling.items import LABEL_TEXT
from citecheck.labelling.sample import Sample
from citecheck.review.identity import Identity, how_to_name
from citecheck.review.navigation import moved
from citecheck.review.session_state import ReviewState, State, acting, once


def save(state: State, data: AnswerSource, at: tuple[str, int], label: str, target: str | Path, who: Identity,
         guidelines: str = "", sample: Sample | None = None,
         current: Callable[[], Mapping[tuple[str, str], labels.Label]] | None = None,
         drawn: str | None = None) -> tuple[tuple[str, int], tuple[str, str]] | None:
    """Label the item ``at`` (answer id, position): the item the button was drawn on, so that a
    press delivered twice labels it once, never the item the first call moved on to.
    The note is the item's note box of this reviewer (``session_state.note_key``); ``current()`` gives the labels that count, to
    leave out a label that only repeats the reviewer's current one (:func:`repeats`).  Returns where
    the label went and the notice (kind, text) saying it was saved, or None with the error flashed.
    ``drawn`` names the drawing the button was pressed on: the same press again (a callback called
    twice, the first cut short before it could say so) is still "Saved", not "already labelled"."""
    with acting(state) as act:  # one callback of this session at a time (session_state.acting)
        session = ReviewState(state)
        answer_id, index = at
        item = data.items(answer_id)[index]
        note = session.note(item.key, who.name.strip())
        in_sample = sample.sample_id if sample is not None and item.key in sample else ""
        mine = current().get((item.key, who.name.strip())) if current is not None and who.name.strip() else None
        press = ("label", drawn, item.key, label) if drawn is not None else None
        if repeats(mine, item.fingerprint, label, note, in_sample, guidelines):
            saved = labels.saved_message(LABEL_TEXT[label], item.sentence, item.answer_id)
            if act.done(press) or (session.flash is not None and session.flash[0] == "success"
                                   and session.flash[1].startswith(saved)):
                return (item.answer_id, index), ("success", saved)  # the same press again, not yet shown: still "Saved"
            return (item.answer_id, index), ("info", labels.unchanged_message(LABEL_TEXT[label], item.sentence, item.answer_id))
        try:
            labels.append(target, labels.make_label(item, label, who.name, note, sample=in_sample, guidelines=guidelines,
                                                    spans=carried_spans(mine, item.fingerprint, label)))
        except labels.LabelError as exc:
            session.flash = ("error", f"Not saved: {exc}. {how_to_name(who)}, then label again.")
            return None
        except OSError as exc:  # the disk is full...: said plainly, and the label is not acknowledged
            session.flash = ("error", labels.not_saved_message(exc, LABEL_TEXT[label], item.sentence))
            return None
        except StoreError as exc:  # its message names the database without the password
            session.flash = ("error", f"Not saved: could not save the label: {exc}")
            return None
        act.did(press, True)
        return (item.answer_id, index), ("success", labels.saved_message(LABEL_TEXT[label], item.sentence, item.answer_id))


def repeats(mine: labels.Label | None, fingerprint: str, label: str, note: str, sample: str, guidelines: str) -> bool:
    """Whether a label would only repeat the reviewer's current one (``mine``): same item version,
    label, note, sample and guidelines.  Nothing new is then recorded, so a key sent twice, or a
    button pressed again, adds no record (and keeps the words marked in it)."""
    return (mine is not None and mine.fingerprint == fingerprint and mine.label == label and mine.note == note
            and mine.sample == sample and mine.guidelines == guidelines)


def carried_spans(mine: labels.Label | None, fingerprint: str, label: str) -> marked_spans.Spans:
    """The words marked in the reviewer's current label, kept when they change it between Partially
    and Not supported (both say which words are not supported); none otherwise."""
    if mine is None or mine.fingerprint != fingerprint:
        return ()
    if label in marked_spans.SPAN_LABELS and mine.label in marked_spans.SPAN_LABELS:
        return mine.spans
    return ()


def undo(state: State, data: AnswerSource, target: str | Path, read_labels: Callable[[], Sequence[labels.Label]], name: str,
         drawn: str | None = None) -> None:
    """Z: withdraw ``name``'s last label (a retraction appended) and go back to its item.
    ``read_labels`` gives the labels as they are now (read only when there is a name).  ``drawn``
    names the drawing of the page the button was pressed on (a new one each run): a second call
    for the same drawing (Streamlit can call a callback again for one press, the first cut short;
    or a double click while the page runs) withdraws nothing more, and says and does what the
    first did (``session_state.acting``)."""
    with acting(state):
        flash, place = once(state, ("undo", drawn) if drawn is not None else None,
                            lambda: _withdraw(data, target, read_labels, name))
        session = ReviewState(state)
        session.flash = flash
        if place is not None:
            session.answer_id, session.focus = place
            moved(state)


def _withdraw(data: AnswerSource, target: str | Path, read_labels: Callable[[], Sequence[labels.Label]],
              name: str) -> tuple[tuple[str, str], tuple[str, int] | None]:
    """Undo's work: the notice saying what it did, and the item to go back to (or None)."""
    try:
        current = read_labels() if name else ()
        withdrawn = labels.retract_last(target, current, name) if name else None
    except (OSError, StoreError) as exc:
        return ("error", f"Nothing withdrawn: could not write the labels store ({exc})."), None
    if withdrawn is None:
        return ("info", "You have no label to withdraw." if name else "Enter your name first."), None
    flash = ("success", labels.withdrawn_message(withdrawn, current))
    keys = [i.key for i in data.items(withdrawn.answer_id)] if data.get(withdrawn.answer_id) is not None else []
    return flash, ((withdrawn.answer_id, keys.index(withdrawn.item)) if withdrawn.item in keys else None)
