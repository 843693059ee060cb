"""A sentence row's label buttons on the review page: one component per row (pages/row_labels/row.js)
instead of a Streamlit button per label, which cost the browser about 10 ms each on every key
press (the page draws a row per cited chunk).  What it shows and what a click may give are decided in
core (``review_view.row_labels_data``, ``row_choice``); a click is saved by the same callback as the
focused item's buttons, and a label the item already has is saved as nothing
(``label_actions.repeats``)."""

from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st
from citecheck.review import review_view

from pages import _triggers as triggers

_ROW = Path(__file__).resolve().parent / "row_labels"
ROW_LABELS = st.components.v2.component(
    "citecheck_row_labels",
    css=(_ROW / "row.css").read_text(encoding="utf-8"),
    js=(_ROW / "row.js").read_text(encoding="utf-8"),
    isolate_styles=False,  # (class names are prefixed ccrl-)
)


def _row_clicked(key: str, item, at: tuple[str, int], save) -> None:
    # (a click on the label the item already has is saved as nothing: label_actions.repeats)
    if (label := review_view.row_choice(triggers.value(key, "label"), item)) is not None:
        save(at, label)


def row_labels(where, item, at: tuple[str, int], current, reviewer: str, rules, save) -> None:
    """The label buttons of the item at ``at`` (answer id, position), the reviewer's current label
    ticked; a click saves through ``save``, the focused item's buttons' callback."""
    chosen = review_view.chosen_label(item, current, reviewer)
    key = f"r-{item.key}"
    with where:
        ROW_LABELS(key=key, data=review_view.row_labels_data(item, chosen, rules),
                   on_label_change=functools.partial(_row_clicked, key, item, at, save))
