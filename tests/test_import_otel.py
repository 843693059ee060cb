"""``citecheck import otel``: OTLP JSON traces (OpenInference and OTel GenAI attributes) to answers.

The fixtures in tests/fixtures/traces/ are written by hand in the shapes the OpenTelemetry file
exporters write and the OpenInference / GenAI conventions name (tests/fixtures/traces/README.md).
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

import pytest
from citecheck.checking.checker import check_answer
from citecheck.contract.log import answer_to_dict, checksum, parse_line, read_log
from citecheck.errors import FieldError, RecordError
from citecheck.importers import anthropic as anthropic_importer
from citecheck.importers.otel import import_spans
from citecheck.importers.spans import (
    any_value,
    attribute_tree,
    decode_id,
    items,
    read_otlp,
    span_kind,
    spans_from_request,
)
from citecheck.importers.trace_citations import link_citations, normal_url
from citecheck.importers.traces import TraceSummary, answers, langchain_message, output_ids
from helpers import imported_traces, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TRACES = Path(__file__).parent / "fixtures" / "traces"
IMPORTERS = Path(__file__).parent / "data" / "importers"


def imported(*names, skip=False):
    return imported_traces([TRACES / n for n in names], read_otlp, "otel", skip)


# --- the shapes ------------------------------------------------------------------------------

def test_an_openinference_rag_request_is_one_answer_with_its_documents_in_order():
    [a], errors, summary = imported("openinference_rag.jsonl")
    assert errors == []
    assert a.answer_id == "5b8efff798038103d269b633813fc60c"
    assert a.question == "How many days of earned leave do employees get?"  # the JSON input's "query"
    assert a.answer == "Employees get 18 days of earned leave per year [1]. Unused days carry over up to 45 days [2]."
    assert [c.chunk_id for c in a.chunks] == ["leave-policy-2", "leave-policy-3"]
    assert a.chunks[0].source == "handbook/leave.md" and a.chunks[0].title == "Leave policy"  # JSON-string metadata
    assert a.chunks[0].retrieval_score == 0.82
    assert a.model == "claude-sonnet-4-5" and a.prompt_version == "rag-v3"
    assert a.timestamp == "2024-12-05T12:00:00.000Z"
    assert a.extra["trace"]["citations"] == "markers" and a.extra["trace"]["service"] == "hr-assistant"
    result = check_answer(a)
    assert [c.chunk_id for c in result.citations] == ["leave-policy-2", "leave-policy-3"]
    # a trace records no quote: not verifiable, never "quote missing"; the numbers are in their chunks
    assert [(c.status, c.reasons) for c in result.citations] == [("not_verifiable", ())] * 2
    assert [s.reasons for s in result.sentences] == [(), ()] and result.uncited_sentences == 0
    assert summary.citations == {"markers": 1}


def test_an_agent_gives_its_final_answer_not_an_intermediate_llm_call():
    [a], errors, _ = imported("otlp_agent_base64.json")  # a JSON list of two exports, base64 ids
    assert errors == []
    assert a.answer_id == "a1" * 16
    assert a.question == "Can I carry over unused leave, and is the office closed on Diwali?"
    assert a.answer.startswith("Yes: up to 45 days of unused earned leave carry over [1].")
    assert "I will search" not in a.answer and "Now the holidays" not in a.answer
    # the retriever's nested documents (dotted keys inside), then the search tool's results, in order
    assert [c.chunk_id for c in a.chunks] == ["leave-policy-3", "leave-policy-4", f"{'a1' * 16}:a000000000000005:0",
                                              f"{'a1' * 16}:a000000000000005:1"]
    assert a.chunks[2].source == "https://intranet.example.com/holidays-2026"
    assert a.chunks[2].title == "Holiday calendar 2026"
    assert a.model == "claude-sonnet-4-5"  # the last LLM call, not the planner's model
    assert a.prompt_version == "agent-v7"  # from the JSON-string metadata
    # the [1] marker is an entry with no quote (not verifiable, not "quote missing"); the markdown
    # link cites the search result with its URL
    marker, link = a.citations
    assert (marker.kind, marker.marker, marker.locator) == ("marker", 1, {"type": "marker", "no_quote": True})
    assert link.chunk_id == f"{'a1' * 16}:a000000000000005:0"
    assert a.answer[link.answer_start:link.answer_end] == \
        "[holiday calendar](https://intranet.example.com/holidays-2026)"
    assert a.extra["trace"]["citations"] == "markers+links"
    result = check_answer(a)
    assert {c.chunk_id for c in result.citations} == {"leave-policy-3", f"{'a1' * 16}:a000000000000005:0"}
    assert not any("unretrieved_source" in c.reasons for c in result.citations)


LCEL_ANSWER = ('Employees get 18 days of earned leave per year [1]. Unused leave carries over up to 45 days [2]. '
               'The handbook says "Employees get 18 days of earned leave per calendar year." [1] '
               'New hires get 30 days in their first year [2].')


def _lcel_spans() -> list[dict]:
    """The spans of the first request of langchain_lcel.jsonl (an LCEL chain that ends in its chat model)."""
    export = json.loads((TRACES / "langchain_lcel.jsonl").read_text().splitlines()[0])
    return [s for group in export["resourceSpans"][0]["scopeSpans"] for s in group["spans"]]


def test_a_langchain_chain_ending_in_its_chat_model_gives_the_models_answer_not_the_formatted_sources():
    """``{"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt | llm``, with no
    output parser: OpenInference records the chain's output as LangChain serialises an AIMessage
    (``{"type": "ai", "data": {"content": ...}}``); the context branch's output is the sources as
    the prompt numbers them, which is no answer."""
    [a, _], errors, _ = imported("langchain_lcel.jsonl")
    assert errors == []
    assert a.question == "How many days of earned leave do I get?"
    assert a.answer == LCEL_ANSWER
    assert [c.text for c in a.chunks] == ["Employees get 18 days of earned leave per calendar year.",
                                          "Unused earned leave carries over to the next year, up to 45 days in total.",
                                          "The office is closed on Diwali and on the day after."]
    result = check_answer(a)
    assert [c.chunk_id for c in result.citations] == [a.chunks[i].chunk_id for i in (0, 1, 0, 1)]
    assert [s.reasons for s in result.sentences][3] == ("number_not_in_source",)  # the made-up 30 days


def test_a_chain_that_ended_before_the_last_llm_call_is_never_the_answer(tmp_path):
    """Without a readable root output, the answer is not the output of a step that ended before the
    model answered (the sources formatted for the prompt), but the model's."""
    spans = _lcel_spans()
    for span in spans:
        if "parentSpanId" not in span:
            span["attributes"] = [a for a in span["attributes"] if a["key"] != "output.value"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    [a] = list(import_spans([str(path)], read_otlp, "otel", TraceSummary()))
    assert a.answer == LCEL_ANSWER


def test_a_request_wrapped_in_the_applications_own_span_asks_the_users_question_not_the_prompt():
    """``with tracer.start_as_current_span("handle_request"):`` around ``retriever.invoke(q)`` and
    ``(prompt | llm).invoke({"context": ..., "question": q})``: the root records no input, and the
    LLM's user message is the whole prompt, sources and all; the chain's input names the question."""
    [_, b], _, _ = imported("langchain_lcel.jsonl")
    assert b.question == "How many days of earned leave do I get?"
    assert b.answer == LCEL_ANSWER and len(b.chunks) == 3


def test_a_chain_whose_input_is_the_models_message_does_not_ask_the_question(tmp_path):
    """An output parser's input is the model's AIMessage: no user's question."""
    spans = _lcel_spans()
    for span in spans:
        span["attributes"] = [a for a in span.get("attributes", []) if a["key"] != "input.value"
                              or span["name"] == "StrOutputParser"]
    spans.append({"traceId": "1c" * 16, "spanId": "1c000000000000ff", "parentSpanId": spans[-1]["spanId"],
                  "name": "StrOutputParser", "kind": 1, "startTimeUnixNano": spans[-1]["endTimeUnixNano"],
                  "endTimeUnixNano": spans[-1]["endTimeUnixNano"],
                  "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "CHAIN"}},
                                 {"key": "input.value", "value": {"stringValue": json.dumps(
                                     {"type": "ai", "data": {"content": LCEL_ANSWER}})}}]})
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    [a] = list(import_spans([str(path)], read_otlp, "otel", TraceSummary()))
    assert a.question.endswith("Question: How many days of earned leave do I get?")  # (the LLM's user message)


def test_a_langchain_documents_id_is_read_from_the_retrievers_output():
    """OpenInference's LangChain instrumentation records a Document's text and metadata but not its
    ``id``; the retriever span's ``output.value`` (the Documents as LangChain serialises them) has it."""
    [a, b], _, _ = imported("langchain_lcel.jsonl")
    for answer in (a, b):
        assert [c.chunk_id for c in answer.chunks][:2] == ["leave-2", "leave-3"]
        assert answer.chunks[0].title == "Leave policy" and answer.chunks[1].source == "handbook/leave.md"
    third = a.chunks[2]  # a Document without an id keeps the trace's stable one
    assert third.chunk_id == f"{'1c' * 16}:1c00000000000001:2" and third.source == "handbook/holidays.md"


@pytest.mark.parametrize("output", [
    {"documents": [{"id": "other", "page_content": "Some other text."}]},  # not the same document
    {"documents": [{"id": "a", "page_content": "Leave is 18 days."}, {"id": "b", "page_content": "More."}]},  # 2 for 1
    {"documents": [{"id": None, "page_content": "Leave is 18 days."}]},
    {"documents": [{"id": 7, "page_content": "Leave is 18 days."}]},
    "Leave is 18 days.", ["not", "documents"], {"documents": "none"},
])
def test_an_id_is_taken_only_from_the_same_document_at_the_same_place(output):
    found = [{"content": "Leave is 18 days.", "metadata": "{}"}]
    assert output_ids(found, json.dumps(output)) == found
    assert output_ids(found, {"documents": [{"id": "x", "page_content": "Leave is 18 days."}]}) == \
        [{"content": "Leave is 18 days.", "metadata": "{}", "id": "x"}]
    assert output_ids([{"content": "Leave is 18 days.", "id": "own"}],  # (a recorded id is kept)
                      {"documents": [{"id": "x", "page_content": "Leave is 18 days."}]})[0]["id"] == "own"


@pytest.mark.parametrize("message", [
    {"type": "ai", "data": {"content": "It is 18 days [1].", "type": "ai", "tool_calls": []}},
    {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
     "kwargs": {"content": "It is 18 days [1].", "type": "ai"}},
    {"type": "ai", "data": {"content": [{"type": "text", "text": "It is 18 days [1]."}]}},
])
def test_a_serialised_langchain_message_reads_as_its_text(tmp_path, message):
    question = {"messages": [{"type": "system", "data": {"content": "Cite as [n]."}},
                             {"type": "human", "data": {"content": "How many days?"}}]}
    root = {"traceId": "3c" * 16, "spanId": "3c" * 8, "name": "RunnableSequence", "kind": 1,
            "startTimeUnixNano": "1", "endTimeUnixNano": "2",
            "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "CHAIN"}},
                           {"key": "input.value", "value": {"stringValue": json.dumps(question)}},
                           {"key": "output.value", "value": {"stringValue": json.dumps(message)}}]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [root]}]}]}))
    [a] = list(import_spans([str(path)], read_otlp, "otel", TraceSummary()))
    assert (a.question, a.answer) == ("How many days?", "It is 18 days [1].")
    assert langchain_message({"type": "ai", "data": [1, 2]}) == {"type": "ai", "data": [1, 2]}  # (not a message)


