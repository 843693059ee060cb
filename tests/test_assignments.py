"""Assignments, releases and opened items (core/citecheck/labelling/assignments.py): making them,
splitting work, reading every field back (each bad field named), both stores, the items a sample,
answer ids or a filter give (core/citecheck/review/assigning.py) and ``citecheck labels assign``."""

import json
from collections import Counter

import pytest
from citecheck.checking.files import check_options
from citecheck.errors import FieldError
from citecheck.labelling import assignments, dataset, labels
from citecheck.labelling import sample as samples
from citecheck.labelling.assignments import Assignment, AssignmentError, Open, Release
from citecheck.review import assigning
from citecheck.storage.lines import decode
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG
from helpers import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

AT = "2026-12-04T08:00:00.000Z"


@pytest.fixture(scope="module")
def data():
    return dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))


def assignment_record(**changes) -> dict:
    record = {"labels_version": 2, "event": "assignment", "assignment": "as-1", "lead": "lee",
              "items": {"ana": ["a-001#s0#c0", "a-002#s1#uncited"], "ben": ["a-003#s0#c0"]}, "due": "2026-12-18",
              "source": "sample:s1", "lock_minutes": 20, "at": AT, "citecheck": "0.2.0"}
    record.update(changes)
    return {k: v for k, v in record.items() if v is not ...}


def release_record(**changes) -> dict:
    record = {"labels_version": 2, "event": "release", "assignment": "as-1", "item": "a-001#s0#c0",
              "reviewer": "ana", "by": "ben", "reason": "lock-timeout", "at": AT, "citecheck": "0.2.0"}
    record.update(changes)
    return {k: v for k, v in record.items() if v is not ...}


def open_record(**changes) -> dict:
    record = {"labels_version": 2, "event": "open", "item": "a-001#s0#c0", "reviewer": "ana", "at": AT,
              "citecheck": "0.2.0"}
    record.update(changes)
    return {k: v for k, v in record.items() if v is not ...}


# --- reading -------------------------------------------------------------------------------------


def test_each_kind_reads_back_what_it_wrote():
    a = labels.parse_record(assignment_record())
    assert isinstance(a, Assignment)
    assert a.items == (("ana", ("a-001#s0#c0", "a-002#s1#uncited")), ("ben", ("a-003#s0#c0",)))
    assert (a.assignment, a.lead, a.due, a.source, a.lock_minutes, a.total) == ("as-1", "lee", "2026-12-18",
                                                                                "sample:s1", 20, 3)
    assert labels.parse_record(a.to_record()) == a
    r = labels.parse_record(release_record())
    assert isinstance(r, Release) and labels.parse_record(r.to_record()) == r
    o = labels.parse_record(open_record())
    assert isinstance(o, Open) and labels.parse_record(o.to_record()) == o


def test_optional_fields_may_be_absent():
    a = labels.parse_record(assignment_record(due=..., lock_minutes=..., source=..., citecheck=...))
    assert (a.due, a.lock_minutes, a.source, a.citecheck) == ("", None, "", "")
    assert "lock_minutes" not in a.to_record()
    assert labels.parse_record(release_record(assignment="")).assignment == ""  # a hold that was not assigned


BAD = [
    (assignment_record(assignment=""), "assignment", "is empty"),
    (assignment_record(assignment=...), "assignment", "is required"),
    (assignment_record(lead=" "), "lead", "is empty"),
    (assignment_record(items=[]), "items", "must be an object"),
    (assignment_record(items={"ana": "a-001#s0#c0"}), "items.ana", "must be a list"),
    (assignment_record(items={"ana": [7]}), "items.ana[0]", "must be an item key"),
    (assignment_record(items={"ana": ["nonsense"]}), "items.ana[0]", ""),
    (assignment_record(items={"ana": ["a-001#s0#c0"], "ben": ["a-001#s0#c0"]}), "items.ben[0]", "assigned twice"),
    (assignment_record(items={" ": []}), "items", "empty name"),
    (assignment_record(due="18/12/2026"), "due", "YYYY-MM-DD"),
    (assignment_record(due="2026-02-30"), "due", "YYYY-MM-DD"),
    (assignment_record(lock_minutes=0), "lock_minutes", "from 1 to"),
    (assignment_record(lock_minutes=10**30), "lock_minutes", "from 1 to"),
    (assignment_record(lock_minutes=True), "lock_minutes", "must be an integer"),
    (assignment_record(lock_minutes="20"), "lock_minutes", "must be an integer"),
    (assignment_record(at="yesterday"), "at", "not a timestamp"),
    (release_record(reason="bored"), "reason", "not one of"),
    (release_record(item="a-001"), "item", ""),
    (release_record(reviewer=""), "reviewer", "is empty"),
    (release_record(by=...), "by", "is required"),
    (release_record(assignment=None), "assignment", "is required"),
    (release_record(at=5), "at", "must be a string"),
    (open_record(reviewer=" "), "reviewer", "is empty"),
    (open_record(item=...), "item", "is required"),
    (open_record(at="2026-13-01T00:00:00Z"), "at", "not a timestamp"),
]


