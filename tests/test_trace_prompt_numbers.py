"""A traced answer's ``[n]`` names the document the model was shown as n (issue #33).

An application may rerank, filter or renumber its retrieved documents in its own code, with no
span for it; the prompt of the LLM call that wrote the answer then shows them in another order,
or fewer of them.  The importer reads ``[n]`` as that prompt numbered the documents
(``trace_citations.as_prompted``), and says so in the answer's notes.
"""

from __future__ import annotations

from citecheck.checking.checker import check_answer
from citecheck.importers.spans import Span
from citecheck.importers.trace_citations import as_prompted
from citecheck.importers.traces import TraceSummary, answers
from hypothesis import given
from hypothesis import strategies as st

TRACE = "ab" * 16
DOCS = {"A": "Employees get 18 days of earned leave per calendar year.",
        "B": "Unused earned leave carries over to the next year, up to 45 days in total.",
        "C": "The office is closed on Diwali and on the day after it, 2 days in all."}


def _answer(prompt: str | None, text: str, order=("A", "B", "C"), docs=DOCS):
    """The imported answer of a request: a retriever returning ``order`` of ``docs``, an LLM call given ``prompt``."""
    retrieved = {"openinference.span.kind": "RETRIEVER"}
    for k, name in enumerate(order):
        retrieved[f"retrieval.documents.{k}.document.id"] = name
        retrieved[f"retrieval.documents.{k}.document.content"] = docs[name]
    llm = {"openinference.span.kind": "LLM", "llm.output_messages.0.message.role": "assistant",
           "llm.output_messages.0.message.content": text}
    if prompt is not None:
        llm.update({"llm.input_messages.0.message.role": "system",
                    "llm.input_messages.0.message.content": "Answer only from the numbered sources; cite them as [n].",
                    "llm.input_messages.1.message.role": "user", "llm.input_messages.1.message.content": prompt})
    spans = [Span(TRACE, "01" * 8, None, "rag", "CHAIN", 1, 100, {"input.value": "How much leave?", "output.value": text}),
             Span(TRACE, "02" * 8, "01" * 8, "retrieve", "RETRIEVER", 2, 10, retrieved),
             Span(TRACE, "03" * 8, "01" * 8, "llm", "LLM", 20, 90, llm)]
    [answer] = answers(spans, "otel", TraceSummary())
    return answer


def _cited(answer) -> list[str]:
    """The chunk each citation names, as the checker resolves it."""
    return [c.chunk_id for c in check_answer(answer).citations]


def test_documents_reranked_in_the_applications_code_are_cited_as_the_prompt_numbered_them():
    prompt = f"[1] {DOCS['C']}\n[2] {DOCS['A']}\n[3] {DOCS['B']}\n\nQuestion: How much leave?"
    answer = _answer(prompt, "You get 18 days [2]. The office closes for 2 days [1].")
    assert [c.chunk_id for c in answer.chunks] == ["C", "A", "B"]
    assert _cited(answer) == ["A", "C"]
    assert any("numbers the prompt" in n for n in answer.extra["trace"]["notes"])
    result = check_answer(answer)
    assert not any(s.reasons for s in result.sentences)  # (each number is in the document cited)


def test_numbers_the_prompt_kept_from_retrieval_after_a_filter_are_read_as_given():
    prompt = f"Sources:\n[1] {DOCS['A']}\n[3] {DOCS['C']}\n\nQuestion: How much leave?"
    answer = _answer(prompt, "The office closes for 2 days [3].")
    assert [c.chunk_id for c in answer.chunks] == ["A", "B", "C"] and _cited(answer) == ["C"]
    assert "notes" not in answer.extra["trace"]


def test_unnumbered_documents_are_numbered_in_the_order_the_prompt_gives_them_and_the_rest_cannot_be_cited():
    prompt = f"Context:\n{DOCS['C']}\n\n{DOCS['A']}\n\nQuestion: How much leave?"
    answer = _answer(prompt, "You get 18 days [2]. It carries over [3].")
    assert [c.chunk_id for c in answer.chunks] == ["C", "A"]  # (B was retrieved, never shown)
    result = check_answer(answer)
    assert _cited(answer) == ["A", None] and result.invalid_markers == (3,)  # ([3] names no document shown)
    assert any("1 retrieved document(s) not in the prompt left out: B" in n for n in answer.extra["trace"]["notes"])


