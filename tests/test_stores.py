"""Labels and verdicts on either store (file, PostgreSQL): verdict rules, fingerprints and stale
labels, ``labels copy`` / ``verdicts copy`` both ways, the schema's migrations, and passwords
that never show.  Tests taking ``store`` run once per store (tests/conftest.py)."""

import dataclasses
import io
import json
from dataclasses import asdict
from pathlib import Path

import pytest
from citecheck.checking.files import check_options
from citecheck.cli.main import main
from citecheck.judging import verdicts as judge_verdicts
from citecheck.judging.calibration import calibrate, human_labels
from citecheck.judging.judges import BaselineJudge, JudgeItem, not_yet_judged
from citecheck.labelling import dataset, export, labels
from citecheck.labelling.items import items_of
from citecheck.storage import postgres, streams
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG, load_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EQA = Path(__file__).parent / "data" / "expertqa" / "domain_val_sample.jsonl"


@pytest.fixture(scope="module")
def data():
    return dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))


@pytest.fixture
def verdict_store(store, tmp_path):
    """Verdicts beside the labels: another file, or the same database (another stream)."""
    return store if streams.is_database(store) else tmp_path / "verdicts.jsonl"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def raw(target, stream=labels.STREAM) -> list[dict]:
    return streams.read_all(target, stream, lambda value: value)[0]


# --- verdicts ---------------------------------------------------------------------------------------


def test_verdicts_append_read_runs_and_resume(store):
    judge_verdicts.append(store, [judge_verdicts.make("a-1#s0#c0", "supported", "r1", "j", "v1", "h", fingerprint="f0"),
                     judge_verdicts.make("a-1#s0#c0", "partial", "", "j", "v2", "h", fingerprint="f0"),
                     judge_verdicts.make("a-2#s0#c0", "unscored", "API error", "j", "v1", "h", fingerprint="f2")])
    judge_verdicts.append(store, [judge_verdicts.make("a-1#s0#c0", "not_supported", "r2", "j", "v1", "h", fingerprint="f0", cost_usd=0.0012345)])
    found, errors = judge_verdicts.read(store)
    assert errors == [] and [v.verdict for v in found] == ["supported", "partial", "unscored", "not_supported"]
    assert judge_verdicts.runs(found) == [("j", "v1"), ("j", "v2")] and found[3].cost_usd == 0.001234
    assert found[0].at.endswith("Z") and found[0].rationale == "r1"

    class Judge:
        name, prompt = "j", type("P", (), {"version": "v1"})()

    items = [JudgeItem("a-1#s0#c0", "q", "s", "", "c", "f0"), JudgeItem("a-2#s0#c0", "q", "s", "", "c", "f2"),
             JudgeItem("a-3#s0#c0", "q", "s", "", "c", "f9")]
    changed = JudgeItem("a-1#s0#c0", "q", "s", "", "c", "f-new")
    todo = not_yet_judged(items + [changed], found, Judge())
    assert [(i.key, i.fingerprint) for i in todo] == [("a-2#s0#c0", "f2"), ("a-3#s0#c0", "f9"), ("a-1#s0#c0", "f-new")]


def test_bad_verdict_records_are_skipped_with_their_position(store):
    judge_verdicts.append(store, [judge_verdicts.make("a-1#s0#c0", "supported", "", "j", "v1", "h")])
    streams.append(store, judge_verdicts.STREAM, [{**asdict(judge_verdicts.make("a-2#s0#c0", "partial", "", "j", "v1", "h")), "verdicts_version": 3},
                               {**asdict(judge_verdicts.make("a-3#s0#c0", "partial", "", "j", "v1", "h")), "verdict": "maybe"}])
    judge_verdicts.append(store, [judge_verdicts.make("a-4#s0#c0", "partial", "", "j", "v1", "h")])
    found, errors = judge_verdicts.read(store)
    assert [v.item for v in found] == ["a-1#s0#c0", "a-4#s0#c0"]
    assert [(e.line, e.field) for e in errors] == [(2, "verdicts_version"), (3, "verdict")]


# --- fingerprints and stale labels --------------------------------------------------------------------


