"""The labels and verdicts stores read incrementally (storage.event_cache, web.label_cache):
after any run of appends (valid, invalid, torn and grouped records, a group a writer has not
finished), a file replaced or truncated, the incremental read gives exactly what a read from the
start gives, line numbers of the warnings included, for a file and for PostgreSQL; and the labels
that count, kept up to date, are exactly ``labels.latest(labels.effective(events))``."""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import asdict
from pathlib import Path

import pytest
from citecheck.contract.item_keys import CITATION_LABELS
from citecheck.labelling import labels
from citecheck.labelling.events import Retraction
from citecheck.storage import lines, postgres, streams
from citecheck.storage.event_cache import EventCache
from citecheck.web.label_cache import LabelCache
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def label_record(n: int, who: int, kind: int) -> dict:
    return {"labels_version": 1, "item": f"a-{n}#s0#c0", "answer_id": f"a-{n}", "sentence": 0, "citation": 0,
            "chunk_id": "c", "fingerprint": "f", "label": CITATION_LABELS[kind % len(CITATION_LABELS)], "note": "",
            "reviewer": f"r{who}", "at": f"2026-12-01T08:00:{n % 60:02d}.{kind:03d}Z", "citecheck": "t"}


def retraction_of(record: dict) -> dict:
    return Retraction(record["item"], record["reviewer"], record["at"], record["label"],
                      "2026-12-02T08:00:00.000Z", "t").to_record()


def bad_record(n: int) -> dict:
    return {**label_record(n, 0, 0), "label": "maybe"}  # refused on the field "label"


# --- one step of a writer: what it does to the store -------------------------------------------------

records = st.tuples(st.integers(0, 6), st.integers(0, 3), st.integers(0, 3)).map(lambda t: label_record(*t))
steps = st.one_of(
    st.tuples(st.just("append"), st.lists(records, min_size=1, max_size=4)),  # one record, or a group
    st.tuples(st.just("retract"), records),
    st.tuples(st.just("bad"), st.integers(0, 6)),
    st.tuples(st.just("raw"), st.sampled_from([b"not json\n", b"\n", b"   \n", b"[1, 2]\r\n", b"{\"x\": 1}\r",
                                               b"\xef\xbb\xbf\n", b"{\"labels_version\": 1"])),
    st.tuples(st.just("torn"), records, st.integers(1, 40)),  # part of a record, the rest written later
    st.tuples(st.just("open"), st.lists(records, min_size=2, max_size=4), st.integers(1, 3)),  # k of n of a group
    st.tuples(st.just("finish"), st.just(None)),  # the rest of what a writer left unfinished
    st.tuples(st.just("replace"), st.lists(records, max_size=3)),
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("team"), st.tuples(st.integers(0, 2), st.integers(0, 3), st.integers(0, 3))),
    st.tuples(st.just("read"), st.just(None)),
)


def team_record(kind: int, n: int, who: int) -> dict:
    """A comment, a resolve or an open (opens name a reviewer too: a name a mention may name)."""
    from citecheck.labelling import comments
    from citecheck.labelling.assignments import make_open

    key = f"a-{n}#s0#c0"
    if kind == 0:
        return comments.make_comment(key, f"r{who}", f"see @r{n}", [f"r{n}"], comment_id=f"c{n}{who}").to_record()
    if kind == 1:
        return comments.make_resolve(key, f"r{who}").to_record()
    return make_open(key, f"new{who}").to_record()


def group_lines(records: list[dict]) -> list[bytes]:
    group = uuid.uuid4().hex[:16]
    return [(json.dumps({**r, lines.GROUP_FIELD: f"{group} {k}/{len(records)}"}) + "\n").encode()
            for k, r in enumerate(records, start=1)]


