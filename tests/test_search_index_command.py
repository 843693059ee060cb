"""Building a checked store's search index ahead of the review page: ``citecheck store index DIR``
and ``citecheck check LOG --store DIR --search-index``.  The index the command builds gives the
searches the index a page's first search builds gives (fed the fuzzed logs of
test_search_differential.py); an index that is up to date is not built again, one made stale by
checking its log again is; the word tables made in SQL list what the search's own word rule
finds; and the review page, on a store whose index is missing and too large to build in place,
says which command builds it instead of blocking."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from citecheck.checking.files import check_options
from citecheck.cli.main import main
from citecheck.labelling import dataset
from citecheck.review import search as searching
from citecheck.storage.checked import answers, search_index
from citecheck.storage.checked.folder import Store
from fuzzlogs import SAMPLE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from test_search_differential import CORPUS, facts, fuzzed_logs, same, searches

ROOT = Path(__file__).resolve().parent.parent


def run(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _stamps(folder: Path) -> dict[str, int]:
    """Each log's index stamp file and when it was written (ns)."""
    return {p.parent.name: p.stat().st_mtime_ns for p in (folder / search_index.FOLDER).glob("log-*/stamp.json")}


class Three(tuple):
    def __repr__(self) -> str:
        return "<the fuzzed logs in memory, in a store indexed by the command, and by a page's search>"


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """The fuzzed logs in memory; checked into one store indexed by ``store index``; and into
    another whose index a first search builds (as the review page does)."""
    folder = tmp_path_factory.mktemp("index")
    logs = [str(p) for p in fuzzed_logs(folder)]
    for name in ("by-command", "by-page"):
        assert run(["check", *logs, "--corpus", CORPUS, "--store", folder / name])[0] in (0, 1, 4)
    code, out, err = run(["store", "index", folder / "by-command"])
    assert code == 0, err
    assert f"{len(Store(folder / 'by-command').logs)} of {len(Store(folder / 'by-command').logs)} log(s) indexed" in out
    assert not (folder / "by-page" / search_index.FOLDER).exists()
    by_page = answers.StoreAnswers(folder / "by-page")
    search_index.search_store(by_page, searching.Search(text="leave"))  # (builds it)
    data = dataset.load([Path(p) for p in logs], check_options(CORPUS))
    return Three((data, answers.StoreAnswers(folder / "by-command"), by_page, folder))


def test_the_command_writes_the_index_a_pages_search_writes(three):
    _, by_command, by_page, folder = three
    for entry in Store(folder / "by-command").logs:
        made = search_index.log_folder(folder / "by-command" / search_index.FOLDER, entry["source"])
        built = search_index.log_folder(folder / "by-page" / search_index.FOLDER, entry["source"])
        for name in search_index.ORDER:
            assert pq.read_table(made / f"{name}.parquet").equals(pq.read_table(built / f"{name}.parquet")), name
        assert json.loads((made / "stamp.json").read_text()) == json.loads((built / "stamp.json").read_text())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(hs.data())
def test_the_commands_index_searches_as_the_pages_and_as_the_logs_in_memory(three, draw):
    data, by_command, by_page, _ = three
    search, known = draw.draw(searches(data)), draw.draw(facts(data))
    found = search_index.search_store(by_command, search, known)
    same(found, search_index.search_store(by_page, search, known))
    same(found, searching.search_dataset(data, search, known))


# --- the word tables, made in SQL, against the search's own word rule ------------------------------

TEXT = hs.text(hs.sampled_from(list("ab c\u00e9e\u0301\u00dfSS_1-'\n\t\u2028") + ["\ud83d", "\u00a0", "Ǆ"]),
               max_size=40)


@settings(max_examples=200, deadline=None)
@given(hs.lists(hs.tuples(TEXT, TEXT), max_size=6))
def test_the_word_tables_list_each_word_and_pair_of_words_of_each_text_once(tmp_path_factory, texts):
    raw = tmp_path_factory.mktemp("words") / "raw-texts.parquet"
    pq.write_table(pa.table({"source": ["s"] * len(texts), "row": list(range(len(texts))),
                             "text": [searching.haystack(list(pair)) for pair in texts]},
                            schema=search_index._TABLES["texts"]), raw)
    got = duckdb.sql(search_index._WORDS_OF["words"].format(raw=f"['{raw}']")).fetchall()
    expected = set()
    for row, pair in enumerate(texts):
        for text in pair:
            found = searching.words(text)
            expected |= {("s", w, row) for w in found}
            expected |= {("s", f"{a} {b}", row) for a, b in zip(found, found[1:])}
    assert sorted(got) == sorted(expected)  # (each once: DISTINCT)


# --- up to date, stale, check --search-index, errors ------------------------------------------------


def _one_log_store(tmp_path: Path, n: int = 5) -> tuple[Path, Path, list[str]]:
    log = tmp_path / "a.jsonl"
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join(lines[:n]), encoding="utf-8")
    return log, tmp_path / "store", lines