def test_stale_labels_and_fingerprints_behave_the_same(store, verdict_store, data):
    items = items_of(data.get("a-033"))
    cited = [i for i in items if i.citation is not None]
    old = cited[1]._replace(fingerprint="sha256:" + "1" * 32)  # labelled before the source changed
    labels.append(store, labels.make_label(cited[0], "supported", "ana"))
    labels.append(store, labels.make_label(cited[1], "partial", "ben"))
    labels.append(store, labels.make_label(old, "not_supported", "ana"))
    records, errors = labels.read(store)
    assert errors == []
    current = labels.latest(records)
    assert labels.is_done(cited[0], current, "ana") and not labels.is_done(cited[1], current, "ana")
    assert labels.progress(items, current, "ana") == labels.Progress(1, len(items), 1)
    rows = {r["item"]: r for r in export.rows(data, records)}
    assert rows[cited[1].key]["labels"]["ana"]["stale"] is True
    assert rows[cited[1].key]["labels"]["ben"]["stale"] is False

    judge = BaselineJudge()
    jitems = [JudgeItem(i.key, "q", "s", "", "c", i.fingerprint) for i in cited[:2]]
    judge_verdicts.append(verdict_store, [judge_verdicts.make(i.key, "not_supported", "", judge.name, judge.prompt.version, "h", i.fingerprint)
                             for i in jitems])
    verdicts, _ = judge_verdicts.read(verdict_store)
    fingerprints = {i.key: i.fingerprint for i in items}
    # without the log, ben's partial and ana's not_supported disagree on cited[1]: no majority
    assert human_labels(records, None, adjudicated={}, overlap=1) == {cited[0].key: "supported"}
    # with it, ana's is stale: ben's is the single current label
    assert human_labels(records, fingerprints, adjudicated={}, overlap=1) == {cited[0].key: "supported", cited[1].key: "partial"}
    report = calibrate(records, verdicts, judge.name, judge.prompt.version, "all", fingerprints, adjudicated={}, overlap=1)
    assert report.to_dict()["items"] == 2 and report.to_dict()["human_label_rules"]["single"] == 2
    assert not_yet_judged(jitems, verdicts, judge) == []
    moved = [dataclasses.replace(j, fingerprint="sha256:" + "2" * 32) for j in jitems]  # re-judged once changed
    assert [i.key for i in not_yet_judged(moved, verdicts, judge)] == [i.key for i in jitems]


def test_judge_and_calibrate_commands_on_each_store(store, verdict_store, tmp_path):
    log, labels_file = tmp_path / "eqa.jsonl", tmp_path / "eqa-labels.jsonl"
    assert run("import", "expertqa", EQA, "--out", log, "--labels-out", labels_file)[0] == 0
    if streams.is_database(store):
        assert run("labels", "copy", labels_file, store)[0] == 0
    else:
        store = labels_file
    code, _, err = run("judge", "--log", log, "--labels", store, "--judge", "baseline", "--out", verdict_store)
    assert code == 0
    first = judge_verdicts.read(verdict_store)[0]
    code, _, err = run("judge", "--log", log, "--labels", store, "--judge", "baseline", "--out", verdict_store)
    retried = sum(1 for v in first if not v.scored)  # only unscored items are judged again
    assert code == 0 and len(judge_verdicts.read(verdict_store)[0]) == len(first) + retried
    code, out, _ = run("calibrate", "--labels", store, "--verdicts", verdict_store, "--format", "json", "--log", log)
    report = json.loads(out)
    assert code == 0 and report["judge"] == "baseline" and report["items"] > 0
    # the same figures as from the files the database was filled from
    reference = tmp_path / "ref-verdicts.jsonl"
    assert run("verdicts", "copy", verdict_store, reference)[0] == 0
    _, ref_out, _ = run("calibrate", "--labels", labels_file, "--verdicts", reference, "--format", "json", "--log", log)
    assert json.loads(ref_out) == report


# --- copy -------------------------------------------------------------------------------------------


