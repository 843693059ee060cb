"""The Streamlit app through streamlit.testing.v1.AppTest: every page, and reviewer flows."""

import json
import re
from pathlib import Path

import pytest
import streamlit as st
from citecheck.checking.files import check_options
from citecheck.contract import reasons
from citecheck.contract.log import checksum
from citecheck.labelling import dataset
from citecheck.labelling import labels as label_store
from citecheck.reports import failures_view, figures
from citecheck.reports.rates import percent
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG
from helpers import open_tab
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PAGES = ["pages/review.py", "pages/failures.py", "pages/calibration.py", "pages/data.py", "pages/disagreements.py"]


@pytest.fixture(autouse=True)
def settings(tmp_path, monkeypatch):
    st.cache_resource.clear()
    st.cache_data.clear()
    labels = tmp_path / "labels.jsonl"
    monkeypatch.setenv("CITECHECK_LOGS", str(DEFAULT_LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(DEFAULT_CORPUS))
    monkeypatch.setenv("CITECHECK_LABELS", str(labels))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return labels


def app(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def html(at) -> str:
    return "\n".join(str(h.proto.body) for h in at.get("html"))


def heading(at) -> str:
    """The review page's answer heading (rendered from escaped text with st.html)."""
    heading = re.search(r"<h3>(Answer .*?)</h3>", html(at)).group(1)
    return re.sub(r"<[^>]+>", "", heading)  # (the id is in its own <bdi>)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders(page):
    at = app()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]


def test_deep_link_opens_the_answer_and_hides_failed_footnotes():
    at = app(answer="a-033")
    assert not at.exception
    assert heading(at).startswith("Answer a-033")
    page = html(at)
    # one verified and one failed citation of chunk [1]: the reader sees one footnote, the failure is explained
    reader = next(h for h in page.split("\n") if 'class="cc-answer"' in h)
    assert reader.count("<sup>[1]</sup>") == 1 and "[1] [1]" not in reader
    assert "closest text in the chunk, not a match" in page
    assert '<mark class="cc-quote">take 5-7 business days</mark>' in page


def test_failed_only_footnote_is_not_shown():
    at = app(answer="a-041")  # checksum mismatch: its only footnote is dead
    reader = next(h for h in html(at).split("\n") if 'class="cc-answer"' in h)
    assert "<sup>" not in reader and "[1]" not in reader
    assert "does not hash to its logged checksum" in html(at)


def test_label_flow_saves_reloads_and_resumes(settings):
    at = app(answer="a-001")
    at.sidebar.text_input[0].input("ana").run()
    at.button(key="key-supported").click().run()
    assert not at.exception
    records, warnings = label_store.read(settings)
    assert warnings == [] and len(records) == 1
    first = records[0]
    assert (first.answer_id, first.sentence, first.label, first.reviewer) == ("a-001", 0, "supported", "ana")
    assert "labelled 1 of" in html(at)
    at.button(key="key-partial").click().run()  # focus moved to the second item
    assert [r.sentence for r in label_store.read(settings)[0]] == [0, 1]

    fresh = app()  # a reload: a new session on the same labels file
    fresh.sidebar.text_input[0].input("ana").run()
    fresh.button(key="resume").click().run()
    assert heading(fresh).startswith("Answer a-002")
    assert "labelled 2 of" in html(fresh)
    # Resume says which item it went to, in that item's box, under its focus mark
    box = next(h for h in html(fresh).split("\n") if 'class="cc-focus"' in h)
    assert "Your queue&#x27;s next item: item 1 of answer a-002" in box  # (escaped, as all text is)


def test_labelling_needs_a_reviewer_name(settings):
    at = app(answer="a-001")
    at.button(key="key-supported").click().run()
    assert label_store.read(settings)[0] == ([])
    assert "reviewer name is required" in html(at)


def test_stale_label_is_shown_as_stale(settings, tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    line = json.loads(DEFAULT_LOG.read_text(encoding="utf-8").splitlines()[1])
    log.write_text(json.dumps(line) + "\n", encoding="utf-8")
    monkeypatch.setenv("CITECHECK_LOGS", str(log))
    monkeypatch.setenv("CITECHECK_CORPUS", "")
    at = app()
    at.sidebar.text_input[0].input("ana").run()
    at.button(key="key-supported").click().run()
    assert "Your label: <b>Supported</b>" in html(at)
    # the chunk is re-indexed with new text: same item, new fingerprint
    line["chunks"][0]["text"] = line["chunks"][0]["text"].replace("8 days", "10 days")
    line["chunks"][0]["checksum"] = checksum(line["chunks"][0]["text"])
    log.write_text(json.dumps(line) + "\n", encoding="utf-8")
    st.cache_resource.clear()
    again = app()
    again.sidebar.text_input[0].input("ana").run()
    captions = html(again)
    assert "STALE" in captions and "labelled 0 of" in captions and "(1 stale)" in captions


def test_hostile_chunk_text_is_escaped(tmp_path, monkeypatch):
    payload = '<img src=x onerror="alert(1)"> <script>alert(2)</script> *not bold* $x$'
    line = json.loads(DEFAULT_LOG.read_text(encoding="utf-8").splitlines()[1])
    chunk = line["chunks"][0]
    chunk["text"] = payload + " " + chunk["text"]
    chunk["checksum"] = checksum(chunk["text"])
    for key in ("quote_start", "quote_end"):  # markers-shape quotes carry no offsets; span ones do
        if key in line["citations"][0]:
            line["citations"][0][key] += len(payload) + 1
    line["question"] = "<b>bold?</b>"
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(line) + "\n", encoding="utf-8")
    monkeypatch.setenv("CITECHECK_LOGS", str(log))
    monkeypatch.setenv("CITECHECK_CORPUS", "")
    at = app()
    page = html(at)
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page and "<img" not in page
    assert "&lt;script&gt;" in page and "<script" not in page
    assert "&lt;b&gt;bold?&lt;/b&gt;" in page


def test_data_page_lists_unreadable_lines(tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    log.write_text(DEFAULT_LOG.read_text(encoding="utf-8").splitlines()[0] + "\n{broken\n", encoding="utf-8")
    monkeypatch.setenv("CITECHECK_LOGS", str(log))
    at = app()
    at.switch_page("pages/data.py").run()
    assert not at.exception
    assert "1 unreadable line(s)" in [s.value for s in at.subheader]


def test_unknown_deep_link_falls_back_to_the_first_answer():
    at = app(answer="../../etc/passwd")
    assert heading(at).startswith("Answer a-001")


# --- the Failures page -------------------------------------------------------------------------


def failures(tab: str | None = None) -> AppTest:
    """The Failures page, on its first tab or on ``tab``."""
    at = app().switch_page("pages/failures.py").run()
    return at if tab is None else open_tab(at, tab)


def failing_table(at):
    return next(d for d in at.dataframe if "reasons" in d.value.columns).value


def test_failures_page_filters_change_the_table():
    at = failures("Failing answers")
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    table = figures.dataset_table(dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS)))
    assert metrics["Refused"] == percent(int(table["refused"].sum()), len(table))
    every = failing_table(at)
    worst = figures.failing(table)
    assert list(every["answer_id"]) == list(worst["answer_id"]) and len(every) < len(table)
    assert worst.iloc[0]["problems"] >= worst.iloc[-1]["problems"] > 0  # worst first
    at.selectbox(key="f_model").select("claude-haiku-4-5").run()
    haiku = failing_table(at)
    assert 0 < len(haiku) < len(every) and set(haiku["model"]) == {"claude-haiku-4-5"}
    at.selectbox(key="f_reason").select("source_changed").run()
    assert set(failing_table(at)["answer_id"]) <= set(haiku["answer_id"])
    at.selectbox(key="f_model").select("any").run()
    at.selectbox(key="f_scope").select("all").run()
    assert list(failing_table(at)["answer_id"]) == ["a-039", "a-043", "a-045"]  # they cite the edited hotel limits
    (csv_button,) = at.get("download_button")
    assert csv_button.proto.label == "Download this table as CSV"


