"""``Estimates`` as text (``citecheck estimate``), JSON (``--format json``, ``estimate_version`` 1)
and escaped HTML and chart rows (the Judge calibration page); docs/estimate.md."""

from __future__ import annotations

import html

from citecheck.judging.calibration import POSITIVE
from citecheck.judging.estimate import ESTIMATE_VERSION, TITLES, UNITS, Estimates, Rate, Row
from citecheck.labelling.consensus import counts_text


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def _interval(r: Row) -> str:
    return "" if r.low is None else f"{r.low:.1%} to {r.high:.1%}"


def table_rows(rate: Rate) -> list[dict]:
    """One plain dict per method, for a table or a chart (values as shares 0..1)."""
    return [{"method": TITLES[r.method], "key": r.method, "estimate": r.value, "low": r.low, "high": r.high,
             "n": r.n, "N": r.N, "effective_n": r.effective_n, "note": r.note} for r in rate.rows]


def plan_lines(rate: Rate) -> list[str]:
    if rate.plan is None:
        return []
    p = rate.plan
    if p.unplanned:
        return [f"to reach +/- {p.target:.1%}: {p.unplanned}"]

    def say(total: int | None, what: str) -> str:
        if total is None:
            return f"{what}: not reachable with the {rate.N} judged {rate.unit} (judge more, or accept a wider interval)"
        return f"{what}: {p.more(total, rate.n)} more label(s) ({total} in all)"
    return [f"to reach +/- {p.target:.1%}:", "  " + say(p.labels_total, "labels alone"),
            "  " + say(p.ppi_total, "PPI++")]


def settled_text(e: Estimates) -> str:
    """How the citation items' human labels were settled: the sentence calibrate and export give."""
    return f"human labels: {counts_text(e.rules)} (overlap {e.overlap})"


def to_text(e: Estimates) -> str:
    conf = f"{e.confidence:.0%}"
    lines = [f"judge {e.judge}, prompt {e.prompt_version}; {conf} intervals"
             + (f"; sample {e.sample_id}" if e.sample_id else "")]
    for rate in e.rates:
        lines.append("")
        lines.append(f"rate of {UNITS[rate.unit]}: {rate.n} labelled of N = {rate.N} judged {rate.unit}")
        if rate.problem:
            lines.append(f"  {rate.problem}")
            continue
        lines.append(f"  {'method':<26}{'estimate':>9}  {'interval':<17}{'n':>6}{'N':>7}  note")
        for r in rate.rows:
            note = r.note + ("" if r.effective_n is None else f"; worth {r.effective_n:.0f} labels alone")
            lines.append(f"  {TITLES[r.method]:<26}{_pct(r.value):>9}  {_interval(r):<17}{r.n:>6}{r.N:>7}  {note}")
        lines.extend("  " + s for s in plan_lines(rate))
    lines.append("")
    lines.append(settled_text(e))
    if e.left_out:
        lines.append(f"left out {sum(e.left_out.values())} labelled item(s):")
        lines.extend(f"  {k}: {v}" for k, v in sorted(e.left_out.items()))
    lines.extend(f"note: {s}" for s in e.notes)
    return "\n".join(lines) + "\n"


def to_dict(e: Estimates) -> dict:
    def plan_dict(rate: Rate):
        if rate.plan is None:
            return None
        p = rate.plan
        return {"target_half_width": p.target, "unplanned": p.unplanned, "labels_alone_total": p.labels_total,
                "labels_alone_more": p.more(p.labels_total, rate.n), "ppi_total": p.ppi_total,
                "ppi_more": p.more(p.ppi_total, rate.n)}
    return {"record": "estimate", "estimate_version": ESTIMATE_VERSION, "judge": e.judge,
            "prompt_version": e.prompt_version, "confidence": e.confidence, "sample_id": e.sample_id,
            "positive_class": POSITIVE,
            "rates": {r.unit: {"n": r.n, "N": r.N, "problem": r.problem, "rows": [x.to_dict() for x in r.rows],
                               "plan": plan_dict(r)} for r in e.rates},
            "left_out": dict(e.left_out), "notes": list(e.notes), "overlap": e.overlap,
            "human_label_rules": dict(e.rules)}


def table_html(rate: Rate) -> str:
    """The page's table of one rate: every cell escaped (notes can carry item text)."""
    def td(x: object, cls: str = "") -> str:
        return f"<td{f' class={cls!r}' if cls else ''}>{html.escape(str(x))}</td>"
    head = "".join(f"<th>{h}</th>" for h in ("method", "estimate", "interval", "n", "N", "note"))
    body = []
    for r in rate.rows:
        note = r.note + ("" if r.effective_n is None else f"; worth {r.effective_n:.0f} labels alone")
        body.append("<tr>" + td(TITLES[r.method]) + td(_pct(r.value), "num") + td(_interval(r) or "none claimed")
                    + td(r.n, "num") + td(r.N, "num") + td(note) + "</tr>")
    return f'<table class="cc-estimate"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def report_html(e: Estimates) -> str:
    """The whole estimate as escaped HTML for the page: per rate a heading, the table and the
    planner; then what was left out and the notes."""
    esc = html.escape
    parts = [f"<p><b>{esc(e.judge)}</b> \u00b7 {esc(e.prompt_version)} \u00b7 {e.confidence:.0%} intervals"
             + (f" \u00b7 sample {esc(e.sample_id)}" if e.sample_id else "") + "</p>"]
    for rate in e.rates:
        parts.append(f"<h4>Rate of {UNITS[rate.unit]}: {rate.n} labelled of N = {rate.N} judged {rate.unit}</h4>")
        if rate.problem:
            parts.append(f"<p>{esc(rate.problem)}</p>")
            continue
        parts.append(table_html(rate))
        lines = plan_lines(rate)
        if lines:
            parts.append("<p>" + "<br>".join(esc(x.strip()) for x in lines) + "</p>")
    parts.append(f"<p>{esc(settled_text(e))}</p>")
    if e.left_out:
        parts.append(f"<p>Left out {sum(e.left_out.values())} labelled item(s):</p><ul>"
                     + "".join(f"<li>{esc(k)}: {v}</li>" for k, v in sorted(e.left_out.items())) + "</ul>")
    parts.extend(f'<p class="cc-note">{esc(n)}</p>' for n in e.notes)
    return "".join(parts)
