"""OpenAI, Gemini and Cohere importers on fixtures shaped like the documented API bodies."""

import json
from dataclasses import replace
from pathlib import Path

import pytest
from citecheck.checking.checker import check_answer
from citecheck.contract import reasons
from citecheck.contract.log import checksum, parse_line
from citecheck.errors import FieldError, RecordError
from citecheck.importers import cohere, gemini, openai
from citecheck.importers.exchange import import_files, import_pairs, parse_events
from helpers import run_cli

DATA = Path(__file__).parent / "data" / "importers"


def load(name):
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def one(provider, response, request=None):
    items = list(import_files(provider, DATA / response, DATA / request if request else None))
    errors = [i for i in items if isinstance(i, RecordError)]
    assert not errors, errors
    [answer] = items
    return answer


def spans(answer):
    return [(answer.answer[c.answer_start:c.answer_end], c.chunk_id or c.document_id) for c in answer.citations]


# --- OpenAI ----------------------------------------------------------------------------------


def test_openai_fixtures_validate_against_sdk_types():
    import pydantic
    from openai.types.chat import ChatCompletion
    from openai.types.responses import Response, ResponseStreamEvent

    for name in ("openai_web_response.json", "openai_file_response.json"):
        response = Response.model_validate(load(name))
        kinds = {a.type for item in response.output if item.type == "message"
                 for part in item.content if part.type == "output_text" for a in part.annotations}
        assert kinds and kinds <= {"url_citation", "file_citation"}
    assert ChatCompletion.model_validate(load("openai_chat_response.json")).choices[0].message.annotations
    events, errors = parse_events((DATA / "openai_web_stream.sse").read_text(encoding="utf-8"), "s")
    adapter = pydantic.TypeAdapter(ResponseStreamEvent)
    assert not errors and {adapter.validate_python(e.data).type for e in events} >= {
        "response.output_text.delta", "response.output_text.annotation.added", "response.completed"}



def test_openai_url_citations_cover_the_inline_link_after_non_ascii_text():
    a = one(openai.PROVIDER, "openai_web_response.json", "openai_web_request.json")
    assert a.answer_id == "resp_68b5a1c2d3e4f5061728394a" and a.model == "gpt-4.1-2025-04-14"
    assert a.question.startswith("How cold did it get for Curiosity")
    nasa, wiki = a.citations
    link = a.answer[nasa.answer_start:nasa.answer_end]
    assert link.startswith("([nasa.gov](") and link.endswith("))")  # end exclusive: the last char is ")"
    assert "“Curiosity” logged −78 °C at Gale crater 🚀" in a.answer[:nasa.answer_start]
    assert a.answer[wiki.answer_start:wiki.answer_end].endswith("Curiosity_(rover)?utm_source=openai))")
    assert nasa.locator["span_check"] == wiki.locator["span_check"] == "ok"
    result = check_answer(a)
    # the search listed only NASA's page as a source: the Wikipedia citation is unretrieved
    # no quote in this format: not verifiable (neither verified nor failed), not quote_missing
    assert result.citations[0].reasons == () and result.citations[0].status == "not_verifiable"
    assert result.citations[1].reasons == (reasons.UNRETRIEVED_SOURCE,)
    assert result.tally.not_verifiable == 1 and result.tally.failed == 1
    # the web source has no text: the sentence's number cannot be checked, and is not reported
    assert result.sentences[0].reasons == ()
    # each link belongs to the sentence it sits in
    assert [result.sentences[i].citations for i in range(2)] == [(0,), (1,)]
    assert a.extra["usage"]["total_tokens"] == 8516 and a.extra["provider"] == "openai"


def test_openai_stream_adds_up_to_the_response():
    streamed = one(openai.PROVIDER, "openai_web_stream.sse")
    whole = one(openai.PROVIDER, "openai_web_response.json")
    assert streamed.answer == whole.answer and streamed.citations == whole.citations
    assert streamed.chunks == whole.chunks and streamed.answer_id == whole.answer_id


