#!/usr/bin/env python3
"""What a rerun of the Failures page spends on its figures, made every run or kept (web.failures_source).

    python bench/bench_failures_figures.py [--answers 20000] [--labels 500]

A rerun (a filter changed, another session's label re-read) used to make the figures again: on a
log in memory the labels counted into a copy of the answer table and every figure of the report
built; on a checked store a DuckDB connection opened, the labelled answers read back and every
figure queried.  Now they are kept while the log, the store's manifest, the labels and the golden
set stay the same.  Prints the median time of each way (in this process, on the same inputs) and
their ratio; the kept way must be at least 10x cheaper.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)
sys.path.insert(0, str(ROOT / "bench"))

import bench_check  # noqa: E402


def median_time(fn, runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    from citecheck.cli.main import main as cli
    from citecheck.labelling import dataset
    from citecheck.labelling import labels as label_store
    from citecheck.reports import figures
    from citecheck.reports.failures import build
    from citecheck.storage.checked.sources import StoreSource, TableSource
    from citecheck.web import failures_source

    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=20_000)
    parser.add_argument("--labels", type=int, default=500)
    args = parser.parse_args()
    log = ROOT / "bench" / "out" / f"synthetic-v2-{args.answers}.jsonl"
    if not log.exists():
        bench_check.generate(log, args.answers)
    data = dataset.load([log])
    cited = [i for i in data.all_items if i.citation is not None][:args.labels]
    labels = label_store.latest([label_store.make_label(i, "not_supported", "bench") for i in cited])

    def every_run() -> TableSource:  # what the page did on each rerun before
        table = figures.with_labels(figures.dataset_table(data), data.get, labels)
        return TableSource(table, build(table, None, [], 5))

    failures_source.table_source(data, None, labels)  # made once
    made = median_time(every_run)
    kept = median_time(lambda: failures_source.table_source(data, None, dict(labels)))
    print(f"log of {len(data):,} answers, {len(labels)} labels: figures made every run {made * 1000:.1f} ms, "
          f"kept {kept * 1000:.3f} ms (ratio {made / kept:,.0f}x)")
    assert made / kept >= 10, "keeping the figures must make a rerun at least 10x cheaper"

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        assert cli(["check", str(log), "--store", str(store)], io.StringIO(), io.StringIO()) == 0
        slot = failures_source.Slot()
        failures_source.store_source(store, None, labels, slot)
        made = median_time(lambda: StoreSource.of(store, None, labels, 5), runs=5)
        kept = median_time(lambda: failures_source.store_source(store, None, dict(labels), slot))
        print(f"store of {len(data):,} answers, {len(labels)} labels: figures made every run {made * 1000:.1f} ms, "
              f"kept {kept * 1000:.3f} ms (ratio {made / kept:,.0f}x)")
        assert made / kept >= 10, "keeping the figures must make a rerun at least 10x cheaper"


if __name__ == "__main__":
    main()