@pytest.mark.parametrize("where", ["root", "llm"])
@pytest.mark.parametrize("messages, question", [
    ([{"role": "user", "content": "How many days of leave?"}, {"role": "assistant", "content": "18 days [1]."},
      {"role": "user", "content": "And can I carry them over?"}], "And can I carry them over?"),
    ([{"role": "system", "content": "Cite as [n]."}, {"role": "user", "content": "How many days of leave?"},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "leave"}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "Leave is 18 days."}]}],
     "How many days of leave?"),
    ([{"type": "human", "data": {"content": "First question?"}}, {"type": "ai", "data": {"content": "An answer."}},
      {"type": "human", "data": {"content": "The question now?"}}], "The question now?"),
])
def test_a_chat_with_history_asks_its_latest_question_not_its_first_nor_a_tools_result(tmp_path, where, messages,
                                                                                       question):
    """A new user's multi-turn chat was imported with its first question: the question is the
    last user message with words, a tool's result sent back as a user message aside."""
    attrs = [{"key": "openinference.span.kind", "value": {"stringValue": "CHAIN" if where == "root" else "LLM"}}]
    if where == "root":
        attrs.append({"key": "input.value", "value": {"stringValue": json.dumps({"messages": messages})}})
    else:
        for i, m in enumerate(messages):
            role = m.get("role") or {"human": "user", "ai": "assistant"}[m["type"]]
            content = m.get("content", m.get("data", {}).get("content"))
            attrs.append({"key": f"llm.input_messages.{i}.message.role", "value": {"stringValue": role}})
            if isinstance(content, str):
                attrs.append({"key": f"llm.input_messages.{i}.message.content", "value": {"stringValue": content}})
            else:
                for j, part in enumerate(content):
                    for key, value in part.items():
                        if isinstance(value, str):
                            attrs.append({"key": f"llm.input_messages.{i}.message.contents.{j}.message_content.{key}",
                                          "value": {"stringValue": value}})
    attrs.append({"key": "output.value", "value": {"stringValue": "It is 18 days."}})
    root = {"traceId": "4d" * 16, "spanId": "4d" * 8, "name": "chat", "kind": 1,
            "startTimeUnixNano": "1", "endTimeUnixNano": "2", "attributes": attrs}
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [root]}]}]}))
    [a] = list(import_spans([str(path)], read_otlp, "otel", TraceSummary()))
    assert a.question == question


