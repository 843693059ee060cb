"""Progress and the next item counted from the labels (core/citecheck/review/tally.py) agree with the walks
over every item of the log (core/citecheck/review/queue.py) they replace on the review page."""

from citecheck.labelling.items import Item
from citecheck.review import queue, tally
from hypothesis import given, settings
from hypothesis import strategies as st

REVIEWERS = ["ana", "ben", "cy"]


@st.composite
def queues(draw):
    """Answers of 0-3 items, and labels on some items by some reviewers, some stale."""
    sizes = draw(st.lists(st.integers(0, 3), min_size=1, max_size=6))
    answers = [(f"a{i}", [Item(f"a{i}", s, 0, "c", f"fp{i}-{s}") for s in range(n)]) for i, n in enumerate(sizes)]
    items = [it for _, its in answers for it in its]
    team: dict[str, dict[str, str]] = {}
    if items:
        for it, who, stale in draw(st.lists(st.tuples(st.sampled_from(items), st.sampled_from(REVIEWERS),
                                                      st.booleans()), max_size=12)):
            team.setdefault(it.key, {})[who] = "old" if stale else it.fingerprint
    flat = [(aid, n) for aid, its in answers for n in range(len(its))]
    after = draw(st.one_of(st.none(), st.sampled_from(flat) if flat else st.none(), st.just(("gone", 0))))
    return answers, team, after


@settings(max_examples=200, deadline=None)
@given(queues(), st.sampled_from(REVIEWERS), st.integers(1, 3))
def test_next_item_is_the_queue_walks_next_item(case, reviewer, overlap):
    answers, team, after = case
    ids = [aid for aid, _ in answers]
    items = dict(answers)
    got = tally.next_item(ids, tally.positions(ids), items.__getitem__, team, reviewer, overlap, after)
    assert got == queue.next_in_queue(answers, team, reviewer, overlap, after)


@settings(max_examples=200, deadline=None)
@given(queues(), st.sampled_from(REVIEWERS), st.integers(1, 3))
def test_team_progress_from_the_labels_is_the_walk_over_every_item(case, reviewer, overlap):
    answers, team, _ = case
    items = [it for _, its in answers for it in its]
    index: dict[str, tuple[str, ...]] = {}
    for it in items:
        index[it.key] = index.get(it.key, ()) + (it.fingerprint,)
    got = tally.team_progress(index, len(items), team, reviewer, overlap)
    assert got == queue.team_progress(items, team, reviewer, overlap)


def test_labels_on_items_not_in_the_log_count_for_nothing():
    index = {"a1#s0#c0": ("fp",)}
    team = {"a1#s0#c0": {"ana": "fp"}, "zz#s0#c0": {"ana": "fp"}}
    assert tally.team_progress(index, 1, team, "ana") == queue.TeamProgress(1, 1, 1, 1)
    assert tally.next_item(["a1"], {"a1": 0}, lambda _: [Item("a1", 0, 0, "c", "fp")], team, "ana") is None


def test_the_unlabelled_filter_from_the_labels_is_the_walk_over_every_answer():
    """'Not yet labelled by me' is found from the reviewer's labels (queue.answer_ids); it equals
    the walk that checks every answer, for whole, partly labelled, stale and empty answers."""
    from citecheck.labelling import dataset, labels
    from citecheck.web.settings import DEFAULT_LOG

    data = dataset.load([DEFAULT_LOG])
    records = []
    for k, items in enumerate(data.items_by_answer):
        for n, it in enumerate(items):
            if k % 3 == 0 or (k % 3 == 1 and n == 0):  # whole answers, and answers begun
                records.append(labels.make_label(it, it.labels[0], "ana"))
            if k % 7 == 0 and n == 0:  # a stale label: the item changed since
                records.append(labels.make_label(Item(it.answer_id, it.sentence, it.citation, it.chunk_id, "old"),
                                            it.labels[0], "ana"))
    current = labels.latest(records)
    assert any(not items for items in data.items_by_answer)  # the sample log has answers without items
    for who in ("ana", "ben"):
        got = queue.answer_ids(data, "Not yet labelled by me", current, who)
        assert got == queue._matching(data, "unlabelled", current, who)
    assert len(queue.answer_ids(data, "Not yet labelled by me", current, "ana")) < len(data)
