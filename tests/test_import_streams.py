"""``citecheck import otel`` reads files of one export a line as streams (issue #33).

Such files are read twice, a line at a time: first for each line's trace ids, then for the spans,
each trace's answer given once no later line can hold a span of it.  These tests hold that path
to the one that reads every span first (``streams=False``), on random traces split into lines and
files in any order, with lines only the careful decoder reads and lines no decoder reads; and they
hold its memory to the traces under way, not the file.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from citecheck.contract.log import answer_to_dict
from citecheck.errors import RecordError
from citecheck.importers.otel import import_spans, last_lines
from citecheck.importers.otlp_json import trace_ids
from citecheck.importers.spans import is_export_lines, read_otlp
from citecheck.importers.traces import TraceSummary
from helpers import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_import_otel import _encode, _otlp, span_trees

TRACES = Path(__file__).parent / "fixtures" / "traces"


def _both(paths):
    """(items, summary lines) of the streamed import and of the one that reads every span first."""
    out = []
    for streams in (True, False):
        summary = TraceSummary()
        items = list(import_spans([str(p) for p in paths], read_otlp, "otel", summary, streams=streams))
        out.append(([answer_to_dict(i) for i in items if not isinstance(i, RecordError)],
                    sorted(str(i) for i in items if isinstance(i, RecordError)), summary.lines()))
    return out


def _snake(export: dict) -> dict:
    """The export as a protobuf JSON dump spells it (snake_case containers): only the careful decoder reads it."""
    return {"resource_spans": [{"scope_spans": [{"spans": s["spans"]} for s in rs["scopeSpans"]]}
                               for rs in export["resourceSpans"]]}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(span_trees(), span_trees(), st.randoms(use_true_random=False), st.integers(1, 4), st.integers(1, 3),
       st.lists(st.sampled_from(["hex", "base64", "snake", "broken"]), min_size=1, max_size=6))
def test_streamed_files_give_what_reading_every_span_first_gives(tmp_path, first, second, rnd, per, files, forms):
    spans = first + [s for s in second if s[0] not in {f[0] for f in first}]
    rnd.shuffle(spans)
    groups = []  # an export's line, and after it maybe a blank line and a line no decoder reads
    for k, at in enumerate(range(0, len(spans), per)):
        form = forms[k % len(forms)]
        export = _otlp([_encode(s, form == "base64") for s in spans[at:at + per]])
        groups.append([json.dumps(_snake(export) if form == "snake" else export)]
                      + (["", '{"resourceSpans": ['] if form == "broken" else []))
    paths = []
    for f in range(files):
        path = tmp_path / f"part{f}.jsonl"
        path.write_text("\n".join(line for group in groups[f::files] for line in group) + "\n")
        paths.append(path)
    assert all(is_export_lines(str(p)) for p in paths if p.stat().st_size > 1)
    streamed, whole = _both(paths)
    assert streamed == whole
    assert len(streamed[0]) == len({s[0] for s in spans})


def test_a_line_of_any_shape_names_its_trace_ids_at_least_as_its_spans_do(tmp_path):
    plain = _otlp([_encode(("ab" * 16, "cd" * 8, None, "CHAIN", 1, 2, {}), False)])
    assert trace_ids(json.dumps(plain).encode()) == ["ab" * 16]
    # a shape the light decode does not know is read by the spans' own reader, never skipped
    for odd in (_snake(plain), {**plain, "extra": 1},
                _otlp([_encode(("ab" * 16, "cd" * 8, None, "CHAIN", 1, 2, {}), True)])):
        assert trace_ids(json.dumps(odd).encode()) is None
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps(_snake(plain)) + "\n" + json.dumps(plain) + "\n")
    assert last_lines([str(path)]) == {"ab" * 16: 1}


def test_a_file_not_of_one_export_a_line_is_read_whole(tmp_path):
    data = (TRACES / "openinference_rag.jsonl").read_text()
    assert is_export_lines(str(TRACES / "openinference_rag.jsonl"))
    exports = [json.loads(line) for line in data.splitlines() if line.strip()]
    (tmp_path / "list.json").write_text(json.dumps(exports))
    (tmp_path / "pretty.json").write_text(json.dumps(exports[0], indent=2))
    for name in ("list.json", "pretty.json"):
        assert not is_export_lines(str(tmp_path / name))
    streamed, whole = _both([TRACES / "openinference_rag.jsonl"])
    assert streamed == whole and streamed[0]


def _requests_file(path: Path, count: int) -> None:
    """``count`` requests (a root, a retriever of 3 documents of ~2 KB, an LLM call), one export a
    line, each trace's spans split over two lines that other traces' lines come between."""
    retrievers, roots = [], []
    for i in range(count):
        trace = f"{i + 1:032x}"
        root = {"traceId": trace, "spanId": f"{2 * i + 1:016x}", "name": "rag", "startTimeUnixNano": str(10 * i),
                "endTimeUnixNano": str(10 * i + 9), "attributes": [
                    {"key": "openinference.span.kind", "value": {"stringValue": "CHAIN"}},
                    {"key": "input.value", "value": {"stringValue": f"question {i}?"}},
                    {"key": "output.value", "value": {"stringValue": f"Answer {i} [1]."}}]}
        docs = [{"key": f"retrieval.documents.{k}.document.content",
                 "value": {"stringValue": f"document {i}-{k} " + "text " * 400}} for k in range(3)]
        retrievers.append(json.dumps(_otlp([{
            "traceId": trace, "spanId": f"{2 * i + 2:016x}", "parentSpanId": root["spanId"], "name": "retrieve",
            "startTimeUnixNano": str(10 * i + 1), "endTimeUnixNano": str(10 * i + 2),
            "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "RETRIEVER"}}, *docs]}])))
        roots.append(json.dumps(_otlp([root])))
    lines = retrievers[:1]  # retriever 0, retriever 1, root 0, retriever 2, root 1, ...
    for i in range(count):
        lines += retrievers[i + 1:i + 2] + [roots[i]]
    path.write_text("\n".join(lines) + "\n")


def _peak(path: Path) -> tuple[int, int]:
    """(answers, peak bytes allocated) of the streamed import of ``path``."""
    tracemalloc.start()
    try:
        count = sum(1 for item in import_spans([str(path)], read_otlp, "otel", TraceSummary(), streams=True)
                    if not isinstance(item, RecordError))
        return count, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_holds_the_traces_under_way_not_the_file(tmp_path):
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    _requests_file(small, 100)
    _requests_file(large, 800)
    assert large.stat().st_size > 7 * small.stat().st_size
    (n_small, peak_small), (n_large, peak_large) = _peak(small), _peak(large)
    assert (n_small, n_large) == (100, 800)
    # reading every span first held each of them: eight times the requests, about eight times the memory
    assert peak_large < 2 * peak_small, (peak_small, peak_large)


def test_the_command_streams_and_writes_what_it_wrote_before(tmp_path):
    path = tmp_path / "traces.jsonl"
    _requests_file(path, 50)
    code, _, err = run_cli("import", "otel", path, "--out", tmp_path / "out.jsonl")
    assert code == 0 and "imported 50 answer(s)" in err
    [(streamed, _, _), (whole, _, _)] = _both([path])
    assert [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()] == whole == streamed
    assert [a["question"] for a in whole] == [f"question {i}?" for i in range(50)]


@pytest.mark.parametrize("b64", [False, True])
def test_base64_ids_are_streamed_by_the_spans_own_reading(tmp_path, b64):
    span = ("0f" * 16, "0e" * 8, None, "CHAIN", 1, 2, {"input.value": "q", "output.value": "a."})
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps(_otlp([_encode(span, b64)])) + "\n")
    assert last_lines([str(path)]) == {"0f" * 16: 0}
    streamed, whole = _both([path])
    assert streamed == whole and [a["answer_id"] for a in streamed[0]] == ["0f" * 16]
