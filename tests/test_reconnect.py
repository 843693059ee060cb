"""The held-keys script of the review page (core/citecheck/review/reconnect.py): what reaches it is hex only."""

import pytest
from citecheck.review.reconnect import HELD_KEYS, reconnect_script, session_token


def test_each_session_has_its_own_token():
    a, b = session_token(), session_token()
    assert a != b and all(ch in "0123456789abcdef" for ch in a + b)


def test_the_script_carries_its_session_token_and_holds_the_page_keys():
    token = session_token()
    script = reconnect_script(token)
    assert f'me = "{token}"' in script
    for key in HELD_KEYS:
        assert key in script and key.upper() in script
    assert 'press("r")' in script  # Streamlit's own key to run the page again


@pytest.mark.parametrize("bad", ["", '"];alert(1)//', "ABCDEF", "12 34"])
def test_anything_but_lower_hex_is_refused(bad):
    with pytest.raises(ValueError):
        reconnect_script(bad)
