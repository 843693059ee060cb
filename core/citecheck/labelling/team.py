"""The Team page's figures (docs/app.md, "Team page"): per reviewer and per assignment, computed
from the labels store's events and a clock, as pure functions.

The rules, precisely:

- **Labels made** are label records a reviewer wrote, changes of mind and later-withdrawn ones
  included (each is work done), but not a re-marking: a record that repeats the label and note of
  the reviewer's previous record on the same item and only changes the marked words (``spans``:
  each mark is saved as a new record) is part of that labelling, not another one.  *Today* is the UTC date of ``now``; *this week* is the ISO week
  of ``now`` in UTC (Monday 00:00 UTC onwards); *total* is every one.  Times are the records' ``at``.
- **Items labelled** are the items with a current label of the reviewer: their latest label
  that no retraction withdrew (``labels.effective`` then ``labels.latest``).
- **Assigned** counts the distinct items assigned to the reviewer over every assignment; **left**
  those without a current label of the reviewer (labelled before or after the assignment alike).
- **Seconds per item**: the reviewer's label records in time order; each gap between one and the
  next is the time the next took.  A gap over :data:`PAUSE_SECONDS` (600 s) is a pause and does
  not count as any item's time.  The figure is the median of the gaps left, with their count.
- **Agreement with adjudications**: over the items with a current label of the reviewer and an
  adjudication (the latest per item) made on the same version of the item (same fingerprint),
  the share where the two labels are equal, with that n.
- **Kappa with each other reviewer**: Cohen's kappa (``labelling.agreement``) over the items both
  have a current label on, with that n (labels on another version of the item than the logs'
  left out when ``fingerprints`` are given).
- **Can't tell**: the share of the reviewer's current labels on cited items (the only ones
  ``cant_tell`` can be given to) that are ``cant_tell``.
- **Undo rate**: the reviewer's retractions divided by their labels made.
- **Per assignment**: done is the (reviewer, item) pairs with a current label of that reviewer.
  The pace is the done pairs divided by the time from the earliest of their labels to ``now``;
  the expected finish is ``now`` plus the pairs left at that pace.  No pace before a pair is
  done; an assignment with nothing left has finished.

Assignments come as a plain mapping (:data:`Assignments`), which :func:`assignments_of` makes from
the store's assignment and release events.  Events of other kinds (comments, opens, ...) are passed over.
"""

from __future__ import annotations

import io
import itertools
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from citecheck.contract import spreadsheet
from citecheck.contract.item_keys import CANT_TELL
from citecheck.labelling import agreement
from citecheck.labelling.assignments import Assignment, Release
from citecheck.labelling.events import Adjudication, Retraction
from citecheck.labelling.labels import Label, effective, latest

PAUSE_SECONDS = 600.0  # a gap between two labels longer than this is a pause, not an item's time

# {assignment id: (due "YYYY-MM-DD" or "", {reviewer: [item keys]})}: what the page is given
Assignments = Mapping[str, tuple[str, Mapping[str, Sequence[str]]]]


def parse_at(at: str) -> datetime:
    """A record's ``at`` (ISO 8601, ``Z`` or an offset) as an aware UTC datetime."""
    when = datetime.fromisoformat(at.replace("Z", "+00:00"))
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc)


@dataclass(frozen=True, slots=True)
class Share:
    """A share of ``n`` things (None when ``n`` is 0)."""
    share: float | None
    n: int


def _share(hits: int, n: int) -> Share:
    return Share(hits / n if n else None, n)


@dataclass(frozen=True, slots=True)
class ReviewerFigures:
    reviewer: str
    today: int
    this_week: int
    total: int
    items: int  # items with a current label of the reviewer
    assigned: int
    left: int
    seconds_per_item: float | None  # median, pauses cut; None without two labels close together
    timed: int  # the gaps the median rests on
    with_adjudication: Share
    kappa: tuple[agreement.PairAgreement, ...]  # with each other reviewer (``first`` is this reviewer)
    cant_tell: Share
    retractions: int
    undo_rate: float | None


@dataclass(frozen=True, slots=True)
class AssignmentFigures:
    assignment: str
    due: str
    assigned: int  # (reviewer, item) pairs
    done: int
    started: str  # the earliest label among the done pairs ("" when none)
    finish: datetime | None  # expected at the current pace; None when done or no pace yet

    @property
    def left(self) -> int:
        return self.assigned - self.done

    @property
    def late(self) -> bool:
        """Whether the expected finish falls after the due date (the whole of that UTC day counts)."""
        return bool(self.due and self.finish and self.finish.date().isoformat() > self.due)