@pytest.mark.parametrize("record, field, words", BAD, ids=[f"{r['event']}-{f}-{n}" for n, (r, f, _) in enumerate(BAD)])
def test_each_bad_field_is_named(record, field, words):
    with pytest.raises(FieldError) as caught:
        labels.parse_record(record)
    assert caught.value.field == field and words in caught.value.message


@pytest.mark.parametrize("line, field", [
    ('{"labels_version": 2, "event": "open", "item": "a-001#s0#c0", "reviewer": "\\ud800", "at": "%s"}' % AT,
     "reviewer"),
    ('{"labels_version": 2, "event": "assignment", "assignment": "x", "lead": "l", "at": "%s", '
     '"items": {"\\udc00": []}}' % AT, "items.\udc00"),
    ('{"labels_version": 2, "event": "assignment", "assignment": "x", "lead": "l", "at": "%s", "items": {}, '
     '"lock_minutes": %s}' % (AT, "9" * 5000), "(json)"),
])
def test_lone_surrogates_and_huge_integers_are_refused_cleanly(line, field):
    with pytest.raises(FieldError) as caught:
        labels.parse_record(decode(line))
    assert caught.value.field == field


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["assignment", "lead", "items", "due", "source", "lock_minutes", "at",
                                        "item", "reviewer", "by", "reason"]),
                       st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12),
                                 st.lists(st.text(max_size=8), max_size=2),
                                 st.dictionaries(st.text(max_size=5), st.lists(st.text(max_size=14), max_size=2),
                                                 max_size=2))),
       st.sampled_from(["assignment", "release", "open"]))
def test_any_record_reads_or_is_refused_with_a_field_never_a_crash(fields, kind):
    record = {"labels_version": 2, "event": kind, **fields}
    try:
        event = labels.parse_record(record)
    except FieldError as exc:
        assert exc.field and exc.message
    else:
        assert labels.parse_record(json.loads(json.dumps(event.to_record()))) == event


# --- both stores ----------------------------------------------------------------------------------


def test_every_kind_round_trips_through_the_store_and_readers_pass_over_them(store, data):
    from citecheck.labelling.items import items_of

    item = items_of(data.get("a-001"))[0]
    made = assignments.make_assignment([item.key, "a-002#s0#c0"], [("ana", 1), ("ben", 1)], "lee", "answers",
                                       "2026-12-18", 15)
    labels.append_event(store, made)
    labels.append_event(store, assignments.make_open(item.key, "ana"))
    labels.append(store, labels.make_label(item, "supported", "ana"))
    labels.append_event(store, assignments.make_release(made.assignment, "a-002#s0#c0", "ben", "lee", "lead"))
    events, warnings = labels.read_events(store)
    assert warnings == []
    assert [type(e).__name__ for e in events] == ["Assignment", "Open", "Label", "Release"]
    assert events[0] == made
    assert [(lab.item, lab.reviewer) for lab in labels.effective(events)] == [(item.key, "ana")]
    assert labels.adjudications(events) == {}
    from citecheck.labelling import history

    assert [e.what for e in history.by_item(events)[item.key]] == ["label"]


# --- splitting --------------------------------------------------------------------------------------


