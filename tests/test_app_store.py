"""The Failures page on a checked store (CITECHECK_STORE): every figure, breakdown, filter and the
failing-answers table from DuckDB, equal to the page on the same log held in memory."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import streamlit as st
from citecheck.cli.main import main
from citecheck.reports import failures_view
from helpers import open_tab
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
LOG = ROOT / "sample_data" / "answers.jsonl"
CORPUS = ROOT / "sample_data" / "corpus"


@pytest.fixture
def env(tmp_path, monkeypatch):
    st.cache_resource.clear()
    st.cache_data.clear()
    monkeypatch.setenv("CITECHECK_LOGS", str(LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(CORPUS))
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    monkeypatch.delenv("CITECHECK_STORE", raising=False)
    store = tmp_path / "store"
    assert main(["check", str(LOG), "--corpus", str(CORPUS), "--store", str(store)], io.StringIO(), io.StringIO()) == 0
    return store


def failures() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    return at.switch_page("pages/failures.py").run()


def seen(at) -> dict:
    """What the page shows: tiles and every table of every tab, and the failing-answers table after some filters."""
    out = {}
    for tab in failures_view.TABS:  # (only the open tab is drawn)
        open_tab(at, tab)
        assert not at.exception, [e.value for e in at.exception]
        out[tab] = {"metrics": [(m.label, m.value) for m in at.metric],
                    "tables": [d.value.reset_index(drop=True).to_dict("records") for d in at.dataframe
                               if "reasons" not in d.value.columns],
                    "static": [t.value.reset_index(drop=True).to_dict("records") for t in at.table],
                    "reasons": [str(h.proto.body) for h in at.get("html") if "cc-reasons" in str(h.proto.body)]}
    open_tab(at, "Failing answers")
    table = next(d for d in at.dataframe if "reasons" in d.value.columns).value
    out["failing"] = table.to_dict("records")
    at.selectbox(key="f_model").select("claude-haiku-4-5").run()
    out["haiku"] = next(d for d in at.dataframe if "reasons" in d.value.columns).value.to_dict("records")
    at.selectbox(key="f_model").select("any").run()
    at.selectbox(key="f_reason").select("source_changed").run()
    at.selectbox(key="f_scope").select("all").run()
    out["changed"] = next(d for d in at.dataframe if "reasons" in d.value.columns).value.to_dict("records")
    out["captions"] = [c.value for c in at.caption if "answers from" not in c.value]
    return out


def test_failures_page_from_the_store_shows_what_it_shows_from_the_log(env, monkeypatch):
    from_log = seen(failures())
    monkeypatch.setenv("CITECHECK_STORE", str(env))
    at = failures()
    said = "\n".join(str(h.proto.body) for h in at.get("html") if "cc-inputs" in str(h.proto.body))
    assert "<b>checked store</b>" in said and "<b>corpus</b> " in said
    from_store = seen(at)
    assert from_store["failing"] and from_store["haiku"] and from_store["changed"]
    assert from_store == from_log


def test_failures_page_says_when_the_store_is_not_one(env, monkeypatch, tmp_path):
    monkeypatch.setenv("CITECHECK_STORE", str(tmp_path / "nowhere"))
    at = failures()
    assert not at.exception
    assert "is not a checked store" in "\n".join(str(h.proto.body) for h in at.get("html"))


# --- a change between two runs of one session shows (the figures are kept: web/failures_source.py) --


def test_the_page_shows_a_changed_log_store_or_label_on_its_next_run(env, monkeypatch, tmp_path):
    from citecheck.checking.files import check_options
    from citecheck.labelling import dataset
    from citecheck.labelling import labels as label_store

    lines = LOG.read_text(encoding="utf-8").splitlines(keepends=True)
    log = tmp_path / "growing.jsonl"
    log.write_text("".join(lines[:20]), encoding="utf-8")
    data = dataset.load([log], check_options(CORPUS))
    cited = [i for i in data.all_items if i.citation is not None][:3]
    monkeypatch.setenv("CITECHECK_LOGS", str(log))
    for kind in ("log", "store"):
        if kind == "store":
            log.write_text("".join(lines[:20]), encoding="utf-8")
            assert main(["check", str(log), "--corpus", str(CORPUS), "--store", str(tmp_path / "grows")],
                        io.StringIO(), io.StringIO()) == 0
            monkeypatch.setenv("CITECHECK_STORE", str(tmp_path / "grows"))
        labels = tmp_path / f"labels-{kind}.jsonl"
        monkeypatch.setenv("CITECHECK_LABELS", str(labels))
        at = failures()
        assert not at.exception and loaded(at).startswith("20 answer(s)") and judged(at) is None
        for item in cited:
            label_store.append(labels, label_store.make_label(item, "not_supported", "ana"))
        at.run()
        assert judged(at) not in (None, "n/a")
        log.write_text("".join(lines), encoding="utf-8")  # the log grows (and is checked into the store again)
        if kind == "store":
            assert main(["check", str(log), "--corpus", str(CORPUS), "--store", str(tmp_path / "grows")],
                        io.StringIO(), io.StringIO()) == 0
        at.run()
        assert not at.exception and loaded(at).startswith(f"{len(lines)} answer(s)")


def loaded(at) -> str:
    """The page's inputs line, from its counts on: "20 answer(s), ..."."""
    body = next(str(h.proto.body) for h in at.get("html") if "cc-inputs" in str(h.proto.body))
    return body.split("Figures from ", 1)[1]


