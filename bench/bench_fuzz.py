#!/usr/bin/env python3
"""Fuzz ``citecheck check``, ``citecheck report`` (text and JSON) and every page with malformed logs.

    python bench/bench_fuzz.py [--full] [--pages-every N] [--limit S] [--families a,b] [--out FILE]

The cases are tests/fuzzlogs.py's (the sample log mutated field by field, and whole-line and
whole-file defects); ``--full`` adds the large ones (a 50 MB line, answers of 200,000
characters).  Every case goes through the four commands in this process; one case in
``--pages-every`` (default 5, every family's first case always) also through every page with
AppTest.  A traceback is an exception that escapes a command or is shown by a page; a hang is a
run over ``--limit`` seconds (default 30 for commands, 60 for pages); "lost" is a ``check --format
json`` that returns fewer answer and error records than the log has non-blank lines, or a
directory or missing log that does not get exit code 2 and a message.

Prints cases, tracebacks, hangs and lost per command and per page, the distinct defects found,
and the slowest cases.  Target: no traceback, no hang, nothing lost.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))  # (this checkout's citecheck, whichever one the venv installed)
sys.path.insert(0, str(ROOT / "tests"))

import fuzzlogs  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true", help="add the large cases (50 MB line and more)")
    parser.add_argument("--pages-every", type=int, default=5, help="run one case in N through the pages (0: none)")
    parser.add_argument("--limit", type=float, default=30.0, help="seconds before a command counts as hung")
    parser.add_argument("--families", help="only these families (comma-separated)")
    parser.add_argument("--out", help="write every outcome as JSON lines to this file")
    args = parser.parse_args()

    families = set(args.families.split(",")) if args.families else None
    cases = [c for c in fuzzlogs.cases(full=args.full) if families is None or c.family in families]
    seen: set[str] = set()
    outcomes: list[tuple[fuzzlogs.Case, fuzzlogs.Outcome]] = []
    for n, case in enumerate(cases):
        with tempfile.TemporaryDirectory() as tmp:
            path = fuzzlogs.Case.write(case, Path(tmp))
            for command, fmt in fuzzlogs.COMMANDS:
                outcomes.append((case, fuzzlogs.run_command(case, path, command, fmt, args.limit)))
            if args.pages_every and (case.family not in seen or n % args.pages_every == 0):
                seen.add(case.family)
                for o in fuzzlogs.run_pages(path, Path(tmp), 2 * args.limit):
                    outcomes.append((case, o))
        if (n + 1) % 100 == 0:
            print(f"  {n + 1} of {len(cases)} cases", file=sys.stderr, flush=True)

    targets = [f"{c} {f}" for c, f in fuzzlogs.COMMANDS] + list(fuzzlogs.PAGES)
    targets += list(dict.fromkeys(o.target for _, o in outcomes if o.target not in targets))  # (the Failures tabs)
    table = {t: collections.Counter() for t in targets}
    for _, o in outcomes:
        table[o.target]["cases"] += 1
        table[o.target][o.status] += 1
    print(f"{len(cases)} cases{' (full)' if args.full else ''}; pages on one case in {args.pages_every} "
          f"(and every family's first)")
    print(f"{'target':<42}{'cases':>7}{'traceback':>11}{'hang':>6}{'lost':>6}")
    for t in targets:
        row = table[t]
        print(f"{t:<42}{row['cases']:>7}{row['traceback']:>11}{row['hang']:>6}{row['lost']:>6}")
    defects = collections.Counter()
    example = {}
    for case, o in outcomes:
        if o.status != "ok":
            key = (o.status, "pages" if o.target.startswith("pages/") else o.target.split()[0], case.family,
                   o.detail[:90])
            defects[key] += 1
            example.setdefault(key, case.name)
    if defects:
        print("\ndefects (status, where, family, detail: count, first case)")
        for key, count in defects.most_common():
            print(f"  {key[0]:<9} {key[1]:<7} {key[2]:<15} {key[3]}: {count}, e.g. {example[key]}")
    slow = sorted(outcomes, key=lambda co: -co[1].seconds)[:8]
    print("\nslowest")
    for case, o in slow:
        print(f"  {o.seconds:7.2f} s  {o.target:<40} {case.family}: {case.name}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            for case, o in outcomes:
                handle.write(json.dumps({"family": case.family, "case": case.name, "target": o.target,
                                         "status": o.status, "detail": o.detail, "seconds": round(o.seconds, 3)},
                                        ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
