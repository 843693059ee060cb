import json
from pathlib import Path

import jsonschema
import pytest
from citecheck.checking.files import check_options
from citecheck.contract.log import LOG_VERSION, answer_to_dict, dumps, parse_line, read_log
from citecheck.errors import FieldError, RecordError
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "core" / "citecheck" / "contract" / "schema" / "log.v1.schema.json").read_text())
SAMPLE = ROOT / "sample_data" / "answers.jsonl"


def good() -> dict:
    return json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])


def test_every_sample_line_round_trips_and_matches_the_schema():
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        jsonschema.validate(obj, SCHEMA)
        assert answer_to_dict(parse_line(line)) == obj


def _set(obj, path, value):
    *parents, last = path
    for key in parents:
        obj = obj[key]
    if value is KeyError:
        del obj[last]
    else:
        obj[last] = value


BAD = [
    (("log_version",), KeyError, "log_version"),
    (("log_version",), 2, "log_version"),
    (("answer_id",), KeyError, "answer_id"),
    (("answer_id",), 7, "answer_id"),
    (("chunks",), "not a list", "chunks"),
    (("chunks", 0, "text"), KeyError, "chunks[0].text"),
    (("chunks", 0, "start"), -1, "chunks[0].start"),
    (("chunks", 0, "end"), KeyError, "chunks[0].start"),
    (("chunks", 1, "checksum"), 12, "chunks[1].checksum"),
    (("citations", 0, "kind"), "footnote", "citations[0].kind"),
    (("citations", 0, "quote_start"), "3", "citations[0].quote_start"),
    (("refused",), "no", "refused"),
]


@pytest.mark.parametrize("path, value, field", BAD)
def test_bad_fields_are_named_and_the_schema_agrees(path, value, field):
    obj = good()
    _set(obj, path, value)
    with pytest.raises(FieldError) as exc:
        parse_line(json.dumps(obj))
    assert exc.value.field == field
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(obj, SCHEMA)


def test_version_error_says_what_to_do():
    obj = good()
    obj["log_version"] = 2
    with pytest.raises(FieldError, match="reads version 1"):
        parse_line(json.dumps(obj))


def test_read_log_reports_bad_lines_and_keeps_the_rest(tmp_path):
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()[:3]
    broken = json.loads(lines[1])
    del broken["question"]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([lines[0], "{not json", json.dumps(broken), "", lines[2], lines[0][:40]]),
                    encoding="utf-8")
    items = list(read_log(path))
    errors = [(n, i.field) for n, i in items if isinstance(i, RecordError)]
    assert errors == [(2, "(json)"), (3, "question"), (6, "(json)")]
    assert [n for n, i in items if not isinstance(i, RecordError)] == [1, 5]
    assert str(items[1][1]).startswith(f"{path}:2: (json): not valid JSON")


def test_non_utf8_is_reported_not_raised(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(SAMPLE.read_bytes().splitlines()[0] + b"\n\xff\xfe broken\n")
    items = list(read_log(path))
    assert isinstance(items[-1][1], RecordError) and items[-1][1].field == "(encoding)"


@given(st.text(), st.text())
def test_any_text_round_trips(question, answer_text):
    obj = good()
    obj["question"], obj["answer"] = question, answer_text
    parsed = parse_line(json.dumps(obj))
    assert (parsed.question, parsed.answer) == (question, answer_text)
    assert parse_line(dumps(parsed)) == parsed
    assert LOG_VERSION == obj["log_version"]


def test_uploaded_log_reports_bad_lines_like_a_file():
    from citecheck.labelling import dataset

    lines = SAMPLE.read_bytes().splitlines()
    data = dataset.load_bytes("upload.jsonl", lines[0] + b"\n{bad\n\n" + lines[1] + b"\n")
    assert [r.answer.answer_id for r in data.results] == ["a-001", "a-002"]
    assert [(e.file, e.line, e.field) for e in data.errors] == [("upload.jsonl", 2, "(json)")]
    assert dataset.load_bytes("x.jsonl", b"\xff").errors[0].field == "(encoding)"


def test_dataset_checks_on_demand_and_agrees_with_checking_everything():
    from citecheck.checking.checker import CheckOptions, check_answer
    from citecheck.contract.corpus import Corpus
    from citecheck.labelling import dataset
    from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG

    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    assert len(data) == 48 and data._checked == {}  # parsing checks nothing
    assert data.get("a-039").answer.answer_id == "a-039" and list(data._checked) == [38]
    options = CheckOptions(corpus=Corpus(DEFAULT_CORPUS))
    expected = [check_answer(a, options) for _, a in read_log(DEFAULT_LOG)]
    assert [r.tally for r in data.results] == [r.tally for r in expected]
    assert data.get("a-039") is data.results[38]  # the one checked first is reused
    assert data.items("a-001") == data.items_by_answer[0]


def test_unknown_fields_are_kept_even_on_a_line_with_few_known_fields():
    """A line with only the required fields plus one of its own keeps that field in ``extra``
    (a shortcut once assumed a line with 11 fields or fewer had none of its own)."""
    line = '{"log_version": 1, "answer_id": "a", "question": "q", "answer": "x", "chunks": [], "mine": {"k": 1}}'
    assert parse_line(line).extra == {"mine": {"k": 1}}
    assert parse_line(line.replace(', "mine": {"k": 1}', "")).extra == {}


@pytest.mark.parametrize("path, value", [
    (("log_version",), True),  # true is not 1
    (("citations",), None),
    (("citations",), ""),
    (("citations",), {}),
])
def test_lines_the_schema_refuses_the_parser_refuses_too(path, value):
    obj = good()
    _set(obj, path, value)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(obj, SCHEMA)
    with pytest.raises(FieldError) as caught:
        parse_line(json.dumps(obj))
    assert caught.value.field == path[-1]


def test_citations_left_out_is_no_citations_for_schema_and_parser():
    obj = good()
    del obj["citations"]
    jsonschema.validate(obj, SCHEMA)
    assert parse_line(json.dumps(obj)).citations == ()


def test_a_marker_at_null_is_refused_by_schema_and_parser():
    line = next(json.loads(x) for x in SAMPLE.read_text(encoding="utf-8").splitlines()
                if any(c.get("kind") == "marker" for c in json.loads(x).get("citations", [])))
    n = next(i for i, c in enumerate(line["citations"]) if c.get("kind") == "marker")
    line["citations"][n]["at"] = None
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(line, SCHEMA)
    with pytest.raises(FieldError) as caught:
        parse_line(json.dumps(line))
    assert caught.value.field == f"citations[{n}].at"
