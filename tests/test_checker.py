
import re

import pytest
from citecheck.checking.checker import CheckOptions, check_answer
from citecheck.contract import reasons as reason_codes
from citecheck.contract.corpus import Corpus
from citecheck.contract.log import checksum
from helpers import answer, chunk, marker, span
from hypothesis import assume, given, settings
from hypothesis import strategies as st

FIVE = [chunk(f"Source {i}: hits cost a tenth of the input price.", f"c{i}") for i in range(1, 6)]


def summary(result):
    """The figures of the design documents' toy check."""
    return {
        "sentences": len(result.sentences),
        "cited": sorted({c.marker for c in result.citations if c.valid}),
        "invalid": list(result.invalid_markers),
        "uncited": result.uncited_sentences,
        "refused": result.refused,
    }


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Hits cost a tenth of the input price [2]. Writes cost more [1][3].",
         {"sentences": 2, "cited": [1, 2, 3], "invalid": [], "uncited": 0, "refused": False}),
        ("Hits cost a tenth of the input price [2]. This makes caching always worth it.",
         {"sentences": 2, "cited": [2], "invalid": [], "uncited": 1, "refused": False}),
        ("Hits cost a tenth of the input price [7].",
         {"sentences": 1, "cited": [], "invalid": [7], "uncited": 1, "refused": False}),
        ("I cannot answer from the sources.",
         {"sentences": 1, "cited": [], "invalid": [], "uncited": 0, "refused": True}),
    ],
)
def test_design_document_toy_check(text, expected):
    assert summary(check_answer(answer(text, FIVE))) == expected


SOURCES = {
    "S1": "Employees get 18 days of earned leave per year. Unused days carry forward up to 45 days.",
    "S2": "Casual leave is 8 days per year and cannot be carried forward.",
}
S_CHUNKS = [chunk(SOURCES["S1"], "S1"), chunk(SOURCES["S2"], "S2")]


def test_design_document_good_answer_checks_out():
    text = 'You get 18 days of earned leave a year [1]. Casual leave "cannot be carried forward" [2].'
    result = check_answer(answer(text, S_CHUNKS, [marker(1, "18 days of earned leave"),
                                                    marker(2, "cannot be carried forward")]))
    assert result.ok
    assert all(c.verified for c in result.citations)


def test_design_document_bad_answer_is_caught():
    text = ('You get 20 days of earned leave [1]. Casual leave "can be carried forward" [2]. '
            "Sick leave is 12 days [4]. Ask HR for details.")
    result = check_answer(answer(text, S_CHUNKS, [marker(1, "days of earned leave"), marker(2, "Casual leave")]))
    s = result.sentences
    assert s[0].unsupported_numbers == ("20",) and reason_codes.NUMBER_NOT_IN_SOURCE in s[0].reasons
    assert s[1].unsupported_quotes == ("can be carried forward",)
    assert s[2].uncited and result.invalid_markers == (4,)
    assert s[3].uncited
    assert result.uncited_sentences == 2


@pytest.mark.parametrize(
    "sentence, flagged",
    [
        ("You get 18 days of earned leave a year [1].", []),
        ("You get 20 days of earned leave [1].", ["20"]),
        ("Up to 45 days can be carried forward, so 63 days in total [1].", ["63"]),
    ],
)
def test_design_document_number_check(sentence, flagged):
    result = check_answer(answer(sentence, S_CHUNKS[:1], [marker(1, "earned leave")]))
    assert list(result.sentences[0].unsupported_numbers) == flagged


def reasons_of(text, chunks, citations, **opts):
    result = check_answer(answer(text, chunks, citations), CheckOptions(**opts))
    return [c.reasons for c in result.citations]


REFUND = "Refunds are issued to the original payment method and take 5-7 business days to appear."


def test_verified_marker_with_quote_at_offsets():
    qs = REFUND.index("take 5-7")
    assert reasons_of("Refunds take 5-7 business days [1].", [chunk(REFUND)],
                      [marker(1, "take 5-7 business days", qs, qs + 22)]) == [()]


def test_quote_missing():
    assert reasons_of("Refunds take a week [1].", [chunk(REFUND)], []) == [(reason_codes.QUOTE_MISSING,)]


def test_quote_not_found_and_no_fuzzy_match():
    near = "Refunds are issued to the original payment method and take 5 to 7 business days to appear."
    assert reasons_of("x [1].", [chunk(REFUND)], [marker(1, near)]) == [(reason_codes.QUOTE_NOT_FOUND,)]
    assert reasons_of("x [1].", [chunk(REFUND)], [marker(1, "cash today instantly")]) == [(reason_codes.QUOTE_NOT_FOUND,)]


