"""The checked store: `citecheck check --store` writes Parquet, `citecheck report --store` reads it
with DuckDB, and every figure equals the in-memory report's on the same logs."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import xxhash
from citecheck.checking.checker import CheckOptions
from citecheck.checking.files import check_files
from citecheck.cli.main import main
from citecheck.contract import reasons
from citecheck.contract.corpus import Corpus
from citecheck.errors import CheckedStoreError as StoreError
from citecheck.errors import RecordError
from citecheck.labelling import labels
from citecheck.labelling.items import items_of
from citecheck.reports import figures
from citecheck.storage.checked import schema
from citecheck.storage.checked.folder import Store, source_id
from citecheck.storage.checked.query import StoreQuery
from helpers import figures_only
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"
LOG = SAMPLE / "answers.jsonl"
CORPUS = SAMPLE / "corpus"
GOLDEN = SAMPLE / "golden.jsonl"
MODELS = ("claude-sonnet-4-5", "claude-haiku-4-5", None, "claude-opus-4-1")


def run(*argv):
    """The command's exit code, its output's figures (its inputs statement left out: the store path
    rightly names the store) and its standard error."""
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, figures_only(out.getvalue()), err.getvalue()


def generated_log(path: Path, n: int = 400, seed: int = 7) -> Path:
    """A log made of the sample's answers (every reason code among them) under new ids, models,
    prompt versions and timestamps (some missing or unreadable), some scored by the faithfulness
    gate, with unreadable lines (bad JSON, a missing field, bytes that are not UTF-8) and blank lines."""
    rng = random.Random(seed)
    sample = [json.loads(line) for line in LOG.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines: list[bytes] = []
    for i in range(n):
        obj = dict(sample[i % len(sample)])
        obj["answer_id"] = f"g-{i}"
        model = MODELS[rng.randrange(len(MODELS))]
        obj.pop("model", None)
        if model:
            obj["model"] = model
        obj["prompt_version"] = rng.choice(("answer.v1", "answer.v2", "answer.v3"))
        stamp = rng.random()
        if stamp < 0.05:
            obj.pop("timestamp", None)
        elif stamp < 0.08:
            obj["timestamp"] = "last tuesday"
        else:
            obj["timestamp"] = f"2026-{rng.randint(9, 11):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z"
        if rng.random() < 0.3:
            score = rng.choice((0.0, 0.45, 0.5, 0.7, 0.79, 0.8, 0.9, 1.0, 0.333))
            obj["faithfulness"] = {"score": score, "withheld": score < 0.7, "threshold": 0.7}
        lines.append(json.dumps(obj, ensure_ascii=False).encode("utf-8"))
        if i % 97 == 5:
            lines.append(b'{"log_version": 1, "answer_id": "torn", ')
        if i % 131 == 7:
            lines.append(json.dumps({"log_version": 1, "answer_id": f"nq-{i}", "answer": "x", "chunks": []}).encode())
        if i % 151 == 3:
            lines.append(b'{"log_version": 1, "answer_id": "\xff\xfe"}')
        if i % 53 == 0:
            lines.append(b"   ")
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gen")
    return generated_log(folder / "generated.jsonl"), generated_log(folder / "second.jsonl", 150, seed=8)


def test_sample_report_from_the_store_equals_the_report_from_the_log(tmp_path):
    store = tmp_path / "store"
    code, out, err = run("check", LOG, "--corpus", CORPUS, "--store", store)
    assert code == 0, err
    assert "48 line(s), 48 checked, 0 unchanged" in out
    for fmt in ("json", "text", "csv"):
        want = run("report", LOG, "--corpus", CORPUS, "--golden", GOLDEN, "--format", fmt)
        got = run("report", "--store", store, "--golden", GOLDEN, "--format", fmt)
        assert got == want, fmt


@pytest.mark.parametrize("other", ["2026-11-03T10:00:00.1234567Z", "2026-11-03T10:00:00Z"])
def test_an_answer_is_dated_or_not_whatever_the_other_answers_timestamps_are(tmp_path, other):
    """Go's zero time, a year past 2262 and a nanosecond stamp, in logs of their own and in one: the
    year-1 and year-2300 answers are undated by the report in memory and by the store alike (pandas
    3 read year 1 alone, but not beside a nanosecond stamp, which the store parses in other
    company), and the report of both logs is the same from the log and from the store."""
    def log(name: str, aid: str, stamp: str) -> Path:
        path = tmp_path / name
        path.write_text(json.dumps({"log_version": 1, "answer_id": aid, "question": "q", "answer": "Plain.",
                                    "chunks": [], "timestamp": stamp}) + "\n", encoding="utf-8")
        return path

    zero, later, now = log("a.jsonl", "t1", "0001-01-01T00:00:00Z"), log("c.jsonl", "t3", "2300-01-01T00:00:00Z"), \
        log("b.jsonl", "t2", other)
    for n, logs in enumerate(([zero], [later], [zero, later, now])):
        store = tmp_path / f"store-{n}"
        assert run("check", *logs, "--store", store)[0] == 0
        want = run("report", *logs, "--format", "json")
        assert figures_only(run("report", "--store", store, "--format", "json")[1]) == figures_only(want[1])
        by_week = json.loads(want[1])["by_week"]
        assert [row["period"][:4] for row in by_week] == (["2026"] if now in logs else [])


def test_a_log_named_twice_is_read_once_by_check_report_the_store_and_the_app(tmp_path, monkeypatch):
    """``check LOG ./LOG`` counted every answer twice and the store once; now each reader keeps a
    log's first mention (by the store's identity of a log, its absolute path) and says so."""
    from citecheck.web.settings import load_settings

    monkeypatch.chdir(Path(LOG).parent.parent)
    again = "./" + str(Path(LOG).relative_to(Path.cwd()))
    store = tmp_path / "store"
    code, out, err = run("check", LOG, again, "--corpus", CORPUS, "--store", store)
    assert code == 0 and "names a log given already: it is read once" in err
    for fmt in ("json", "text"):
        once = run("report", LOG, "--corpus", CORPUS, "--format", fmt)[1]
        assert figures_only(run("report", LOG, again, "--corpus", CORPUS, "--format", fmt)[1]) == figures_only(once)
        assert figures_only(run("report", "--store", store, "--format", fmt)[1]) == figures_only(once)
    plain = run("check", LOG, "--corpus", CORPUS, "--format", "json")[1]
    assert figures_only(run("check", LOG, again, LOG, "--corpus", CORPUS, "--format", "json")[1]) == figures_only(plain)
    assert len(load_settings(["--log", str(LOG), "--log", again], {}).logs) == 1


def test_generated_log_every_reason_code_equal_figures(tmp_path, generated):
    first, second = generated
    store = tmp_path / "store"
    code, _, err = run("check", first, second, "--corpus", CORPUS, "--store", store)
    assert code == 4 and "unreadable" in err  # the bad lines are reported, the rest stored
    want = json.loads(run("report", first, second, "--corpus", CORPUS, "--golden", GOLDEN, "--format", "json")[1])
    assert all(r["count"] > 0 for r in want["reasons"]), "the generated log must hold every reason code"
    assert want["unreadable_lines"] >= 4 and want["faithfulness_scores"] is not None
    assert {m["model"] for m in want["by_model"]} == {m or figures.NONE for m in MODELS}
    for fmt in ("json", "text", "csv"):
        assert run("report", "--store", store, "--golden", GOLDEN, "--format", fmt) == \
            run("report", first, second, "--corpus", CORPUS, "--golden", GOLDEN, "--format", fmt), fmt
    # one log of the two, named
    assert run("report", "--store", store, second, "--format", "json") == \
        run("report", second, "--corpus", CORPUS, "--format", "json")


def test_check_summary_and_errors_from_the_store_equal_the_check(tmp_path, generated):
    first, _ = generated
    plain = run("check", first, "--corpus", CORPUS, "--format", "json", "--max-failure-rate", "0.01")
    stored = run("check", first, "--corpus", CORPUS, "--format", "json", "--max-failure-rate", "0.01",
                 "--store", tmp_path / "s")
    assert stored[0] == plain[0] == 5  # the gate and the unreadable lines
    assert stored[2] == plain[2]  # every unreadable line said exactly as the check says it
    want = [r for r in map(json.loads, plain[1].splitlines()) if r["record"] != "answer"]
    assert [json.loads(line) for line in stored[1].splitlines()] == want


def test_labels_count_from_the_store_as_from_the_log(tmp_path, generated):
    first, _ = generated
    options = CheckOptions(corpus=Corpus(CORPUS))
    path = tmp_path / "labels.jsonl"
    picked = 0
    for _, _, result in check_files([first], options):
        if isinstance(result, figures.AnswerResult) and result.citations and picked < 30:
            items = [it for it in items_of(result) if it.citation is not None]
            labels.append(path, labels.make_label(items[0], "not_supported" if picked % 2 else "supported", "ana"))
            picked += 1
    store = tmp_path / "store"
    run("check", first, "--corpus", CORPUS, "--store", store)
    want = run("report", first, "--corpus", CORPUS, "--labels", path, "--format", "json")
    got = run("report", "--store", store, "--labels", path, "--format", "json")
    assert got == want
    assert "human_not_supported_rate" in got[1]


FILTERS = [
    figures.Filters(),
    figures.Filters(failing_only=False),
    figures.Filters(reason=reasons.NUMBER_NOT_IN_SOURCE),
    figures.Filters(model="claude-haiku-4-5", prompt_version="answer.v2"),
    figures.Filters(start="2026-10-01", end="2026-10-15", failing_only=False),
    figures.Filters(refused=True, failing_only=False),
    figures.Filters(model=figures.NONE, reason=reasons.SOURCE_CHANGED),
]


@pytest.mark.parametrize("filters", FILTERS)
def test_failing_table_from_the_store_equals_the_pandas_table(tmp_path, generated, filters):
    first, second = generated
    store = Store(tmp_path / "s", create=True)
    options = CheckOptions(corpus=Corpus(CORPUS))
    for log in (first, second):
        store.check_log(str(log), options)
    table = figures.answer_table((f, n, r) for f, n, r in check_files([str(first), str(second)], options)
                           if isinstance(r, figures.AnswerResult))
    want = figures.failing(table, filters)[list(figures.TABLE_COLUMNS)].reset_index(drop=True)
    got = StoreQuery(store).failing(filters)[list(figures.TABLE_COLUMNS)]
    assert len(want) and got.to_dict("records") == want.to_dict("records")


def _rows(store: Store, table: str) -> list[dict]:
    files = store.files(table)
    rows = pq.read_table(files).to_pylist() if files else []
    return sorted(rows, key=lambda r: (r["source"], r["offset"], r.get("index") or 0))


def test_checking_again_checks_only_changed_lines(tmp_path, generated):
    first, _ = generated
    log = tmp_path / "log.jsonl"
    lines = first.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:200]))
    store = Store(tmp_path / "s", create=True)
    options = CheckOptions(corpus=Corpus(CORPUS))
    first_run = store.check_log(str(log), options)
    assert first_run.kept == 0 and first_run.checked == first_run.lines
    again = store.check_log(str(log), options)
    assert again.checked == 0 and again.appended
    # the log grows: only the new lines are checked, and the old part stays as it was
    log.write_bytes(b"".join(lines[:260]))
    old_parts = list(store.log(source_id(str(log)))["parts"])
    grown = store.check_log(str(log), options)
    assert grown.appended and grown.kept == first_run.lines and grown.checked == grown.lines - first_run.lines
    assert store.log(source_id(str(log)))["parts"][:len(old_parts)] == old_parts
    # one line edited, one deleted: those are checked, the others keep their rows (moved)
    edited = lines[:260]
    edited[10] = edited[10].replace(b'"answer_id": "g-', b'"answer_id": "edited-')
    del edited[50]
    log.write_bytes(b"".join(edited))
    changed = store.check_log(str(log), options)
    assert changed.checked == 1 and not changed.appended
    fresh = Store(tmp_path / "fresh", create=True)
    fresh.check_log(str(log), options)
    for table in schema.TABLES:
        assert _rows(store, table) == _rows(fresh, table), table
    assert StoreQuery(store).summary() == StoreQuery(fresh).summary()


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.sampled_from(["delete", "duplicate", "edit", "blank", "swap"]),
                                st.integers(0, 59)), max_size=6))
def test_any_edit_gives_the_store_a_fresh_check_gives(tmp_path_factory, generated, edits):
    first, _ = generated
    folder = tmp_path_factory.mktemp("edit")
    lines = first.read_bytes().splitlines(keepends=True)[:60]
    log = folder / "log.jsonl"
    log.write_bytes(b"".join(lines))
    options = CheckOptions()
    store = Store(folder / "s", create=True)
    store.check_log(str(log), options)
    for what, i in edits:
        i %= max(len(lines), 1)
        if not lines:
            break
        if what == "delete":
            del lines[i]
        elif what == "duplicate":
            lines.insert(i, lines[i])
        elif what == "edit":
            lines[i] = lines[i].replace(b"the", b"THE", 1)
        elif what == "blank":
            lines.insert(i, b"\n")
        else:
            lines[i], lines[-1] = lines[-1], lines[i]
    log.write_bytes(b"".join(lines))
    store.check_log(str(log), options)
    fresh = Store(folder / "fresh", create=True)
    fresh.check_log(str(log), options)
    for table in schema.TABLES:
        assert _rows(store, table) == _rows(fresh, table), table


def test_changed_options_check_every_line_again(tmp_path):
    store = Store(tmp_path / "s", create=True)
    store.check_log(str(LOG), CheckOptions())
    run_ = store.check_log(str(LOG), CheckOptions(corpus=Corpus(CORPUS)))
    assert run_.kept == 0 and run_.checked == 48
    assert StoreQuery(store).summary().reasons[reasons.SOURCE_CHANGED] == 3


def test_a_check_that_crashes_leaves_the_store_as_it_was(tmp_path, generated):
    first, _ = generated
    store = Store(tmp_path / "s", create=True)
    store.check_log(str(LOG), CheckOptions())
    before = StoreQuery(store).summary()

    class Crash(Exception):
        pass

    def crashing(batches):
        for i, b in enumerate(batches):
            if i:
                raise Crash
            yield b

    real = store.write_part
    store.write_part = lambda source, batches: real(source, crashing(batches))
    with pytest.raises(Crash):
        store.check_log(str(first), CheckOptions(), rows=50)
    reopened = Store(tmp_path / "s")
    assert [e["file"] for e in reopened.logs] == [str(LOG)]
    assert StoreQuery(reopened).summary() == before


def test_store_errors_say_what_to_do(tmp_path):
    with pytest.raises(StoreError, match="citecheck check LOG... --store DIR"):
        Store(tmp_path / "none")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    code, _, err = run("check", LOG, "--store", tmp_path / "full")
    assert code == 2 and "not empty" in err
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "store.json").write_text('{"store_version": 99}')
    code, _, err = run("report", "--store", tmp_path / "old")
    assert code == 2 and "version 99" in err
    run("check", LOG, "--store", tmp_path / "s")
    code, _, err = run("report", "--store", tmp_path / "s", SAMPLE / "golden.jsonl")
    assert code == 2 and "is not in the store" in err
    code, _, err = run("report", "--store", tmp_path / "s", "--corpus", CORPUS)
    assert code == 2 and "when checking into the store" in err
    code, _, err = run("report")
    assert code == 2 and "--store" in err


def test_one_answer_is_read_back_from_its_log_by_offset(tmp_path, generated):
    first, _ = generated
    log = tmp_path / "log.jsonl"
    log.write_bytes(first.read_bytes())
    options = CheckOptions(corpus=Corpus(CORPUS))
    store = Store(tmp_path / "s", create=True)
    store.check_log(str(log), options)
    query = StoreQuery(store)
    want = {r.answer.answer_id: r for _, _, r in check_files([str(log)], options) if not isinstance(r, RecordError)}
    for answer_id in ("g-0", "g-17", "g-399"):
        assert query.result(answer_id) == want[answer_id]
    assert query.result("no-such-answer") is None
    data = log.read_bytes()
    at = data.index(b'"answer_id": "g-17"')
    log.write_bytes(data[:at] + data[at:].replace(b"g-17", b"g-71", 1))
    with pytest.raises(StoreError, match="check the log into the store again"):
        query.result("g-17")


def test_two_checks_into_one_store_both_land(tmp_path, generated):
    """Two checks that opened one store before either wrote: under the lock each reads store.json
    again, so the second keeps the first's log instead of writing its stale record over it."""
    first, second = generated
    a, b = Store(tmp_path / "s", create=True), Store(tmp_path / "s", create=True)
    with a.locked():
        a.check_log(str(first), CheckOptions())
    with b.locked():
        b.check_log(str(second), CheckOptions())
    assert [e["file"] for e in Store(tmp_path / "s").logs] == [str(first), str(second)]
    assert len({p for e in Store(tmp_path / "s").logs for p in e["parts"]}) == 2  # no part name used twice


