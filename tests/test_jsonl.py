"""The shared JSON-lines reader, item keys, and the folder of deliberately invalid logs."""

import io
import json
from pathlib import Path

import pytest
from citecheck.cli.main import main
from citecheck.contract.item_keys import (
    ALL_LABELS,
    CITATION_LABELS,
    UNSCORED,
    VERDICTS,
    ItemKey,
    item_key,
    parse_item_key,
)
from citecheck.contract.log import read_log
from citecheck.errors import FieldError, RecordError
from citecheck.judging import verdicts
from citecheck.labelling import labels
from citecheck.storage import lines as line_reader
from hypothesis import given
from hypothesis import strategies as st

INVALID = Path(__file__).parent / "data" / "invalid"
CASES = sorted(p.stem for p in INVALID.glob("*.jsonl"))


# --- invalid logs: each file with the errors it must produce -----------------------------------------


def _expected(name: str) -> dict:
    return json.loads((INVALID / f"{name}.expected.json").read_text(encoding="utf-8"))


def test_the_invalid_folder_has_a_case_for_each_kind_of_defect():
    assert len(CASES) >= 12
    assert all((INVALID / f"{name}.expected.json").is_file() for name in CASES)


@pytest.mark.parametrize("name", CASES)
def test_invalid_log_gives_its_errors_and_keeps_the_other_lines(name):
    path = INVALID / f"{name}.jsonl"
    got = list(read_log(path))
    errors = [dict(v.to_dict(), file=path.name) for _, v in got if isinstance(v, RecordError)]
    read = [n for n, v in got if not isinstance(v, RecordError)]
    assert {"answers_read_on_lines": read, "errors": errors} == _expected(name)


@pytest.mark.parametrize("name", CASES)
def test_check_reports_the_same_errors_in_json_and_exits_4(name):
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", str(INVALID / f"{name}.jsonl"), "--format", "json"], out, err)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    expected = _expected(name)
    errors = [(r["line"], r["field"], r["message"]) for r in records if r["record"] == "error"]
    assert errors == [(e["line"], e["field"], e["message"]) for e in expected["errors"]]
    assert records[-1]["unreadable_lines"] == len(expected["errors"])
    assert code == (4 if expected["errors"] else 0)
    for e in expected["errors"]:
        assert f"{INVALID / name}.jsonl:{e['line']}: {e['field']}: " in err.getvalue()


# --- the reader ------------------------------------------------------------------------------------


def test_a_torn_last_line_is_named_as_such_only_when_it_is_last_and_unterminated():
    torn = list(line_reader.parse_lines("f", [b'{"a": 1}\n', b'{"a": '], line_reader.expect_object))
    assert torn[0] == (1, {"a": 1}) and "probably a crash while writing" in torn[1][1].message
    middle = list(line_reader.parse_lines("f", [b'{"a": \n', b'{"a": 2}\n'], line_reader.expect_object))
    assert isinstance(middle[0][1], RecordError) and "crash" not in middle[0][1].message
    assert middle[1] == (2, {"a": 2})


def test_parse_refusals_become_errors_on_their_field():
    def parse(obj):
        obj = line_reader.expect_object(obj)
        line_reader.expect_version(obj, "thing_version", 1)
        return line_reader.expect(obj, "n", int)

    lines = [b'{"thing_version": 1, "n": 3}\n', b'{"thing_version": 2, "n": 3}\n', b'{"n": 3}\n',
             b'{"thing_version": 1, "n": true}\n', b'{"thing_version": 1}\n', b'[]\n', b'{"thing_version": true}\n']
    got = [v if not isinstance(v, RecordError) else (v.field, v.message.split(",")[0].split(" (")[0])
           for _, v in line_reader.parse_lines("f", lines, parse)]
    assert got == [3, ("thing_version", "2 is not a version this citecheck reads"),
                   ("thing_version", 'is required: add "thing_version": 1'),
                   ("n", "must be an integer"), ("n", "is required"),
                   ("(record)", "expected a JSON object"),
                   ("thing_version", "True is not a version this citecheck reads")]


def test_expect_accepts_an_integer_where_a_number_is_wanted_but_never_a_bool():
    assert line_reader.expect({"x": 2}, "x", float) == 2
    with pytest.raises(FieldError):
        line_reader.expect({"x": False}, "x", float)
    assert line_reader.expect({}, "x", str, optional=True, default="d") == "d"


