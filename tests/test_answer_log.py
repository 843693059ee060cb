"""``from citecheck import AnswerLog``: a team's pipeline logs answers in one call, and the lines
it writes are read by ``check`` exactly as given."""

from __future__ import annotations

import json
import multiprocessing
from dataclasses import dataclass, field
from pathlib import Path

import anthropic
import pytest
from citecheck import AnswerLog
from citecheck.checking.checker import check_answer
from citecheck.contract.log import Citation, read_log
from citecheck.errors import FieldError, RecordError
from citecheck.importers import anthropic as anthropic_importer
from hypothesis import given, settings
from hypothesis import strategies as st

IMPORTERS = Path(__file__).parent / "data" / "importers"


# Objects shaped as LangChain's Document and LlamaIndex's TextNode / NodeWithScore are (the API reads
# them by their attributes, so the frameworks are not dependencies; docs/logging-api.md uses the real ones).
@dataclass
class LangchainDocument:
    page_content: str
    metadata: dict = field(default_factory=dict)
    id: str | None = None


@dataclass
class TextNode:
    text: str
    node_id: str
    metadata: dict = field(default_factory=dict)

    def get_content(self) -> str:
        return self.text


@dataclass
class NodeWithScore:
    node: TextNode
    score: float | None = None


def lines(path):
    got = [a for _, a in read_log(path)]
    assert not [a for a in got if isinstance(a, RecordError)]
    return got


def test_an_answer_with_markers_and_langchain_documents_is_one_valid_line(tmp_path):
    log = AnswerLog(tmp_path / "answers.jsonl", model="claude-sonnet-4-5", prompt_version="rag-v3")
    docs = [LangchainDocument("Employees get 18 days of earned leave per calendar year.",
                              {"source": "handbook/leave.md", "title": "Leave policy"}, id="leave-2"),
            LangchainDocument("Unused earned leave carries over, up to 45 days in total.", {"chunk_id": "leave-3"})]
    written = log.record(question="How much leave do I get?", chunks=docs,
                         answer="You get 18 days of earned leave per year [1]. Up to 45 days carry over [2].",
                         answer_id="a-1", metadata={"user_segment": "staff"})
    [a] = lines(tmp_path / "answers.jsonl")
    assert a == written
    assert [c.chunk_id for c in a.chunks] == ["leave-2", "leave-3"]
    assert a.chunks[0].source == "handbook/leave.md" and a.chunks[0].title == "Leave policy"
    assert a.chunks[0].checksum.startswith("sha256:") and a.model == "claude-sonnet-4-5"
    assert a.extra == {"user_segment": "staff"} and a.timestamp.endswith("Z")
    result = check_answer(a)
    assert [c.chunk_id for c in result.citations] == ["leave-2", "leave-3"]
    # markers without quotes: not verifiable (never "quote missing"), the numbers found in their chunks
    assert [c.status for c in result.citations] == ["not_verifiable"] * 2
    assert [s.reasons for s in result.sentences] == [(), ()]


def test_llamaindex_nodes_keep_their_ids_and_scores(tmp_path):
    nodes = [NodeWithScore(TextNode("Refunds take 5-7 business days.", "node-a", {"file_name": "faq.md"}), 0.83)]
    a = AnswerLog(tmp_path / "l.jsonl").record(question="Refunds?", chunks=nodes, answer="5-7 business days [1].")
    assert a.chunks[0].chunk_id == "node-a" and a.chunks[0].source == "faq.md" and a.chunks[0].retrieval_score == 0.83


def test_an_anthropic_response_brings_its_citations(tmp_path):
    request = json.loads((IMPORTERS / "anthropic_request.json").read_text())
    message = anthropic.types.Message.model_validate(json.loads((IMPORTERS / "anthropic_response.json").read_text()))
    [direct] = list(anthropic_importer.import_pair(IMPORTERS / "anthropic_request.json",
                                                   IMPORTERS / "anthropic_response.json"))
    # the chunks the pipeline gave as documents, in order, with ids of its own
    docs = [{"chunk_id": f"kb-{k + 1}", "document_id": c.document_id, "source": c.source, "text": c.text,
             "title": c.title} for k, c in enumerate(direct.chunks)]
    assert len(docs) == 2 and request["messages"][0]["content"][0]["type"] == "document"
    a = AnswerLog(tmp_path / "l.jsonl").record(question="How do refunds work?", chunks=docs, response=message)
    assert a.answer == direct.answer and a.model == message.model
    assert [c.quote for c in a.citations] == [c.quote for c in direct.citations]
    for ours, theirs in zip(a.citations, direct.citations, strict=True):  # each cites the document it names by index
        index = theirs.locator["document_index"]
        assert ours.chunk_id == (f"kb-{index + 1}" if index < len(docs) else theirs.chunk_id)
    # logged as the provider gave it: the fabricated quote of the fixture is for check to find, not refused
    ours = check_answer(lines(tmp_path / "l.jsonl")[0]).citations
    theirs = check_answer(direct).citations
    assert [c.reasons for c in ours] == [c.reasons for c in theirs] and any(c.reasons for c in ours)


