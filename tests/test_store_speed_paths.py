"""The faster ways ``check --store`` writes a store (issue #36) against the ways they replaced, on the
same inputs: the rows of a batch (columns made once per batch in C, instead of per-row Python
dicts turned into tables), timestamps read without pandas (instead of ``pandas.to_datetime``),
check's summary summed with pyarrow (instead of DuckDB).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import xxhash
from citecheck.checking.checker import CheckOptions, check_answer
from citecheck.contract import reasons as reason_codes
from citecheck.contract.log import parse_answer
from citecheck.errors import RecordError
from citecheck.labelling.items import items_of
from citecheck.reports import figures
from citecheck.reports.timestamps import read_times
from citecheck.storage.checked import batch as store_batch
from citecheck.storage.checked import schema as store_schema
from citecheck.storage.checked.folder import Store, source_id
from citecheck.storage.checked.query import StoreQuery
from citecheck.storage.lines import Line, LongLine, numbered_lines, record_of
from fuzzlogs import cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from test_store import generated_log

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "sample_data" / "answers.jsonl"


# --- the way rows were made before issue #36, kept here as the reference --------------------------


def _reference_times(stamps: list) -> pa.Array:
    if not stamps:
        return pa.array([], type=pa.timestamp("us"))
    times = read_times(stamps)  # (as the in-memory figures read them: reports/timestamps.py)
    naive = times.dt.tz_localize(None)
    return pa.array(naive.to_numpy().astype("datetime64[us]"), type=pa.timestamp("us"), mask=naive.isna().to_numpy())


def _reference_hash(raw, version: int = store_schema.STORE_VERSION) -> bytes:
    """docs/store-format.md's line hash: of the line without its newline (of a line over the limit, of
    its length), blake2b-128 in a version 1 store, xxh3-128 in a version 2 one."""
    data = b"\0a line of %d bytes" % int(raw) if type(raw) is LongLine else raw.rstrip(b"\n")
    return hashlib.blake2b(data, digest_size=16).digest() if version == 1 else xxhash.xxh3_128(data).digest()


def _reference_tables(source: str, file: str, lines: list[Line], options: CheckOptions) -> dict[str, pa.Table]:
    """One row at a time into per-column lists, through figures.answer_row, then pa.table."""
    count_names = figures._COUNT_COLUMNS[:-2]
    answers: dict[str, list] = {f.name: [] for f in store_schema.ANSWERS}
    errors: dict[str, list] = {f.name: [] for f in store_schema.ERRORS}
    citations: dict[str, list] = {f.name: [] for f in store_schema.CITATIONS}
    sentences: dict[str, list] = {f.name: [] for f in store_schema.SENTENCES}
    for line in lines:
        record = record_of(file, line, parse_answer)
        if record is None:
            continue
        raw = line.raw
        length = int(raw) if type(raw) is LongLine else len(raw.rstrip(b"\n"))
        if type(record) is RecordError:
            for name, value in (("source", source), ("file", file), ("line", line.number), ("offset", line.offset),
                                ("length", length), ("line_hash", _reference_hash(raw)), ("field", record.field),
                                ("message", record.message)):
                errors[name].append(value)
            continue
        result = check_answer(record, options)
        text, counts = figures.answer_row(result, file, line.number)
        row = {"source": source, "file": file, "line": line.number, "offset": line.offset, "length": length,
               "line_hash": _reference_hash(raw), **dict(zip(("answer_id", "question", "model", "prompt_version",
                                                               "timestamp"), text[2:])),
               **dict(zip(count_names, counts)), "multi_claim": result.tally.multi_claim,
               "reasons": [c for c, n in zip(reason_codes.ALL_REASONS, result.tally.reasons) if n],
               "invalid_marker_list": list(result.invalid_markers),
               "chunk_ids": [ch.chunk_id or "" for ch in result.answer.chunks],
               "review_items": len(items_of(result)),  # (the items themselves, counted)
               "not_verifiable": sum(1 for c in result.citations if c.status == "not_verifiable")}
        row["faithfulness"] = row["faithfulness"] / 1000 if row["faithfulness"] >= 0 else None
        for name in answers:
            if name != "time":
                answers[name].append(row[name])
        key = {"source": source, "file": file, "line": line.number, "offset": line.offset,
               "answer_id": result.answer.answer_id}
        for c in result.citations:
            values = {**key, **c._asdict(), "verified": not c.reasons, "reasons": list(c.reasons)}
            for name in citations:
                citations[name].append(values[name])
        for s in result.sentences:
            values = {**key, **s._asdict()}
            for name in sentences:
                sentences[name].append(values[name])
    answers["time"] = _reference_times(answers["timestamp"])
    columns = {"answers": answers, "citations": citations, "sentences": sentences, "errors": errors}
    return {name: pa.table({f.name: columns[name][f.name] for f in schema}, schema=schema)
            for name, schema in store_schema.TABLES.items()}


def _new_tables(source: str, file: str, lines: list[Line], options: CheckOptions) -> dict[str, pa.Table]:
    batches = list(store_batch.check_batches(source, file, lines, options, store_schema.STORE_VERSION, rows=10**9))
    if not batches:
        return {name: schema.empty_table() for name, schema in store_schema.TABLES.items()}
    (tables,) = batches
    return tables


def _lines(data: bytes) -> list[Line]:
    import io

    return list(numbered_lines(io.BytesIO(data)))


def _assert_same(new: dict[str, pa.Table], old: dict[str, pa.Table]) -> None:
    for name in store_schema.TABLES:
        assert new[name].schema.equals(old[name].schema), name
        for column in new[name].column_names:
            assert new[name].column(column).to_pylist() == old[name].column(column).to_pylist(), (name, column)


# --- rows ------------------------------------------------------------------------------------------


def test_a_generated_log_gives_the_rows_the_old_way_gave(tmp_path):
    """Every reason code, scored and unscored answers, odd and missing timestamps, unreadable lines."""
    log = generated_log(tmp_path / "log.jsonl", 400)
    lines = _lines(log.read_bytes())
    new = _new_tables("abc", str(log), lines, CheckOptions())
    _assert_same(new, _reference_tables("abc", str(log), lines, CheckOptions()))
    assert new["answers"].num_rows > 300 and new["errors"].num_rows > 0 and new["citations"].num_rows > 0


def test_the_fuzz_cases_give_the_rows_the_old_way_gave():
    """Each malformed or odd line of tests/fuzzlogs.py, as a log of its own."""
    for case in cases():
        if case.kind != "file":
            continue
        lines = _lines(case.data)
        _assert_same(_new_tables("c", "f.jsonl", lines, CheckOptions()),
                     _reference_tables("c", "f.jsonl", lines, CheckOptions()))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=hs.lists(hs.integers(0, 399), max_size=40), stamps=hs.lists(hs.text(max_size=30), max_size=40),
       rows=hs.integers(1, 7))
def test_any_mix_of_lines_in_any_batch_size_gives_the_old_rows(tmp_path, picks, stamps, rows):
    """Lines picked from the generated log in any order, some with arbitrary timestamps, written in
    batches of any size: the same rows, batch for batch concatenated."""
    log = tmp_path / "pool.jsonl"
    if not log.exists():
        generated_log(log, 400)
    pool = log.read_bytes().splitlines(keepends=True)
    chosen = []
    for k, i in enumerate(picks):
        line = pool[i % len(pool)]
        if k < len(stamps):
            try:
                obj = json.loads(line)
                obj["timestamp"] = stamps[k]
                line = json.dumps(obj).encode() + b"\n"
            except ValueError:
                pass
        chosen.append(line)
    lines = _lines(b"".join(chosen))
    batches = list(store_batch.check_batches("s", "p", lines, CheckOptions(), store_schema.STORE_VERSION, rows=rows))
    new = {name: pa.concat_tables([b[name] for b in batches]) if batches else schema.empty_table()
           for name, schema in store_schema.TABLES.items()}
    _assert_same(new, _reference_tables("s", "p", lines, CheckOptions()))


# --- timestamps ------------------------------------------------------------------------------------

_moments = hs.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31))


@hs.composite
def _stamps(draw) -> str | None:
    """Timestamps of the usual shape, of shapes pandas reads otherwise, and text that is none."""
    moment = draw(_moments)
    kind = draw(hs.sampled_from(["Z", "offset", "naive", "fraction", "date", "space", "odd", "text", "none",
                                 "bad-offset", "lower", "nanos"]))
    base = moment.strftime("%Y-%m-%dT%H:%M:%S").rjust(19, "0")
    if kind == "Z":
        return base + "Z"
    if kind == "offset":
        minutes = draw(hs.integers(-23 * 60 - 59, 23 * 60 + 59))
        sign = "-" if minutes < 0 else "+"
        return f"{base}{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    if kind == "naive":
        return base
    if kind == "fraction":
        return f"{base}.{draw(hs.integers(0, 999999)):0{draw(hs.integers(1, 6))}d}"[:27] + draw(hs.sampled_from(["", "Z", "+01:00"]))
    if kind == "nanos":
        return f"{base}.{draw(hs.integers(0, 10**9 - 1)):09d}Z"
    if kind == "date":
        return base[:10]
    if kind == "space":
        return base.replace("T", " ") + "Z"
    if kind == "lower":
        return base.replace("T", "t") + "z"
    if kind == "bad-offset":
        return base + draw(hs.sampled_from(["+24:00", "+05:60", "+5:00", "+0500", "-99:99"]))
    if kind == "odd":  # a digit out of range somewhere
        at = draw(hs.sampled_from([5, 8, 11, 14, 17]))
        return base[:at] + draw(hs.sampled_from(["13", "32", "24", "60", "99", "00"])) + base[at + 2:] + "Z"
    if kind == "none":
        return None
    return draw(hs.text(max_size=25))


@settings(max_examples=500, deadline=None)
@given(stamps=hs.lists(_stamps(), max_size=20))
def test_timestamps_are_read_as_pandas_reads_them(stamps):
    assert store_batch._times(stamps).to_pylist() == _reference_times(stamps).to_pylist()


def test_the_usual_timestamps_need_no_pandas():
    stamps = ["2026-09-01T08:00:00Z", "2026-09-01T08:00:00.5+02:00", "2026-09-01T08:00:00", None]
    assert all(store_batch._micros(s) is not store_batch._UNUSUAL for s in stamps)
    assert store_batch._times(stamps).to_pylist() == [
        datetime(2026, 9, 1, 8), datetime(2026, 9, 1, 6, 0, 0, 500000), datetime(2026, 9, 1, 8), None]
    assert store_batch._micros("last tuesday") is store_batch._UNUSUAL
    start = datetime(2026, 1, 1, tzinfo=timezone.utc) - timedelta(microseconds=1)
    assert store_batch._micros(start.isoformat()) == (start - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(
        microseconds=1)


# --- check's summary -------------------------------------------------------------------------------


def test_the_summary_and_unreadable_lines_are_duckdbs(tmp_path):
    """Two logs (one given twice), summed with pyarrow as DuckDB sums them; also a part without the
    newest reason code's column, as an older citecheck wrote it."""
    a = generated_log(tmp_path / "a.jsonl", 300)
    b = generated_log(tmp_path / "b.jsonl", 150, seed=3)
    store = Store(tmp_path / "s", create=True)
    for log in (a, b):
        store.check_log(str(log), CheckOptions())
    for sources in ([source_id(str(a)), source_id(str(b))], [source_id(str(b)), source_id(str(a)), source_id(str(b))],
                    [source_id(str(b))]):
        query = StoreQuery(store, sources)
        assert store.summary(sources) == query.summary()
        assert store.unreadable(sources) == query.unreadable()
        query.close()
    assert store.summary([source_id(str(a))]).unreadable_lines > 0
    newest = reason_codes.ALL_REASONS[-1]
    for path in store.files("answers"):
        pq.write_table(pq.read_table(path).drop_columns([newest]), path)
    fresh = Store(tmp_path / "s")
    sources = [source_id(str(a)), source_id(str(b))]
    query = StoreQuery(fresh, sources)
    assert fresh.summary(sources) == query.summary()
    assert fresh.summary(sources).reasons[newest] == 0
    query.close()


