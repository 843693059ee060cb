"""Anthropic additions: recorded SSE streams (with citations_delta), Message Batches, --pairs."""

import io
import json
from pathlib import Path

import anthropic
import httpx2 as httpx
import pydantic
from citecheck.cli.main import main
from citecheck.errors import RecordError
from citecheck.importers import anthropic as anthropic_importer
from citecheck.importers.anthropic_batch import join
from citecheck.importers.exchange import import_pairs

DATA = Path(__file__).parent / "data" / "importers"


def load(name):
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def lines(name):
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def test_stream_fixture_is_what_the_sdk_reads_and_adds_up_to_the_same_answer():
    """The SDK streams the recorded events through a mock transport; its final message and our
    assembly of the same file import to the same answer as the non-streamed response."""
    sse = (DATA / "anthropic_stream.sse").read_bytes()

    def handle(request):
        return httpx.Response(200, content=sse, headers={"content-type": "text/event-stream"})

    client = anthropic.Anthropic(api_key="sk-ant-test-not-a-key", max_retries=0,
                                 http_client=httpx.Client(transport=httpx.MockTransport(handle)))
    req = load("anthropic_request.json")
    with client.messages.stream(**req) as stream:
        final = stream.get_final_message()
    via_sdk = anthropic_importer.convert(req, final.model_dump(mode="json"), 1)
    [ours] = list(anthropic_importer.import_pair(DATA / "anthropic_request.json", DATA / "anthropic_stream.sse"))
    [whole] = list(anthropic_importer.import_pair(DATA / "anthropic_request.json", DATA / "anthropic_response.json"))
    assert ours.answer == whole.answer == via_sdk.answer
    assert ours.citations == whole.citations == via_sdk.citations
    assert ours.extra["usage"]["output_tokens"] == 96 and ours.extra["stop_reason"] == "end_turn"


def test_a_stream_error_event_is_reported_and_the_text_kept(tmp_path):
    text = (DATA / "anthropic_stream.sse").read_text(encoding="utf-8")
    cut = text.index("event: message_delta")
    error = 'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
    path = tmp_path / "s.sse"
    path.write_text(text[:cut] + error, encoding="utf-8")
    items = list(anthropic_importer.import_pair(DATA / "anthropic_request.json", path))
    [err] = [i for i in items if isinstance(i, RecordError)]
    assert err.field == "event error.error" and "overloaded_error: Overloaded" in err.message
    assert err.line == text[:cut].count("\n") + 1
    [answer] = [i for i in items if not isinstance(i, RecordError)]
    assert answer.answer == "".join(b["text"] for b in load("anthropic_response.json")["content"])
    assert "stop_reason" not in answer.extra  # the message_delta never came


def test_batch_fixtures_validate_against_sdk_types():
    adapter = pydantic.TypeAdapter(anthropic.types.messages.MessageBatchIndividualResponse)
    for record in lines("anthropic_batch_results.jsonl"):
        adapter.validate_python(record)
    from anthropic.types.messages import batch_create_params
    request = pydantic.TypeAdapter(batch_create_params.Request)
    for record in lines("anthropic_batch_requests.jsonl"):
        request.validate_python(record)


def test_batch_joins_on_custom_id_and_reports_every_result_that_is_no_answer():
    items = list(join(DATA / "anthropic_batch_requests.jsonl", DATA / "anthropic_batch_results.jsonl",
                      anthropic_importer.convert))
    answers = [i for i in items if not isinstance(i, RecordError)]
    errors = [i for i in items if isinstance(i, RecordError)]
    # results come in any order: joined on custom_id, not position
    assert [a.answer_id for a in answers] == ["faq-002", "faq-001"]
    assert answers[1].answer.startswith("According to the billing policy")
    assert answers[0].extra["custom_id"] == "faq-002"
    got = [(Path(e.file).name, e.line, e.field, " ".join(e.message.split()[:3])) for e in errors]
    assert got == [
        ("anthropic_batch_results.jsonl", 2, "result.error", "custom_id 'faq-003' errored:"),
        ("anthropic_batch_results.jsonl", 4, "result.type", "custom_id 'faq-004' expired:"),
        ("anthropic_batch_results.jsonl", 5, "custom_id", "'faq-999' is in"),
        ("anthropic_batch_requests.jsonl", 5, "custom_id", "'faq-005' has no"),
    ]
    assert "invalid_request_error: max_tokens: Field required" in errors[0].message


def test_batch_duplicate_and_bad_lines(tmp_path):
    reqs = tmp_path / "reqs.jsonl"
    res = tmp_path / "res.jsonl"
    req = load("anthropic_request.json")
    reqs.write_text("\n".join(json.dumps(r) for r in [{"custom_id": "a", "params": req}, {"custom_id": "a", "params": req},
                                                     {"params": req}]) + "\n")
    bad = load("anthropic_response.json")
    bad["content"][1]["citations"][0]["document_index"] = -1
    res.write_text(json.dumps({"custom_id": "a", "result": {"type": "succeeded", "message": bad}}) + "\n{x\n")
    errors = [(e.line, e.field) for e in join(reqs, res, anthropic_importer.convert)]
    assert errors == [(2, "custom_id"), (3, "custom_id"),
                      (1, "result.message.content[1].citations[0].document_index"), (2, "(json)")]


def test_anthropic_pairs_with_a_stream_inside(tmp_path):
    path = tmp_path / "pairs.jsonl"
    stream = (DATA / "anthropic_stream.sse").read_text(encoding="utf-8")
    rows = [{"request": load("anthropic_request.json"), "response": load("anthropic_response.json")},
            {"response": load("anthropic_response.json")},
            {"request": load("anthropic_request.json"), "response": stream}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    items = list(import_pairs(anthropic_importer.PROVIDER, path))
    assert [(i.line, i.field) for i in items if isinstance(i, RecordError)] == [(2, "request")]
    first, last = [i for i in items if not isinstance(i, RecordError)]
    assert first.citations == last.citations


def test_cli_batch_mode_and_option_errors(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    code = main(["import", "anthropic", "--batch-requests", str(DATA / "anthropic_batch_requests.jsonl"),
                 "--batch-results", str(DATA / "anthropic_batch_results.jsonl")], out, err)
    assert code == 4 and len(out.getvalue().splitlines()) == 2
    assert "imported 2 answer(s); 4 unreadable record(s) left out, each said above" in err.getvalue()
    assert "faq-004' expired" in err.getvalue()
    err = io.StringIO()
    code = main(["import", "anthropic", "--batch-requests", "x.jsonl"], io.StringIO(), err)
    assert code != 0 and "--batch-results" in err.getvalue()
    err = io.StringIO()
    code = main(["import", "anthropic", "--response", str(DATA / "anthropic_response.json")], io.StringIO(), err)
    assert code != 0 and "--request" in err.getvalue()