def test_a_quote_that_is_not_in_its_chunk_is_logged_for_check_to_report(tmp_path):
    chunk = {"chunk_id": "c", "text": "Refunds take 5-7 business days."}
    a = AnswerLog(tmp_path / "l.jsonl").record(
        question="q", chunks=[chunk], answer="Refunds are instant.",
        citations=[{"kind": "span", "answer_start": 0, "answer_end": 20, "chunk_id": "c", "quote": "Refunds are instant",
                    "quote_start": 0, "quote_end": 19}])
    [result] = check_answer(a).citations
    assert result.reasons and not result.verified


def test_bad_offsets_and_fields_are_refused_naming_the_field_and_nothing_is_written(tmp_path):
    log = AnswerLog(tmp_path / "l.jsonl")
    chunk = {"chunk_id": "c", "text": "Refunds take 5-7 business days."}
    cases = [
        (dict(chunks=[{"id": "x"}], answer="a"), "chunks[0].text"),
        (dict(chunks=[{**chunk, "start": 10, "end": 12}], answer="a"), "chunks[0].end"),
        (dict(chunks=[{**chunk, "start": 10}], answer="a"), "chunks[0].start"),
        (dict(chunks=[{**chunk, "checksum": "sha256:00"}], answer="a"), "chunks[0].checksum"),
        (dict(chunks=[chunk], answer="short", citations=[{"kind": "span", "answer_start": 0, "answer_end": 50,
                                                           "chunk_id": "c"}]), "citations[0].answer_end"),
        (dict(chunks=[chunk], answer="Refunds.", citations=[{"kind": "span", "answer_start": 0, "answer_end": 8,
                                                              "chunk_id": "c", "quote": "Refunds take",
                                                              "quote_start": 13, "quote_end": 1}]),
         "citations[0].quote_start"),
        (dict(chunks=[chunk], answer=None), "answer"),
        (dict(chunks=[chunk], answer="a", metadata={"answer_id": "x"}), "metadata.answer_id"),
        (dict(chunks=None, answer="a"), "chunks"),
        (dict(chunks={"chunk_id": "c", "text": "t"}, answer="a"), "chunks"),
        (dict(chunks=[chunk], answer="a", metadata={"request": object()}), "metadata.request"),
        (dict(chunks=[chunk], answer="a", metadata={"request": {1, 2}}), "metadata.request"),
        (dict(chunks=[chunk], answer="a", metadata={"score": float("nan")}), "metadata.score"),
    ]
    for fields, where in cases:
        with pytest.raises(FieldError) as caught:
            log.record(question="q", **fields)
        assert caught.value.field == where, (fields, caught.value)
    assert not (tmp_path / "l.jsonl").exists()


def test_offsets_are_checked_against_the_document_when_it_is_given(tmp_path):
    doc = "Intro. Refunds take 5-7 business days. Outro."
    good = {"chunk_id": "c", "document_id": "faq", "text": "Refunds take 5-7 business days.", "start": 7, "end": 38}
    log = AnswerLog(tmp_path / "l.jsonl")
    a = log.record(question="q", chunks=[good], answer="5-7 days [1].", document_texts={"faq": doc})
    assert (a.chunks[0].start, a.chunks[0].end) == (7, 38)
    with pytest.raises(FieldError, match="document's text at start:end"):
        log.record(question="q", chunks=[{**good, "start": 6, "end": 37}], answer="x", document_texts={"faq": doc})


def _append_many(path, worker):
    log = AnswerLog(path)
    for k in range(50):
        log.record(question=f"q{worker}-{k}", chunks=["x" * 5000], answer="y [1].", answer_id=f"{worker}-{k}")


def test_processes_sharing_a_log_never_tear_a_line(tmp_path):
    path = tmp_path / "shared.jsonl"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_many, args=(path, w)) for w in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert sorted(a.answer_id for a in lines(path)) == sorted(f"{w}-{k}" for w in range(3) for k in range(50))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=4), st.data())
