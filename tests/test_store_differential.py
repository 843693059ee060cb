"""Three paths that do one job, fed the same malformed logs: ``check``, ``check --store`` (local
engine) and ``check --store --engine dask`` must read every log through the same line rules and
say the same thing: the same answers (file, line, id), the same unreadable lines (file, line,
field, message), the same figures and the same exit code.  Byte ranges of one file (the Dask
partitions) must agree with the whole file at every boundary: CR, CRLF, a BOM, a line over the limit.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from citecheck.checking.files import check_options
from citecheck.cli.main import main
from citecheck.storage.checked.folder import Store
from citecheck.storage.checked.query import StoreQuery
from citecheck.storage.lines import MAX_LINE_BYTES
from citecheck.text.utf8 import utf8_text
from fuzzlogs import SAMPLE, cases
from helpers import figures_only
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed (pip install -e .[dask])")

GOOD = [line for line in SAMPLE.read_bytes().splitlines(keepends=True) if line.strip()][:6]


def _file_level_cases() -> dict[str, bytes]:
    """Whole-log oddities: how lines end, what comes before the first one, what a line holds."""
    a, b, c = (line.rstrip(b"\n") for line in GOOD[:3])
    big = b'{"answer_id": "big", "pad": "' + b"x" * (MAX_LINE_BYTES + 1_000) + b'"}'
    return {
        "bom": b"\xef\xbb\xbf" + a + b"\n" + b + b"\n",
        "bom-only-line": b"\xef\xbb\xbf\n" + a + b"\n",
        "cr-only": a + b"\r" + b + b"\r" + c + b"\r",
        "crlf": a + b"\r\n" + b + b"\r\n" + c,
        "mixed-ends": a + b"\r" + b + b"\r\n" + c + b"\n\r\n\r" + a,
        "cr-in-json-whitespace": a[:1] + b"\r" + a[1:] + b"\n" + b + b"\n",
        "nul": a + b"\n\x00\n" + b + b"\n",
        "invalid-utf8": a + b"\n" + b[:40] + b"\xff\xfe" + b[40:] + b"\n" + c + b"\n",
        "cut-in-a-character": a + b"\n" + "é".encode()[:1] + b"\n",
        "duplicate-keys": b'{"answer_id": "d1", "answer_id": "d2", "question": "q", "answer": "a", "chunks": [],'
                          b' "citations": []}\n' + a + b"\n",
        "inf-nan": b'{"answer_id": "n", "question": "q", "answer": "a", "chunks": [], "citations": [],'
                   b' "x": 1e309, "y": NaN, "z": Infinity}\n' + a + b"\n",
        "trailing-comma": a[:-1] + b",}\n" + b + b"\n",
        "blank-lines": b"\n \n" + a + b"\n\t\n" + b + b"\n\n",
        "no-final-newline": a + b"\n" + b,
        "torn-last-line": a + b"\n" + b[: len(b) // 2],
        "over-the-limit": a + b"\n" + big + b"\n" + b + b"\n",
        # (a key the standard library reads as a lone surrogate: the store, UTF-8 only, crashed on it)
        "lone-surrogate-key": b'{"log_version": 1, "answer_id": "s1", "question": "q", "answer": "Hi.", "chunks": [],'
                              b' "trace": {"\\udc00x": 1}}\n' + a + b"\n",
    }


def _corpus() -> dict[str, bytes]:
    """The file-level cases and a few of every family of the fuzz corpus (tests/fuzzlogs.py)."""
    out = {f"file-{name}": data for name, data in _file_level_cases().items()}
    per_family: dict[str, int] = {}
    for case in cases(full=False):
        if case.kind != "file" or per_family.get(case.family, 0) >= 6:
            continue
        per_family[case.family] = per_family.get(case.family, 0) + 1
        out[f"{case.family}-{len(out)}"] = case.data
    return out


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv, out, err)
    return code, figures_only(out.getvalue()), err.getvalue()  # (the inputs statement differs by path)


def _said(stdout: str) -> dict:
    """What a ``check --format json`` run said: its unreadable lines and its summary (answers apart)."""
    records = [json.loads(line) for line in stdout.splitlines()]
    errors = sorted((r["file"], r["line"], r["field"], r["message"]) for r in records if r["record"] == "error")
    summary = [r for r in records if r["record"] == "summary"]
    answers = sorted((r["file"], r["line"], r["answer_id"]) for r in records if r["record"] == "answer")
    return {"errors": errors, "summary": summary, "answers": answers}


def _store_answers(folder: Path) -> list[tuple[str, int, str]]:
    store = Store(folder)
    files = {entry["source"]: entry["file"] for entry in store.logs}
    found = pq.read_table(store.files("answers"), columns=["source", "line", "answer_id"]).to_pylist() \
        if store.files("answers") else []
    return sorted((files[r["source"]], r["line"], r["answer_id"]) for r in found)


def _write(folder: Path, logs: dict[str, bytes]) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, data in logs.items():
        path = folder / f"{name}.jsonl"
        path.write_bytes(data)
        paths.append(str(path))
    return paths


def _three_ways(tmp: Path, paths: list[str], scheduler: str) -> list[tuple[str, int, dict]]:
    out = []
    code, stdout, _ = run(["check", *paths, "--format", "json"])
    out.append(("check", code, _said(stdout)))
    for engine in ("local", "dask"):
        store = tmp / f"store-{engine}"
        extra = ["--engine", "dask", "--scheduler", scheduler] if engine == "dask" else []
        code, stdout, _ = run(["check", *paths, "--store", str(store), "--format", "json", *extra])
        said = _said(stdout)
        said["answers"] = _store_answers(store)
        out.append((engine, code, said))
    return out


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
        yield c


def test_the_corpus_holds_what_the_issue_names():
    corpus = _corpus()
    assert {"file-bom", "file-cr-only", "file-mixed-ends", "file-nul", "file-invalid-utf8", "file-duplicate-keys",
            "file-inf-nan", "file-trailing-comma", "file-over-the-limit", "file-lone-surrogate-key"} <= set(corpus)
    assert len(corpus) > 100


def test_check_and_both_store_engines_say_the_same_of_every_log(tmp_path, cluster):
    paths = _write(tmp_path / "logs", _corpus())
    (plain_code, plain), (local_code, local), (dask_code, dask) = ((c, s) for _, c, s in
                                                                   _three_ways(tmp_path, paths, cluster.scheduler_address))
    assert plain["answers"] and plain["errors"]  # the corpus has both
    # a store holds UTF-8 only: a lone surrogate in a field is kept as its escape (text/utf8.py)
    plain_errors = [(f, n, utf8_text(field), utf8_text(message)) for f, n, field, message in plain["errors"]]
    assert any(field != utf8_text(field) for _, _, field, _ in plain["errors"])  # (the corpus has one)
    for name, said in (("local", local), ("dask", dask)):
        assert said["answers"] == plain["answers"], name
        assert said["errors"] == plain_errors, name
        assert said["summary"] == plain["summary"], name
    assert plain_code == local_code == dask_code == 4  # unreadable lines


def test_report_figures_agree_from_the_log_and_from_the_store(tmp_path):
    logs = {name: data for name, data in _file_level_cases().items() if name != "over-the-limit"}
    paths = _write(tmp_path / "logs", logs)
    store = tmp_path / "store"
    assert run(["check", *paths, "--store", str(store), "--quiet"])[0] == 4
    from_log = run(["report", *paths, "--format", "json"])
    from_store = run(["report", *paths, "--store", str(store), "--format", "json"])
    assert from_log[0] == from_store[0] == 4
    assert json.loads(from_log[1]) == json.loads(from_store[1])


# --- byte ranges agree with the whole file at every boundary -------------------------------------

_PIECES = [*(line.rstrip(b"\n") for line in GOOD[:3]), b"", b" ", b"{", b"\xef\xbb\xbf", b"\xff", b"\x00"]
_ENDS = [b"\n", b"\r", b"\r\n", b"\n\r"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=hs.lists(hs.tuples(hs.sampled_from(_PIECES), hs.sampled_from(_ENDS)), min_size=1, max_size=8),
       last_end=hs.booleans(), block=hs.integers(1, 4096))
def test_byte_ranges_read_a_log_as_the_whole_file_does(tmp_path_factory, parts, last_end, block):
    """Local engine (the whole file) against the range engine (the file cut every ``block`` bytes,
    run in this process: the rules, not the cluster, are under test here)."""
    from citecheck.storage.checked.cluster import check_range, count_lines, partitions
    from citecheck.storage.checked.schema import STORE_VERSION

    data = b"".join(piece + end for piece, end in parts)
    if not last_end:
        data = data.rstrip(b"\r\n")
    folder = tmp_path_factory.mktemp("ranges")
    path = folder / "log.jsonl"
    path.write_bytes(data)
    options = check_options()
    whole = Store(folder / "whole", create=True)
    whole.check_log(str(path), options)
    ranges = partitions(str(path), block)
    counts = [count_lines(str(path), s, e) for s, e in ranges]
    got = {"answers": [], "errors": []}
    before = 0
    for (start, end), counted in zip(ranges, counts):
        for tables in check_range(str(path), "src", start, end, options, before, version=STORE_VERSION):
            got["answers"] += tables["answers"].select(["line", "offset", "answer_id"]).to_pylist()
            got["errors"] += tables["errors"].select(["line", "offset", "field", "message"]).to_pylist()
        before += counted
    want_answers = pq.read_table(whole.files("answers"), columns=["line", "offset", "answer_id"]).to_pylist() \
        if whole.files("answers") else []
    want_errors = pq.read_table(whole.files("errors"), columns=["line", "offset", "field", "message"]).to_pylist() \
        if whole.files("errors") else []
    key = lambda r: (r["line"], r["offset"])  # noqa: E731
    assert sorted(got["answers"], key=key) == sorted(want_answers, key=key)
    assert sorted(got["errors"], key=key) == sorted(want_errors, key=key)
    assert sum(counts) == sum(1 for _ in _whole_lines(data))


def _whole_lines(data: bytes):
    from citecheck.storage.lines import numbered_lines

    return numbered_lines(io.BytesIO(data))


def test_the_review_page_reads_an_answer_back_by_the_same_rules(tmp_path):
    """An answer after a CR-only line end and a BOM is found at its offset and reads back whole."""
    paths = _write(tmp_path / "logs", {"cr": _file_level_cases()["cr-only"], "bom": _file_level_cases()["bom"]})
    store = tmp_path / "store"
    assert run(["check", *paths, "--store", str(store), "--quiet"])[0] in (0, 1)
    query = StoreQuery(Store(store))
    for file, _, answer_id in _store_answers(store):
        result = query.result(answer_id)
        assert result is not None and result.answer.answer_id == answer_id, (file, answer_id)
    query.close()


@pytest.mark.parametrize("name,data", [("empty", b""), ("blank", b"\n \n"), ("all-unreadable", b"garbage\n{\"a\": \n")])
def test_an_empty_or_unreadable_store_reports_what_the_log_does(tmp_path, name, data):
    """report --store crashed on such a store (int() of a NULL count); it must give the log's zeros and n/a."""
    (path,) = _write(tmp_path / "logs", {name: data})
    store = tmp_path / "store"
    assert run(["check", path, "--store", str(store), "--quiet"])[0] in (0, 4)
    for output in ("json", "csv", "text"):
        from_log = run(["report", path, "--format", output])
        from_store = run(["report", path, "--store", str(store), "--format", output])
        assert from_store[0] == from_log[0] and from_store[1] == from_log[1], output


