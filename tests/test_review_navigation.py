"""The review page's place and moves (core/citecheck/review/navigation.py), its labelling callbacks
(core/citecheck/review/label_actions.py) and its queue (core/citecheck/web/walk.py), driven with plain dicts for
the session and the address, on the bundled sample log in memory and checked into a store."""

from __future__ import annotations

import io
import shutil
import threading
from pathlib import Path

import pytest
from citecheck.checking.files import check_options
from citecheck.cli.main import main
from citecheck.labelling import dataset
from citecheck.labelling import labels as label_store
from citecheck.labelling import sample as samples
from citecheck.labelling.items import LABEL_TEXT
from citecheck.review import address, label_actions, navigation, span_marks
from citecheck.review.identity import Identity
from citecheck.review.queue import FILTERS
from citecheck.review.session_state import note_key
from citecheck.storage.checked.answers import StoreAnswers
from citecheck.web.walk import ReviewWalk, read_sample
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "sample_data" / "answers.jsonl"
CORPUS = ROOT / "sample_data" / "corpus"
ANA = Identity("ana", "session")
NOBODY = Identity("", "none")
KINDS = ["memory", "store"]
fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=40)


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """The sample log in memory and checked into a store: the page sees either."""
    folder = tmp_path_factory.mktemp("nav")
    log = folder / "answers.jsonl"
    shutil.copy(LOG, log)
    assert main(["check", str(log), "--corpus", str(CORPUS), "--store", str(folder / "store")], io.StringIO(),
                io.StringIO()) == 0
    return {"memory": dataset.load([log], check_options(CORPUS)), "store": StoreAnswers(folder / "store")}


def cited(data) -> tuple[str, list]:
    """The first answer with at least three items (the sample has several)."""
    for aid in data.answer_ids:
        if len(data.items(aid)) >= 3:
            return aid, data.items(aid)
    raise AssertionError("the sample log has no answer with three items")


# --- reviewer, filter and blind mode in the session and the address ----------------------------------


@given(show=hs.sampled_from([None, "failing", "failed", "refused", "unlabelled", "nonsense"]),
       blind=hs.sampled_from([None, "off", "on"]), session_filter=hs.sampled_from([None, *FILTERS]),
       name=hs.sampled_from(["", "ana"]))
def test_settle_makes_session_and_address_agree(show, blind, session_filter, name):
    params = {k: v for k, v in (("show", show), ("blind", blind)) if v is not None}
    state = {} if session_filter is None else {"filter_name": session_filter}
    who = Identity(name, "url" if name else "none")
    assert navigation.settle(state, params, who) == name
    # the address now names the session's settings, and read back gives them again
    assert address.filter_name(params.get("show"), None) == state["filter_name"] == state["filter_box"]
    assert address.blind(params.get("blind"), None) == state["blind_on"] == state["blind"]
    assert state["filter_name"] == (session_filter or address.filter_name(show, None))
    assert params.get("reviewer") == (name or None) and state["reviewer_box"] == name
    before = (dict(state), dict(params))
    navigation.settle(state, params, who)  # a second run changes nothing
    assert (state, params) == before


@pytest.mark.parametrize("callback, box, value", [("rename", "reviewer_box", "ben"), ("refilter", "filter_box", "Refused"),
                                                   ("reblind", "blind", False)])
def test_a_sidebar_change_waits_for_a_callback_of_the_session_in_progress(callback, box, value):
    """A label's save reads the reviewer's name under the session's lock: a name typed meanwhile
    is kept only when the save is done, never in the middle of it."""
    from citecheck.review.session_state import acting

    state, params = {box: value}, {}
    done = threading.Event()
    with acting(state):
        worker = threading.Thread(target=lambda: (getattr(navigation, callback)(state, params), done.set()))
        worker.start()
        assert not done.wait(0.3) and not params
    assert done.wait(10)
    worker.join()
    assert params