def test_punctuation_is_kept():
    assert reasons_of("x [1].", [chunk(REFUND)], [marker(1, "take 57 business days")]) == [(reason_codes.QUOTE_NOT_FOUND,)]


def test_whitespace_and_trailing_space_are_tolerated():
    qs = REFUND.index("take")
    assert reasons_of("x [1].", [chunk(REFUND)], [marker(1, "take  5-7\nbusiness days ", qs, qs + 23)]) == [()]


def test_casefold_option():
    cites = [marker(1, "REFUNDS ARE ISSUED")]
    assert reasons_of("x [1].", [chunk(REFUND)], cites) == [(reason_codes.QUOTE_NOT_FOUND,)]
    assert reasons_of("x [1].", [chunk(REFUND)], cites, casefold=True) == [()]


def test_offset_mismatch():
    qs = REFUND.index("take")
    assert reasons_of("x [1].", [chunk(REFUND)], [marker(1, "take 5-7", qs + 3, qs + 11)]) == [(reason_codes.OFFSET_MISMATCH,)]
    assert reasons_of("x [1].", [chunk(REFUND)], [marker(1, "take 5-7", 500, 508)]) == [(reason_codes.OFFSET_MISMATCH,)]


def test_marker_out_of_range_counts_sentence_as_uncited():
    result = check_answer(answer("Claim [0]. Other [3].", [chunk(REFUND)]))
    assert [c.reasons for c in result.citations] == [(reason_codes.MARKER_OUT_OF_RANGE,)] * 2
    assert result.invalid_markers == (0, 3) and result.uncited_sentences == 2


def test_unretrieved_source_by_chunk_and_document():
    cites = [span(0, 5, "runbook-2", "page the incident commander"), span(0, 5, None, "x", document_id="runbook.md")]
    assert reasons_of("Claim.", [chunk(REFUND)], cites) == [(reason_codes.UNRETRIEVED_SOURCE,)] * 2


def test_missing_source_metadata():
    for broken in (chunk(REFUND, source=None), chunk(REFUND, chunk_id=None), chunk(REFUND, checksum=None)):
        assert reasons_of("x [1].", [broken], [marker(1, "take 5-7")]) == [(reason_codes.MISSING_SOURCE_METADATA,)]


def test_checksum_mismatch():
    tampered = chunk(REFUND)._replace(text=REFUND.replace("5-7", "3-5"))
    assert reasons_of("x [1].", [tampered], [marker(1, "Refunds are issued")]) == [(reason_codes.CHECKSUM_MISMATCH,)]


def test_several_reasons_in_canonical_order():
    tampered = chunk(REFUND, source=None)._replace(text="other text")
    assert reasons_of("x [1].", [tampered], []) == [(reason_codes.MISSING_SOURCE_METADATA, reason_codes.CHECKSUM_MISMATCH, reason_codes.QUOTE_MISSING)]


def test_source_changed_with_corpus(tmp_path):
    doc = "# Billing\r\n\r\n" + REFUND + "\r\n"
    (tmp_path / "billing.md").write_bytes(doc.encode())
    start = doc.index(REFUND)
    c = chunk(REFUND, source="billing.md", start=start)
    cites = [marker(1, "take 5-7")]
    assert reasons_of("x [1].", [c], cites, corpus=Corpus(tmp_path)) == [()]
    (tmp_path / "billing.md").write_bytes(doc.replace("5-7", "7-9").encode())
    assert reasons_of("x [1].", [c], cites, corpus=Corpus(tmp_path)) == [(reason_codes.SOURCE_CHANGED,)]
    (tmp_path / "billing.md").unlink()
    assert reasons_of("x [1].", [c], cites, corpus=Corpus(tmp_path)) == [(reason_codes.SOURCE_CHANGED,)]


def test_source_outside_corpus_is_never_read(tmp_path):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "secret.md").write_text(REFUND)
    c = chunk(REFUND, source="../secret.md", start=0)
    assert reasons_of("x [1].", [c], [marker(1, "take 5-7")], corpus=Corpus(tmp_path / "corpus")) == [(reason_codes.SOURCE_CHANGED,)]


def test_span_citations_attach_to_every_sentence_they_cover():
    text = "Refunds go back to the card. They take 5-7 business days."
    result = check_answer(answer(text, [chunk(REFUND)], [span(0, len(text), "c1", "take 5-7 business days")]))
    assert [s.citations for s in result.sentences] == [(0,), (0,)]
    assert result.uncited_sentences == 0