def drawn(at) -> dict[str, int]:
    """How many elements each Failures tab holds (a closed tab's content is not run: none)."""
    return {tab.label: len(tab.children) for tab in at.tabs}


def test_failures_page_runs_only_the_open_tab():
    at = failures()
    assert not at.exception
    assert [t.label for t in at.tabs] == failures_view.TABS and at.session_state[failures_view.TAB_KEY] == "Reasons"
    assert drawn(at) == {"Reasons": 1, **{label: 0 for label in failures_view.TABS[1:]}}  # its table
    assert not at.get("vega_lite_chart") and not at.selectbox and not at.radio
    assert not [d for d in at.dataframe if "reasons" in d.value.columns]  # the failing table is not serialized
    open_tab(at, "Failing answers")
    assert not at.exception
    assert [label for label, n in drawn(at).items() if n] == ["Failing answers"]
    assert not at.get("vega_lite_chart") and len(failing_table(at)) > 0
    for label in failures_view.TABS:  # every tab draws, alone
        open_tab(at, label)
        assert not at.exception, (label, [e.value for e in at.exception])
        assert [tab for tab, n in drawn(at).items() if n] == [label]


def test_failures_tab_widgets_keep_their_values_while_another_tab_is_open():
    at = failures("Failing answers")
    at.selectbox(key="f_model").select("claude-haiku-4-5").run()
    at.selectbox(key="f_scope").select("all").run()
    haiku = failing_table(at)
    open_tab(at, "Over time").radio(key="f_per").set_value("day").run()
    open_tab(at, "Compare").radio(key="cmp_col").set_value("model").run()
    open_tab(at, "Reasons")
    assert not at.selectbox and not at.radio  # none drawn ...
    open_tab(at, "Failing answers")  # ... and each back as it was when its tab opens again
    assert not at.exception
    assert at.selectbox(key="f_model").value == "claude-haiku-4-5" and at.selectbox(key="f_scope").value == "all"
    assert failing_table(at).equals(haiku) and set(haiku["model"]) == {"claude-haiku-4-5"}
    assert open_tab(at, "Over time").radio(key="f_per").value == "day"
    assert open_tab(at, "Compare").radio(key="cmp_col").value == "model"
    at.switch_page("pages/data.py").run()
    at.switch_page("pages/failures.py").run()  # the page left and opened again: it starts afresh
    assert at.session_state[failures_view.TAB_KEY] == "Reasons"
    assert open_tab(at, "Failing answers").selectbox(key="f_model").value == "any"