def test_labels_copy_is_idempotent_both_ways(pg_url, tmp_path, data):
    items = items_of(data.get("a-001"))
    source = tmp_path / "labels.jsonl"
    for n, item in enumerate(items):
        labels.append(source, labels.make_label(item, "supported", "ana", note=f"n{n} \u00e9\u4e2d \"quoted\""))
    with open(source, "a", encoding="utf-8") as f:
        f.write('{"labels_version": 2, "item": "from-a-newer-citecheck"}\nnot json\n')
    labels.append(source, labels.make_label(items[0], "partial", "ana"))
    total = len(items) + 2  # the newer-version record is copied too: nothing is lost

    code, _, err = run("labels", "copy", source, pg_url)
    assert code == 4 and f"copied {total} labels event(s)" in err and "; 0 already there" in err
    assert f"warning: {source}:{len(items) + 2}: (json)" in err  # the bad line, named, not copied
    assert f"copied 0 labels event(s) from {source} to {postgres.redact(pg_url)}; {total} already there" in \
        run("labels", "copy", source, pg_url)[2]
    assert raw(pg_url) == raw(source)

    back = tmp_path / "back.jsonl"
    assert run("labels", "copy", pg_url, back)[0] == 0
    assert "copied 0" in run("labels", "copy", pg_url, back)[2]
    assert raw(back) == raw(source)
    assert labels.latest(labels.read(back)[0]) == labels.latest(labels.read(source)[0]) == labels.latest(labels.read(pg_url)[0])

    labels.append(pg_url, labels.make_label(items[1], "not_supported", "ben"))  # a label made on the database
    assert f"copied 1 labels event(s) from {postgres.redact(pg_url)} to {back}; {total} already there" in \
        run("labels", "copy", pg_url, back)[2]
    assert "copied 0" in run("labels", "copy", back, pg_url)[2]
    assert raw(back) == raw(pg_url)


def test_verdicts_copy_both_ways(pg_url, tmp_path):
    source = tmp_path / "v.jsonl"
    judge_verdicts.append(source, [judge_verdicts.make(f"a-{n}#s0#c0", "supported", f"r{n}", "j", "v1", "h") for n in range(5)])
    assert "copied 5 verdicts event(s)" in run("verdicts", "copy", source, pg_url)[2]
    assert "copied 0" in run("verdicts", "copy", source, pg_url)[2]
    assert raw(pg_url, judge_verdicts.STREAM) == raw(source, judge_verdicts.STREAM) and raw(pg_url, labels.STREAM) == []
    back = tmp_path / "back.jsonl"
    assert "copied 5" in run("verdicts", "copy", pg_url, back)[2]
    assert judge_verdicts.read(back)[0] == judge_verdicts.read(source)[0]
    assert run("labels", "copy", source, source)[0] == 2


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(notes=st.lists(st.text(st.characters(blacklist_categories=("Cs",))), min_size=1, max_size=4))
def test_any_note_survives_file_database_file(pg_cluster, tmp_path_factory, notes):
    url = pg_cluster.create_database()
    folder = tmp_path_factory.mktemp("roundtrip")
    made = [labels.Label(1, "a-1#s0#c0", "a-1", 0, 0, "c", "f", "supported", note, "ana", labels.now(), "t") for note in notes]
    try:
        for label in made:
            labels.append(folder / "a.jsonl", label)
        streams.copy(folder / "a.jsonl", url, labels.STREAM)
        streams.copy(url, folder / "b.jsonl", labels.STREAM)
        assert labels.read(url)[0] == made and labels.read(folder / "b.jsonl")[0] == made
    finally:
        # the pool's worker threads draw from the global random module (connection lifetime jitter):
        # left running, they would touch it while Hypothesis draws the next example
        postgres.close_all()


# --- the schema ----------------------------------------------------------------------------------------


def test_a_new_database_gets_the_whole_schema(pg_url):
    import psycopg

    labels.append(pg_url, labels.Label(1, "a-1#s0#c0", "a-1", 0, 0, "c", "f", "supported", "", "ana", labels.now(), "t"))
    with psycopg.connect(pg_url) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM citecheck_schema ORDER BY version")]
        items = [i for (i,) in conn.execute("SELECT item FROM citecheck_events")]
    assert versions == list(range(1, postgres.SCHEMA_VERSION + 1)) and items == ["a-1#s0#c0"]


