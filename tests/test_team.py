"""The Team page's figures (core/citecheck/labelling/team.py) against values worked by hand on
tests/data/team/ (its README says each figure and why), and properties of the time rules."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from citecheck.labelling import labels, team
from citecheck.labelling.comments import make_comment, make_resolve
from hypothesis import given
from hypothesis import strategies as st

DATA = Path(__file__).parent / "data" / "team"
NOW = datetime(2026, 12, 9, 12, 0, tzinfo=timezone.utc)


def fixture():
    events, warnings = labels.read_events(DATA / "events.jsonl")
    assert warnings == []
    raw = json.loads((DATA / "assignments.json").read_text(encoding="utf-8"))
    return events, {name: (due, people) for name, (due, people) in raw.items()}


def by_name():
    events, assignments = fixture()
    return {r.reviewer: r for r in team.reviewers(events, NOW, assignments)}


def test_labels_made_today_this_week_and_in_total():
    rows = by_name()
    assert list(rows) == ["ana", "ben", "cy", "dee"]
    assert [(r.today, r.this_week, r.total) for r in rows.values()] == [(5, 6, 7), (4, 4, 4), (0, 1, 2), (0, 0, 0)]
    assert [r.items for r in rows.values()] == [6, 4, 2, 0]


def test_assigned_and_left():
    rows = by_name()
    assert [(r.assigned, r.left) for r in rows.values()] == [(4, 2), (2, 1), (4, 2), (2, 2)]


def test_seconds_per_item_cut_pauses_over_ten_minutes():
    rows = by_name()
    assert (rows["ana"].seconds_per_item, rows["ana"].timed) == (90.0, 3)
    assert rows["ben"].seconds_per_item == pytest.approx(314.9995) and rows["ben"].timed == 2  # 600 s counts, 600.001 s not
    assert rows["cy"].seconds_per_item == pytest.approx(0.001) and rows["cy"].timed == 1
    assert (rows["dee"].seconds_per_item, rows["dee"].timed) == (None, 0)


def test_agreement_with_adjudications_uses_the_latest_on_the_same_version():
    rows = by_name()
    assert [(r.with_adjudication.share, r.with_adjudication.n) for r in rows.values()] == [
        (0.5, 2), (0.0, 2), (1.0, 1), (None, 0)]


def test_kappa_with_each_other_reviewer():
    rows = by_name()
    got = {(p.first, p.second): (p.n, p.kappa) for r in rows.values() for p in r.kappa}
    assert got[("ana", "ben")] == got[("ben", "ana")] == (4, pytest.approx(0.2))
    assert got[("ana", "cy")] == (2, pytest.approx(1.0))
    assert got[("ben", "cy")] == (2, pytest.approx(1 / 3))
    assert rows["dee"].kappa == ()


def test_cant_tell_share_and_undo_rate():
    rows = by_name()
    assert [(r.cant_tell.share, r.cant_tell.n) for r in rows.values()] == [(0.2, 5), (0.0, 4), (0.0, 2), (None, 0)]
    assert [r.retractions for r in rows.values()] == [1, 0, 0, 0]
    assert rows["ana"].undo_rate == pytest.approx(1 / 7)
    assert (rows["ben"].undo_rate, rows["dee"].undo_rate) == (0.0, None)


def test_assignment_progress_and_expected_finish():
    events, assignments = fixture()
    rows = {a.assignment: a for a in team.assignment_figures(events, NOW, assignments)}
    assert [(a.assigned, a.done, a.left) for a in rows.values()] == [(6, 3, 3), (1, 1, 0), (2, 0, 2), (3, 1, 2)]
    assert rows["w1"].finish == datetime(2026, 12, 9, 14, 0, tzinfo=timezone.utc) and not rows["w1"].late
    assert rows["w2"].finish is None and rows["w3"].finish is None
    assert rows["w4"].finish == datetime(2026, 12, 14, 12, 0, 0, 2000, tzinfo=timezone.utc) and rows["w4"].late
    assert rows["w4"].started == "2026-12-06T23:59:59.999Z"
    shown = {r["assignment"]: r["expected finish (UTC)"] for r in team.assignment_rows(list(rows.values()))}
    assert shown == {"w1": "2026-12-09T14:00Z", "w2": "finished", "w3": "no pace yet", "w4": "2026-12-14T12:00Z"}


def test_other_kinds_of_event_are_passed_over():
    events, assignments = fixture()
    talk = [make_comment("a-1#s0#c0", "ana", "@ben look", ["ben"], at="2026-12-09T10:00:30.000Z"),
            make_resolve("a-1#s0#c0", "ben", at="2026-12-09T10:00:40.000Z")]
    mixed = events[:5] + talk + events[5:]
    assert team.reviewers(mixed, NOW, assignments) == team.reviewers(events, NOW, assignments)
    assert team.assignment_figures(mixed, NOW, assignments) == team.assignment_figures(events, NOW, assignments)


def test_csv_holds_every_table_in_one_rectangle():
    events, assignments = fixture()
    text = team.to_csv(team.reviewers(events, NOW, assignments), team.assignment_figures(events, NOW, assignments), NOW)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["table"] for r in rows] == ["reviewer"] * 4 + ["kappa"] * 3 + ["assignment"] * 4
    assert {r["as of"] for r in rows} == {"2026-12-09T12:00:00Z"}
    ana = rows[0]
    assert (ana["reviewer"], ana["labels today"], ana["median seconds per item"], ana["undo rate"]) == ("ana", "5", "90.0", "0.143")
    assert rows[3]["median seconds per item"] == ""  # dee: none
    assert [(r["reviewer"], r["other reviewer"], r["kappa"], r["n"]) for r in rows[4:7]] == [
        ("ana", "ben", "0.2", "4"), ("ana", "cy", "1.0", "2"), ("ben", "cy", "0.333", "2")]
    assert [r["late"] for r in rows[7:]] == ["False", "False", "False", "True"]


def test_csv_neutralises_a_formula_in_a_name():
    events, _ = fixture()
    renamed = [replace(e, reviewer="=HYPERLINK(1)") if isinstance(e, labels.Label) and e.reviewer == "ben" else e
               for e in events]
    text = team.to_csv(team.reviewers(renamed, NOW), [], NOW)
    names = [r["reviewer"] for r in csv.DictReader(io.StringIO(text)) if r["table"] == "reviewer"]
    assert "'=HYPERLINK(1)" in names and "=HYPERLINK(1)" not in names


def test_week_start_is_monday_midnight_utc():
    assert team.week_start(NOW) == datetime(2026, 12, 7, tzinfo=timezone.utc)
    assert team.week_start(datetime(2026, 12, 7, 0, 30, tzinfo=timezone(timedelta(hours=2)))) == datetime(
        2026, 11, 30, tzinfo=timezone.utc)  # 00:30 at +02:00 is Sunday 22:30 UTC


gaps = st.lists(st.floats(min_value=0, max_value=3000, allow_nan=False).map(lambda g: round(g, 3)), max_size=30)


@given(gaps, st.randoms())
def test_median_seconds_counts_the_gaps_up_to_the_pause_whatever_the_order(steps, rnd):
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    times = [start]
    for g in steps:
        times.append(times[-1] + timedelta(seconds=g))
    shuffled = times[:]
    rnd.shuffle(shuffled)
    median, n = team.median_seconds(shuffled)
    kept = [g for g in steps if g <= team.PAUSE_SECONDS]
    assert n == len(kept)
    if kept:
        assert median is not None and min(kept) - 1e-6 <= median <= max(kept) + 1e-6
        below = sum(1 for g in kept if g < median - 1e-6)
        above = sum(1 for g in kept if g > median + 1e-6)
        assert below <= len(kept) / 2 and above <= len(kept) / 2
    else:
        assert median is None


@given(st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 12, 31), timezones=st.just(timezone.utc)),
       st.lists(st.integers(min_value=-20 * 86400, max_value=20 * 86400), max_size=20))
def test_today_is_within_this_week_within_total(now, offsets):
    events = [labels.Label(1, f"a#s{n}#c0", "a", n, 0, "c", "f", "supported", "", "ana",
                           (now + timedelta(seconds=s)).isoformat(timespec="milliseconds").replace("+00:00", "Z"), "")
              for n, s in enumerate(offsets)]
    rows = team.reviewers(events, now)
    if not offsets:
        assert rows == []
        return
    (row,) = rows
    start = team.week_start(now)
    assert row.total == len(offsets)
    assert row.this_week == sum(1 for s in offsets if start <= now + timedelta(seconds=s) < start + timedelta(days=7))
    assert row.today <= row.this_week <= row.total


def test_assignments_from_the_store_leave_out_released_items():
    from citecheck.labelling.assignments import make_assignment, make_release

    made = make_assignment(["a-1#s0#c0", "a-1#s1#c0", "a-2#s0#c0", "a-3#s0#c0"], [("ana", 1), ("ben", 1)], "lee",
                           "answers", due="2026-12-10", assignment_id="w9")
    events = [made, make_release("w9", "a-2#s0#c0", "ben", "ben", "lock-timeout"),
              make_release("other", "a-1#s0#c0", "ana", "lee", "lead")]  # another assignment's release: no effect
    assert team.assignments_of(events) == {
        "w9": ("2026-12-10", {"ana": ["a-1#s0#c0", "a-1#s1#c0"], "ben": ["a-3#s0#c0"]})}
    rows = {r.reviewer: r for r in team.reviewers(events, NOW, team.assignments_of(events))}
    assert [(r.assigned, r.left) for r in rows.values()] == [(2, 2), (1, 1)]


# --- the page, through AppTest ------------------------------------------------------------------


@pytest.fixture
def team_store(tmp_path, monkeypatch):
    import shutil

    import streamlit as st
    from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG

    st.cache_resource.clear()
    st.cache_data.clear()
    path = tmp_path / "labels.jsonl"
    shutil.copy(DATA / "events.jsonl", path)
    from citecheck.labelling.assignments import Assignment

    labels.append_event(path, Assignment("w1", "lee", (("ana", ("a-1#s0#c0", "a-4#s0#c0")), ("dee", ("a-6#s0#c0",))),
                                         "2026-12-31", "answers", "2026-12-01T09:00:00.000Z", "0.1.0"))
    roles = tmp_path / "roles.toml"
    roles.write_text('roles_version = 1\n\n[roles]\n"lee@example.org" = "lead"\n', encoding="utf-8")
    monkeypatch.setenv("CITECHECK_LOGS", str(DEFAULT_LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(DEFAULT_CORPUS))
    monkeypatch.setenv("CITECHECK_LABELS", str(path))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    monkeypatch.setenv("CITECHECK_ROLES", str(roles))
    return path


def team_page(user: dict | None = None):
    from streamlit.testing.v1 import AppTest
    from test_app import APP

    at = AppTest.from_file(APP, default_timeout=60)
    if user is not None:
        at.user = user
    at.run()
    return at.switch_page("pages/team.py").run()


def test_the_team_page_shows_the_figures_and_their_csv_to_a_lead(team_store):
    for user in (None, {"is_logged_in": True, "email": "lee@example.org", "name": "Lee"}):  # no sign-in: all lead
        at = team_page(user)
        assert not at.exception
        people, pairs, work = (t.value for t in at.dataframe)
        ana = people[people["reviewer"] == "ana"].iloc[0]
        assert (ana["labels total"], ana["items labelled"], ana["median seconds per item"], ana["retractions"]) == (
            7, 6, 90.0, 1)
        assert list(people["reviewer"]) == ["ana", "ben", "cy", "dee"]  # dee: assigned work, no label yet
        assert [tuple(people[c]) for c in ("assigned", "left")] == [(2, 0, 0, 1), (1, 0, 0, 1)]
        assert [tuple(r) for r in pairs[["reviewer", "other reviewer", "n"]].itertuples(index=False)] == [
            ("ana", "ben", 4), ("ana", "cy", 2), ("ben", "cy", 2)]
        assert [tuple(r) for r in work[["assignment", "assigned", "done", "left"]].itertuples(index=False)] == [
            ("w1", 3, 1, 2)]
        (download,) = at.get("download_button")
        assert download.proto.label == "Download the figures (CSV)"


def test_the_team_figures_are_kept_until_a_label_comes_and_an_open_changes_nothing(team_store, monkeypatch):
    """The Team page's figures are made once a minute and again when a label, undo, adjudication,
    assignment or release is appended: a new label shows at once, an item opened does not remake them."""
    from citecheck.labelling import team
    from citecheck.labelling.assignments import make_open
    from citecheck.labelling.items import Item

    made = []
    real = team.reviewers
    monkeypatch.setattr(team, "reviewers", lambda *a, **k: made.append(1) or real(*a, **k))
    at = team_page()
    runs = len(made)
    at.run()
    assert len(made) == runs or datetime.now(timezone.utc).second < 2  # kept (unless the minute turned)
    people = at.dataframe[0].value
    before = int(people[people["reviewer"] == "ben"].iloc[0]["labels total"])
    labels.append_event(team_store, make_open("a-6#s0#c0", "dee"))
    runs = len(made)
    at.run()
    people = at.dataframe[0].value
    assert int(people[people["reviewer"] == "ben"].iloc[0]["labels total"]) == before
    assert len(made) == runs or datetime.now(timezone.utc).second < 2  # an open remakes nothing
    item = Item("a-9", 0, 0, "c9", "sha256:x")
    labels.append(team_store, labels.make_label(item, "supported", "ben"))
    at.run()
    people = at.dataframe[0].value
    assert int(people[people["reviewer"] == "ben"].iloc[0]["labels total"]) == before + 1


def test_a_reviewer_is_told_the_team_page_needs_the_lead_role(team_store):
    at = team_page({"is_logged_in": True, "email": "ben@example.org", "name": "Ben"})
    assert not at.exception
    shown = "\n".join(str(h.proto.body) for h in at.get("html"))
    assert "Team page needs the lead role" in shown and "ben@example.org" in shown
    assert len(at.dataframe) == 0 and "ana" not in shown


@given(st.dictionaries(st.sampled_from([f"i{n}" for n in range(12)]),
                       st.dictionaries(st.sampled_from(["ana", "ben", "cy", "dee"]),
                                       st.sampled_from(["supported", "partial", "not_supported", "cant_tell"]),
                                       max_size=4)))
def test_pair_kappas_are_the_agreement_modules_pairs(by_item):
    from citecheck.labelling import agreement

    pairs = agreement.team_agreement(by_item).pairs
    got = team.pair_kappas(by_item)
    expected = {(p.first, p.second): (p.n, p.kappa) for p in pairs}
    assert {(p.first, p.second): (p.n, p.kappa) for ps in got.values() for p in ps if p.first < p.second} == expected
    assert all(p.first == who for who, ps in got.items() for p in ps)


def test_marking_words_is_part_of_a_labelling_not_another_label_made():
    """Each mark of unsupported words is saved as a new record with the same label and note: the
    Team page counts the labelling once (its time too); a change of label or note is a new one."""
    def record(n: int, label: str, note: str = "", spans=()) -> labels.Label:
        return labels.Label(1, "a#s0#c0", "a", 0, 0, "c", "f", label, note, "ana",
                            f"2026-12-01T10:00:{n:02d}.000Z", "", spans=spans)

    events = [record(0, "partial"), record(10, "partial", spans=((0, 4),)),
              record(20, "partial", spans=((0, 4), (6, 9))), record(30, "not_supported", spans=((0, 4),)),
              record(40, "not_supported", "the year differs", spans=((0, 4),))]
    assert [e.at[-7:-5] for e in team.labels_made(events)] == ["00", "30", "40"]
    (row,) = team.reviewers(events, datetime(2026, 12, 1, 12, tzinfo=timezone.utc))
    assert (row.total, row.items) == (3, 1)
    assert (row.seconds_per_item, row.timed) == (20.0, 2)  # the gaps 30 s (00 -> 30) and 10 s (30 -> 40): the re-marks in between are not items
