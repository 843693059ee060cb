"""Issue #11: one bad line never stops a log, whatever it holds (lone surrogates, 5,000-digit
integers, deep nesting, huge lines), and the commands print every other line's result."""

import io
import json
from pathlib import Path

import pytest
from citecheck.checking.checker import check_answer
from citecheck.cli.main import main
from citecheck.contract.log import MAX_DEPTH, MAX_LINE_BYTES, parse_lines, read_log
from citecheck.errors import RecordError
from citecheck.labelling import labels
from citecheck.text.sentences import split_sentences
from citecheck.web.settings import DEFAULT_LOG

ROOT = Path(__file__).resolve().parent.parent
LINES = (ROOT / "sample_data" / "answers.jsonl").read_text(encoding="utf-8").splitlines()
HOLE = "\u2063HOLE\u2063"
HUGE = "1" + "0" * 5000


def marker_line() -> dict:
    return next(json.loads(s) for s in LINES if '"kind": "marker"' in s and '"quote"' in s)


def with_raw(path: tuple, raw: str, obj: dict | None = None) -> str:
    """The sample's marker line with the field at ``path`` replaced by the raw JSON text ``raw``."""
    obj = obj or marker_line()
    target = obj
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = HOLE
    return json.dumps(obj, ensure_ascii=False).replace(json.dumps(HOLE, ensure_ascii=False), raw)


def log_with(tmp_path, middle: str | bytes) -> Path:
    """good line, ``middle``, good line."""
    mid = middle.encode("utf-8") if isinstance(middle, str) else middle
    path = tmp_path / "log.jsonl"
    path.write_bytes(LINES[2].encode() + b"\n" + mid + b"\n" + LINES[3].encode() + b"\n")
    return path


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def only_bad_middle(path: Path) -> RecordError:
    items = [item for _, item in read_log(path)]
    assert len(items) == 3
    assert not isinstance(items[0], RecordError) and not isinstance(items[2], RecordError)
    bad = items[1]
    assert isinstance(bad, RecordError) and bad.line == 2 and bad.file == str(path)
    return bad


def assert_commands_hold(path: Path) -> None:
    """check and report, text and JSON: exit 4 (an unreadable line), the two good answers checked."""
    code, out, err = run("check", str(path), "--format", "json")
    assert code & 4 and "Traceback" not in err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["record"] for r in records] == ["answer", "error", "answer", "summary"]
    assert records[1]["line"] == 2
    code, out, err = run("check", str(path))
    assert code & 4 and f"{path}:2:" in err
    code, out, _ = run("report", str(path), "--format", "json")
    assert code == 4 and json.loads(out)
    code, out, _ = run("report", str(path))
    assert code == 4 and out


SURROGATE_FIELDS = [("answer_id",), ("question",), ("model",), ("prompt_version",), ("timestamp",),
                    ("chunks", 0, "text"), ("chunks", 0, "chunk_id"), ("citations", 0, "quote")]


@pytest.mark.parametrize("path", SURROGATE_FIELDS, ids=lambda p: ".".join(map(str, p)))
@pytest.mark.parametrize("raw", ['"\\ud800"', '"a\\udfffb"'])
def test_a_lone_surrogate_is_one_unreadable_line_naming_its_field(tmp_path, path, raw):
    log = log_with(tmp_path, with_raw(path, raw))
    bad = only_bad_middle(log)
    want = "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(path))
    assert bad.field == want
    assert "lone surrogate" in bad.message
    assert_commands_hold(log)


def test_a_lone_surrogate_in_a_key_or_an_extra_field_is_refused_too(tmp_path):
    obj = marker_line()
    line = json.dumps(obj)[:-1] + ', "trace": {"\\udc00x": 1}}'
    assert only_bad_middle(log_with(tmp_path, line)).field == "trace.\udc00x"
    line = json.dumps(obj)[:-1] + ', "tags": ["ok", "\\ud83d"]}'
    assert only_bad_middle(log_with(tmp_path, line)).field == "tags[1]"


@pytest.mark.parametrize("path", [("chunks", 0, "start"), ("citations", 0, "quote_start"), ("trace",),
                                  ("chunks", 0, "retrieval_score"), ("log_version",)], ids=lambda p: ".".join(map(str, p)))
@pytest.mark.parametrize("raw", [HUGE, "-" + HUGE])
def test_an_integer_of_5000_digits_is_one_unreadable_line(tmp_path, path, raw):
    log = log_with(tmp_path, with_raw(path, raw))
    bad = only_bad_middle(log)
    assert bad.field == "(json)" and "4,300 digits" in bad.message
    assert_commands_hold(log)


