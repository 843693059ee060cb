#!/usr/bin/env python3
"""Run the review page's quickest key test many times at once, to find rare faults in the key queue.

    python bench/stress_review_keys.py [--copies 3] [--rounds 20] [--test NAME]

``--copies`` runs of the test go on side by side (each its own server and Chromium), each
``--rounds`` times over, so the machine is loaded as a busy CI runner is; it prints each run's
result and, at the end, how many failed.  The default test presses five label keys without
waiting, reloads, and presses three more (tests/test_review_browser.py).  Three copies on two
cores found three faults of the key queue that CI had met once (docs/app.md, Labelling); each
failed about one run in ten to fifty.  A failed run's pytest output is kept under
``bench/out/stress-review-keys/``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST = "tests/test_review_browser.py::test_keys_pressed_in_quick_succession_and_right_after_a_reload_all_land_once"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--test", default=TEST)
    args = parser.parse_args()
    out = ROOT / "bench" / "out" / "stress-review-keys"
    out.mkdir(parents=True, exist_ok=True)
    results: list[bool] = []
    lock = threading.Lock()

    def copy(n: int) -> None:
        for r in range(args.rounds):
            run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:xdist",
                                  "-p", "no:cacheprovider", args.test], cwd=ROOT, capture_output=True, text=True)
            passed = run.returncode == 0
            with lock:
                results.append(passed)
                print(f"copy {n} round {r + 1}: {'passed' if passed else 'FAILED'} "
                      f"({len(results)} runs, {results.count(False)} failed)", flush=True)
            if not passed:
                (out / f"copy{n}-round{r + 1}.txt").write_text(run.stdout + run.stderr, encoding="utf-8")

    started = time.monotonic()
    load = os.getloadavg()
    threads = [threading.Thread(target=copy, args=(n,)) for n in range(args.copies)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"{len(results)} runs in {time.monotonic() - started:.0f} s, {results.count(False)} failed; "
          f"load average before {load[0]:.1f}, after {os.getloadavg()[0]:.1f}")
    return 1 if False in results else 0


if __name__ == "__main__":
    sys.exit(main())
