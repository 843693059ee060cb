"""The review page's filter and blind mode kept in the address (core/citecheck/review/address.py)."""

from __future__ import annotations

from citecheck.review import address
from citecheck.review.queue import FILTERS
from hypothesis import given
from hypothesis import strategies as hs


def test_every_filter_goes_through_the_address_and_back():
    for name in FILTERS:
        assert address.filter_name(address.show_param(name), None) == name
    assert address.show_param(address.DEFAULT_FILTER) is None  # the default keeps the address short


def test_the_session_wins_over_an_old_address():
    assert address.filter_name("refused", "With failed citations") == "With failed citations"
    assert address.blind("off", True) is True
    assert address.blind(None, False) is False


@given(hs.one_of(hs.none(), hs.text(max_size=20), hs.integers(), hs.lists(hs.text(max_size=3))))
def test_anything_else_in_the_address_means_the_defaults(junk):
    if junk not in ("failed", "refused", "unlabelled"):
        assert address.filter_name(junk, None) == address.DEFAULT_FILTER
    assert address.blind(junk, None) is (junk != "off")
    assert address.filter_name(junk, "not a filter") in FILTERS


def test_blind_mode_is_in_the_address_only_when_off():
    assert address.blind_param(True) is None and address.blind_param(False) == "off"
    assert address.blind(address.blind_param(False), None) is False and address.blind(address.blind_param(True), None) is True


def test_sync_writes_only_changes_and_removes_defaults():
    class Params(dict):
        writes = 0

        def __setitem__(self, key, value):
            Params.writes += 1
            super().__setitem__(key, value)

    params = Params(answer="a-1")
    address.sync(params, "show", "failed")
    address.sync(params, "show", "failed")
    assert params == {"answer": "a-1", "show": "failed"} and Params.writes == 1
    address.sync(params, "show", None)
    address.sync(params, "blind", None)
    assert params == {"answer": "a-1"}