def test_a_signed_in_reviewer_is_never_written_into_the_address():
    state, params = {}, {}
    assert navigation.settle(state, params, Identity("ana@example.org", "login")) == "ana@example.org"
    assert "reviewer" not in params and "reviewer_name" not in state


def test_rename_refilter_and_reblind_write_the_address():
    state, params = {"reviewer_box": "  ben\x07 "}, {}
    navigation.rename(state, params)
    assert state["reviewer_name"] == params["reviewer"] == "ben"
    state["reviewer_box"] = "   "
    navigation.rename(state, params)
    assert state["reviewer_name"] == "" and "reviewer" not in params
    state["filter_box"] = "Refused"
    navigation.refilter(state, params)
    assert params["show"] == "refused" and state["filter_name"] == "Refused"
    state["filter_box"] = "All answers"
    navigation.refilter(state, params)
    assert "show" not in params
    state["blind"] = False
    navigation.reblind(state, params)
    assert params["blind"] == "off" and state["blind_on"] is False


# --- opening an answer --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_link_opens_its_answer_and_item_once_then_the_session_stands(answers, kind):
    data = answers[kind]
    aid, items = cited(data)
    state, params = {}, {"answer": aid, "item": "2"}
    result, shown = navigation.open_answer(state, params, data, data.answer_ids, {}, "ana")
    assert result.answer.answer_id == aid and shown == items
    assert state["answer_id"] == aid and state["focus"] == 1 and params["item"] == "2"
    other = next(a for a in data.answer_ids if a != aid)
    navigation.go(state, other)
    navigation.open_answer(state, params, data, data.answer_ids, {}, "ana")  # the old link is not followed again
    assert state["answer_id"] == params["answer"] == other and params["item"] == "1"


@pytest.mark.parametrize("kind", KINDS)
def test_without_a_link_the_first_answer_opens_on_its_first_unlabelled_item(answers, kind):
    data = answers[kind]
    ids = list(data.answer_ids)
    items = data.items(ids[0])
    current = label_store.latest([label_store.make_label(items[0], items[0].labels[0], "ana")])
    state, params = {}, {}
    navigation.open_answer(state, params, data, ids, current, "ana")
    assert state["answer_id"] == params["answer"] == ids[0]
    assert state["focus"] == (1 if len(items) > 1 else 0)
    state2, params2 = {}, {"answer": "no-such-answer"}
    navigation.open_answer(state2, params2, data, ids, current, "ben")  # ben has labelled nothing
    assert state2["answer_id"] == ids[0] and state2["focus"] == 0
    # the link's answer is not loaded: the page says so (it once opened another answer without a word)
    assert state2["flash"] == ("warning", navigation.missing_answer_text("no-such-answer", ids[0]))
    assert "no-such-answer, which is not in the loaded logs" in state2["flash"][1]
    del state2["flash"]
    navigation.open_answer(state2, params2, data, ids, current, "ben")  # the address now names the answer shown
    assert "flash" not in state2 and params2["answer"] == ids[0]
    state3 = {}
    navigation.open_answer(state3, {"answer": ids[0]}, data, ids, current, "ben")  # a loaded answer: nothing to say
    assert "flash" not in state3


@given(raw=hs.one_of(hs.text(max_size=6), hs.integers(-3, 12).map(str), hs.none()))
def test_the_addressed_item_is_always_one_of_the_answers(answers, raw):
    data = answers["memory"]
    _, items = cited(data)
    n = navigation.linked_focus(raw, items, {}, "ana")
    assert 0 <= n < len(items)
    if isinstance(raw, str) and raw.isascii() and raw.isdigit() and 1 <= int(raw) <= len(items):
        assert n == int(raw) - 1
    else:
        assert n == 0  # nothing labelled: the first open item is the first


def test_jump_opens_a_known_answer_and_names_an_unknown_one(answers):
    data = answers["memory"]
    aid = data.answer_ids[3]
    state = {"answer_id": data.answer_ids[0], "focus": 2}
    assert navigation.jump(state, data, "   ") is None and state["focus"] == 2
    assert navigation.jump(state, data, "nope<b>") == "No answer with id 'nope<b>' in the loaded logs."
    assert state["answer_id"] == data.answer_ids[0]
    assert navigation.jump(state, data, f" {aid} ") is None and state == {"answer_id": aid, "focus": 0}


