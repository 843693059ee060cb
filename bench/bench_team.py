#!/usr/bin/env python3
"""Benchmark the Team page's figures and the comment threads (issue #34) on a store the size of a
team's: 20 reviewers' 100,000 labels (1 in 50 undone), 2,000 adjudications, 5,000 comments with
1,000 resolves, 50 assignments of 200 items each.

    python bench/bench_team.py [--labels 100000] [--repeat 5]

Times, in memory (the store read is the labels reader's, measured elsewhere), the median of
``--repeat`` runs of: ``team.reviewers`` + ``team.assignment_figures`` + ``team.to_csv`` (what the
Team page computes on every draw), ``comments.threads`` + ``open_threads`` (the Disagreements
page's list) and ``visible_threads`` for one reviewer in blind mode.  Prints each figure and its
cost per thousand events, so the growth with the store can be read off two runs.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from datetime import datetime, timedelta, timezone

from citecheck.contract.item_keys import CITATION_LABELS
from citecheck.labelling import comments, team
from citecheck.labelling.events import Adjudication, Retraction
from citecheck.labelling.labels import Label


def at(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def store(n_labels: int, seed: int = 7) -> tuple[list[object], dict, datetime]:
    rnd = random.Random(seed)
    people = [f"reviewer-{k:02d}" for k in range(20)]
    start = datetime(2026, 11, 1, 8, tzinfo=timezone.utc)
    items = [f"a-{n // 3}#s{n % 3}#c0" for n in range(n_labels // 2)]
    events: list[object] = []
    clock = {p: start for p in people}
    for n in range(n_labels):
        who = people[n % 20]
        clock[who] += timedelta(seconds=rnd.choice([20, 40, 60, 90, 2000]))
        key = items[rnd.randrange(len(items))]
        lab = Label(1, key, key.split("#")[0], int(key.split("#s")[1][0]), 0, "c", "f", rnd.choice(CITATION_LABELS),
                    "", who, at(clock[who]), "")
        events.append(lab)
        if n % 50 == 0:
            events.append(Retraction(key, who, lab.at, lab.label, at(clock[who] + timedelta(seconds=1))))
    for n in range(2000):
        key = items[n * 7 % len(items)]
        events.append(Adjudication(key, key.split("#")[0], 0, 0, "c", "f", "partial", "", "lead", (), at(start), ""))
    for n in range(5000):
        key = items[n * 13 % len(items)] if n % 5 else f"a-{n}"
        events.append(comments.make_comment(key, people[n % 20], f"@{people[(n + 1) % 20]} look {n}", people,
                                            at=at(start + timedelta(minutes=n)), comment_id=f"c{n}"))
        if n % 5 == 0:
            events.append(comments.make_resolve(key, people[n % 20], at=at(start + timedelta(minutes=n, seconds=5))))
    work = {f"as-{k}": ("2026-12-31", {people[k % 20]: items[k * 200:(k + 1) * 200]}) for k in range(50)}
    return events, work, max(clock.values())


def timed(fn, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    events, work, now = store(args.labels)
    print(f"store: {len(events):,} events ({args.labels:,} labels, 20 reviewers, 5,000 comments, 50 assignments)")

    def figures():
        people = team.reviewers(events, now, work)
        progress = team.assignment_figures(events, now, work)
        return team.to_csv(people, progress, now)

    found = comments.threads(events)
    costs = [("team figures + CSV", timed(figures, args.repeat)),
             ("threads + open threads", timed(lambda: comments.open_threads(comments.threads(events)), args.repeat)),
             ("visible threads, blind", timed(lambda: comments.visible_threads(found, True, set(list(found)[::3])),
                                              args.repeat))]
    for name, seconds in costs:
        print(f"{name:26s} {seconds * 1000:8.1f} ms   {seconds * 1e6 / len(events) * 1000:8.1f} us per 1,000 events")


if __name__ == "__main__":
    main()