def test_genai_conventions_documents_without_ids_or_text_and_a_request_without_retrieval():
    (a, b), errors, summary = imported("genai_semconv.jsonl")
    assert errors == []
    assert a.question == "How many days a week can I work remotely?"  # the first user message
    assert a.answer == "Up to three days a week, with your manager's approval [1]."
    assert a.model == "gpt-4.1-2025-04-14"
    trace = "c3" * 16
    assert [c.chunk_id for c in a.chunks] == [f"{trace}:c300000000000002:0", f"{trace}:c300000000000002:1"]
    assert a.chunks[1].text == "" and a.chunks[1].checksum is None  # kept, marked, counted
    assert a.extra["trace"]["documents_without_text"] == [f"{trace}:c300000000000002:1"]
    assert b.chunks == () and "no retrieval among the spans read for this request" in b.extra["trace"]["notes"]
    assert summary.documents_without_text == 1 and summary.without_retrieval == 1
    [only], _, skipped = imported("genai_semconv.jsonl", skip=True)
    assert only.answer_id == a.answer_id and skipped.skipped_without_retrieval == 1


def test_an_indexing_run_is_no_answer_and_the_summary_says_it_was_left_out():
    """LlamaIndex's ``VectorStoreIndex.from_documents`` (a text splitter's spans, a batch of
    embeddings: traces of their own with no LLM call, retrieval, output or error) then one query."""
    [a], errors, summary = imported("llamaindex_indexing.jsonl")
    assert errors == []
    assert a.answer_id == "3d" * 16 and a.question == "How many days of earned leave do I get?"
    assert a.answer.startswith("Employees get 18 days") and a.model == "canned-1"
    assert [c.source for c in a.chunks] == ["leave.md", "leave.md", "https://intranet.example.com/holidays"]
    assert summary.answers == 1 and summary.not_answers == 2 and summary.without_retrieval == 0
    assert "2 trace(s) with no LLM call, retrieval, answer or error left out" in " ".join(summary.lines())


def test_a_bad_record_is_named_and_the_rest_are_imported_with_notes():
    got, errors, summary = imported("otlp_broken.jsonl")
    [error] = errors
    assert error.line == 2 and error.field == "resourceSpans[0].scopeSpans[0].spans[0].traceId"
    assert "otlp_broken.jsonl" in str(error)
    notice, interns = got
    assert [c.chunk_id for c in notice.chunks] == ["notice-1"]  # its parent span never came
    assert notice.extra["trace"]["notes"] == ["1 span(s) whose parent was missing placed by trace and time"]
    assert "the root span had not ended" in interns.extra["trace"]["notes"]
    assert summary.placed_by_time == 1 and summary.open_requests == 1


def test_the_command_writes_a_log_that_check_reads_and_says_what_it_found(tmp_path):
    out = tmp_path / "answers.jsonl"
    code, _, err = run_cli("import", "otel", str(TRACES / "otlp_agent_base64.json"), str(TRACES / "genai_semconv.jsonl"),
                           "--out", str(out))
    assert code == 0, err
    assert "imported 3 answer(s)" in err
    assert "citations: 1 with markers, 1 with markers+links, 1 with none" in err
    assert "1 request(s) had no retrieval" in err
    assert [type(a).__name__ for _, a in read_log(out)] == ["Answer"] * 3
    code, _, err = run_cli("import", "otel", str(TRACES / "otlp_broken.jsonl"), "--out", str(tmp_path / "b.jsonl"))
    assert code == 4 and "otlp_broken.jsonl:2: resourceSpans[0].scopeSpans[0].spans[0].traceId" in err
    assert "grouped by trace, then by time" in err


# --- provider citations recorded on an LLM span ------------------------------------------------

def _otlp(spans):
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def _attrs(d):
    return [{"key": k, "value": {"stringValue": v}} for k, v in d.items()]


def test_anthropic_citations_in_a_recorded_response_go_through_the_anthropic_importer(tmp_path):
    request = json.loads((IMPORTERS / "anthropic_request.json").read_text())
    response = json.loads((IMPORTERS / "anthropic_response.json").read_text())
    trace = "0f" * 16
    spans = [
        {"traceId": trace, "spanId": "0f00000000000001", "name": "ask", "startTimeUnixNano": "1", "endTimeUnixNano": "9",
         "attributes": _attrs({"openinference.span.kind": "CHAIN", "input.value": "How do refunds work?"})},
        {"traceId": trace, "spanId": "0f00000000000002", "parentSpanId": "0f00000000000001", "name": "Messages.create",
         "startTimeUnixNano": "2", "endTimeUnixNano": "8",
         "attributes": _attrs({"openinference.span.kind": "LLM", "llm.model_name": "claude-sonnet-4-5",
                               "input.value": json.dumps(request), "output.value": json.dumps(response)})},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_otlp(spans)))
    [a] = [x for x in import_spans([str(path)], read_otlp, "otel", TraceSummary())]
    [direct] = list(anthropic_importer.import_pair(IMPORTERS / "anthropic_request.json",
                                                   IMPORTERS / "anthropic_response.json"))
    assert a.answer == direct.answer and a.citations == direct.citations and a.chunks == direct.chunks
    assert a.question == "How do refunds work?"  # the request's own question, from the root
    assert a.extra["trace"]["citations"] == "anthropic"