def test_a_failing_row_opens_on_the_review_page():
    at = failures("Failing answers")
    first = failing_table(at).iloc[0]["answer_id"]
    at.session_state["failing_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()  # one tick: the review page, in this session (this tab)
    assert not at.exception
    assert at.query_params["answer"] == first
    assert heading(at).startswith(f"Answer {first}")
    from citecheck.checking import answer_problems
    from citecheck.labelling.items import items_of

    result = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS)).get(first)
    focus = answer_problems.first_failing_item(result, items_of(result))
    assert focus is not None and at.query_params["item"] == str(focus + 1)
    assert at.session_state["focus"] == focus and at.session_state["moves"] >= 1  # focused, and scrolled to
    from html import escape

    why = answer_problems.why_text(result)
    assert why.startswith("Fails: sentence ") and escape(why) in html(at)


def _log_of(tmp_path, monkeypatch, lines) -> None:
    log = tmp_path / "answers.jsonl"
    log.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    monkeypatch.setenv("CITECHECK_LOGS", str(log))
    monkeypatch.setenv("CITECHECK_GOLDEN", "")


def test_failures_page_on_an_empty_log(tmp_path, monkeypatch):
    _log_of(tmp_path, monkeypatch, [])
    at = failures()
    assert not at.exception
    assert any("nothing to report" in i.value for i in at.info)
    assert not at.metric


