"""Searching and filtering the review queue on a log in memory (citecheck.review.search): the
words and phrases, every filter alone and together, notes, hostile query text, and properties
(a result is a subset of the queue in its order; another word never grows it)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from citecheck.checking.files import check_options
from citecheck.contract import reasons
from citecheck.contract.log import checksum, parse_answer
from citecheck.labelling import dataset, labels
from citecheck.review import search as searching
from hypothesis import given, settings
from hypothesis import strategies as hs

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "answers.jsonl"


def answer(aid: str, question: str, text: str, chunks: list[str], model: str = "m1", prompt: str = "p1",
           quote: str = ""):
    """One logged answer citing its first chunk with ``quote`` (no citation without one)."""
    return parse_answer({
        "log_version": 1, "answer_id": aid, "question": question, "answer": text, "model": model,
        "prompt_version": prompt,
        "chunks": [{"chunk_id": f"{aid}-c{n}", "document_id": f"d{n}", "source": f"d{n}.md", "text": t,
                    "start": 0, "end": len(t), "checksum": checksum(t)} for n, t in enumerate(chunks)],
        "citations": [{"kind": "marker", "marker": 1, "quote": quote}] if quote else []})


def small():
    """Four answers: a1 cites its chunk verbatim, a2 fails its citation, a3 has no citation, a4
    logs no model; a1 is logged twice (its second line says something else)."""
    return dataset.build([
        answer("a1", "How many days of earned leave?", "Earned leave is 20 days [1].",
               ["Staff get 20 days of earned leave a year."], quote="20 days of earned leave"),
        answer("a2", "What about travel?", "Travel needs approval by the CFO [1].", ["Hotels are booked centrally."],
               model="m2", quote="approval by the CFO"),
        answer("a3", "Straße und Café?", "The café is on the STRASSE. Nothing else.", []),
        answer("a4", "Refunds?", "Refunds take 5 days [1].", ["Refunds take 5 working days."], model="",
               prompt="", quote="5 working days"),
        answer("a1", "A second line", "zebra [1].", ["zebra"], quote="zebra"),
    ])


def ids(found: searching.Found) -> list[str]:
    return list(found.answers)


def label(data, aid: str, n: int, choice: str, who: str, note: str = "") -> labels.Label:
    return labels.make_label(data.items(aid)[n], choice, who, note)


# --- words and phrases ----------------------------------------------------------------------------


def test_an_empty_search_is_every_answer_once_in_log_order():
    data = small()
    found = searching.search_dataset(data, searching.Search())
    assert ids(found) == ["a1", "a2", "a3", "a4"]
    assert found.item_count == sum(len(data.items(a)) for a in ids(found))
    assert found.items["a3"] == tuple(i.key for i in data.items("a3"))
    assert searching.Search().empty and searching.Search(text=' " ,; ').empty and not searching.Search(text="x").empty


@pytest.mark.parametrize(("text", "expected"), [
    ("leave", ["a1"]),
    ("LEAVE Days", ["a1"]),  # case, and words ANDed
    ("days", ["a1", "a4"]),
    ("days travel", []),
    ('"earned leave"', ["a1"]),
    ('"leave earned"', []),  # a phrase keeps its order
    ('"20 days of"', ["a1"]),  # in the chunk
    ('"days a year earned"', []),  # no phrase across two texts
    ("cfo", ["a2"]),
    ("hotels", ["a2"]),  # a retrieved chunk
    ("hotel", []),  # whole words only
    ("strasse", ["a3"]),  # case folding: ß is ss
    ("STRAßE café", ["a3"]),
    ("cafe\u0301", ["a3"]),  # a decomposed é is the composed one
    ("zebra", []),  # the second line of an id logged twice is not the answer
    ('refunds "5 working', ["a4"]),  # an unclosed quote runs to the end
])
def test_words_and_phrases(text, expected):
    assert ids(searching.search_dataset(small(), searching.Search(text=text))) == expected


def test_terms_are_words_and_phrases_each_once():
    assert searching.terms('Leave "earned  LEAVE" leave, "" x-ray') == (("leave",), ("earned", "leave"), ("x",), ("ray",))
    assert searching.terms("") == ()
    many = " ".join(f"w{n}" for n in range(searching.MAX_TERMS + 5))
    assert len(searching.terms(many)) == searching.MAX_TERMS and searching.dropped(many) == 5


def test_notes_on_an_answers_labels_are_searched():
    data = small()
    current = labels.latest([label(data, "a2", 0, "not_supported", "ana", "The CEO signs, not the board")])
    facts = searching.Facts(labels=current)
    assert ids(searching.search_dataset(data, searching.Search(text="board"), facts)) == ["a2"]
    assert ids(searching.search_dataset(data, searching.Search(text='"the ceo signs" travel'), facts)) == ["a2"]
    assert ids(searching.search_dataset(data, searching.Search(text="board"))) == []


# --- filters --------------------------------------------------------------------------------------


def test_answer_filters():
    data = small()
    assert ids(searching.search_dataset(data, searching.Search(model="m2"))) == ["a2"]
    assert ids(searching.search_dataset(data, searching.Search(model=searching.NONE))) == ["a4"]
    assert ids(searching.search_dataset(data, searching.Search(prompt_version="p1"))) == ["a1", "a2", "a3"]
    (code,) = data.get("a2").citations[0].reasons
    assert ids(searching.search_dataset(data, searching.Search(reason=code))) == ["a2"]
    assert ids(searching.search_dataset(data, searching.Search(reason=code, model="m1"))) == []


def test_status_is_each_items_own():
    data = small()
    found = searching.search_dataset(data, searching.Search(status="failed"))
    assert ids(found) == ["a2"] and found.items["a2"] == (data.items("a2")[0].key,)
    found = searching.search_dataset(data, searching.Search(status="uncited"))
    assert ids(found) == ["a3"] and found.item_count == 2
    assert ids(searching.search_dataset(data, searching.Search(status="verified"))) == ["a1", "a4"]


def test_label_and_reviewer():
    data = small()
    current = labels.latest([label(data, "a1", 0, "supported", "ana"), label(data, "a2", 0, "partial", "ben"),
                              label(data, "a3", 1, "no_claim", "ana")])
    facts = searching.Facts(labels=current)
    assert ids(searching.search_dataset(data, searching.Search(label="partial"), facts)) == ["a2"]
    assert ids(searching.search_dataset(data, searching.Search(reviewer="ana"), facts)) == ["a1", "a3"]
    assert ids(searching.search_dataset(data, searching.Search(label="partial", reviewer="ana"), facts)) == []
    unlabelled = searching.search_dataset(data, searching.Search(label=searching.NO_LABEL), facts)
    assert ids(unlabelled) == ["a3", "a4"] and unlabelled.items["a3"] == (data.items("a3")[0].key,)
    assert ids(searching.search_dataset(data, searching.Search(label=searching.NO_LABEL, reviewer="ben"), facts)) == ["a1", "a3", "a4"]


def test_verdicts_assignments_comments_and_unstable():
    data = small()
    k1, k2, k4 = (data.items(a)[0].key for a in ("a1", "a2", "a4"))
    facts = searching.Facts(verdicts={"claude/v1": {k1: "supported", k2: "not_supported"}, "baseline/v1": {k4: "partial"}},
                    assigned={k1: {"ana"}, k4: {"ana", "ben"}}, assignment_of={k1: "as-1", k2: "as-2"},
                    threads={k2: "open", "a4": "resolved", k1: "resolved"}, unstable={k4})
    run = searching.search_dataset
    assert ids(run(data, searching.Search(verdict="not_supported"), facts)) == ["a2"]
    assert ids(run(data, searching.Search(judge="baseline/v1"), facts)) == ["a4"]
    assert ids(run(data, searching.Search(judge="baseline/v1", verdict="supported"), facts)) == []
    assert ids(run(data, searching.Search(assigned_to="ben"), facts)) == ["a4"]
    assert ids(run(data, searching.Search(assigned_to="ana"), facts)) == ["a1", "a4"]
    assert ids(run(data, searching.Search(assignment="as-2"), facts)) == ["a2"]
    assert ids(run(data, searching.Search(comments="open"), facts)) == ["a2"]
    resolved = run(data, searching.Search(comments="resolved"), facts)  # a4's thread is on the whole answer
    assert ids(resolved) == ["a1", "a4"] and resolved.items["a4"] == tuple(i.key for i in data.items("a4"))
    assert ids(run(data, searching.Search(comments="none"), facts)) == ["a3"]
    assert ids(run(data, searching.Search(unstable=True), facts)) == ["a4"]
    both = run(data, searching.Search(text="days", assigned_to="ana", comments="resolved", unstable=True), facts)
    assert ids(both) == ["a4"] and both.summary == "1 answer, 1 item matches"


def test_blind_mode_searches_nothing_an_unlabelled_item_hides():
    """In blind mode a reviewer finds an item by another reviewer's label, note, a verdict or a
    comment thread only once they have labelled it themselves, as the item shows them only then."""
    from citecheck.web.search_facts import as_seen_by

    data = small()
    k1, k2, k4 = (data.items(a)[0].key for a in ("a1", "a2", "a4"))
    current = labels.latest([label(data, "a1", 0, "supported", "ana", "zebrafish invented"),
                             label(data, "a2", 0, "partial", "ana", "zebrafish again"),
                             label(data, "a2", 0, "not_supported", "ben", "my own note")])
    facts = searching.Facts(labels=current, verdicts={"claude/v1": {k1: "supported", k2: "partial"}},
                            threads={k1: "open", k2: "open", "a4": "open"}, unstable={k1, k2},
                            assigned={k4: {"ben"}})
    seen = as_seen_by(facts, "ben")  # ben labelled a2's item only
    run = searching.search_dataset
    for search, everything, blind in [
            (searching.Search(reviewer="ana"), ["a1", "a2"], ["a2"]),
            (searching.Search(label="supported"), ["a1"], []),
            (searching.Search(text="zebrafish"), ["a1", "a2"], ["a2"]),
            (searching.Search(verdict="supported"), ["a1"], []),
            (searching.Search(comments="open"), ["a1", "a2", "a4"], ["a2"]),
            (searching.Search(unstable=True), ["a1", "a2"], ["a2"]),
            (searching.Search(label=searching.NO_LABEL), ["a3", "a4"], ["a1", "a3", "a4"]),
            (searching.Search(assigned_to="ben"), ["a4"], ["a4"]),  # his own work stays findable
            (searching.Search(text="own note"), ["a2"], ["a2"])]:
        assert ids(run(data, search, facts)) == everything, search
        assert ids(run(data, search, seen)) == blind, search
    assert as_seen_by(facts, "").labels == {}  # nobody named: nothing of anyone's


def test_verdicts_by_run_keeps_each_runs_latest_ordinary_verdict():
    from citecheck.judging.verdicts import make

    def verdict(item, value, judge="baseline", repeat=0):
        return replace(make(item, value, "why", judge, "v1", "sha"), repeat=repeat)

    given = [verdict("a#s0#c0", "supported"), verdict("a#s0#c0", "partial"), verdict("a#s0#c0", "not_supported",
             repeat=1), verdict("b#s0#c0", "supported", judge="claude")]
    assert searching.verdicts_by_run(given) == {"baseline \u00b7 v1": {"a#s0#c0": "partial"},
                                                "claude \u00b7 v1": {"b#s0#c0": "supported"}}


def test_filters_combine_on_the_same_item():
    """Two item filters keep an answer only when one item passes both, not one item each."""
    data = small()
    first, second = data.items("a3")
    facts = searching.Facts(assigned={first.key: {"ana"}}, unstable={second.key})
    assert ids(searching.search_dataset(data, searching.Search(assigned_to="ana", unstable=True), facts)) == []
    assert ids(searching.search_dataset(data, searching.Search(assigned_to="ana", status="uncited"), facts)) == ["a3"]


def test_a_filter_value_it_does_not_take_is_named():
    with pytest.raises(searching.SearchError, match="status: 'broken' is not one of verified"):
        searching.Search(status="broken")
    with pytest.raises(searching.SearchError, match="comments"):
        searching.Search(comments="closed")
    with pytest.raises(searching.SearchError, match="reason"):
        searching.Search(reason="no_such_code")


def test_the_summary_counts():
    found = searching.search_dataset(small(), searching.Search(text="days"))
    assert found.summary == f"2 answers, {found.item_count} items match"


# --- hostile query text ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["'; DROP TABLE nav; --", "%", "_", "\\", "\\\\%_'\"", "\ud800 leave \udfff",
                                  "<script>alert(1)</script>", "x" * 100_000, "leave " * 20_000, '"' * 1001])
def test_hostile_query_text_is_only_words(text):
    data = small()
    found = searching.search_dataset(data, searching.Search(text=text))
    expected = [a for a in ["a1", "a2", "a3", "a4"]
                if all(searching.needle(t) in searching.haystack(searching.answer_texts(data.get(a).answer)) for t in searching.terms(text))]
    assert ids(found) == expected
    assert all("\ud800" not in w and "%" not in w for t in searching.terms(text) for w in t)


# --- properties -----------------------------------------------------------------------------------

SAMPLE_DATA = dataset.load([SAMPLE], check_options(ROOT / "sample_data" / "corpus"))
VOCAB = sorted({w for a in SAMPLE_DATA.answers[:12] for w in searching.words(a.question + " " + a.answer)})[:60]
WORDS = hs.sampled_from(VOCAB + ["zzz", "Leave", "DAYS", "'%_"])
REVIEWERS = ("ana", "ben")


@hs.composite
def searches(draw):
    words = draw(hs.lists(WORDS, max_size=4))
    text = " ".join(f'"{w} {v}"' if draw(hs.booleans()) else w for w, v in zip(words, words[1:] + ["x"]))
    return searching.Search(
        text=text if draw(hs.booleans()) else " ".join(words),
        model=draw(hs.sampled_from(["", "(none)", *{a.model or "(none)" for a in SAMPLE_DATA.answers}])),
        reason=draw(hs.sampled_from(["", *reasons.ALL_REASONS])),
        status=draw(hs.sampled_from(["", *searching.STATUSES])),
        label=draw(hs.sampled_from(["", "supported", "not_supported", searching.NO_LABEL])),
        reviewer=draw(hs.sampled_from(["", *REVIEWERS])),
        comments=draw(hs.sampled_from(["", *searching.COMMENT_STATES])),
        unstable=draw(hs.booleans()))


@hs.composite
def facts(draw):
    items = [i for a in SAMPLE_DATA.answer_ids[:20] for i in SAMPLE_DATA.items(a)]
    chosen = draw(hs.lists(hs.sampled_from(items), max_size=15))
    made = [labels.make_label(i, draw(hs.sampled_from(i.labels)), draw(hs.sampled_from(REVIEWERS)),
                              draw(hs.sampled_from(["", "leave policy", "wrong days"]))) for i in chosen]
    keys = [i.key for i in chosen]
    return searching.Facts(labels=labels.latest(made),
                   threads={k: draw(hs.sampled_from(["open", "resolved"])) for k in keys[::2]},
                   unstable=frozenset(keys[1::3]))


@settings(max_examples=80, deadline=None)
@given(searches(), facts(), hs.sampled_from(REVIEWERS), hs.data())
def test_in_blind_mode_what_others_give_an_item_i_have_not_labelled_never_changes_what_i_find(search, known, who,
                                                                                           data):
    from citecheck.web.search_facts import as_seen_by

    mine = {k for k, r in known.labels if r == who}
    items = [i for a in SAMPLE_DATA.answer_ids[:20] for i in SAMPLE_DATA.items(a) if i.key not in mine]
    item = data.draw(hs.sampled_from(items))
    other = data.draw(hs.sampled_from([r for r in REVIEWERS if r != who]))
    more = labels.make_label(item, data.draw(hs.sampled_from(item.labels)), other, "okapi leave")
    told = replace(known, labels={**known.labels, (item.key, other): more},
                   threads={**known.threads, item.key: "open"}, unstable=known.unstable | {item.key})
    for asked in (search, replace(search, text="okapi"), replace(search, reviewer=other)):
        before = searching.search_dataset(SAMPLE_DATA, asked, as_seen_by(known, who))
        after = searching.search_dataset(SAMPLE_DATA, asked, as_seen_by(told, who))
        assert (before.answers, before.items) == (after.answers, after.items)


@settings(max_examples=120, deadline=None)
@given(searches(), facts())
def test_a_result_is_part_of_the_queue_in_its_order(search, known):
    everything = list(searching.search_dataset(SAMPLE_DATA, searching.Search()).answers)
    found = searching.search_dataset(SAMPLE_DATA, search, known)
    got = list(found.answers)
    assert got == [a for a in everything if a in set(got)]
    assert found.answer_count == len(got) and found.item_count == sum(len(found.items[a]) for a in got)
    for a in got:
        keys = [i.key for i in SAMPLE_DATA.items(a)]
        assert [k for k in keys if k in found.items[a]] == list(found.items[a])


@settings(max_examples=120, deadline=None)
@given(searches(), WORDS, facts())
def test_another_word_never_grows_the_result(search, word, known):
    before = searching.search_dataset(SAMPLE_DATA, search, known)
    after = searching.search_dataset(SAMPLE_DATA, searching.Search(**{**search.__dict__, "text": search.text + " " + word}), known)
    assert set(after.answers) <= set(before.answers)
    assert after.item_count <= before.item_count


# --- the page part ----------------------------------------------------------------------------------

PAGE = """
import sys
from html import escape
sys.path[:0] = [{root!r}, {tests!r}]
import streamlit as st
from citecheck.review import search as searching
from pages import _review_search
from test_review_search import small

