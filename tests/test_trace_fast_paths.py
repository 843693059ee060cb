"""The quick paths of the trace readers (issue #33's speed targets) against the careful paths
beside them, on the same generated inputs: each quick path gives what the careful one gives, or
steps aside (None) for the careful one to read and name what is wrong.

- ``plain_key_values`` / ``named_key_values``: OTLP attribute lists.
- ``quick_span`` / ``span_from_otlp``: one OTLP span.
- ``_flattened_documents`` / ``flattened_items``: flattened retrieval documents, as ``document`` reads them.
- ``_lines`` / ``bytes.splitlines``: the lines of an OTLP JSON-lines file, read where they lie.
- ``typed_spans`` (an export decoded by msgspec into typed records) / ``spans_from_request``
  (the same export decoded into dicts): one OTLP export line.
- ``span_documents`` reads the same documents, and ``span_value`` the same values after it, whether
  or not a span's attribute tree was built first (it now builds it only when it can matter).
"""

from __future__ import annotations

import base64
import json

from citecheck.errors import FieldError
from citecheck.importers.otlp_json import decode_export
from citecheck.importers.spans import (
    Span,
    _lenient,
    _lines,
    flattened_items,
    named_key_values,
    plain_key_values,
    quick_span,
    read_otlp,
    span_from_otlp,
    span_tree,
    span_value,
    spans_from_request,
    typed_spans,
)
from citecheck.importers.traces import _flattened_documents, document, span_documents
from hypothesis import given, settings
from hypothesis import strategies as st

_WORDS = st.sampled_from(["a", "b", "0", "1", "01", "x.y", "document", "", " 1", "\u00e9", "[1]"])
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-5, 2**70), st.floats(allow_nan=True), _TEXT)


def _any_value():
    """An OTLP AnyValue in every form writers use, well formed or not."""
    leaf = st.one_of(
        st.builds(lambda t: {"stringValue": t}, _TEXT),
        st.builds(lambda t: {"string_value": t}, _TEXT),
        st.builds(lambda t, k: {"stringValue": t, k: 1}, st.one_of(_TEXT, st.none()), st.sampled_from(["intValue", "x"])),
        st.builds(lambda v: {"intValue": v}, st.one_of(st.integers(), st.sampled_from(["12", "x", " 3", "1.5"]))),
        st.builds(lambda v: {"doubleValue": v}, st.one_of(st.floats(), st.sampled_from(["1.5", "nan", "x"]))),
        st.builds(lambda v: {"boolValue": v}, _SCALAR),
        st.builds(lambda v: {"bytesValue": v}, _SCALAR),
        st.just({}), _SCALAR,
    )
    return st.recursive(leaf, lambda inner: st.one_of(
        st.builds(lambda vs: {"arrayValue": {"values": vs}}, st.lists(inner, max_size=3)),
        st.builds(lambda kvs: {"kvlistValue": {"values": [{"key": k, "value": v} for k, v in kvs]}},
                  st.lists(st.tuples(_TEXT, inner), max_size=3))), max_leaves=6)


_KEY_VALUE = st.one_of(
    st.builds(lambda k, v: {"key": k, "value": v}, st.one_of(_TEXT, _WORDS), _any_value()),
    st.builds(lambda k: {"key": k}, _TEXT),
    st.builds(lambda k, v: {"key": k, "value": v}, st.one_of(st.integers(), st.none()), _any_value()),
    _SCALAR,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_KEY_VALUE, max_size=6))
def test_plain_key_values_read_what_the_named_reader_reads_or_step_aside(items):
    quick = plain_key_values(items)
    try:
        named = named_key_values(items, "attributes")
    except FieldError:
        assert quick is None
        return
    assert quick is None or repr(quick) == repr(named)  # (repr: a NaN equals itself)


_HEX16 = st.binary(min_size=8, max_size=8).map(bytes.hex)
_HEX32 = st.binary(min_size=16, max_size=16).map(bytes.hex)
_ID = st.one_of(_HEX16, _HEX32, _HEX16.map(str.upper), _HEX16.map(lambda h: base64.b64encode(bytes.fromhex(h)).decode()),
                st.sampled_from(["", "xyz", "00"]), st.none(), st.integers())
_TIME = st.one_of(st.integers(0, 2**64 + 5).map(str), st.integers(-1, 2**64 + 5), st.none(),
                  st.sampled_from(["", "0", "000", " 12", "1_000", "x", "\u0661\u0662", "18446744073709551616"]),
                  st.floats(0, 1e19))


