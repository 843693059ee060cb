import json
import multiprocessing
from dataclasses import asdict

import pytest
from citecheck.checking.files import check_options
from citecheck.labelling import dataset, labels
from citecheck.labelling.items import items_of
from citecheck.review.queue import answer_ids, first_unlabelled
from citecheck.storage import streams as event_store
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG


@pytest.fixture(scope="module")
def data():
    return dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))


def raw(target) -> list[dict]:
    """The stored records as written, from the file or the database."""
    return event_store.read_all(target, labels.STREAM, lambda value: value)[0]


def test_items_cover_citations_and_uncited_sentences(data):
    items = items_of(data.get("a-035"))  # sick leave: one cited, one invalid marker, one uncited
    assert [(i.sentence, i.citation is None) for i in items] == [(0, False), (1, True), (2, True)]
    assert items[0].labels == ("supported", "partial", "not_supported", "cant_tell")
    assert items[1].labels == ("needs_citation", "no_claim")
    assert len({i.key for i in items}) == len(items)
    assert items_of(data.get("a-046")) == []  # a refusal has nothing to label


def test_append_read_latest_and_progress(store, data):
    path = store
    items = items_of(data.get("a-001"))
    labels.append(path, labels.make_label(items[0], "partial", "ana"))
    labels.append(path, labels.make_label(items[0], "supported", "ana", note="changed my mind"))
    labels.append(path, labels.make_label(items[0], "not_supported", "ben"))
    records, warnings = labels.read(path)
    assert warnings == [] and len(records) == 3
    current = labels.latest(records)
    assert current[(items[0].key, "ana")].label == "supported"
    assert current[(items[0].key, "ana")].note == "changed my mind"
    assert labels.progress(items, current, "ana") == labels.Progress(1, len(items), 0)
    line = raw(path)[0]
    assert line["labels_version"] == 1 and line["citecheck"] and line["at"].endswith("Z")


def test_reviewer_and_label_are_validated(data):
    item = items_of(data.get("a-001"))[0]
    with pytest.raises(labels.LabelError, match="reviewer name is required"):
        labels.make_label(item, "supported", "  ")
    with pytest.raises(labels.LabelError, match="not a label for this item"):
        labels.make_label(item, "needs_citation", "ana")