def test_a_version_1_database_is_migrated_and_keeps_its_events(pg_url):
    import psycopg

    record = {"labels_version": 1, "item": "a-1#s0#c0", "answer_id": "a-1", "sentence": 0, "citation": 0,
              "chunk_id": "c", "fingerprint": "f", "label": "partial", "note": "", "reviewer": "ana",
              "at": "2026-12-01T00:00:00.000Z", "citecheck": "0.1.0"}
    with psycopg.connect(pg_url, autocommit=True) as conn:  # what citecheck's first release created
        conn.execute("CREATE TABLE citecheck_schema (version int PRIMARY KEY, applied_at timestamptz NOT NULL "
                     "DEFAULT now())")
        for statement in postgres.MIGRATIONS[1]:
            conn.execute(statement)
        conn.execute("INSERT INTO citecheck_schema (version) VALUES (1)")
        conn.execute("INSERT INTO citecheck_events (stream, event_sha256, record) VALUES ('labels', %s, %s::json)",
                     (postgres.event_id("labels", record), json.dumps(record)))
    assert [r.label for r in labels.read(pg_url)[0]] == ["partial"]
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT max(version) FROM citecheck_schema").fetchone()[0] == postgres.SCHEMA_VERSION
        assert conn.execute("SELECT item FROM citecheck_events").fetchall() == [("a-1#s0#c0",)]
    assert streams.copy(pg_url, pg_url, labels.STREAM)[0] == 0  # and the event id of the old row is the one we compute


def test_a_database_from_a_newer_citecheck_is_refused(pg_url):
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE citecheck_schema (version int PRIMARY KEY, applied_at timestamptz)")
        conn.execute("INSERT INTO citecheck_schema (version) VALUES (%s)", (postgres.SCHEMA_VERSION + 1,))
    code, _, err = run("labels", "copy", pg_url, "/dev/null/never.jsonl")
    assert code == 2 and "upgrade citecheck" in err


# --- passwords --------------------------------------------------------------------------------------


@pytest.mark.parametrize("url, shown", [
    ("postgresql://ana:s3cr%40t@db.example:5433/labels?sslmode=require",
     "postgresql://ana:***@db.example:5433/labels?sslmode=require"),
    ("postgres://ana:pw@[::1]/x", "postgres://ana:***@[::1]/x"),
    ("postgresql://ana@db/labels", "postgresql://ana@db/labels"),
    ("postgresql:///labels?host=/tmp", "postgresql:///labels?host=/tmp"),
    ("postgresql://ana:p%3Aw@h1:5432,h2:5433/db", "postgresql://ana:***@h1:5432,h2:5433/db"),
    ("postgresql://h/db?user=ana&password=hunter2&sslmode=require",
     "postgresql://h/db?user=ana&password=***&sslmode=require"),
])
def test_redact(url, shown):
    assert postgres.redact(url) == shown


def test_the_password_is_never_printed(pg_cluster, pg_url, tmp_path):
    password = pg_cluster.password
    labels_file = tmp_path / "eqa-labels.jsonl"
    log = tmp_path / "eqa.jsonl"
    run("import", "expertqa", EQA, "--out", log, "--labels-out", labels_file)
    said = []
    for argv in (("labels", "copy", labels_file, pg_url), ("labels", "copy", pg_url, tmp_path / "b.jsonl"),
                 ("judge", "--log", log, "--labels", pg_url, "--out", pg_url),
                 ("calibrate", "--labels", pg_url, "--verdicts", pg_url),
                 ("labels", "export", pg_url, "--log", log)):
        code, out, err = run(*argv)
        assert code == 0, err
        said.append(out + err)
    assert all(password not in s for s in said) and "***@127.0.0.1" in said[0]
    streams.append(pg_url, labels.STREAM, [{"labels_version": 1}])  # a bad row: its error names the database
    assert all(password not in str(e) and "***" in e.file for e in labels.read(pg_url)[1])

    wrong = pg_url.replace(password, "wr0ng-passw0rd")
    code, _, err = run("calibrate", "--labels", wrong, "--verdicts", wrong)
    assert code == 2 and "wr0ng-passw0rd" not in err and "password authentication failed" in err
    closed = pg_url.replace(f":{pg_cluster.port}/", ":1/")
    code, _, err = run("labels", "copy", closed, tmp_path / "c.jsonl")
    assert code == 2 and password not in err and "cannot use postgresql://citecheck:***@127.0.0.1:1/" in err


