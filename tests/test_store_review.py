"""The review page on a checked store: one answer read back by offset when shown, and navigation,
filters, the queue and the team's progress from SQL, equal to the same on the log in memory."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
import streamlit as st
from citecheck.checking.files import check_options
from citecheck.cli.main import main
from citecheck.labelling import dataset, labels
from citecheck.review import queue
from citecheck.storage.checked import answers
from citecheck.web import answer_walk
from helpers import open_tab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
LOG = ROOT / "sample_data" / "answers.jsonl"
CORPUS = ROOT / "sample_data" / "corpus"


def check_into(log: Path, store: Path) -> None:
    assert main(["check", str(log), "--corpus", str(CORPUS), "--store", str(store)], io.StringIO(),
                io.StringIO()) == 0


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The sample log in memory and checked into a store."""
    folder = tmp_path_factory.mktemp("store")
    log = folder / "answers.jsonl"
    shutil.copy(LOG, log)
    check_into(log, folder / "store")
    return Both(dataset.load([log], check_options(CORPUS)), answers.StoreAnswers(folder / "store"))


class Both(tuple):
    def __new__(cls, *pair):
        return super().__new__(cls, pair)

    def __repr__(self) -> str:  # (Hypothesis prints the arguments of a failing example)
        return "<the sample log in memory and in a store>"


def label(item, reviewer: str, choice: str | None = None) -> labels.Label:
    return labels.make_label(item, choice or item.labels[0], reviewer)


def test_an_answer_is_read_back_from_its_log_as_it_is_in_memory(both):
    data, store = both
    assert len(store) == len(data)
    for answer in data.answers:
        got = store.get(answer.answer_id)
        assert got == data.get(answer.answer_id)
        assert store.items(answer.answer_id) == data.items(answer.answer_id)
    assert store.get("no such answer") is None and store.items("no such answer") == []
    assert len(store._kept) <= answers.KEPT  # only the last few answers are held
    assert list(store.answer_ids) == data.answer_ids


def test_rows_found_by_id_are_kept_a_few_at_a_time_and_equal_the_index(both, monkeypatch):
    data, _ = both
    store = answers.StoreAnswers(both[1].store.root)  # a fresh instance: nothing kept yet
    monkeypatch.setattr(answers, "ROWS_KEPT", 3)
    ids = data.answer_ids
    for aid in [*ids, *reversed(ids), "no such answer"]:  # asked again after being let go
        want = store.one('SELECT pos, log, line, "offset", line_hash FROM nav WHERE answer_id = ? ORDER BY pos '
                         "LIMIT 1", [aid])
        assert store.row_of(aid) == want == store.row_of(aid) and len(store._rows) <= 3
    assert store.row_of("no such answer") is None
    for aid in ids[:5]:
        assert store.get(aid) == data.get(aid)  # read back through the kept rows
    failed = answers.filtered_ids(store, "With failed citations", {}, "ada")
    want = queue.answer_ids(data, "With failed citations", {}, "ada")
    assert 0 < len(want) < len(ids)
    for _ in range(2):  # the second time from the places kept by the instance
        assert [failed.index(aid) for aid in want] == list(range(len(want)))
        assert [aid for aid in ids if aid in failed] == want


@pytest.mark.parametrize("slice_", [50_000, 7, 1])
def test_item_total_is_every_item_counted_in_sql(both, monkeypatch, slice_):
    data, store = both
    monkeypatch.setattr(answers, "ITEM_SLICE", slice_)  # counted a few answers at a time, as a large store is
    assert store._item_total() == len(data.all_items) > len(data)


@pytest.mark.parametrize("filter_name", list(queue.FILTERS))
def test_filters_from_sql_equal_the_filters_in_memory(both, filter_name):
    data, store = both
    reviewer = "ada"
    current = {}
    for aid in data.answer_ids[:6]:  # three answers labelled through, three only in part
        items = data.items(aid)
        for item in items if aid in data.answer_ids[:3] else items[:1]:
            lab = label(item, reviewer)
            current[(lab.item, reviewer)] = lab
    want = queue.answer_ids(data, filter_name, current, reviewer)
    got = answers.filtered_ids(store, filter_name, current, reviewer)
    assert list(got) == want and len(got) == len(want) and bool(got) == bool(want)
    for n, aid in enumerate(want):
        assert got[n] == aid and aid in got and got.index(aid) == n
    assert got[-1] == want[-1]
    outside = [aid for aid in data.answer_ids if aid not in want]
    for aid in outside[:5]:
        assert aid not in got
        with pytest.raises(ValueError):
            got.index(aid)
    with pytest.raises(IndexError):
        got[len(want)]
    assert list(got.since(len(want) - 2, page=1)) == want[-2:]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=hs.lists(hs.tuples(hs.integers(0, 10_000), hs.sampled_from(["ada", "bo", "cy"]), hs.booleans()),
                      max_size=40),
       overlap=hs.integers(1, 3), after=hs.one_of(hs.none(), hs.integers(0, 10_000)),
       filter_name=hs.sampled_from(list(queue.FILTERS)),
       claims=hs.lists(hs.tuples(hs.integers(0, 10_000), hs.integers(1, 2)), max_size=5))