def test_a_store_written_before_a_reason_code_existed_reads_it_as_zero(tmp_path):
    """A part without a later reason code's column (as an older citecheck wrote it): the figures read
    the code as 0, and checking the log again re-checks every line (the reason codes are an option)."""
    import pyarrow.compute as pc

    store = Store(tmp_path / "s", create=True)
    store.check_log(str(LOG), CheckOptions())
    newest = reasons.ALL_REASONS[-1]
    (path,) = store.files("answers")
    t = pq.read_table(path)
    before = int(pc.sum(t.column(newest)).as_py() or 0)
    pq.write_table(t.drop_columns([newest]), path)
    entry = store.log(source_id(str(LOG)))
    entry["options"]["reasons"] = list(reasons.ALL_REASONS[:-1])
    store.commit(entry["source"], entry["file"], entry["options"], entry["parts"], {})
    summary = StoreQuery(Store(tmp_path / "s")).summary()
    assert summary.reasons[newest] == 0 and summary.answers == 48
    assert StoreQuery(Store(tmp_path / "s")).overview().headline
    again = Store(tmp_path / "s").check_log(str(LOG), CheckOptions())
    assert again.kept == 0 and again.checked == 48
    assert StoreQuery(Store(tmp_path / "s")).summary().reasons[newest] == before