def test_one_sentence_split_over_several_spans_keeps_all():
    text = "Refunds go to the original payment method and take 5-7 business days."
    cut = text.index(" and")
    cites = [span(0, cut, "c1", "original payment method"), span(cut, len(text), "c1", "5-7 business days")]
    result = check_answer(answer(text, [chunk(REFUND)], cites))
    assert result.sentences[0].citations == (0, 1) and result.ok


def test_multi_claim_flag():
    text = "Refunds take 5-7 days and we can pay cash today [1]."
    assert check_answer(answer(text, [chunk(REFUND)], [marker(1, "5-7")])).sentences[0].multi_claim
    assert not check_answer(answer("Refunds take 5-7 days [1].", [chunk(REFUND)])).sentences[0].multi_claim


def test_refusal_is_configurable():
    text = "Sorry, the documents do not cover this."
    assert not check_answer(answer(text, [])).refused
    result = check_answer(answer(text, []), CheckOptions(refusals=(text,)))
    assert result.refused and result.uncited_sentences == 0


def test_marker_entry_matched_by_position():
    text = "A is true [1]. B is true [1]."
    second = text.rindex("[1]")
    chunks = [chunk("A is true. B is true.")]
    result = check_answer(answer(text, chunks, [marker(1, "B is true", at=second)]))
    assert [c.reasons for c in result.citations] == [(reason_codes.QUOTE_MISSING,), ()]


NON_ASCII = [
    "Prix \U0001F4C8 : 5 \u20ac par mois, rembours\u00e9 en 5-7 jours.",
    "\u8fd4\u91d1\u306f5-7\u55b6\u696d\u65e5\u3067\u5c4a\u304d\u307e\u3059\u3002\u73fe\u91d1\u4e0d\u53ef\u3002",
    "Caf\u0065\u0301 cr\u0065\u0300me: open 8-17.\r\nClosed Sundays.\r\n",
]


@pytest.mark.parametrize("text", NON_ASCII)
def test_non_ascii_quotes_verify_at_code_point_offsets(text):
    c = chunk(text)
    for start in range(0, len(text) - 3, 3):
        quote = text[start:start + 4]
        if not quote.strip():
            continue
        assert reasons_of("x [1].", [c], [marker(1, quote, start, start + 4)]) == [()], quote


@given(st.text(min_size=1, max_size=120), st.data())
def test_any_substring_verifies_at_its_offsets(text, data):
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    quote = text[start:end]
    assume(quote.strip())
    assert reasons_of("Claim [1].", [chunk(text)], [marker(1, quote, start, end)]) == [()]


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=120), st.data())
def test_a_one_character_change_does_not_verify_at_its_offsets(text, data):
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    quote = text[start:end]
    k = data.draw(st.integers(0, len(quote) - 1))
    new = data.draw(st.characters(codec="utf-8", exclude_categories=("Cs", "Mn", "Me", "Zs", "Cc", "Zl", "Zp")))
    assume(not new.isspace() and new != quote[k] and new not in "\u200d\ufe0f")
    changed = quote[:k] + new + quote[k + 1:]
    assert reasons_of("Claim [1].", [chunk(text)], [marker(1, changed, start, end)]) != [()]


def test_checksum_helper_format():
    assert checksum("abc") == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_refusal_with_a_marker_is_still_a_refusal():
    result = check_answer(answer("I cannot answer from the sources [1].", FIVE))
    assert result.refused and result.uncited_sentences == 0


def recount(result):
    """The tally recomputed the slow way from the per-citation and per-sentence results."""
    reasons = dict.fromkeys(reason_codes.ALL_REASONS, 0)
    for c in result.citations:
        for code in c.reasons:
            reasons[code] += 1
    counted = [s for s in result.sentences if not s.refusal]
    for s in counted:
        for code in s.reasons:
            reasons[code] += 1
    quoted = [c for c in result.citations if c.quote and c.quote.strip() and c.chunk_index is not None]
    return (len(result.citations), sum(1 for c in result.citations if c.reasons), len(quoted),
            sum(1 for c in quoted if reason_codes.QUOTE_NOT_FOUND not in c.reasons), len(counted),
            sum(s.uncited for s in counted), sum(s.multi_claim for s in counted),
            sum(len(s.reasons) for s in counted), tuple(reasons.values()),
            sum(1 for c in result.citations if c.not_verifiable))


def test_tally_matches_a_recount_on_every_sample_answer():
    from citecheck.contract.log import read_log
    from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG

    options = CheckOptions(corpus=Corpus(DEFAULT_CORPUS))
    results = [check_answer(a, options) for _, a in read_log(DEFAULT_LOG)]
    assert len(results) == 48
    for result in results:
        assert tuple(result.tally) == recount(result), result.answer.answer_id
        assert result.ok == (not any(c.reasons for c in result.citations)
                             and not any(s.uncited or s.reasons for s in result.sentences))


