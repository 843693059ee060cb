"""Marking the words a chunk does not support: word snapping, UTF-16 <-> code-point offsets at the
browser boundary, the label's ``spans`` (written, read, validated field by field), the highlight
(escape, then mark), the calibration export's columns and saving from the review page's marker."""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from pathlib import Path

import pytest
from citecheck.errors import FieldError
from citecheck.labelling import dataset, export, labels, marked_spans
from citecheck.review import span_marks
from citecheck.review.html import marked_html, marked_sentence_html
from citecheck.text import utf16
from citecheck.text.highlight import escape
from helpers import run_cli
from hypothesis import given
from hypothesis import strategies as st

LOG = Path(__file__).parent / "data" / "span_marking" / "answers.jsonl"

# Text with what makes offsets differ between units: astral emoji (two UTF-16 units), a ZWJ
# sequence, combining marks, punctuation, and plain words.
PIECES = st.sampled_from(["a", "Zu", "18", " ", "  ", "\n", ".", ",", "(", ")", "\u2014", "e\u0301", "\u0301",
                          "\U0001F600", "\U0001F469\u200d\U0001F4BB", "\u00e9", "\u4e2d", "'", "\U0001D400"])
TEXTS = st.lists(PIECES, max_size=30).map("".join)
ANY_TEXT = st.one_of(TEXTS, st.text(max_size=40))


@pytest.fixture(scope="module")
def data():
    return dataset.load([LOG])


# --- words and snapping ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("You get 18 days.", ["You", "get", "18", "days"]),
    ("(see the 2027 plan), \u2014 ok", ["see", "the", "2027", "plan", "ok"]),
    ("Cafe\u0301 staff: \U0001F469\u200d\U0001F4BB", ["Cafe\u0301", "staff", "\U0001F469\u200d\U0001F4BB"]),
    ("don't e.g. 1.5", ["don't", "e.g", "1.5"]),
    ("  ... ", []),
])
def test_words_leave_out_spaces_and_end_punctuation(text, expected):
    assert [text[a:b] for a, b in marked_spans.words(text)] == expected


def test_words_of_a_sentence_are_answer_offsets():
    text = "First one. Second \U0001F600 two."
    assert marked_spans.words(text, 11, len(text)) == [(11, 17), (18, 19), (20, 23)]


@given(ANY_TEXT)
def test_words_cover_every_letter_once_and_cut_no_mark_from_its_character(text):
    found = marked_spans.words(text)
    assert all(a < b for a, b in found) and all(b1 <= a2 for (_, b1), (a2, _) in zip(found, found[1:]))
    covered = {i for a, b in found for i in range(a, b)}
    for i, ch in enumerate(text):
        if not ch.isspace() and not unicodedata.category(ch).startswith("P"):
            assert i in covered  # a letter, digit, symbol or mark is always in a word
        if ch.isspace():
            assert i not in covered
    for a, b in found:  # a word never starts on a mark whose character is left outside it
        assert not (unicodedata.category(text[a]).startswith("M") and a > 0 and not text[a - 1].isspace())


@given(ANY_TEXT, st.integers(0, 45), st.integers(0, 45))
def test_snap_grows_a_selection_to_the_words_it_touches(text, x, y):
    start, end = min(x, y, len(text)), min(max(x, y), len(text))
    found = marked_spans.words(text)
    snapped = marked_spans.snap(found, start, end)
    touched = [w for w in found if w[0] < end and start < w[1]]
    if start == end or not touched:
        assert snapped is None
        return
    assert snapped is not None
    a, b = snapped
    assert a in {w[0] for w in found} and b in {w[1] for w in found}  # word boundaries only
    assert all(a <= w[0] and w[1] <= b for w in touched)  # every touched word whole
    assert marked_spans.snap(found, a, b) == snapped  # snapping twice changes nothing


def test_snap_by_hand():
    text = "It accrues at 1.5 days."
    found = marked_spans.words(text)
    assert marked_spans.snap(found, 5, 6) == (3, 10)  # a letter inside "accrues": the whole word
    assert marked_spans.snap(found, 9, 16) == (3, 17)  # "s at 1." : accrues .. 1.5
    assert marked_spans.snap(found, 2, 3) is None  # a space only
    assert marked_spans.snap(found, 22, 23) is None  # the full stop only


