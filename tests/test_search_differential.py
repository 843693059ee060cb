"""Two paths that search one queue: the logs in memory (``review.search.search_dataset``) and the
same logs checked into a store, searched in SQL over its index
(``storage.checked.search_index.search_store``).  Fed the sample log and fuzzed logs (malformed
lines, ids logged twice and across logs, lone surrogates, BOMs, CR line ends), with fuzzed
searches and facts, both must give the same answers in the same order, the same items of each
and the same counts.  The index is made again when its log is checked again, and is left alone
by a store without it until a search asks."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from citecheck.checking.files import check_options
from citecheck.cli.main import main
from citecheck.contract import reasons
from citecheck.labelling import dataset, labels
from citecheck.review import search as searching
from citecheck.storage.checked import answers, search_index
from citecheck.storage.checked.folder import Store
from fuzzlogs import SAMPLE, sample
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "sample_data" / "corpus"


FILE_LEVEL = {"bom", "crlf", "cr", "blank", "no-final-newline", "empty", "json"}


def fuzzed_logs(folder: Path) -> list[Path]:
    """The sample log; one log of a sample of the fuzz corpus's line cases one after another (each
    a good line, a bad one, a good one: the same ids again and again); then each file-level case
    (a BOM, CR or CRLF line ends, blank lines, no final newline, an empty file, a JSON array) as its
    own log.  The very large and the deeply nested cases are left out (they test the reader, not
    the search)."""
    shutil.copy(SAMPLE, folder / "answers.jsonl")
    out = [folder / "answers.jsonl"]
    lines = bytearray()
    for n, case in enumerate(sample(every=10)):
        if case.kind != "file" or len(case.data) > 1_000_000 or case.family in ("deep-nesting", "pathological"):
            continue
        if case.family in FILE_LEVEL:
            out.append(folder / f"file-{n:03d}.jsonl")
            out[-1].write_bytes(case.data)
        else:
            lines += case.data if case.data.endswith(b"\n") else case.data + b"\n"
    (folder / "lines.jsonl").write_bytes(bytes(lines))
    return [*out[:1], folder / "lines.jsonl", *out[1:]]


class Both(tuple):
    def __new__(cls, *pair):
        return super().__new__(cls, pair)

    def __repr__(self) -> str:  # (Hypothesis prints the arguments of a failing example)
        return "<the fuzzed logs in memory and in a store>"


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    folder = tmp_path_factory.mktemp("search")
    logs = fuzzed_logs(folder)
    assert main(["check", *map(str, logs), "--corpus", str(CORPUS), "--store", str(folder / "store")],
                io.StringIO(), io.StringIO()) in (0, 1, 4)
    return Both(dataset.load(logs, check_options(CORPUS)), answers.StoreAnswers(folder / "store"))


def same(a: searching.Found, b: searching.Found) -> None:
    assert list(a.answers) == list(b.answers)
    assert (a.answer_count, a.item_count, a.dropped) == (b.answer_count, b.item_count, b.dropped)
    assert {k: a.items[k] for k in a.answers} == {k: b.items[k] for k in b.answers}


def test_the_fuzzed_logs_hold_what_the_comparison_needs(both):
    data, store = both
    ids = data.answer_ids
    assert len(ids) > len(set(ids)) > 40  # ids logged twice, within and across logs
    assert len(store.query.sources) > 5
    everything = search_index.search_store(store, searching.Search())
    same(searching.search_dataset(data, searching.Search()), everything)
    assert everything.answer_count == len(set(ids))


@pytest.mark.parametrize("search", [
    searching.Search(text="leave"), searching.Search(text='"casual leave"'), searching.Search(text="LEAVE days 8"),
    searching.Search(status="failed"), searching.Search(status="uncited"), searching.Search(status="not_verifiable"),
    searching.Search(model=searching.NONE), searching.Search(text="policy", prompt_version="answer.v1"),
    searching.Search(reason="quote_not_found"), searching.Search(text="'; DROP TABLE nav; --"), searching.Search(text="%_\\"),
    searching.Search(text="\ud83d casual"), searching.Search(text="leave " * 10_000),
])
def test_both_paths_agree_on_typical_searches(both, search):
    data, store = both
    same(searching.search_dataset(data, search), search_index.search_store(store, search))


WORDS = hs.sampled_from(["leave", "casual", "days", "policy", "8", "per", "year", "the", "travel", "refund",
                         "hotel", "zzz", "LEAVE", "Casual", "'", "%"])


@hs.composite
def searches(draw, data):
    words = draw(hs.lists(WORDS, max_size=3))
    text = " ".join(f'"{w} {v}"' if draw(hs.booleans()) else w for w, v in zip(words, words[1:] + ["days"]))
    models = sorted({a.model or searching.NONE for a in data.answers})
    prompts = sorted({a.prompt_version or searching.NONE for a in data.answers})
    return searching.Search(
        text=text, model=draw(hs.sampled_from(["", *models])), prompt_version=draw(hs.sampled_from(["", *prompts])),
        reason=draw(hs.sampled_from(["", *reasons.ALL_REASONS])), status=draw(hs.sampled_from(["", *searching.STATUSES])),
        judge=draw(hs.sampled_from(["", "claude/v1"])), verdict=draw(hs.sampled_from(["", "supported", "partial"])),
        label=draw(hs.sampled_from(["", "supported", "not_supported", "needs_citation", searching.NO_LABEL])),
        reviewer=draw(hs.sampled_from(["", "ana", "ben"])), assigned_to=draw(hs.sampled_from(["", "ana"])),
        assignment=draw(hs.sampled_from(["", "as-1"])), comments=draw(hs.sampled_from(["", *searching.COMMENT_STATES])),
        unstable=draw(hs.booleans()))


@hs.composite
def facts(draw, data):
    pool = [i for a in dict.fromkeys(data.answer_ids) for i in data.items(a)]
    chosen = draw(hs.lists(hs.sampled_from(pool), max_size=20))
    made = [labels.make_label(i, draw(hs.sampled_from(i.labels)), draw(hs.sampled_from(["ana", "ben"])),
                              draw(hs.sampled_from(["", "Casual leave is wrong", "per policy", "\ud83d odd"])))
            for i in chosen]
    keys = [i.key for i in chosen]
    answer_ids = [i.answer_id for i in chosen]
    return searching.Facts(
        labels=labels.latest(made),
        verdicts={"claude/v1": {k: draw(hs.sampled_from(["supported", "partial"])) for k in keys[::2]}},
        assigned={k: {"ana"} for k in keys[1::2]}, assignment_of={k: "as-1" for k in keys[::3]},
        threads={**{k: "open" for k in keys[::4]}, **{a: "resolved" for a in answer_ids[1::4]}},
        unstable=frozenset(keys[::5]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(hs.data())
def test_both_paths_agree_on_fuzzed_searches(both, draw):
    data, store = both
    search, known = draw.draw(searches(data)), draw.draw(facts(data))
    same(searching.search_dataset(data, search, known), search_index.search_store(store, search, known))


def test_the_index_is_made_again_when_its_log_is_checked_again(tmp_path):
    log = tmp_path / "a.jsonl"
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join(lines[:5]), encoding="utf-8")
    folder = tmp_path / "store"
    assert main(["check", str(log), "--store", str(folder)], io.StringIO(), io.StringIO()) in (0, 1)
    assert search_index.ensure(Store(folder)) == [Store(folder).logs[0]["source"]]
    assert search_index.ensure(Store(folder)) == []  # (current: nothing made again)
    added = json.loads(lines[6])
    added.update(answer_id="new-one", question="What about the quokka allowance?")
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps(added) + "\n")
    assert main(["check", str(log), "--store", str(folder)], io.StringIO(), io.StringIO()) in (0, 1)
    found = search_index.search_store(answers.StoreAnswers(folder), searching.Search(text="quokka"))
    assert list(found.answers) == ["new-one"]
    assert (folder / search_index.FOLDER / f"log-{Store(folder).logs[0]['source']}" / search_index.STAMP).is_file()


def test_an_index_of_a_log_no_longer_in_the_store_is_removed(tmp_path):
    log = tmp_path / "a.jsonl"
    shutil.copy(SAMPLE, log)
    folder = tmp_path / "store"
    assert main(["check", str(log), "--store", str(folder)], io.StringIO(), io.StringIO()) in (0, 1)
    stale = folder / search_index.FOLDER / "log-00000000deadbeef"
    stale.mkdir(parents=True)
    search_index.ensure(Store(folder))
    assert not stale.exists()
    assert Store(folder).unlisted() == []  # (the index is no part of the store's tables)