def test_documents_in_xml_tags_with_their_index():
    prompt = "".join(f'<document index="{k}"><source>{name}.md</source><document_content>{DOCS[name]}'
                     f"</document_content></document>" for k, name in ((1, "B"), (2, "C"), (3, "A")))
    answer = _answer(prompt, "You get 18 days [3].")
    assert _cited(answer) == ["A"]


def test_without_a_recorded_prompt_or_with_mixed_numbering_the_retrieval_order_stands():
    assert _cited(_answer(None, "You get 18 days [1].")) == ["A"]
    mixed = f"[1] {DOCS['C']}\n{DOCS['A']}\n[2] {DOCS['B']}"
    answer = _answer(mixed, "You get 18 days [1].")
    assert [c.chunk_id for c in answer.chunks] == ["A", "B", "C"] and "notes" not in answer.extra["trace"]
    in_order = f"[1] {DOCS['A']}\n[2] {DOCS['B']}\n[3] {DOCS['C']}"
    assert "notes" not in _answer(in_order, "You get 18 days [1].").extra["trace"]


@given(st.permutations(["A", "B", "C"]), st.sampled_from(["[{k}] ", "Source {k}: ", "{k}. ", "Document {k} (policy.md):\n"]),
       st.sampled_from(["\n", "\n\n", " "]))
def test_any_order_and_style_of_numbering_names_the_document_shown_with_that_number(shown, style, gap):
    prompt = gap.join(style.format(k=k) + DOCS[name] for k, name in enumerate(shown, start=1))
    chunks, note = as_prompted(tuple(_answer(None, "x").chunks), prompt, None)
    assert [c.chunk_id for c in chunks] == list(shown)
    assert (note is None) == (list(shown) == ["A", "B", "C"])


# the handbook's clauses, all opening with the same 90 characters
SAME = {k: "Policy HR-7 of the Acme Corporation employee handbook, applicable to all full-time staff: " + v
        for k, v in DOCS.items()}


def test_documents_that_begin_alike_are_each_found_at_their_own_place():
    numbered = f"[1] {SAME['C']}\n[2] {SAME['A']}\n[3] {SAME['B']}\n\nQuestion: How much leave?"
    answer = _answer(numbered, "You get 18 days [2]. The office closes for 2 days [1].", docs=SAME)
    assert [c.chunk_id for c in answer.chunks] == ["C", "A", "B"] and _cited(answer) == ["A", "C"]
    plain = f"Context:\n{SAME['B']}\n\n{SAME['C']}\n\nQuestion: How much leave?"
    answer = _answer(plain, "The office closes for 2 days [2].", docs=SAME)
    assert [c.chunk_id for c in answer.chunks] == ["B", "C"] and _cited(answer) == ["C"]
    # a prompt recorded twice (input.value beside llm.input_messages): A, never shown, takes no place in either copy
    twice = f"[1] {SAME['C']}\n[2] {SAME['B']}\n\nQuestion: How much leave?"
    chunks, _ = as_prompted(tuple(_answer(None, "x", docs=SAME).chunks), twice + "\n" + twice, None)
    assert [c.chunk_id for c in chunks] == ["C", "B", "A"]


def test_documents_the_application_stripped_of_markdown_or_cut_short_are_found():
    marked = {"A": "## Earned leave\n\n**Employees** get 18 days of earned leave per calendar year.",
              "B": "## Carry-over\n\n- Unused earned leave carries over to the next year, up to *45 days* in total.",
              "C": "## Holidays\n\nThe office is closed on Diwali and on the day after it, 2 days in all. " + "More. " * 80}
    def strip(text):
        return text.replace("#", "").replace("*", "").replace("- ", "")[:120]
    plain = f"Context:\n{strip(marked['C'])}...\n\n{strip(marked['A'])}\n\nQuestion: How much leave?"
    answer = _answer(plain, "You get 18 days [2]. The office closes for 2 days [1].", docs=marked)
    assert [c.chunk_id for c in answer.chunks] == ["C", "A"] and _cited(answer) == ["A", "C"]
    xml = "".join(f'<document index="{k}">{marked[name]}</document>' for k, name in ((1, "B"), (2, "A")))
    assert _cited(_answer(xml, "Up to 45 days [1].", docs=marked)) == ["B"]


