"""Issue #17: the records of one append are used whole or not at all, even when a crash (SIGKILL
in the middle of a large write) leaves only part of the group in the file (docs/writes.md)."""

from __future__ import annotations

import fcntl
import json
import os
import threading
from dataclasses import asdict

from citecheck.judging import verdicts
from citecheck.storage import lines as line_reader
from hypothesis import given, settings
from hypothesis import strategies as st


def _verdicts(n, tag="v"):
    return [verdicts.make(f"{tag}{k}#s0#c0", "partial", "why " * 20, "baseline", "b.v1", "sha") for k in range(n)]


def test_a_group_is_marked_and_read_back_without_its_mark(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    one, group = _verdicts(1, "a"), _verdicts(3, "b")
    verdicts.append(path, one)
    verdicts.append(path, group)
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert line_reader.GROUP_FIELD not in lines[0]  # a single record is not a group
    tags = [x[line_reader.GROUP_FIELD] for x in lines[1:]]
    assert [t.split()[1] for t in tags] == ["1/3", "2/3", "3/3"] and len({t.split()[0] for t in tags}) == 1
    assert verdicts.read(path) == (one + group, [])


def test_a_group_cut_short_at_any_byte_is_never_used_in_part(tmp_path):
    """Every length the file could have when a kill stopped the group's write (the kernel can stop
    a large write between pages, so at any byte): the reader gives the record before the group and
    the whole group, or the record before it alone, never some of the group."""
    path = tmp_path / "verdicts.jsonl"
    before, group = _verdicts(1, "a"), _verdicts(4, "b")
    verdicts.append(path, before)
    start = path.stat().st_size
    verdicts.append(path, group)
    whole = path.read_bytes()
    cut = tmp_path / "cut.jsonl"
    for size in range(start, len(whole) + 1):
        cut.write_bytes(whole[:size])
        records, errors = verdicts.read(cut)
        if size >= len(whole) - 1:  # (the last record whole but for its newline is whole)
            assert records == before + group and errors == []
        else:
            assert records == before, size
            lines_started = whole[start:size].count(b"\n") + (0 if whole[:size].endswith(b"\n") else 1)
            assert len(errors) == lines_started, size  # each line of the cut group is reported


def test_an_append_after_a_cut_group_is_read_and_the_cut_group_is_not(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    group, after = _verdicts(3, "b"), _verdicts(2, "c")
    verdicts.append(path, group)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2]))  # the kill left 2 whole lines of 3
    verdicts.append(path, after)
    records, errors = verdicts.read(path)
    assert records == after
    assert [(e.line, e.field) for e in errors] == [(1, line_reader.GROUP_FIELD), (2, line_reader.GROUP_FIELD)]
    assert "only 2 are in the file" in errors[0].message and "none of the group is used" in errors[0].message


def test_a_group_still_being_written_is_read_whole_once_its_writer_is_done(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    group = _verdicts(3, "b")
    verdicts.append(path, group)
    whole = path.read_bytes()
    head = whole[:whole.index(b"\n", whole.index(b"\n") + 1) + 1]  # two of the three lines
    path.write_bytes(head)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(fd, fcntl.LOCK_EX)  # the writer, between its second and third line
    result = {}
    reader = threading.Thread(target=lambda: result.update(read=verdicts.read(path)))
    reader.start()
    reader.join(timeout=0.5)
    assert reader.is_alive(), "the reader did not wait for the writer of the open group"
    os.write(fd, whole[len(head):])
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    reader.join()
    assert result["read"] == (group, [])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=5), st.data())
def test_interleaved_groups_cut_anywhere_give_whole_groups_only(tmp_path_factory, sizes, data):
    path = tmp_path_factory.mktemp("groups") / "verdicts.jsonl"
    groups = [_verdicts(n, f"g{i}-") for i, n in enumerate(sizes)]
    ends = []
    for g in groups:
        verdicts.append(path, g)
        ends.append(path.stat().st_size)
    whole = path.read_bytes()
    size = data.draw(st.integers(0, len(whole)))
    path.write_bytes(whole[:size])
    records, _ = verdicts.read(path)
    # (a group is whole once its last record is, even without the final newline)
    assert records == [v for g, end in zip(groups, ends) if end - 1 <= size for v in g]


def test_a_malformed_group_mark_is_reported_on_its_field(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    record = asdict(verdicts.make("a#s0#c0", "partial", "", "baseline", "b.v1", "sha"))
    path.write_text(json.dumps({**record, line_reader.GROUP_FIELD: "x 3/2"}) + "\n", encoding="utf-8")
    records, errors = verdicts.read(path)
    assert records == [] and [e.field for e in errors] == [line_reader.GROUP_FIELD]


WRITER = """
import sys
from citecheck.judging import verdicts as V
path, n, run = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for g in range(1_000_000):
    V.append(path, [V.make(f"{run}.{g}-{k}of{n}#s0#c0", "partial", "x" * 2000, "baseline", "b.v1", "sha")
                    for k in range(n)])
"""


def test_a_writer_killed_during_large_group_appends_leaves_only_whole_groups(tmp_path):
    """A real SIGKILL, five times, while a process appends groups of 300 records (~700 KB each):
    whatever the kill cut, every group the reader gives is whole."""
    import signal
    import subprocess
    import sys

    path = tmp_path / "verdicts.jsonl"
    for round_ in range(5):
        start = path.stat().st_size if path.exists() else 0
        child = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "300", f"r{round_}"])
        while child.poll() is None and (not path.exists() or path.stat().st_size < start + 1_000_000 * (round_ + 1)):
            pass  # until it is well into its appends
        child.send_signal(signal.SIGKILL)
        child.wait()
        records, _ = verdicts.read(path)
        counts: dict[str, int] = {}
        for v in records:
            counts[v.item.split("-")[0]] = counts.get(v.item.split("-")[0], 0) + 1
        assert records and set(counts.values()) == {300}, "a group was used in part"