def test_any_valid_quote_offsets_round_trip(tmp_path_factory, texts, data):
    """A citation whose quote is a slice of its chunk is written and read back exactly."""
    chunks = [{"chunk_id": f"c{k}", "text": t} for k, t in enumerate(texts)]
    k = data.draw(st.integers(0, len(texts) - 1))
    start = data.draw(st.integers(0, len(texts[k])))
    end = data.draw(st.integers(start, len(texts[k])))
    answer = data.draw(st.text(min_size=1, max_size=40))
    citation = Citation("span", answer_start=0, answer_end=len(answer), chunk_id=f"c{k}", quote=texts[k][start:end],
                        quote_start=start, quote_end=end)
    path = tmp_path_factory.mktemp("log") / "l.jsonl"
    written = AnswerLog(path).record(question="q", chunks=chunks, answer=answer, citations=[citation])
    [back] = lines(path)
    assert back == written and back.citations == (citation,)


def test_timestamps_and_chunk_ids_are_checked(tmp_path):
    import datetime

    log = AnswerLog(tmp_path / "l.jsonl")
    chunk = {"chunk_id": "c", "text": "x"}
    a = log.build(question="q", chunks=[chunk], answer="a", timestamp=datetime.datetime(2026, 1, 2, 3, 4, 5))
    assert a.timestamp == "2026-01-02T03:04:05.000Z"
    zone = datetime.timezone(datetime.timedelta(hours=2))
    assert log.build(question="q", chunks=[chunk], answer="a",
                     timestamp=datetime.datetime(2026, 1, 2, 5, 0, tzinfo=zone)).timestamp == "2026-01-02T03:00:00.000Z"
    assert log.build(question="q", chunks=[chunk], answer="a", timestamp="2026-01-02T03:04:05Z").timestamp == \
        "2026-01-02T03:04:05Z"
    with pytest.raises(FieldError, match="not an ISO 8601 time") as caught:
        log.build(question="q", chunks=[chunk], answer="a", timestamp="yesterday")
    assert caught.value.field == "timestamp"
    with pytest.raises(FieldError, match="is chunks\\[0\\]'s id too") as caught:
        log.build(question="q", chunks=[chunk, {"chunk_id": "c", "text": "y"}], answer="a")
    assert caught.value.field == "chunks[1].chunk_id"


def test_a_quote_given_for_one_marker_leaves_the_others_not_verifiable_not_failed(tmp_path):
    """A new user gave a quote for [1] only: [2] then failed (quote_missing, and a number "not in
    its source" that was). The markers no citation given stands for are cited as with no citations."""
    chunks = [{"chunk_id": "c1", "text": "Employees get 18 days of earned leave."},
              {"chunk_id": "c2", "text": "Sick leave is 12 days a year."}]
    answer = "Earned leave is 18 days [1]. Sick leave is 12 days [2]."
    log = AnswerLog(tmp_path / "l.jsonl")
    alone = check_answer(log.build(question="q", chunks=chunks, answer=answer))
    for quoted in ([{"kind": "marker", "marker": 1, "quote": "18 days of earned leave"}],
                   [{"kind": "marker", "marker": 1, "at": answer.index("[1]"), "quote": "18 days of earned leave"}]):
        a = log.record(question="q", chunks=chunks, answer=answer, citations=quoted)
        result = check_answer(a)
        assert result.ok and len(result.citations) == 2, result
        first, second = result.citations
        assert first.verified and first.quote == "18 days of earned leave"
        assert (second.marker, second.reasons, second.not_verifiable) == (2, (), True)
        assert second.not_verifiable == alone.citations[1].not_verifiable
    def seen(result):
        return [(c.marker, c.not_verifiable, c.reasons) for c in result.citations]

    assert seen(check_answer(log.build(question="q", chunks=chunks, answer=answer, citations=[]))) == seen(alone)


@pytest.mark.parametrize("at", [999, 5, 25])
def test_a_marker_citation_placed_where_no_such_marker_starts_is_refused_naming_its_places(tmp_path, at):
    """A marker record at 999 or 5 (not on a '[') was accepted, and check counted a citation more."""
    chunks = [{"chunk_id": "c1", "text": "Employees get 18 days of earned leave."}]
    answer = "Earned leave is 18 days [1]."
    log = AnswerLog(tmp_path / "l.jsonl")
    with pytest.raises(FieldError) as caught:
        log.record(question="q", chunks=chunks, answer=answer, citations=[{"kind": "marker", "marker": 1, "at": at}])
    assert caught.value.field == "citations[0].at" and f"its places: {answer.index('[1]')}" in str(caught.value)
    assert not (tmp_path / "l.jsonl").exists()