def _anthropic_without_request(tmp_path, trace: str, docs: list[tuple[str, str]], text: str, cited: str, index: int,
                               start: int) -> object:
    """The answer imported from a trace whose RETRIEVER span returned ``docs`` (id, text) and whose
    LLM span recorded an Anthropic response (one citation of ``cited`` in document ``index``, from
    ``start``) but not its request."""
    response = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": text, "citations": [
                    {"type": "char_location", "cited_text": cited, "document_index": index,
                     "document_title": None, "start_char_index": start, "end_char_index": start + len(cited)}]}]}
    retrieved = {"openinference.span.kind": "RETRIEVER"}
    for k, (doc_id, content) in enumerate(docs):
        retrieved |= {f"retrieval.documents.{k}.document.id": doc_id, f"retrieval.documents.{k}.document.content": content}
    spans = [
        {"traceId": trace, "spanId": trace[:2] + "00000000000001", "name": "retrieve", "startTimeUnixNano": "1",
         "endTimeUnixNano": "2", "attributes": _attrs(retrieved)},
        {"traceId": trace, "spanId": trace[:2] + "00000000000002", "parentSpanId": trace[:2] + "00000000000001",
         "name": "llm", "startTimeUnixNano": "3", "endTimeUnixNano": "4",
         "attributes": _attrs({"openinference.span.kind": "LLM", "output.value": json.dumps(response)})},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_otlp(spans)))
    [a] = list(import_spans([str(path)], read_otlp, "otel", TraceSummary()))
    return a


def test_a_recorded_anthropic_response_without_its_request_cites_the_trace_documents_in_order(tmp_path):
    a = _anthropic_without_request(tmp_path, "1e" * 16, [("faq-1", "Shipping is free."),
                                                          ("faq-2", "Refunds take 5-7 business days to arrive.")],
                                   "Refunds take 5-7 business days.", "take 5-7 business days", 1, 8)
    [c] = a.citations
    assert c.chunk_id == "faq-2" and c.quote == "take 5-7 business days"
    assert "the anthropic citations read against the trace's documents in order" in a.extra["trace"]["notes"]
    assert check_answer(a).citations[0].verified
    assert not any("cited text is in another" in n for n in a.extra["trace"]["notes"])


def test_an_anthropic_citation_whose_cited_text_is_in_another_document_than_its_place_is_that_documents(tmp_path):
    """A new user's trace (no request recorded, the documents given to the model in another order):
    the cited text was in leave-2, the citation read by position as sick-1's, and check said
    quote_not_found. Anthropic's cited_text is word for word from the document cited."""
    a = _anthropic_without_request(tmp_path, "1f" * 16, [("sick-1", "Sick leave is 12 days."),
                                                          ("leave-2", "Employees get 18 days of earned leave.")],
                                   "Employees get 18 days of leave.", "Employees get 18 days", 0, 0)
    [c] = a.citations
    assert c.chunk_id == "leave-2"
    assert any("1 citation(s) whose cited text is in another" in n for n in a.extra["trace"]["notes"])
    assert check_answer(a).citations[0].verified


# --- the pieces ------------------------------------------------------------------------------

def test_ids_read_from_hex_and_base64_alike():
    raw = bytes(range(16))
    assert decode_id(raw.hex(), 16, "f") == raw.hex()
    assert decode_id(raw.hex().upper(), 16, "f") == raw.hex()
    assert decode_id(base64.b64encode(raw).decode(), 16, "f") == raw.hex()
    assert decode_id(base64.urlsafe_b64encode(bytes([251] * 8)).decode().rstrip("="), 8, "f") == "fb" * 8
    assert decode_id("", 8, "f") == ""
    with pytest.raises(FieldError, match="expected 8 bytes"):
        decode_id("abc", 8, "spanId")