def median_seconds(times: Iterable[datetime], pause: float = PAUSE_SECONDS) -> tuple[float | None, int]:
    """The median gap between consecutive ``times`` (sorted here), gaps over ``pause`` cut, and how many counted."""
    ordered = sorted(times)
    gaps = [g for a, b in zip(ordered, ordered[1:]) if (g := (b - a).total_seconds()) <= pause]
    return (statistics.median(gaps) if gaps else None), len(gaps)


def pair_kappas(by_item: Mapping[str, Mapping[str, str]]) -> dict[str, tuple[agreement.PairAgreement, ...]]:
    """Per reviewer, Cohen's kappa with each other reviewer over the items both labelled
    (``agreement.table``'s item -> {reviewer: label}), ``first`` the reviewer, others by name.
    The same figures as ``agreement.team_agreement``'s pairs, in one pass over the items."""
    both: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for given in by_item.values():
        if len(given) < 2:
            continue
        for a, b in itertools.combinations(sorted(given), 2):
            first, second = both.setdefault((a, b), ([], []))
            first.append(given[a])
            second.append(given[b])
    out: dict[str, list[agreement.PairAgreement]] = {}
    for (a, b), (x, y) in sorted(both.items()):
        kappa = agreement.cohen_kappa(x, y)
        out.setdefault(a, []).append(agreement.PairAgreement(a, b, len(x), kappa))
        out.setdefault(b, []).append(agreement.PairAgreement(b, a, len(x), kappa))
    return {who: tuple(sorted(pairs, key=lambda p: p.second)) for who, pairs in out.items()}


def assigned_items(assignments: Assignments) -> dict[str, set[str]]:
    """Per reviewer, the distinct items assigned to them over every assignment."""
    out: dict[str, set[str]] = {}
    for _, by_reviewer in assignments.values():
        for reviewer, keys in by_reviewer.items():
            out.setdefault(reviewer, set()).update(keys)
    return out


def assignments_of(events: Iterable[object]) -> dict[str, tuple[str, dict[str, list[str]]]]:
    """The :data:`Assignments` the store's assignment events give, in the order made: each
    assignment's items per reviewer, less those a release took out of it (``labelling.assignments``)."""
    made = [e for e in events if isinstance(e, Assignment | Release)]
    released = {(e.assignment, e.item, e.reviewer) for e in made if isinstance(e, Release)}
    return {a.assignment: (a.due, {who: [k for k in keys if (a.assignment, k, who) not in released]
                                   for who, keys in a.items})
            for a in made if isinstance(a, Assignment)}


def labels_made(events: Iterable[object]) -> list[Label]:
    """The label records that are labellings (the rules above): every label record but a re-marking."""
    last: dict[tuple[str, str], Label] = {}
    made = []
    for e in events:
        if isinstance(e, Label):
            before = last.get((e.item, e.reviewer))
            if before is None or (before.label, before.note) != (e.label, e.note):
                made.append(e)
            last[(e.item, e.reviewer)] = e
    return made


def reviewers(events: Sequence[object], now: datetime, assignments: Assignments | None = None,
              fingerprints: Mapping[str, str] | None = None) -> list[ReviewerFigures]:
    """One row per reviewer who made a label or has an assignment, by name (the rules above)."""
    assignments = assignments or {}
    made = labels_made(events)
    counted = effective(e for e in events if isinstance(e, (Label, Retraction)))
    current = latest(counted)
    adjudicated = {e.item: e for e in events if isinstance(e, Adjudication)}
    kappas = pair_kappas(agreement.table(current.values(), fingerprints))
    given = assigned_items(assignments)
    now = now.astimezone(timezone.utc)
    week = now.isocalendar()[:2]
    times_of: dict[str, list[datetime]] = {}
    for e in made:
        times_of.setdefault(e.reviewer, []).append(parse_at(e.at))
    current_of: dict[str, dict[str, Label]] = {}
    for (key, r), lab in current.items():
        current_of.setdefault(r, {})[key] = lab
    undone_of = Counter(e.reviewer for e in events if isinstance(e, Retraction))
    rows = []
    for who in sorted(set(times_of) | set(given)):
        times = times_of.get(who, [])
        mine = current_of.get(who, {})
        seconds, timed = median_seconds(times)
        judged = [(lab.label, adjudicated[k].label) for k, lab in mine.items()
                  if k in adjudicated and adjudicated[k].fingerprint == lab.fingerprint]
        cited = [lab.label for lab in mine.values() if lab.citation is not None]
        undone = undone_of[who]
        assigned = given.get(who, set())
        rows.append(ReviewerFigures(
            who, sum(1 for t in times if t.date() == now.date()), sum(1 for t in times if t.isocalendar()[:2] == week),
            len(times), len(mine), len(assigned), sum(1 for k in assigned if k not in mine), seconds, timed,
            _share(sum(1 for a, b in judged if a == b), len(judged)), kappas.get(who, ()),
            _share(cited.count(CANT_TELL), len(cited)), undone, undone / len(times) if times else None))
    return rows


