import html
import re

import pytest
from citecheck.text.highlight import Span, closest_passage, escape, highlight, highlight_window
from hypothesis import given
from hypothesis import strategies as st

TAGS = re.compile(r'<mark class="[^"<>]*">|</mark>')

HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "</mark><b>bold</b>",
    "*bold* _it_ $x^2$ `code` [link](javascript:alert(1))",
    "\U0001F600 emoji before the span",
    "a & b < c > d \" e ' f",
]


def test_exact_strings():
    assert highlight("Refunds take 5-7 days.", [(8, 22)]) == 'Refunds <mark class="cc-quote">take 5-7 days.</mark>'
    assert highlight("abc", []) == "abc"
    assert highlight("abc", [(0, 3)]) == '<mark class="cc-quote">abc</mark>'


def test_hostile_text_is_escaped_inside_and_outside_marks():
    text = '<script>x</script> said <img src=x onerror="y">'
    out = highlight(text, [(0, 8), (24, len(text))])
    assert out == ('<mark class="cc-quote">&lt;script&gt;</mark>x&lt;/script&gt; said '
                   '<mark class="cc-quote">&lt;img src=x onerror=&quot;y&quot;&gt;</mark>')


def test_overlapping_and_adjacent_spans():
    out = highlight("abcdef", [Span(0, 4, "a"), Span(2, 6, "b")])
    assert out == '<mark class="a">ab</mark><mark class="a b cc-overlap">cd</mark><mark class="b">ef</mark>'
    out = highlight("abcdef", [(0, 3), (3, 6)])
    assert out == '<mark class="cc-quote">abc</mark><mark class="cc-quote">def</mark>'


def test_spans_at_start_and_end_and_out_of_range():
    assert highlight("abc", [(0, 1), (2, 3)]) == '<mark class="cc-quote">a</mark>b<mark class="cc-quote">c</mark>'
    assert highlight("abc", [(-5, 1), (2, 99), (1, 1)]) == '<mark class="cc-quote">a</mark>b<mark class="cc-quote">c</mark>'


def test_non_ascii_offsets_are_code_points():
    text = "\U0001F4C8 Caf\u0065\u0301 \u65e5\u672c\u8a9e"
    out = highlight(text, [(2, 7)])
    assert out == '\U0001F4C8 <mark class="cc-quote">Caf\u0065\u0301</mark> \u65e5\u672c\u8a9e'


def test_window_adds_ellipses_and_keeps_the_span():
    text = "word " * 100 + "THE QUOTE" + " word" * 100
    start = text.index("THE QUOTE")
    out = highlight_window(text, start, start + 9, context=30)
    assert out.startswith("\u2026") and out.endswith("\u2026")
    assert '<mark class="cc-quote">THE QUOTE</mark>' in out
    assert len(TAGS.sub("", out)) < 90


def test_closest_passage_points_at_similar_text():
    text = "Refunds are issued to the original payment method and take 5-7 business days to appear."
    found = closest_passage("take 5 to 7 business days", text)
    assert "5-7 business days" in text[found.start:found.end] and found.score < 100


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_fixed_cases_round_trip(text):
    out = highlight(text, [(0, len(text) // 2), (len(text) // 3, len(text))])
    assert TAGS.sub("", out) == html.escape(text)
    assert "<script" not in out and "<img" not in out and "<b>" not in out


hostile_text = st.lists(st.sampled_from(list("<>&\"'/=*_$`[]()\\ abc\U0001F600\u65e5\u0301\n")) |
                        st.sampled_from(HOSTILE), max_size=12).map("".join)


@given(hostile_text, st.lists(st.tuples(st.integers(-5, 70), st.integers(-5, 70)), max_size=6))
def test_removing_marks_gives_the_escaped_input(text, spans):
    out = highlight(text, spans)
    assert TAGS.sub("", out) == escape(text)
    assert out.count("<mark") == out.count("</mark>")
    # nothing but our own tags: every '<' in the output starts a mark tag
    assert all(m.group(0).startswith(("<mark", "</mark")) for m in re.finditer(r"<[^>]*>", out))


# --- the closest-passage hint is bounded whatever the sizes (issue 17) -------------------------------

from citecheck.text import highlight as highlighter  # noqa: E402
from rapidfuzz import fuzz  # noqa: E402

_words = st.sampled_from(["refund", "cash", "days", "five", "seven", "bank", "leave", "staff", "x"])


@given(st.lists(_words, max_size=40).map(" ".join), st.lists(_words, min_size=1, max_size=400).map(" ".join))
def test_hint_on_small_inputs_is_the_full_alignment(quote, text):
    found = closest_passage(quote, text)
    if not quote.strip():
        assert found is None
        return
    a = fuzz.partial_ratio_alignment(quote.strip(), text)
    assert found == (None if a.dest_end <= a.dest_start else highlighter.Closest(a.dest_start, a.dest_end, round(a.score, 1)))


@given(st.lists(_words, min_size=1, max_size=8).map(" ".join), st.lists(_words, max_size=300).map(" ".join),
       st.integers(10, 200))
def test_hint_region_is_the_window_with_most_quote_words(quote, text, size):
    start, end = highlighter.hint_region(quote, text, size)
    assert 0 <= start <= end <= len(text) and end - start == min(size, len(text))

    def hits(a, b):  # words of the quote starting inside [a, b)
        wanted = {w.casefold() for w in highlighter._HINT_WORD.findall(quote)}
        return sum(1 for m in highlighter._HINT_WORD.finditer(text) if a <= m.start() < b and m.group().casefold() in wanted)

    inner = size - size // 10
    if len(text) > size:  # holds every quote word of the densest window of 90% of the size
        assert hits(start, end) >= max(hits(a, a + inner) for a in range(len(text) - inner + 1))


def test_a_huge_quote_on_a_huge_chunk_finds_the_passage_in_bounded_work():
    filler = "lorem ipsum dolor sit amet " * 40_000  # ~1 MB of chunk
    passage = "Refunds take five to seven business days once the bank confirms the transfer."
    text = filler + passage + filler
    quote = passage + " " + "and then some more words that are not there " * 15_000  # ~700 KB quote
    found = closest_passage(quote, text)
    assert found is not None and found.start <= text.index(passage) < found.end
    assert found.end - found.start <= highlighter.MAX_QUOTE_CHARS + 10
