"""One answer cannot make its page unbounded (issue 17): a long answer is shown a page at a time,
clipped with notes, and the other reviewers' sessions are not affected."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import streamlit as st
from citecheck.review import paging
from hypothesis import given
from hypothesis import strategies as st_h
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import bench_review_page  # noqa: E402


@pytest.fixture
def long_log(tmp_path, monkeypatch):
    st.cache_resource.clear()
    st.cache_data.clear()
    log = tmp_path / "log.jsonl"
    records = [bench_review_page.answer_with_citations(3_000), bench_review_page.answer_with_citations(3)]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    monkeypatch.setenv("CITECHECK_LOGS", str(log))
    monkeypatch.setenv("CITECHECK_CORPUS", "")
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    return log


def page(answer_id: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["answer"] = answer_id
    return at.run()


def html(at) -> str:
    return "\n".join(str(h.proto.body) for h in at.get("html"))


def label_rows(at) -> list:
    """The sentence rows' label buttons drawn (one component per cited chunk, keyed r-<item key>)."""
    return [c for c in at.get("bidi_component") if str(getattr(c, "key", "")).startswith("r-")]


def test_a_3000_citation_answer_is_shown_a_page_at_a_time(long_log):
    at = page("cit-3000")
    assert not at.exception
    assert "Sentences 1 to 40 of 3,000 (page 1 of 75)" in html(at)
    assert len(label_rows(at)) == 40  # one label row per shown citation, not 3,000
    at.number_input(key="page-cit-3000").set_value(75).run()
    assert "Sentences 2,961 to 3,000 of 3,000 (page 75 of 75)" in html(at)
    other = page("cit-3")  # another session, on a short answer, meanwhile: whole and unpaged
    assert not other.exception and "Sentences 1 to" not in html(other)
    assert len(label_rows(other)) == 3


@given(st_h.integers(0, 5_000), st_h.integers(-3, 200), st_h.integers(1, 60))
def test_windows_cover_every_sentence_once(total, page_number, per_page):
    shown = paging.window(total, page_number, per_page)
    assert 0 <= shown.start <= shown.end <= total and shown.end - shown.start <= per_page
    every = [n for p in range(1, paging.pages(total, per_page) + 1)
             for n in range(*(lambda w: (w.start, w.end))(paging.window(total, p, per_page)))]
    assert every == list(range(total))
    if total:
        assert paging.window(total, paging.page_of(total - 1, per_page), per_page).end == total


def test_clip_says_what_it_cut():
    assert paging.clip("short", 10) == ("short", "")
    assert paging.clip("x" * 25, 10) == ("x" * 10, "\u2026 shown: the first 10 of 25 characters.")


def test_reader_view_of_a_huge_answer_is_clipped_with_a_note():
    from citecheck.checking.checker import check_answer
    from citecheck.contract.log import parse_answer
    from citecheck.review.html import reader_html

    record = bench_review_page.answer_with_markers(20_000)  # 20,000 sentences, a marker in each
    result = check_answer(parse_answer(record))
    whole = reader_html(result)
    clipped = reader_html(result, 1_000)
    assert "[1]" not in whole  # logged markers are removed either way
    assert len(clipped) < 2_000 < len(whole)
    assert f"the answer is {len(record['answer']):,} characters long: shown here are its first" in clipped
    assert whole.startswith(clipped.split('<div class="cc-meta">')[0][: len('<div class="cc-answer">') + 500])