def test_a_link_to_a_log_is_a_log_of_its_own_on_every_path(tmp_path, cluster):
    """A log and a symbolic link to it: check read two logs, the Dask engine stored two, the local
    engine one (it took the link for the store's log seen from a new place) and the report named
    the link by the file it points to. A log's identity is its absolute path, links not resolved."""
    [log] = _write(tmp_path / "logs", {"a": b"".join(GOOD[:2])})
    link = tmp_path / "logs" / "b.jsonl"
    link.symlink_to(log)
    ways = _three_ways(tmp_path, [log, str(link)], cluster.scheduler_address)
    for name, code, said in ways:
        assert code == 0 and len(said["answers"]) == 4, (name, said["answers"])
        assert {f for f, _, _ in said["answers"]} == {log, str(link)}, name
    for engine in ("local", "dask"):
        assert len(Store(tmp_path / f"store-{engine}").logs) == 2, engine
    out, err = io.StringIO(), io.StringIO()
    main(["report", log, str(link)], out, err)
    assert "logs: " in out.getvalue() and "b.jsonl" in out.getvalue()


def test_a_log_named_relative_to_here_is_read_by_workers_started_elsewhere(tmp_path, cluster, monkeypatch):
    """Given a cluster (--scheduler) whose workers run in another folder, a log named by a path
    relative to this one was looked for in theirs ("No such file"); the local engine read it."""
    [log] = _write(tmp_path / "logs", {"a": b"".join(GOOD[:3])})
    monkeypatch.chdir(tmp_path / "logs")  # (the cluster's workers started in the folder the tests run in)
    code, stdout, err = run(["check", "a.jsonl", "--store", str(tmp_path / "store"), "--format", "json",
                             "--engine", "dask", "--scheduler", cluster.scheduler_address])
    assert code == 0, err
    assert len(_store_answers(tmp_path / "store")) == 3


@pytest.mark.skipif(not hasattr(os, "fsencode") or os.name != "posix", reason="file names of any bytes: POSIX")
def test_a_log_whose_name_is_not_utf8_is_read_on_every_path(tmp_path, cluster):
    """check read a log named b"l\\xff.jsonl"; report and check --store crashed on its name
    (pandas' and Arrow's text is UTF-8 only). Every path reads it now, the name escaped where stored."""
    folder = tmp_path / "logs"
    folder.mkdir()
    log = os.fsdecode(os.path.join(os.fsencode(folder), b"l\xff.jsonl"))
    Path(log).write_bytes(b"".join(GOOD[:3]))
    ways = _three_ways(tmp_path, [log], cluster.scheduler_address)
    assert [(name, code, len(said["answers"])) for name, code, said in ways] == \
        [("check", 0, 3), ("local", 0, 3), ("dask", 0, 3)]
    for argv in (["report", log, "--format", "json"], ["report", "--store", str(tmp_path / "store-local"), "--format",
                                                      "json"]):
        code, stdout, err = run(argv)
        assert code == 0 and json.loads(stdout)["answers"] == 3, err