from hypothesis import given  # noqa: E402
from hypothesis import strategies as hs  # noqa: E402


@given(hs.binary(max_size=200), hs.sampled_from([b"", b"\n", b"\n\n", b"\r\n", b"\r", b"\n\r\n"]))
def test_a_lines_length_and_hash_are_those_of_its_bytes_without_the_newline(body, end):
    import hashlib

    import xxhash
    from citecheck.storage.checked.batch import _measured, line_hash

    raw = body + end
    kept = raw.rstrip(b"\n")
    # (the hash of each store version, as docs/store-format.md names it)
    assert _measured(raw, 1) == (len(kept), line_hash(raw, 1)) == (len(kept), hashlib.blake2b(kept, digest_size=16).digest())
    assert _measured(raw, 2) == (len(kept), line_hash(raw, 2)) == (len(kept), xxhash.xxh3_128(kept).digest())


# --- store format versions: version 1 (blake2b line hashes) is read and checked into as it is ------

V1_STORE = ROOT / "tests" / "fixtures" / "store-v1"  # written by citecheck 0.2.0 from the sample log at ../logs/answers.jsonl


def _v1_copy(tmp_path: Path) -> Path:
    """The version 1 store beside a copy of its log, where its ``relative`` path finds it (the
    absolute path it was written at is gone)."""
    import shutil

    shutil.copytree(V1_STORE, tmp_path / "store")
    (tmp_path / "logs").mkdir()
    shutil.copy(LOG, tmp_path / "logs" / "answers.jsonl")
    return tmp_path / "store"


