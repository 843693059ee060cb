"""Text as a UTF-8-only store holds it (``text/utf8.py``): unchanged when it is Unicode text, each lone
surrogate written as its escape otherwise, and the result always encodable."""

from __future__ import annotations

from citecheck.text.utf8 import utf8_text
from hypothesis import given
from hypothesis import strategies as st


@given(st.lists(st.one_of(st.text(max_size=10), st.sampled_from(["\ud800", "\udc00", "\udfff", "\\udc00"])), max_size=8))
def test_text_is_kept_and_a_lone_surrogate_is_written_as_its_escape(parts):
    text = "".join(parts)
    out = utf8_text(text)
    out.encode("utf-8")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        assert out == text.encode("utf-8", "backslashreplace").decode("utf-8")
        assert all(not 0xD800 <= ord(ch) <= 0xDFFF for ch in out)
    else:
        assert out is text


def test_a_key_as_the_standard_library_reads_it():
    assert utf8_text("trace.\udc00x") == "trace.\\udc00x"