data = small()
facts = searching.Facts(assigned={{"a2#s0#c0": {{"ana"}}}})
found = _review_search.show(data, facts, version=1)
st.html('<p class="ids">' + ("none" if found is None else escape(",".join(found.answers))) + "</p>")
"""


def _page():
    from streamlit.testing.v1 import AppTest

    return AppTest.from_string(PAGE.format(root=str(ROOT), tests=str(ROOT / "tests")), default_timeout=60).run()


def _said(at) -> str:
    return "\n".join(str(h.proto.body) for h in at.get("html"))


def _open_filters(at):
    at.session_state["search_filters_open"] = True  # (the reviewer opens the Filters expander)
    return at.run()


def test_the_page_part_draws_the_box_and_filters_and_says_the_count():
    at = _page()
    assert not at.exception
    assert '<p class="ids">none</p>' in _said(at)  # nothing asked: the page's own queue stands
    assert not at.selectbox  # (the filters are drawn only while their expander is open)
    _open_filters(at)
    at.text_input(key="search_text").input("days").run()
    assert '<p class="ids">a1,a4</p>' in _said(at) and "2 answers, 2 items match" in _said(at)
    at.selectbox(key="search_status").select("verified").run()
    assert '<p class="ids">a1,a4</p>' in _said(at)
    at.text_input(key="search_text").input("").run()
    at.selectbox(key="search_assigned").select("ana").run()
    assert '<p class="ids"></p>' in _said(at)  # (a2's one item is assigned to ana, but it failed)
    at.selectbox(key="search_status").select("").run()
    assert '<p class="ids">a2</p>' in _said(at) and "1 answer, 1 item matches" in _said(at)
    assert at.selectbox(key="search_model").options == ["any", "(none)", "m1", "m2"]


def test_the_page_part_escapes_what_it_is_given():
    at = _page()
    at.text_input(key="search_text").input('<b>x</b> "a & b').run()
    assert not at.exception
    assert "<b>x</b>" not in _said(at) and "0 answers, 0 items match" in _said(at)


STORE_PAGE = """
import sys
from html import escape
sys.path[:0] = [{root!r}]
import streamlit as st
from citecheck.storage.checked.answers import StoreAnswers
from pages import _review_search