@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60))))
def test_normalise_sorts_merges_and_keeps_every_character(pairs):
    out = marked_spans.normalise(pairs)
    assert all(a < b for a, b in out) and all(b1 < a2 for (_, b1), (a2, _) in zip(out, out[1:]))
    assert {i for a, b in out for i in range(a, b)} == {i for a, b in pairs for i in range(a, b)}


# --- UTF-16 at the browser boundary -----------------------------------------------------------------

def units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@given(ANY_TEXT, st.data())
def test_utf16_offsets_are_what_a_browser_counts(text, draw):
    i = draw.draw(st.integers(0, len(text)))
    assert utf16.to_utf16(text, i) == units(text[:i])
    assert utf16.from_utf16(text, units(text[:i])) == i
    assert utf16.from_utf16(text, units(text[:i]), "end") == i
    assert utf16.utf16_length(text) == units(text)


@given(ANY_TEXT, st.data())
def test_a_utf16_offset_inside_a_character_rounds_to_its_edges(text, draw):
    unit = draw.draw(st.integers(0, units(text)))
    start, end = utf16.from_utf16(text, unit, "start"), utf16.from_utf16(text, unit, "end")
    assert units(text[:start]) <= unit <= units(text[:end]) and end - start in (0, 1)
    if end - start == 1:
        assert ord(text[start]) > 0xFFFF  # only the halves of an astral character differ


def test_utf16_by_hand():
    text = "\U0001F600 e\u0301 x"  # emoji (2 units), space, e + combining acute, space, x
    assert [utf16.to_utf16(text, i) for i in range(len(text) + 1)] == [0, 2, 3, 4, 5, 6, 7]
    assert utf16.from_utf16(text, 1) == 0 and utf16.from_utf16(text, 1, "end") == 1
    assert utf16.spans_to_utf16(text, [(2, 4), (5, 6)]) == [[3, 5], [6, 7]]


@given(TEXTS, st.data())
def test_spans_round_trip_through_the_browser(body, draw):
    answer = "Intro \U0001F600. " + body + " end"
    sentence = (len("Intro \U0001F600. "), len(answer))
    found = marked_spans.words(answer, *sentence)
    chosen = draw.draw(st.lists(st.sampled_from(found), max_size=4)) if found else []
    spans = marked_spans.normalise(chosen)
    sent = marked_spans.to_browser(answer, sentence, spans)
    text = answer[sentence[0]:sentence[1]]
    assert [text_units(text, a, b) for a, b in sent] == [answer[a:b] for a, b in spans]
    assert marked_spans.from_browser(answer, sentence, sent) == spans


def text_units(text: str, a: int, b: int) -> str:
    """``text.slice(a, b)`` as JavaScript does it (UTF-16 units)."""
    return text.encode("utf-16-le")[2 * a:2 * b].decode("utf-16-le")


def test_from_browser_ignores_what_is_not_a_pair_and_stays_in_the_sentence():
    answer = "One two. Three four five."
    sentence = (9, len(answer))
    sent = [[0, 3], "x", [1], [True, 2], [4.0, 5], [12, 99], [-5, 2]]
    assert marked_spans.from_browser(answer, sentence, sent) == ((9, 14), (20, 24))  # "Three", "five"


# --- the label's spans --------------------------------------------------------------------------

def test_label_with_spans_is_written_and_read_back(tmp_path, data):
    path = tmp_path / "labels.jsonl"
    items = data.items_by_answer[0]
    labels.append(path, labels.make_label(items[0], "supported", "ana"))
    labels.append(path, labels.make_label(items[0], "not_supported", "ben", spans=((25, 32), (4, 15))))
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert "spans" not in lines[0]  # a label without marks is written as before
    assert lines[1]["spans"] == [[4, 15], [25, 32]]  # sorted on the way in
    read, errors = labels.read(path)
    assert errors == [] and [lab.spans for lab in read] == [(), ((4, 15), (25, 32))]


def test_make_label_refuses_spans_on_a_label_that_marks_no_words(data):
    item = data.items_by_answer[0][0]
    with pytest.raises(labels.LabelError, match="Supported.*marks no words"):
        labels.make_label(item, "supported", "ana", spans=((4, 15),))


