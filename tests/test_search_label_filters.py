"""The label filters of a store search (``storage.checked.search_index``) against a plain loop
over every item of the log in memory, with many labels: "nobody's label yet" (and "not labelled
by R") is counted as every item less the few a label names, and the items a set of labels names
are kept placed and brought up to date label by label (``StoreSearch._placed``).  Fed a generated
log (ids holding ``#``, an id logged twice, uncited sentences, failed citations) and label sets
drawn by Hypothesis (most items labelled or few; keys that name no item: a missing sentence, a
sentence written ``07``, a key holding a lone surrogate, no key at all), the store, the log in
memory (``review.search.search_dataset``) and the loop must give the same answers in the same
order, the same items of each and the same counts, search after search on one searcher."""

from __future__ import annotations

import io
import json
import random

import pytest
from citecheck.checking.files import check_options
from citecheck.cli.main import main
from citecheck.contract.log import checksum
from citecheck.labelling import dataset
from citecheck.labelling.labels import Label
from citecheck.review import search as searching
from citecheck.storage.checked import answers, search_index
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

REVIEWERS = ("ana", "ben", "cy")
WORDS = "leave days travel refund hotel invoice policy limit manager".split()


def generated(n: int, seed: int = 34) -> list[dict]:
    """``n`` answers of one to four sentences, each cited (its quote found, or not) or uncited."""
    rng = random.Random(seed)
    chunks = [" ".join(rng.choice(WORDS) for _ in range(12)) + "." for _ in range(8)]
    out = []
    for i in range(n):
        got = rng.sample(chunks, 3)
        parts, citations, pos = [], [], 0
        for _ in range(rng.randint(1, 4)):
            text = f"It says {rng.choice(WORDS)} {rng.choice(WORDS)}"
            if rng.random() < 0.8:
                m = rng.randrange(3)
                quote = got[m][:20] if rng.random() < 0.8 else "nowhere in the chunk"
                citations.append({"kind": "marker", "marker": m + 1, "at": pos + len(text) + 1, "quote": quote})
                text += f" [{m + 1}]"
            parts.append(text + ".")
            pos += len(text) + 2
        aid = f"a#{i}" if i % 7 == 0 else f"a-{i}"
        out.append({"log_version": 1, "answer_id": aid, "model": "m1", "prompt_version": "p1",
                    "question": f"What about {rng.choice(WORDS)}?", "refused": False,
                    "chunks": [{"chunk_id": f"c{n}", "document_id": "d", "source": "d.md", "text": t, "start": 0,
                                "end": len(t), "checksum": checksum(t)} for n, t in enumerate(got)],
                    "answer": " ".join(parts), "citations": citations})
    out.append({**out[3], "answer": "It says nothing else."})  # (an id logged twice: its first line counts)
    return out


class Both(tuple):
    def __new__(cls, *pair):
        return super().__new__(cls, pair)

    def __repr__(self) -> str:
        return "<a generated log in memory and in a store>"


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    folder = tmp_path_factory.mktemp("labels")
    log = folder / "log.jsonl"
    log.write_text("".join(json.dumps(a) + "\n" for a in generated(150)), encoding="utf-8")
    assert main(["check", str(log), "--store", str(folder / "store")], io.StringIO(), io.StringIO()) in (0, 1)
    return Both(dataset.load([log], check_options(None)), answers.StoreAnswers(folder / "store"))


def searcher(store: answers.StoreAnswers) -> search_index.StoreSearch:
    """A searcher of its own: the sets of labels it keeps placed start empty."""
    return search_index.StoreSearch(store)


def label(key: str, who: str, choice: str = "supported") -> Label:
    return Label(2, key, key.rsplit("#", 2)[0], 0, 0, None, "", choice, "", who, "", "")


def reference(data: dataset.Dataset, search: searching.Search, labels: dict) -> tuple[list[str], dict]:
    """The label filter (and status), item by item over the whole log: the plain computation."""
    by = {(k, who) for k, who in labels}
    out, items = [], {}
    for i, answer in enumerate(data.answers):
        aid = answer.answer_id
        if data.index.get(aid) != i:
            continue
        keep = []
        for item in data.items(aid):
            if search.status and searching.status(data.result(i), item) != search.status:
                continue
            named = [who for who in REVIEWERS if (item.key, who) in by and (not search.reviewer or who == search.reviewer)]
            if not search.label and not search.reviewer:
                ok = True
            elif search.label == searching.NO_LABEL:
                ok = not named
            else:
                ok = any(labels[(item.key, who)].label == search.label for who in named) if search.label else bool(named)
            if ok:
                keep.append(item.key)
        if keep:
            out.append(aid)
            items[aid] = tuple(keep)
    return out, items