def write_raw(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def apply_to_file(path: Path, step: tuple, unfinished: list[bytes]) -> None:
    kind, arg = step[0], step[1]
    if kind == "append":
        lines.append_records(path, arg)
    elif kind == "retract":
        lines.append_records(path, [retraction_of(arg)])
    elif kind == "bad":
        lines.append_records(path, [bad_record(arg)])
    elif kind == "team":
        lines.append_records(path, [team_record(*arg)])
    elif kind == "raw":
        write_raw(path, arg)
    elif kind == "torn":
        data = (json.dumps(arg) + "\n").encode()
        cut = min(step[2], len(data) - 1)
        write_raw(path, data[:cut])
        unfinished.append(data[cut:])
    elif kind == "open":
        members = group_lines(arg)
        shown = min(step[2], len(members) - 1)
        write_raw(path, b"".join(members[:shown]))
        unfinished.append(b"".join(members[shown:]))
    elif kind == "finish":
        if unfinished:
            write_raw(path, unfinished.pop(0))
    elif kind == "replace":
        fresh = path.with_name("fresh.jsonl")
        fresh.write_bytes(b"".join((json.dumps(r) + "\n").encode() for r in arg))
        os.replace(fresh, path)
        unfinished.clear()
    elif kind == "truncate":
        if path.exists():
            os.truncate(path, int(path.stat().st_size * arg))
        unfinished.clear()


def same(a: list, b: list) -> bool:
    return [asdict(x) if hasattr(x, "__dataclass_fields__") else x for x in a] == \
           [asdict(x) if hasattr(x, "__dataclass_fields__") else x for x in b]


def check(target, stream: str, cache: EventCache, label_cache: LabelCache) -> None:
    """The incremental reads equal a read from the start: records, warnings (with their lines), and
    the labels that count."""
    got = cache.read()
    want_records, want_errors = streams.read_all(target, stream, labels.parse_record)
    assert got.records == want_records
    assert [str(e) for e in got.errors] == [str(e) for e in want_errors]
    assert got.settled <= len(got.records)
    state = label_cache.state()
    assert state.events == want_records and [str(e) for e in state.errors] == [str(e) for e in want_errors]
    assert state.effective == labels.effective(want_records)
    want_current = labels.latest(labels.effective(want_records))
    assert state.current == want_current and list(state.current) == list(want_current)  # (same order too)
    for key in {getattr(e, "item", None) for e in want_records} - {None} | {"a-99#s0#c0"}:
        assert state.item_events(key) == [e for e in want_records if getattr(e, "item", None) == key]
    from citecheck.labelling import comments

    assert label_cache.names(state) == comments.known_reviewers(want_records)
    assert label_cache.derived(state, "threads", lambda s: comments.threads(s.events),
                               (comments.Comment, comments.Resolve)) == comments.threads(want_records)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(steps, max_size=25))
def test_a_file_read_incrementally_equals_a_read_from_the_start(tmp_path_factory, plan):
    path = tmp_path_factory.mktemp("events") / "labels.jsonl"
    cache, label_cache = EventCache(path, labels.STREAM, labels.parse_record), None
    label_cache = LabelCache(path, EventCache(path, labels.STREAM, labels.parse_record))
    unfinished: list[bytes] = []
    for step in plan:
        apply_to_file(path, step, unfinished)
        if step[0] == "read" or len(plan) % 2:  # (every step on half the plans)
            check(path, labels.STREAM, cache, label_cache)
    check(path, labels.STREAM, cache, label_cache)
    for rest in unfinished:  # every writer finishes: the tails read again become records
        write_raw(path, rest)
        check(path, labels.STREAM, cache, label_cache)


def test_a_file_grown_by_appends_is_read_on_from_where_it_was(tmp_path):
    path = tmp_path / "labels.jsonl"
    lines.append_records(path, [label_record(1, 1, 0)])
    cache = EventCache(path, labels.STREAM, labels.parse_record)
    first = cache.read()
    lines.append_records(path, [label_record(2, 1, 0), label_record(3, 1, 0)])  # a group
    write_raw(path, b"garbage\n")
    second = cache.read()
    assert second.generation == first.generation and second.settled == 3
    assert [r.item for r in second.records] == ["a-1#s0#c0", "a-2#s0#c0", "a-3#s0#c0"]
    assert [(e.line, e.field) for e in second.errors] == [(4, "(json)")]
    os.truncate(path, 0)  # truncated: read again from the start
    lines.append_records(path, [label_record(5, 1, 0)])
    third = cache.read()
    assert third.generation != second.generation and [r.item for r in third.records] == ["a-5#s0#c0"]


def test_a_torn_line_or_an_open_group_is_never_kept(tmp_path):
    path = tmp_path / "labels.jsonl"
    lines.append_records(path, [label_record(1, 1, 0)])
    members = group_lines([label_record(2, 1, 0), label_record(3, 1, 0)])
    write_raw(path, members[0])
    cache = EventCache(path, labels.STREAM, labels.parse_record)
    read = cache.read()
    assert read.settled == 1 and [(e.line, e.field) for e in read.errors] == [(2, lines.GROUP_FIELD)]
    write_raw(path, members[1])  # the writer finishes: the group is used whole
    read = cache.read()
    assert read.errors == [] and [r.item for r in read.records] == ["a-1#s0#c0", "a-2#s0#c0", "a-3#s0#c0"]
    data = (json.dumps(label_record(4, 1, 0)) + "\n").encode()
    write_raw(path, data[:10])
    assert [(e.line, e.field) for e in cache.read().errors] == [(4, "(json)")]
    write_raw(path, data[10:])
    read = cache.read()
    assert read.errors == [] and read.records[-1].item == "a-4#s0#c0" and read.settled == 4