def record(**changes) -> dict:
    base = {"labels_version": 1, "item": "a-001#s0#c0", "answer_id": "a-001", "sentence": 0, "citation": 0,
            "chunk_id": "c", "fingerprint": "f", "label": "partial", "note": "", "reviewer": "ana",
            "at": "2026-12-02T13:45:10.123Z", "citecheck": "0.2.0"}
    return {**base, **changes}


@pytest.mark.parametrize("spans, field, says", [
    ("4-15", "spans", "must be a list"),
    ([[4, 15], [10, 20]], "spans[1]", "starts before the span before it ends (15)"),
    ([[4, 15], [2, 3]], "spans[1]", "sorted"),
    ([[4, 15], [20, 20]], "spans[1]", "expected 0 <= start < end"),
    ([[-1, 3]], "spans[0]", "expected 0 <= start < end"),
    ([[4, 15], [20, "30"]], "spans[1]", "pair of integers"),
    ([[4, 15, 16]], "spans[0]", "pair of integers"),
    ([[True, 3]], "spans[0]", "pair of integers"),
])
def test_bad_spans_are_named_field_by_field(spans, field, says):
    with pytest.raises(FieldError) as caught:
        labels.parse_label(record(spans=spans))
    assert caught.value.field == field and says in caught.value.message


def test_spans_only_on_partial_and_not_supported():
    assert labels.parse_label(record(label="not_supported", spans=[[4, 15]])).spans == ((4, 15),)
    assert labels.parse_label(record(spans=[])).spans == ()
    assert labels.parse_label(record(spans=None)).spans == ()
    for label in ("supported", "cant_tell"):
        with pytest.raises(FieldError) as caught:
            labels.parse_label(record(label=label, spans=[[4, 15]]))
        assert caught.value.field == "spans"


def test_a_bad_spans_record_is_skipped_with_its_line_and_field(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(record(spans=[[4, 15]])) + "\n" + json.dumps(record(spans=[[4, 15], [9, 12]])) + "\n",
                    encoding="utf-8")
    read, errors = labels.read(path)
    assert len(read) == 1 and len(errors) == 1
    assert errors[0].line == 2 and errors[0].field == "spans[1]"


def test_outside_names_the_span_that_leaves_the_sentence():
    assert marked_spans.outside(((4, 15), (25, 32)), (0, 58), 108) is None
    assert marked_spans.outside(((4, 15), (55, 62)), (0, 58), 108) == (
        "spans[1] [55, 62] is outside the item's sentence (characters 0-58 of the answer)")
    assert marked_spans.outside(((4, 150),), (0, 58), 108) == "spans[0] [4, 150] ends past the answer (108 characters)"


# --- escape, then mark ------------------------------------------------------------------------------

def test_marked_html_by_hand():
    assert marked_html("a <b> & c", [(2, 5)]) == 'a <mark class="cc-unsupported">&lt;b&gt;</mark> &amp; c'
    assert marked_html("x *y* $z$", [(2, 5), (6, 9)]) == (
        'x <mark class="cc-unsupported">*y*</mark> <mark class="cc-unsupported">$z$</mark>')
    assert marked_html("one two", [(13, 16)], offset=10) == 'one<mark class="cc-unsupported"> tw</mark>o'
    assert marked_html("plain", []) == "plain"
    text = "Intro. Cafe\u0301 <staff>"
    assert marked_sentence_html(text, (7, len(text)), [(7, 12)]) == (
        '<p class="cc-sentence"><mark class="cc-unsupported">Cafe\u0301</mark> &lt;staff&gt;</p>')


@given(ANY_TEXT, st.lists(st.tuples(st.integers(0, 45), st.integers(0, 45))))
def test_removing_the_marks_gives_the_escaped_text(text, pairs):
    spans = marked_spans.normalise(pairs)
    out = marked_html(text, spans)
    assert out.replace('<mark class="cc-unsupported">', "").replace("</mark>", "") == escape(text)
    assert out.count("<mark") == len([s for s in spans if s[0] < len(text)])


# --- the calibration export -------------------------------------------------------------------------

