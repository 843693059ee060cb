"""The Failures page's figures are made once and kept while their inputs stay the same
(core/citecheck/web/failures_source.py): a log in memory's with its Dataset, a checked store's under its
manifest's identity; a changed log, store, label or golden set makes them again (and the page
shows it on its next run: tests/test_app_store.py)."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import pytest
from citecheck.checking.files import check_options
from citecheck.cli.main import main
from citecheck.errors import StoreError
from citecheck.labelling import dataset
from citecheck.labelling import labels as label_store
from citecheck.reports.golden import read_golden
from citecheck.storage.checked.folder import META
from citecheck.web import failures_source
from citecheck.web.settings import load_settings
from citecheck.web.stamps import stamp, stamps

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "sample_data" / "answers.jsonl"
CORPUS = ROOT / "sample_data" / "corpus"
GOLDEN = ROOT / "sample_data" / "golden.jsonl"
LINES = LOG.read_text(encoding="utf-8").splitlines(keepends=True)


def write_log(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines), encoding="utf-8")
    return path


def check_into(log: Path, store: Path) -> None:
    assert main(["check", str(log), "--corpus", str(CORPUS), "--store", str(store)], io.StringIO(),
                io.StringIO()) == 0


def not_supported(data, n: int = 3) -> dict:
    """The current labels after a reviewer marks the first ``n`` cited items not supported."""
    cited = [i for i in data.all_items if i.citation is not None][:n]
    return label_store.latest([label_store.make_label(i, "not_supported", "ana") for i in cited])


def human_count(src) -> int | None:
    """How many labelled items are judged not supported by people; None when nothing is labelled."""
    return next((f.count for f in src.report.headline if f.key == "human_not_supported_rate"), None)


def test_a_slot_makes_its_value_again_only_when_the_inputs_differ():
    made = []
    slot = failures_source.Slot()

    def make(tag):
        return lambda: made.append(tag) or object()

    first = slot.get(("a", {"x": 1}, [1]), make(1))
    assert slot.get(("a", {"x": 1}, [1]), make(2)) is first  # equal inputs (not the same objects)
    other = slot.get(("a", {"x": 2}, [1]), make(3))
    assert other is not first and made == [1, 3]
    assert slot.get(("a", {"x": 1}, [1]), make(4)) is not first  # one value kept, not every one seen


def test_a_slot_shared_by_threads_makes_the_value_once():
    slot, made, barrier = failures_source.Slot(), [], threading.Barrier(4)

    def run():
        barrier.wait()
        slot.get("key", lambda: made.append(1) or "value")

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert made == [1]


def test_a_files_stamp_changes_with_its_size_and_time(tmp_path):
    path = write_log(tmp_path / "a.jsonl", LINES[:2])
    before = stamp(path)
    assert before[0] == str(path) and before[2] == path.stat().st_size
    os.utime(path, ns=(before[1] + 10**9, before[1] + 10**9))
    assert stamp(path) != before and stamp(path)[2] == before[2]
    write_log(path, LINES[:3])
    assert stamp(path)[2] > before[2]
    assert stamp(tmp_path / "gone") == (str(tmp_path / "gone"), 0, 0)
    assert stamps([path, tmp_path / "gone"]) == (stamp(path), stamp(tmp_path / "gone"))


def test_a_logs_figures_are_kept_with_its_dataset_until_labels_or_golden_change(tmp_path):
    data = dataset.load([write_log(tmp_path / "answers.jsonl", LINES)], check_options(CORPUS))
    golden, _ = read_golden(GOLDEN)
    first = failures_source.table_source(data, None, {})
    assert failures_source.table_source(data, None, {}) is first and first.answers == len(LINES)
    assert human_count(first) is None

    labels = not_supported(data)
    labelled = failures_source.table_source(data, None, labels)
    assert labelled is not first and human_count(labelled) == 3
    assert failures_source.table_source(data, None, dict(labels)) is labelled  # the same labels, read again

    with_golden = failures_source.table_source(data, golden, labels)
    assert with_golden is not labelled and with_golden.report.retrieval is not None
    assert labelled.report.retrieval is None

    shorter = dataset.load([write_log(tmp_path / "answers.jsonl", LINES[:20])], check_options(CORPUS))
    assert failures_source.table_source(shorter, None, {}).answers == 20  # a changed log is a new Dataset: new figures
    assert failures_source.table_source(data, golden, labels) is with_golden  # each dataset keeps its own


def test_a_stores_figures_are_kept_until_its_manifest_changes(tmp_path):
    store = tmp_path / "store"
    check_into(write_log(tmp_path / "first.jsonl", LINES[:20]), store)
    slot = failures_source.Slot()
    first, warnings = failures_source.store_source(store, None, {}, slot)
    assert first.answers == 20 and warnings == []
    assert failures_source.store_source(store, None, {}, slot)[0] is first

    manifest = store / META
    t = manifest.stat().st_mtime_ns + 10**9
    os.utime(manifest, ns=(t, t))  # rewritten in place: made again, the same figures
    touched = failures_source.store_source(store, None, {}, slot)[0]
    assert touched is not first and touched.answers == 20

    check_into(write_log(tmp_path / "second.jsonl", LINES[20:]), store)  # another log checked in
    grown = failures_source.store_source(store, None, {}, slot)[0]
    assert grown.answers == len(LINES)
    assert failures_source.store_source(store, None, {}, slot)[0] is grown

    data = dataset.load([tmp_path / "first.jsonl", tmp_path / "second.jsonl"], check_options(CORPUS))
    labelled, _ = failures_source.store_source(store, None, not_supported(data), slot)
    assert labelled is not grown and human_count(labelled) == 3

    with pytest.raises(StoreError):
        failures_source.store_source(tmp_path / "nowhere", None, {}, failures_source.Slot())


def test_opening_a_source_gives_its_caption_and_notices_or_the_error(tmp_path):
    log = write_log(tmp_path / "answers.jsonl", LINES[:10] + ["{not json\n"])
    data = dataset.load([log], check_options(CORPUS))
    cfg = load_settings(["--log", str(log), "--corpus", str(CORPUS), "--store", str(tmp_path / "store")], {})
    opened = failures_source.open_log(data, None, {}, cfg, uploaded="mine.jsonl")
    assert opened.source.answers == 10 and opened.notices == [] and opened.unreadable  # the bad line
    assert opened.inputs.text().startswith("from 10 answer(s), 1 unreadable line(s) left out; logs: uploaded: mine.jsonl")

    check_into(write_log(tmp_path / "clean.jsonl", LINES[:10]), tmp_path / "store")
    opened = failures_source.open_store(cfg, None, {}, failures_source.Slot())
    said = opened.inputs.to_dict()
    assert said["answers"] == 10 and said["store"].endswith("store") and said["logs"].endswith("clean.jsonl")
    assert said["golden"] is None and opened.notices == []
    assert not opened.unreadable

    (tmp_path / "clean.jsonl").write_text("".join(LINES[10:20]), encoding="utf-8")  # changed since checked
    changed = failures_source.open_store(cfg, None, not_supported(data), failures_source.Slot())
    assert changed.notices and all(kind == "warning" and "changed since it was checked" in text
                                   for kind, text in changed.notices)

    nowhere = load_settings(["--store", str(tmp_path / "nowhere")], {})
    missing = failures_source.open_store(nowhere, None, {}, failures_source.Slot())
    assert missing.source is None and [kind for kind, _ in missing.notices] == ["error"]
    assert "is not a checked store" in missing.notices[0][1]


def test_the_failing_csv_names_each_answers_file_and_line_on_every_path(tmp_path):
    """The Failures page's download (a log in memory, a checked store) and ``report --format
    failing-csv`` give the same rows, each with the file and line it was read from (#31: the
    page's CSV had an empty file and line 0 on every row)."""
    import csv

    from citecheck.reports import figures

    log = write_log(tmp_path / "answers.jsonl", LINES)
    data = dataset.load([log], check_options(CORPUS))
    page = list(csv.DictReader(io.StringIO(figures.to_csv(failures_source.table_source(data, None, {}).failing(
        figures.Filters())))))
    assert page and all(r["file"] == str(log) and int(r["line"]) >= 1 for r in page)
    assert [(r["answer_id"], int(r["line"])) for r in page] == [
        (r["answer_id"], LINES.index(next(x for x in LINES if f'"{r["answer_id"]}"' in x)) + 1) for r in page]
    check_into(log, tmp_path / "store")
    out, err = io.StringIO(), io.StringIO()
    assert main(["report", "--store", str(tmp_path / "store"), "--format", "failing-csv"], out, err) == 0, err.getvalue()
    from_store = list(csv.DictReader(io.StringIO(out.getvalue())))
    out = io.StringIO()
    assert main(["report", str(log), "--corpus", str(CORPUS), "--format", "failing-csv"], out, err) == 0
    from_log = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert from_log == page
    assert [{k: v for k, v in r.items() if k != "file"} for r in from_store] == [
        {k: v for k, v in r.items() if k != "file"} for r in page]
    assert all(Path(r["file"]).name == "answers.jsonl" for r in from_store)


def test_a_stores_figures_are_made_once_for_every_session_and_its_queries_take_turns(tmp_path):
    """Without a slot of its own, every session of the server gets the same figures (a second
    reviewer's first view costs nothing); sessions asking at once get what one asking alone gets."""
    from concurrent.futures import ThreadPoolExecutor

    from citecheck.reports import figures as report_figures

    store = tmp_path / "store"
    check_into(write_log(tmp_path / "first.jsonl", LINES), store)
    shared, _ = failures_source.store_source(store, None, {})
    assert failures_source.store_source(str(store), None, {})[0] is shared  # (the folder however named)
    alone = [shared.failing(report_figures.Filters()).to_dict("records"), shared.over_time("W").to_dict("records"),
             shared.values("model"), shared.undated()]

    def ask(_):
        return [shared.failing(report_figures.Filters()).to_dict("records"), shared.over_time("W").to_dict("records"),
                shared.values("model"), shared.undated()]

    with ThreadPoolExecutor(4) as pool:
        assert all(got == alone for got in pool.map(ask, range(16)))


def test_an_answer_failing_for_an_uncited_sentence_alone_names_it_in_reasons_on_every_path(tmp_path):
    """The failing table's Reasons cell and Reason filter, from the log and from the store: an
    answer whose only failure is a sentence without a valid citation reads "uncited" (its Reasons
    cell was empty), and choosing "uncited" keeps exactly the answers with such a sentence."""
    import csv
    import json

    from citecheck.reports import failures_view, figures

    first = json.loads(LINES[0])
    first["answer"] = first["answer"].rstrip() + " The policy was written by a committee."
    log = write_log(tmp_path / "answers.jsonl", [json.dumps(first) + "\n"] + LINES[1:])
    data = dataset.load([log], check_options(CORPUS))
    from_log = failures_source.table_source(data, None, {})
    check_into(log, tmp_path / "store")
    from_store, _ = failures_source.store_source(tmp_path / "store", None, {}, failures_source.Slot())
    assert figures.UNCITED in failures_view.choices(lambda column: [], None)[0].options
    for source in (from_log, from_store):
        rows = {r["answer_id"]: r for r in source.failing(figures.Filters()).to_dict("records")}
        assert rows[first["answer_id"]]["reasons"] == "uncited", source
        assert all(r["reasons"] for r in rows.values())  # (every failing answer says why)
        uncited = source.failing(figures.Filters(reason=figures.UNCITED, failing_only=False))
        assert first["answer_id"] in set(uncited["answer_id"])
        assert (uncited["uncited"] > 0).all()
        assert len(uncited) == sum(1 for r in rows.values() if int(r["uncited"]) > 0)
    out, err = io.StringIO(), io.StringIO()
    assert main(["report", "--store", str(tmp_path / "store"), "--format", "failing-csv"], out, err) == 0, err.getvalue()
    assert next(r for r in csv.DictReader(io.StringIO(out.getvalue()))
                if r["answer_id"] == first["answer_id"])["reasons"] == "uncited"