def test_check_store_counts_the_citations_that_are_not_verifiable_as_check_does(tmp_path):
    """A format that gives no quote (OpenAI's url citations): its citations are neither verified
    nor failed; ``check --store`` and the store's report count them as a plain ``check`` does."""
    import io
    import json

    from citecheck.cli.main import main

    data = ROOT / "tests" / "data" / "importers"
    log = tmp_path / "openai.jsonl"
    for response, request in (("openai_web_response.json", "openai_web_request.json"),):
        assert main(["import", "openai", "--response", str(data / response), "--request", str(data / request),
                     "--out", str(log)], io.StringIO(), io.StringIO()) == 0

    def summary(*argv) -> dict:
        out = io.StringIO()
        main(["check", str(log), "--format", "json", *argv], out, io.StringIO())
        return json.loads(out.getvalue().splitlines()[-1])

    plain, stored = summary(), summary("--store", str(tmp_path / "store"))
    assert plain["citations_not_verifiable"] >= 1
    assert {k: v for k, v in stored.items() if k != "inputs"} == {k: v for k, v in plain.items() if k != "inputs"}
    store = Store(tmp_path / "store")
    sources = [source_id(str(log))]
    assert store.summary(sources).not_verifiable == StoreQuery(store, sources).summary().not_verifiable == \
        plain["citations_not_verifiable"]