def test_export_carries_the_spans_and_their_text(tmp_path, data):
    path = tmp_path / "labels.jsonl"
    items = data.items_by_answer[0]
    labels.append(path, labels.make_label(items[0], "not_supported", "ana", spans=((4, 15), (25, 32))))
    labels.append(path, labels.make_label(items[0], "partial", "ben"))
    labels.append(path, labels.make_label(items[1], "supported", "ben"))
    code, out, err = run_cli("labels", "export", path, "--log", LOG)
    assert code == 0 and "warning" not in err
    rows = [json.loads(line) for line in out.splitlines()]
    ana = rows[0]["labels"]["ana"]
    assert ana["spans"] == [[4, 15], [25, 32]] and ana["marked"] == ["Cafe\u0301 staff", "18 days"]
    assert "spans" not in rows[0]["labels"]["ben"] and "spans" not in rows[1]["labels"]["ben"]
    code, out, err = run_cli("labels", "export", path, "--log", LOG, "--format", "csv")
    table = list(csv.DictReader(io.StringIO(out)))
    assert "spans:ben" not in table[0] and "marked:ben" not in table[0]
    assert [r["spans:ana"] for r in table] == ["[[4, 15], [25, 32]]", ""]
    assert json.loads(table[0]["marked:ana"]) == ["Cafe\u0301 staff", "18 days"]


def test_export_leaves_out_spans_that_no_longer_fit_and_says_why(tmp_path, data):
    path = tmp_path / "labels.jsonl"
    item = data.items_by_answer[0][1]  # sentence 1 runs from 59 to 108
    labels.append(path, labels.make_label(item, "partial", "ana", spans=((4, 15),)))
    code, out, err = run_cli("labels", "export", path, "--log", LOG)
    assert code == 0 and "spans" not in json.loads(out)["labels"]["ana"]
    assert ("warning: ana's label of a-001#s1#c1 (at " in err
            and "spans[0] [4, 15] is outside the item's sentence (characters 59-108 of the answer)" in err)


def test_export_rows_without_marks_are_as_before(tmp_path, data):
    path = tmp_path / "labels.jsonl"
    labels.append(path, labels.make_label(data.items_by_answer[0][0], "partial", "ana"))
    row = next(export.rows(data, labels.read(path)[0]))
    assert set(row["labels"]["ana"]) == {"label", "note", "at", "stale"}


# --- the review page's marker: what it is given, what it sends, what is saved ----------------------

def test_marker_data_and_what_it_sends_back(tmp_path, data):
    result, item = data.results[0], data.items_by_answer[0][0]
    answer, s = result.answer.answer, result.sentences[0]
    sentence = (s.start, s.end)
    shown = span_marks.browser_data(answer, sentence, item, ((4, 15),))
    assert shown["text"] == s.text and shown["spans"] == [[6, 17]]  # the ZWJ emoji is five UTF-16 units
    assert shown["words"][:3] == [[0, 5], [6, 11], [12, 17]]
    sent = {"token": shown["token"], "spans": [[6, 17], [27, 29]]}  # "18" (UTF-16) snapped to the word
    assert span_marks.received(sent, item, answer, sentence) == ((4, 15), (25, 27))
    assert span_marks.received({**sent, "token": "another item"}, item, answer, sentence) is None
    assert span_marks.received({"token": shown["token"], "spans": "x"}, item, answer, sentence) is None
    assert span_marks.received(None, item, answer, sentence) is None


def test_saving_marks_appends_a_new_record_and_undo_brings_back_the_old_marks(tmp_path, data):
    path = tmp_path / "labels.jsonl"
    item = data.items_by_answer[0][0]
    labels.append(path, labels.make_label(item, "partial", "ana", note="date invented", sample="s1"))
    first = labels.read(path)[0][-1]
    assert span_marks.can_mark(item, first) and not span_marks.can_mark(item, None)
    assert span_marks.save(path, first, ((4, 15),))[0] == "success"
    second = labels.read(path)[0][-1]
    assert (second.spans, second.label, second.note, second.sample) == (((4, 15),), "partial", "date invented", "s1")
    assert span_marks.save(path, second, ((4, 15),)) == ("info", "Nothing changed.")
    assert len(labels.read(path)[0]) == 2
    labels.retract_last(path, labels.read(path)[0], "ana")
    assert labels.latest(labels.read_events(path)[0])[(item.key, "ana")].spans == ()
    stale = labels.make_label(item._replace(fingerprint="sha256:old"), "partial", "ana")
    supported = labels.make_label(item, "supported", "ana")
    assert not span_marks.can_mark(item, stale) and not span_marks.can_mark(item, supported)