def test_span_kinds_from_numbers_and_names():
    assert [span_kind(k) for k in (0, 1, 2, 3, "SPAN_KIND_CLIENT", "server", 99, None)] == \
        ["UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "CLIENT", "SERVER", "UNSPECIFIED", "UNSPECIFIED"]


def test_every_anyvalue_form():
    assert any_value({"intValue": "12"}, "v") == 12 and any_value({"intValue": 12}, "v") == 12
    assert any_value({"doubleValue": 0.5}, "v") == 0.5 and any_value({"boolValue": True}, "v") is True
    assert any_value({"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}]}}, "v") == ["a", 2]
    assert any_value({"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}}, "v") == {"k": "v"}
    assert any_value({"bytesValue": "AAE="}, "v") == "AAE=" and any_value({}, "v") is None
    assert any_value({"string_value": "snake"}, "v") == "snake"
    with pytest.raises(FieldError, match="not an integer"):
        any_value({"intValue": "twelve"}, "attributes[0].value")


def test_flattened_and_nested_attributes_read_alike():
    flat = attribute_tree({"retrieval.documents.1.document.id": "b", "retrieval.documents.0.document.id": "a"})
    nested = attribute_tree({"retrieval.documents": [{"document": {"id": "a"}}, {"document": {"id": "b"}}]})
    assert [d["document"]["id"] for d in items(flat["retrieval"]["documents"])] == ["a", "b"]
    assert [d["document"]["id"] for d in items(nested["retrieval"]["documents"])] == ["a", "b"]
    both = attribute_tree({"input": "x", "input.value": "y"})  # a key that is also a prefix keeps both
    assert both["input"] == {"": "x", "value": "y"}


def test_a_request_that_is_not_otlp_says_what_it_expected():
    [error] = list(spans_from_request({"spans": []}, ""))
    assert error.field == "resourceSpans" and "ExportTraceServiceRequest" in error.message


def test_links_and_bare_urls_cite_the_document_with_that_url():
    from citecheck.contract.log import Chunk
    chunk = Chunk("d1", "d1", "https://Example.com/a/", None, None, "text", None, None, None, None, None)
    text = "See https://example.com/a. Also this. [b](https://example.com/b)"
    first, second = link_citations(text, [chunk], [None])
    assert first.chunk_id == "d1" and text[first.answer_start:first.answer_end] == "https://example.com/a"
    assert second.chunk_id == "https://example.com/b"  # no document has it: unretrieved_source when checked
    # a link after the full stop cites the sentence it follows: an empty span on that full stop
    assert second.answer_start == second.answer_end == text.index("this.") + 4
    assert text[second.locator["link_start"]:second.locator["link_end"]] == "[b](https://example.com/b)"


@pytest.mark.parametrize("after", ["[leave](https://example.com/leave)", "([leave](https://example.com/leave))",
                                   "https://example.com/leave"])
def test_a_link_after_its_sentence_is_not_an_uncited_sentence_of_its_own(after):
    from citecheck.contract.log import Answer, Chunk
    chunk = Chunk("d1", "d1", "https://example.com/leave", None, None, "Up to 30 days of leave carry over.",
                  None, None, checksum("Up to 30 days of leave carry over."), None, None)
    text = f"Up to 30 days of leave carry over. {after}"
    [link] = link_citations(text, [chunk], [None])
    result = check_answer(Answer("a", "q", text, (chunk,), (link,)))
    assert [s.uncited for s in result.sentences] == [False] * len(result.sentences)
    assert result.citations[0].status == "not_verifiable" and result.citations[0].sentence == 0
    if after.startswith(("[", "(")):  # words after the link are a sentence of their own, uncited
        more = check_answer(Answer("a", "q", text + " Interns get none", (chunk,), (link,)))
        assert [s.uncited for s in more.sentences][-1] is True
    assert normal_url("HTTPS://Example.com/x/#frag") == "https://example.com/x"


# --- property: how spans are encoded, ordered and split into exports never changes the answers -----

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)


@st.composite
def span_trees(draw):
    """Traces of random trees: a CHAIN root, and under it retrievers, tools and LLM calls, nested."""
    traces = []
    trace_ids = draw(st.lists(st.binary(min_size=16, max_size=16).map(bytes.hex), min_size=1, max_size=3, unique=True))
    for t, trace_id in enumerate(trace_ids):
        ids = draw(st.lists(st.binary(min_size=8, max_size=8).map(bytes.hex), min_size=2, max_size=8, unique=True))
        spans = []
        for k, span_id in enumerate(ids):
            parent = None if k == 0 else ids[draw(st.integers(0, k - 1))]
            kind = "CHAIN" if k == 0 else draw(st.sampled_from(["RETRIEVER", "LLM", "TOOL", "CHAIN"]))
            attrs = {"openinference.span.kind": kind}
            if k == 0:
                attrs.update({"input.value": draw(_TEXT), "output.value": draw(_TEXT) + " [1]."})
            if kind == "RETRIEVER":
                for i in range(draw(st.integers(0, 3))):
                    attrs[f"retrieval.documents.{i}.document.content"] = draw(_TEXT)
                    if draw(st.booleans()):
                        attrs[f"retrieval.documents.{i}.document.id"] = f"doc-{t}-{k}-{i}"
            if kind == "LLM":
                attrs["llm.output_messages.0.message.content"] = draw(_TEXT)
                attrs["llm.model_name"] = draw(st.sampled_from(["m1", "m2"]))
            start = draw(st.integers(1, 10**6))
            spans.append((trace_id, span_id, parent, kind, start, start + draw(st.integers(0, 10**6)), attrs))
        traces.append(spans)
    return [s for spans in traces for s in spans]


def _encode(span, b64):
    trace_id, span_id, parent, kind, start, end, attrs = span
    enc = (lambda h: base64.b64encode(bytes.fromhex(h)).decode()) if b64 else (lambda h: h)
    out = {"traceId": enc(trace_id), "spanId": enc(span_id), "name": kind.lower(), "kind": 1,
           "startTimeUnixNano": str(start), "endTimeUnixNano": end,
           "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]}
    if parent:
        out["parentSpanId"] = enc(parent)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(span_trees(), st.randoms(use_true_random=False), st.booleans(), st.integers(1, 5), st.booleans())
def test_encoding_order_and_chunking_into_exports_never_change_the_answers(tmp_path, spans, rnd, b64, per, array):
    def answers_of(encoded_spans, chunk, as_array, name):
        exports = [_otlp(encoded_spans[i:i + chunk]) for i in range(0, len(encoded_spans), chunk)]
        path = tmp_path / name
        path.write_text(json.dumps(exports) if as_array else "\n".join(json.dumps(e) for e in exports))
        got = list(import_spans([str(path)], read_otlp, "otel", TraceSummary()))
        assert not [g for g in got if isinstance(g, RecordError)]
        return sorted((answer_to_dict(a) for a in got), key=lambda d: d["answer_id"])

    reference = answers_of([_encode(s, False) for s in spans], len(spans), False, "ref.jsonl")
    shuffled = list(spans)
    rnd.shuffle(shuffled)
    assert answers_of([_encode(s, b64) for s in shuffled], per, array, "other.json") == reference
    assert len(reference) == len({s[0] for s in spans})  # one answer per trace (one root each)
    for line in reference:  # every answer is a valid log line
        assert parse_line(json.dumps(line)).answer_id == line["answer_id"]


def test_a_span_sent_twice_counts_once_and_files_read_in_any_order(tmp_path):
    data = (TRACES / "openinference_rag.jsonl").read_text()
    (tmp_path / "a.jsonl").write_text(data + data)
    [a], errors, _ = (lambda s: ([x for x in s if not isinstance(x, RecordError)], [], None))(
        list(import_spans([str(tmp_path / "a.jsonl")], read_otlp, "otel", TraceSummary())))
    assert len(a.chunks) == 2


def test_a_random_order_of_many_orphans_is_placed_the_same_way():
    """Spans whose parents never came are placed by time, whatever order they arrive in."""
    from citecheck.importers.spans import Span
    trace = "ab" * 16
    roots = [Span(trace, f"{r:016x}", None, "root", "CHAIN", r * 100, r * 100 + 50,
                  {"input.value": f"q{r}", "output.value": f"a{r}"}) for r in range(1, 4)]
    orphans = [Span(trace, f"{1000 + k:016x}", "ffffffffffffffff", "retrieve", "RETRIEVER", start, start + 1,
                    {"retrieval.documents.0.document.id": f"d{k}", "retrieval.documents.0.document.content": "x"})
               for k, start in enumerate([110, 210, 260, 320, 90])]
    spans = roots + orphans
    reference = [(a.answer_id, [c.chunk_id for c in a.chunks]) for a in answers(spans, "otel", TraceSummary())]
    assert reference == [(f"{trace}:{1:016x}", ["d4", "d0"]), (f"{trace}:{2:016x}", ["d1", "d2"]),
                         (f"{trace}:{3:016x}", ["d3"])]  # d2 at 260 is after root 2's end: the last root before it
    for seed in range(5):
        shuffled = list(spans)
        random.Random(seed).shuffle(shuffled)
        assert [(a.answer_id, [c.chunk_id for c in a.chunks])
                for a in answers(shuffled, "otel", TraceSummary())] == reference


@pytest.mark.parametrize("provider, request_name, response_name", [
    ("anthropic", "anthropic_search_request.json", "anthropic_search_response.json"),
    ("openai", "openai_web_request.json", "openai_web_response.json"),
    ("openai", "openai_file_request.json", "openai_file_response.json"),
    ("gemini", "gemini_search_request.json", "gemini_search_response.json"),
    ("cohere", "cohere_v2_request.json", "cohere_v2_response.json"),
    ("cohere", "cohere_v1_request.json", "cohere_v1_response.json"),
])
def test_every_provider_response_recorded_on_an_llm_span_reads_as_its_importer_reads_it(
        tmp_path, provider, request_name, response_name):
    """Differential: the trace importer and ``citecheck import PROVIDER`` agree on the answer text,
    the citations and the chunks of the same recorded exchange."""
    from citecheck.importers import cohere, gemini, openai
    from citecheck.importers.exchange import import_files

    module = {"anthropic": anthropic_importer, "openai": openai, "gemini": gemini, "cohere": cohere}[provider]
    [direct] = list(import_files(module.PROVIDER, IMPORTERS / response_name, IMPORTERS / request_name))
    trace = "2d" * 16
    spans = [
        {"traceId": trace, "spanId": "2d00000000000001", "name": "ask", "startTimeUnixNano": "1", "endTimeUnixNano": "9",
         "attributes": _attrs({"openinference.span.kind": "CHAIN", "input.value": "the question"})},
        {"traceId": trace, "spanId": "2d00000000000002", "parentSpanId": "2d00000000000001", "name": "llm",
         "startTimeUnixNano": "2", "endTimeUnixNano": "8",
         "attributes": _attrs({"openinference.span.kind": "LLM",
                               "input.value": (IMPORTERS / request_name).read_text(),
                               "output.value": (IMPORTERS / response_name).read_text()})},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_otlp(spans)))
    [a] = list(import_spans([str(path)], read_otlp, "otel", TraceSummary()))
    assert (a.answer, a.citations, a.chunks) == (direct.answer, direct.citations, direct.chunks)
    assert a.extra["trace"]["citations"] == provider and direct.citations


def test_a_cohere_response_without_its_request_cites_the_trace_documents_by_id(tmp_path):
    trace = "3c" * 16
    response = {"id": "c-1", "finish_reason": "COMPLETE", "message": {
        "role": "assistant", "content": [{"type": "text", "text": "Refunds take 5-7 business days."}],
        "citations": [{"start": 0, "end": 31, "text": "Refunds take 5-7 business days.",
                       "sources": [{"type": "document", "id": "faq-2", "document": {"id": "faq-2"}}]}]}}
    spans = [
        {"traceId": trace, "spanId": "3c00000000000001", "name": "retrieve", "startTimeUnixNano": "1",
         "endTimeUnixNano": "2", "attributes": _attrs({
             "openinference.span.kind": "RETRIEVER",
             "retrieval.documents.0.document.id": "faq-1", "retrieval.documents.0.document.content": "Shipping is free.",
             "retrieval.documents.1.document.id": "faq-2",
             "retrieval.documents.1.document.content": "Refunds take 5-7 business days to arrive."})},
        {"traceId": trace, "spanId": "3c00000000000002", "parentSpanId": "3c00000000000001", "name": "llm",
         "startTimeUnixNano": "3", "endTimeUnixNano": "4",
         "attributes": _attrs({"openinference.span.kind": "LLM", "output.value": json.dumps(response)})},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_otlp(spans)))
    [a] = list(import_spans([str(path)], read_otlp, "otel", TraceSummary()))
    assert [c.chunk_id for c in a.citations] == ["faq-2"] and [c.chunk_id for c in a.chunks] == ["faq-1", "faq-2"]
    assert a.extra["trace"]["citations"] == "cohere"
    assert "unretrieved_source" not in check_answer(a).citations[0].reasons


def test_a_score_that_is_not_a_finite_number_is_left_out(tmp_path):
    trace = "4b" * 16
    attrs = _attrs({"openinference.span.kind": "RETRIEVER", "input.value": "q", "output.value": "a [1].",
                    "retrieval.documents.0.document.content": "x", "retrieval.documents.1.document.content": "y",
                    "retrieval.documents.1.document.score": "1e999"})
    attrs.append({"key": "retrieval.documents.0.document.score", "value": {"doubleValue": "NaN"}})
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_otlp([{"traceId": trace, "spanId": "4b00000000000001", "startTimeUnixNano": "1",
                                       "endTimeUnixNano": "2", "attributes": attrs}])))
    out = tmp_path / "log.jsonl"
    code, _, err = run_cli("import", "otel", str(path), "--out", str(out))
    assert code == 0, err
    [(_, a)] = list(read_log(out))
    assert [c.retrieval_score for c in a.chunks] == [None, None]


def test_without_its_root_an_agent_still_gives_the_last_llm_answer_not_its_plan(tmp_path):
    """The root span ends last, so it is the one most likely missing from a file: the earliest span
    then stands in for it, but a planning LLM call is never taken for the answer."""
    exports = json.loads((TRACES / "otlp_agent_base64.json").read_text())
    exports[1]["resourceSpans"][0]["scopeSpans"][0]["spans"] = [
        s for s in exports[1]["resourceSpans"][0]["scopeSpans"][0]["spans"] if s["name"] != "agent.run"]
    path = tmp_path / "noroot.json"
    path.write_text(json.dumps(exports))
    [a] = list(import_spans([str(path)], read_otlp, "otel", TraceSummary()))
    assert a.answer.startswith("Yes: up to 45 days") and a.model == "claude-sonnet-4-5"
    assert "no root span: the earliest span stands in for it" in a.extra["trace"]["notes"]


def test_a_recorded_request_whose_documents_were_retrieved_keeps_the_trace_ids(tmp_path):
    request = json.loads((IMPORTERS / "anthropic_request.json").read_text())
    response = json.loads((IMPORTERS / "anthropic_response.json").read_text())
    [direct] = list(anthropic_importer.import_pair(IMPORTERS / "anthropic_request.json",
                                                   IMPORTERS / "anthropic_response.json"))
    trace = "5a" * 16
    retrieved = {"openinference.span.kind": "RETRIEVER"}
    for k, chunk in enumerate(direct.chunks):
        retrieved[f"retrieval.documents.{k}.document.id"] = f"kb-{k + 1}"
        retrieved[f"retrieval.documents.{k}.document.content"] = chunk.text
    spans = [
        {"traceId": trace, "spanId": "5a00000000000001", "name": "ask", "startTimeUnixNano": "1", "endTimeUnixNano": "9",
         "attributes": _attrs({"openinference.span.kind": "CHAIN", "input.value": "How do refunds work?"})},
        {"traceId": trace, "spanId": "5a00000000000002", "parentSpanId": "5a00000000000001", "name": "retrieve",
         "startTimeUnixNano": "2", "endTimeUnixNano": "3", "attributes": _attrs(retrieved)},
        {"traceId": trace, "spanId": "5a00000000000003", "parentSpanId": "5a00000000000001", "name": "llm",
         "startTimeUnixNano": "4", "endTimeUnixNano": "8",
         "attributes": _attrs({"openinference.span.kind": "LLM", "input.value": json.dumps(request),
                               "output.value": json.dumps(response)})},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_otlp(spans)))
    [a] = list(import_spans([str(path)], read_otlp, "otel", TraceSummary()))
    assert [c.chunk_id for c in a.chunks] == ["kb-1", "kb-2"]
    by_index = {c.chunk_id: f"kb-{k + 1}" for k, c in enumerate(direct.chunks)}
    assert [c.chunk_id for c in a.citations] == [by_index.get(c.chunk_id, c.chunk_id) for c in direct.citations]
    assert "notes" not in a.extra["trace"]  # the answer was found: no false "no final answer" note