def _chunks(texts: dict[str, str]):
    return tuple(_answer(None, "x", order=tuple(texts), docs=texts).chunks)


@given(st.permutations(range(12)), st.integers(min_value=1, max_value=40))
def test_many_documents_that_share_a_long_opening_are_each_found_in_any_order(shown, shared):
    # every document opens with the same ``shared`` words (a boilerplate header), some far longer
    # than the words looked up; each is still found at its own place, in the prompt's order
    head = "Acme handbook section, applicable to all staff " * shared
    texts = {f"D{k}": f"{head}clause {k}: staff get {k + 10} days of leave." for k in range(12)}
    prompt = "\n".join(f"[{n}] {texts[f'D{k}']}" for n, k in enumerate(shown, start=1))
    chunks, _ = as_prompted(_chunks(texts), prompt, None)
    assert [c.chunk_id for c in chunks] == [f"D{k}" for k in shown]


def test_a_text_retrieved_twice_and_shown_twice_gives_each_copy_its_number():
    texts = {"A": DOCS["A"], "A2": DOCS["A"], "B": DOCS["B"]}
    prompt = f"[1] {DOCS['B']}\n[2] {DOCS['A']}\n[3] {DOCS['A']}"
    chunks, _ = as_prompted(_chunks(texts), prompt, None)
    assert [c.chunk_id for c in chunks] == ["B", "A", "A2"]
    shown_once = f"[1] {DOCS['A']}\n[2] {DOCS['B']}"  # (the copy not shown fills the number skipped: 3)
    chunks, _ = as_prompted(_chunks(texts), shown_once, None)
    assert [c.chunk_id for c in chunks] == ["A", "B", "A2"]


# --- the two ways of finding the documents give the same runs -----------------------------------
from citecheck.importers import trace_citations  # noqa: E402

_VOCAB = ["a", "b", "ab", "ba", "x", "σας", "ΣΑΣ", "İstanbul", "straße", "7", "18"]
_texts_of = st.lists(st.sampled_from(_VOCAB), min_size=0, max_size=30).map(" ".join)


@given(st.lists(_texts_of, min_size=1, max_size=6), st.lists(st.tuples(st.integers(0, 5), st.integers(0, 40),
                                                                     st.sampled_from(["", "[1] ", ", ", "\n**"])),
                                                           max_size=8))
def test_documents_found_in_c_run_as_those_looked_up_place_by_place(texts, shown):
    # a prompt of pieces of the documents (whole, cut short, one after another, some twice)
    prompt = " ".join(sep + texts[i % len(texts)][:cut * 3] for i, cut, sep in shown)
    documents = [trace_citations._words(t) for t in texts]
    words = trace_citations._words(" ".join(prompt.split()))
    found = sorted(trace_citations._runs_looked_up(documents, words))
    distinct = len({tuple(d[:trace_citations._PROBE]) for d in documents if d}) == sum(1 for d in documents if d)
    if distinct:
        assert sorted(trace_citations._runs_found(documents, words)) == found


@given(st.text(alphabet=st.sampled_from(list("aB \u0130\u03a3\u00df.,-_ \t\n7\u00e9K[]")), max_size=200) | st.text(max_size=60))
def test_a_words_place_in_the_prompt_is_where_the_word_is(text):
    words, places = trace_citations._placed_words(text)
    assert words == trace_citations._words(text)
    found = list(trace_citations._WORD.finditer(text))
    assert [m.span() for m in found] == [(places.start(k), places.end(k)) for k in range(len(words))]
    backwards = trace_citations._placed_words(text)[1]  # (asked in any order, a place is the same)
    assert [m.span() for m in found][::-1] == [(backwards.start(k), backwards.end(k)) for k in reversed(range(len(words)))]
    if len(text.lower()) == len(text):
        assert words == [m.group() for m in trace_citations._WORD.finditer(text.lower())]
    else:
        assert words == [m.group().lower() for m in found]


