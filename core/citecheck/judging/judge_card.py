"""The judge card: one judge and prompt version's measurement, in Markdown and JSON, for a reviewer of
the process to audit (docs/judge.md#the-judge-card).

A card is built from what calibrate already computed (``calibration.calibrate``: the figures are
the same objects ``citecheck calibrate`` prints), self-consistency (``consistency``), the cost per
compared item (``comparison.cost_per_item``) and, when the judged population is known, the PPI++
estimate of the not-supported rate it supports (``estimate.estimate``).  Judge names, prompt
versions, guidelines versions and item keys come from files: the Markdown escapes them
(``text.markup.md_literal``), the JSON holds them as they are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from citecheck.judging.calibration import POSITIVE, Calibration, Estimate, latest_by_item
from citecheck.judging.comparison import Cost, cost_per_item
from citecheck.judging.consistency import Consistency
from citecheck.judging.estimate import Estimates
from citecheck.judging.verdicts import Verdict
from citecheck.text.markup import md_literal

CARD_VERSION = 1
FIGURE_NAMES = {"accuracy": "accuracy (3 classes)", "kappa": "Cohen's kappa", "weighted_kappa": "linearly weighted kappa",
                "tpr": "TPR (not supported caught)", "tnr": "TNR (others left alone)", "precision": "precision",
                "recall": "recall", "f1": "F1"}
UNSTABLE_SHOWN = 20
NOT_MEASURED = "not measured: run judge --repeat K"


@dataclass(frozen=True, slots=True)
class CardEstimate:
    """The PPI++ estimate of the not-supported citation rate the judge supports."""

    value: float | None
    low: float | None
    high: float | None
    labels: int  # n: labels used
    judged: int  # N: the judged population
    effective_labels: float | None  # labels alone that would give the same interval width
    labels_alone: tuple[float | None, float | None]  # the Wilson interval of the labels alone, for comparison
    note: str = ""

    def to_dict(self) -> dict:
        def r(x):
            return None if x is None else round(float(x), 4)
        return {"method": "ppi++", "value": r(self.value), "interval": [r(self.low), r(self.high)], "n": self.labels,
                "N": self.judged, "effective_labels": r(self.effective_labels),
                "labels_alone_interval": [r(x) for x in self.labels_alone], "note": self.note}


def model_of(judge: str) -> str:
    """The model in a judge's name (``claude:claude-haiku-4-5`` -> ``claude-haiku-4-5``; a cascade's
    part after ``cascade:``); "" for a judge whose name names none (baseline, an external tool)."""
    return judge.split(":", 1)[1] if ":" in judge else ""


@dataclass(frozen=True)
class JudgeCard:
    judge: str
    prompt_version: str
    prompt_sha256: tuple[str, ...]  # every prompt hash the run's verdicts record (one, normally)
    examples_sha256: tuple[str, ...]  # every few-shot examples hash; empty: no examples
    split: str
    report: Calibration
    consistency: Consistency | None
    cost: Cost
    estimate: CardEstimate | None
    estimate_missing: str  # why there is no estimate ("" when there is one)
    made: str  # the date the card was made (UTC, YYYY-MM-DD)
    verdict_dates: tuple[str, str]  # first and last ``at`` of the run's counted verdicts
    guidelines: Mapping[str, int] = field(default_factory=dict)

    @property
    def model(self) -> str:
        return model_of(self.judge)

    @property
    def n(self) -> int:
        return len(self.report.pairs.keys)

    def to_dict(self) -> dict:
        c = self.consistency
        return {
            "record": "judge_card", "card_version": CARD_VERSION, "made": self.made,
            "judge": self.judge, "model": self.model or None, "prompt_version": self.prompt_version,
            "prompt_sha256": list(self.prompt_sha256), "examples_sha256": list(self.examples_sha256),
            "guidelines_versions": dict(self.guidelines), "split": self.split, "items": self.n,
            "unscored": self.report.pairs.unscored, "unjudged": self.report.pairs.unjudged,
            "positive_class": POSITIVE, "human_label_rules": dict(self.report.rules),
            "figures": {k: self.report.figures[k].to_dict() for k in FIGURE_NAMES},
            "self_consistency": c.to_dict() if c is not None and c.measured else {"not_measured": NOT_MEASURED},
            "cost_per_item": self.cost.to_dict(),
            "estimate": self.estimate.to_dict() if self.estimate is not None else {"not_computed": self.estimate_missing},
            "verdicts_written": {"first": self.verdict_dates[0], "last": self.verdict_dates[1]},
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n"

    def to_markdown(self) -> str:
        e = md_literal
        lines = [f"# Judge card: {e(self.judge)} · {e(self.prompt_version)}", "",
                 f"Made {self.made}. Verdicts written {self.verdict_dates[0] or 'n/a'} to "
                 f"{self.verdict_dates[1] or 'n/a'}.", "",
                 "| | |", "|---|---|",
                 f"| judge | {e(self.judge)} |",
                 f"| model | {e(self.model) or 'none named (not a model judge)'} |",
                 f"| prompt version | {e(self.prompt_version)} |",
                 f"| prompt sha256 | {', '.join(e(s) for s in self.prompt_sha256) or 'not recorded'} |",
                 f"| examples sha256 | {', '.join(e(s) for s in self.examples_sha256) or 'none (no few-shot examples)'} |",
                 f"| guidelines versions of the labels | "
                 f"{', '.join(f'{e(k)} ({v})' for k, v in self.guidelines.items()) or 'none'} |",
                 f"| split | {e(self.split)} |",
                 f"| items compared (n) | {self.n} ({self.report.pairs.unscored} unscored, "
                 f"{self.report.pairs.unjudged} not judged) |",
                 f"| cost per item | {self.cost.text()} |",
                 "", "## Figures", "",
                 f"Positive class: {POSITIVE}. 95% intervals (Wilson for shares, bootstrap for kappa and F1).", "",
                 "| figure | value | 95% interval | n |", "|---|---|---|---|"]
        for key, title in FIGURE_NAMES.items():
            lines.append(_figure_row(title, self.report.figures[key]))
        lines += ["", "## Self-consistency", ""]
        lines += _consistency_lines(self.consistency)
        lines += ["", "## The estimate it supports", ""]
        lines += _estimate_lines(self.estimate, self.estimate_missing)
        return "\n".join(lines) + "\n"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _figure_row(title: str, est: Estimate) -> str:
    interval = (f"{est.low:.2f} to {est.high:.2f}" if est.low is not None and est.high is not None
                else f"none: {md_literal(est.why)}" if est.why else "none")
    return f"| {title} | {_num(est.value)} | {interval} | {est.n} |"


def _consistency_lines(c: Consistency | None) -> list[str]:
    if c is None or not c.measured:
        return ["Not measured: run judge --repeat K (K at least 2)."]
    lines = [f"{len(c.items)} items with two or more scored runs ({c.runs} runs on most).", "",
             "| figure | value | 95% interval | n |", "|---|---|---|---|",
             _figure_row("verdict changed across runs", c.changed),
             _figure_row(f"Fleiss' kappa across runs (items with {c.runs} runs)", c.fleiss),
             _figure_row("majority verdict vs humans", c.majority),
             _figure_row("run 0 alone vs humans (same items)", c.single)]
    unstable = c.unstable
    if unstable:
        lines += ["", f"Unstable items ({len(unstable)}, most unstable first"
                      + (f"; the first {UNSTABLE_SHOWN}" if len(unstable) > UNSTABLE_SHOWN else "") + "):", ""]
        lines += [f"- {md_literal(r.item)}: {', '.join(r.verdicts)}" for r in unstable[:UNSTABLE_SHOWN]]
    return lines


def _estimate_lines(est: CardEstimate | None, missing: str) -> list[str]:
    if est is None:
        return [f"Not computed: {md_literal(missing)}"]
    if est.value is None:
        return [f"No PPI++ estimate: {md_literal(est.note)}"]
    worth = "" if est.effective_labels is None else f", worth {est.effective_labels:.0f} labels alone"
    alone = est.labels_alone
    alone_text = (f" (labels alone: {alone[0]:.2f} to {alone[1]:.2f})" if alone[0] is not None and alone[1] is not None
                  else "")
    return [f"Not-supported citation rate by PPI++: {est.value:.2f}, 95% interval {_num(est.low)} to {_num(est.high)}, "
            f"from {est.labels} labels and {est.judged} judged items{worth}{alone_text}."]


def card_estimate(estimates: Estimates) -> CardEstimate | None:
    """The citation rate's PPI++ row (and the labels-alone interval beside it) of an ``Estimates``."""
    rate = estimates.rate("citations")
    if rate is None:
        return None
    ppi, alone = rate.row("ppi"), rate.row("labels")
    if ppi is None:
        return CardEstimate(None, None, None, rate.n, rate.N, None, (None, None), rate.problem or "no PPI++ row")
    return CardEstimate(ppi.value, ppi.low, ppi.high, ppi.n, ppi.N, ppi.effective_n,
                        (alone.low, alone.high) if alone is not None else (None, None), ppi.note)


