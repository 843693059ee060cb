#!/usr/bin/env python3
"""Regenerate the bundled sample data deterministically.

    python sample_data/generate.py

Reads ``sample_data/source/`` (the documents as they were when the answers were logged) and
runs every sample question through the real answer pipeline (core.pipeline: BM25 retrieval,
support-floor gate, assembly, the anthropic SDK) with a deterministic scripted model behind a
mock HTTP transport, so ``answers.jsonl`` is what the pipeline emits (mostly clean, with every
reason code represented; two are log corruption applied afterwards, as marked below), ``golden.jsonl`` (a golden retrieval set) and ``corpus/`` (the
documents as they are now: ``travel-policy.md`` was edited after logging, so answers citing
its later chunks report ``source_changed`` with ``--corpus sample_data/corpus``).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from citecheck.contract.log import Answer, answer_to_dict  # noqa: E402
from citecheck.llm import fake_api as M  # noqa: E402
from citecheck.pipeline.answering import PipelineConfig, answer_question  # noqa: E402
from citecheck.pipeline.retrieval import build_index  # noqa: E402

REFUSAL = "I cannot answer from the sources."
MODELS = ("claude-sonnet-4-5", "claude-haiku-4-5")
PROMPTS = ("answer.v1", "answer.v2")

# After logging, the hotel limits changed: the checker sees it through --corpus.
EDITS = {"travel-policy.md": [("EUR 180 in Berlin", "EUR 195 in Berlin")]}

# --- the scripted answers ---------------------------------------------------------------------
# Each answer: question, sentences; a sentence is (text, [cite, ...]); a cite is
# (document, section, quote) plus optional flags in a dict as a fourth item.
C = {}


def cite(doc: str, section: str, quote: str | None, **flags) -> tuple:
    return (doc, section, quote, flags)


L, T, B, S, P = "leave-policy", "travel-policy", "billing-and-refunds", "security-runbook", "product-faq"

CLEAN = [
    ("How many earned leave days do I get?",
     [("You get 18 days of earned leave per year.", [cite(L, "Earned leave", "Employees get 18 days of earned leave per year.")]),
      ("It accrues at 1.5 days for each month of service.", [cite(L, "Earned leave", "Earned leave accrues at 1.5 days per month of service.")])]),
    ("Can I carry casual leave forward?",
     [("No: casual leave is 8 days per year and cannot be carried forward.", [cite(L, "Casual leave", "Casual leave is 8 days per year and cannot be carried forward.")])]),
    ("How much earned leave can I carry over?",
     [("Unused earned leave carries forward up to 45 days.", [cite(L, "Earned leave", "Unused earned leave carries forward up to 45 days.")]),
      ("Days above the cap lapse on 31 March.", [cite(L, "Earned leave", "Days above the 45-day cap lapse on 31 March.")])]),
    ("How long is parental leave?",
     [("The primary caregiver gets 16 weeks at full pay and the secondary caregiver 4 weeks.",
       [cite(L, "Parental leave", "Parental leave is 16 weeks at full pay for the primary caregiver and 4 weeks at full pay for the secondary caregiver.")])]),
    ("When can I take parental leave?",
     [("Parental leave is available after 6 months of continuous employment.", [cite(L, "Parental leave", "It is available after 6 months of continuous employment.")]),
      ("It can be split into up to 3 blocks within 12 months of the birth or adoption.", [cite(L, "Parental leave", "Parental leave may be taken in up to 3 blocks within 12 months of the birth or adoption.")])]),
    ("Do I need a doctor's note for sick leave?",
     [("A medical certificate is needed for absences longer than 3 consecutive working days.", [cite(L, "Sick leave", "A medical certificate is needed for absences longer than 3 consecutive working days.")])]),
    ("How many sick days are there?",
     [("Sick leave is 10 days per year.", [cite(L, "Sick leave", "Sick leave is 10 days per year.")])]),
    ("Does casual leave need approval?",
     [("Casual leave of more than 2 consecutive days needs your manager's approval in advance.", [cite(L, "Casual leave", "Casual leave of more than 2 consecutive days needs a manager's approval in advance.")])]),
    ("How early must travel be booked?",
     [("Book through the Wayfarer portal at least 14 days before departure.", [cite(T, "Booking", "All travel is booked through the Wayfarer portal at least 14 days before departure.")]),
      ("Later bookings need written approval from a director.", [cite(T, "Booking", "Bookings made later need written approval from a director.")])]),
    ("Which train class can an M2 employee book?",
     [("Employees below grade M3, such as M2, book standard class for trains.", [cite(T, "Train and air travel", "Employees below grade M3 book standard class for trains")])]),
    ("Can I fly premium economy?",
     [("Flights longer than 8 hours may be booked in premium economy for every grade.", [cite(T, "Train and air travel", "Flights longer than 8 hours may be booked in premium economy for every grade.")])]),
    ("What is the meal per diem?",
     [("The meal per diem is EUR 45 per full travel day and EUR 25 for a day of departure or return.", [cite(T, "Per diem", "The meal per diem is EUR 45 per full travel day and EUR 25 for a day of departure or return.")]),
      ("Alcohol is never reimbursed.", [cite(T, "Per diem", "Alcohol is never reimbursed.")])]),
    ("When are invoices due?",
     [("Invoices are issued on the 1st of each month and are payable within 30 days.", [cite(B, "Invoices", "Invoices are issued on the 1st of each month and are payable within 30 days (Net 30).")])]),
    ("What is the late payment interest?",
     [("Late payments incur interest of 1.5% per month.", [cite(B, "Invoices", "Late payments incur interest of 1.5% per month.")])]),
    ("How long do refunds take?",
     [("Refunds go to the original payment method and take 5-7 business days to appear.", [cite(B, "Refunds", "Refunds are issued to the original payment method and take 5-7 business days to appear.")])]),
    ("Can I get a refund on an annual plan?",
     [("Annual plans cancelled within 30 days of purchase receive a full refund.", [cite(B, "Refunds", "Annual plans cancelled within 30 days of purchase receive a full refund.")]),
      ("After that they are refunded pro rata, minus a $49.00 processing fee.", [cite(B, "Refunds", "After 30 days, annual plans are refunded pro rata for the unused months, minus a $49.00 processing fee.")])]),
    ("How long does a disputed charge review take?",
     [("A disputed charge is reviewed within 10 business days, and the account stays active meanwhile.", [cite(B, "Disputed charges", "A disputed charge is reviewed within 10 business days."), cite(B, "Disputed charges", "During a review the account stays active.")])]),
    ("What is a SEV-1 incident?",
     [("A SEV-1 is a confirmed breach of customer data or a full outage of the platform.", [cite(S, "Severity levels", "A SEV-1 incident is a confirmed breach of customer data or a full outage of the platform.")])]),
    ("What do I do first in a SEV-1?",
     [("Page the incident commander within 15 minutes and open a bridge call.", [cite(S, "First response", "For a SEV-1 incident, page the incident commander within 15 minutes and open a bridge call.")]),
      ("Do not discuss the incident in public channels.", [cite(S, "First response", "Do not discuss the incident in public channels.")])]),
    ("How fast must exposed credentials be rotated?",
     [("Rotate any credential that may be exposed within 1 hour, starting with production database keys.", [cite(S, "First response", "Rotate any credential that may be exposed within 1 hour, starting with production database keys.")])]),
    ("When are customers told about a breach?",
     [("Affected customers are notified within 72 hours of a confirmed breach, as GDPR Article 33 requires.", [cite(S, "Customer notice", "Affected customers are notified within 72 hours of a confirmed breach, as required by GDPR Article 33.")])]),
    ("When is the post-incident review?",
     [("A blameless post-incident review is held within 5 business days.", [cite(S, "After the incident", "A blameless post-incident review is held within 5 business days")])]),
    ("How much does the Starter plan cost?",
     [("The Starter plan costs $29 per user per month and includes 3 dashboards.", [cite(P, "Plans", "The Starter plan costs $29 per user per month and includes 3 dashboards.")])]),
    ("How long is raw event data kept?",
     [("Raw events are kept for 13 months.", [cite(P, "Data retention", "Raw events are kept for 13 months.")]),
      ("Aggregated reports stay as long as the account is active.", [cite(P, "Data retention", "Aggregated reports are kept for as long as the account is active.")])]),
    ("Which languages do dashboards support?",
     [("Dashboards can be shown in English, Deutsch, Français and 日本語.", [cite(P, "Languages", "Dashboards can be shown in English, Deutsch, Français and 日本語.")]),
      ("Labels may use emoji such as 📈.", [cite(P, "Languages", "Labels may contain emoji such as 📈")])]),
    ("When do scheduled exports run?",
     [("Scheduled exports run at 06:00 UTC and are e-mailed to the report owner.", [cite(P, "Exports", "Scheduled exports run at 06:00 UTC and are e-mailed to the report owner.")])]),
    ("Which formats can reports be exported to?",
     [("Reports export to CSV and PDF.", [cite(P, "Exports", "Reports export to CSV and PDF.")])]),
    ("Does single sign-on support OpenID Connect?",
     [("Yes, single sign-on supports SAML 2.0 and OpenID Connect on the Team plan.", [cite(P, "Single sign-on", "Single sign-on supports SAML 2.0 and OpenID Connect on the Team plan.")])]),
    ("What does the Team plan cost?",
     [("The Team plan costs $79 per user per month with unlimited dashboards.", [cite(P, "Plans", "The Team plan costs $79 per user per month with unlimited dashboards.")])]),
    ("Are refunds paid in cash?",
     [("No, refunds are not issued in cash.", [cite(B, "Refunds", "We do not issue refunds in cash.")]),
      ("They go back to the original payment method.", [cite(B, "Refunds", "Refunds are issued to the original payment method")])]),
    ("What is a SEV-2 incident?",
     [("A SEV-2 is a partial outage or a suspected breach.", [cite(S, "Severity levels", "A SEV-2 incident is a partial outage or a suspected breach.")])]),
    ("Can M3 employees book first class trains?",
     [("Grade M3 and above may book first class for trains longer than 4 hours.", [cite(T, "Train and air travel", "Grade M3 and above may book first class for trains longer than 4 hours.")])]),
]

# Answers that go wrong, one or more ways each.
FAILING = [
    # quote_not_found + multi-claim: the second clause is invented (design documents' example).
    ("Can I get my refund in cash today?",
     [("Refunds take 5-7 days and we can pay cash today instantly.", [cite(B, "Refunds", "take 5-7 business days"), cite(B, "Refunds", "we issue refunds in cash")])], {}),
    # unretrieved_source: cites the runbook, which was not retrieved for this question.
    ("Who should I contact about unpaid invoices?",
     [("Invoices are payable within 30 days.", [cite(B, "Invoices", "payable within 30 days")]),
      ("Escalate unpaid invoices to the incident commander.", [cite(S, "First response", "page the incident commander", unretrieved=True)])], {"style": "span"}),
    # marker_out_of_range + uncited sentence.
    ("How much sick leave do I get?",
     [("Sick leave is 10 days per year.", [cite(L, "Sick leave", "Sick leave is 10 days per year.")]),
      ("Unused sick days are paid out at year end.", [("out_of_range", 7)]),
      ("Ask HR for details.", [])], {}),
    # number_not_in_source: the source says 18.
    ("How many days of earned leave do I get?",
     [("You get 20 days of earned leave per year.", [cite(L, "Earned leave", "days of earned leave per year")])], {}),
    # number_not_in_source: a sum the source never states (18 + 45).
    ("How much earned leave can I hold at most?",
     [("Up to 45 days carry forward, so 63 days in total.", [cite(L, "Earned leave", "Unused earned leave carries forward up to 45 days.")])], {}),
    # quoted_text_not_in_source: the quotation is twisted.
    ("Can casual leave be carried forward?",
     [('The policy says casual leave "can be carried forward".', [cite(L, "Casual leave", "Casual leave is 8 days per year")])], {}),
    # quote_missing: marker with no quote.
    ("What is the Berlin hotel limit?",
     [("The nightly limit in Berlin is EUR 180.", [cite(T, "Hotels", None)])], {}),
    # offset_mismatch: right quote, wrong offsets; and span_mismatch: the span text recorded for
    # the citation (as a provider importer keeps it) is not the answer text at its offsets.
    ("How is interest charged on late invoices?",
     [("Late payments incur interest of 1.5% per month.", [cite(B, "Invoices", "Late payments incur interest of 1.5% per month.", offsets="wrong")])], {"style": "span", "span_text": "interest of 1.5% per year"}),
    # checksum_mismatch: the logged chunk text was altered after its checksum was taken.
    ("What is the per diem on a departure day?",
     [("The per diem is EUR 25 for a day of departure or return.", [cite(T, "Per diem", "EUR 25 for a day of departure or return")])], {"tamper": (T, "Per diem")}),
    # missing_source_metadata: a chunk from an index without source fields.
    ("How long are raw events kept?",
     [("Raw events are kept for 13 months.", [cite(P, "Data retention", "Raw events are kept for 13 months.")])], {"strip_source": (P, "Data retention")}),
    # source_changed (with --corpus): the hotel limits were edited after logging.
    ("What is the hotel limit in Paris?",
     [("The nightly hotel limit in Paris is EUR 210.", [cite(T, "Hotels", "EUR 210 in Paris")])], {}),
    # A footnote whose checksum and quote pass, but the number is not in its source.
    ("What does the Starter plan include?",
     [("The Starter plan includes 5 dashboards.", [cite(P, "Plans", "includes 3 dashboards")])], {"style": "span"}),
]

# Under-refusal: the corpus cannot answer this (no parking rule anywhere), retrieval still finds
# the travel policy above the floor, and the scripted model answers anyway.
UNDER_REFUSED = [
    ("What is the parking allowance in Lisbon?",
     [("The parking allowance in Lisbon is EUR 20 per day.", [cite(T, "Hotels", "EUR 180 in Berlin")])], {}),
]

# Refusals: the pipeline's gate or the scripted model refuses. The last one is over-refusal:
# the corpus does answer it (the golden set says so).
REFUSED = [
    "Can I expense a home office chair?",  # below the support floor: the gate refuses, no call
    "What is the company's policy on pets in the office?",  # passes the gate; the model refuses
    "How soon must exposed credentials be rotated in an incident?",  # answerable, yet the model refuses
]
OVER_REFUSED = {"How soon must exposed credentials be rotated in an incident?": (S, "First response")}

UNANSWERABLE = [
    "What is the company's policy on pets in the office?",
    "Can I expense a home office chair?",
    "What is the parking allowance in Lisbon?",
    "Who is the CEO of Fernhill Analytics?",
    "Does the dashboard have a dark mode?",
]

# --- the scripted model ---------------------------------------------------------------------------
# It reads the request the pipeline really sent (sources and their chunk ids), writes the scripted
# sentences with markers or Citations API blocks pointing at wherever those chunks landed, and
# reports usage from the request and reply sizes. Failure flags make it err the way models do.


def find_chunk(chunks, doc: str, section: str):
    for c in chunks:
        if c.document_id == doc and c.section == section:
            return c
    raise KeyError((doc, section))


_SOURCE = re.compile(r'<source n="(\d+)" id="([^"]+)">')


def _sources(body: dict) -> list[tuple[str, str]]:
    """(chunk id, text) of each source in the request, in order."""
    content = body["messages"][0]["content"]
    if isinstance(content, str):  # markers shape
        ids = [m.group(2) for m in _SOURCE.finditer(content)]
        texts = re.findall(r'<source n="\d+" id="[^"]+">\n(.*?)\n</source>', content, re.S)
        return list(zip(ids, texts))
    return [(json.loads(b["context"])["chunk_id"], b["source"]["data"]) for b in content if b["type"] == "document"]


def scripted_reply(sentences, chunks, refuse: bool = False):
    def reply(body: dict) -> dict:
        sources = _sources(body)
        position = {cid: i for i, (cid, _) in enumerate(sources)}
        if refuse:
            content = [M.text_block(REFUSAL)]
        elif isinstance(body["messages"][0]["content"], str):
            content = [M.text_block(_markers_text(sentences, chunks, position))]
        else:
            content = _citation_blocks(sentences, chunks, position, len(sources))
        out_chars = sum(len(b["text"]) for b in content)
        in_chars = len(json.dumps(body["system"])) + len(json.dumps(body["messages"]))
        return M.message(content, model=body["model"], use=M.usage(in_chars // 4, out_chars // 4 + 1))
    return reply


def _markers_text(sentences, chunks, position) -> str:
    parts, quotes = [], []
    for sentence, cites in sentences:
        markers = ""
        for c in cites:
            if c[0] == "out_of_range":
                markers += f" [{c[1]}]"
                continue
            doc, section, quote, flags = c
            n = position[find_chunk(chunks, doc, section).chunk_id] + 1
            markers += f" [{n}]"
            if quote:
                quotes.append(f'[{n}] "{quote}"')
        parts.append(sentence[:-1] + markers + sentence[-1] if markers else sentence)
    return " ".join(parts) + ("\n\nQUOTES:\n" + "\n".join(quotes) if quotes else "")


def _citation_blocks(sentences, chunks, position, n_docs) -> list[dict]:
    blocks = []
    for i, (sentence, cites) in enumerate(sentences):
        text = sentence + (" " if i < len(sentences) - 1 else "")
        citations = []
        for c in cites:
            doc, section, quote, flags = c
            chunk = find_chunk(chunks, doc, section)
            if flags.get("unretrieved"):  # malformed output: a document index past the packed ones
                citations.append(M.char_citation(n_docs + 2, quote, 0, len(quote)))
                continue
            qs = chunk.text.find(quote)
            shift = 7 if flags.get("offsets") == "wrong" else 0
            citations.append(M.char_citation(position[chunk.chunk_id], quote, qs + shift, qs + len(quote) + shift))
        blocks.append(M.text_block(text, citations))
    return blocks


# --- building ----------------------------------------------------------------------------------


def timestamp(index: int) -> str:
    return f"2026-11-{1 + index % 28:02d}T{9 + index % 8:02d}:{(7 * index) % 60:02d}:00Z"


def ask(index_, chunks, i: int, question: str, sentences, opts: dict, refuse: bool = False) -> Answer:
    shape = "citations" if opts.get("style", "marker" if i % 3 else "span") == "span" else "markers"
    config = PipelineConfig(model=MODELS[i % 2], shape=shape,
                            prompt_version=None if shape == "citations" else PROMPTS[(i // 2) % 2])
    client = M.client(scripted_reply(sentences, chunks, refuse))
    answer = answer_question(client, index_, question, f"a-{i + 1:03d}", config, now=lambda: timestamp(i))
    if "tamper" in opts:  # log corruption after writing: a chunk's text edited, its checksum kept
        victim = find_chunk(chunks, *opts["tamper"]).chunk_id
        answer = replace(answer, chunks=tuple(c._replace(text=c.text.replace("EUR 45", "EUR 54"))
                                              if c.chunk_id == victim else c for c in answer.chunks))
    if "span_text" in opts:  # an importer recorded the provider's text for the first span citation
        first = next(k for k, c in enumerate(answer.citations) if c.kind == "span")
        cits = list(answer.citations)
        cits[first] = cits[first]._replace(locator=dict(cits[first].locator or {}, span_text=opts["span_text"]))
        answer = replace(answer, citations=tuple(cits))
    if "strip_source" in opts:  # an older exporter that dropped source fields
        victim = find_chunk(chunks, *opts["strip_source"]).chunk_id
        answer = replace(answer, chunks=tuple(c._replace(source=None) if c.chunk_id == victim else c
                                              for c in answer.chunks))
    return answer


def main(out: Path = HERE) -> None:
    index_ = build_index(HERE / "source")
    chunks = list(index_.chunks)
    answers: list[Answer] = []
    for question, sentences in CLEAN:
        answers.append(ask(index_, chunks, len(answers), question, sentences, {}))
    for question, sentences, opts in FAILING + UNDER_REFUSED:
        answers.append(ask(index_, chunks, len(answers), question, sentences, opts))
    for question in REFUSED:
        answers.append(ask(index_, chunks, len(answers), question, [], {"style": "marker"}, refuse=True))
    for a in answers:  # every cited chunk must have been retrieved, or the script is wrong
        assert a.refused or a.citations or "[" in a.answer, a.answer_id
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "answers.jsonl", "w", encoding="utf-8", newline="\n") as handle:
        for a in answers:
            handle.write(json.dumps(answer_to_dict(a), ensure_ascii=False) + "\n")

    with open(out / "golden.jsonl", "w", encoding="utf-8", newline="\n") as handle:
        for question, sentences in CLEAN:
            ids = sorted({find_chunk(chunks, c[0], c[1]).chunk_id for _, cites in sentences for c in cites})
            handle.write(json.dumps({"question": question, "answerable": True, "chunk_ids": ids}, ensure_ascii=False) + "\n")
        for question, (doc, section) in OVER_REFUSED.items():
            ids = [find_chunk(chunks, doc, section).chunk_id]
            handle.write(json.dumps({"question": question, "answerable": True, "chunk_ids": ids}) + "\n")
        for question in UNANSWERABLE:
            handle.write(json.dumps({"question": question, "answerable": False, "chunk_ids": []}) + "\n")

    corpus = out / "corpus"
    shutil.rmtree(corpus, ignore_errors=True)
    corpus.mkdir()
    for path in sorted((HERE / "source").iterdir()):
        data = path.read_bytes().decode("utf-8")
        for old, new in EDITS.get(path.name, []):
            assert old in data, (path.name, old)
            data = data.replace(old, new)
        (corpus / path.name).write_bytes(data.encode("utf-8"))
    print(f"wrote {len(answers)} answers, {len(CLEAN) + len(OVER_REFUSED) + len(UNANSWERABLE)} golden questions, "
          f"corpus of {len(list(corpus.iterdir()))} documents")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