def test_openai_file_citations_are_positions_with_search_results_as_sources():
    a = one(openai.PROVIDER, "openai_file_response.json", "openai_file_request.json")
    assert a.question == "How long do refunds take, and can I get cash for a café voucher?"
    assert [c.chunk_id for c in a.chunks] == ["file-2dtbBZdjtDKS8eqWxqbgDi#1", "file-8aXkPq1LmZ3Nw7RtYv2cUe#2"]
    assert a.chunks[1].text.startswith("Café vouchers") and a.chunks[0].retrieval_score == 0.91
    first, second, third = a.citations
    assert first.answer_start == first.answer_end and a.answer[first.answer_start] == "."
    result = check_answer(a)
    assert [s.citations for s in result.sentences] == [(0,), (1, 2)]
    assert result.citations[0].chunk_index == 0 and result.citations[1].chunk_index == 1
    assert result.citations[2].reasons == (reasons.UNRETRIEVED_SOURCE,)  # a file the search did not return


def test_openai_chat_completions_annotations():
    a = one(openai.PROVIDER, "openai_chat_response.json")
    [c] = a.citations
    assert a.answer[c.answer_start:c.answer_end].startswith("([wien.info](")
    assert c.locator["span_check"] == "ok" and a.chunks[0].title == "Café Central | wien.info"


def test_openai_malformed_annotation_names_file_and_field(tmp_path):
    resp = load("openai_web_response.json")
    resp["output"][1]["content"][0]["annotations"][1]["start_index"] = "12"
    path = tmp_path / "resp.jsonl"
    path.write_text(json.dumps(load("openai_web_response.json")) + "\n" + json.dumps(resp) + "\n[1]\n")
    items = list(import_files(openai.PROVIDER, path))
    errors = [i for i in items if isinstance(i, RecordError)]
    assert len(items) == 3 and len(errors) == 2
    assert (errors[0].file, errors[0].line, errors[0].field) == (
        str(path), 2, "response.output[1].content[0].annotations[1].start_index")
    assert errors[1].line == 3 and errors[1].field == "response"


# --- Gemini ----------------------------------------------------------------------------------


def test_gemini_byte_offsets_after_multibyte_text_and_omitted_zero_start():
    a = one(gemini.PROVIDER, "gemini_search_response.json", "gemini_search_request.json")
    support = load("gemini_search_response.json")["candidates"][0]["groundingMetadata"]["groundingSupports"]
    assert "startIndex" not in support[0]["segment"]  # omitted zero, as the API sends it
    assert support[1]["segment"]["startIndex"] > a.answer.index("好")  # bytes, not characters
    assert spans(a) == [
        ("Gale crater’s floor dropped to −78 °C in winter.", "grounding-1"),
        ("好奇号 carried a “MMRTG” generator 🚀 of about 110 W.", "grounding-2"),
        ("好奇号 carried a “MMRTG” generator 🚀 of about 110 W.", "grounding-1"),
        ("It landed in 2012.", "grounding-5"),
    ]
    assert all(c.locator["span_check"] == "ok" for c in a.citations)
    assert a.citations[2].locator["confidence"] == 0.61
    assert a.chunks[0].source.startswith("https://vertexaisearch.cloud.google.com/") and a.chunks[0].title == "nasa.gov"
    result = check_answer(a)
    assert result.citations[3].reasons == (reasons.UNRETRIEVED_SOURCE,)  # index 4 of 2 chunks
    assert result.citations[0].status == "not_verifiable"  # web chunks carry no text
    # "It landed in 2012." cites a chunk that is not there: no source, so its number is reported
    assert result.sentences[2].reasons == (reasons.NUMBER_NOT_IN_SOURCE,)
    assert result.sentences[0].reasons == ()  # "−78 °C": a web source, nothing to check against
    assert a.extra["web_search_queries"][0] == "Curiosity rover lowest temperature"