@pytest.mark.parametrize("kind", KINDS)
def test_the_failing_filter_shows_the_answers_the_failures_page_counts_failing(answers, kind):
    """Review's "Failing answers" against the Failures page's failing table, from the log and from
    the store: the same answers, in log order ("With failed citations" leaves out those failing for
    an uncited sentence or an unsupported number, so it is a filter of its own)."""
    from citecheck.reports import figures

    data = answers[kind]
    table = figures.dataset_table(answers["memory"])
    failing = set(figures.failing(table, figures.Filters())["answer_id"])
    ids = list(ReviewWalk.of(data, None, "Failing answers", {}, "ana").ids)
    assert ids == [a for a in data.answer_ids if a in failing] and len(ids) == int(table["failing"].sum())
    failed = list(ReviewWalk.of(data, None, "With failed citations", {}, "ana").ids)
    assert set(failed) < set(ids)  # (the sample has answers failing for an uncited sentence or a number alone)
    assert address.filter_name("failing", None) == "Failing answers" and address.show_param("Failing answers") == "failing"


# --- moves --------------------------------------------------------------------------------------------


@fixture_ok
@given(kind=hs.sampled_from(KINDS), filter_name=hs.sampled_from(list(FILTERS)[:4]),
       start=hs.integers(0, 60), deltas=hs.lists(hs.sampled_from([-1, 1]), max_size=30))
def test_answer_steps_walk_the_filtered_ids_without_wrapping(answers, kind, filter_name, start, deltas):
    data = answers[kind]
    queue = ReviewWalk.of(data, None, filter_name, {}, "ana")
    ids = list(queue.ids)
    if not ids:
        return
    pos = min(start, len(ids) - 1)
    state = {"answer_id": ids[pos], "focus": 0}
    for delta in deltas:
        moves = state.get("moves", 0)
        navigation.step_answer(state, queue.ids, queue.where, delta, state["answer_id"])  # (drawn on the answer open)
        if 0 <= pos + delta < len(ids):
            pos += delta
            assert state["moves"] == moves + 1 and "flash" not in state
        else:
            kind_, text = state.pop("flash")
            assert kind_ == "info" and "does not wrap round" in text and f"({pos + 1} of {len(ids)})" in text
        assert state["answer_id"] == ids[pos] and queue.position(ids[pos]) == pos + 1


@fixture_ok
@given(kind=hs.sampled_from(KINDS), deltas=hs.lists(hs.sampled_from([-1, 1]), max_size=20))
def test_item_steps_stay_inside_the_open_answer(answers, kind, deltas):
    data = answers[kind]
    aid, items = cited(data)
    state, focus = {"answer_id": aid, "focus": 0}, 0
    for delta in deltas:
        navigation.step_item(state, data, delta, (aid, state["focus"]))  # (drawn on the item focused)
        if 0 <= focus + delta < len(items):
            focus += delta
        else:
            assert state.pop("flash")[1].startswith(f"This is the {'last' if delta > 0 else 'first'} item")
        assert state["focus"] == focus and state["answer_id"] == aid


# --- labelling, undo and the queue ---------------------------------------------------------------------


