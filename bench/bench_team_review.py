#!/usr/bin/env python3
"""Benchmark the review page of a labelling team (issue #34, "Speed"): Next and label-to-next in
Chromium, and search, on a checked store of 1,000,000 answers whose labels store holds 20
reviewers' events (100,000 labels, 5,000 comments, 50 assignments).

    python bench/bench_team_review.py [--answers 1000000] [--reference 1000] [--labels 100000]
                                      [--presses 20] [--warmup 3] [--reviewer reviewer-00]

The stores are made once and kept under bench/out (made again only when missing):

* the checked store: ``--answers`` of 50,000 or more is bench_search.py's store of copies of its
  50,000-answer store (with its search index; ``--answers`` a multiple of 50,000); a smaller one
  (the ``--reference``, 1,000 answers) is a log of bench_search.py's generator checked into
  bench/out/team-review-store-N;
* the labels store (bench/out/team-review-labels-<store>-<labels>-<answers>.jsonl): bench_team.py's
  generator (20 reviewers' labels, 1 in 50 undone, 2,000 adjudications, 5,000 comments with 1,000
  resolves) with its item keys mapped onto the real items (their keys, fingerprints and labels) of
  ``--label-answers`` answers spread over the store (at most half of them, so that the queue has
  unlabelled items to serve), and 50 assignments of 200 of those items each, as events.

For each store (the reference first, in the same run), the app is started freshly on it with a
copy of its labels store; Chromium (/usr/bin/chromium, headless, through Playwright) opens the
review page with the reviewer in the address, waits for the first view (its time is printed), then
times from key press to visible result, after ``--warmup`` unmeasured rounds, ``--presses`` times:

* Next answer (``N``): until another answer's heading and its focused item are shown;
* Next item (``J``; ``K`` when the focus is on the answer's last item, where ``J`` stays): until
  the focus is on another item;
* label-to-next (``1``, then the next item shown): until the focus has moved on.

Median, 95th percentile and max in ms, and the ratio of each median to the reference's.  Then
the search (``review.search`` through ``storage.checked.search_index.StoreSearch``, as the review
page's search box runs it) is timed on the same stores with the labels, assignments and comment
threads of the labels store as its facts (median of ``--repeat``).  Targets: Next and
label-to-next median under 250 ms, search under 1 s, at 1,000,000 answers.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "core"))

import bench_browser  # noqa: E402
import bench_search  # noqa: E402
import bench_team  # noqa: E402

OUT = ROOT / "bench" / "out"
BASE = 50_000  # answers of bench_search.py's base store


# --- the stores ----------------------------------------------------------------------------------


def checked_store(answers: int) -> Path:
    """A checked store of ``answers`` answers, made once (see the module's docstring)."""
    if answers >= BASE:
        if answers % BASE:
            sys.exit(f"--answers of {BASE:,} or more must be a multiple of {BASE:,}")
        return bench_search.copies(bench_search.base_store(BASE), answers // BASE)
    from citecheck.cli.main import main
    from citecheck.storage.checked import search_index
    from citecheck.storage.checked.folder import Store

    log, store = OUT / f"team-review-log-{answers}.jsonl", OUT / f"team-review-store-{answers}"
    if not log.is_file():
        bench_search.generate(log, answers)
    if not (store / "store.json").is_file():
        shutil.rmtree(store, ignore_errors=True)
        assert main(["check", str(log), "--store", str(store)], io.StringIO(), io.StringIO()) in (0, 1)
    search_index.ensure(Store(store))
    return store


def real_items(store: Path, answers: int) -> tuple[list, list[str]]:
    """The review items of ``answers`` answers spread over the store's first log (whose answer ids
    are the log's own), and those answers' ids."""
    from citecheck.storage.checked.answers import StoreAnswers

    data = StoreAnswers(store)
    ids = data.answer_ids
    first_log = min(len(ids), BASE)
    step = max(1, first_log // answers)
    chosen = [ids[i] for i in range(0, first_log, step)][:answers]
    items = [item for aid in chosen for item in data.items(aid)]
    return items, chosen


def labels_store(store: Path, n_labels: int, answers: int) -> Path:
    """bench_team.py's events on real items of ``store``, and 50 assignments, as a labels file (made once)."""
    from citecheck.contract.item_keys import CITATION_LABELS
    from citecheck.labelling.assignments import make_assignment
    from citecheck.labelling.events import Adjudication, Retraction
    from citecheck.labelling.labels import Label

    path = OUT / f"team-review-labels-{store.name}-{n_labels}-{answers}.jsonl"
    if path.is_file():
        return path
    start = time.perf_counter()
    items, answer_ids = real_items(store, answers)
    print(f"  {len(items):,} items of {len(answer_ids):,} answers read in {time.perf_counter() - start:.0f} s",
          flush=True)
    events, work, _ = bench_team.store(n_labels)
    fake = {}  # bench_team's item key -> a real item

    def real(key: str):
        if key not in fake:
            fake[key] = items[len(fake) % len(items)]
        return fake[key]

    def label_of(item, label: str) -> str:
        return item.labels[CITATION_LABELS.index(label) % len(item.labels)] if label in CITATION_LABELS else \
            item.labels[0]

    def thread(key: str) -> str:
        return real(key).key if "#" in key else answer_ids[int(key.split("-")[1]) % len(answer_ids)]

    out: list[dict] = []
    last: Label | None = None
    for e in events:
        if isinstance(e, Label):
            item = real(e.item)
            last = replace(e, item=item.key, answer_id=item.answer_id, sentence=item.sentence, citation=item.citation,
                           chunk_id=item.chunk_id, fingerprint=item.fingerprint, label=label_of(item, e.label))
            record = asdict(last)
            for optional in ("sample", "guidelines", "spans"):
                if not record[optional]:
                    del record[optional]
            out.append(record)
        elif isinstance(e, Retraction):
            assert last is not None
            out.append(replace(e, item=last.item, retracts=last.at, label=last.label).to_record())
        elif isinstance(e, Adjudication):
            item = real(e.item)
            out.append(replace(e, item=item.key, answer_id=item.answer_id, sentence=item.sentence,
                               citation=item.citation, chunk_id=item.chunk_id, fingerprint=item.fingerprint,
                               label=label_of(item, e.label)).to_record())
        else:  # a comment or a resolve
            out.append(replace(e, thread=thread(e.thread)).to_record())
    rng = random.Random(34)
    for k, (aid, (due, given)) in enumerate(work.items()):
        (who, keys), = given.items()
        out.append(make_assignment([real(key).key for key in keys], [(who, 1)], "lead", "list", due,
                                   at=f"2026-11-01T07:{k % 60:02d}:00.000Z", assignment_id=aid).to_record())
    rng.shuffle(out[-50:])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    with open(tmp, "w", encoding="utf-8") as handle:
        for record in out:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    print(f"  labels store {path.name}: {len(out):,} events in {time.perf_counter() - start:.0f} s", flush=True)
    return path


# --- the browser ---------------------------------------------------------------------------------

ITEM_MOVED = bench_browser.FOCUS_MOVED
POSITION = """() => { const m = document.body.innerText.match(/Focused item (\\d+) of (\\d+)/);
  return m ? [Number(m[1]), Number(m[2])] : [0, 0]; }"""


def measure(browser, store: Path, labels: Path, reviewer: str, presses: int, warmup: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "labels.jsonl"
        shutil.copyfile(labels, copy)  # (the presses append labels and opens: the kept store stays as made)
        proc, url = bench_browser.start_app(["--store", str(store)], copy)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            start = time.perf_counter()
            page.goto(f"{url}/review?reviewer={reviewer}", timeout=900_000)
            page.get_by_text(f"{reviewer}: labelled", exact=False).first.wait_for(timeout=900_000)
            out: dict[str, list[float]] = {"(first view)": [(time.perf_counter() - start) * 1000], "Next answer (N)": [],
                                           "Next item (J)": [], "label-to-next (1)": []}
            page.locator("h3").first.click()  # the keys go to the page, not to a text box
            bench_browser.settle(page)
            for n in range(warmup + presses):
                for action in ("Next answer (N)", "Next item (J)", "label-to-next (1)"):
                    if action.startswith("Next answer"):
                        heading, focus = page.evaluate(bench_browser.HEADING), page.evaluate(bench_browser.FOCUS)
                        ms = bench_browser.timed(page, "n", bench_browser.MOVED, [heading, focus])
                    else:
                        key = "1"
                        if action.startswith("Next item"):  # (K on an answer's last item: J does not move there)
                            at, of = page.evaluate(POSITION)
                            key = "j" if at < of else "k"
                        ms = bench_browser.timed(page, key, ITEM_MOVED, page.evaluate(bench_browser.FOCUS))
                    bench_browser.settle(page)
                    if n >= warmup:
                        out[action].append(ms)
            page.close()
            return out
        finally:
            proc.terminate()
            proc.wait(timeout=60)


# --- the search ----------------------------------------------------------------------------------


def search_times(store: Path, labels: Path, repeat: int) -> dict[str, tuple[float, str]]:
    from citecheck.labelling import comments
    from citecheck.review.holds import Work
    from citecheck.review.search import NO_LABEL, Facts, Search
    from citecheck.storage.checked import search_index
    from citecheck.storage.checked.answers import StoreAnswers
    from citecheck.web.label_cache import LabelCache

    state = LabelCache(labels).state()
    work = Work.of(state.events, state.current)
    facts = Facts(labels=state.current, assigned=work.given.assignees,
                  assignment_of={key: made[0].assignment for (key, _), made in work.given.by.items() if made},
                  threads={k: "open" if t.open else "resolved" for k, t in comments.threads(state.events).items()})
    data = StoreAnswers(store)
    searcher = search_index.StoreSearch(data)
    start = time.perf_counter()
    searcher.prepare()
    out = {"(first search: the index's views)": ((time.perf_counter() - start), "")}
    cases = {
        "a rare word (zyzzyva)": Search(text="zyzzyva"),
        "a common word (policy)": Search(text="policy"),
        'a phrase ("leave days")': Search(text='"leave days"'),
        "a word + reviewer's label": Search(text="invoice", label="partial", reviewer="reviewer-03"),
        "assigned to a reviewer": Search(assigned_to="reviewer-05"),
        "open comment threads": Search(comments="open"),
        "nobody's label yet": Search(label=NO_LABEL),
    }
    for name, search in cases.items():
        took = []
        for _ in range(repeat):
            start = time.perf_counter()
            found = searcher.search(search, facts)
            took.append(time.perf_counter() - start)
        out[name] = (statistics.median(took), found.summary)
    return out


# --- the table -----------------------------------------------------------------------------------


def p95(values: list[float]) -> float:
    return bench_browser.p95(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=1_000_000)
    parser.add_argument("--reference", type=int, default=1000, help="the small store measured first (0: none)")
    parser.add_argument("--labels", type=int, default=100_000)
    parser.add_argument("--label-answers", type=int, default=4000,
                        help="answers whose items the labels are spread over (at most half the store's, so the "
                             "queue has items left to serve; each answer's items are read once when made)")
    parser.add_argument("--presses", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each search (median)")
    parser.add_argument("--reviewer", default="reviewer-00")
    parser.add_argument("--no-browser", action="store_true", help="only the search")
    parser.add_argument("--no-search", action="store_true", help="only the key presses")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; "
          f"{os.cpu_count()} cores", flush=True)
    sizes = ([args.reference] if args.reference else []) + [args.answers]
    runs = []
    for answers in sizes:
        start = time.perf_counter()
        store = checked_store(answers)
        labels = labels_store(store, args.labels, min(args.label_answers, answers // 2))
        lines = sum(1 for _ in open(labels, "rb"))
        print(f"{answers:,} answers: {store.name}, labels store {labels.name} ({lines:,} events), ready in "
              f"{time.perf_counter() - start:.0f} s", flush=True)
        runs.append((answers, store, labels))
    reference: dict[str, float] = {}
    if not args.no_browser:
        from playwright.sync_api import sync_playwright
        from test_browser import launch

        print(f"{'answers':>9} {'action':<20} {'median':>7} {'p95':>7} {'max':>7} {'ratio':>6}  (ms; ratio: median "
              "over the reference's)", flush=True)
        with sync_playwright() as pw:
            browser = launch(pw)
            for answers, store, labels in runs:
                figures = measure(browser, store, labels, args.reviewer, args.presses, args.warmup)
                for action, values in figures.items():
                    median = statistics.median(values)
                    ratio = ""
                    if answers == args.reference and len(runs) > 1:
                        reference[action] = median
                    elif reference.get(action):
                        ratio = f"{median / reference[action]:.2f}"
                    print(f"{answers:>9,} {action:<20} {median:>7.0f} {p95(values):>7.0f} {max(values):>7.0f} "
                          f"{ratio:>6}", flush=True)
            browser.close()
        print("target: median < 250 ms for Next and label-to-next; load average now "
              f"{os.getloadavg()[0]:.2f}", flush=True)
    for answers, store, labels in [] if args.no_search else runs:
        print(f"search, {answers:,} answers (median of {args.repeat}):", flush=True)
        for name, (took, summary) in search_times(store, labels, args.repeat).items():
            print(f"  {name:36} {took * 1000:8.0f} ms  {summary}", flush=True)
    print(f"target: search under 1 s; load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