def test_the_same_bytes_rewritten_before_the_position_are_noticed(tmp_path):
    path = tmp_path / "labels.jsonl"
    lines.append_records(path, [label_record(1, 1, 0), label_record(2, 1, 0)])
    cache = EventCache(path, labels.STREAM, labels.parse_record)
    cache.read()
    with open(path, "r+b") as handle:  # the same inode and a larger size, other bytes before the position
        data = handle.read().replace(b"a-1#s0#c0", b"a-7#s0#c0").replace(b'"a-1"', b'"a-7"')
        handle.seek(0)
        handle.write(data + b"\n")
    read = cache.read()
    assert [r.item for r in read.records] == ["a-7#s0#c0", "a-2#s0#c0"]


def test_labels_appended_without_a_retraction_are_applied_not_made_again(tmp_path, monkeypatch):
    path = tmp_path / "labels.jsonl"
    lines.append_records(path, [label_record(1, 1, 0), label_record(1, 2, 1)])
    cache = LabelCache(path)
    cache.state()
    made = []
    from citecheck.web import label_cache

    real = label_cache._Made.__init__
    monkeypatch.setattr(label_cache._Made, "__init__", lambda self, events: (made.append(len(events)),
                                                                               real(self, events))[1])
    lines.append_records(path, [label_record(1, 1, 2)])  # r1 changes their mind: applied in order
    state = cache.state()
    assert made == [] and state.current[("a-1#s0#c0", "r1")].label == CITATION_LABELS[2]
    lines.append_records(path, [retraction_of(label_record(1, 1, 2))])  # undo: made again from the events
    state = cache.state()
    assert made == [4] and state.current[("a-1#s0#c0", "r1")].label == CITATION_LABELS[0]


def test_derived_figures_are_kept_until_the_store_changes(tmp_path):
    path = tmp_path / "labels.jsonl"
    lines.append_records(path, [label_record(1, 1, 0)])
    cache, calls = LabelCache(path), []

    def count(state):
        calls.append(1)
        return len(state.current)

    assert cache.derived(cache.state(), "n", count) == 1 and cache.derived(cache.state(), "n", count) == 1
    lines.append_records(path, [label_record(2, 1, 0)])
    assert cache.derived(cache.state(), "n", count) == 2 and len(calls) == 2


# --- PostgreSQL -------------------------------------------------------------------------------------

db_steps = st.one_of(
    st.tuples(st.just("append"), st.lists(records, min_size=1, max_size=4)),
    st.tuples(st.just("retract"), records),
    st.tuples(st.just("bad"), st.integers(0, 6)),
    st.tuples(st.just("late"), records),  # a row numbered first, committed after a later one
    st.tuples(st.just("read"), st.just(None)),
)


def late_insert(url: str, stream: str, record: dict, between) -> None:
    """Insert ``record`` in a transaction that takes its seq, lets ``between`` run (another insert,
    a read), then commits: its row has a lower seq than rows committed before it."""
    import psycopg

    with psycopg.connect(url) as conn:  # (not autocommit: one transaction)
        conn.execute(postgres._INSERT, (stream, postgres.event_id(stream, record), json.dumps(record),
                                        record["item"]))
        between()
        conn.commit()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=st.lists(db_steps, max_size=15))
def test_a_database_read_incrementally_equals_a_read_from_the_start(pg_url, plan):
    stream = f"labels-{uuid.uuid4().hex[:8]}"  # (a fresh stream per example, in the test's database)
    cache = EventCache(pg_url, stream, labels.parse_record)
    label_cache = LabelCache(pg_url, EventCache(pg_url, stream, labels.parse_record))
    for kind, arg in plan:
        if kind == "append":
            streams.append(pg_url, stream, arg)
        elif kind == "retract":
            streams.append(pg_url, stream, [retraction_of(arg)])
        elif kind == "bad":
            streams.append(pg_url, stream, [bad_record(arg)])
        elif kind == "late":
            def between():
                streams.append(pg_url, stream, [label_record(9, 9, 1)])
                check(pg_url, stream, cache, label_cache)  # the late row is not there yet

            late_insert(pg_url, stream, arg, between)
        check(pg_url, stream, cache, label_cache)
    check(pg_url, stream, cache, label_cache)


def test_a_row_committed_late_with_a_lower_seq_is_read(pg_url):
    stream = labels.STREAM
    streams.append(pg_url, stream, [label_record(1, 1, 0)])
    cache = EventCache(pg_url, stream, labels.parse_record)
    seen = []

    def between():
        streams.append(pg_url, stream, [label_record(3, 1, 0)])
        seen.append([r.item for r in cache.read().records])

    late_insert(pg_url, stream, label_record(2, 1, 0), between)
    assert seen == [["a-1#s0#c0", "a-3#s0#c0"]]
    assert [r.item for r in cache.read().records] == ["a-1#s0#c0", "a-2#s0#c0", "a-3#s0#c0"]
    assert cache.read().settled == 3  # (nothing running any more: every row is settled)