def test_a_press_delivered_twice_at_once_records_one_label(answers, tmp_path, monkeypatch):
    """Streamlit's fast reruns start a new script thread for a message that arrives mid-run, and
    that thread runs the press's callback again while the old thread may still be in it (CI: one
    key, two labels of one item).  Here the first call is held inside its append until the second
    has read the labels, as a slow disk under load holds it: without the session's lock both calls
    find no label and both record one.  With it the second waits, sees the first's label and
    records nothing; the session moves on to the next item."""
    data = answers["memory"]
    aid, items = cited(data)
    label = items[0].labels[0]
    target = tmp_path / "labels.jsonl"
    walk = ReviewWalk.of(data, None, "All answers", {}, "ana")
    state = {"answer_id": aid, "focus": 0}
    appending, second_read = threading.Event(), threading.Event()
    real_append = label_store.append

    def slow_append(where, record):  # (the first call's append waits for the second call's read, for 2 s at most)
        appending.set()
        second_read.wait(2)
        real_append(where, record)

    def read_labels(first: bool):
        def read():
            if not first:
                second_read.set()
            return label_store.read(target)[0]
        return read

    monkeypatch.setattr(label_store, "append", slow_append)
    first = threading.Thread(target=walk.save, args=(state, (aid, 0), label, target, ANA, "", read_labels(True), "run-1"))
    first.start()
    assert appending.wait(10)
    second = threading.Thread(target=walk.save, args=(state, (aid, 0), label, target, ANA, "", read_labels(False), "run-1"))
    second.start()
    first.join(10)
    second.join(10)
    (saved,), problems = label_store.read(target)
    assert not problems and (saved.item, saved.label) == (items[0].key, label)
    assert state["flash"] == ("success", label_store.saved_message(LABEL_TEXT[label], items[0].sentence, aid))
    assert (state["answer_id"], state["focus"]) == (aid, 1)


class _Stopped(Exception):
    """What Streamlit raises in a callback told to stop (its StopException), at a session access."""


class _CutShort(dict):
    """A session that stops the callback at its first access once ``armed`` (Streamlit stops a
    callback so when a newer message has arrived, and calls it again in the next run)."""

    armed = False

    def _check(self):
        if self.armed:
            self.armed = False
            raise _Stopped

    def __getitem__(self, key):
        self._check()
        return super().__getitem__(key)

    def __setitem__(self, key, value):
        self._check()
        super().__setitem__(key, value)

    def get(self, key, default=None):
        self._check()
        return super().get(key, default)

    def pop(self, key, *default):
        self._check()
        return super().pop(key, *default)