@pytest.mark.parametrize("text, numbers", [
    ("18 days", ["18"]), ("1,500 and 2.5", ["1500", "2.5"]), ("$4.50 per meal", ["4.50"]),
    ("section 4.2.1", ["4.2.1"]), ("1.5% per month", ["1.5"]), ("2026-11-01", ["2026", "11", "01"]),
    ("M2 class and a1 b 22", ["22"]),  # glued to a letter: a name, not a number
    ("\u0663\u0664 days", ["\u0663\u0664"]), ("no digits here", []), ("18, 19 and 20.", ["18", "19", "20"]),
])
def test_numbers_in_a_sentence(text, numbers):
    from citecheck.checking.checker import _numbers

    assert _numbers(text) == numbers


@given(st.text(alphabet="aZ\u00e9\u00b2\u4e2d0159,._ -$%\u0663\uff11", max_size=40))
def test_numbers_follow_the_plain_rule_in_ascii_and_other_text(text):
    """The rule as first written (a run of digits with . or , between digits, not glued to a
    preceding letter), against the checker's two patterns (one for ASCII text, one for the rest)."""
    from citecheck.checking.checker import _numbers

    plain = [m.group().replace(",", "") for m in re.finditer(r"\d+(?:[.,]\d+)*", text)
             if not (m.start() and text[m.start() - 1].isalpha())]
    assert _numbers(text) == plain
    ascii_only = "".join(ch for ch in text if ch.isascii())
    assert _numbers(ascii_only) == [m.group().replace(",", "") for m in re.finditer(r"\d+(?:[.,]\d+)*", ascii_only)
                                    if not (m.start() and ascii_only[m.start() - 1].isalpha())]


@settings(max_examples=1000)
@given(st.text(alphabet="aZ\u00e9\u00b2\u4e2d0159,._ -$%\u0663\uff11\u00bd\u2160", max_size=40))
def test_the_compiled_builds_walk_finds_the_numbers_the_patterns_find(text):
    """The compiled build walks the characters (checker.COMPILED), the pure one searches by regex;
    both are importable in either build, so they are compared whichever build runs."""
    from citecheck.checking.checker import _numbers_regex, _numbers_scan

    assert _numbers_scan(text) == _numbers_regex(text)
    ascii_only = "".join(ch for ch in text if ch.isascii())
    assert _numbers_scan(ascii_only) == _numbers_regex(ascii_only)


@given(st.text(alphabet="aZ\u00e9\u4e2d19,._ -$%\u0663", max_size=40))
def test_every_number_found_is_in_the_text_and_every_free_digit_is_in_a_number(text):
    from citecheck.checking.checker import _numbers

    found = _numbers(text)
    rest = text
    for n in found:
        assert n and n[0].isdigit() and n[-1].isdigit() and "," not in n
        # the number, with any thousands commas it had, occurs in what is left of the text
        pattern = r",?".join(map(re.escape, n))
        m = re.search(pattern, rest)
        assert m is not None
        rest = rest[m.end():]
    if not any(ch.isalpha() for ch in text):  # nothing to glue to: no digit is lost
        assert "".join(found).replace(".", "") == "".join(ch for ch in text if ch.isdigit())


def test_records_built_without_their_constructor_have_every_field():
    """The hot loop builds NamedTuples with tuple.__new__, which does not check arity."""
    from citecheck.contract.log import read_log
    from citecheck.text.sentences import split_sentences
    from citecheck.web.settings import DEFAULT_LOG

    for _, a in read_log(DEFAULT_LOG):
        r = check_answer(a)
        records = [*a.chunks, *a.citations, *r.citations, *r.sentences, *split_sentences(a.answer)]
        assert all(len(x) == len(type(x)._fields) for x in records), a.answer_id


@given(st.text(alphabet="a nd;butwhilepls", max_size=30))
def test_clause_hint_substrings_match_the_pattern(text):
    from citecheck.checking.checker import _CLAUSE_HINT, _has_clause_hint

    assert _has_clause_hint(text) == (_CLAUSE_HINT.search(text) is not None)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300), min_size=1, max_size=5))
def test_a_checksum_is_the_sha256_of_the_text_however_many_came_before(texts):
    """``checksum`` copies one prepared digest per call: each is the SHA-256 of its own text only."""
    import hashlib

    for text in texts + texts[::-1]:
        assert checksum(text) == "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
