"""Comments and resolves (core/citecheck/labelling/comments.py): mentions, the reader naming every
bad field, thread state, and blind mode hiding comments until the reviewer has labelled."""

from __future__ import annotations

import pytest
from citecheck.errors import FieldError
from citecheck.labelling import comments, labels
from citecheck.labelling.comments import Comment, CommentError, Resolve, make_comment, make_resolve
from hypothesis import given
from hypothesis import strategies as st

TEAM = ["ana", "Ann", "Ann Lee", "ben", "o'neil"]


@pytest.mark.parametrize(("text", "mentions"), [
    ("@ben please look", ("ben",)),
    ("@Ann Lee and @ann", ("Ann Lee", "Ann")),  # longest name first; case does not matter, the known spelling is kept
    ("@Ann Leeward", ("Ann",)),  # "Ann Lee" is followed by a letter: not that name
    ("mail ana@example.org", ()),  # an address, not a mention
    ("@annabel", ()),  # no reviewer is called annabel, and ana/Ann are followed by a letter
    ("@ben, @ben and (@ana)", ("ben", "ana")),  # once each, in order
    ("@o'neil: ok", ("o'neil",)),
    ("@ nobody @", ()),
    ("@ben_x", ()),
])
def test_mentions(text, mentions):
    assert comments.mentions_in(text, TEAM) == mentions


def test_make_comment_and_resolve():
    c = make_comment(" a-1#s0#c0 ", " ana ", " @ben is the date in the chunk? ", TEAM, at="2026-12-09T10:00:00.000Z",
                     comment_id="c1")
    assert (c.thread, c.comment, c.author, c.text, c.mentions) == ("a-1#s0#c0", "c1", "ana", "@ben is the date in the chunk?",
                                                                   ("ben",))
    assert make_comment("a-1", "ana", "x").comment != make_comment("a-1", "ana", "x").comment  # a fresh id each time
    r = make_resolve("a-1#s0#c0", "ben", at="2026-12-09T10:05:00.000Z")
    assert r.to_record() == {"labels_version": 2, "event": "resolve", "thread": "a-1#s0#c0", "by": "ben",
                             "at": "2026-12-09T10:05:00.000Z", "citecheck": r.citecheck}


@pytest.mark.parametrize(("args", "says"), [
    (("a-1", "ana", "   "), "the comment is empty"),
    (("a-1", " ", "hi"), "a name is required before commenting"),
    (("", "ana", "hi"), "item or answer"),
    (("a-1", "ana", "x" * (comments.MAX_TEXT + 1)), "shorten it"),
])
def test_make_comment_refuses(args, says):
    with pytest.raises(CommentError, match=says):
        make_comment(*args)


def test_make_resolve_refuses_without_a_name():
    with pytest.raises(CommentError, match="a name is required before resolving"):
        make_resolve("a-1", "")


names = st.text(min_size=1, max_size=12).filter(str.strip)
comment_records = st.builds(
    lambda thread, cid, author, text, mentions, at: Comment(thread, cid, author, text, tuple(mentions), at, "0.1.0").to_record(),
    names, names, names, st.text(max_size=40), st.lists(names, max_size=3), st.text(max_size=24))


@given(comment_records)
def test_comment_record_round_trips_through_the_store_reader(record):
    event = labels.parse_record(record)
    assert isinstance(event, Comment) and event.to_record() == record


@given(names, names, st.text(max_size=24))
def test_resolve_record_round_trips(thread, by, at):
    record = Resolve(thread, by, at, "0.1.0").to_record()
    assert labels.parse_record(record) == Resolve(thread, by, at, "0.1.0")


BAD = st.sampled_from([None, 3, 2.5, True, [], {}, "", "  "])


@given(comment_records, st.sampled_from(["thread", "comment", "author", "text", "at"]), BAD)
def test_a_bad_comment_field_is_named(record, field, value):
    bad = {**record, field: value}
    if field in ("text", "at") and isinstance(value, str):
        assert labels.parse_record(bad).to_record()[field] == value  # an empty text or time still reads
        return
    with pytest.raises(FieldError) as caught:
        labels.parse_record(bad)
    assert caught.value.field == field


