from citecheck.text.normalise import find_quote, normalise, normalise_with_map, same_text
from hypothesis import assume, given
from hypothesis import strategies as st

TEXT = st.text(alphabet=st.sampled_from(list("abcAB 5-7.,\t\n\r\u00e9e\u0301\u65e5\U0001F4C8\u00df")), min_size=1, max_size=60)


def test_whitespace_collapses_and_punctuation_stays():
    assert normalise("  Refunds\ttake\r\n 5-7   days. ") == "Refunds take 5-7 days."
    assert normalise("5-7 days") != normalise("57 days")


def test_casefold_is_optional():
    assert find_quote("Refunds take 5-7 days.", "REFUNDS take") is None
    assert find_quote("Refunds take 5-7 days.", "REFUNDS take", casefold=True) == (0, 12)


def test_found_offsets_point_at_original_text():
    text = "Line one.\r\nRefunds  take\n5-7 days."
    start, end = find_quote(text, "Refunds take 5-7 days.")
    assert text[start:end] == "Refunds  take\n5-7 days."


def test_combining_marks_match_composed_form():
    text = "Caf\u0065\u0301 opens at 8."
    start, end = find_quote(text, "Caf\u00e9 opens")
    assert text[start:end] == "Caf\u0065\u0301 opens"


def test_empty_quote_is_never_found():
    assert find_quote("anything", "") is None
    assert find_quote("anything", "   ") is None


@given(TEXT)
def test_map_points_inside_source(text):
    norm = normalise_with_map(text)
    assert len(norm.text) == len(norm.starts) == len(norm.ends)
    for s, e in zip(norm.starts, norm.ends):
        assert 0 <= s < e <= len(text)


@given(TEXT, st.data())
def test_any_substring_is_found_and_maps_back(text, data):
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    quote = text[start:end]
    assume(quote.strip())
    found = find_quote(text, quote)
    assert found is not None
    assert same_text(text[found[0]:found[1]], quote)


@given(TEXT)
def test_normalise_is_idempotent(text):
    once = normalise(text)
    assert normalise(once) == once
    assert normalise(text, casefold=True) == normalise(once, casefold=True)