@st.composite
def otlp_spans(draw):
    span = {"traceId": draw(st.one_of(_HEX32, _ID)), "spanId": draw(st.one_of(_HEX16, _ID))}
    for key, value in (("parentSpanId", st.one_of(_HEX16, _ID)), ("startTimeUnixNano", _TIME),
                       ("endTimeUnixNano", _TIME), ("name", st.one_of(_TEXT, st.integers())),
                       ("attributes", st.one_of(st.lists(_KEY_VALUE, max_size=4), st.none(), _TEXT)),
                       ("status", st.sampled_from([{"code": 2, "message": "boom"}, {"code": "ERROR"}, {}, 3])),
                       ("parent_span_id", _HEX16), ("start_time_unix_nano", _TIME), ("end_time_unix_nano", _TIME)):
        if draw(st.booleans()) if not key.endswith("_nano") and key != "parent_span_id" else draw(st.integers(0, 5)) == 0:
            span[key] = draw(value)
    return span


@settings(max_examples=400, deadline=None)
@given(otlp_spans())
def test_a_quick_span_is_the_span_the_careful_reader_reads(obj):
    resource = {"service.name": "s"}
    quick = quick_span(obj, resource, "f.jsonl:1")
    try:
        careful = span_from_otlp(obj, "spans[0]", resource, "f.jsonl:1")
    except FieldError:
        assert quick is None
        return
    assert quick is None or repr(quick) == repr(careful)  # (repr: a NaN equals itself)


_DOC_KEY = st.builds(lambda index, doc, field, deeper: f"retrieval.documents.{index}.{doc}{field}{deeper}",
                     st.sampled_from(["0", "1", "2", "01", "10"]), st.sampled_from(["document.", "", "document"]),
                     st.sampled_from(["id", "content", "score", "metadata", "text", "url", "title", ""]),
                     st.sampled_from(["", "", "", ".source"]))
_DOC_VALUE = st.one_of(_TEXT, st.integers(), st.floats(allow_nan=False), st.just('{"source": "https://a.example"}'))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.one_of(_DOC_KEY, st.sampled_from(["input.value", "retrieval.documents"])), _DOC_VALUE,
                       max_size=8))
def test_flattened_documents_read_as_the_flattened_items_do(attributes):
    quick = [document(raw, f"t:s:{i}") for i, raw in enumerate(_flattened_documents(attributes, "retrieval.documents"))]
    careful = [document(raw, f"t:s:{i}") for i, raw in enumerate(flattened_items(attributes, "retrieval.documents"))]
    assert quick == careful


def test_documents_read_the_same_whatever_keys_were_read_before_and_the_key_table_stays_bounded():
    """The keys taken apart once per prefix (``_ITEM_KEYS``): a key read under one prefix is not an
    item under another, every span reads as it would alone, and keys that are all different
    (ids in attribute names) do not grow the table past its cap."""
    from citecheck.importers import traces

    span = {"retrieval.documents.0.document.content": "a", "retrieval.documents.1.document.id": "d1",
            "reranker.output_documents.0.document.content": "r"}
    retrieved = _flattened_documents(span, "retrieval.documents")
    reranked = _flattened_documents(span, "reranker.output_documents")
    assert retrieved == [{"content": "a"}, {"id": "d1"}] == flattened_items(
        {k.replace(".document.", "."): v for k, v in span.items()}, "retrieval.documents")
    assert reranked == [{"content": "r"}]
    for i in range(3 * traces._ITEM_KEYS_CAP):
        unique = {f"retrieval.documents.{i}.document.content": f"t{i}", f"attr.{i}": "x"}
        assert _flattened_documents(unique, "retrieval.documents") == [{"content": f"t{i}"}]
    assert len(traces._ITEM_KEYS["retrieval.documents."]) <= traces._ITEM_KEYS_CAP + 2
    assert _flattened_documents(span, "retrieval.documents") == retrieved


_PATHS = ["output.value", "output.value.text", "input.value", "input.value.q", "retrieval", "retrieval.documents",
          "retrieval.documents.0.document.content", "retrieval.documents.x", "gen_ai.retrieval.documents",
          "gen_ai.retrieval.documents.0.content", "reranker.output_documents.0.document.content", "reranker", "a.b"]


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(_PATHS),
                       st.one_of(_TEXT, st.just('[{"content": "x", "url": "https://a.example"}]'),
                                 st.just('{"results": [{"content": "y"}]}')), max_size=5),
       st.sampled_from(["RETRIEVER", "TOOL", "RERANKER", "LLM", ""]))