def test_a_version_1_store_reads_back_every_answer_and_reports_as_a_new_store_does(tmp_path):
    import hashlib

    from citecheck.storage.checked.answers import StoreAnswers

    old = _v1_copy(tmp_path)
    assert Store(old).version == 1
    new = tmp_path / "new"
    run("check", tmp_path / "logs" / "answers.jsonl", "--store", new)
    assert Store(new).version == schema.STORE_VERSION == 2
    # its line hashes are blake2b-128's, a new store's xxh3-128's: each answer's line read back by
    # offset is recognised as the one checked (a wrong hash says "changed since it was checked")
    lines = [raw for raw in LOG.read_bytes().splitlines() if raw.strip()]
    for root, digest in ((old, lambda b: hashlib.blake2b(b, digest_size=16).digest()),
                         (new, lambda b: xxhash.xxh3_128(b).digest())):
        (part,) = (root / "answers").glob("log-*/part-*.parquet")
        assert pq.read_table(part).column("line_hash").to_pylist() == [digest(raw) for raw in lines]
    old_answers, new_answers = StoreAnswers(old), StoreAnswers(new)
    ids = list(new_answers.answer_ids)
    assert list(old_answers.answer_ids) == ids and len(ids) == len(lines)
    for answer_id in ids:
        assert old_answers.get(answer_id) == new_answers.get(answer_id) is not None
        assert old_answers.items(answer_id) == new_answers.items(answer_id)
        assert StoreQuery(Store(old)).result(answer_id) is not None
    assert [figures_only(run("report", "--store", root)[1]) for root in (old, new)] == \
        [figures_only(run("report", "--store", new)[1])] * 2
    code, out, _ = run("store", "verify", old)
    assert code == 0 and "damaged" not in out and "changed" not in out, out