def test_shares_are_read_in_order_with_one_by_default():
    assert assignments.parse_shares("alice, bob:2,cy=3") == (("alice", 1), ("bob", 2), ("cy", 3))
    for bad, words in [("", "at least one"), ("ana,ana", "twice"), ("ana:0", "from 1 to 1000"), (":2", "names no"),
                       ("ana:" + "9" * 5000, "from 1 to 1000")]:
        with pytest.raises(AssignmentError, match=words):
            assignments.parse_shares(bad)


def test_an_even_split_gives_the_remainder_to_the_first_named():
    keys = [f"a-{n}#s0#c0" for n in range(7)]
    got = assignments.split(keys, [("ana", 1), ("ben", 1), ("cy", 1)])
    assert [(who, len(k)) for who, k in got] == [("ana", 3), ("ben", 2), ("cy", 2)]
    assert [k for _, ks in got for k in ks] == keys  # runs in order


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=40), st.lists(st.integers(1, 5), min_size=1, max_size=5))
def test_a_split_gives_each_item_once_in_proportion_to_the_shares(numbers, weights):
    keys = [f"a-{n}#s0#c0" for n in numbers]
    shares = [(f"r{i}", w) for i, w in enumerate(weights)]
    got = assignments.split(keys, shares)
    unique = list(dict.fromkeys(keys))
    assert [k for _, ks in got for k in ks] == unique  # every item once, in order
    total = sum(weights)
    for (who, ks), (_, w) in zip(got, shares):
        assert abs(len(ks) - len(unique) * w / total) < 1  # never a whole item off its share
    assert assignments.split(keys, shares) == got  # the same every time


def test_making_an_assignment_checks_what_it_is_given():
    with pytest.raises(AssignmentError, match="lead"):
        assignments.make_assignment(["a-1#s0#c0"], [("ana", 1)], " ", "answers")
    with pytest.raises(AssignmentError, match="nothing to assign"):
        assignments.make_assignment([], [("ana", 1)], "lee", "answers")
    with pytest.raises(AssignmentError, match="YYYY-MM-DD"):
        assignments.make_assignment(["a-1#s0#c0"], [("ana", 1)], "lee", "answers", due="tomorrow")
    with pytest.raises(AssignmentError, match="lock timeout"):
        assignments.make_assignment(["a-1#s0#c0"], [("ana", 1)], "lee", "answers", lock_minutes=0)
    with pytest.raises(AssignmentError, match="release reason"):
        assignments.make_release("as-1", "a-1#s0#c0", "ana", "lee", "whim")


# --- what is assigned -------------------------------------------------------------------------------


def test_a_sample_gives_its_loaded_items_in_its_order(data, tmp_path):
    keys = [i.key for i in data.all_items]
    sample = samples.Sample("s-1", 1, "none", "uniform", len(keys), {"all": (len(keys), 3)},
                            (keys[5], "zz-404#s0#c0", keys[2], keys[9]))
    picked = assigning.from_sample(data, sample)
    assert picked.keys == (keys[5], keys[2], keys[9]) and picked.source == "sample:s-1"
    assert picked.missing == ("zz-404#s0#c0",)


def test_answer_ids_give_every_item_of_each(data):
    picked = assigning.from_answers(data, assigning.answer_list("a-002, a-001\nzz a-002"))
    want = [i.key for i in data.items("a-002")] + [i.key for i in data.items("a-001")]
    assert list(picked.keys) == want and picked.missing == ("zz",)
    assert "zz" in assigning.not_loaded_note(picked.missing)