def test_a_change_sent_twice_is_saved_once_against_the_label_the_store_holds_now(tmp_path, data):
    """The marker's callback reads the reviewer's label when a change arrives: the same change
    sent twice (or before the page was drawn again) adds one record; after a relabel to Supported,
    none."""
    path = tmp_path / "labels.jsonl"
    item = data.items_by_answer[0][0]
    labels.append(path, labels.make_label(item, "not_supported", "ana"))

    def latest():
        return labels.latest(labels.read_events(path)[0]).get((item.key, "ana"))

    assert span_marks.save_latest(path, latest(), item, ((4, 15),))[0] == "success"
    assert span_marks.save_latest(path, latest(), item, ((4, 15),)) == ("info", "Nothing changed.")
    assert [r.spans for r in labels.read(path)[0]] == [(), ((4, 15),)]
    labels.append(path, labels.make_label(item, "supported", "ana"))
    kind, text = span_marks.save_latest(path, latest(), item, ((4, 15), (25, 27)))
    assert kind == "info" and "Nothing saved" in text and len(labels.read(path)[0]) == 3
    assert span_marks.save_latest(path, None, item, ((4, 15),))[0] == "info"


def test_a_failed_save_says_nothing_was_saved(tmp_path, data):
    item = data.items_by_answer[0][0]
    label = labels.make_label(item, "partial", "ana")
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    kind, text = span_marks.save(tmp_path / "a-file" / "labels.jsonl", label, ((4, 15),))
    assert kind == "error" and "NOT saved" in text


def test_the_marker_script_puts_text_in_the_page_as_text_only():
    script = (Path(__file__).parent.parent / "pages" / "span_marker" / "marker.js").read_text(encoding="utf-8")
    assert "textContent" in script
    assert not any(sink in script for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("))


def test_a_sentence_longer_than_a_row_is_not_offered_for_marking():
    from citecheck.review.paging import MAX_SENTENCE_CHARS

    assert span_marks.too_long((10, 10 + MAX_SENTENCE_CHARS)) is None
    why = span_marks.too_long((10, 11 + MAX_SENTENCE_CHARS))
    assert why is not None and f"{MAX_SENTENCE_CHARS + 1:,} characters long" in why


def test_a_citation_marker_is_never_a_word_to_mark():
    """A newcomer marked "days [1" with End, Shift+Left: a marker standing alone is no word."""
    text = "You get 45 days [1]. Staff [2, 3]; see [4-5]) and 2027."
    assert [text[a:b] for a, b in marked_spans.words(text)] == ["You", "get", "45", "days", "Staff", "see", "and",
                                                                "2027"]
    start = text.index("days")
    assert marked_spans.snap(marked_spans.words(text), start, text.index("Staff") + 2) == (start, text.index(" [2"))


def test_marks_saved_in_the_labels_own_millisecond_are_undone_alone(tmp_path, data, monkeypatch):
    """An undo withdraws a label by item, reviewer, label and time (milliseconds). Marks saved in
    the same millisecond as the label (a fast machine, a script) made a second record with the same
    time, and one undo withdrew both: CI saw it once.  A new record of marks is always later."""
    from citecheck.storage import lines

    frozen = "2026-12-06T20:00:00.000Z"
    monkeypatch.setattr(lines, "now", lambda: frozen)  # (the clock does not move between the records)
    path = tmp_path / "labels.jsonl"
    item = data.items_by_answer[0][0]
    labels.append(path, labels.make_label(item, "partial", "ana", at=frozen))
    first = labels.read(path)[0][-1]
    assert span_marks.save(path, first, ((4, 15),))[0] == "success"
    second = labels.read(path)[0][-1]
    assert second.at == "2026-12-06T20:00:00.001Z" and second.at > first.at
    assert span_marks.save(path, second, ((4, 9),))[0] == "success"
    assert labels.read(path)[0][-1].at == "2026-12-06T20:00:00.002Z"
    labels.retract_last(path, labels.read(path)[0], "ana")  # undo: the last marks only
    assert labels.latest(labels.read_events(path)[0])[(item.key, "ana")].spans == ((4, 15),)
    assert lines.after("not a time") == frozen and lines.after("2026-12-06T19:59:59.999Z") == frozen