def test_a_check_into_a_version_1_store_keeps_its_version_and_its_unchanged_lines(tmp_path):
    import hashlib

    log = tmp_path / "answers.jsonl"
    log.write_bytes(LOG.read_bytes())
    store = Store(tmp_path / "s", create=True)
    store.meta["store_version"] = 1  # (as citecheck 0.2 made it: it differs from version 2 in its line hash only)
    store.check_log(str(log), CheckOptions())
    with log.open("ab") as handle:  # one more answer
        handle.write(LOG.read_bytes().splitlines(keepends=True)[0].replace(b'"answer_id": "', b'"answer_id": "more-'))
    again = Store(tmp_path / "s", create=True)
    assert again.version == 1
    run_ = again.check_log(str(log), CheckOptions())
    assert (run_.kept, run_.checked) == (run_.lines - 1, 1)  # (its lines recognised by their blake2b hashes)
    assert Store(tmp_path / "s").version == 1
    hashes = [h for part in sorted((tmp_path / "s" / "answers").glob("log-*/part-*.parquet"))
              for h in pq.read_table(part).column("line_hash").to_pylist()]
    lines = [raw for raw in log.read_bytes().splitlines() if raw.strip()]
    assert sorted(hashes) == sorted(hashlib.blake2b(raw, digest_size=16).digest() for raw in lines)


