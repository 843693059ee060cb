"""Issue #11: text from a log, a label or a text box shows as typed in Markdown widgets, and links
built from ids open that id."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from citecheck.text.markup import FSI, PDI, md_literal, review_link
from hypothesis import given
from hypothesis import strategies as st

IDS = ["q&a=1", "a#b", "why?x=1", "a/b/../c", "100%", "50%25", "two words", "é-中文-🙂", "+plus+", "a;b", ""]


@pytest.mark.parametrize("answer_id", IDS)
def test_review_links_round_trip_every_id(answer_id):
    link = review_link(answer_id)
    parts = urlsplit(link)
    assert parts.path == "./" and not parts.fragment
    assert parse_qs(parts.query, keep_blank_values=True) == {"answer": [answer_id]}


@given(st.text())
def test_review_links_round_trip_any_text(answer_id):
    parts = urlsplit(review_link(answer_id))
    assert parse_qs(parts.query, keep_blank_values=True).get("answer", [""]) == [answer_id]
    assert not parts.fragment and parts.path == "./"


def _unescape(md: str) -> str:
    """What a CommonMark renderer shows for text in which every punctuation mark is escaped."""
    shown = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", md)
    isolated = len(shown) >= 2 and shown[0] == FSI and shown[-1] == PDI  # (the pair md_literal adds, not a lone FSI)
    return shown[1:-1] if isolated else shown


@pytest.mark.parametrize("text", ["**bold**", "_it_", "`code`", "[link](http://x)", "$x^2$", "<b>b</b>", "# h",
                                  "1. item", "- item", "> quote", ":smile:", "a\\*b", "| a | b |", "~~s~~",
                                  "![img](x.png)", "&amp;"])
def test_markdown_and_latex_are_escaped(text):
    out = md_literal(text)
    assert _unescape(out) == text
    for ch in "*_`[]()$<>#:|~!&":
        assert not re.search(rf"(?<!\\){re.escape(ch)}", out.replace("\\\\", "")), (ch, out)


@given(st.text())
def test_md_literal_shows_the_text_on_one_line(text):
    out = md_literal(text)
    assert "\n" not in out and "\r" not in out
    assert _unescape(out) == re.sub(r"[\r\n]+", " ", text)


def test_right_to_left_text_is_isolated():
    assert md_literal("\u05e9\u05dc\u05d5\u05dd") == FSI + "\u05e9\u05dc\u05d5\u05dd" + PDI
    assert md_literal("\u202eevil") == FSI + "\u202eevil" + PDI
    assert md_literal("plain") == "plain"


def test_every_review_link_is_built_by_review_link():
    """One home for the encoding (core/citecheck/text/markup.py): a second copy elsewhere could drift (the
    Failures table once had its own).  (A string that starts a ``...?answer=`` link, or a quote()
    of an id; a docstring naming the parameter is not a link.)"""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    built_here = root / "core" / "citecheck" / "text" / "markup.py"
    copies = [str(p.relative_to(root)) for folder in ("core", "pages") for p in (root / folder).rglob("*.py")
              if p != built_here and re.search(r"[\"'][\w/.]*\?answer=|\bquote\(\s*\w*id\b", p.read_text(encoding="utf-8"))]
    assert copies == []


def test_fields_are_escaped_and_isolated_one_by_one():
    from citecheck.review.html import field, fields_html, labelled_html, others_html, verdict_html

    hebrew, arabic = "\u05e9\u05dc\u05d5\u05dd", "\u0645\u0631\u062d\u0628\u0627"
    assert field("<b>x</b>") == '<bdi class="cc-field">&lt;b&gt;x&lt;/b&gt;</bdi>'
    assert fields_html([hebrew, None, arabic]) == (f'<div class="cc-meta"><bdi class="cc-field">{hebrew}</bdi>'
                                                  f' \u00b7 <bdi class="cc-field">{arabic}</bdi></div>')
    assert f'<bdi class="cc-field">{hebrew}</bdi>' in labelled_html([("Question", hebrew)])
    assert verdict_html(hebrew, arabic, "supported", "r").count("<bdi") == 3
    assert others_html([(hebrew, "Supported"), (arabic, "Partial")]).count("<bdi") == 2


@given(st.lists(st.text(), max_size=4))
def test_fields_html_without_its_tags_is_the_escaped_values(values):
    from citecheck.review.html import fields_html
    from citecheck.text.highlight import escape

    out = re.sub(r"</?(bdi|div)[^>]*>", "", fields_html(values))
    assert out == escape(" \u00b7 ").join(escape(v) for v in values if v)


def test_the_answer_heading_isolates_the_id_from_its_position():
    from citecheck.review.html import answer_heading_html

    shown = answer_heading_html("\u05d0\u05d1 <b>x</b>", 3, 8)
    assert shown == '<h3>Answer <bdi class="cc-field">\u05d0\u05d1 &lt;b&gt;x&lt;/b&gt;</bdi> (3 of 8)</h3>'
    assert answer_heading_html("a-1", None, 8).endswith("</bdi> (outside the filter)</h3>")