def test_lowering_a_text_that_keeps_its_length_keeps_its_words_where_they_were():
    # (what _placed_words relies on: no character is a letter or digit lowered and not before)
    import re
    import sys

    word = re.compile(r"\w")
    changed = [hex(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF
               and len(chr(c).lower()) == 1 and bool(word.match(chr(c))) != bool(word.match(chr(c).lower()))]
    assert changed == []


def test_a_prompt_that_repeats_a_documents_opening_is_looked_at_in_its_first_places():
    # (a prompt of one word over and over: each place would measure a run as long as the
    # document, the square of the prompt's length; the first _MANY places are looked at)
    document, prompt = trace_citations._words("a " * 40), trace_citations._words("[1] " + "a " * 5000)
    assert len(trace_citations._runs_found([document], prompt)) == trace_citations._MANY
    copies = trace_citations._runs_looked_up([document, document], prompt)
    assert len({k for _, k, _ in copies}) == trace_citations._MANY * 2
    twice = tuple(_answer(None, "x", order=("A", "A2"), docs={"A": "a " * 40, "A2": "a " * 40}).chunks)
    chunks, note = as_prompted(twice, "[1] " + "a " * 5000, None)
    assert [c.chunk_id for c in chunks] == ["A", "A2"] and note is None


def test_the_index_of_an_xml_document_is_read_past_its_source_tag():
    # Anthropic's long-context layout: <document index="n"><source>..</source><document_content>..;
    # an application that filtered its documents keeps their numbers (1 and 3 here)
    prompt = "<documents>\n" + "\n".join(
        f'<document index="{k}">\n<source>handbook/{name.lower()}_2024.pdf</source>\n<document_content>\n{DOCS[name]}\n'
        "</document_content>\n</document>" for k, name in ((1, "A"), (3, "C"))) + "\n</documents>"
    chunks, note = as_prompted(_chunks(DOCS), prompt, None)
    assert [c.chunk_id for c in chunks] == ["A", "B", "C"] and note is None
    reordered = "\n".join(f'<document index="{k}"><source>{name}.md</source><document_content>{DOCS[name]}'
                          "</document_content></document>" for k, name in ((3, "A"), (1, "B"), (2, "C")))
    chunks, _ = as_prompted(_chunks(DOCS), reordered, None)
    assert [c.chunk_id for c in chunks] == ["B", "C", "A"]


def test_the_number_nearest_a_document_is_its_own_not_a_marker_of_the_instructions_before_it():
    # the instructions show a citation ([2]) just before the first source; each source's number
    # is the one next to it, and a number past the documents (a year in a title) is no document's
    prompt = ("Cite every claim with its source's number, as in: The sky is blue [2].\n\n"
              + "\n\n".join(f"Source {k}:\n{DOCS[name]}" for k, name in ((1, "C"), (2, "A"), (3, "B"))))
    chunks, _ = as_prompted(_chunks(DOCS), prompt, None)
    assert [c.chunk_id for c in chunks] == ["C", "A", "B"]
    titled = "\n".join(f"[{k}] Annual results 2023: {DOCS[name]}" for k, name in ((1, "B"), (2, "C"), (3, "A")))
    chunks, _ = as_prompted(_chunks(DOCS), titled, None)
    assert [c.chunk_id for c in chunks] == ["B", "C", "A"]


def test_a_word_and_number_in_brackets_number_the_document():
    # [Document 2] / [Source 2] headers; a filter kept documents 1 and 3
    for word in ("Document", "Source"):
        prompt = "\n\n".join(f"[{word} {k}]\n{DOCS[name]}" for k, name in ((1, "A"), (3, "C")))
        chunks, note = as_prompted(_chunks(DOCS), prompt, None)
        assert [c.chunk_id for c in chunks] == ["A", "B", "C"] and note is None


def test_a_number_before_a_long_title_and_url_numbers_the_document():
    # web search results: [n] Title: ..., URL: ..., Content: ... (over 100 characters before the text)
    titles = {"A": "Annual earned leave entitlement for permanent employees of the Acme Corporation (2024 edition)",
              "B": "Carry-over", "C": "Holidays"}
    prompt = "\n\n".join(f"[{k}] Title: {titles[name]}\nURL: https://acme.example/{titles[name].lower().replace(' ', '-')}"
                         f"\nContent: {DOCS[name]}" for k, name in ((1, "C"), (2, "A"), (3, "B")))
    chunks, _ = as_prompted(_chunks(DOCS), prompt, None)
    assert [c.chunk_id for c in chunks] == ["C", "A", "B"]


def test_a_marker_in_the_instructions_before_unnumbered_documents_numbers_none_of_them():
    prompt = ("Answer from the context below. Cite the passages you use as [1], [2] and so on, in the order "
              f"they are given.\n\nContext:\n{DOCS['C']}\n\n{DOCS['A']}\n\nQuestion: How much leave?")
    chunks, note = as_prompted(_chunks(DOCS), prompt, None)
    assert [c.chunk_id for c in chunks] == ["C", "A"] and "left out: B" in note


def test_a_document_shown_whole_elsewhere_too_is_placed_among_the_other_documents():
    # an earlier answer in the chat history quotes document A whole; short documents are named in the question
    history = ('user\nHow much leave do I get?\nassistant\nThe handbook says: "Employees get 18 days of earned leave '
               'per calendar year." [1]\nuser\n')
    numbered = history + "Sources:\n" + "\n".join(f"[{k}] {DOCS[n]}" for k, n in ((1, "C"), (2, "A"), (3, "B")))
    chunks, _ = as_prompted(_chunks(DOCS), numbered + "\n\nQuestion: does it carry over?", None)
    assert [c.chunk_id for c in chunks] == ["C", "A", "B"]
    plain = history + "Context:\n" + "\n\n".join(DOCS[n] for n in "CAB")
    chunks, _ = as_prompted(_chunks(DOCS), plain + "\n\nQuestion: does it carry over?", None)
    assert [c.chunk_id for c in chunks] == ["C", "A", "B"]
    cities = {"A": "Paris", "B": "Berlin", "C": "Madrid"}
    question = "Question: is the capital of France Paris or Lyon?"
    chunks, _ = as_prompted(_chunks(cities), f"{question}\nSources:\n[1] Madrid\n[2] Paris\n[3] Berlin", None)
    assert [c.chunk_id for c in chunks] == ["C", "A", "B"]
    chunks, _ = as_prompted(_chunks(cities), f"{question}\nContext:\nMadrid\n\nParis\n\nBerlin", None)
    assert [c.chunk_id for c in chunks] == ["C", "A", "B"]
    chunks, _ = as_prompted(_chunks(cities), f"Context:\nMadrid\n\nBerlin\n\nParis\n\n{question}", None)
    assert [c.chunk_id for c in chunks] == ["C", "B", "A"]


def test_a_page_number_closing_a_documents_parenthesis_is_not_the_next_ones_number():
    # a document prompt that puts the source after the text: "{page_content}\n(handbook.pdf, page {page})"
    prompt = "Context:\n" + "\n\n".join(f"{DOCS[n]}\n(handbook.pdf, page {page})" for n, page in (("C", 3), ("A", 1), ("B", 2)))
    chunks, _ = as_prompted(_chunks(DOCS), prompt, None)
    assert [c.chunk_id for c in chunks] == ["C", "A", "B"]


# LlamaIndex's CitationQueryEngine: its prompt's own example of sources, then each retrieved node
# cut into pieces that overlap a little, every piece numbered as a source of its own
_CITATION_QA = ("Please provide an answer based solely on the provided sources. When referencing information from a "
                "source, cite the appropriate source(s) using their corresponding numbers. For example:\n"
                "Source 1:\nThe sky is red in the evening and blue in the morning.\nSource 2:\nWater is wet when the "
                "sky is red.\nUser query: When is water wet?\nAnswer: Water will be wet when the sky is red [2], "
                "which occurs in the evening [1].\nNow it's your turn. Below are several numbered sources of "
                "information:\n------\n{context}\n------\nUser query: How much leave?\nAnswer: ")
_LONG = {"A": ("Employees get 18 days of earned leave per calendar year, credited monthly from the first day of "
               "service. Leave must be applied for through the portal at least a week ahead, and the manager "
               "approves it within two working days. Unused earned leave carries over to the next year, up to "
               "45 days in total, and anything above that lapses on the thirty-first of March."),
         "B": "The office is closed on Diwali and on the day after it, 2 days in all, and on the national holidays."}


def _pieces(text: str, size: int, overlap: int) -> list[str]:
    words = text.split()
    out, start = [], 0
    while start < len(words):
        out.append(" ".join(words[start:start + size]))
        if start + size >= len(words):
            break
        start += size - overlap
    return out


def test_a_document_shown_in_numbered_parts_is_cited_as_the_part_the_marker_names():
    """A new user's LlamaIndex CitationQueryEngine trace: node A shown as Sources 1 and 2, node B as
    Source 3, the answer citing [2] for the carry-over: [2] was read as node B, and check blamed the model."""
    pieces = [(p, "A") for p in _pieces(_LONG["A"], 36, 4)] + [(_LONG["B"], "B")]
    assert len(pieces) == 3
    context = "\n\n".join(f"Source {n}:\n{text}\n" for n, (text, _) in enumerate(pieces, start=1))
    answer = _answer(_CITATION_QA.format(context=context), "You get 18 days [1]. Up to 45 days carry over [2]. "
                     "The office closes for 2 days at Diwali [3].", order=("A", "B"), docs=_LONG)
    assert [c.chunk_id for c in answer.chunks] == ["A", "A#2", "B"]
    assert _cited(answer) == ["A", "A#2", "B"]
    assert check_answer(answer).ok
    assert any("shown in parts: A as 1, 2" in n for n in answer.extra["trace"]["notes"])


def test_numbered_sources_that_cannot_all_be_matched_keep_retrieval_order_and_say_so():
    prompt = f"Source 1: {_LONG['A']}\n\nSource 3: {_LONG['B']}\n\nSource 2: nothing of any document is here at all"
    answer = _answer(prompt, "You get 18 days [1].", order=("A", "B"), docs=_LONG)
    assert [c.chunk_id for c in answer.chunks] == ["A", "B"]
    assert any("could not all be matched" in n for n in answer.extra["trace"]["notes"])


_VOCABULARY = ("leave policy travel refund manager approval booking hotel limit incident runbook credential customer "
               "notice report export plan dashboard retention payment method office holiday salary review").split()


@given(st.lists(st.integers(min_value=1, max_value=3), min_size=1, max_size=4), st.integers(min_value=0, max_value=4),
       st.sampled_from(["Source {n}:\n{text}\n", "[{n}] {text}", "Source {n}: {text}"]), st.randoms(use_true_random=False))
def test_each_numbered_part_names_the_document_it_is_a_piece_of(parts, overlap, style, rnd):
    """Documents cut into 1-3 numbered pieces that overlap by a few words, numbered in turn: each
    number is read as the document its piece is of, whatever the numbering style."""
    docs, pieces = {}, []
    for d, count in enumerate(parts):
        words = [f"{rnd.choice(_VOCABULARY)}{d}x{j}" for j in range(30 * count)]  # (texts of their own)
        docs[f"D{d}"] = " ".join(words).capitalize() + "."
        size = len(words) // count
        for p in range(count):
            start = max(0, p * size - (overlap if p else 0))
            pieces.append((" ".join(words[start:(p + 1) * size] if p < count - 1 else words[start:]), f"D{d}"))
    context = "\n\n".join(style.format(n=n, text=text) for n, (text, _) in enumerate(pieces, start=1))
    markers = " ".join(f"Claim {n} [{n}]." for n in range(1, len(pieces) + 1))
    answer = _answer(f"Answer from these sources.\n\n{context}\n\nQuestion: what?", markers, order=tuple(docs), docs=docs)
    if len(pieces) == len(docs):
        assert [c.chunk_id for c in answer.chunks] == list(docs)
        return
    assert [c.chunk_id.split("#")[0] for c in answer.chunks[:len(pieces)]] == [doc for _, doc in pieces]
    assert any("shown in parts" in n for n in answer.extra["trace"]["notes"])
