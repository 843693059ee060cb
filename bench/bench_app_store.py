#!/usr/bin/env python3
"""Benchmark the Failures page on a checked store of many answers.

    python bench/bench_app_store.py [--copies 20]

Takes the store bench_store.py wrote (bench/out/store-50000, 50,000 answers; run that first) and
makes a store of ``--copies`` logs, each a copy of its parts under another log id (20 copies:
1,000,000 answers), without checking anything.  Then, in a fresh child process, opens the app's
Failures page on it (Streamlit's AppTest, CITECHECK_STORE) and prints the first view's time and
the process's peak RSS.  Targets (issue #14, 1,000,000 answers): first Failures view under 3 s,
memory under 500 MB; ``citecheck report --store`` under 5 s (also timed here, in a child); then the
review page on the store (reviewer set) and the median of 10 Next clicks (target under 250 ms).
Peak memory is each child's own high-water mark (VmHWM), after the Failures page, after the review
page opened and at the end.  ``--keep`` keeps the store of copies, ``--reuse`` uses a kept one.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)

# The children's peak memory is their own high-water mark (VmHWM): ru_maxrss of a process started
# by subprocess (vfork, then exec) starts at the parent's peak, and this parent's is about 410 MB
# after make_copies, so any child's figure under that read as the parent's.
PEAK = """
def peak_mb():
    try:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""

CHILD = PEAK + """
import os, re, resource, sys, time
from streamlit.testing.v1 import AppTest
os.environ["CITECHECK_STORE"] = {store!r}
os.environ["CITECHECK_GOLDEN"] = ""
at = AppTest.from_file({app!r}, default_timeout=600).run()
start = time.perf_counter()
at.switch_page("pages/failures.py").run()
first = time.perf_counter() - start
assert not at.exception, [e.value for e in at.exception]
start = time.perf_counter()
at.session_state["failures_tab"] = "Failing answers"  # (only the open tab is drawn: the table's, as a click opens it)
at.run()
table = time.perf_counter() - start
assert not at.exception, [e.value for e in at.exception]
start = time.perf_counter()
models = at.selectbox(key="f_model").options
at.selectbox(key="f_model").select(models[1] if len(models) > 1 else models[0]).run()  # the first model
again = time.perf_counter() - start
caption = " ".join(re.sub("<[^>]+>", " ", next(str(h.proto.body) for h in at.get("html")
                                                if "cc-inputs" in str(h.proto.body))).split())  # what it read
failures_peak = peak_mb()
review = AppTest.from_file({app!r}, default_timeout=600)
review.query_params["reviewer"] = "bench"
start = time.perf_counter()
review.run()
opened = time.perf_counter() - start
assert not review.exception, [e.value for e in review.exception]
opened_peak = peak_mb()
steps = []
for _ in range(10):
    button = next(b for b in review.button if b.label == "Next")
    start = time.perf_counter()
    button.click().run()
    steps.append(time.perf_counter() - start)
    assert not review.exception, [e.value for e in review.exception]
steps.sort()
peak = peak_mb()
start = time.perf_counter()  # then the other heavy views: every answer, not only the failing ones
at.selectbox(key="f_scope").select("all").run()
every = time.perf_counter() - start
assert not at.exception, [e.value for e in at.exception]
start = time.perf_counter()  # and the answers the reviewer has not labelled
review.radio(key="filter_box").set_value("Not yet labelled by me").run()
next(b for b in review.button if b.label == "Next").click().run()
unlabelled = time.perf_counter() - start
assert not review.exception, [e.value for e in review.exception]
print(first, table, again, opened, (steps[4] + steps[5]) / 2, failures_peak, opened_peak, every, unlabelled, peak_mb(),
      peak, caption)
"""