data = st.session_state.setdefault("data", StoreAnswers({store!r}))
found = _review_search.show(data, version=1)
st.html('<p class="ids">' + ("none" if found is None else escape(",".join(found.answers))) + "</p>")
"""


def test_the_page_part_searches_a_checked_store_as_the_log_in_memory(tmp_path):
    import io

    from citecheck.cli.main import main
    from streamlit.testing.v1 import AppTest

    corpus = ROOT / "sample_data" / "corpus"
    assert main(["check", str(SAMPLE), "--corpus", str(corpus), "--store", str(tmp_path / "store")],
                io.StringIO(), io.StringIO()) in (0, 1)
    at = AppTest.from_string(STORE_PAGE.format(root=str(ROOT), store=str(tmp_path / "store")),
                             default_timeout=120).run()
    at.text_input(key="search_text").input('"earned leave"').run()
    _open_filters(at)
    at.selectbox(key="search_status").select("verified").run()
    assert not at.exception
    expected = searching.search_dataset(SAMPLE_DATA, searching.Search(text='"earned leave"', status="verified"))
    assert expected.answer_count > 1
    assert f'<p class="ids">{",".join(expected.answers)}</p>' in _said(at)
    assert expected.summary in _said(at)
    assert (tmp_path / "store" / "search").is_dir()  # (the index, built by the first search)


def test_filters_set_stay_on_while_their_expander_is_closed_and_come_back_when_it_opens():
    at = _open_filters(_page())
    at.selectbox(key="search_assigned").select("ana").run()
    at.selectbox(key="search_status").select("").run()
    assert '<p class="ids">a2</p>' in _said(at)
    at.session_state["search_filters_open"] = False  # closed: no select box is drawn, the filter stays on
    at.run()
    assert not at.exception and not at.selectbox
    assert '<p class="ids">a2</p>' in _said(at)
    assert "1 filter on (open Filters to change it)" in _said(at)
    _open_filters(at)  # opened again: the select box shows what was chosen
    assert at.selectbox(key="search_assigned").value == "ana"
    assert '<p class="ids">a2</p>' in _said(at)
    at.selectbox(key="search_assigned").select("").run()
    assert '<p class="ids">none</p>' in _said(at)


def test_the_closed_filters_line_counts_the_filters_set():
    assert searching.filters_on_text(0) == ""
    assert searching.filters_on_text(1) == "1 filter on (open Filters to change it)"
    assert searching.filters_on_text(3) == "3 filters on (open Filters to change them)"