@given(comment_records, st.integers(min_value=0, max_value=3), BAD)
def test_a_bad_mention_is_named_with_its_index(record, index, value):
    with pytest.raises(FieldError) as caught:
        comments.parse_comment({**record, "mentions": ["ana"] * index + [value]})
    assert caught.value.field == f"mentions[{index}]"


@given(comment_records, st.sampled_from(["ana", 3, {}, True]))
def test_mentions_that_are_not_a_list_are_named(record, value):
    with pytest.raises(FieldError) as caught:
        comments.parse_comment({**record, "mentions": value})
    assert caught.value.field == "mentions"


@given(st.sampled_from(["thread", "by", "at"]), BAD)
def test_a_bad_resolve_field_is_named(field, value):
    record = {**Resolve("a-1", "ben", "2026-12-09T10:00:00.000Z").to_record(), field: value}
    if field == "at" and isinstance(value, str):
        assert comments.parse_resolve(record).at == value
        return
    with pytest.raises(FieldError) as caught:
        comments.parse_resolve(record)
    assert caught.value.field == field


def test_missing_mentions_read_as_none():
    record = make_comment("a-1", "ana", "hi").to_record()
    del record["mentions"]
    assert comments.parse_comment(record).mentions == ()


# --- threads --------------------------------------------------------------------------------------

steps = st.lists(st.tuples(st.sampled_from(["c", "r"]), st.sampled_from(["a-1#s0#c0", "a-1#s1#uncited", "a-1"])),
                 max_size=30)


def events_of(plan):
    out = []
    for n, (kind, thread) in enumerate(plan):
        at = f"2026-12-09T10:{n // 60:02d}:{n % 60:02d}.000Z"
        out.append(make_comment(thread, "ana", f"note {n}", at=at, comment_id=f"c{n}") if kind == "c"
                   else make_resolve(thread, "ben", at=at))
    return out


@given(steps)
def test_thread_state_follows_the_last_event(plan):
    found = comments.threads(events_of(plan))
    commented = [t for k, t in plan if k == "c"]
    assert list(found) == list(dict.fromkeys(commented))  # by first comment
    for key, thread in found.items():
        mine = [(k, n) for n, (k, t) in enumerate(plan) if t == key]
        assert [c.comment for c in thread.comments] == [f"c{n}" for k, n in mine if k == "c"]
        after_last_comment = [k for k, n in mine if n > max(n for k, n in mine if k == "c")]
        assert thread.open == (not after_last_comment)  # a resolve after the last comment closes it
        assert thread.resolved_by == ("" if thread.open else "ben")
    assert {t.key for t in comments.open_threads(found)} == {k for k, t in found.items() if t.open}


def test_a_comment_after_a_resolve_reopens_and_a_resolve_without_comments_is_nothing():
    events = events_of([("r", "a-1"), ("c", "a-1#s0#c0"), ("r", "a-1#s0#c0")])
    found = comments.threads(events)
    assert list(found) == ["a-1#s0#c0"] and not found["a-1#s0#c0"].open
    found = comments.threads([*events, *events_of([("c", "a-1#s0#c0")])])
    assert found["a-1#s0#c0"].open and len(found["a-1#s0#c0"].comments) == 2


def test_thread_item_and_answer():
    assert comments.thread_item("a#1#s2#c0").answer_id == "a#1"
    assert comments.thread_item("a#1") is None
    assert comments.thread_answer("a#1#s2#uncited") == comments.thread_answer("a#1") == "a#1"