def test_documents_and_later_values_do_not_depend_on_the_tree_being_built_first(attributes, kind):
    def span():
        return Span("a" * 32, "b" * 16, None, "s", kind, 1, 2, dict(attributes))

    built = span()
    head = "reranker.output_documents" if kind == "RERANKER" else "retrieval.documents"
    bearing = kind in ("RETRIEVER", "TOOL", "RERANKER") or any(
        k.startswith(("retrieval.documents", "gen_ai.retrieval.documents", "reranker.output_documents"))
        for k in attributes)
    if bearing and not flattened_items(attributes, head):
        span_tree(built)  # (where the documents were looked for before: the tree was always built then)
    lazy = span()
    assert span_documents(lazy) == span_documents(built)
    for path in ("output.value", "input.value", "gen_ai.retrieval.documents"):
        assert span_value(lazy, path) == span_value(built, path)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"{}", b"x", b"\n", b"\r", b"\r\n", b" ", b"\t", b"\x0c", b"ab"]), max_size=12))
def test_lines_are_split_as_bytes_splitlines_splits(parts):
    data = b"".join(parts)
    expected = [(n, line) for n, line in enumerate(data.splitlines(), start=1) if line.strip()]
    assert [(n, bytes(line)) for n, line in _lines(data)] == expected


def _export(i: int) -> dict:
    return {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": f"{i:032x}", "spanId": f"{i:016x}", "startTimeUnixNano": "5", "endTimeUnixNano": "6",
         "attributes": [{"key": "input.value", "value": {"stringValue": f"q{i}"}}]}]}]}]}


def test_a_file_is_read_whole_or_by_line_as_its_shape_says(tmp_path):
    """One JSON value over several lines is read whole; JSON lines line by line (their first line
    being a whole value, the file is not tried whole); a bad line is named by its number."""
    exports = [_export(i) for i in range(3)]
    shapes = {"lines.jsonl": "\n".join(json.dumps(e) for e in exports) + "\n",
              "crlf.jsonl": "\r\n".join(json.dumps(e) for e in exports),
              "array.json": json.dumps(exports, indent=1),
              "pretty.json": json.dumps(exports[0], indent=1),
              "bad.jsonl": json.dumps(exports[0]) + "\n{oops\n\n" + json.dumps(exports[2]) + "\n"}
    read = {}
    for name, text in shapes.items():
        (tmp_path / name).write_text(text)
        read[name] = [(s.trace_id, s.where.rsplit(":", 1)[1]) if isinstance(s, Span) else (s.line, s.field)
                      for s in read_otlp(str(tmp_path / name))]
    assert read["lines.jsonl"] == read["crlf.jsonl"] == read["array.json"] == [(f"{i:032x}", str(i + 1)) for i in range(3)]
    assert read["pretty.json"] == [(f"{0:032x}", "1")]
    assert read["bad.jsonl"] == [(f"{0:032x}", "1"), (2, "(json)"), (f"{2:032x}", "4")]


def _careful(raw: bytes) -> list:
    """What the dict path reads of one export line: its spans and the errors it names."""
    found = _lenient(raw)
    if isinstance(found, FieldError):
        return [(found.field, found.message)]
    return [s if isinstance(s, Span) else (s.field, s.message)
            for s in spans_from_request(found[0], "", "f.jsonl:1", found[1])]


def _typed(raw: bytes) -> list | None:
    export = decode_export(raw)
    return None if export is None else typed_spans(export, "f.jsonl:1")


_EXTRA = st.dictionaries(st.sampled_from(["kind", "events", "links", "flags", "traceState", "droppedLinksCount",
                                          "x", "instrumentationLibrarySpans"]),
                         st.one_of(st.integers(-5, 2**70), _TEXT, st.just([{"name": "e"}]), st.none()), max_size=2)


_USUAL_VALUE = st.recursive(
    st.one_of(st.builds(lambda t: {"stringValue": t}, _TEXT),
              st.builds(lambda v: {"intValue": v}, st.one_of(st.integers(-2**63, 2**64 - 1), st.integers().map(str))),
              st.builds(lambda v: {"doubleValue": v}, st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                                                                 st.integers(-2**63, 2**64 - 1))),
              st.builds(lambda v: {"boolValue": v}, st.booleans()), st.builds(lambda t: {"bytesValue": t}, _TEXT),
              st.just({})),
    lambda inner: st.one_of(
        st.builds(lambda vs: {"arrayValue": {"values": vs}}, st.lists(inner, max_size=3)),
        st.builds(lambda kvs: {"kvlistValue": {"values": [{"key": k, "value": v} for k, v in kvs]}},
                  st.lists(st.tuples(_TEXT, inner), max_size=3))), max_leaves=6)