def test_settings_take_a_database_url_and_show_it_masked(pg_cluster, pg_url):
    cfg = load_settings(["--labels", pg_url], environ={"CITECHECK_VERDICTS": pg_url})
    assert cfg.labels == pg_url and cfg.verdicts == pg_url
    assert cfg.shown(cfg.labels) == pg_url.replace(pg_cluster.password, "***")
    assert all("postgresql" not in str(d) for d in cfg.folders)
    assert cfg.expertqa_verdicts.name == "expertqa-verdicts.jsonl"


def test_copies_running_at_once_into_one_database_store_each_record_once(pg_url, tmp_path, data):
    """Copies of the same labels at once (four copies of 200 left 600 rows) store each once, and a
    copy run again (a retry) adds none."""
    import subprocess
    import sys

    items = [item for item in data.all_items if item.citation is not None]
    source = tmp_path / "labels.jsonl"
    made = [asdict(labels.make_label(items[n % len(items)], "supported", f"r{n}")) for n in range(3000)]
    source.write_text("".join(json.dumps({k: v for k, v in r.items() if v != ""}) + "\n" for r in made))
    code = ("import sys; from citecheck.cli.main import main; "
            f"sys.exit(main(['labels', 'copy', {str(source)!r}, {pg_url!r}]))")
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True) for _ in range(6)]
    said = [p.communicate(timeout=120)[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), said
    assert sum(int(s.split("copied ")[1].split()[0]) for s in said) == 3000  # each copied by exactly one
    assert len(raw(pg_url)) == 3000
    assert "copied 0" in run("labels", "copy", source, pg_url)[2] and len(raw(pg_url)) == 3000


def test_a_read_on_a_connection_the_server_ends_is_run_again_and_an_append_is_not(pg_url):
    """``terminating connection due to administrator command`` (SQLSTATE 57P01), raised by the real
    server: a read (safe to repeat) is run once more on a fresh connection; an append is not (it
    may have been stored), and says the database's error without its password."""
    streams.append(pg_url, labels.STREAM, [{"item": "x", "n": 1}])
    attempts = []

    def ended_first(conn):
        attempts.append(1)
        if len(attempts) == 1:
            conn.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        return conn.execute("SELECT count(*) FROM citecheck_events").fetchone()[0]

    assert postgres._run(pg_url, ended_first, retry=True) == 1 and len(attempts) == 2
    attempts.clear()
    with pytest.raises(postgres.DatabaseError, match="terminating connection due to administrator command") as info:
        postgres._run(pg_url, ended_first)
    from urllib.parse import urlsplit

    assert len(attempts) == 1 and urlsplit(pg_url).password not in str(info.value)


@pytest.mark.parametrize("stored", [True, False], ids=["ended-after-the-insert", "ended-before-it"])
def test_a_save_whose_acknowledgement_is_lost_is_looked_for_not_guessed(pg_url, monkeypatch, stored):
    """The connection ends (57P01, from the real server) after the insert committed: the save is
    acknowledged, stored once; it ends before: the save says it was not stored, and is not."""
    streams.append(pg_url, labels.STREAM, [{"item": "x", "n": 0}])  # (the schema and the pool first)
    real = postgres._insert_rows

    def then_ended(conn, rows):
        if stored:
            real(conn, rows)
        conn.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    monkeypatch.setattr(postgres, "_insert_rows", then_ended)
    record = {"item": "x", "n": 1}
    if stored:
        assert streams.append(pg_url, labels.STREAM, [record]) == 1
    else:
        with pytest.raises(postgres.DatabaseError, match="administrator command"):
            streams.append(pg_url, labels.STREAM, [record])
    assert raw(pg_url).count(record) == (1 if stored else 0)