def test_a_filter_matches_the_answers_fields_and_dates(data):
    every = assigning.from_filter(data)
    assert list(every.keys) == [i.key for i in data.all_items] and every.source == "filter:all"
    reason = "number_not_in_source"
    by_reason = assigning.from_filter(data, reason=reason)
    want = [i.key for r in data.results
            if reason in {x for part in (*r.citations, *r.sentences) for x in part.reasons}
            for i in data.items(r.answer.answer_id)]
    assert list(by_reason.keys) == want and want and by_reason.source == f"filter:reason={reason}"
    first = data.results[0].answer
    model = assigning.from_filter(data, model=first.model or "(none)")
    assert {k.split("#")[0] for k in model.keys} == {r.answer.answer_id for r in data.results
                                                     if (r.answer.model or "(none)") == (first.model or "(none)")
                                                     and data.items(r.answer.answer_id)}
    days = sorted({r.answer.timestamp[:10] for r in data.results if r.answer.timestamp})
    one_day = assigning.from_filter(data, since=days[0], until=days[0])
    assert {k.split("#")[0] for k in one_day.keys} == {r.answer.answer_id for r in data.results
                                                       if (r.answer.timestamp or "")[:10] == days[0]
                                                       and data.items(r.answer.answer_id)}
    with pytest.raises(assigning.WorkError, match="after until"):
        assigning.from_filter(data, since="2026-02-01", until="2026-01-01")
    with pytest.raises(assigning.WorkError, match="YYYY-MM-DD"):
        assigning.from_filter(data, since="01/02/2026")
    with pytest.raises(assigning.WorkError, match="needs the verdicts"):
        assigning.from_filter(data, verdict="supported")


def test_a_verdict_filter_keeps_only_the_items_given_that_verdict(data):
    keys = [i.key for i in data.all_items]
    verdicts = {"baseline": {keys[0]: "not_supported", keys[1]: "supported", keys[3]: "not_supported"}}
    got = assigning.from_filter(data, verdict="not_supported", verdicts=verdicts)
    assert list(got.keys) == [keys[0], keys[3]]


# --- the command --------------------------------------------------------------------------------------


def test_labels_assign_appends_one_assignment_split_by_share(tmp_path):
    target = tmp_path / "labels.jsonl"
    code, out, err = run_cli(*["labels", "assign", "--labels", str(target), "--log", str(DEFAULT_LOG),
                              "--corpus", str(DEFAULT_CORPUS), "--lead", "lee", "--reviewers", "ana,ben:2",
                              "--answers", "a-001,a-002,a-003,nope", "--due", "2026-12-31", "--lock", "10"])
    assert code == 0, err
    events, warnings = labels.read_events(target)
    assert warnings == [] and len(events) == 1
    made = events[0]
    assert isinstance(made, Assignment) and made.due == "2026-12-31" and made.lock_minutes == 10
    counts = Counter({who: len(keys) for who, keys in made.items})
    assert sum(counts.values()) == made.total and counts["ben"] >= 2 * counts["ana"] - 2
    assert f"assignment {made.assignment}: {made.total} item(s) from answers, due 2026-12-31" in out
    assert "nope" in err


@pytest.mark.parametrize("argv, words", [
    (["--reviewers", "ana:0"], "from 1 to 1000"),
    (["--reviewers", "ana", "--reason", "made_up"], "reason"),
    (["--reviewers", "ana", "--due", "soon", "--answers", "a-001"], "YYYY-MM-DD"),
    (["--reviewers", "ana", "--verdict", "supported"], "--verdicts"),
    (["--reviewers", "ana", "--answers", "nope"], "nothing to assign"),
])
def test_labels_assign_says_what_is_wrong_and_writes_nothing(tmp_path, argv, words):
    target = tmp_path / "labels.jsonl"
    code, _, err = run_cli(*["labels", "assign", "--labels", str(target), "--log", str(DEFAULT_LOG), "--lead", "lee",
                            *argv])
    assert code == 2 and words in err
    assert not target.exists()


def test_the_assign_page_says_the_due_date_the_assignment_holds_or_that_it_has_none():
    """A due date typed but not taken by the date box was dropped without a word (a newcomer's run):
    the notice now says the date stored, or "no due date"."""
    made = assignments.make_assignment(["a-001#s0#c0", "a-002#s0#c0", "a-003#s0#c0"],
                                       assignments.parse_shares("ana,ben"), "lee", "ids", "2026-12-20")
    text = assignments.made_text(made)
    assert text.startswith(f"Assigned 3 item(s) as {made.assignment}: ana 2, ben 1") and text.endswith("due 2026-12-20.")
    undated = assignments.make_assignment(["a-001#s0#c0"], assignments.parse_shares("ana"), "lee", "ids")
    assert assignments.made_text(undated).endswith("ana 1; no due date.")
