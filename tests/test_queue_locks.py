"""The queue with assignments and locks (core/citecheck/review/holds.py and the ``claimed`` counts of
review/queue.py, review/tally.py): assigned items first, an opened item held for its reviewer,
a timed-out assigned item back in the pool, releases idempotent, and, simulated over random teams
with a fake clock, no item served to two reviewers inside its lock unless overlap asks for it and
no item starved."""

from datetime import datetime, timedelta, timezone

from citecheck.labelling import labels
from citecheck.labelling.assignments import Assignment, Open, Release, make_assignment, make_release
from citecheck.labelling.items import Item
from citecheck.review import holds, queue, tally
from hypothesis import given, settings
from hypothesis import strategies as st

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=timezone.utc)
REVIEWERS = ["ana", "ben", "cy", "dee"]


def stamp(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def answers_of(sizes) -> list[tuple[str, list[Item]]]:
    return [(f"a{i}", [Item(f"a{i}", s, 0, "c", f"fp{i}-{s}") for s in range(n)]) for i, n in enumerate(sizes)]


def label(item: Item, who: str, t: datetime) -> labels.Label:
    return labels.make_label(item, "supported", who, at=stamp(t))


def opened(item: Item, who: str, t: datetime) -> Open:
    return Open(item.key, who, stamp(t))


def team_of(events) -> dict[str, dict[str, str]]:
    return queue.labellers(labels.latest(labels.effective(e for e in events if isinstance(e, labels.Label))))


def serve(events, answers, who, now, overlap=1, lock=30):
    """The review page's next item for ``who``: holds.next_place over the queue walk."""
    work = holds.Work.of(events)
    team = team_of(events)
    items = dict(answers)
    return holds.next_place(work, who, team, lambda a: items.get(a, []), now,
                            lambda claimed: queue.next_in_queue(answers, team, who, overlap, None, claimed), overlap, lock)


A = answers_of([2, 1, 2])
(X0, X1), (Y0,), (Z0, Z1) = (items for _, items in A)


def test_assigned_items_come_first_in_assignment_order():
    made = make_assignment([Z1.key, Y0.key], [("ana", 1)], "lee", "answers", at=stamp(T0))
    assert serve([made], A, "ana", T0) == ("a2", 1)
    assert serve([made, label(Z1, "ana", T0)], A, "ana", T0) == ("a1", 0)
    done = [made, label(Z1, "ana", T0), label(Y0, "ana", T0)]
    assert serve(done, A, "ana", T0) == ("a0", 0)  # then the ordinary queue
    assert line(done, "ana") == "All 2 items assigned to you are labelled."
    assert line(done[:2], "ana") == "1 of 2 assigned to you left"
    assert line(done, "ben") == ""


def line(events, who, overlap=1, now=T0):
    """The review page's line on ``who``'s assigned work."""
    items = dict(A)
    return holds.progress_text(holds.Work.of(events), who, team_of(events), lambda a: items.get(a, []), now, overlap)


def test_the_assigned_line_counts_what_the_queue_will_serve():
    """Items assigned to ana that others have already labelled up to the overlap are not served to
    her (the queue never doubles up); the line said they were left for her.  It now says how many
    the queue will serve, and how many others' labels cover, whatever the overlap."""
    made = make_assignment([X0.key, X1.key, Y0.key], [("ana", 1)], "lee", "answers", at=stamp(T0))
    events = [made, label(X0, "ben", T0), label(X1, "ben", T0)]
    assert serve(events, A, "ana", T0) == ("a1", 0)  # (Y0: the only one served)
    assert line(events, "ana") == ("1 of 3 assigned to you left (2 more of them already have enough labels "
                                   "from others, so your queue skips them)")
    assert serve(events, A, "ana", T0, overlap=2) == ("a0", 0)  # (a second label is wanted: all three served)
    assert line(events, "ana", overlap=2) == "3 of 3 assigned to you left"
    events.append(label(Y0, "ana", T0))
    assert serve(events, A, "ana", T0) == ("a2", 0)  # (then the ordinary queue: Z0, which nobody labelled)
    assert line(events, "ana") == ("None of the 3 items assigned to you is left for you (2 more of them already "
                                   "have enough labels from others, so your queue skips them).")


def test_items_assigned_to_others_stay_out_of_the_pool_unless_overlap_needs_them():
    made = make_assignment([X0.key, X1.key], [("ana", 1)], "lee", "answers", at=stamp(T0))
    assert serve([made], A, "ben", T0) == ("a1", 0)
    assert serve([made], A, "ben", T0, overlap=2) == ("a0", 0)  # a second label is wanted: ana's claim is one


def test_an_opened_item_is_held_for_its_reviewer_until_the_lock_times_out():
    events = [opened(X0, "ana", T0)]
    assert serve(events, A, "ben", T0 + timedelta(minutes=29)) == ("a0", 1)
    assert serve(events, A, "ben", T0 + timedelta(minutes=30)) == ("a0", 0)  # the lock ran out
    assert serve(events, A, "ben", T0 + timedelta(minutes=5), lock=3) == ("a0", 0)
    assert serve(events, A, "ben", T0, overlap=2) == ("a0", 0)  # overlap wants a second reviewer on it
    assert serve(events, A, "ana", T0) == ("a0", 0)  # its own reviewer is served it
    # labelled, the hold ends; with overlap 1 the item is done anyway
    assert serve([*events, label(X0, "ana", T0 + timedelta(minutes=1))], A, "ben", T0, overlap=2) == ("a0", 0)


def test_an_assignment_lock_overrides_the_server_lock():
    made = make_assignment([X0.key], [("ana", 1)], "lee", "answers", lock_minutes=5, at=stamp(T0))
    work = holds.Work.of([made, opened(X0, "ana", T0 + timedelta(seconds=1))])
    assert work.holders(X0.key, T0 + timedelta(minutes=4)) == {"ana"}
    assert work.holders(X0.key, T0 + timedelta(minutes=6)) == set()
    assert work.timeouts(T0 + timedelta(minutes=6)) == [(made.assignment, X0.key, "ana")]


def test_a_timed_out_assigned_item_is_released_once_whoever_notices(tmp_path):
    target = tmp_path / "labels.jsonl"
    made = make_assignment([X0.key, X1.key], [("ana", 1)], "lee", "answers", at=stamp(T0))
    labels.append_event(target, made)
    labels.append_event(target, opened(X0, "ana", T0 + timedelta(seconds=1)))
    events, _ = labels.read_events(target)
    early = holds.for_run(target, events, labels.latest(labels.effective(events)), "ben", T0 + timedelta(minutes=10))
    assert labels.read_events(target)[0] == events  # nothing timed out yet: nothing written
    assert early.holders(X0.key, T0 + timedelta(minutes=10)) == {"ana"}
    late = T0 + timedelta(minutes=31)
    work = holds.Work.of(events)
    first = holds.notice_timeouts(target, work, late, "ben")
    second = holds.notice_timeouts(target, work, late, "cy")  # a second session noticing at the same time
    assert [(r.assignment, r.item, r.reviewer, r.reason) for r in first + second] == [
        (made.assignment, X0.key, "ana", "lock-timeout")] * 2
    events, warnings = labels.read_events(target)
    assert warnings == [] and [type(e) for e in events[-2:]] == [Release, Release]
    after = holds.Work.of(events)
    assert after.assigned["ana"] == ((X1.key, made.assignment),)  # back in the pool, once
    assert after.timeouts(late + timedelta(hours=1)) == []
    assert serve(events, A, "ben", late) == ("a0", 0)
    assert holds.progress_text(after, "ana", {}, lambda a: dict(A).get(a, []), T0) == "1 of 1 assigned to you left"


def test_a_lead_release_ends_the_hold_and_the_assignment(tmp_path):
    target = tmp_path / "labels.jsonl"
    made = make_assignment([X0.key, X1.key], [("ana", 1)], "lee", "answers", at=stamp(T0))
    events = [made, opened(X0, "ana", T0 + timedelta(seconds=1))]
    for e in events:
        labels.append_event(target, e)
    work = holds.Work.of(events)
    assert holds.unlabelled_of(work, made.assignment, "ana") == [X0.key, X1.key]
    released = holds.release_all(target, work, made.assignment, "ana", "lee")
    assert {(r.item, r.reason, r.by) for r in released} == {(X0.key, "lead", "lee"), (X1.key, "lead", "lee")}
    after = holds.Work.of(labels.read_events(target)[0])
    assert after.assigned.get("ana", ()) == () and after.holders(X0.key, T0 + timedelta(minutes=1)) == set()
    row = holds.assignment_rows(after)[0]
    assert (row["given"], row["released"], row["left"]) == (2, 2, 0)


def test_open_item_writes_once_per_hold_and_not_for_a_labelled_item(tmp_path):
    target = tmp_path / "labels.jsonl"
    work = holds.Work.of([])
    assert holds.open_item(target, work, X0.key, "ana", T0) is not None
    work = holds.Work.of(labels.read_events(target)[0])
    now = datetime.now(timezone.utc)
    assert holds.open_item(target, work, X0.key, "ana", now) is None  # held already
    assert holds.open_item(target, work, X0.key, "", now) is None  # nobody to hold it for
    labels.append(target, label(X0, "ana", now))
    work = holds.Work.of(labels.read_events(target)[0])
    assert holds.open_item(target, work, X0.key, "ana", now) is None  # labelled
    assert holds.open_item(target, work, X0.key, "ben", now) is None  # done: overlap 1 wants no more
    assert holds.open_item(target, work, X0.key, "ben", now, overlap=2) is not None
    assert [type(e).__name__ for e in labels.read_events(target)[0]] == ["Open", "Label", "Open"]


# --- the queue walks agree with claims -----------------------------------------------------------------


@st.composite
def queues(draw):
    sizes = draw(st.lists(st.integers(0, 3), min_size=1, max_size=6))
    answers = answers_of(sizes)
    items = [it for _, its in answers for it in its]
    team: dict[str, dict[str, str]] = {}
    claimed: dict[str, int] = {}
    if items:
        for it, who, stale in draw(st.lists(st.tuples(st.sampled_from(items), st.sampled_from(REVIEWERS),
                                                      st.booleans()), max_size=12)):
            team.setdefault(it.key, {})[who] = "old" if stale else it.fingerprint
        for it, n in draw(st.lists(st.tuples(st.sampled_from(items), st.integers(1, 2)), max_size=6)):
            claimed[it.key] = n
    flat = [(aid, n) for aid, its in answers for n in range(len(its))]
    after = draw(st.one_of(st.none(), st.sampled_from(flat) if flat else st.none(), st.just(("gone", 0))))
    return answers, team, after, claimed


@settings(max_examples=300, deadline=None)
@given(queues(), st.sampled_from(REVIEWERS), st.integers(1, 3))
def test_the_indexed_queue_counts_claims_as_the_walk_does(case, reviewer, overlap):
    answers, team, after, claimed = case
    ids = [aid for aid, _ in answers]
    items = dict(answers)
    got = tally.next_item(ids, tally.positions(ids), items.__getitem__, team, reviewer, overlap, after, claimed)
    want = queue.next_in_queue(answers, team, reviewer, overlap, after, claimed)
    assert got == want
    if want is not None:
        item = items[want[0]][want[1]]
        assert queue.count(item, team) + claimed.get(item.key, 0) < overlap


# --- a simulated team ---------------------------------------------------------------------------------


def holding(events, key: str, now: datetime, lock: int) -> set[str]:
    """Who holds ``key`` at ``now``, worked out from the raw events (not through holds.Work): a
    reviewer's last open, not followed by their label or a release, within its lock (the
    largest of the assignments still giving them the item, else the server's)."""
    released = {(e.assignment, e.item, e.reviewer) for e in events if isinstance(e, Release)}
    out = set()
    for who in REVIEWERS:
        opens = [e.at for e in events if isinstance(e, Open) and e.item == key and e.reviewer == who]
        if not opens:
            continue
        last = max(opens)
        ended = any(isinstance(e, labels.Label) and e.item == key and e.reviewer == who and e.at >= last
                    for e in events) or any(isinstance(e, Release) and e.item == key and e.reviewer == who
                                            and e.at >= last for e in events)
        locks = [e.lock_minutes for e in events if isinstance(e, Assignment) and e.lock_minutes
                 for w, ks in e.items if w == who and key in ks and (e.assignment, key, who) not in released]
        minutes = max(locks) if locks else lock
        until = datetime.fromisoformat(last.replace("Z", "+00:00")) + timedelta(minutes=minutes)
        if not ended and now < until:
            out.add(who)
    return out


@st.composite
def teams(draw):
    sizes = draw(st.lists(st.integers(1, 3), min_size=1, max_size=5))
    answers = answers_of(sizes)
    keys = [it.key for _, its in answers for it in its]
    people = REVIEWERS[:draw(st.integers(1, 4))]
    overlap = draw(st.integers(1, len(people)))
    made = []
    for n in range(draw(st.integers(0, 3))):
        chosen = draw(st.lists(st.sampled_from(keys), unique=True, max_size=len(keys)))
        who = draw(st.lists(st.sampled_from(people), unique=True, min_size=1))
        if chosen:
            made.append(make_assignment(chosen, [(w, draw(st.integers(1, 3))) for w in who], "lee", "answers",
                                        lock_minutes=draw(st.one_of(st.none(), st.integers(1, 40))),
                                        at=stamp(T0 + timedelta(milliseconds=n)), assignment_id=f"as-{n}"))
    steps = draw(st.lists(st.tuples(st.sampled_from(people), st.sampled_from(["label", "leave", "idle"]),
                                    st.integers(0, 50), st.booleans()), max_size=25))
    return answers, people, overlap, made, steps, draw(st.integers(1, 30))


@settings(max_examples=150, deadline=None)
@given(teams())
def test_a_team_never_doubles_up_inside_a_lock_and_never_starves_an_item(team):
    answers, people, overlap, made, steps, lock = team
    items = {it.key: it for _, its in answers for it in its}
    clock = [T0 + timedelta(seconds=1)]
    events: list = list(made)

    def tick(minutes: float = 0.0) -> datetime:
        clock[0] += timedelta(minutes=minutes, milliseconds=1)
        return clock[0]

    def turn(who: str, action: str, twice: bool) -> bool:
        now = tick()
        work = holds.Work.of(events)
        for aid, key, owner in work.timeouts(now, lock):  # the sessions that notice (sometimes two at once)
            events.extend([make_release(aid, key, owner, who, "lock-timeout", stamp(now))] * (2 if twice else 1))
        place = serve(events, answers, who, now, overlap, lock)
        if place is None:
            return False
        item = dict(answers)[place[0]][place[1]]
        others = holding(events, item.key, now, lock) - {who}
        labelled = queue.count(item, team_of(events))
        # the property: never served while other reviewers' holds and labels already make up the overlap
        assert labelled + len(others) < overlap, (item.key, who, others, labelled)
        if who not in holds.Work.of(events).holders(item.key, now, lock):
            events.append(opened(item, who, now))
        if action == "label":
            events.append(label(item, who, tick(0.1)))
        return True

    for who, action, minutes, twice in steps:  # reviewers come and go; some leave an item open
        if action != "idle":
            turn(who, action, twice)
        tick(minutes)
    for _ in range(len(items) * len(people) * 3 + 3):  # then everyone works their queue to the end
        if not any([turn(who, "label", False) for who in people]):
            tick(lock + 41)  # every lock runs out
            if not any([turn(who, "label", False) for who in people]):
                break
    team_now = team_of(events)
    for key, item in items.items():
        assert queue.count(item, team_now) >= overlap, (key, team_now.get(key))


def test_looking_at_someone_elses_item_does_not_take_it_and_no_assignment_writes_nothing(tmp_path):
    target = tmp_path / "labels.jsonl"
    made = make_assignment([X0.key], [("ana", 1)], "lee", "answers", at=stamp(T0))
    work = holds.Work.of([made])
    assert holds.open_item(target, work, X0.key, "ben", T0) is None  # ana's: ben only looks at it
    assert holds.open_item(target, work, X0.key, "ben", T0, overlap=2) is not None  # a second label is wanted
    assert holds.served(target, holds.Work.of([]), Y0.key, "ben", T0) is None  # no assignment: as before
    assert holds.served(target, work, Y0.key, "ben", T0) is not None
    assert [(e.item, e.reviewer) for e in labels.read_events(target)[0]] == [(X0.key, "ben"), (Y0.key, "ben")]


@settings(max_examples=100, deadline=None)
@given(teams(), st.lists(st.integers(0, 40), max_size=4), st.booleans())
def test_a_kept_scan_reads_as_a_fresh_one_as_the_store_grows(team, cuts, other_store):
    answers, people, _, made, steps, _ = team
    items = [it for _, its in answers for it in its]
    events: list = list(made)
    t = T0
    for n, (who, action, minutes, _) in enumerate(steps):
        t += timedelta(minutes=minutes, milliseconds=1)
        item = items[n % len(items)]
        events.append(opened(item, who, t) if action != "label" else label(item, who, t))
        if action == "idle":
            events.append(make_release("", item.key, who, "lee", "lead", stamp(t)))
    scan = holds.Scan()
    for cut in sorted(cuts) + [len(events)]:
        part = events[:cut]
        assert holds.Work.of(part, scan=scan) == holds.Work.of(part)
    if other_store:  # a store that does not start with the events seen: scanned from the start
        other = events[1:]
        assert holds.Work.of(other, scan=scan) == holds.Work.of(other)


@settings(max_examples=100, deadline=None)
@given(teams(), st.data())
def test_the_assigned_line_counts_exactly_the_items_the_queue_would_serve(team, data):
    """``progress_text`` skips the item lookup where no label or hold can cover an item: the count
    is still ``servable``'s, item by item, for any assignments, labels and overlap."""
    answers, people, overlap, made, _, lock = team
    items = [it for _, its in answers for it in its]
    given_labels = data.draw(st.lists(st.tuples(st.sampled_from(people), st.sampled_from(items)), max_size=10))
    events = [*made, *(label(it, who, T0) for who, it in given_labels)]
    work, team_now, lookup = holds.Work.of(events), team_of(events), dict(answers)
    for who in people:
        mine = work.assigned.get(who, ())
        exact = sum(holds.servable(work, key, who, team_now, lambda a: lookup.get(a, []), T0, overlap, lock) is not None
                    for key, _ in mine if (key, who) not in work.labelled)
        text = holds.progress_text(work, who, team_now, lambda a: lookup.get(a, []), T0, overlap, lock)
        if not mine:
            assert text == ""
        elif exact:
            assert text.startswith(f"{exact} of {len(mine)} assigned to you left")
        else:
            assert text.startswith(("All ", "None of "))