def test_an_index_that_is_up_to_date_is_not_built_again_and_a_stale_one_is(tmp_path):
    log, store, lines = _one_log_store(tmp_path)
    assert run(["check", log, "--store", store])[0] in (0, 1)
    assert not (store / search_index.FOLDER).exists()  # (plain check --store builds no index)
    code, out, err = run(["store", "index", store])
    assert code == 0 and "1 of 1 log(s) indexed" in out and "indexing log 1 of 1" in err
    before = _stamps(store)
    assert len(before) == 1
    code, out, err = run(["store", "index", store])
    assert code == 0 and "up to date, nothing to build" in out and "indexing" not in err
    assert _stamps(store) == before  # (not written again)
    added = json.loads(lines[6])
    added.update(answer_id="new-one", question="What about the quokka allowance?")
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(added) + "\n")
    assert run(["check", log, "--store", store])[0] in (0, 1)
    assert search_index.pending(Store(store)) == Store(store).logs  # (stale now)
    code, out, _ = run(["store", "index", store])
    assert code == 0 and "1 of 1 log(s) indexed" in out
    assert _stamps(store) != before and search_index.pending(Store(store)) == []
    found = search_index.search_store(answers.StoreAnswers(store), searching.Search(text="quokka"))
    assert list(found.answers) == ["new-one"]


def test_check_with_search_index_builds_it_after_the_store_is_written(tmp_path):
    log, store, _ = _one_log_store(tmp_path)
    code, out, err = run(["check", log, "--store", store, "--search-index"])
    assert code in (0, 1) and "line(s)" in out and "1 of 1 log(s) indexed" in err
    assert search_index.pending(Store(store)) == []
    assert "up to date" in run(["store", "index", store])[1]
    code, _, err = run(["check", log, "--search-index"])
    assert code == 2 and "--search-index" in err and "--store DIR" in err


def test_a_damaged_store_or_a_folder_that_is_no_store_is_said(tmp_path):
    log, store, _ = _one_log_store(tmp_path)
    assert run(["check", log, "--store", store])[0] in (0, 1)
    code, _, err = run(["store", "index", tmp_path / "nowhere"])
    assert code == 2 and "not a checked store" in err
    (entry,) = Store(store).logs
    Store(store).part_path("answers", entry["source"], entry["parts"][0]).unlink()
    code, _, err = run(["store", "index", store])
    assert code == 6 and "damaged" in err and "citecheck check" in err
    assert not (store / search_index.FOLDER / f"log-{entry['source']}").exists()


def test_a_build_that_stopped_leaves_nothing_the_next_build_keeps(tmp_path):
    log, store, _ = _one_log_store(tmp_path)
    assert run(["check", log, "--store", store])[0] in (0, 1)
    left = store / search_index.FOLDER / ".log-0000-stopped"
    left.mkdir(parents=True)
    (left / "raw-texts.parquet").write_bytes(b"half")
    assert run(["store", "index", store])[0] == 0
    assert not left.exists()


# --- the review page on a store whose index is missing --------------------------------------------

PAGE = """
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


def _said(at) -> str:
    return "\n".join(str(h.proto.body) for h in at.get("html"))


def test_the_page_says_how_to_build_a_large_missing_index_and_does_not_build_it(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    store = tmp_path / "st<b>ore</b>"
    assert run(["check", SAMPLE, "--corpus", CORPUS, "--store", store])[0] in (0, 1)
    lines = Store(store).logs[0]["lines"]
    monkeypatch.setattr(search_index, "BUILD_ON_PAGE", lines - 1)  # (this store is "large")
    page = PAGE.format(root=str(ROOT), store=str(store))
    at = AppTest.from_string(page, default_timeout=60).run()
    assert not at.exception
    said = _said(at)
    assert "citecheck store index" in said and f"{lines:,} answers" in said and "about 1 s" in said
    assert "<b>ore</b>" not in said and "&lt;b&gt;ore&lt;/b&gt;" in said  # (the path, escaped)
    assert '<p class="ids">none</p>' in said  # (the page's own queue stands)
    assert at.text_input(key="search_text_unavailable").disabled
    assert [t.key for t in at.text_input] == ["search_text_unavailable"]  # (no box that would search)
    assert not (store / search_index.FOLDER).exists()  # (nothing built by the page)

    assert run(["store", "index", store])[0] == 0  # the lead builds it; the page then searches
    at = AppTest.from_string(page, default_timeout=60).run()
    at.text_input(key="search_text").input('"earned leave"').run()
    assert not at.exception
    expected = searching.search_dataset(dataset.load([SAMPLE], check_options(CORPUS)), searching.Search(text='"earned leave"'))
    assert expected.answer_count > 1
    assert f'<p class="ids">{",".join(expected.answers)}</p>' in _said(at)


def test_the_page_builds_a_small_missing_index_in_place(tmp_path):
    from streamlit.testing.v1 import AppTest

    store = tmp_path / "store"
    assert run(["check", SAMPLE, "--store", store])[0] in (0, 1)
    assert Store(store).logs[0]["lines"] <= search_index.BUILD_ON_PAGE
    at = AppTest.from_string(PAGE.format(root=str(ROOT), store=str(store)), default_timeout=60).run()
    assert "store index" not in _said(at)
    at.text_input(key="search_text").input("leave").run()
    assert not at.exception and "match" in _said(at)
    assert search_index.pending(Store(store)) == []


def test_the_notice_says_when_a_build_is_under_way(tmp_path):
    log, store, _ = _one_log_store(tmp_path)
    assert run(["check", log, "--store", store])[0] in (0, 1)
    with search_index._locked(search_index.index_root(Store(store))):
        said = str(search_index.not_built(Store(store), 0))
        assert "being built now" in said and "store index" not in said
    assert "citecheck store index" in str(search_index.not_built(Store(store), 0))
    assert search_index.not_built(Store(store), 5) is None  # (5 lines: built in place)
    shutil.rmtree(store / search_index.FOLDER)