def _batch(traces: int, bad_attribute=None):
    """One export of several requests, as a collector's file exporter writes a batch on one line."""
    spans = []
    for t in range(traces):
        trace = f"{t + 1:032x}"
        attrs = {"openinference.span.kind": "CHAIN", "input.value": f"question {t}", "output.value": f"answer {t}."}
        spans.append({"traceId": trace, "spanId": f"{t + 1:016x}", "name": "rag", "startTimeUnixNano": "1",
                      "endTimeUnixNano": "2", "attributes": _attrs(attrs)})
    if bad_attribute is not None:
        spans[1]["attributes"].append({"key": "bad", "value": bad_attribute})
    return _otlp(spans)


@pytest.mark.parametrize("bad, field", [
    ({"stringValue": "\ud83d"}, "resourceSpans[0].scopeSpans[0].spans[1].attributes[3].value.stringValue"),
    ("deep", "resourceSpans[0].scopeSpans[0].spans[1].attributes[3].value"),
])
def test_one_bad_span_costs_only_itself_not_the_other_requests_of_its_batch(tmp_path, bad, field):
    if bad == "deep":  # 200 levels of kvlists: past what an attribute may nest, far below what JSON decoders take
        bad = {"stringValue": "x"}
        for _ in range(200):
            bad = {"kvlistValue": {"values": [{"key": "k", "value": bad}]}}
    path = tmp_path / "batch.jsonl"
    text = json.dumps(_batch(4, bad))  # (json.dumps writes the lone surrogate as an escape, as a bad exporter does)
    other = json.dumps(_batch(1)).replace("question 0", "next line").replace(f"{1:032x}", "f" * 32)
    path.write_text(text + "\n" + other + "\n")
    got, errors, _ = imported_from(path)
    [error] = errors
    assert error.line == 1 and error.field.startswith(field)
    assert sorted(a.question for a in got) == ["next line", "question 0", "question 2", "question 3"]