def test_gemini_stream_offsets_index_the_joined_chunks():
    streamed = one(gemini.PROVIDER, "gemini_search_stream.sse")
    whole = one(gemini.PROVIDER, "gemini_search_response.json")
    assert streamed.answer == whole.answer
    assert spans(streamed) == spans(whole)
    assert all(c.locator["span_check"] == "ok" for c in streamed.citations)


def test_gemini_multipart_answer_with_a_thought_first():
    a = one(gemini.PROVIDER, "gemini_multipart_response.json")
    assert not a.answer.startswith("**Checking")  # the thought is not the answer
    assert spans(a) == [
        ("Le café ouvre à 7 h.", "grounding-1"),  # partIndex 1: offsets into that part
        ("le four chauffe à 220 °C pendant 12 minutes.", "grounding-2"),  # partIndex 2
        ("le four chauffe à 220 °C", "grounding-2"),  # no partIndex, parts[0] a thought: the answer's text
    ]
    assert all(c.locator["span_check"] == "ok" for c in a.citations)
    result = check_answer(a)
    # retrievedContext carries the text: not verifiable (no quote), but the numbers are checked in it
    assert a.chunks[1].text.startswith("Le four chauffe") and result.citations[0].status == "not_verifiable"
    assert [s.reasons for s in result.sentences] == [(), ()]
    edited = a.chunks[1].text.replace("12", "15")
    changed = replace(a, chunks=(a.chunks[0], a.chunks[1]._replace(text=edited, checksum=checksum(edited))))
    assert check_answer(changed).sentences[1].unsupported_numbers == ("12",)


@pytest.mark.parametrize("mutate, field", [
    (lambda r: r.pop("candidates"), "response.candidates"),
    (lambda r: r["candidates"][0]["groundingMetadata"]["groundingSupports"][1]["segment"].update(endIndex=-3),
     "response.candidates[0].groundingMetadata.groundingSupports[1].segment.endIndex"),
    (lambda r: r["candidates"][0]["groundingMetadata"]["groundingSupports"][0].update(groundingChunkIndices=["0"]),
     "response.candidates[0].groundingMetadata.groundingSupports[0].groundingChunkIndices"),
    (lambda r: r["candidates"][0]["groundingMetadata"]["groundingChunks"].append({"image": {}}),
     "response.candidates[0].groundingMetadata.groundingChunks[2]"),
])
def test_gemini_malformed_bodies_name_the_field(tmp_path, mutate, field):
    resp = load("gemini_search_response.json")
    mutate(resp)
    path = tmp_path / "resp.json"
    path.write_text(json.dumps(resp, indent=1))
    [error] = list(import_files(gemini.PROVIDER, path))
    assert isinstance(error, RecordError) and (error.file, error.line, error.field) == (str(path), 1, field)


# --- Cohere ----------------------------------------------------------------------------------


def test_cohere_v2_documents_from_the_request():
    a = one(cohere.PROVIDER, "cohere_v2_response.json", "cohere_v2_request.json")
    assert [c.chunk_id for c in a.chunks] == ["runbook-7", "doc:1"]  # the API's id for a document without one
    assert a.chunks[1].text == "The café closes at 17:00 on Fridays 🍰." and a.model == "command-a-03-2025"
    assert spans(a) == [("page the on-call lead within 15 minutes", "runbook-7"),
                        ("closes at 17:00 on Fridays", "doc:1"),
                        ("stays at 19 °C", "runbook-7"), ("stays at 19 °C", "doc:9")]
    assert all(c.locator["span_check"] == "ok" for c in a.citations)
    result = check_answer(a)
    assert result.citations[3].reasons == (reasons.UNRETRIEVED_SOURCE,)  # doc:9 was not sent
    assert [c.status for c in result.citations] == ["not_verifiable"] * 3 + ["failed"]
    assert result.ok is False and not any(s.reasons for s in result.sentences)  # numbers and “SEV-1” are in the documents


def test_cohere_v2_without_the_request_uses_the_documents_in_the_response():
    a = one(cohere.PROVIDER, "cohere_v2_response.json")
    assert [c.chunk_id for c in a.chunks] == ["runbook-7", "doc:1", "doc:9"]


