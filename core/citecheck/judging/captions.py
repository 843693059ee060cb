"""What the calibration page says beside its figures: intervals with a warning when n is too small,
the counts that reconcile the labels with the pairs scored, why the Run button is disabled, and the
confusion matrix with readable class names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from citecheck.contract.item_keys import LABEL_TEXT
from citecheck.judging.calibration import CLASSES, Estimate
from citecheck.labelling.labels import Label

# Below this many items an interval says next to nothing (a 3-item sample gives "1.00 to 1.00").
SMALL_N = 30
CLASS_NAMES = {code: LABEL_TEXT[code] for code in CLASSES}  # (the label buttons' names: "Partially supported")


def estimate_caption(est: Estimate) -> str:
    """``"95% CI 0.61 to 0.83, n = 120"``; with a note when n is below SMALL_N.  (It said "too few
    items to say anything", also beside an interval such as 0.00 to 0.12 that says a good deal.)"""
    ci = (f"95% CI {est.low:.2f} to {est.high:.2f}, " if est.low is not None and est.high is not None
          else f"no interval: {est.why}; " if est.why else "")
    text = f"{ci}n = {est.n}"
    if est.n < SMALL_N:
        text += f" \u2014 under {SMALL_N} items: read the interval, not the figure alone; label and judge more"
    return text


def small(est: Estimate) -> bool:
    return est.n < SMALL_N


def left_out(labels: Iterable[Label], fingerprints: Mapping[str, str] | None = None) -> dict[str, int]:
    """Citation items whose current human label is not compared with the judge, by why:
    ``cant_tell`` (the reviewer could not tell) and ``stale`` (the item changed since it was labelled)."""
    latest: dict[str, Label] = {}
    for label in labels:
        if label.citation is not None:
            latest[label.item] = label
    out = {"cant_tell": 0, "stale": 0}
    for key, label in latest.items():
        if label.label not in CLASSES:
            out["cant_tell"] += 1
        elif fingerprints is not None and key in fingerprints and fingerprints[key] != label.fingerprint:
            out["stale"] += 1
    return out


def reconcile_caption(labelled: int, found: int, counts: Mapping[str, int]) -> str:
    """How the labelled items become the compared pairs (the counts add up)."""
    parts = [f"{labelled:,} labelled citation item(s); {found:,} found in the loaded answers"]
    if counts.get("cant_tell"):
        parts.append(f"{counts['cant_tell']:,} labelled \u201cCan't tell\u201d are left out of every figure")
    if counts.get("stale"):
        parts.append(f"{counts['stale']:,} whose answer or chunk changed since labelling are left out")
    return "; ".join(parts) + "."


def run_disabled_reason(items: int, kind: str, key_present: bool) -> str | None:
    """Why the Run button is disabled (None when it is enabled)."""
    if not items:
        return "Nothing to judge: no labelled citation item is in the loaded answers. Label some on the Review page."
    if kind == "claude" and not key_present:
        return "The Claude judge needs ANTHROPIC_API_KEY in the environment or in Streamlit secrets."
    return None


def matrix_frame(matrix) -> pd.DataFrame:
    """The confusion matrix as rows (human, judge, items) with readable class names, in class order."""
    return pd.DataFrame([{"human": CLASS_NAMES[h], "judge": CLASS_NAMES[j], "items": int(matrix[a, b])}
                         for a, h in enumerate(CLASSES) for b, j in enumerate(CLASSES)])
