"""One labelling process for the concurrency test and benchmark: saves COUNT labels to the store
named by $CITECHECK_LABELS (a file or a postgresql:// URL, kept off the command line), one
``labels.append`` each, and after each save returns writes its number to ACKS (``-``: stdout).

    python tests/label_writer.py WORKER COUNT ACKS

Every number in ACKS is a label whose save returned: it must be in the store exactly once.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from citecheck.labelling import labels  # noqa: E402

ITEM = "a-001#s0#c0"


def label(worker: str, n: int) -> labels.Label:
    return labels.Label(labels.LABELS_VERSION, ITEM, "a-001", 0, 0, "c1", "sha256:" + "0" * 32, "supported",
                   f"{n:06d}", worker, labels.now(), "bench")


def main(worker: str, count: int, acks: str) -> None:
    target = os.environ["CITECHECK_LABELS"]
    with (open(acks, "w", encoding="utf-8") if acks != "-" else sys.stdout) as ack:
        for n in range(count):
            labels.append(target, label(worker, n))
            ack.write(f"{n}\n")
            ack.flush()  # in the kernel once written: a SIGKILL cannot lose it


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