def test_blind_mode_hides_a_thread_until_the_reviewer_has_labelled_its_item():
    found = comments.threads(events_of([("c", "a-1#s0#c0"), ("c", "a-1#s1#uncited"), ("c", "a-1")]))
    assert comments.visible_threads(found, blind=False, labelled=set()) == found
    assert comments.visible_threads(found, blind=True, labelled=set()) == {}
    done = comments.labelled_keys(["a-1#s0#c0"], {"a-1": ["a-1#s0#c0", "a-1#s1#uncited"]})
    assert set(comments.visible_threads(found, blind=True, labelled=done)) == {"a-1#s0#c0"}
    done = comments.labelled_keys(["a-1#s0#c0", "a-1#s1#uncited"], {"a-1": ["a-1#s0#c0", "a-1#s1#uncited"]})
    assert set(comments.visible_threads(found, blind=True, labelled=done)) == {"a-1#s0#c0", "a-1#s1#uncited", "a-1"}
    assert "a-1" not in comments.labelled_keys(["a-1#s0#c0"])  # an answer whose items are unknown stays hidden


@given(steps, st.sets(st.sampled_from(["a-1#s0#c0", "a-1#s1#uncited", "a-1"])), st.booleans())
def test_no_comment_is_visible_in_blind_mode_outside_what_was_labelled(plan, labelled, blind):
    found = comments.threads(events_of(plan))
    shown = comments.visible_threads(found, blind, labelled)
    assert set(shown) == (set(found) & labelled if blind else set(found))


def test_mentions_of_a_reviewer():
    events = [make_comment("a-1#s0#c0", "ana", "@ben look", TEAM, comment_id="c1"),
              make_comment("a-1", "ben", "@ana and @Ann Lee", TEAM, comment_id="c2"),
              make_comment("a-2", "ana", "@ben again", TEAM, comment_id="c3")]
    found = comments.threads(events)
    assert [c.comment for c in comments.mentions_of(found, "ben")] == ["c1", "c3"]
    assert [c.comment for c in comments.mentions_of(comments.visible_threads(found, True, {"a-1"}), "ben")] == []


def test_known_reviewers_are_everyone_who_left_a_name():
    events, _ = labels.read_events("tests/data/team/events.jsonl")
    events = [*events, make_comment("a-1", "zoe", "hi"), make_resolve("a-1", "yan")]
    assert comments.known_reviewers(events) == ["ana", "ben", "cy", "lee", "yan", "zoe"]



def test_the_lead_and_the_reviewers_of_an_assignment_may_be_mentioned():
    """A newcomer's lead, who had only assigned work, could not be @mentioned."""
    from citecheck.labelling.assignments import make_assignment, parse_shares

    made = make_assignment(["a-1#s0#c0", "a-2#s0#c0"], parse_shares("uma,vic"), "Lee Lead", "ids")
    assert comments.known_reviewers([made]) == ["Lee Lead", "uma", "vic"]
    comment = make_comment("a-1", "ana", "@lee lead and @VIC, see the date", comments.known_reviewers([made]))
    assert comment.mentions == ("Lee Lead", "vic")


def test_comments_are_appended_to_the_store_and_other_readers_pass_them_over(tmp_path):
    store = tmp_path / "labels.jsonl"
    events, _ = labels.read_events("tests/data/team/events.jsonl")
    for e in events:
        labels.append_event(store, e) if not isinstance(e, labels.Label) else labels.append(store, e)
    before = labels.read(store)
    labels.append_event(store, make_comment("a-1#s0#c0", "ana", "@ben?", TEAM, comment_id="c1"))
    labels.append_event(store, make_resolve("a-1#s0#c0", "ben"))
    read, warnings = labels.read_events(store)
    assert warnings == [] and [type(e).__name__ for e in read[-2:]] == ["Comment", "Resolve"]
    assert labels.read(store) == before  # the labels that count are unchanged
    assert labels.adjudications(read) == labels.adjudications(events)
    assert not comments.threads(read)["a-1#s0#c0"].open


# --- the page parts, through AppTest ----------------------------------------------------------------


