"""The calibration set: one row per labelled item, joined to the log and the checker's verdict.

Each row carries every reviewer's latest label that counts (retracted labels never appear), the
adjudication if any, and the item's human label with the rule that settled it
(``labelling.consensus``: adjudicated, majority, single; or why it is left out)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping

from citecheck.contract import spreadsheet
from citecheck.labelling import marked_spans
from citecheck.labelling.consensus import resolve
from citecheck.labelling.dataset import Dataset
from citecheck.labelling.events import Adjudication
from citecheck.labelling.labels import Label, latest


def rows(data: Dataset, records: list[Label], adjudicated: Mapping[str, Adjudication] | None = None,
         overlap: int = 1, problems: list[str] | None = None) -> Iterator[dict]:
    """One row per item that has at least one label (or an adjudication), with every reviewer's
    latest label, the adjudication and the human label with its rule.  A label that marks words
    carries its ``spans`` and their ``marked`` text; spans that do not fit the item's sentence in
    the log are left out, and why is added to ``problems``."""
    adjudicated = adjudicated or {}
    current = latest(records)
    by_item: dict[str, list[Label]] = {}
    for (key, _), label in current.items():
        by_item.setdefault(key, []).append(label)
    settled = resolve(records, adjudicated, overlap, {i.key: i.fingerprint for i in data.all_items})
    for result, items in zip(data.results, data.items_by_answer):
        a = result.answer
        for item in items:
            given = by_item.get(item.key, [])
            adj = adjudicated.get(item.key)
            if not given and adj is None:
                continue
            resolution = settled.get(item.key)
            s = result.sentences[item.sentence]
            c = result.citations[item.citation] if item.citation is not None else None
            chunk = a.chunks[c.chunk_index] if c is not None and c.chunk_index is not None else None
            yield {
                "item": item.key,
                "answer_id": a.answer_id,
                "sentence_index": item.sentence,
                "citation_index": item.citation,
                "chunk_id": item.chunk_id,
                "fingerprint": item.fingerprint,
                "question": a.question,
                "sentence": s.text,
                "quote": c.quote if c else None,
                "chunk_text": chunk.text if chunk else None,
                "checksum": chunk.checksum if chunk else None,
                "mechanical_status": "uncited" if c is None else c.status,
                "reasons": list(c.reasons) if c else list(s.reasons),
                "model": a.model,
                "prompt_version": a.prompt_version,
                "labels": {
                    lab.reviewer: {"label": lab.label, "note": lab.note, "at": lab.at,
                                   "stale": lab.fingerprint != item.fingerprint,
                                   **_marked(a.answer, (s.start, s.end), lab, problems)}
                    for lab in sorted(given, key=lambda x: x.reviewer)
                },
                "adjudication": None if adj is None else {
                    "label": adj.label, "note": adj.note, "adjudicator": adj.adjudicator, "at": adj.at,
                    "stale": adj.fingerprint != item.fingerprint,
                    "resolves": [{"reviewer": r.reviewer, "label": r.label, "at": r.at} for r in adj.resolves]},
                "human_label": None if resolution is None else resolution.label,
                "human_label_rule": "stale" if resolution is None else resolution.rule,
            }


def _marked(answer: str, sentence: tuple[int, int], label: Label, problems: list[str] | None) -> dict:
    """A label's ``spans`` and ``marked`` text for its row ({} when it marks nothing, or when its
    spans do not fit the sentence: then the reason goes to ``problems``)."""
    if not label.spans:
        return {}
    if (why := marked_spans.outside(label.spans, sentence, len(answer))) is not None:
        if problems is not None:
            problems.append(f"{label.reviewer}'s label of {label.item} (at {label.at}): {why}; its marked words are "
                            "left out (the answer changed since they were marked: mark them again)")
        return {}
    return {"spans": [list(s) for s in label.spans], "marked": marked_spans.marked_text(answer, label.spans)}


def to_jsonl(items: Iterator[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in items)


def to_csv(items: Iterator[dict]) -> str:
    """CSV with a ``label:<reviewer>`` and ``note:<reviewer>`` column per reviewer (stale labels
    marked), ``spans:<reviewer>`` and ``marked:<reviewer>`` (JSON lists) for each reviewer who marked
    words in any row, and ``adjudication`` / ``adjudicated_by`` columns."""
    materialised = list(items)
    for r in materialised:
        adj = r.pop("adjudication", None)
        r["adjudication"] = "" if adj is None else adj["label"] + (" (stale)" if adj["stale"] else "")
        r["adjudicated_by"] = "" if adj is None else adj["adjudicator"]
    reviewers = sorted({who for r in materialised for who in r["labels"]})
    marking = [who for who in reviewers if any("spans" in r["labels"].get(who, {}) for r in materialised)]
    base = [k for k in (materialised[0] if materialised else {}) if k != "labels"] or ["item"]
    out = io.StringIO()
    writer = spreadsheet.Writer(out)  # (texts a spreadsheet would run as formulas)
    writer.writerow(base + [f"{p}:{who}" for who in reviewers for p in ("label", "note")]
                     + [f"{p}:{who}" for who in marking for p in ("spans", "marked")])
    for r in materialised:
        cells = [";".join(r[k]) if isinstance(r[k], list) else r[k] for k in base]
        for who in reviewers:
            lab = r["labels"].get(who)
            cells += ([lab["label"] + (" (stale)" if lab["stale"] else ""), lab["note"]] if lab else ["", ""])
        for who in marking:
            lab = r["labels"].get(who) or {}
            cells += ([json.dumps(lab["spans"]), json.dumps(lab["marked"], ensure_ascii=False)] if "spans" in lab
                      else ["", ""])
        writer.writerow(cells)
    return out.getvalue()