def judge_card(report: Calibration, verdicts: Sequence[Verdict], consistency: Consistency | None,
               estimates: Estimates | None = None, estimate_missing: str = "", made: str | None = None) -> JudgeCard:
    """The card of the run ``report`` measured (its judge, prompt version and split)."""
    mine = [v for v in verdicts if v.run == (report.judge, report.prompt_version) and v.repeat == 0]
    latest = latest_by_item(mine)
    dates = sorted(filter(None, (_instant(v.at) for v in mine)))
    if estimates is None and not estimate_missing:
        estimate_missing = "the judged population is unknown: give the logs (--log) it was judged on"
    return JudgeCard(
        report.judge, report.prompt_version,
        tuple(dict.fromkeys(v.prompt_sha256 for v in mine if v.prompt_sha256)),
        examples_of(verdicts, report.judge, report.prompt_version),
        report.split, report, consistency, cost_per_item(latest, report.pairs.keys),
        card_estimate(estimates) if estimates is not None else None, estimate_missing,
        made or datetime.now(UTC).date().isoformat(), (dates[0], dates[-1]) if dates else ("", ""),
        dict(report.guidelines))


def _instant(at: str) -> str:
    """A verdict's time stamp as ``2026-12-06T07:15:16+00:00`` (so the card holds no text from the file),
    "" when it has none or it does not read as one."""
    try:
        when = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return ""
    return when.astimezone(UTC).isoformat(timespec="seconds") if when.tzinfo else when.isoformat(timespec="seconds")


def examples_of(verdicts: Sequence[Verdict], judge: str, prompt_version: str) -> tuple[str, ...]:
    """The few-shot examples hashes the run's counted verdicts record (none: no examples)."""
    return tuple(dict.fromkeys(v.examples_sha256 for v in verdicts
                               if v.run == (judge, prompt_version) and v.repeat == 0 and v.examples_sha256))


def examples_text(hashes: Sequence[str]) -> str:
    """``examples: sha256 abc...``: the line calibrate prints (and the page shows) for a run with examples."""
    return f"examples: sha256 {', '.join(hashes)}" if hashes else "examples: none"


def file_name(card: JudgeCard) -> str:
    """``judge-card-claude-claude-haiku-4-5-judge.v2-test``: a file name made safe from the card's names."""
    raw = f"judge-card-{card.judge}-{card.prompt_version}-{card.split}"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-.")[:150] or "judge-card"