def test_5000_digit_markers_and_numbers_in_an_answer_are_checked():
    obj = marker_line()
    for text in (f"It is so [{HUGE}].", f"Casual leave is {HUGE} days [1].", "It is [1, " + "1" * 5000 + "]."):
        obj["answer"] = text
        result = check_answer(next(item for _, item in parse_lines("x", [json.dumps(obj)])))
        assert result.sentences
    obj["answer"] = f"It is so [{HUGE}]."
    result = check_answer(next(item for _, item in parse_lines("x", [json.dumps(obj)])))
    assert [c.reasons for c in result.citations if c.answer_start == 9] == [("marker_out_of_range",)]
    obj["answer"] = f"Casual leave is {HUGE} days [1]."
    result = check_answer(next(item for _, item in parse_lines("x", [json.dumps(obj)])))
    assert result.sentences[0].unsupported_numbers == (HUGE,)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 50, 1000, 2000, 100_000])
@pytest.mark.parametrize("path", [("trace",), ("chunks", 0, "start"), ("model",), ("citations", 0, "locator")],
                         ids=lambda p: ".".join(map(str, p)))
def test_deep_nesting_is_one_unreadable_line(tmp_path, depth, path):
    log = log_with(tmp_path, with_raw(path, "[" * depth + "]" * depth))
    bad = only_bad_middle(log)
    assert bad.field in ("(json)", ".".join(map(str, path)).replace(".0.", "[0]."))
    assert_commands_hold(log)


def test_nesting_up_to_the_limit_is_read(tmp_path):
    depth = MAX_DEPTH - 1  # the line's object is level 1
    items = [item for _, item in read_log(log_with(tmp_path, with_raw(("trace",), "[" * depth + "]" * depth)))]
    assert not any(isinstance(i, RecordError) for i in items)
    code, out, _ = run("check", str(tmp_path / "log.jsonl"), "--format", "json")
    assert code == 0
    deeper = with_raw(("trace",), "[" * (depth + 1) + "]" * (depth + 1))
    bad = only_bad_middle(log_with(tmp_path, deeper))
    assert bad.field == "trace" and f"{MAX_DEPTH} levels" in bad.message


