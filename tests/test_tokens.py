"""The tokens the review page writes into its HTML and scripts as they are: hex only, checked in one place."""

from __future__ import annotations

import pytest
from citecheck.review import html, reconnect
from citecheck.review.tokens import is_token, new_token
from hypothesis import given
from hypothesis import strategies as st


def test_new_tokens_are_tokens_of_their_length_and_differ():
    tokens = {new_token(4) for _ in range(50)}
    assert len(tokens) == 50 and all(is_token(t) and len(t) == 8 for t in tokens)
    assert is_token(html.run_token()) and is_token(reconnect.session_token())


@given(st.text(min_size=1))
def test_a_text_with_anything_but_lowercase_hex_is_not_a_token_and_is_refused_by_both_writers(text):
    hexish = all(ch in "0123456789abcdef" for ch in text)
    assert is_token(text) == hexish
    if not hexish:
        with pytest.raises(ValueError):
            html.focus_marker_html("a-001#s0#c0", 1, 2, 0, 2, run=text)
        with pytest.raises(ValueError):
            html.disagreement_focus_html("a-001#s0#c0", 1, 2, 0, 2, run=text)
        with pytest.raises(ValueError):
            reconnect.reconnect_script(text)
    else:
        assert f'data-run="{text}"' in html.focus_marker_html("a-001#s0#c0", 1, 2, 0, 2, run=text)
        assert f'me = "{text}"' in reconnect.reconnect_script(text)


def test_an_empty_run_writes_no_mark_and_an_empty_session_is_refused():
    assert "data-run" not in html.focus_marker_html("a-001#s0#c0", 1, 2, 0, 2, run="")
    with pytest.raises(ValueError):
        reconnect.reconnect_script("")
