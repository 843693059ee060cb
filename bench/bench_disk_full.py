#!/usr/bin/env python3
"""Disk-full appends on a real 64 KiB tmpfs (needs root to mount it): the earlier append, one
unchecked ``os.write`` (kept here as the reference), against ``jsonl.append_records``.

    sudo python bench/bench_disk_full.py

Prints, per writer and group size, how many records were acknowledged, how many can be read
back and how many lines are unreadable. Target: acknowledged == readable, 0 unreadable.
"""
import fcntl
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from citecheck.storage import lines


def old_append(path, records):
    path = Path(path)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        os.write(fd, data)
        os.fsync(fd)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

def run(append, group):
    mount = Path(tempfile.mkdtemp())
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], check=True)
    try:
        path = mount / "f.jsonl"
        acked = 0
        for n in range(100000):
            recs = [{"item": f"a-{n}-{k}#s0#c0", "label": "supported", "note": "x" * 200} for k in range(group)]
            try:
                append(path, recs)
            except OSError:
                break
            acked += group
        records, errors = lines.read_all(path, lambda v: v)
        return acked, len(records), len(errors)
    finally:
        subprocess.run(["umount", str(mount)])

for name, fn in [("before (unchecked os.write)", old_append), ("after (append_records)", lines.append_records)]:
    for group in (1, 10):
        acked, readable, bad = run(fn, group)
        print(f"{name}, groups of {group}: {acked} acknowledged, {readable} readable, {bad} unreadable line(s)")