def assignment_figures(events: Sequence[object], now: datetime, assignments: Assignments) -> list[AssignmentFigures]:
    """Progress and expected finish per assignment, in the order given (the rules above)."""
    current = latest(effective(e for e in events if isinstance(e, (Label, Retraction))))
    now = now.astimezone(timezone.utc)
    out = []
    for name, (due, by_reviewer) in assignments.items():
        pairs = {(who, key) for who, keys in by_reviewer.items() for key in keys}
        done_at = [parse_at(current[(key, who)].at) for who, key in pairs if (key, who) in current]
        started = min(done_at) if done_at else None
        left = len(pairs) - len(done_at)
        finish = None
        if left and started is not None and now > started:
            finish = now + (now - started) * left / len(done_at)
        out.append(AssignmentFigures(name, due, len(pairs), len(done_at),
                                     started.isoformat(timespec="milliseconds").replace("+00:00", "Z") if started else "", finish))
    return out


# --- tables and CSV -------------------------------------------------------------------------------


def _num(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def reviewer_rows(rows: Sequence[ReviewerFigures]) -> list[dict]:
    """The per-reviewer table (plain values, one dict per reviewer) the page and the CSV show."""
    return [{
        "reviewer": r.reviewer, "labels today": r.today, "labels this week": r.this_week, "labels total": r.total,
        "items labelled": r.items, "assigned": r.assigned, "left": r.left,
        "median seconds per item": _num(r.seconds_per_item, 1), "timed gaps": r.timed,
        "agreement with adjudication": _num(r.with_adjudication.share), "adjudicated n": r.with_adjudication.n,
        "can't tell share": _num(r.cant_tell.share), "cited labels n": r.cant_tell.n,
        "retractions": r.retractions, "undo rate": _num(r.undo_rate),
    } for r in rows]


def kappa_rows(rows: Sequence[ReviewerFigures]) -> list[dict]:
    """Kappa per pair of reviewers, each pair once."""
    return [{"reviewer": p.first, "other reviewer": p.second, "kappa": _num(p.kappa), "n": p.n}
            for r in rows for p in r.kappa if p.first < p.second]


def assignment_rows(rows: Sequence[AssignmentFigures]) -> list[dict]:
    return [{
        "assignment": a.assignment, "due": a.due, "assigned": a.assigned, "done": a.done, "left": a.left,
        "progress": _num(a.done / a.assigned if a.assigned else None),
        "expected finish (UTC)": (a.finish.isoformat(timespec="minutes").replace("+00:00", "Z") if a.finish
                                  else ("finished" if a.assigned and not a.left else "no pace yet")),
        "late": a.late,
    } for a in rows]


def to_csv(people: Sequence[ReviewerFigures], work: Sequence[AssignmentFigures], now: datetime) -> str:
    """The Team page's figures as one rectangular CSV text: ``table`` says which table a row is of
    (``reviewer``, ``kappa``, ``assignment``), ``as of`` the clock they were computed at (UTC);
    then every table's columns, blank where a row's table has no such column.  Names and ids are
    written as they are, except that a spreadsheet formula prefix is neutralised (``contract.spreadsheet``)."""
    tables = [("reviewer", reviewer_rows(people)), ("kappa", kappa_rows(people)), ("assignment", assignment_rows(work))]
    columns = list(dict.fromkeys(c for _, rows in tables for row in rows for c in row))
    when = now.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    out = io.StringIO()
    writer = spreadsheet.Writer(out)
    writer.writerow(["table", "as of", *columns])
    for table, rows in tables:
        for row in rows:
            writer.writerow([table, when, *(row.get(c) for c in columns)])
    return out.getvalue()


def week_start(now: datetime) -> datetime:
    """Monday 00:00 UTC of ``now``'s ISO week."""
    now = now.astimezone(timezone.utc)
    return datetime(now.year, now.month, now.day, tzinfo=timezone.utc) - timedelta(days=now.weekday())