def test_a_last_line_ended_by_a_lone_cr_is_read_again_as_the_next_append_ends_it(tmp_path):
    path = tmp_path / "labels.jsonl"
    lines.append_records(path, [label_record(1, 1, 0)])
    write_raw(path, b"[1]\r")  # (the next append writes "\n" first: "\r\n" is one line end)
    cache = EventCache(path, labels.STREAM, labels.parse_record)
    assert [e.line for e in cache.read().errors] == [2]
    lines.append_records(path, [label_record(2, 1, 0)])
    lines.append_records(path, [bad_record(3)])
    assert [e.line for e in cache.read().errors] == [2, 4] == [e.line for e in labels.read_events(path)[1]]


# --- the figures the review page makes from the current labels, kept and updated -------------------

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """The sample log in memory and checked into a store (the review page sees either)."""
    import io
    import shutil

    from citecheck.checking.files import check_options
    from citecheck.cli.main import main
    from citecheck.labelling import dataset
    from citecheck.storage.checked.answers import StoreAnswers

    folder = tmp_path_factory.mktemp("figures")
    log, corpus = folder / "answers.jsonl", ROOT / "sample_data" / "corpus"
    shutil.copy(ROOT / "sample_data" / "answers.jsonl", log)
    assert main(["check", str(log), "--corpus", str(corpus), "--store", str(folder / "store")], io.StringIO(),
                io.StringIO()) == 0
    memory = dataset.load([log], check_options(corpus))
    return {"memory": memory, "store": StoreAnswers(folder / "store"),
            "items": [item for aid in memory.answer_ids for item in memory.items(aid)]}


def label_on(item, who: int, kind: int, stale: bool, n: int) -> dict:
    return {"labels_version": 1, "item": item.key, "answer_id": item.answer_id, "sentence": item.sentence,
            "citation": item.citation, "chunk_id": item.chunk_id,
            "fingerprint": "old" if stale else item.fingerprint, "label": item.labels[kind % len(item.labels)],
            "note": "", "reviewer": f"r{who}", "at": f"2026-12-01T08:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
            "citecheck": "t"}


label_steps = st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 3), st.integers(0, 3), st.booleans(),
                                 st.integers(0, 9)), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(label_steps, min_size=1, max_size=6), overlap=st.integers(1, 3))
def test_the_figures_kept_equal_those_made_again(answers, tmp_path_factory, batches, overlap):
    from citecheck.review.queue import labellers
    from citecheck.storage.checked.answers import progress

    path = tmp_path_factory.mktemp("fig") / "labels.jsonl"
    cache, items, n = LabelCache(path), answers["items"], 0
    written: list[dict] = []
    for batch in batches:
        for pick, who, kind, stale, undo in batch:
            n += 1
            record = label_on(items[pick % len(items)], who, kind, stale, n)
            lines.append_records(path, [record])
            written.append(record)
            if undo == 0:  # 1 in 10: the reviewer's last label undone (a retraction: made again)
                lines.append_records(path, [retraction_of(written[-1])])
        state = cache.state()
        current = labels.latest(labels.effective(labels.read_events(path)[0]))
        assert state.current == current and list(state.current) == list(current)
        team = cache.team(state.current)
        assert team == labellers(current) and [list(v) for v in team.values()] == \
               [list(v) for v in labellers(current).values()]
        for reviewer in ("r0", "r1"):
            assert cache.others(state.current, reviewer) == labels.others_by_item(current, reviewer)
            for kind in ("memory", "store"):
                data = answers[kind]
                assert cache.progress(data, state.current, reviewer, overlap) == \
                       progress(data, labellers(current), reviewer, overlap)


def test_a_figure_of_some_kinds_of_events_is_made_again_when_one_is_appended(tmp_path):
    from citecheck.labelling import comments

    path = tmp_path / "labels.jsonl"
    lines.append_records(path, [team_record(0, 1, 1)])  # a comment on a-1#s0#c0
    cache = LabelCache(path)

    def threads(state):
        return cache.derived(state, "threads", lambda s: comments.threads(s.events), (comments.Comment, comments.Resolve))

    assert threads(cache.state())["a-1#s0#c0"].open
    lines.append_records(path, [team_record(2, 1, 1)])  # an open: the threads are kept
    state = cache.state()
    assert threads(state) is threads(state)  # (kept)
    lines.append_records(path, [team_record(1, 1, 2)])  # a resolve: made again
    state = cache.state()
    assert not threads(state)["a-1#s0#c0"].open and threads(state) == comments.threads(labels.read_events(path)[0])
    assert cache.names(state) == comments.known_reviewers(labels.read_events(path)[0]) == ["new1", "r1", "r2"]