def test_a_batch_line_longer_than_a_log_line_may_be_is_read(tmp_path):
    from citecheck.storage.lines import MAX_LINE_BYTES
    batch = _batch(3)
    big = "x" * (MAX_LINE_BYTES + 1000)
    batch["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"].append({"key": "blob", "value": {"stringValue": big}})
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps(batch) + "\n")
    got, errors, _ = imported_from(path)
    assert errors == [] and len(got) == 3


def test_a_parquet_file_given_to_otel_says_which_importer_reads_it(tmp_path):
    path = tmp_path / "spans.parquet"
    path.write_bytes(b"PAR1" + b"\0" * 64 + b"PAR1")
    got, [error], _ = imported_from(path)
    assert got == [] and "citecheck import phoenix" in error.message


def imported_from(path):
    return imported_traces([path], read_otlp, "otel")


def _otlp_span(span_id: str, kind: str, start: int, attributes: dict, parent: str | None = "01" * 8) -> dict:
    span = {"traceId": "5e" * 16, "spanId": span_id * 8, "name": kind.lower(), "kind": 1,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 1),
            "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": kind}}]
            + [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()]}
    if parent:
        span["parentSpanId"] = parent
    return span


def _retrieved(prefix: str, docs: list[tuple[str, str]]) -> dict:
    out = {}
    for i, (doc_id, text) in enumerate(docs):
        out[f"{prefix}.{i}.document.id"] = doc_id
        out[f"{prefix}.{i}.document.content"] = text
    return out