def test_cohere_v2_stream_adds_up_to_the_response():
    streamed = one(cohere.PROVIDER, "cohere_v2_stream.sse", "cohere_v2_request.json")
    whole = one(cohere.PROVIDER, "cohere_v2_response.json", "cohere_v2_request.json")
    assert streamed.answer == whole.answer and streamed.citations == whole.citations
    assert streamed.extra["usage"] == whole.extra["usage"]


def test_cohere_v1_generated_document_ids():
    a = one(cohere.PROVIDER, "cohere_v1_response.json", "cohere_v1_request.json")
    assert [c.chunk_id for c in a.chunks] == ["doc_0", "doc_1"]
    assert spans(a) == [("5–7 days", "doc_0"), ("never paid out in “cash”", "doc_1"),
                        ("never paid out in “cash”", "doc_0")]
    assert a.question.startswith("How long do refunds take")


def test_cohere_character_offsets_that_disagree_with_the_text_are_marked():
    resp = load("cohere_v2_response.json")
    resp["message"]["citations"][2]["start"] += 2  # an offset counted in another unit
    a = cohere.convert(None, resp, 1)
    assert a.citations[2].locator["span_check"] == "mismatch"
    assert a.citations[2].locator["span_found"] == "ays at 19 °C. 会"[: len(a.citations[2].locator["span_found"])]


# --- streams, pairs and the command line -----------------------------------------------------


def test_sse_parsing_follows_the_rules():
    text = ": comment\nevent: a\ndata: {\"x\":\ndata: 1}\n\nid: 7\ndata: [DONE]\n\ndata: {oops\n\n"
    events, errors = parse_events(text, "s.sse")
    assert [(e.line, e.name, e.data) for e in events] == [(2, "a", {"x": 1})]
    assert [(e.line, e.field) for e in errors] == [(9, "data")]


def test_a_bad_stream_event_is_reported_with_its_line(tmp_path):
    text = (DATA / "cohere_v2_stream.sse").read_text(encoding="utf-8")
    lines = text.split("\n")
    bad = next(i for i, line in enumerate(lines) if '"citation-start"' in line)
    lines[bad] = 'data: {"type": "citation-start", "delta": {"message": {"citations": 5}}}'
    path = tmp_path / "s.sse"
    path.write_text("\n".join(lines))
    error, answer = list(import_files(cohere.PROVIDER, path))
    # the line the event starts on (its event: line), and the rest of the stream still imported
    assert (error.file, error.line, error.field) == (str(path), bad, "event citation-start.delta.message.citations")
    assert len(answer.citations) == 3 and answer.answer == one(cohere.PROVIDER, "cohere_v2_response.json").answer


def test_pairs_report_a_bad_line_by_number_and_go_on(tmp_path):
    good = {"request": load("cohere_v2_request.json"), "response": load("cohere_v2_response.json")}
    stream = {"request": load("cohere_v2_request.json"),
              "response": (DATA / "cohere_v2_stream.sse").read_text(encoding="utf-8")}
    broken = {"request": load("cohere_v2_request.json"), "response": {"message": {"citations": [{"start": "a"}]}}}
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join([json.dumps(good), "{not json", json.dumps({"request": {}}), json.dumps(broken),
                               json.dumps(stream)]) + "\n")
    items = list(import_pairs(cohere.PROVIDER, path))
    answers = [i for i in items if not isinstance(i, RecordError)]
    errors = [i for i in items if isinstance(i, RecordError)]
    assert [(e.file, e.line, e.field) for e in errors] == [
        (str(path), 2, "(json)"), (str(path), 3, "response"), (str(path), 4, "response.message.citations[0].start")]
    assert len(answers) == 2 and answers[0].citations == answers[1].citations  # the JSON body and the stream


