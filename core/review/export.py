"""The calibration set: one row per labelled item, joined to the log and the checker's verdict."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

from .dataset import Dataset
from .labels import Label, latest


def rows(data: Dataset, records: list[Label]) -> Iterator[dict]:
    """One row per item that has at least one label, with every reviewer's latest label."""
    current = latest(records)
    by_item: dict[str, list[Label]] = {}
    for (key, _), label in current.items():
        by_item.setdefault(key, []).append(label)
    for result, items in zip(data.results, data.items_by_answer):
        a = result.answer
        for item in items:
            given = by_item.get(item.key)
            if not given:
                continue
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
                                   "stale": lab.fingerprint != item.fingerprint}
                    for lab in sorted(given, key=lambda x: x.reviewer)
                },
            }


def to_jsonl(items: Iterator[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in items)


def to_csv(items: Iterator[dict]) -> str:
    """CSV with a ``label:<reviewer>`` and ``note:<reviewer>`` column per reviewer (stale labels marked)."""
    materialised = list(items)
    reviewers = sorted({who for r in materialised for who in r["labels"]})
    base = [k for k in (materialised[0] if materialised else {}) if k != "labels"] or ["item"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(base + [f"{p}:{who}" for who in reviewers for p in ("label", "note")])
    for r in materialised:
        cells = [";".join(r[k]) if isinstance(r[k], list) else r[k] for k in base]
        for who in reviewers:
            lab = r["labels"].get(who)
            cells += ([lab["label"] + (" (stale)" if lab["stale"] else ""), lab["note"]] if lab else ["", ""])
        writer.writerow(cells)
    return out.getvalue()
