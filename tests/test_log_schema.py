"""Issue #17: the log's JSON Schema and the parser agree.  Lines generated from the schema are read
by the parser, and lines the parser refuses are refused by the schema, except for the differences
docs/log-format.md names ("The schema and the parser"): a start after its end, which a JSON Schema
cannot say, and the reader's limits on every line (lone surrogates, nesting, digits, length)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from citecheck.contract.log import MAX_OFFSET, parse_line
from citecheck.errors import FieldError
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

hjs = pytest.importorskip("hypothesis_jsonschema", reason="needs hypothesis-jsonschema (the test extra)")

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "core" / "citecheck" / "contract" / "schema" / "log.v1.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def _draft7(node):
    """The schema as hypothesis-jsonschema reads it: draft 7 spells ``dependentRequired`` (2019-09)
    ``dependencies``, with the same meaning for lists of names.  Validation uses the real schema."""
    if isinstance(node, dict):
        return {("dependencies" if k == "dependentRequired" else k): _draft7(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_draft7(v) for v in node]
    return node


def _with_current_hypothesis() -> None:
    """hypothesis-jsonschema 0.23.1 (the latest) still calls Hypothesis's ``many(...).more()``, which
    Hypothesis 6.1xx replaced by ``with many(...) as m: for _ in m``.  Give it the old two methods
    over the new API (only when the installed Hypothesis lacks them)."""
    from hypothesis.internal.conjecture import utils as conjecture_utils
    from hypothesis_jsonschema import _from_schema

    if hasattr(conjecture_utils.many, "more") or getattr(_from_schema.cu, "_adapted", False):
        return

    class OldMany:
        def __init__(self, data, **kwargs):
            self._many = conjecture_utils.many(data, **kwargs)
            self._many.__enter__()
            self._steps = iter(self._many)

        def more(self) -> bool:
            if next(self._steps, StopIteration) is StopIteration:
                self._many.__exit__(None)
                return False
            return True

        def reject(self, why=None) -> None:
            self._many.reject(why)

    _from_schema.cu = type("cu", (), {"many": OldMany, "_adapted": True})


_with_current_hypothesis()
_GEN = _draft7(SCHEMA)
CHUNKS = hjs.from_schema({"$defs": _GEN["$defs"], **_GEN["$defs"]["chunk"]})


def _kinds(citation: dict) -> list[dict]:
    """The citation schema once per kind: each ``if kind is K then ...`` of its ``allOf`` made the
    schema of kind K (hypothesis-jsonschema can only filter for an if/then, which is slow)."""
    base = {k: v for k, v in citation.items() if k != "allOf"}
    out = []
    for rule in citation["allOf"]:
        kind = rule["if"]["properties"]["kind"]
        out.append({"$defs": _GEN["$defs"], "allOf": [base, {"properties": {"kind": kind}}, rule["then"]]})
    return out


CITATIONS = st.one_of([hjs.from_schema(k) for k in _kinds(_GEN["$defs"]["citation"])])


@st.composite
def lines(draw):
    """A line generated from the schema, with its chunks and citations generated from theirs (left
    alone, the generator seldom makes a citation)."""
    obj = draw(hjs.from_schema(_GEN))
    obj["chunks"] = draw(st.lists(CHUNKS, max_size=3))
    citations = draw(st.lists(CITATIONS, max_size=3))
    if citations or draw(st.booleans()):
        obj["citations"] = citations
    else:
        obj.pop("citations", None)
    return obj


LINES = lines()
_LONE = re.compile("[\ud800-\udfff]")


def _list(obj: dict, key: str) -> list:
    value = obj.get(key)
    return value if isinstance(value, list) else []


def deliberate(obj: dict) -> str | None:
    """Why the parser refuses a line the schema allows (docs/log-format.md), or None."""
    for n, c in enumerate(_list(obj, "chunks")):
        if isinstance(c, dict) and _inverted(c, "start", "end"):
            return f"chunks[{n}].start"
    for n, c in enumerate(_list(obj, "citations")):
        for start, end in (("answer_start", "answer_end"), ("quote_start", "quote_end")):
            if isinstance(c, dict) and _inverted(c, start, end):
                return f"citations[{n}].{start}"
    if _LONE.search(json.dumps(obj, ensure_ascii=False)):  # (json.dumps keeps a lone surrogate as itself)
        return "(lone surrogate)"
    return None


def _inverted(obj: dict, start: str, end: str) -> bool:
    a, b = obj.get(start), obj.get(end)
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)) and a > b


def parsed(obj: dict) -> FieldError | None:
    try:
        parse_line(json.dumps(obj))
    except FieldError as exc:
        return exc
    return None


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(LINES)
def test_lines_generated_from_the_schema_are_read(obj):
    assume(VALIDATOR.is_valid(obj))  # (the draft-7 reading of dependentRequired is the same rule)
    refused = parsed(obj)
    why = deliberate(obj)
    if why is None:
        assert refused is None, f"the schema allows this line but the parser refuses it: {refused}"
    else:
        assert refused is not None and (why.startswith("(") or refused.field.startswith(why.rsplit(".", 1)[0]))


DELETE = object()
VALUES = st.one_of(
    st.just(DELETE), st.none(), st.booleans(), st.integers(-3, 3), st.integers(MAX_OFFSET - 2, MAX_OFFSET + 3),
    st.integers(2**64 - 1, 2**70), st.sampled_from([2.0, 0.5, -1.0, 1e20, 1.0]),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=4), st.sampled_from(["marker", "span", ""]),
    st.just("sha256:" + "0" * 64), st.just([]), st.just({}), st.just([{"text": "t"}]),
    st.just({"kind": "marker", "marker": 1}),
)
TOP = ["log_version", "answer_id", "question", "answer", "chunks", "citations", "timestamp", "model",
       "prompt_version", "index_snapshot", "refused", "extra"]
CHUNK = ["text", "chunk_id", "document_id", "source", "title", "section", "start", "end", "checksum",
         "retrieval_score", "rerank_score"]
CITATION = ["kind", "marker", "at", "answer_start", "answer_end", "chunk_id", "document_id", "quote",
            "quote_start", "quote_end", "label", "locator"]


@st.composite
def mutated(draw):
    """A line generated from the schema with one to three fields changed or removed."""
    obj = draw(LINES)
    for _ in range(draw(st.integers(1, 2))):
        places = [(obj, TOP)] + [(c, CHUNK) for c in _list(obj, "chunks") if isinstance(c, dict)] \
            + [(c, CITATION) for c in _list(obj, "citations") if isinstance(c, dict)]
        target, names = draw(st.sampled_from(places))
        key, value = draw(st.sampled_from(names)), draw(VALUES)
        if value is DELETE:
            target.pop(key, None)
        else:
            target[key] = value
    return obj


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_the_parser_reads_exactly_the_lines_the_schema_allows(obj):
    allowed = VALIDATOR.is_valid(obj)
    refused = parsed(obj)
    if allowed and deliberate(obj) is None:
        assert refused is None, f"the schema allows this line but the parser refuses it: {refused}"
    if not allowed:
        first = next(VALIDATOR.iter_errors(obj)).message
        assert refused is not None, f"the schema refuses this line ({first}) but the parser reads it"


LINE = {"log_version": 1, "answer_id": "a", "question": "q", "answer": "One [1].",
        "chunks": [{"text": "t", "start": 0, "end": 1}],
        "citations": [{"kind": "marker", "marker": 1, "at": 4}]}


def _line(path, value):
    obj = json.loads(json.dumps(LINE))
    target = obj
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return obj


@pytest.mark.parametrize("path, value, field", [
    (("citations", 0, "answer_start"), "x", "citations[0].answer_start"),  # a span's field on a marker
    (("citations", 0, "answer_start"), None, "citations[0].answer_start"),
    (("citations", 0, "chunk_id"), 5, "citations[0].chunk_id"),
    (("citations", 0, "quote_start"), None, "citations[0].quote_start"),
    (("chunks", 0, "start"), None, "chunks[0].start"),
    (("chunks", 0, "end"), 2**64, "chunks[0].end"),
    (("citations", 0, "at"), 2**63, "citations[0].at"),
    (("citations", 0, "marker"), 2**64, "citations[0].marker"),
])
def test_lines_the_schema_refuses_are_refused_naming_the_field(path, value, field):
    obj = _line(path, value)
    assert not VALIDATOR.is_valid(obj)
    refused = parsed(obj)
    assert refused is not None and refused.field == field
    assert "1e+" not in refused.message and "1.8" not in refused.message  # a large integer is said as one


@pytest.mark.parametrize("path, value", [
    (("citations", 0, "at"), MAX_OFFSET),  # the largest offset
    (("citations", 0, "marker"), 2.0),  # an integer to JSON Schema
    (("log_version",), 1.0),
    (("chunks", 0, "checksum"), "md5:abc"),  # read; the checksum check fails it
])
def test_lines_the_schema_allows_are_read(path, value):
    obj = _line(path, value)
    assert VALIDATOR.is_valid(obj)
    assert parsed(obj) is None


def test_a_start_after_its_end_is_the_one_documented_difference():
    obj = _line(("chunks", 0, "start"), 5)
    assert VALIDATOR.is_valid(obj)  # a JSON Schema cannot compare two fields
    assert parsed(obj).field == "chunks[0].start"
    doc = (ROOT / "docs" / "log-format.md").read_text(encoding="utf-8")
    assert "## The schema and the parser" in doc and "start after its end" in doc