def test_cli_imports_each_provider_and_the_log_reads_back(tmp_path):
    for provider, resp, req in [("openai", "openai_web_stream.sse", None),
                                ("gemini", "gemini_search_response.json", "gemini_search_request.json"),
                                ("cohere", "cohere_v2_response.json", "cohere_v2_request.json")]:
        out = tmp_path / f"{provider}.jsonl"
        argv = ["import", provider, "--response", str(DATA / resp), "--out", str(out)]
        if req:
            argv += ["--request", str(DATA / req)]
        code, _, err = run_cli(*argv)
        assert code == 0 and "imported 1 answer(s)" in err
        [line] = out.read_text(encoding="utf-8").splitlines()
        parsed = parse_line(line)
        assert parsed.citations and parsed.extra["provider"] == provider
        code, _, _ = run_cli("check", str(out), "--format", "json")
        assert code in (0, 1)


def test_cli_needs_a_response_or_pairs():
    code, _, err = run_cli("import", "gemini")
    assert code != 0 and "--response" in err and "--pairs" in err
    with pytest.raises(FieldError):
        from argparse import Namespace

        from citecheck.importers.exchange import run
        run(gemini.PROVIDER, Namespace(pairs="p.jsonl", response="r.json", request=None))


def test_the_checker_fails_a_span_whose_text_is_not_the_providers():
    resp = load("gemini_search_response.json")
    ok = check_answer(gemini.convert(None, resp, 1))
    assert not any(reasons.SPAN_MISMATCH in c.reasons for c in ok.citations)
    # a body whose offsets were counted in characters, not bytes: each span with multi-byte text
    # before or in it selects the wrong text
    text = resp["candidates"][0]["content"]["parts"][0]["text"]
    for support in resp["candidates"][0]["groundingMetadata"]["groundingSupports"]:
        seg = support["segment"]
        seg["startIndex"] = text.index(seg["text"])
        seg["endIndex"] = seg["startIndex"] + len(seg["text"])
    bad = check_answer(gemini.convert(None, resp, 1))
    assert [reasons.SPAN_MISMATCH in c.reasons for c in bad.citations] == [True, True, True, True]
    assert bad.citations[0].reasons == (reasons.SPAN_MISMATCH,) and bad.citations[0].status == "failed"


def test_the_checker_fails_an_openai_link_span_that_misses_the_link():
    a = one(openai.PROVIDER, "openai_chat_response.json")
    c = a.citations[0]
    moved = replace(a, citations=(c._replace(answer_start=0, answer_end=c.answer_start),))
    assert reasons.SPAN_MISMATCH in check_answer(moved).citations[0].reasons
    assert reasons.SPAN_MISMATCH not in check_answer(a).citations[0].reasons


# --- not verifiable on the review page -------------------------------------------------------


def test_review_html_marks_not_verifiable_footnotes_and_links_the_source():
    from citecheck.review.html import citation_html, reader_html

    a = one(gemini.PROVIDER, "gemini_search_response.json")
    result = check_answer(a)
    reader = reader_html(result)
    assert '<sup class="cc-nv" title="not verifiable: the format gives no quote">[1 not verifiable]</sup>' in reader
    assert "<sup>[1]</sup>" not in reader  # never shown as a verified footnote
    box = citation_html(result, result.citations[0])
    assert "not verifiable: this format gives no quote" in box and "(no source text in the log)" in box
    assert '<a href="https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQGx1"' in box


def test_review_html_escapes_the_source_and_links_only_http():
    from citecheck.review.html import citation_html

    resp = load("gemini_search_response.json")
    chunks = resp["candidates"][0]["groundingMetadata"]["groundingChunks"]
    chunks[0]["web"]["uri"] = 'https://x.example/"><script>alert(1)</script>'
    chunks[1]["web"]["uri"] = "javascript:alert(1)"
    result = check_answer(gemini.convert(None, resp, 1))
    first, second = (citation_html(result, result.citations[i]) for i in (0, 1))
    assert "<script>" not in first and "&lt;script&gt;" in first and '&quot;&gt;' in first
    assert "<a " not in second and "javascript:alert(1)" in second  # shown as text, never a link