def test_queue_and_progress_from_the_store_equal_those_in_memory(both, picks, overlap, after, filter_name, claims):
    data, store = both
    every = [(aid, n, item) for aid in data.answer_ids for n, item in enumerate(data.items(aid))]
    current = {}
    for k, who, stale in picks:
        aid, _, item = every[k % len(every)]
        if stale:  # a label given to an older version of the item
            item = item._replace(fingerprint="sha256:" + "0" * 32)
        lab = label(item, who)
        current[(lab.item, who)] = lab
    team = queue.labellers(current)
    ids = queue.answer_ids(data, filter_name, current, "ada")
    store_ids = answers.filtered_ids(store, filter_name, current, "ada")
    at = None if after is None else every[after % len(every)][:2]
    claimed = {every[k % len(every)][2].key: n for k, n in claims}  # others' holds and assignments (review.holds)
    want = queue.next_in_queue([(aid, data.items(aid)) for aid in ids], team, "ada", overlap, at, claimed)
    assert answers.queue_next(store, store_ids, answers.positions_of(store, store_ids), team, "ada", overlap, at,
                              claimed) == want
    assert answers.queue_next(data, ids, answers.positions_of(data, ids), team, "ada", overlap, at, claimed) == want
    where = answers.positions_of(store, store_ids)
    assert {aid: where[aid] for aid in ids} == {aid: ids.index(aid) for aid in ids} and len(where) == len(ids)
    assert answers.progress(store, team, "ada", overlap) == queue.team_progress(data.all_items, team, "ada", overlap)
    # the review walk asks through web.answer_walk, which tells a store from a log without importing
    # the store's module for a log: the same answers either way
    for source in (data, store):
        walk_ids = answer_walk.filtered_ids(source, filter_name, current, "ada")
        assert list(walk_ids) == list(ids)
        assert answer_walk.queue_next(source, walk_ids, answer_walk.positions_of(source, walk_ids), team, "ada",
                                      overlap, at, claimed) == want
        assert answer_walk.progress(source, team, "ada", overlap) == \
            queue.team_progress(data.all_items, team, "ada", overlap)
    assert answer_walk.store_walk(store) is answers and answer_walk.store_walk(data) is None


def test_a_line_changed_since_the_check_is_said_not_shown(tmp_path):
    log = tmp_path / "answers.jsonl"
    shutil.copy(LOG, log)
    check_into(log, tmp_path / "store")
    raw = log.read_bytes()
    lines = raw.splitlines(keepends=True)
    first = dataset.load([log]).answers[0].answer_id
    log.write_bytes(lines[0].replace(b"the", b"teh", 1) + b"".join(lines[1:]))  # same length, other bytes
    store = answers.StoreAnswers(tmp_path / "store")
    assert store.get(first) is None
    (err,) = store.errors
    assert err.file == str(log) and err.line == 1 and "check the log into the store again" in err.message
    assert store.get(dataset.load([log]).answers[1].answer_id) is not None


# --- the page -------------------------------------------------------------------------------------


@pytest.fixture
def app_store(tmp_path, monkeypatch):
    """The app on a store of the sample log; loading the log into memory is an error."""
    st.cache_resource.clear()
    st.cache_data.clear()
    log = tmp_path / "answers.jsonl"
    shutil.copy(LOG, log)
    check_into(log, tmp_path / "store")
    for name, value in {"CITECHECK_LOGS": log, "CITECHECK_CORPUS": CORPUS, "CITECHECK_STORE": tmp_path / "store",
                        "CITECHECK_LABELS": tmp_path / "labels.jsonl",
                        "CITECHECK_VERDICTS": tmp_path / "verdicts.jsonl"}.items():
        monkeypatch.setenv(name, str(value))

    def never(*args, **kwargs):
        raise AssertionError("the review page loaded every answer into memory in store mode")

    memory = dataset.load([log], check_options(CORPUS))
    monkeypatch.setattr(dataset, "load", never)
    yield tmp_path / "store", memory
    st.cache_resource.clear()


def heading(at) -> str:
    body = "\n".join(str(h.proto.body) for h in at.get("html"))
    return re.sub(r"<[^>]+>", "", re.search(r"<h3>(Answer .*?)</h3>", body).group(1))  # (the id in its <bdi>)


def button(at, label: str):
    return next(b for b in at.button if b.label == label)