def same(found: searching.Found, expected: tuple[list[str], dict], memory: searching.Found) -> None:
    ids, items = expected
    assert list(found.answers) == ids == list(memory.answers)
    assert found.answer_count == len(ids) and found.item_count == sum(len(v) for v in items.values())
    assert (memory.answer_count, memory.item_count) == (found.answer_count, found.item_count)
    assert {a: found.items[a] for a in ids} == items == {a: memory.items[a] for a in ids}


def keys_of(data: dataset.Dataset) -> list[str]:
    return [item.key for aid in dict.fromkeys(data.answer_ids) for item in data.items(aid)]


NOT_ITEMS = ["a-5#s9#c0", "a-5#s07#c0", "a-5#s0#c00", "a#7#s0", "a-5", "", "a-\ud800#s0#c0", "#s0#c0",
             "a-1#s0#uncited#s0#c0", "a-2#s0#c-1"]


@hs.composite
def label_sets(draw, data):
    """Label sets, one after another, each a few labels away from the last (as a review goes on),
    sometimes one drawn afresh."""
    keys = keys_of(data)
    share = draw(hs.sampled_from([0.02, 0.3, 0.9, 1.0]))
    rng = random.Random(draw(hs.integers(0, 2**32)))
    current = {(k, rng.choice(REVIEWERS)): None for k in keys if rng.random() < share}
    current.update({(k, "ana"): None for k in draw(hs.lists(hs.sampled_from(NOT_ITEMS), max_size=4))})
    out = []
    for _ in range(draw(hs.integers(1, 4))):
        steps = draw(hs.lists(hs.tuples(hs.sampled_from(keys), hs.sampled_from(REVIEWERS), hs.booleans()), max_size=5))
        for k, who, drop in steps:
            if drop:
                current = {x: None for x in current if x[0] != k}
            else:
                current[(k, who)] = None
        if draw(hs.booleans()) and draw(hs.booleans()):
            current = {(k, rng.choice(REVIEWERS)): None for k in keys if rng.random() < share}
        out.append({x: label(x[0], x[1], ("supported", "partial")[len(x[0]) % 2]) for x in current})
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(hs.data())
def test_the_label_filters_match_a_loop_over_every_item(both, draw):
    data, store = both
    found_by = searcher(store)
    for labels in draw.draw(label_sets(data)):
        search = searching.Search(label=draw.draw(hs.sampled_from([searching.NO_LABEL, searching.NO_LABEL, "partial", ""])),
                                  reviewer=draw.draw(hs.sampled_from(["", "", "ben"])),
                                  status=draw.draw(hs.sampled_from(["", "failed", "uncited", "verified"])))
        if not search.item_filtered:
            search = searching.Search(label=searching.NO_LABEL)
        facts = searching.Facts(labels=labels)
        same(found_by.search(search, facts), reference(data, search, labels),
             searching.search_dataset(data, search, facts))


def test_nobody_s_label_yet_with_every_item_labelled_but_one(both):
    data, store = both
    keys = keys_of(data)
    found_by = searcher(store)
    for left in (keys[5], keys[-1], None):
        labels = {(k, "ana"): label(k, "ana") for k in keys if k != left}
        search = searching.Search(label=searching.NO_LABEL)
        found = found_by.search(search, searching.Facts(labels=labels))
        same(found, reference(data, search, labels), searching.search_dataset(data, search, searching.Facts(labels=labels)))
        assert found.item_count == (0 if left is None else 1)


def test_rules_with_answer_threads_and_labels_together(both):
    """A thread on a whole answer names each of its items; "no comments" is then a negated rule of
    answers beside "nobody's label yet", and both count items less the ones named."""
    data, store = both
    keys = keys_of(data)
    labels = {(k, "ben"): label(k, "ben") for k in keys[::3]}
    ids = list(dict.fromkeys(data.answer_ids))
    facts = searching.Facts(labels=labels, threads={**{a: "open" for a in ids[::5]}, **{k: "resolved" for k in keys[1::4]}})
    found_by = searcher(store)
    for search in (searching.Search(label=searching.NO_LABEL, comments="none"),
                   searching.Search(label=searching.NO_LABEL, comments="open"),
                   searching.Search(label=searching.NO_LABEL, comments="resolved", status="verified")):
        memory = searching.search_dataset(data, search, facts)
        found = found_by.search(search, facts)
        assert list(found.answers) == list(memory.answers)
        assert (found.answer_count, found.item_count) == (memory.answer_count, memory.item_count) != (0, 0)
        assert {a: found.items[a] for a in memory.answers} == dict(memory.items)


def test_the_generated_log_holds_what_the_comparison_needs(both):
    data, _ = both
    ids = data.answer_ids
    assert len(ids) > len(set(ids)) and any("#" in a for a in ids)
    statuses = {searching.status(data.result(data.index[a]), item) for a in set(ids) for item in data.items(a)}
    assert {"verified", "failed", "uncited"} <= statuses