@pytest.fixture
def store(tmp_path, monkeypatch):
    import streamlit as st
    from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG

    st.cache_resource.clear()
    st.cache_data.clear()
    path = tmp_path / "labels.jsonl"
    monkeypatch.setenv("CITECHECK_LOGS", str(DEFAULT_LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(DEFAULT_CORPUS))
    monkeypatch.setenv("CITECHECK_LABELS", str(path))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    monkeypatch.delenv("CITECHECK_GUIDELINES", raising=False)
    return path


def first_item():
    from citecheck.labelling import dataset
    from citecheck.labelling.items import items_of
    from citecheck.web.settings import DEFAULT_LOG

    return items_of(dataset.load([DEFAULT_LOG]).get("a-001"))[0]


def page_html(at) -> str:
    return "\n".join(str(h.proto.body) for h in at.get("html"))


def raw(path) -> list[dict]:
    from citecheck.storage import streams

    return streams.read_all(path, labels.STREAM, lambda v: v)[0]


def test_disagreements_page_lists_open_threads_and_a_lead_comments_and_resolves(store):
    from citecheck.review.html import focus_token
    from streamlit.testing.v1 import AppTest
    from test_app import APP

    item = first_item()
    labels.append(store, labels.make_label(item, "supported", "ana"))
    labels.append(store, labels.make_label(item, "not_supported", "ben"))
    labels.append_event(store, make_comment(item.key, "ana", "@ben is the <fee> in the chunk?", ["ana", "ben"]))
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["reviewer"] = "lee"
    at.run()
    at.switch_page("pages/disagreements.py").run()
    assert not at.exception
    shown = page_html(at)
    assert 'href="./?answer=a-001&amp;reviewer=lee"' in shown and "Open, 1 comment" in shown
    assert '<mark class="cc-mention">@ben</mark> is the &lt;fee&gt; in the chunk?' in shown
    token = focus_token(item.key)
    at.text_area(key=f"comment-box-{token}").input("@ana agreed, *not* in it").run()
    at.button(key=f"comment-{token}").click().run()
    last = raw(store)[-1]
    assert (last["event"], last["author"], last["text"], last["mentions"]) == (
        "comment", "lee", "@ana agreed, *not* in it", ["ana"])
    assert at.text_area(key=f"comment-box-{token}").value == ""  # emptied for the next comment
    assert "Open, 2 comments" in page_html(at)
    at.button(key=f"resolve-{token}").click().run()
    assert (raw(store)[-1]["event"], raw(store)[-1]["by"]) == ("resolve", "lee")
    shown = page_html(at)
    assert "No open comment thread." in shown and "Resolved by lee" in shown
    assert f"resolve-{token}" not in [b.key for b in at.button]  # a resolved thread has no Resolve button


def _thread_script():
    import os

    import streamlit as st
    from citecheck.labelling import labels

    from pages import _comments

    events, _ = labels.read_events(os.environ["CITECHECK_LABELS"])
    key, who = st.query_params["thread"], st.query_params["reviewer"]
    labelled = (key, who) in labels.latest(events)
    _comments.show(key, events, who, st.query_params.get("blind", "on") == "on", labelled)


def thread_page(**query):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_thread_script, default_timeout=30)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def test_blind_mode_hides_the_thread_on_the_page_until_the_reviewer_has_labelled(store):
    item = first_item()
    labels.append(store, labels.make_label(item, "supported", "ana"))
    labels.append_event(store, make_comment(item.key, "ana", "the date is not in the chunk", comment_id="c1"))
    at = thread_page(thread=item.key, reviewer="ben")
    assert not at.exception
    assert "the date is not in the chunk" not in page_html(at) and "Comments show once you have labelled" in page_html(at)
    assert len(at.text_area) == 0 and len(at.button) == 0  # nor can ben write in it
    assert "the date is not in the chunk" in page_html(thread_page(thread=item.key, reviewer="ben", blind="off"))
    labels.append(store, labels.make_label(item, "partial", "ben"))
    at = thread_page(thread=item.key, reviewer="ben")
    assert "the date is not in the chunk" in page_html(at) and "Comments show once" not in page_html(at)
    assert [b.label for b in at.button] == ["Comment", "Resolve"]


def test_an_empty_comment_is_refused_and_nothing_is_written(store):
    from citecheck.review.html import focus_token

    at = thread_page(thread="a-001", reviewer="ana", blind="off")
    at.button(key=f"comment-{focus_token('a-001')}").click().run()
    assert "Not saved: the comment is empty" in page_html(at)
    assert raw(store) == []


