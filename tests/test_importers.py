import json
from pathlib import Path

import anthropic
import pydantic
import pytest
from anthropic.types import message_create_params
from citecheck.checking.checker import check_answer
from citecheck.contract import reasons
from citecheck.errors import RecordError
from citecheck.importers import anthropic as anthropic_importer
from citecheck.importers import claims, markers, records_to_answers

DATA = Path(__file__).parent / "data" / "importers"


def load(name):
    return json.loads((DATA / name).read_text(encoding="utf-8"))


# --- the fixtures are real API shapes --------------------------------------------------------


@pytest.mark.parametrize("name", ["anthropic_response.json", "anthropic_search_response.json"])
def test_response_fixtures_validate_against_sdk_types(name):
    message = anthropic.types.Message.model_validate(load(name))
    types = {c.type for block in message.content if block.type == "text" for c in (block.citations or [])}
    assert types <= {"char_location", "page_location", "content_block_location", "search_result_location"}


@pytest.mark.parametrize("name", ["anthropic_request.json", "anthropic_search_request.json"])
def test_request_fixtures_validate_against_sdk_types(name):
    adapter = pydantic.TypeAdapter(message_create_params.MessageCreateParamsNonStreaming)
    adapter.validate_python(load(name))


# --- anthropic -------------------------------------------------------------------------------


def imported(req, resp):
    items = list(anthropic_importer.import_pair(DATA / req, DATA / resp))
    assert not [i for i in items if isinstance(i, RecordError)]
    return items


def test_anthropic_answer_text_chunks_and_metadata():
    [a] = imported("anthropic_request.json", "anthropic_response.json")
    assert a.answer_id == "msg_01XFDUDYJgAACzvnptvVoYEL"
    assert a.question == "How long do refunds take, and who do I page for a SEV-1?"
    assert a.model == "claude-sonnet-4-5-20250929"
    assert a.answer.startswith("According to the billing policy, refunds go back")
    first, second = a.chunks
    assert (first.chunk_id, first.source, first.section, first.start, first.end) == (
        "billing-and-refunds-3", "billing-and-refunds.md", "Refunds", 235, 354)
    assert second.chunk_id == "doc-2" and second.title == "Security Runbook"
    assert second.text.startswith("A SEV-1 incident") and second.text.endswith("public channels.")
    assert a.extra["usage"]["input_tokens"] == 812


def test_anthropic_citation_spans_cover_their_text_blocks():
    [a] = imported("anthropic_request.json", "anthropic_response.json")
    spans = [(a.answer[c.answer_start:c.answer_end], c.chunk_id) for c in a.citations]
    assert spans[0] == ("refunds go back to the original payment method", "billing-and-refunds-3")
    assert spans[1] == (" and take 5-7 business days.", "billing-and-refunds-3")
    assert spans[2] == ("page the incident commander within 15 minutes", "doc-2")


def test_anthropic_checked_end_to_end():
    [a] = imported("anthropic_request.json", "anthropic_response.json")
    result = check_answer(a)
    assert [c.reasons for c in result.citations] == [(), (), (), (reasons.QUOTE_NOT_FOUND,), (reasons.UNRETRIEVED_SOURCE,)]
    block = result.citations[2]
    text = a.chunks[1].text
    assert text[block.quote_start:block.quote_end] == "Page the incident commander within 15 minutes. "
    # the first sentence is split over two cited blocks and one uncited lead-in: it keeps both citations
    assert result.sentences[0].citations == (0, 1) and not result.sentences[0].uncited


def test_anthropic_search_results_and_pdf_pages():
    [a] = imported("anthropic_search_request.json", "anthropic_search_response.json")
    search, pdf = a.chunks[1], a.chunks[0]
    assert pdf.chunk_id == "doc-1" and pdf.text == ""
    assert search.chunk_id == "result-1" and search.source == "https://docs.example.com/exports"
    sr, page = a.citations
    assert sr.locator == {"type": "search_result_location", "search_result_index": 0,
                          "start_block_index": 1, "end_block_index": 2}
    assert search.text[sr.quote_start:sr.quote_end] == " Scheduled exports run at 06:00 UTC."
    assert page.locator["start_page_number"] == 2 and page.quote_start is None
    result = check_answer(a)
    assert result.citations[0].verified
    assert result.citations[1].reasons == (reasons.QUOTE_NOT_FOUND,)


def test_anthropic_malformed_records_are_reported_and_the_rest_imported(tmp_path):
    req = load("anthropic_request.json")
    resp = load("anthropic_response.json")
    bad = json.loads(json.dumps(resp))
    bad["content"][1]["citations"][0]["document_index"] = "zero"
    (tmp_path / "req.jsonl").write_text("\n".join(json.dumps(x) for x in (req, req, req)) + "\n")
    (tmp_path / "resp.jsonl").write_text(json.dumps(resp) + "\n" + json.dumps(bad) + "\n{oops\n")
    items = list(anthropic_importer.import_pair(tmp_path / "req.jsonl", tmp_path / "resp.jsonl"))
    errors = [i for i in items if isinstance(i, RecordError)]
    assert len(items) - len(errors) == 1
    assert [(e.line, e.field) for e in errors] == [(2, "response.content[1].citations[0].document_index"), (3, "(json)")]
    assert all(e.file.endswith("resp.jsonl") for e in errors)


# --- claims and markers ----------------------------------------------------------------------


def split(items):
    return ([i for i in items if not isinstance(i, RecordError)], [i for i in items if isinstance(i, RecordError)])


def test_claims_importer_maps_claims_to_spans():
    answers, errors = split(list(records_to_answers(DATA / "claims.jsonl", claims.convert)))
    assert [a.answer_id for a in answers] == ["cl-1", "cl-2"]
    first = answers[0]
    assert first.answer == "Refunds take 5-7 days. We can pay cash today."
    assert [first.answer[c.answer_start:c.answer_end] for c in first.citations] == [
        "Refunds take 5-7 days.", "We can pay cash today."]
    assert [c.reasons for c in check_answer(first).citations] == [(), (reasons.QUOTE_NOT_FOUND,)]
    assert [c.reasons for c in check_answer(answers[1]).citations] == [(reasons.UNRETRIEVED_SOURCE,)]
    assert [(e.line, e.field) for e in errors] == [(3, "sources[0].text"), (4, "(json)"), (5, "citations[0].claim")]


def test_markers_importer_numeric_and_labelled():
    answers, errors = split(list(records_to_answers(DATA / "markers.jsonl", markers.convert)))
    labelled, numeric = answers
    result = check_answer(labelled)
    by_label = {c.label: c.reasons for c in result.citations}
    assert by_label == {"S1": (reasons.QUOTE_MISSING,), "S2": (reasons.QUOTE_MISSING,), "S4": (reasons.UNRETRIEVED_SOURCE,)}
    # S1 failed (no quote), so it is no verified source: the sentence's number is unsupported
    assert result.sentences[0].unsupported_numbers == ("20",)
    assert result.sentences[3].uncited
    assert [c.chunk_id for c in labelled.citations[:2]] == ["S1", "S2"]
    numeric_result = check_answer(numeric)
    assert numeric_result.invalid_markers == (4,)
    assert [(e.line, e.field) for e in errors] == [(3, "answer")]