def test_review_page_on_a_store_opens_a_failing_answer_and_steps(app_store):
    store, memory = app_store
    at = AppTest.from_file(APP, default_timeout=60).run()
    open_tab(at.switch_page("pages/failures.py").run(), "Failing answers")
    assert not at.exception, [e.value for e in at.exception]
    table = next(d for d in at.dataframe if "reasons" in d.value.columns).value
    pick = table.iloc[2]["answer_id"]
    at.session_state["failing_table"] = {"selection": {"rows": [2], "columns": [], "cells": []}}
    at.run()  # one tick opens the answer
    assert not at.exception, [e.value for e in at.exception]
    n = memory.answer_ids.index(pick)
    assert at.query_params["answer"] == pick
    assert heading(at) == f"Answer {pick} ({n + 1} of {len(memory)})"
    body = "\n".join(str(h.proto.body) for h in at.get("html"))
    assert memory.get(pick).sentences[0].text[:20].replace("'", "&#x27;") in body
    at = AppTest.from_file(APP, default_timeout=60)  # (AppTest does not follow st.switch_page on a later run)
    at.query_params["answer"] = pick  # a link to the answer
    at.run()
    assert heading(at) == f"Answer {pick} ({n + 1} of {len(memory)})"
    button(at, "Next").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert heading(at) == f"Answer {memory.answer_ids[n + 1]} ({n + 2} of {len(memory)})"
    button(at, "Previous").click().run()
    button(at, "Previous").click().run()
    assert heading(at) == f"Answer {memory.answer_ids[n - 1]} ({n} of {len(memory)})"
    at.sidebar.radio[0].set_value("With failed citations").run()
    failed = [r.answer.answer_id for r in memory.results if r.failed_citations]
    assert not at.exception
    here = memory.answer_ids[n - 1]
    where = f"({failed.index(here) + 1} of {len(failed)})" if here in failed else "(outside the filter)"
    assert heading(at) == f"Answer {here} {where}"
    button(at, "Next").click().run()
    after = failed[failed.index(here) + 1] if here in failed else failed[0]  # outside: Next goes to the first
    assert heading(at) == f"Answer {after} ({failed.index(after) + 1} of {len(failed)})"


def test_review_page_on_a_store_labels_and_moves_on(app_store):
    store, memory = app_store
    first = memory.answer_ids[0]
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["answer"] = first
    at.query_params["reviewer"] = "ada"
    at.run().switch_page("pages/review.py").run()
    assert not at.exception, [e.value for e in at.exception]
    items = memory.items(first)
    for _ in items:
        next(b for b in at.button if b.key and b.key.startswith("key-")).click().run()
    assert not at.exception, [e.value for e in at.exception]
    saved = labels.latest(labels.read(store.parent / "labels.jsonl")[0])
    assert {k for k, _ in saved} == {i.key for i in items}
    assert heading(at).startswith(f"Answer {memory.answer_ids[1]} ")  # the queue moved on to the next answer
    body = "\n".join(str(h.proto.body) for h in at.get("html"))
    assert f"ada: labelled {len(items):,} of {len(memory.all_items):,} items overall" in body



@pytest.mark.parametrize("refused_first", [False, True])
def test_filters_from_sql_equal_those_in_memory_when_an_id_is_logged_twice(tmp_path, refused_first):
    """A refused answer (no item to label) logged under another answer's id hid that answer from
    "Not yet labelled by me" on a log, not on a store of it (a differential fuzz of page and CLI)."""
    lines = LOG.read_text(encoding="utf-8").splitlines()
    refused = next(line for line in lines if '"refused": true' in line)
    first_id = re.search(r'"answer_id": "([^"]+)"', lines[0]).group(1)
    twin = re.sub(r'"answer_id": "[^"]+"', f'"answer_id": "{first_id}"', refused, count=1)
    chosen = ([twin, lines[0]] if refused_first else [lines[0], twin]) + lines[1:6]
    log = tmp_path / "answers.jsonl"
    log.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    check_into(log, tmp_path / "store")
    data, store = dataset.load([log], check_options(CORPUS)), answers.StoreAnswers(tmp_path / "store")
    reviewer = "ada"
    done = {}
    for item in data.items(data.answer_ids[-1]):  # (one answer labelled through)
        lab = label(item, reviewer)
        done[(lab.item, reviewer)] = lab
    for current in ({}, done):
        for filter_name in queue.FILTERS:
            want = queue.answer_ids(data, filter_name, current, reviewer)
            assert list(answers.filtered_ids(store, filter_name, current, reviewer)) == want, filter_name
    unlabelled = queue.answer_ids(data, "Not yet labelled by me", {}, reviewer)
    assert unlabelled.count(first_id) == 1 and data.answer_ids.count(first_id) == 2