def test_a_press_cut_short_after_its_label_was_stored_says_saved_when_called_again(answers, tmp_path, monkeypatch):
    """The first call of a press stores the label and is stopped at its next session access, before
    it can move on or say so; Streamlit's next run calls it again for the same drawing.  That call
    records nothing, says "Saved" (not "already labelled": the reviewer pressed once) and moves on.
    The same for Undo: one retraction, its notice, and the focus back on the withdrawn item."""
    data = answers["memory"]
    aid, items = cited(data)
    label = items[0].labels[0]
    target = tmp_path / "labels.jsonl"
    walk = ReviewWalk.of(data, None, "All answers", {}, "ana")
    state = _CutShort(answer_id=aid, focus=0)
    real_append, real_event = label_store.append, label_store.append_event

    def append(where, record):
        real_append(where, record)
        state.armed = True

    def append_event(where, event):
        real_event(where, event)
        state.armed = True

    monkeypatch.setattr(label_store, "append", append)
    monkeypatch.setattr(label_store, "append_event", append_event)
    read = lambda: label_store.read(target)[0]  # noqa: E731
    with pytest.raises(_Stopped):
        walk.save(state, (aid, 0), label, target, ANA, "", read, "run-1")
    assert len(read()) == 1 and state["focus"] == 0 and "flash" not in state  # stored; not said, not moved
    walk.save(state, (aid, 0), label, target, ANA, "", read, "run-1")
    (saved,) = read()
    assert (saved.item, saved.label) == (items[0].key, label)
    assert state["flash"] == ("success", label_store.saved_message(LABEL_TEXT[label], items[0].sentence, aid))
    assert (state["answer_id"], state["focus"]) == (aid, 1)
    state.pop("flash")  # the page showed it; then pressed again on a new drawing
    walk.save(state, (aid, 0), label, target, ANA, "", read, "run-2")
    assert "nothing new recorded" in state["flash"][1] and len(read()) == 1

    with pytest.raises(_Stopped):
        label_actions.undo(state, data, target, read, "ana", "run-3")
    assert label_store.latest(read()) == {}  # withdrawn
    state["focus"] = 1
    label_actions.undo(state, data, target, read, "ana", "run-3")
    assert label_store.latest(read()) == {}
    events = [line for line in target.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(events) == 2  # the label and one retraction
    assert state["flash"][0] == "success" and state["flash"][1].startswith("Withdrew")
    assert (state["answer_id"], state["focus"]) == (aid, 0)


@pytest.mark.parametrize("kind", KINDS)
def test_a_press_delivered_twice_acts_once_on_the_item_it_was_drawn_on(answers, kind, tmp_path):
    """Streamlit (1.67) can call a button's callback a second time for one press (a message sent
    while the press's run starts carries its trigger again; CI: one key, two labels).  Each review
    button passes what it was drawn on, so the second call repeats the first: one label on the item
    the reviewer saw, one move.  (Saved on the item focused now, as it once was, the second call
    labelled the next item, one the reviewer never saw.)"""
    data = answers[kind]
    aid, items, label = next((aid, items, common[0]) for aid in data.answer_ids if len(items := data.items(aid)) >= 2
                             and (common := [lab for lab in items[0].labels if lab in items[1].labels]))
    queue = ReviewWalk.of(data, None, "All answers", {}, "ana")
    target = tmp_path / "labels.jsonl"
    state = {"answer_id": aid, "focus": 0}
    for _ in range(2):
        queue.save(state, (aid, 0), label, target, ANA, "", lambda: label_store.read(target)[0])
    (saved,), problems = label_store.read(target)
    assert not problems and (saved.item, saved.label) == (items[0].key, label)
    assert state["flash"] == ("success", label_store.saved_message(LABEL_TEXT[label], items[0].sentence, aid))
    state.pop("flash")  # the page showed it; pressed again, the label is said to be there already
    queue.save(state, (aid, 0), label, target, ANA, "", lambda: label_store.read(target)[0])
    assert state["flash"][0] == "info" and "nothing new recorded" in state["flash"][1]
    assert len(label_store.read(target)[0]) == 1
    assert (state["answer_id"], state["focus"]) == (aid, 1)
    queue.save(state, (aid, 1), label, target, ANA, "", lambda: label_store.read(target)[0])
    for _ in range(2):  # one Undo press, delivered twice: the last label only is withdrawn
        label_actions.undo(state, data, target, lambda: label_store.read(target)[0], "ana", "drawing-1")
    assert [r.item for r in label_store.latest(label_store.read(target)[0]).values()] == [items[0].key]
    label_actions.undo(state, data, target, lambda: label_store.read(target)[0], "ana", "drawing-2")  # pressed again
    assert label_store.latest(label_store.read(target)[0]) == {}

    state = {"answer_id": aid, "focus": 0, "moves": 0}
    for _ in range(2):
        navigation.step_item(state, data, 1, (aid, 0))
    assert (state["focus"], state["moves"]) == (1, 1)
    navigation.step_item(state, data, 1, ("another answer", 1))  # drawn on an answer no longer open
    assert (state["answer_id"], state["focus"], state["moves"]) == (aid, 1, 1)

    walk = ReviewWalk.of(data, None, "All answers", {}, "")
    first = walk.ids[0]
    state = {"answer_id": first, "focus": 1, "moves": 0}
    for _ in range(2):
        navigation.step_answer(state, walk.ids, walk.where, 1, first)
    assert (state["answer_id"], state["focus"], state["moves"]) == (walk.ids[1], 0, 1)


@pytest.mark.parametrize("kind", KINDS)
def test_a_saved_label_moves_the_reviewer_on_to_their_next_item(answers, kind, tmp_path):
    data = answers[kind]
    target = tmp_path / "labels.jsonl"
    queue = ReviewWalk.of(data, None, "All answers", {}, "ana")
    aid, items = cited(data)
    state = {"answer_id": aid, "focus": 0, note_key(items[0].key, "ana"): "checked <twice>"}
    queue.save(state, (aid, 0), items[0].labels[0], target, ANA, "g-1", lambda: label_store.read(target)[0])
    (saved,), problems = label_store.read(target)
    assert not problems and saved.item == items[0].key and saved.note == "checked <twice>"
    assert saved.reviewer == "ana" and saved.guidelines == "g-1"
    assert state["flash"] == ("success", label_store.saved_message(LABEL_TEXT[saved.label], items[0].sentence, aid))
    assert (state["answer_id"], state["focus"]) == (aid, 1)  # the next item nobody has labelled


def test_the_queue_is_the_same_on_the_log_and_on_the_store(answers, tmp_path):
    labels = []
    for data in answers.values():
        aid, items = cited(data)
        labels = [label_store.make_label(item, item.labels[0], "ana") for item in items]
    for filter_name in FILTERS:
        got = [list(ReviewWalk.of(d, None, filter_name, label_store.latest(labels), "ana").ids) for d in answers.values()]
        assert got[0] == got[1]
    memory, store = (ReviewWalk.of(d, None, "All answers", {}, "ana", overlap=2) for d in answers.values())
    after = (cited(answers["memory"])[0], 0)
    assert memory.next_item(labels, "ben", after) == store.next_item(labels, "ben", after)
    assert memory.team_progress(label_store.latest(labels), "ana") == store.team_progress(label_store.latest(labels), "ana")


def test_a_finished_queue_says_so_and_keeps_the_place(answers):
    data = answers["memory"]
    every = [label_store.make_label(item, item.labels[0], "ana") for item in data.all_items]
    queue = ReviewWalk.of(data, None, "All answers", {}, "ana")
    state = {"answer_id": data.answer_ids[0], "focus": 0}
    assert queue.move_on(state, every, "ana") is False
    assert state["flash"] == ("success", navigation.finished_text(1, False)) and "moves" not in state
    assert state["answer_id"] == data.answer_ids[0]


@pytest.mark.parametrize("target_kind", ["no name", "a folder"])
def test_a_label_that_cannot_be_saved_is_not_acknowledged(answers, tmp_path, target_kind):
    data = answers["memory"]
    aid, items = cited(data)
    target = tmp_path / "labels.jsonl"
    who = NOBODY
    if target_kind == "a folder":
        target.mkdir()  # appending to a folder fails with an OSError, as a full disk does
        who = ANA
    state = {"answer_id": aid, "focus": 0}
    queue = ReviewWalk.of(data, None, "All answers", {}, who.name)
    queue.save(state, (aid, 1), items[1].labels[0], target, who, "", lambda: [])
    kind, text = state["flash"]
    assert kind == "error" and (state["answer_id"], state["focus"]) == (aid, 0)
    if target_kind == "no name":
        assert "Enter your name in the sidebar, then label again" in text and not target.exists()
    else:
        assert "NOT saved" in text and "Click the label again" in text


def test_undo_withdraws_the_last_label_and_goes_back_to_its_item(answers, tmp_path):
    data = answers["memory"]
    aid, items = cited(data)
    target = tmp_path / "labels.jsonl"
    state = {"answer_id": aid, "focus": 2}
    label_actions.undo(state, data, target, lambda: label_store.read(target)[0], "")
    assert state.pop("flash") == ("info", "Enter your name first.")
    label_actions.undo(state, data, target, lambda: label_store.read(target)[0], "ana")
    assert state.pop("flash") == ("info", "You have no label to withdraw.")
    for n in (0, 1):
        assert label_actions.save(state, data, (aid, n), items[n].labels[-1], target, ANA) is not None
    label_actions.undo(state, data, target, lambda: label_store.read(target)[0], "ana")
    assert state["flash"][0] == "success" and f"sentence {items[1].sentence + 1} of {aid}" in state["flash"][1]
    assert (state["answer_id"], state["focus"]) == (aid, 1)
    events, problems = label_store.read_events(target)
    assert not problems and [lab.item for lab in label_store.effective(events)] == [items[0].key]


@pytest.mark.parametrize("kind", KINDS)
def test_a_label_that_repeats_the_current_one_records_nothing_and_marks_survive_a_change_of_label(answers, kind,
                                                                                                  tmp_path):
    """The same label saved twice (a key sent twice, a button pressed again) adds one record; a
    change between Partially and Not supported keeps the words marked; Supported drops them; a
    new note is a new record."""
    data = answers[kind]
    aid, items = cited(data)
    item = items[0]
    target = tmp_path / "labels.jsonl"

    def current():
        return label_store.latest(label_store.read_events(target)[0])

    def save(label: str) -> tuple[str, str]:
        state = {"answer_id": aid, "focus": 0, note_key(item.key, ANA.name): note}
        assert label_actions.save(state, data, (aid, 0), label, target, ANA, "g-1", None, current) is not None
        return label_actions.save(state, data, (aid, 0), label, target, ANA, "g-1", None, current)[1]

    note = ""
    kind_, text = save("partial")  # saved by the first call, repeated by the second
    assert kind_ == "info" and text.startswith("Already \u201cPartially supported\u201d") and "nothing new" in text
    assert [r.label for r in label_store.read(target)[0]] == ["partial"]
    label_store.append(target, span_marks.remarked(current()[(item.key, "ana")], ((0, 3),)))
    save("not_supported")
    assert [(r.label, r.spans) for r in label_store.read(target)[0]] == [
        ("partial", ()), ("partial", ((0, 3),)), ("not_supported", ((0, 3),))]
    save("supported")
    assert current()[(item.key, "ana")].spans == ()
    note = "the date is not in the chunk"
    save("supported")  # a new note: a new record, once
    assert [(r.label, r.note) for r in label_store.read(target)[0]][-2:] == [
        ("supported", ""), ("supported", "the date is not in the chunk")]


def test_labels_made_in_a_sample_record_it(answers, tmp_path):
    data = answers["memory"]
    aid, items = cited(data)
    path = tmp_path / "sample.jsonl"
    samples.write(path, samples.draw([i.key for i in data.all_items], 5, seed=7))
    sample, problem = read_sample(path)
    assert problem is None and len(sample) == 5
    queue = ReviewWalk.of(data, sample, "All answers", {}, "ana")
    first = queue.next_item([], "ana")
    assert first is not None and data.items(first[0])[first[1]].key == sample.items[0]
    target = tmp_path / "labels.jsonl"
    state = {"answer_id": first[0], "focus": first[1]}
    item = data.items(first[0])[first[1]]
    queue.save(state, first, item.labels[0], target, ANA, "", lambda: label_store.read(target)[0])
    (saved,), _ = label_store.read(target)
    assert saved.sample == sample.sample_id
    assert data.items(state["answer_id"])[state["focus"]].key == sample.items[1]
    assert queue.sample_progress(label_store.latest([saved]), "ana") == (1, 5)
    (path.parent / "broken.jsonl").write_text("{not json\n", encoding="utf-8")
    none, problem = read_sample(path.parent / "broken.jsonl")
    assert none is None and problem.startswith("Cannot use that sample: ")
    assert read_sample(None) == (None, None)


@pytest.mark.parametrize("kind", KINDS)
def test_the_header_says_progress_or_how_to_become_a_reviewer(answers, kind, tmp_path):
    data = answers[kind]
    aid, items = cited(data)
    current = label_store.latest([label_store.make_label(items[0], items[0].labels[0], "ana")])
    queue = ReviewWalk.of(data, None, "All answers", current, "ana", overlap=2)
    (notice,), done = queue.header(current, "ana", items, ANA)
    overall = queue.team_progress(current, "ana")
    assert notice[0] == "info" and notice[1].startswith(f"ana: labelled 1 of {overall.total:,} items overall, "
                                                        f"1 of {len(items)} in this answer")
    assert done == 0  # one label of two wanted: nothing done yet
    (notice,), done = queue.header(current, "", items, NOBODY)
    assert notice == ("error", "Enter your name in the sidebar before labelling: labels need a reviewer.")
    assert done is None
    path = tmp_path / "sample.jsonl"
    samples.write(path, samples.draw([i.key for i in items], 2, seed=1))
    sampled = ReviewWalk.of(data, read_sample(path)[0], "All answers", current, "ana")
    notices, _ = sampled.header(current, "ana", items, ANA)
    assert len(notices) == 2 and notices[1][1].startswith("Calibration sample sample-")


def _acting_on(log: list, said: str):
    """``act(x)``: an action that notes ``x`` in ``log`` when it runs and says ``said`` of it."""
    def act(x):
        def run():
            log.append(x)
            return ("success", said.format(x))
        return run
    return act


def test_disagreement_moves_and_decisions_act_once_per_press():
    """The Disagreements page's J/K and 1-4 pass the disagreement they were drawn on: called twice
    for one press they move once and record one adjudication; a decision cut short after it was
    recorded is said and moved on from when called again, not recorded twice."""
    keys = ["a#0", "a#1", "b#0"]
    state = {"dis_at": "a#0"}
    for _ in range(2):
        navigation.step_disagreement(state, keys, "a#0", 1)
    assert (state["dis_at"], state["dis_moves"]) == ("a#1", 1)
    navigation.step_disagreement(state, keys, "a#1", -1)  # a new press, drawn on the one now shown
    assert (state["dis_at"], state["dis_moves"]) == ("a#0", 2)

    decided: list = []
    decide = _acting_on(decided, "Recorded for {}.")
    for _ in range(2):
        navigation.decide_disagreement(state, keys, "a#0", decide("a#0"))
    assert decided == ["a#0"] and state["dis_at"] == "a#1" and state["adjudication_flash"][1] == "Recorded for a#0."

    cut = _CutShort(state)
    real = decide("a#1")

    def decide_then_stop():
        flash = real()
        cut.armed = True  # the next session access stops this call
        return flash

    with pytest.raises(_Stopped):
        navigation.decide_disagreement(cut, keys, "a#1", decide_then_stop)
    assert cut["dis_at"] == "a#1"  # recorded, not moved on
    navigation.decide_disagreement(cut, keys, "a#1", decide("a#1"))  # the next run calls it again
    assert decided == ["a#0", "a#1"] and cut["dis_at"] == "b#0" and cut["adjudication_flash"][1] == "Recorded for a#1."
    failed = {"dis_at": "b#0"}
    navigation.decide_disagreement(failed, keys, "b#0", lambda: ("error", "Not recorded: the disk is full."))
    assert failed["dis_at"] == "b#0" and failed["adjudication_flash"][0] == "error"  # stays, to be tried again
    navigation.decide_disagreement(failed, keys, "b#0", decide("b#0"))  # pressed again, the disk freed
    assert decided[-1] == "b#0" and failed["adjudication_flash"][1] == "Recorded for b#0."


def test_once_acts_once_per_press_and_says_the_same_again():
    """``session_state.once``: the first call of a press acts; a second call of the same press gives
    what the first did without acting; another press acts; no press (None) always acts."""
    from citecheck.review.session_state import once

    state: dict = {}
    acted: list = []
    act = _acting_on(acted, "did {}")
    assert once(state, ("assign", "run-1"), act(1)) == ("success", "did 1")
    assert once(state, ("assign", "run-1"), act(2)) == ("success", "did 1") and acted == [1]
    assert once(state, ("assign", "run-2"), act(3)) == ("success", "did 3") and acted == [1, 3]
    once(state, None, act(4))
    once(state, None, act(5))
    assert acted == [1, 3, 4, 5]
    for n in range(40):  # (the record keeps the last few presses only: bounded)
        once(state, ("press", n), act(n))
    assert once(state, ("assign", "run-1"), act(99)) == ("success", "did 99")