def test_torn_last_line_is_skipped_and_next_record_starts_fresh(tmp_path, data):
    path = tmp_path / "labels.jsonl"
    items = items_of(data.get("a-001"))
    labels.append(path, labels.make_label(items[0], "supported", "ana"))
    whole = path.read_bytes()
    with open(path, "ab") as f:
        f.write(whole[: len(whole) // 2])  # a crash half-way through a write
    records, warnings = labels.read(path)
    assert len(records) == 1 and [(w.file, w.line, w.field) for w in warnings] == [(str(path), 2, "(json)")]
    assert "probably a crash while writing" in warnings[0].message
    labels.append(path, labels.make_label(items[1], "partial", "ana"))
    records, warnings = labels.read(path)
    assert [r.label for r in records] == ["supported", "partial"]
    assert [w.line for w in warnings] == [2] and "crash" not in warnings[0].message


def test_bad_line_in_the_middle_is_skipped(tmp_path, data):
    path = tmp_path / "labels.jsonl"
    items = items_of(data.get("a-001"))
    labels.append(path, labels.make_label(items[0], "supported", "ana"))
    with open(path, "a") as f:
        f.write('{"labels_version": 99}\nnot json\n')
    labels.append(path, labels.make_label(items[1], "partial", "ana"))
    records, warnings = labels.read(path)
    assert [r.label for r in records] == ["supported", "partial"]
    assert [(w.line, w.field) for w in warnings] == [(2, "labels_version"), (3, "(json)")]


def test_unreadable_records_are_skipped_with_their_position(store, data):
    items = items_of(data.get("a-001"))
    labels.append(store, labels.make_label(items[0], "supported", "ana"))
    event_store.append(store, labels.STREAM, [{"labels_version": 99}, {**asdict(labels.make_label(items[1], "partial", "ana")),
                                                                  "label": "maybe"}])
    labels.append(store, labels.make_label(items[1], "partial", "ana"))
    records, warnings = labels.read(store)
    assert [r.label for r in records] == ["supported", "partial"]
    assert [(w.line, w.field) for w in warnings] == [(2, "labels_version"), (3, "label")]
    assert all(w.file.startswith(event_store.describe(store)) for w in warnings)


def _writer(path, worker, count, item):
    for n in range(count):
        labels.append(path, labels.make_label(item, "supported", f"w{worker}", note=f"{n:05d}" + "x" * 2000))


def test_concurrent_writers_lose_nothing(store, data):
    path = store
    item = items_of(data.get("a-001"))[0]
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(path, w, 400, item)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    records, warnings = labels.read(path)
    assert warnings == [] and len(records) == 1600
    for w in range(4):
        assert [r.note[:5] for r in records if r.reviewer == f"w{w}"] == [f"{n:05d}" for n in range(400)]


def test_stale_labels_do_not_count(store, data):
    path = store
    item = items_of(data.get("a-001"))[0]
    old = item._replace(fingerprint="sha256:" + "0" * 32)
    labels.append(path, labels.make_label(old, "supported", "ana"))
    current = labels.latest(labels.read(path)[0])
    assert not labels.is_done(item, current, "ana")
    assert labels.progress([item], current, "ana") == labels.Progress(0, 1, 1)


def test_filters_and_resume(store, data):
    assert len(answer_ids(data, "All answers", {}, "ana")) == 48
    failed = answer_ids(data, "With failed citations", {}, "ana")
    assert "a-033" in failed and "a-001" not in failed
    assert answer_ids(data, "Refused", {}, "ana") == ["a-046", "a-047", "a-048"]
    path = store
    for item in items_of(data.get("a-001")):
        labels.append(path, labels.make_label(item, "supported", "ana"))
    labels.append(path, labels.make_label(items_of(data.get("a-002"))[0], "supported", "ana"))
    current = labels.latest(labels.read(path)[0])
    assert first_unlabelled(data, current, "ana") == ("a-003", 0)
    assert first_unlabelled(data, current, "ben") == ("a-001", 0)
    assert "a-001" not in answer_ids(data, "Not yet labelled by me", current, "ana")
    written, errors = labels.read(path)
    assert errors == [] and [r.answer_id for r in written].count("a-002") == 1
    assert {r.answer_id for r in written} == {"a-001", "a-002"} and {r.reviewer for r in written} == {"ana"}


def test_labels_export_jsonl_and_csv(store, data):
    import csv
    import io

    from citecheck.cli.main import main

    path = store
    items = items_of(data.get("a-033"))
    labels.append(path, labels.make_label(items[0], "supported", "ana"))
    labels.append(path, labels.make_label(items[1], "not_supported", "ana", note="cash is invented"))
    labels.append(path, labels.make_label(items[1], "partial", "ben"))
    out, err = io.StringIO(), io.StringIO()
    assert main(["labels", "export", str(path), "--log", str(DEFAULT_LOG), "--corpus", str(DEFAULT_CORPUS)], out, err) == 0
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["item"] for r in rows] == [items[0].key, items[1].key]
    second = rows[1]
    assert second["mechanical_status"] == "failed" and second["reasons"] == ["quote_not_found"]
    assert second["quote"] == "we issue refunds in cash" and "5-7 business days" in second["chunk_text"]
    assert second["labels"]["ana"] == {"label": "not_supported", "note": "cash is invented",
                                       "at": second["labels"]["ana"]["at"], "stale": False}
    assert second["labels"]["ben"]["label"] == "partial"
    out = io.StringIO()
    main(["labels", "export", str(path), "--log", str(DEFAULT_LOG), "--format", "csv"], out, err)
    table = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["label:ana"] for r in table] == ["supported", "not_supported"]
    assert [r["label:ben"] for r in table] == ["", "partial"]
    assert table[1]["note:ana"] == "cash is invented" and table[0]["checksum"].startswith("sha256:")
