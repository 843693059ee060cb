"""The fast reading of a log line (msgspec into typed records, core/citecheck/contract/log_line.py
and ``fast_answer`` in contract/log.py) against the careful one (orjson, then ``parse_answer``):
on every line the fast path either gives the very Answer the careful path gives, or nothing, and
the careful path then reads the line (issue #36).  Lines are the bench generator's, the sample's,
the fuzz families' and hypothesis mutations of them, field by field and byte by byte; the check
report made through each reader is compared byte for byte."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from citecheck.checking.checker import check_answer
from citecheck.contract.log import FastReader, fast_answer, parse_answer, parse_line, read_log
from citecheck.errors import FieldError, RecordError
from citecheck.reports.check_report import answer_record, error_record, report_bytes
from citecheck.storage import lines as line_reader
from fuzzlogs import cases
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "answers.jsonl"
sys.path.insert(0, str(ROOT / "bench"))
from bench_check import make_answer  # noqa: E402


def careful(raw: bytes):
    try:
        return parse_line(raw)
    except (FieldError, ValueError) as exc:
        return exc


def assert_same(raw: bytes) -> bool:
    """The fast path's Answer is the careful path's (types too: ``repr`` tells 3 from 3.0); True
    when the fast path took the line."""
    fast = fast_answer(raw)
    if fast is None:
        return False
    old = careful(raw)
    assert not isinstance(old, Exception), (raw[:300], old)
    assert repr(fast) == repr(old), raw[:300]
    return True


def generated(n: int, seed: int = 5) -> list[bytes]:
    rng = random.Random(seed)
    return [json.dumps(make_answer(i, rng)).encode() + b"\n" for i in range(n)]


def test_the_bench_answers_take_the_fast_path_and_give_the_careful_answer():
    lines = generated(60)
    assert all(assert_same(raw) for raw in lines)
    assert all(fast_answer(raw) == parse_line(raw) for raw in lines)


def test_sample_and_fuzz_lines_give_the_careful_answer_or_go_the_careful_way():
    lines = [line.encode() for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines += [raw for case in cases(full=True) if case.kind == "file" for raw in case.data.splitlines(keepends=True)
              if raw.strip()]
    lines += generated(5)
    taken = [assert_same(raw) for raw in lines]
    assert any(taken) and not all(taken)  # (both paths are exercised)


# A value put into a field; RAW marks JSON text the standard library does not write.
RAW = "@@raw:"
VALUES = [
    "del", None, 0, -1, 1, 3, 1.0, 3.0, 2.5, True, False, "x", "", "\u00e9\u0301", [], {}, {"a": 1}, [1, [2]],
    2**60, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**30, -(2**63) + 1, -(2**63), -(2**63) - 1, -(2**64),
    RAW + "1e400", RAW + "-0", RAW + "-0.0", RAW + "NaN", RAW + '"\\ud800"', RAW + '"\\ud83d\\ude00"',
    RAW + "1E2", RAW + "18446744073709551616",
]
TOP = ["log_version", "answer_id", "question", "answer", "chunks", "citations", "timestamp", "model",
       "prompt_version", "index_snapshot", "refused", "extra_field"]
CHUNK = ["chunk_id", "document_id", "source", "title", "section", "text", "start", "end", "checksum",
         "retrieval_score", "rerank_score", "extra_field"]
CITATION = ["kind", "marker", "at", "quote", "quote_start", "quote_end", "label", "locator", "answer_start",
            "answer_end", "chunk_id", "document_id", "extra_field"]
edits = st.lists(st.one_of(
    st.tuples(st.just("top"), st.sampled_from(TOP), st.integers(0, 4), st.sampled_from(VALUES)),
    st.tuples(st.just("chunk"), st.sampled_from(CHUNK), st.integers(0, 4), st.sampled_from(VALUES)),
    st.tuples(st.just("citation"), st.sampled_from(CITATION), st.integers(0, 9),
              st.sampled_from([*VALUES, "marker", "span"])),
), max_size=4)


def _edited(obj: dict, changes) -> bytes:
    raws: dict[str, str] = {}
    for where, key, i, value in changes:
        target = obj if where == "top" else None
        items = obj.get("chunks" if where == "chunk" else "citations")
        if where != "top" and type(items) is list and items:
            target = items[i % len(items)]
        if type(target) is not dict:
            continue
        if value == "del":
            target.pop(key, None)
        elif isinstance(value, str) and value.startswith(RAW):
            token = f"@@{len(raws)}@@"
            raws[token] = value[len(RAW):]
            target[key] = token
        else:
            target[key] = json.loads(json.dumps(value))
    text = json.dumps(obj, ensure_ascii=False)
    for token, raw in raws.items():
        text = text.replace(f'"{token}"', raw)
    return text.encode("utf-8", "surrogatepass") + b"\n"


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 10_000), edits)
def test_edited_fields_give_the_careful_answer_or_go_the_careful_way(seed, changes):
    obj = make_answer(seed, random.Random(seed))
    obj["chunks"] = obj["chunks"][:3]
    obj["citations"] = obj["citations"][:4]
    for c in obj["citations"]:
        c["marker"] = min(c["marker"], 3)
    assert_same(_edited(obj, changes))


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 10_000), st.lists(st.tuples(st.integers(0, 10**6), st.binary(max_size=3),
                                                  st.integers(0, 3)), min_size=1, max_size=3))
def test_edited_bytes_give_the_careful_answer_or_go_the_careful_way(seed, changes):
    raw = bytearray(json.dumps(make_answer(seed, random.Random(seed)), ensure_ascii=seed % 2 == 0).encode() + b"\n")
    for at, data, cut in changes:
        at %= len(raw)
        raw[at:at + cut] = data
    assert_same(bytes(raw))


def _report(items, name: str) -> bytes:
    out = []
    for line, item in items:
        out.append(report_bytes(error_record(item) if isinstance(item, RecordError)
                                else answer_record(check_answer(item), name, line)))
    return b"".join(out)


def test_the_check_report_is_the_same_bytes_through_either_reader(tmp_path):
    """The bench answers, the sample's and malformed lines in one log: the report made from
    :func:`read_log` (fast path first) is the one made from the careful reader alone."""
    lines = generated(40, seed=9)
    lines += [line.encode() + b"\n" for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines += [raw if raw.endswith(b"\n") else raw + b"\n" for case in list(cases())[:300] if case.kind == "file"
              for raw in case.data.splitlines(keepends=True)]
    random.Random(3).shuffle(lines)
    log = tmp_path / "mixed.jsonl"
    log.write_bytes(b"".join(lines))
    fast = _report(read_log(log), str(log))
    slow = _report(line_reader.read_records(log, parse_answer), str(log))
    assert fast == slow
    assert fast.count(b'"record":"error"') > 10 and fast.count(b'"record":"answer"') > 50


def test_a_log_of_another_shape_is_read_the_careful_way_with_few_tries_of_the_fast_one():
    """Lines with fields the format does not name (as the pipeline writes) go the careful way; the
    fast path is tried less and less often while it misses, and again at once after a hit."""
    tried: list[bool] = []

    def counting(raw: bytes):
        found = fast_answer(raw)
        tried.append(found is not None)
        return found

    fast = FastReader(counting)
    other = [line.encode() for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()] * 20
    assert all(fast(raw) is None for raw in other)
    assert 0 < len(tried) < len(other) // 8
    taken = [fast(raw) is not None for raw in generated(70)]
    assert taken == sorted(taken) and taken[-1]  # back on the fast path after its wait, and there to stay


def test_the_store_reads_a_line_as_read_log_does_and_takes_the_fast_path(tmp_path, monkeypatch):
    """``answer_of`` (the checked store's writer, its Dask partitions, its search index and its readers
    of one answer by offset) gives, line by line, what ``read_log`` gives for the file, and decodes
    the usual line through msgspec as ``read_log`` does (it read such lines the careful way only,
    orjson then ``parse_answer``, and so made the store 0.3 s slower per 20,000 answers)."""
    from citecheck.contract import log as log_module
    from citecheck.contract.log import answer_of

    fuzz = [raw for case in cases(full=True) if case.kind == "file" for raw in case.data.splitlines(keepends=True)]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"".join(raw if raw.endswith((b"\n", b"\r")) else raw + b"\n" for raw in generated(40) + fuzz))
    expected = [(n, repr(record)) for n, record in read_log(path)]
    taken = []
    monkeypatch.setattr(log_module, "fast_answer", lambda raw: taken.append(1) or fast_answer(raw))
    with path.open("rb") as handle:
        got = [(line.number, repr(record)) for line in line_reader.numbered_lines(handle)
               if (record := answer_of(str(path), line)) is not None]
    assert got == expected
    assert len(taken) >= 40  # (every line of the usual shape went the fast way first)
