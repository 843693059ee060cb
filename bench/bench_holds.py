#!/usr/bin/env python3
"""What assignments and locks add to one review-page run (core/citecheck/review/holds.py).

    python bench/bench_holds.py [--answers 1000000] [--labels 100000] [--assignments 50] [--reviewers 20]

A synthetic team: ``--answers`` answers of 2 items each, ``--labels`` labels by ``--reviewers``
reviewers, ``--assignments`` assignments of 400 items each, and one ``open`` per label plus some
left open.  Per run the page builds the team's work once from the events it read
(``holds.Work.of``, given the current labels it has anyway; the pass over the events is kept
between runs, ``holds.Scan``, so a run after one new label scans one event), then asks for the progress line,
the item to hold and, on a key press, the next item (assigned first, then the ordinary queue over
every answer, ``tally.next_item``, with the claims of others).  Printed: the median milliseconds of
each, and their ratio to ``labels.latest(labels.effective(events))``, which every run already does.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "core"))

from citecheck.labelling import labels  # noqa: E402
from citecheck.labelling.assignments import Open, make_assignment  # noqa: E402
from citecheck.labelling.items import Item  # noqa: E402
from citecheck.review import holds, queue, tally  # noqa: E402

T0 = datetime(2026, 12, 1, tzinfo=timezone.utc)


def stamp(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def timed(fn, repeat: int = 7) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--answers", type=int, default=1_000_000)
    p.add_argument("--labels", type=int, default=100_000)
    p.add_argument("--assignments", type=int, default=50)
    p.add_argument("--reviewers", type=int, default=20)
    p.add_argument("--freeze", action="store_true", help="gc.freeze() the synthetic data, as the app does its answers")
    args = p.parse_args()
    rng = random.Random(1)
    ids = [f"a{n:07d}" for n in range(args.answers)]
    items = {a: [Item(a, s, 0, "c", f"fp{a}{s}") for s in range(2)] for a in ids}
    people = [f"r{n:02d}" for n in range(args.reviewers)]
    keys = [it.key for a in ids for it in items[a]]
    events: list = []
    t = T0
    for n in range(args.assignments):
        chosen = rng.sample(keys, 400)
        events.append(make_assignment(chosen, [(w, 1) for w in rng.sample(people, 4)], "lead", "answers",
                                      at=stamp(t), assignment_id=f"as-{n}"))
    by_key = {it.key: it for a in ids[: args.labels] for it in items[a]}  # labels on the first answers
    labelled = list(by_key.values())
    for n in range(args.labels):
        t += timedelta(seconds=1)
        item, who = labelled[n % len(labelled)], people[n % len(people)]
        events.append(Open(item.key, who, stamp(t)))
        events.append(labels.make_label(item, "supported", who, at=stamp(t + timedelta(milliseconds=500))))
    for who in people:  # each reviewer holds one item now
        events.append(Open(rng.choice(keys), who, stamp(t)))
    now = t + timedelta(minutes=5)
    if args.freeze:  # the app holds its answers out of the collector's walks (labelling.dataset._long_lived)
        gc.freeze()
    print(f"{args.answers:,} answers, {len(keys):,} items, {args.labels:,} labels, {args.assignments} assignments, "
          f"{len(events):,} events")

    base, current = timed(lambda: labels.latest(labels.effective(events)), 3)
    work_ms, work = timed(lambda: holds.Work.of(events, current), 3)
    scan = holds.Scan()
    holds.Work.of(events[:-1], current, scan)  # the previous run's read, one event shorter
    kept_ms, kept = timed(lambda: holds.Work.of(events, current, scan))
    assert kept == work
    team = queue.labellers(current)
    who = people[0]
    progress_ms, text = timed(lambda: holds.progress_text(work, who))
    claims_ms, claimed = timed(lambda: work.claimed_by_others(who, now))
    where = tally.positions(ids)
    items_of = items.__getitem__

    def next_item():
        return holds.next_place(work, who, team, items_of, now,
                                lambda c: tally.next_item(ids, where, items_of, team, who, 1, None, c))

    next_ms, place = timed(next_item)
    plain_ms, _ = timed(lambda: tally.next_item(ids, where, items_of, team, who, 1, None), 3)
    pool_ms, _ = timed(lambda: tally.next_item(ids, where, items_of, team, who, 1, None, claimed), 3)
    print(f"labels that count (every run already): {base:8.1f} ms")
    print(f"Work.of, every event scanned:          {work_ms:8.1f} ms  ({work_ms / base:.2f}x)")
    print(f"Work.of, the scan kept (one new event): {kept_ms:7.1f} ms  ({kept_ms / base:.2f}x)")
    print(f"progress line:                         {progress_ms:8.2f} ms  ({text})")
    print(f"claims of others:                      {claims_ms:8.2f} ms  ({len(claimed):,} items claimed)")
    print(f"next item (an assigned one):           {next_ms:8.2f} ms  -> {place}")
    print(f"the queue from the start, no claims:   {plain_ms:8.2f} ms  (walks every labelled item: Resume with no place)")
    print(f"the same walk asking the claims:       {pool_ms:8.2f} ms  ({pool_ms / plain_ms:.2f}x)")


if __name__ == "__main__":
    main()