def judged(at) -> str | None:
    return next((m.value for m in at.metric if m.label == "Labelled unsupported"), None)


def test_every_page_holds_on_a_store_of_unreadable_lines_only(env, monkeypatch, tmp_path):
    """A store whose log has no readable answer (report --store crashed on it): the pages say so, no exception."""
    log = tmp_path / "garbage.jsonl"
    log.write_bytes(b"garbage\n{\"a\": \n")
    store = tmp_path / "empty-store"
    assert main(["check", str(log), "--store", str(store)], io.StringIO(), io.StringIO()) == 4
    monkeypatch.setenv("CITECHECK_LOGS", str(log))
    monkeypatch.setenv("CITECHECK_STORE", str(store))
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    for page in ("pages/failures.py", "pages/data.py", "pages/calibration.py"):
        at = at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])


def test_the_data_page_describes_the_store_it_serves(env, monkeypatch, tmp_path):
    """With a store, the Data page says the answers come from the store (not from the logs
    setting, still the 48-answer sample here), counts the store's answers and its unreadable lines,
    and lists every setting (#31)."""
    lines = LOG.read_text(encoding="utf-8").splitlines(keepends=True)
    small = tmp_path / "small.jsonl"
    small.write_text("".join(lines[:20]) + "{broken\n", encoding="utf-8")
    main(["check", str(small), "--corpus", str(CORPUS), "--store", str(tmp_path / "small-store")],
         io.StringIO(), io.StringIO())
    monkeypatch.setenv("CITECHECK_STORE", str(tmp_path / "small-store"))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/data.py").run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Answers"] == "20" and metrics["Unreadable lines"] == "1"
    html = "\n".join(str(h.proto.body) for h in at.get("html"))
    assert "reads its answers from the checked store" in html and "the logs setting is not used" in html
    table = next(d.value for d in at.dataframe if "setting" in d.value.columns)
    settings = dict(zip(table["setting"], table["value"]))
    assert settings["logs in the store"].endswith("small.jsonl") and "answers.jsonl" not in settings["logs in the store"]
    assert settings["corpus"].endswith("corpus") and {"overlap", "sign-in", "verdicts", "guidelines",
                                                      "golden set", "refusal sentence"} <= set(settings)
    unreadable = [d.value for d in at.dataframe if "message" in d.value.columns]
    assert unreadable and unreadable[0]["line"].tolist() == [21]


def test_disagreements_and_calibration_read_the_labelled_answers_of_the_store(env, monkeypatch, tmp_path):
    """With a store the labels are made on the store's answers, so the lead's pages read those
    answers from the store, not the logs setting (here a log without them)."""
    from citecheck.checking.files import check_options
    from citecheck.labelling import dataset
    from citecheck.labelling import labels as label_store

    lines = LOG.read_text(encoding="utf-8").splitlines(keepends=True)
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_text("".join(x.replace('"answer_id": "a-0', '"answer_id": "s-0') for x in lines[:10]),
                       encoding="utf-8")
    main(["check", str(renamed), "--corpus", str(CORPUS), "--store", str(tmp_path / "s")], io.StringIO(), io.StringIO())
    item = next(i for i in dataset.load([renamed], check_options(CORPUS)).all_items if i.citation is not None)
    assert item.answer_id.startswith("s-0")
    labels = tmp_path / "labels.jsonl"
    label_store.append(labels, label_store.make_label(item, "supported", "ana"))
    label_store.append(labels, label_store.make_label(item, "not_supported", "ben"))
    monkeypatch.setenv("CITECHECK_STORE", str(tmp_path / "s"))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/disagreements.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("1 of 1 disagreement(s) remain to adjudicate." in c.value for c in at.caption)
    at.switch_page("pages/calibration.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("1 labelled citation item(s); 1 found in the loaded answers" in c.value for c in at.caption)