def test_failures_page_when_nothing_fails_and_no_model_is_logged(tmp_path, monkeypatch):
    clean = DEFAULT_LOG.read_text(encoding="utf-8").splitlines()[:5]
    stripped = []
    for line in clean:
        obj = json.loads(line)
        obj.pop("model"), obj.pop("prompt_version")
        stripped.append(json.dumps(obj))
    _log_of(tmp_path, monkeypatch, stripped)
    at = failures()
    assert not at.exception
    assert any("No answer fails a check" in s.value for s in at.success)
    infos = []
    for tab in ("Reasons", "By model", "By prompt version", "Refusals & retrieval"):
        infos += [i.value for i in open_tab(at, tab).info]
    assert any("no model field" in i for i in infos) and any("no prompt version field" in i for i in infos)
    assert any("No golden set loaded" in i for i in infos)
    assert any("No failure reason occurs" in i for i in infos)
    assert failing_table(open_tab(at, "Failing answers")).empty


# --- judge verdicts on the review page, and the calibration page -------------------------------------


def _judge_a001(tmp_path) -> None:
    from citecheck.judging import verdicts
    from citecheck.judging.judges import BaselineJudge, judge_items
    from citecheck.labelling import dataset

    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    items = [i for i in judge_items(data.results) if i.key.startswith("a-001#")]
    verdicts.append(tmp_path / "verdicts.jsonl", BaselineJudge().judge(items))


def test_blind_mode_hides_verdicts_until_the_reviewer_labels(settings, tmp_path):
    _judge_a001(tmp_path)
    at = app(answer="a-001")
    at.sidebar.text_input[0].input("ana").run()
    assert 'class="cc-judge"' not in html(at)
    assert "hidden until you label this item (blind mode)" in html(at)  # a count only, in the item box
    at.button(key="key-supported").click().run()  # labels the first item only
    page = html(at)
    assert page.count('class="cc-judge"') == 1 and "baseline" in page
    at.sidebar.toggle(key="blind").set_value(False).run()
    assert html(at).count('class="cc-judge"') == 2


def test_calibration_page_runs_the_baseline_on_real_expert_labels(settings, tmp_path):
    at = app()
    at.switch_page("pages/calibration.py").run()
    assert any("No verdicts yet" in i.value for i in at.info)
    at.radio(key="cal_set").set_value("expertqa").run()
    next(b for b in at.button if b.label == "Run").click().run()
    assert not at.exception
    # what the run did, as escaped HTML (never Markdown: dollar amounts read as LaTeX there)
    assert not at.success and '<div class="cc-ok">' in html(at) and "item(s) judged for $0.0000" in html(at)
    assert (tmp_path / "expertqa-verdicts.jsonl").is_file() and not (tmp_path / "verdicts.jsonl").exists()
    metrics = {m.label: m.value for m in at.metric}
    assert set(metrics) >= {"Cohen's kappa", "TPR: not supported caught", "TNR: others left alone"}
    assert any("95% CI" in c.value for c in at.caption)
    assert at.selectbox(key="cal_item").value  # the disagreement browser shows an item
    assert "Sentence:" in html(at)
    at.radio(key="cal_split").set_value("test").run()
    assert not at.exception
    # a second run pays for nothing: every item is already judged with this prompt
    next(b for b in at.button if b.label == "Run").click().run()
    assert "0 item(s) judged" in html(at) and not at.success