def test_read_all_of_a_file_that_does_not_exist_yet_is_empty(tmp_path):
    assert line_reader.read_all(tmp_path / "labels.jsonl", line_reader.expect_object) == ([], [])


def test_now_is_utc_with_milliseconds():
    stamp = line_reader.now()
    assert stamp.endswith("Z") and len(stamp) == len("2026-12-03T09:00:00.000Z") and stamp[10] == "T"


# --- item keys and the vocabulary -------------------------------------------------------------------


ODD_IDS = ["conv-12#turn-3", "a&b", "dept/team/q 1", 'say "hi"', "it's", "#", "##s1#c2", "a#s0#c0", "é 🙂"]


@pytest.mark.parametrize("answer_id", ODD_IDS)
@pytest.mark.parametrize("citation", [0, 7, None])
def test_item_keys_round_trip_for_awkward_answer_ids(answer_id, citation):
    key = item_key(answer_id, 3, citation)
    assert parse_item_key(key) == ItemKey(answer_id, 3, citation)


@given(st.text(), st.integers(0, 10**6), st.none() | st.integers(0, 10**6))
def test_item_keys_round_trip_for_any_answer_id(answer_id, sentence, citation):
    assert parse_item_key(item_key(answer_id, sentence, citation)) == ItemKey(answer_id, sentence, citation)


@pytest.mark.parametrize("bad", ["", "a", "a#s1", "a#1#c2", "a#s1#2", "a#s#c2", "a#s1#c", "a#s-1#c2",
                                 "a#s1#c2x", "a#s١#c2"])
def test_a_string_that_is_not_an_item_key_is_refused_with_the_key_in_the_message(bad):
    with pytest.raises(ValueError) as exc:
        parse_item_key(bad)
    assert repr(bad) in str(exc.value)


def test_judge_verdicts_are_the_reviewers_citation_labels_less_cant_tell():
    assert CITATION_LABELS == (*VERDICTS, "cant_tell") and UNSCORED not in ALL_LABELS
    assert verdicts.VERDICTS is VERDICTS and labels.parse_label.__module__ == "citecheck.labelling.labels"


# --- label and verdict records are validated field by field ------------------------------------------


GOOD_LABEL = {"labels_version": 1, "item": "conv#1#s0#c1", "answer_id": "conv#1", "sentence": 0, "citation": 1,
              "chunk_id": "c1", "fingerprint": "sha256:ab", "label": "partial", "note": "", "reviewer": "ana",
              "at": "2026-12-03T09:00:00.000Z", "citecheck": "0.1.0"}


@pytest.mark.parametrize("change, field", [
    ({}, None),
    ({"sentence": "0"}, "sentence"),
    ({"citation": True}, "citation"),
    ({"label": "needs_citation"}, "label"),  # an uncited label on a citation item
    ({"item": "conv#1#s1#c1"}, "item"),  # the key disagrees with the sentence field
    ({"item": "conv#1"}, "item"),
    ({"reviewer": "  "}, "reviewer"),
    ({"reviewer": None}, "reviewer"),
    ({"labels_version": 2}, "labels_version"),
])
def test_label_records_are_checked_field_by_field(tmp_path, change, field):
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({**GOOD_LABEL, **change}) + "\n" + json.dumps(GOOD_LABEL) + "\n", encoding="utf-8")
    records, errors = labels.read(path)
    assert len(records) == (2 if field is None else 1)
    assert [(e.file, e.line, e.field) for e in errors] == ([] if field is None else [(str(path), 1, field)])


def test_verdict_records_are_checked_field_by_field(tmp_path):
    good = {"verdicts_version": 1, "item": "a#s0#c0", "verdict": "supported", "rationale": "r", "judge": "baseline",
            "prompt_version": "judge.v1", "prompt_sha256": ""}
    path = tmp_path / "verdicts.jsonl"
    lines = [good, {**good, "verdict": "cant_tell"}, {**good, "item": "a#c0"}, {**good, "cost_usd": "0.1"},
             {**good, "judge": 3}, {**good, "cost_usd": 1}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    records, errors = verdicts.read(path)
    assert [r.cost_usd for r in records] == [0.0, 1.0]
    assert [(e.line, e.field) for e in errors] == [(2, "verdict"), (3, "item"), (4, "cost_usd"), (5, "judge")]
