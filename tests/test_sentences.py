import pytest
from citecheck.text.sentences import split_sentences
from hypothesis import given, settings
from hypothesis import strategies as st


def texts(answer: str) -> list[str]:
    return [s.text for s in split_sentences(answer)]


@pytest.mark.parametrize(
    "answer, expected",
    [
        # design documents' toy replies
        ("Hits cost a tenth of the input price [2]. Writes cost more [1][3].",
         ["Hits cost a tenth of the input price [2].", "Writes cost more [1][3]."]),
        ("Hits cost a tenth of the input price [2]. This makes caching always worth it.",
         ["Hits cost a tenth of the input price [2].", "This makes caching always worth it."]),
        ("You get 20 days of earned leave [S1]. Casual leave \"can be carried forward\" [S2]. "
         "Sick leave is 12 days [S4]. Ask HR for details.",
         ["You get 20 days of earned leave [S1].", "Casual leave \"can be carried forward\" [S2].",
          "Sick leave is 12 days [S4].", "Ask HR for details."]),
        # abbreviations
        ("Mr. Smith met Dr. Jones in the U.S. last year [1]. He agreed.",
         ["Mr. Smith met Dr. Jones in the U.S. last year [1].", "He agreed."]),
        ("Bring a document, e.g. a passport, i.e. photo ID [1]. Done.",
         ["Bring a document, e.g. a passport, i.e. photo ID [1].", "Done."]),
        ("The title quoted Mme. Curie by name [2]. Next point.",
         ["The title quoted Mme. Curie by name [2].", "Next point."]),
        # decimals, prices, percentages, section numbers
        ("Interest is 1.5% per month and the fee is $4.50 [1]. See section 4.2.1 for more [2].",
         ["Interest is 1.5% per month and the fee is $4.50 [1].", "See section 4.2.1 for more [2]."]),
        ("It grew 3.5% [1]. It cost $49.00.", ["It grew 3.5% [1].", "It cost $49.00."]),
        # quoted text stays whole; split after the closing quote
        ('The policy says "Refunds take 5-7 days. Contact billing." That is all [1].',
         ['The policy says "Refunds take 5-7 days. Contact billing."', "That is all [1]."]),
        ("She wrote \u201cStop. Now.\u201d Then left [1].", ["She wrote \u201cStop. Now.\u201d", "Then left [1]."]),
        # ! ? and line breaks
        ("Really? Yes [1]! Fine.", ["Really?", "Yes [1]!", "Fine."]),
        ("First line [1]\nSecond line [2]\r\nThird [3]", ["First line [1]", "Second line [2]", "Third [3]"]),
        # markers after the full stop belong to the sentence before
        ("Refunds take 5-7 days. [1] Cash is not offered. [2][3]",
         ["Refunds take 5-7 days. [1]", "Cash is not offered. [2][3]"]),
        ("Refunds take 5-7 days.[1] Cash is not offered.", ["Refunds take 5-7 days.[1]", "Cash is not offered."]),
        # a lower-case continuation is not a new sentence
        ("It was approx. 5 days long. then it ended.", ["It was approx. 5 days long. then it ended."]),
        ("", []),
        ("   \n  ", []),
    ],
)
def test_split(answer, expected):
    assert texts(answer) == expected


def test_offsets_are_code_points_with_non_ascii():
    answer = "Prix: 5 \u20ac \U0001F4C8 [1]. \u65e5\u672c\u8a9e\u306e\u6587\u3002 Caf\u0065\u0301 ouvert [2]."
    sentences = split_sentences(answer)
    for s in sentences:
        assert answer[s.start:s.end] == s.text
    assert sentences[0].text.endswith("[1].")
    assert sentences[-1].text.startswith("\u65e5") or sentences[-1].text.startswith("Caf")


@given(st.text(alphabet=st.sampled_from(list("ab .!?\n\r[]12\"\u201c\u201dMr\u00e9\U0001F600\u0301")), max_size=80))
def test_sentences_are_ordered_non_overlapping_slices(answer):
    prev_end = 0
    for i, s in enumerate(split_sentences(answer)):
        assert s.index == i
        assert answer[s.start:s.end] == s.text
        assert s.text == s.text.strip() and s.text
        assert s.start >= prev_end
        prev_end = s.end


_PLAIN_END = __import__("re").compile(r"[.!?]+[\"'\u201d\u2019)]*(?=[\s\[]|$)|\r\n|\n|\r")


@settings(max_examples=500)
@given(st.text(alphabet=".!?\r\n\"')[ \u201d\u2019a\t", max_size=40))
def test_sentence_end_pattern_matches_its_plain_form(text):
    from citecheck.text.sentences import _END

    assert [m.span() for m in _END.finditer(text)] == [m.span() for m in _PLAIN_END.finditer(text)]


@settings(max_examples=1000)
@given(st.text(alphabet=".!?\r\n\"')[ \u201d\u2019\u201ca\t\u00a0\u2028x", max_size=40))
def test_the_compiled_builds_walk_finds_the_sentence_ends_the_pattern_finds(text):
    """The compiled build walks the characters instead of searching with _END (sentences.COMPILED);
    both are importable in either build, so the two are compared whichever build runs."""
    from citecheck.text.sentences import _END, _end_spans_scan

    assert _end_spans_scan(text) == [m.span() for m in _END.finditer(text)]



_MARKER_CHARS = st.sampled_from(list("[[]]] ,,\t\u00a0aZS1239\u0663\uff11x"))


@settings(max_examples=1000)
@given(st.text(alphabet=_MARKER_CHARS, max_size=30), st.sampled_from([0, 3]))
def test_the_marker_walk_ends_where_the_marker_pattern_ends(text, letters):
    import re

    from citecheck.text.sentences import MARKER, marker_end

    pattern = re.compile(MARKER if letters == 3 else r"\[\d+(?:\s*,\s*\d+)*\]")
    for i, ch in enumerate(text):
        if ch == "[":
            m = pattern.match(text, i)
            assert marker_end(text, i, letters) == (m.end() if m else -1), (text, i)


@settings(max_examples=500)
@given(st.text(alphabet=_MARKER_CHARS, max_size=40))
def test_markers_are_stripped_alike_by_walk_and_by_pattern(text):
    from citecheck.checking.checker import _ANY_MARKER, _strip_markers_walk

    assert _strip_markers_walk(text) == _ANY_MARKER.sub("", text)