# --- pandas is not loaded to write a store --------------------------------------------------------------

def test_check_store_loads_no_pandas_and_pyarrow_still_reads_pandas_afterwards(tmp_path):
    """pyarrow imports pandas at its first conversion only to ask whether a value is a pandas object
    (0.12 s of a 1.2 s check of 20,000 answers); ``check --store`` spares it (batch.spare_pandas), and
    once pyarrow is asked for pandas itself (``from_pandas``), a later use of pandas with pyarrow in
    the process reads a missing value as null.  (Before that, a Series given to ``pa.array`` would be
    read as a plain sequence, its NaN kept: spare_pandas says so, and the command gives it none.)"""
    import subprocess
    import sys

    code = ("import sys; from citecheck.cli.main import main; code = main(sys.argv[1:]); "
            "print('pandas loaded:', 'pandas' in sys.modules); import pandas as pd, pyarrow as pa; "
            "print('nulls:', pa.Table.from_pandas(pd.DataFrame({'x': [1.0, None]})).column('x').null_count, "
            "pa.array(pd.Series([1.0, None])).null_count); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code, "check", str(LOG), "--store", str(tmp_path / "s"), "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-2:] == ["pandas loaded: False", "nulls: 1 1"], done.stdout[-500:]


def test_spare_pandas_changes_nothing_where_pandas_is_loaded():
    import pandas as pd

    store_batch.spare_pandas()
    assert pa.array(pd.Series([1.0, None])).null_count == 1  # (a pandas NaN read as null, as pyarrow does)
