"""``citecheck collect`` and ``citecheck import otel`` are two paths to the same answers (issue #33).

The receiver keeps a trace's spans in its spool, rebuilds them when the trace is complete and writes
its answer; the importer reads the same exports from a file.  Given the same exports, in any order
and split any way, they must write the same answers (the receiver in the order traces complete,
so they are compared by answer id).
"""

from __future__ import annotations

import io
import json

from citecheck.importers.collector import Collector, CollectSettings, read_export
from helpers import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_import_otel import _encode, _otlp, span_trees


def _collected(tmp_path, exports: list[dict]) -> list[dict]:
    """The answers a receiver (in this process, its clock held still until the end) writes of ``exports``."""
    now = [0.0]
    log = tmp_path / "collected.jsonl"
    receiver = Collector(CollectSettings(log), io.StringIO(), clock=lambda: now[0])
    receiver.start(builder=False)
    try:
        for export in exports:
            receiver.submit(read_export(json.loads(json.dumps(export))))
    finally:
        now[0] = 1000.0  # (every trace is then past its grace period: the complete ones are written)
        receiver.stop()
    return [json.loads(line) for line in log.read_text().split("\n") if line] if log.exists() else []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(span_trees(), st.randoms(use_true_random=False), st.integers(1, 4), st.booleans(),
       st.sampled_from([None, "rag-api", "<b>svc</b>"]), st.sets(st.integers(0, 20), max_size=3))
def test_the_receiver_writes_the_answers_the_importer_writes_of_the_same_exports(tmp_path, spans, rnd, per, b64,
                                                                                   service, failed):
    spans = list(spans)
    rnd.shuffle(spans)
    encoded = [_encode(s, b64) for s in spans]
    for k in failed & set(range(len(encoded))):  # a span that failed (trace.span_errors)
        encoded[k]["status"] = {"code": 2, "message": f"step {k} failed"}
    exports = [_otlp(encoded[at:at + per]) for at in range(0, len(encoded), per)]
    if service:  # the resource's service.name (trace.service)
        for export in exports:
            export["resourceSpans"][0]["resource"] = {
                "attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    (tmp_path / "exports.jsonl").unlink(missing_ok=True)
    (tmp_path / "collected.jsonl").unlink(missing_ok=True)
    for leftover in tmp_path.glob("collected.jsonl.spool*"):
        leftover.unlink()
    traces = tmp_path / "exports.jsonl"
    traces.write_text("".join(json.dumps(e) + "\n" for e in exports))
    code, out, err = run_cli("import", "otel", traces)
    assert code == 0, err
    imported = [json.loads(line) for line in out.split("\n") if line]
    collected = _collected(tmp_path, exports)
    assert sorted(collected, key=lambda a: a["answer_id"]) == sorted(imported, key=lambda a: a["answer_id"])
    assert len(imported) == len({s[0] for s in spans})