def main() -> None:
    from citecheck.storage.checked.folder import Store

    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--base", default=str(ROOT / "bench" / "out" / "store-50000"))
    parser.add_argument("--keep", action="store_true", help="keep the store of copies (bench/out/store-copies-N)")
    parser.add_argument("--reuse", action="store_true",
                        help="use the store of copies a run with --keep left, instead of making it again")
    args = parser.parse_args()
    out = ROOT / "bench" / "out" / f"store-copies-{args.copies}"
    if args.reuse and (out / "store.json").is_file():
        answers = _answers(out)
    else:
        answers = make_copies(Store(args.base), args.copies, out)
    print(f"store of {answers:,} answers ({args.copies} copies of {args.base})")
    proc = subprocess.run([sys.executable, "-c", CHILD.format(store=str(out), app=str(ROOT / "app.py"))],
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode:
        sys.exit(proc.stderr[-3000:])
    first, table, again, opened, step, p1, p2, every, unlabelled, top, rss, caption = \
        proc.stdout.strip().splitlines()[-1].split(" ", 11)
    print(f"Failures page, first view: {float(first):.2f} s (target < 3 s); its Failing answers tab opened: "
          f"{float(table):.2f} s; a filter: {float(again):.2f} s; "
          f"peak RSS of the app process {float(rss):.0f} MB (target < 500 MB; {float(p1):.0f} MB after the "
          f"Failures page, {float(p2):.0f} MB after the review page opened); page says: {caption}")
    print(f"Review page on the store (reviewer set): opened in {float(opened):.2f} s; Next, median of 10: "
          f"{float(step) * 1000:.0f} ms (target < 250 ms)")
    print(f"Then the Failures table of every answer ({float(every):.2f} s) and the review page's 'Not yet "
          f"labelled by me' with one Next ({float(unlabelled):.2f} s): peak RSS {float(top):.0f} MB")
    report = subprocess.run([sys.executable, "-c", REPORT.format(root=str(ROOT), argv=["report", "--store", str(out)])],
                            capture_output=True, text=True, cwd=ROOT, check=True)
    elapsed, rss = report.stdout.split()[-2:]
    print(f"citecheck report --store on it: {float(elapsed):.2f} s (target < 5 s), peak RSS {float(rss):.0f} MB")
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)


def make_copies(base, copies: int, out: Path) -> int:
    """A store of ``copies`` logs, each a copy of ``base``'s parts under another log id (nothing is
    checked); returns its number of answers."""
    import duckdb
    from citecheck.storage.checked import schema

    (entry,) = base.logs
    shutil.rmtree(out, ignore_errors=True)
    logs = []
    con = duckdb.connect()
    for i in range(copies):
        source = f"{i:016x}"
        for table in schema.TABLES:
            target = out / table / f"log-{source}" / "part-000001.parquet"
            target.parent.mkdir(parents=True)
            files = ", ".join(f"'{f}'" for f in base.files(table))
            con.execute(f"COPY (SELECT * REPLACE ('{source}' AS source) FROM read_parquet([{files}])) "
                        f"TO '{target}' (FORMAT parquet, COMPRESSION zstd)")
        logs.append({**entry, "source": source, "parts": ["part-000001"]})
    (out / "store.json").write_text(json.dumps({"store_version": base.version, "next_part": 2, "logs": logs}))  # (the
    # parts' line hashes are the base's: its version)
    return con.execute(f"SELECT count(*) FROM read_parquet('{out}/answers/*/*.parquet')").fetchone()[0]


def _answers(out: Path) -> int:
    """The number of answers of a store of copies (from its Parquet footers)."""
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in sorted((out / "answers").glob("*/*.parquet")))


REPORT = PEAK + """
import os, resource, sys, time
sys.path.insert(0, {root!r} + "/core")  # (this checkout's citecheck, whichever one the venv installed)
from citecheck.cli.main import main
with open(os.devnull, "w") as sink:
    start = time.perf_counter()
    main({argv!r}, sink, sink)
print(time.perf_counter() - start, peak_mb())
"""


if __name__ == "__main__":
    main()