def test_a_store_of_an_unknown_version_is_refused_naming_the_versions_read(tmp_path):
    (tmp_path / "store.json").write_text('{"store_version": 3}')
    with pytest.raises(StoreError, match=r"version 3; this citecheck reads versions 1 and 2\. Check the logs into a new"):
        Store(tmp_path)


# --- a store moved with its logs: a log given from its new place is the log the store holds -------

def test_a_log_checked_again_after_its_store_moved_with_it_is_the_same_log(tmp_path, monkeypatch):
    """A log's id is made from its absolute path; a store copied or moved with its logs reads them
    by their paths relative to it, and a check of a log from there re-checks that log (nothing
    changed: every line kept) instead of adding it again, which counted every answer twice
    (a new user's run on a copy of tests/fixtures/store-v1).  Its recorded path becomes the new one."""
    import shutil

    first = tmp_path / "a"
    (first / "logs").mkdir(parents=True)
    shutil.copy(LOG, first / "logs" / "answers.jsonl")
    monkeypatch.chdir(first)
    assert run("check", "logs/answers.jsonl", "--store", "store")[0] == 0
    shutil.move(first, tmp_path / "b")
    moved = tmp_path / "b"
    monkeypatch.chdir(moved)
    code, out, _ = run("check", "logs/answers.jsonl", "--store", "store")
    assert code == 0 and "48 line(s), 0 checked, 48 unchanged" in out, out
    (entry,) = Store(moved / "store").logs
    assert entry["path"] == str((moved / "logs" / "answers.jsonl").resolve())
    code, out, _ = run("report", "--store", "store", "logs/answers.jsonl")
    assert code == 0 and "12 of 48 answers" in out, out  # (each answer once)
    # another log (here: a copy beside it) is still a log of its own
    shutil.copy(moved / "logs" / "answers.jsonl", moved / "logs" / "again.jsonl")
    assert run("check", "logs/again.jsonl", "--store", "store")[0] == 0
    assert len(Store(moved / "store").logs) == 2


def test_the_version_1_fixture_checked_again_from_beside_it_keeps_every_line(tmp_path, monkeypatch):
    root = _v1_copy(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("check", "logs/answers.jsonl", "--store", "store")
    assert code == 0 and "48 line(s), 0 checked, 48 unchanged" in out, out
    store = Store(root)
    assert store.version == 1 and len(store.logs) == 1


def test_a_store_json_written_meanwhile_is_taken_at_its_own_version(tmp_path):
    """Two checks into one new folder: the second takes the lock after the first wrote store.json,
    reads it again, and hashes at that store's version (here a version 1 record: blake2b), or
    refuses one it cannot read."""
    import hashlib

    log = tmp_path / "answers.jsonl"
    log.write_bytes(LOG.read_bytes())
    late = Store(tmp_path / "s", create=True)  # (made before the other check wrote its record)
    first = Store(tmp_path / "s", create=True)
    first.meta["store_version"] = 1
    with first.locked():
        first.check_log(str(log), CheckOptions())
    with late.locked():
        assert late.version == 1
        late.check_log(str(log), CheckOptions())
    hashes = [h for part in sorted((tmp_path / "s" / "answers").glob("log-*/part-*.parquet"))
              for h in pq.read_table(part).column("line_hash").to_pylist()]
    assert hashes and all(h in {hashlib.blake2b(raw, digest_size=16).digest() for raw in LOG.read_bytes().splitlines()}
                          for h in hashes)
    (tmp_path / "s" / "store.json").write_text('{"store_version": 7}')
    with pytest.raises(StoreError, match="version 7"):
        with late.locked():
            pass