_USUAL_TIME = st.one_of(st.integers(0, 2**64 - 1).map(str), st.integers(0, 2**64 - 1), st.sampled_from(["0", "000"]))
_USUAL_KEY_VALUE = st.builds(lambda k, v: {"key": k, "value": v}, st.one_of(_TEXT, _WORDS), _USUAL_VALUE)


@st.composite
def otlp_exports(draw):
    """An export of spans in every form writers use: half of them usual throughout (what the
    typed path reads), the others with spans and attributes of any form."""
    odd = draw(st.booleans())
    spans = [dict(draw(otlp_spans()), **draw(_EXTRA)) for _ in range(draw(st.integers(0, 3)) if odd else 0)]
    usual = draw(st.lists(st.builds(lambda t, s, p, a, st_, en: {
        "traceId": t, "spanId": s, **({"parentSpanId": p} if p is not None else {}),
        "startTimeUnixNano": st_, "endTimeUnixNano": en, "attributes": a},
        _HEX32, _HEX16, st.one_of(st.none(), _HEX16, st.just("")),
        st.lists(_KEY_VALUE if odd else _USUAL_KEY_VALUE, max_size=4), *[_TIME if odd else _USUAL_TIME] * 2),
        max_size=3))
    scope = {"spans": draw(st.permutations(spans + usual))}
    scope.update(draw(st.dictionaries(st.sampled_from(["scope", "schemaUrl", "spanz"]),
                                      st.just({"name": "openinference"}), max_size=1)))
    resource_spans = {"scopeSpans": [scope]}
    if draw(st.booleans()):
        resource_spans["resource"] = {"attributes": draw(st.lists(_KEY_VALUE if odd else _USUAL_KEY_VALUE, max_size=3))}
    return {"resourceSpans": [resource_spans] * draw(st.integers(1, 2))}


@settings(max_examples=500, deadline=None)
@given(otlp_exports())
def test_a_typed_export_gives_the_spans_the_dict_path_reads_or_steps_aside(export):
    raw = json.dumps(export).encode()  # (NaN and 2**70 as JSON writes them: orjson then refuses the line)
    typed = _typed(raw)
    assert typed is None or repr(typed) == repr(_careful(raw))  # (repr: a NaN equals itself)


def test_the_typed_path_reads_the_usual_export_and_steps_aside_for_anything_else():
    """It takes the usual export (so the importer's speed is its speed), and leaves to the dict
    path what a JSON parser reads differently or what must be named as wrong: a field it does not
    know, a lone surrogate or a byte that is not UTF-8 in a field no reader uses, integers past
    64 bits, a null value."""
    span = {"traceId": "A" * 32, "spanId": "b" * 16, "parentSpanId": "c" * 16, "name": "retrieve", "kind": 3,
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": 1700000000500000000,
            "status": {"code": 2, "message": "boom"},
            "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "RETRIEVER"}},
                           {"key": "n", "value": {"intValue": "7"}}, {"key": "f", "value": {"doubleValue": 1}},
                           {"key": "b", "value": {"boolValue": True}},
                           {"key": "l", "value": {"arrayValue": {"values": [{"stringValue": "x"}, {"intValue": 2}]}}},
                           {"key": "m", "value": {"kvlistValue": {"values": [{"key": "k", "value": {}}]}}},
                           {"key": "n", "value": {"intValue": 8}}]}
    export = {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "s"}}]},
                                 "scopeSpans": [{"scope": {"name": "openinference"}, "spans": [span]}]}]}
    raw = json.dumps(export).encode()
    typed = _typed(raw)
    assert typed is not None and repr(typed) == repr(_careful(raw))
    [read] = typed
    assert (read.trace_id, read.kind, read.end, read.status_error) == ("a" * 32, "RETRIEVER", 1700000000500000000, "boom")
    assert read.attributes["n"] == 8 and read.attributes["l"] == ["x", 2] and read.attributes["m"] == {"k": None}
    unusual = [raw.replace(b'"kind": 3', b'"kind": 3, "parent_span_id": "' + b"c" * 16 + b'"'),
               raw.replace(b'"kind": 3', b'"kind": "\\ud800"'),
               raw.replace(b'"kind": 3', b'"kind": "\xff"'),
               raw.replace(b'"intValue": 8', b'"intValue": 123456789012345678901234'),
               raw.replace(b'{"stringValue": "s"}', b'{"stringValue": null}'),
               raw.replace(b'"name": "retrieve"', b'"name": "retrieve", "name": 5')]
    for line in unusual:
        assert line != raw and _typed(line) is None
        assert _careful(line)  # (read, or named as wrong, by the dict path)
