#!/usr/bin/env python3
"""Fault generators of issue #32, counted: the differential fuzz (every file case of
tests/fuzzlogs.py through ``check``, ``check --store`` and ``check --store --engine dask``) and
the garbled provider responses (tests/test_import_garbled.py's generator, more variants).

    python bench/bench_faults.py [--variants 30] [--no-dask]

Prints, for each: tried, clean, tracebacks, disagreements (fuzz) or emptied ``--out`` (garble).
The kill generator is tests/test_store_crash.py with more kills and answers:
``CITECHECK_CRASH_KILLS=20 CITECHECK_CRASH_ANSWERS=50000 python -m pytest -s tests/test_store_crash.py -k killed``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fuzzlogs import cases  # noqa: E402
from test_import_garbled import DATA, FIXTURES, PRIOR, garbled  # noqa: E402
from test_store_differential import _said, _store_answers, _write, run  # noqa: E402


def fuzz(tmp: Path, dask: bool) -> None:
    logs = {f"{c.family}-{n}": c.data for n, c in enumerate(cases(full=False)) if c.kind == "file"}
    paths = _write(tmp / "logs", logs)
    started = time.perf_counter()
    outcomes = {}
    tracebacks = 0
    runs = [("check", ["check", *paths, "--format", "json"]),
            ("store", ["check", *paths, "--store", str(tmp / "store"), "--format", "json"])]
    for name, argv in runs:
        try:
            code, out, _ = run(argv)
        except Exception:  # noqa: BLE001 (counted, not hidden)
            tracebacks += 1
            traceback.print_exc()
            continue
        said = _said(out)
        if name == "store":
            said["answers"] = _store_answers(tmp / "store")
        outcomes[name] = (code, said)
    if dask:
        import distributed

        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
            code, out, _ = run(["check", *paths, "--store", str(tmp / "dask"), "--format", "json", "--engine", "dask",
                                "--scheduler", c.scheduler_address])
            said = _said(out)
            said["answers"] = _store_answers(tmp / "dask")
            outcomes["dask"] = (code, said)
    base_code, base = outcomes["check"]
    disagreements = {name: [k for k in ("answers", "errors", "summary") if said[k] != base[k]]
                     + (["exit code"] if code != base_code else [])
                     for name, (code, said) in outcomes.items() if name != "check"}
    print(f"differential fuzz: {len(paths)} logs, {len(base['answers'])} answers, {len(base['errors'])} unreadable "
          f"lines; paths {', '.join(outcomes)}; tracebacks {tracebacks}; disagreements "
          f"{ {k: v or 'none' for k, v in disagreements.items()} }; {time.perf_counter() - started:.0f} s")


def garble(tmp: Path, variants: int) -> None:
    counts = {"tried": 0, "imported": 0, "clean errors": 0, "tracebacks": 0, "--out emptied or changed": 0}
    for provider, response, request_file in FIXTURES:
        rng = random.Random(f"bench:{provider}:{response}")
        for name, data in garbled((DATA / response).read_bytes(), rng, variants):
            path = tmp / f"{name}{Path(response).suffix}"
            path.write_bytes(data)
            out = tmp / "prior.jsonl"
            out.write_bytes(PRIOR)
            argv = ["import", provider, "--response", str(path), "--out", str(out)]
            if request_file:
                argv += ["--request", str(DATA / request_file)]
            counts["tried"] += 1
            try:
                code, _, err = run(argv)
            except Exception:  # noqa: BLE001
                counts["tracebacks"] += 1
                continue
            if "imported 0 answer(s)" in err:
                counts["clean errors"] += 1
                counts["--out emptied or changed"] += out.read_bytes() != PRIOR
            else:
                counts["imported"] += 1
    print(f"garbled responses: {counts}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variants", type=int, default=30)
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        fuzz(Path(folder) / "fuzz", not args.no_dask)
        garble(Path(folder), args.variants)


if __name__ == "__main__":
    main()