@given(st.text(max_size=60), st.lists(st.sampled_from(TEAM), max_size=3))
def test_comment_html_is_the_escaped_text_with_only_mentions_marked(words, mentioned):
    import html
    import re

    from citecheck.review import thread_html

    text = words + "".join(f" @{name}" for name in mentioned)
    comment = make_comment("a-1", "ana", text, TEAM) if text.strip() else None
    if comment is None:
        return
    out = thread_html.comment_text_html(comment)
    assert re.sub(r'<mark class="cc-mention">|</mark>', "", out) == html.escape(comment.text, quote=True)
    marked = re.findall(r'<mark class="cc-mention">(.*?)</mark>', out)
    assert [html.unescape(m)[1:].casefold() for m in marked] == [
        comment.text[a + 1:b].casefold() for a, b, _ in comments.mention_spans(comment.text, comment.mentions)]
    assert set(comment.mentions) >= set(mentioned)


def test_a_reviewer_sees_on_the_disagreements_page_only_threads_of_items_they_labelled(store, tmp_path, monkeypatch):
    from citecheck.labelling import dataset
    from citecheck.labelling.items import items_of
    from citecheck.web.settings import DEFAULT_LOG
    from streamlit.testing.v1 import AppTest
    from test_app import APP

    roles = tmp_path / "roles.toml"
    roles.write_text('roles_version = 1\n\n[roles]\n"lee@example.org" = "lead"\n', encoding="utf-8")
    monkeypatch.setenv("CITECHECK_ROLES", str(roles))
    first, second = items_of(dataset.load([DEFAULT_LOG]).get("a-001"))[:2]
    labels.append(store, labels.make_label(first, "supported", "ana"))
    labels.append(store, labels.make_label(first, "partial", "ben@example.org"))
    labels.append_event(store, make_comment(first.key, "ana", "about the first item"))
    labels.append_event(store, make_comment(second.key, "ana", "about the second item"))
    labels.append_event(store, make_comment("a-001", "ana", "about the whole answer"))

    def disagreements(email):
        at = AppTest.from_file(APP, default_timeout=60)
        at.user = {"is_logged_in": True, "email": email}
        at.run()
        return page_html(at.switch_page("pages/disagreements.py").run())

    mine = disagreements("ben@example.org")
    assert "about the first item" in mine
    assert "about the second item" not in mine and "about the whole answer" not in mine
    lead = disagreements("lee@example.org")
    assert all(f"about the {what}" in lead for what in ("first item", "second item", "whole answer"))


def test_a_comment_not_yet_sent_is_kept_while_the_reviewer_looks_at_other_items(store):
    """A draft typed in a thread's box outlives the box: moving to another item and back (the box
    not drawn meanwhile, so Streamlit drops its state) finds it again; sending it empties it."""
    from citecheck.labelling import dataset
    from citecheck.labelling.items import items_of
    from citecheck.review.html import focus_token
    from citecheck.web.settings import DEFAULT_LOG

    first, second = items_of(dataset.load([DEFAULT_LOG]).get("a-001"))[:2]
    box = f"comment-box-{focus_token(first.key)}"
    at = thread_page(thread=first.key, reviewer="ana", blind="off")
    at.text_area(key=box).input("is the 1.5 days in the chunk?").run()
    at.query_params["thread"] = second.key
    at.run()
    assert box not in [t.key for t in at.text_area]
    at.query_params["thread"] = first.key
    at.run()
    assert at.text_area(key=box).value == "is the 1.5 days in the chunk?"
    at.button(key=f"comment-{focus_token(first.key)}").click().run()
    assert raw(store)[-1]["text"] == "is the 1.5 days in the chunk?" and at.text_area(key=box).value == ""
    at.query_params["thread"] = second.key
    at.run()
    at.query_params["thread"] = first.key
    at.run()
    assert at.text_area(key=box).value == ""  # (a draft sent is not a draft any more)