def test_claude_judge_needs_a_key_on_the_page():
    at = app()
    at.switch_page("pages/calibration.py").run()
    at.radio(key="cal_judge").set_value("claude").run()
    assert any("ANTHROPIC_API_KEY" in i.value for i in at.info)
    assert next(b for b in at.button if b.label == "Run").disabled


def test_a_missing_corpus_folder_is_said_on_the_page_not_skipped(tmp_path, monkeypatch):
    monkeypatch.setenv("CITECHECK_CORPUS", str(tmp_path / "no-such-folder"))
    at = app()
    assert not at.exception
    assert "corpus folder" in html(at) and "does not exist" in html(at)


def test_every_answer_has_a_comment_thread_drawn_only_while_open_and_hidden_until_all_its_items_are_labelled(settings):
    """The answer's thread (keyed by its id) under its text: nothing of it is drawn while closed (a
    closed thread costs a key press nothing); in blind mode it shows once the reviewer has labelled
    every item of the answer, and a comment there is an event on the answer."""
    from citecheck.labelling import comments
    from citecheck.review.html import focus_token

    at = app(answer="a-001")
    at.sidebar.text_input[0].input("ana").run()
    box = f"comment-box-{focus_token('a-001')}"
    assert [e.label for e in at.expander if e.label.startswith("Comments on this")] == [
        "Comments on this answer", "Comments on this item"]
    assert box not in at.session_state and "Comments on this answer" not in html(at)
    at.session_state["answer_comments_open"] = True  # (the reviewer opens it)
    at.run()
    assert box not in at.session_state  # blind mode, a-001 not all labelled: no box, no thread
    at.button(key="key-supported").click().run()
    at.button(key="key-supported").click().run()  # a-001's two items: the queue goes on to a-002
    next(b for b in at.button if b.label == "Previous").click().run()
    assert heading(at).startswith("Answer a-001")
    assert box in at.session_state and not at.exception
    at.text_area(key=box).input("@ana both chunks are old").run()
    at.button(key=f"comment-{focus_token('a-001')}").click().run()
    made = [e for e in label_store.read_events(settings)[0] if isinstance(e, comments.Comment)]
    assert [(c.thread, c.author, c.text) for c in made] == [("a-001", "ana", "@ana both chunks are old")]


def test_a_reviewer_opening_the_app_starts_on_their_queue_not_on_the_first_answer(settings):
    """Opened without ?answer=, the review page starts where Resume would go: a reviewer's assigned
    work first (ben), or the first item they have not labelled (ana, who labelled a-001)."""
    from citecheck.labelling import assignments, dataset

    data = dataset.load([DEFAULT_LOG])
    a038 = data.items("a-038")[0]
    label_store.append_event(settings, assignments.make_assignment([a038.key], assignments.parse_shares("ben"),
                                                                  "lee", "ids"))
    for item in data.items("a-001"):
        label_store.append(settings, label_store.make_label(item, item.labels[0], "ana"))
    ben = app(reviewer="ben")
    assert not ben.exception and heading(ben).startswith("Answer a-038") and "focused item 1 of" in html(ben)
    ana = app(reviewer="ana")
    assert heading(ana).startswith("Answer a-002")
    assert heading(app()).startswith("Answer a-001")  # nobody named: the first answer
    linked = app(reviewer="ben", answer="a-005")  # a link still opens its answer
    assert heading(linked).startswith("Answer a-005")


def test_the_reasons_tab_draws_a_table_and_no_chart():
    """The Failures page's first view (its Reasons tab) is the reasons table with a bar per count,
    drawn with st.html: no chart and no data grid, whose scripts a browser would load first; the
    table is failures_view's for the page's figures."""
    at = failures()
    assert not at.exception
    assert not at.get("vega_lite_chart") and not at.table
    assert not [d for d in at.dataframe if "Reason" in d.value.columns]
    (markup,) = [str(h.proto.body) for h in at.get("html") if "cc-reasons" in str(h.proto.body)]
    table = figures.dataset_table(dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS)))
    assert markup == failures_view.reasons_html(figures.by_reason(table), len(table))
    assert markup.count("<tr") == len(reasons.ALL_REASONS) + 1 and "cc-bar" in markup