def test_a_line_over_the_limit_is_skipped_without_holding_it_and_the_next_lines_are_read(tmp_path):
    obj = marker_line()
    obj["answer"] = "Casual leave is 8 days per year. " * (MAX_LINE_BYTES // 33 + 10)
    log = log_with(tmp_path, json.dumps(obj))
    bad = only_bad_middle(log)
    assert bad.field == "(line)" and f"{MAX_LINE_BYTES:,} bytes" in bad.message
    junk = log_with(tmp_path, b"x" * (MAX_LINE_BYTES + 5))
    assert only_bad_middle(junk).message.startswith(f"line is {MAX_LINE_BYTES + 6:,} bytes long")


def test_cr_only_line_ends_are_line_ends(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes("\r".join(LINES[:4]).encode() + b"\r")
    items = list(read_log(path))
    assert [n for n, _ in items] == [1, 2, 3, 4]
    assert not any(isinstance(i, RecordError) for _, i in items)


def test_a_truncated_line_names_the_column():
    line = LINES[1][: len(LINES[1]) // 2]
    (_, bad), = parse_lines("x", [line])
    assert bad.field == "(json)" and f"column {len(line) + 1}" in bad.message


def test_a_run_of_marker_only_lines_joins_the_sentence_before():
    text = "Leave is 8 days.\n[1]\n[2]\n[3]\nNext one."
    sentences = split_sentences(text)
    assert [s.text for s in sentences] == ["Leave is 8 days.\n[1]\n[2]\n[3]", "Next one."]
    assert all(text[s.start:s.end] == s.text for s in sentences)


def test_abbreviations_are_found_at_the_end_of_a_long_unbroken_text():
    text = "x" * 100 + " Dr. Smith agrees. " + "Z" * 150 + ". I.e. Ok. Done."
    assert [s.text for s in split_sentences(text)] == [
        "x" * 100 + " Dr. Smith agrees.", "Z" * 150 + ".", "I.e. Ok.", "Done."]


# --- labels ----------------------------------------------------------------------------------


def _label_record(**change) -> dict:
    record = {"labels_version": 1, "item": "a-001#s1#c1", "answer_id": "a-001", "sentence": 1, "citation": 1,
              "chunk_id": "c", "fingerprint": "f", "label": "supported", "note": "", "reviewer": "ana",
              "at": "2026-12-02T13:45:10.123Z", "citecheck": "0.1.0"}
    record.update(change)
    return record


@pytest.mark.parametrize("change", [{"reviewer": 7}, {"reviewer": None}, {"note": ["x"]}, {"sentence": "0"},
                                    {"sentence": True}, {"citation": 1.5}, {"at": 3}, {"reviewer": "\ud800"}])
def test_a_label_record_with_a_wrong_typed_field_is_skipped_when_read(tmp_path, change):
    path = tmp_path / "labels.jsonl"
    good = _label_record()
    path.write_text("\n".join(json.dumps(r) for r in (good, _label_record(**change), good)) + "\n")
    records, warnings = labels.read(path)
    assert len(records) == 2
    (warning,) = warnings
    assert (warning.file, warning.line, warning.field) == (str(path), 2, next(iter(change)))
    for fmt in ("csv", "jsonl"):
        code, out, err = run("labels", "export", str(path), "--log", str(DEFAULT_LOG), "--format", fmt)
        assert "Traceback" not in err and f"{path}:2: {next(iter(change))}" in err and code in (0, 4)


# --- matching citations in linear time keeps the rules --------------------------------------------

from citecheck.checking.checker import _marker_citations, _Raw, _sentences_of  # noqa: E402
from citecheck.contract.log import Citation  # noqa: E402
from helpers import answer, chunk  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _reference_marker_quotes(text: str, entries: list[Citation]) -> list:
    """The matching rule, written plainly: for each [n], the first unused entry logged inside the
    marker, else the first unused entry with no position."""
    import re

    used: set[int] = set()
    out = []
    for m in re.finditer(r"\[(\d+(?:\s*,\s*\d+)*)\]", text):
        for part in m.group(1).split(","):
            n = int(part)
            pick = next((i for i, e in enumerate(entries) if i not in used and e.marker == n and e.at is not None
                         and m.start() <= e.at < m.end()), None)
            if pick is None:
                pick = next((i for i, e in enumerate(entries) if i not in used and e.marker == n and e.at is None),
                            None)
            if pick is not None:
                used.add(pick)
            out.append((m.start(), n, None if pick is None else entries[pick].quote))
    return out


@given(st.lists(st.sampled_from(["[1]", "[2]", "[1, 2]", " x. ", "[1,1]"]), max_size=12),
       st.lists(st.tuples(st.sampled_from([1, 2, 3]), st.one_of(st.none(), st.integers(0, 40))), max_size=10))
def test_marker_entries_are_matched_by_the_rule(parts, specs):
    text = "".join(parts)
    entries = [Citation("marker", marker=n, at=at, quote=f"q{i}") for i, (n, at) in enumerate(specs)]
    raws, _ = _marker_citations(answer(text, [chunk("x")], entries))
    in_text = [(r.answer_start, r.marker, r.cited.quote) for r in raws if r.answer_end > r.answer_start]
    assert in_text == _reference_marker_quotes(text, entries)
    assert len(raws) == len(in_text) + len(entries) - sum(1 for _, _, q in in_text if q is not None)


@given(st.lists(st.sampled_from(["[1]", "[2]", "[1,2,1]", "[2, 2, 1, 1]", " x. "]), min_size=1, max_size=8),
       st.lists(st.tuples(st.sampled_from([1, 2]), st.one_of(st.none(), st.integers(0, 6))), min_size=9, max_size=30))
def test_many_entries_at_one_marker_are_matched_by_the_rule(parts, specs):
    """More entries logged inside one marker than the checker searches in turn (it queues them
    per number then): the same rule."""
    text = "".join(parts)
    entries = [Citation("marker", marker=n, at=at, quote=f"q{i}") for i, (n, at) in enumerate(specs)]
    raws, _ = _marker_citations(answer(text, [chunk("x")], entries))
    in_text = [(r.answer_start, r.marker, r.cited.quote) for r in raws if r.answer_end > r.answer_start]
    assert in_text == _reference_marker_quotes(text, entries)
    assert len(raws) == len(in_text) + len(entries) - sum(1 for _, _, q in in_text if q is not None)


@given(st.lists(st.sampled_from(["A b.", "C d!", "e", "F.\n", "[1]", " "]), max_size=30),
       st.integers(0, 200), st.integers(0, 200))
def test_span_citations_cover_the_sentences_they_overlap(parts, a, b):
    text = " ".join(parts)
    sentences = split_sentences(text)
    got = _sentences_of(_Raw("span", a, b, None, Citation("span")), sentences, [s.start for s in sentences])
    if b > a:
        assert got == [s.index for s in sentences if a < s.end and b > s.start]


@given(st.text(max_size=40), st.one_of(st.none(), st.text(max_size=10)), st.one_of(st.none(), st.text(max_size=20)))
def test_item_fingerprints_are_the_documented_digest(text, checksum_, quote):
    from citecheck.contract.log import checksum
    from citecheck.labelling.items import fingerprint, items_of

    c = chunk("Leave is 8 days.")
    c = c._replace(checksum=checksum_ if checksum_ is not None else checksum(c.text))
    body = "Leave " + text.replace("[", "(") + " [1]"
    result = check_answer(answer(body, [c], [Citation("marker", marker=1, quote=quote)]))
    for item in items_of(result):
        if item.citation is not None:
            s = result.sentences[item.sentence]
            assert item.fingerprint == fingerprint(s.text, c.checksum, quote)