def test_labels_and_export_treat_a_not_verifiable_citation_as_an_item():
    from citecheck.labelling import dataset
    from citecheck.labelling import labels as label_store
    from citecheck.labelling.export import rows

    data = dataset.build([one(cohere.PROVIDER, "cohere_v2_response.json", "cohere_v2_request.json")])
    [items] = data.items_by_answer
    cited = [item for item in items if item.citation is not None]
    assert len(cited) >= 3  # one (sentence, source) item per retrieved source cited
    label = label_store.make_label(cited[0], "supported", "ana")
    [row] = list(rows(data, [label]))
    assert row["mechanical_status"] == "not_verifiable" and row["labels"]["ana"]["label"] == "supported"
    assert row["chunk_text"].startswith("Page the on-call lead")


def test_openai_link_after_the_full_stop_cites_the_sentence_before_it():
    link = "([nasa.gov](https://science.nasa.gov/msl/?utm_source=openai))"
    text = f"Curiosity landed in 2012 at −4.5 °S. {link} Its generator gives 110 W."
    s = text.index(link)
    resp = {"id": "resp_x", "output": [{"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": text, "annotations": [
            {"type": "url_citation", "url": "https://science.nasa.gov/msl/?utm_source=openai", "title": "NASA",
             "start_index": s, "end_index": s + len(link)}]}]}]}
    a = openai.convert(None, resp, 1)
    [c] = a.citations
    assert a.answer[c.answer_start] == "." and c.answer_start == c.answer_end
    assert a.answer[c.locator["link_start"]:c.locator["link_end"]] == link and c.locator["span_check"] == "ok"
    result = check_answer(a)
    assert result.sentences[0].citations == (0,) and result.sentences[0].text.startswith("Curiosity landed")
    assert not result.sentences[0].uncited and result.sentences[1].uncited
    assert result.citations[0].status == "not_verifiable"


def test_gemini_stream_as_a_json_array_in_pairs(tmp_path):
    chunks = [json.loads(line.removeprefix("data: "))
              for line in (DATA / "gemini_search_stream.sse").read_text(encoding="utf-8").splitlines() if line]
    bad = json.loads(json.dumps(chunks))
    bad[1]["candidates"] = "oops"
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps({"request": load("gemini_search_request.json"), "response": chunks}) + "\n"
                    + json.dumps({"response": bad}) + "\n", encoding="utf-8")
    first, error = list(import_pairs(gemini.PROVIDER, path))
    assert spans(first) == spans(one(gemini.PROVIDER, "gemini_search_response.json"))
    assert (error.line, error.field) == (2, "response[1].candidates")


def test_the_judge_and_calibration_take_not_verifiable_items_like_any_other():
    """The mechanics cannot verify a provider citation without a quote; the judge and the
    humans fill the gap: its items are judged from the source text and calibrated."""
    from citecheck.judging import calibration
    from citecheck.judging.judges import BaselineJudge, judge_items
    from citecheck.labelling import dataset
    from citecheck.labelling import labels as label_store

    data = dataset.build([one(cohere.PROVIDER, "cohere_v2_response.json", "cohere_v2_request.json")])
    result = data.results[0]
    statuses = {c.status for c in result.citations}
    assert "not_verifiable" in statuses
    items = judge_items(data.results, None, data.items_by_answer)
    assert items and all(i.chunk.strip() for i in items)  # the document text is what the judge reads
    judge = BaselineJudge()
    verdicts = judge.judge(items)
    assert len(verdicts) == len(items) and all(v.scored for v in verdicts)
    review_items = [i for i in data.items_by_answer[0] if i.citation is not None]
    labels = [label_store.make_label(i, "supported", "ana") for i in review_items]
    report = calibration.calibrate(labels, verdicts, judge.name, judge.prompt.version, adjudicated={}, overlap=1,
                         fingerprints={i.key: i.fingerprint for i in data.all_items})
    assert len(report.pairs.keys) == len(review_items)
