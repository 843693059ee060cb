"""Writes that never lie (issue 17): a save that returns is on disk whole; a save that cannot be
completed is undone and said plainly; ``--out`` files appear whole or not at all.

The disk-full cases run twice: on a real, tiny tmpfs when this process may mount one (root in
CI), and with ``os.write`` made to write short / fail with ENOSPC (always)."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
from dataclasses import asdict

import pytest
from citecheck.checking.files import check_options
from citecheck.judging import verdicts
from citecheck.labelling import dataset
from citecheck.labelling import labels as label_store
from citecheck.storage import durable, lines
from citecheck.storage.durable import WriteFailed, replace_file
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG
from disk import FlakyWrite, fill
from hypothesis import given
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def items():
    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    return [i for i in data.all_items if i.citation is not None]


def _labels_until_full(path, items):
    acknowledged = []
    for n in range(10_000):
        label = label_store.make_label(items[n % len(items)], items[n % len(items)].labels[0], f"r{n}", note="n" * 50)
        try:
            label_store.append(path, label)
        except WriteFailed as exc:
            return acknowledged, exc
        acknowledged.append(label)
    raise AssertionError("the small disk never filled")


def _check_disk_full(path, acknowledged, exc):
    records, errors = label_store.read(path)
    assert errors == [], "a failed append left a torn record behind"
    assert records == acknowledged, "every acknowledged label is readable, and only those"
    assert exc.disk_full and exc.undone
    assert "NOT saved" in str(exc) and "the disk is full" in str(exc) and "[Errno" not in str(exc)


def test_labels_on_a_full_real_disk_are_all_acknowledged_or_refused(small_disk, items):
    path = small_disk / "labels.jsonl"
    (small_disk / "ballast").write_bytes(b"x" * 16 * 1024)
    acknowledged, exc = _labels_until_full(path, items)
    assert len(acknowledged) > 10
    _check_disk_full(path, acknowledged, exc)
    # once there is room again, the next label is saved after the others, on its own line
    (small_disk / "ballast").unlink()
    label = label_store.make_label(items[0], items[0].labels[0], "after")
    label_store.append(path, label)
    assert label_store.read(path) == (acknowledged + [label], [])


def test_verdict_groups_on_a_full_real_disk_land_whole_or_not_at_all(small_disk):
    path = small_disk / "verdicts.jsonl"
    with open(small_disk / "ballast", "wb") as f:  # leave about 3 pages
        f.write(b"x" * (64 * 1024 - 3 * 4096))
    written = []
    for round_ in range(100):
        group = [verdicts.make(f"a-{round_}-{k}#s0#c0", "supported", "r" * 80, "baseline", "b.v1", "sha") for k in range(10)]
        try:
            verdicts.append(path, group)
        except WriteFailed as exc:
            assert exc.disk_full and "10 record(s) NOT saved" in str(exc)
            break
        written.extend(group)
    else:
        raise AssertionError("the small disk never filled")
    records, errors = verdicts.read(path)
    assert errors == [] and records == written and len(written) % 10 == 0


def test_replace_file_on_a_full_real_disk_keeps_the_previous_file(small_disk):
    path = small_disk / "export.csv"
    path.write_text("previous export\n")
    fill(small_disk)
    with pytest.raises(WriteFailed, match="the disk is full"):
        replace_file(path, "x" * 100_000, what="the export")
    assert path.read_text() == "previous export\n"
    assert sorted(p.name for p in small_disk.iterdir()) == ["ballast", "export.csv"]  # no temp file left


# --- the same promises with os.write simulated (always run) ---------------------------------------


def test_short_writes_are_completed(tmp_path, monkeypatch, items):
    path = tmp_path / "labels.jsonl"
    flaky = FlakyWrite(monkeypatch, step=7)
    label = label_store.make_label(items[0], items[0].labels[0], "ana")
    label_store.append(path, label)
    assert flaky.calls > 10  # the record took many short writes, and all of them happened
    assert label_store.read(path) == ([label], [])


def test_a_write_that_fails_midway_is_undone_and_reported(tmp_path, monkeypatch, items):
    path = tmp_path / "labels.jsonl"
    first = label_store.make_label(items[0], items[0].labels[0], "ana")
    label_store.append(path, first)
    size = path.stat().st_size
    FlakyWrite(monkeypatch, step=50, room=120)  # part of the next record fits, the rest does not
    with pytest.raises(WriteFailed) as caught:
        label_store.append(path, label_store.make_label(items[1], items[1].labels[0], "ana"))
    assert caught.value.disk_full and caught.value.undone
    assert str(caught.value).startswith("the label NOT saved: the disk is full")
    assert path.stat().st_size == size and label_store.read(path) == ([first], [])


def test_a_multi_record_append_is_all_or_nothing(tmp_path, monkeypatch):
    path = tmp_path / "verdicts.jsonl"
    group = [verdicts.make(f"a{k}#s0#c0", "partial", "why", "baseline", "b.v1", "sha") for k in range(10)]
    verdicts.append(path, group[:2])
    FlakyWrite(monkeypatch, step=100, room=900)  # about 4 of the 10 records fit
    with pytest.raises(WriteFailed, match="10 record"):
        verdicts.append(path, group)
    assert verdicts.read(path) == (group[:2], [])


def test_a_torn_line_left_by_a_crash_is_not_glued_to_the_next_record(tmp_path, items):
    path = tmp_path / "labels.jsonl"
    first = label_store.make_label(items[0], items[0].labels[0], "ana")
    label_store.append(path, first)
    with open(path, "ab") as f:
        f.write(b'{"labels_version": 1, "item": "a-0')
    second = label_store.make_label(items[1], items[1].labels[0], "ana")
    label_store.append(path, second)
    records, errors = label_store.read(path)
    assert records == [first, second] and [e.line for e in errors] == [2]


def test_creating_a_file_syncs_its_folder(tmp_path, monkeypatch):
    synced = []
    real = os.fsync

    def fsync(fd):
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    lines.append_records(tmp_path / "new.jsonl", [{"a": 1}])
    assert synced == [True, False]  # the folder (new entry), then the file
    synced.clear()
    lines.append_records(tmp_path / "new.jsonl", [{"a": 2}])
    assert synced == [False]  # an existing file: only its data


def test_replace_file_failure_keeps_the_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "out.jsonl"
    path.write_text("old\n")
    FlakyWrite(monkeypatch, step=1000, room=3000)
    with pytest.raises(WriteFailed, match="the export NOT saved: the disk is full"):
        replace_file(path, "y" * 10_000, what="the export")
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_replaced_text_appears_only_when_committed(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text("previous\n")
    with pytest.raises(RuntimeError):
        with durable.ReplacedText(path) as out:
            out.write("half of a new file\n")
            assert path.read_text() == "previous\n"
            raise RuntimeError("killed midway")
    assert path.read_text() == "previous\n" and [p.name for p in tmp_path.iterdir()] == ["answers.jsonl"]
    with durable.ReplacedText(path) as out:
        out.write("new\n" * 3)
    assert path.read_text() == "new\n" * 3


def test_write_failed_for_other_errors_names_the_error(tmp_path):
    exc = WriteFailed(tmp_path / "x", "the label", OSError(errno.EIO, os.strerror(errno.EIO)))
    assert not exc.disk_full
    assert str(exc) == (f"the label NOT saved: the write failed (Input/output error) ({tmp_path / 'x'}); "
                        "nothing was written; try again.")


# --- readers ----------------------------------------------------------------------------------------


def _lock_waiters(path) -> int:
    """How many processes/threads wait for a flock on ``path`` (from /proc/locks: ``->`` lines)."""
    inode = os.stat(path).st_ino
    with open("/proc/locks") as f:
        return sum(1 for line in f if "->" in line and line.split()[-3].endswith(f":{inode}"))


def test_a_record_being_written_is_read_whole_not_reported_torn(tmp_path, items):
    import threading

    path = tmp_path / "labels.jsonl"
    first = label_store.make_label(items[0], items[0].labels[0], "ana")
    label_store.append(path, first)
    second = label_store.make_label(items[1], items[1].labels[0], "ben")
    line = (json.dumps(asdict(second)) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another writer, half-way through its append
    os.write(fd, line[:40])
    result = {}
    reader = threading.Thread(target=lambda: result.update(read=label_store.read(path)))
    reader.start()
    for _ in range(100_000):  # until the reader saw the torn line and waits for the writer's lock
        if _lock_waiters(path) or not reader.is_alive():
            break
    assert reader.is_alive(), "the reader did not wait for the writer"
    os.write(fd, line[40:])
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    reader.join()
    assert result["read"] == ([first, second], [])


def test_a_line_still_torn_on_the_second_look_is_reported(tmp_path, items):
    path = tmp_path / "labels.jsonl"
    first = label_store.make_label(items[0], items[0].labels[0], "ana")
    label_store.append(path, first)
    with open(path, "ab") as f:
        f.write(b'{"labels_version": 1, "it')
    records, errors = label_store.read(path)
    assert records == [first] and [(e.line, e.field) for e in errors] == [(2, "(json)")]
    assert "probably a crash while writing" in errors[0].message


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_byte_order_mark_and_any_line_end_are_read(tmp_path, items, end):
    path = tmp_path / "labels.jsonl"
    labels = [label_store.make_label(i, i.labels[0], "ana") for i in items[:3]]
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(json.dumps(asdict(lb)).encode() + end for lb in labels))
    assert label_store.read(path) == (labels, [])


@given(st.lists(st.sampled_from([b"a", b"{}", b"\n", b"\r", b"\r\n", b" ", b"\xc3\xa9"]), max_size=40),
       st.integers(1, 5))
def test_physical_lines_split_as_universal_newlines_at_any_chunk_size(pieces, chunk_size):
    import io

    data = b"".join(pieces)
    assert list(lines.physical_lines(io.BytesIO(data), chunk_size)) == data.splitlines(keepends=True)


@given(st.lists(st.sampled_from([b"a", b"{}", b"\n", b"\r", b"\r\n", b" ", b"\xc3\xa9", b"abcdef"]), max_size=40),
       st.integers(1, 7), st.integers(0, 6))
def test_physical_lines_give_a_line_past_the_limit_as_its_length(pieces, chunk_size, limit):
    import io

    data = b"".join(pieces)
    expected = [line if len(line.rstrip(b"\r\n")) <= limit else len(line) for line in data.splitlines(keepends=True)]
    got = list(lines.physical_lines(io.BytesIO(data), chunk_size, limit))
    assert got == expected
    assert [type(x) is bytes for x in got] == [type(x) is bytes for x in expected]