@pytest.mark.parametrize("inputs_recorded", [True, False])
def test_a_reranker_takes_the_place_of_what_it_reranked_and_a_search_tools_results_are_kept(tmp_path, inputs_recorded):
    """A new user's trace: a web search tool, a retrieval, a reranker of the retrieval. The
    reranker's output took the place of every document, the tool's results were dropped, and the
    prompt's [1]-[4] then named the wrong documents."""
    web = [{"url": "https://a.example/leave", "title": "Leave", "content": "Parental leave can be split in two."},
           {"url": "https://b.example/sick", "title": "Sick", "content": "Sick leave is 12 days a year."}]
    store = [("s1", "Annual leave is 18 days."), ("s2", "Leave carries over 5 days."), ("s3", "Unrelated text.")]
    reranker = _retrieved("reranker.output_documents", [store[1], store[0]])
    if inputs_recorded:
        reranker |= _retrieved("reranker.input_documents", store)
    spans = [
        _otlp_span("01", "CHAIN", 1, {"input.value": "How much leave?", "output.value": "It is 18 days [4]."}, None),
        _otlp_span("02", "TOOL", 2, {"output.value": json.dumps(web)}),
        _otlp_span("03", "RETRIEVER", 3, _retrieved("retrieval.documents", store)),
        _otlp_span("04", "RERANKER", 4, reranker),
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    [a] = list(import_spans([str(path)], read_otlp, "otel", TraceSummary()))
    assert [c.text for c in a.chunks] == [web[0]["content"], web[1]["content"], store[1][1], store[0][1]]
    assert check_answer(a).ok  # [4] is the document the model was shown as 4


def test_a_reranker_with_only_its_output_replaces_the_retrievals_before_it_not_those_after():
    from citecheck.importers.spans import Span
    from citecheck.importers.traces import Request, documents_of

    def span(sid, kind, start, attributes):
        return Span("5f" * 16, sid * 8, "01" * 8, kind.lower(), kind, start, start + 1, attributes)

    first = span("02", "RETRIEVER", 2, _retrieved("retrieval.documents", [("a", "A text."), ("b", "B text.")]))
    ranked = span("03", "RERANKER", 3, _retrieved("reranker.output_documents", [("b", "B text.")]))
    later = span("04", "RETRIEVER", 4, _retrieved("retrieval.documents", [("c", "C text.")]))
    root = Span("5f" * 16, "01" * 8, None, "chain", "CHAIN", 1, 9, {})
    request = Request("5f" * 16, root, (root, first, ranked, later), {}, ())
    docs, retrieval = documents_of(request)
    assert retrieval and [d.chunk.chunk_id for d in docs] == ["b", "c"]


def test_a_request_whose_retrieval_span_was_unreadable_is_not_said_to_have_had_none(tmp_path):
    """A new user's file: the retriever span's trace id was 'zz'. The answer was written with the
    note "no retrieval in this request", which was false: it now says what was read, and the
    summary says the unreadable record may hold the retrieval."""
    spans = [_otlp_span("01", "CHAIN", 1, {"input.value": "How much leave?", "output.value": "It is 18 days [1]."}, None),
             _otlp_span("02", "RETRIEVER", 2, _retrieved("retrieval.documents", [("s1", "Leave is 18 days.")]))]
    spans[1]["traceId"] = "zz"
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    out = tmp_path / "answers.jsonl"
    code, _, err = run_cli("import", "otel", str(path), "--out", str(out))
    assert code == 4 and "traceId" in err
    assert "imported 1 answer(s); 1 unreadable record(s) left out, each said above" in err
    assert "1 request(s) had no retrieval" in err and "a request's retrieval may be in one of them" in err
    [(_, a)] = list(read_log(out))
    assert a.extra["trace"]["notes"] == ["no retrieval among the spans read for this request"]


@pytest.mark.parametrize("body, said", [
    (lambda raw: __import__("gzip").compress(raw), "gzip-compressed: gunzip -k it first"),
    (lambda raw: b"\n\x8a\x02\n\x1e\n\x1c\n\x0cservice.name\x12\x0c\n\napp\xff\xfe" * 40, "OTLP protobuf?"),
])
def test_a_compressed_or_protobuf_file_is_said_once_not_line_by_line(tmp_path, body, said):
    path = tmp_path / "traces.bin"
    path.write_bytes(body((TRACES / "openinference_rag.jsonl").read_bytes()))
    code, _, err = run_cli("import", "otel", str(path), "--out", str(tmp_path / "a.jsonl"))
    assert code == 2 and said in err and err.count("\n") <= 2, err
    assert not (tmp_path / "a.jsonl").exists()


def test_a_request_with_no_question_found_says_so():
    """An empty question came without a word (a new user's trace with no root input)."""
    from citecheck.importers.spans import Span
    from citecheck.importers.traces import Request, to_answer

    root = Span("6a" * 16, "01" * 8, None, "chain", "CHAIN", 1, 9, {"output.value": "It is 18 days."})
    a = to_answer(Request("6a" * 16, root, (root,), {}, ()), "otel")
    assert a.question == "" and any(n.startswith("no question found") for n in a.extra["trace"]["notes"])
    root = Span("6a" * 16, "01" * 8, None, "chain", "CHAIN", 1, 9, {"input.value": "How much?", "output.value": "18."})
    assert not any(n.startswith("no question") for n in to_answer(Request("6a" * 16, root, (root,), {}, ()), "otel")
                   .extra["trace"].get("notes", []))


@pytest.mark.parametrize("fixture, right", [
    ("openinference_rag.jsonl", "otel"), ("langfuse_traces.jsonl", "langfuse"), ("phoenix_rag.jsonl", "phoenix"),
    ("langsmith_agent_runs.jsonl", "langsmith")])
@pytest.mark.parametrize("given", ["otel", "langfuse", "phoenix", "langsmith"])
def test_a_trace_file_given_to_another_importer_is_refused_naming_the_one_that_reads_it(tmp_path, fixture, right,
                                                                                      given):
    """A new user gave an OTLP file to `import phoenix`: each record said "context.span_id: is
    required", not which importer reads it."""
    code, _, err = run_cli("import", given, str(TRACES / fixture), "--out", str(tmp_path / "a.jsonl"))
    if given == right:  # (two fixtures hold a malformed record of their own among the good ones)
        assert code in (0, 4) and "read it with" not in err, err
    else:
        assert code == 4 and f"read it with `citecheck import {right}`" in err, err


@pytest.mark.parametrize("mime, question, answer", [
    ("application/json", "How much leave?", "It is 18 days."),
    (None, '"How much leave?"', '"It is 18 days."'),  # (text that is quoted: kept as it is)
])
def test_a_value_the_span_says_is_a_json_string_is_read_as_its_text(tmp_path, mime, question, answer):
    """A new user's trace: output.value '"It is 18 days."' with output.mime_type application/json
    (an instrumentation that serialises every value) kept its quote marks in the answer."""
    attributes = {"input.value": json.dumps("How much leave?"), "output.value": json.dumps("It is 18 days.")}
    if mime:
        attributes |= {"input.mime_type": mime, "output.mime_type": mime}
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [_otlp_span("01", "CHAIN", 1, attributes,
                                                                                          None)]}]}]}))
    [a] = list(import_spans([str(path)], read_otlp, "otel", TraceSummary()))
    assert (a.question, a.answer) == (question, answer)