def test_what_a_key_did_on_an_answer_with_no_item_is_said_once(settings):
    """A refusal has no item to focus: Next on the last answer said "This is the last answer" at the top
    of the page and again above its sentences."""
    at = app(answer="a-048", reviewer="ana")
    assert not at.exception and heading(at).startswith("Answer a-048 (48 of 48)")
    next(b for b in at.button if b.label == "Next").click().run()
    assert not at.exception
    assert html(at).count("This is the last answer (48 of 48)") == 1


def test_a_link_to_an_answer_not_loaded_says_so(settings):
    at = app(answer="<b>gone</b>", reviewer="ana")
    assert not at.exception
    page = html(at)
    assert "The link asks for answer &lt;b&gt;gone&lt;/b&gt;, which is not in the loaded logs" in page
    assert heading(at).startswith("Answer a-001")


def test_a_note_outlives_its_box_and_shows_with_the_label_it_was_saved_with(settings):
    """A note typed and not yet saved is there again after a look at another answer; the note of
    a label already saved shows in its item's box, so pressing the same label again records nothing
    (it recorded a label with no note, dropping the one saved)."""
    from citecheck.review.session_state import note_key

    at = app(answer="a-001")
    at.sidebar.text_input[0].input("ana").run()
    first = note_key(first_item_key(), "ana")
    at.text_input(key=first).input("1.5 days is in the chunk").run()
    next_answer, previous_answer = (next(b for b in at.button if b.label == name) for name in ("Next", "Previous"))
    next_answer.click().run()
    assert heading(at).startswith("Answer a-002") and first not in [t.key for t in at.text_input]
    next(b for b in at.button if b.label == "Previous").click().run()
    assert heading(at).startswith("Answer a-001") and at.text_input(key=first).value == "1.5 days is in the chunk"
    at.button(key="key-supported").click().run()
    [saved] = label_store.read(settings)[0]
    assert saved.note == "1.5 days is in the chunk"

    fresh = app(answer="a-001")  # a new session: no draft, the saved label's note
    fresh.sidebar.text_input[0].input("ana").run()
    assert fresh.text_input(key=first).value == "1.5 days is in the chunk"
    fresh.button(key="key-supported").click().run()
    assert len(label_store.read(settings)[0]) == 1 and "nothing new recorded" in html(fresh)


def first_item_key() -> str:
    from citecheck.labelling import dataset
    from citecheck.labelling.items import items_of

    return items_of(dataset.load([DEFAULT_LOG]).get("a-001"))[0].key


def test_a_note_whose_change_callback_was_cut_short_is_still_there_after_a_look_at_the_next_answer(settings):
    """A note's ``on_change`` (which keeps it as a draft) can be stopped before it keeps anything:
    a key pressed right after Escape sends a message while the change runs (CI: a note typed, N
    then P, and the box empty).  Here the box is given its text with no callback at all; the draft
    is still kept, at the top of the next run, while Streamlit still holds the box's text."""
    at = app(answer="a-001", reviewer="ana")
    (key,) = [box.key for box in at.text_input if (box.key or "").startswith("note-") and "#s0#c0" in box.key]
    at.session_state[key] = "the 45-day cap is in the chunk"  # (typed; its callback never ran)
    at.run()
    at.button[[b.label for b in at.button].index("Next")].click().run()
    assert heading(at).startswith("Answer a-002")
    at.button[[b.label for b in at.button].index("Previous")].click().run()
    assert heading(at).startswith("Answer a-001")
    assert at.text_input(key=key).value == "the 45-day cap is in the chunk"
    at.button(key="key-supported").click().run()
    assert [(r.label, r.note) for r in label_store.read(settings)[0]] == [("supported", "the 45-day cap is in the chunk")]
