"""Undo, the label history, the guidelines and the Disagreements page through AppTest."""

import pytest
import streamlit as st
from citecheck.labelling import guidelines
from citecheck.labelling import labels as label_store
from citecheck.labelling.items import items_of
from citecheck.storage import streams
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG
from streamlit.testing.v1 import AppTest
from test_app import APP, html


@pytest.fixture(autouse=True)
def labels(tmp_path, monkeypatch):
    st.cache_resource.clear()
    st.cache_data.clear()
    path = tmp_path / "labels.jsonl"
    monkeypatch.setenv("CITECHECK_LOGS", str(DEFAULT_LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(DEFAULT_CORPUS))
    monkeypatch.setenv("CITECHECK_LABELS", str(path))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    monkeypatch.delenv("CITECHECK_GUIDELINES", raising=False)
    return path


def app(page: str | None = None, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    return at.switch_page(page).run() if page else at


def raw(path) -> list[dict]:
    return streams.read_all(path, label_store.STREAM, lambda v: v)[0]


def test_undo_appends_a_retraction_and_returns_to_the_item(labels):
    at = app(answer="a-001", reviewer="ana")
    at.button(key="key-supported").click().run()
    assert "focused item 2 of" in html(at)
    at.button(key="undo").click().run()
    assert not at.exception
    records = raw(labels)
    assert [r.get("event", "label") for r in records] == ["label", "retraction"]
    assert records[1]["retracts"] == records[0]["at"] and label_store.read(labels)[0] == []
    page = html(at)
    assert "Withdrew your \u201cSupported\u201d for sentence 1 of a-001" in page
    assert "focused item 1 of" in page and "ana: labelled 0 of" in page
    assert "label, withdrawn" in page  # the history of the item, open on it
    at.button(key="undo").click().run()
    assert "You have no label to withdraw." in html(at) and len(raw(labels)) == 2


def test_history_hides_other_reviewers_in_blind_mode(labels):
    from citecheck.labelling import dataset

    item = items_of(dataset.load([DEFAULT_LOG]).get("a-001"))[0]
    label_store.append(labels, label_store.make_label(item, "not_supported", "ben", note="ben's reason"))
    at = app(answer="a-001", reviewer="ana")
    assert "ben&#x27;s reason" not in html(at) and "1 entry by others hidden" in html(at)
    at.button(key="key-supported").click().run()
    at.button(key="undo").click().run()  # back on the item, unlabelled by ana again: ben stays hidden
    assert "ben&#x27;s reason" not in html(at)
    at.button(key="key-partial").click().run()
    at = app(answer="a-001", reviewer="ana", item="1")  # the item again, now labelled by ana: nothing hidden
    page = html(at)
    assert "ben&#x27;s reason" in page and "by others hidden" not in page


def test_guidelines_are_shown_escaped_give_hover_text_and_a_version(labels, tmp_path, monkeypatch):
    at = app(answer="a-001", reviewer="ana")
    assert "<h2>Partially supported</h2>" in html(at)
    default = guidelines.load()
    help_text = at.button(key="key-partial").help
    assert help_text.startswith("The chunk supports some of what the sentence claims")
    ours = tmp_path / "ours.md"
    ours.write_text("# Ours\n<script>alert(1)</script>\n\n## Supported\nEvery word *is* in the chunk.\n",
                    encoding="utf-8")
    monkeypatch.setenv("CITECHECK_GUIDELINES", str(ours))
    at = app(answer="a-001", reviewer="ana")
    page = html(at)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert at.button(key="key-supported").help == r"Every word \*is\* in the chunk."
    assert at.button(key="key-partial").help is None or at.button(key="key-partial").help == ""
    at.button(key="key-supported").click().run()
    assert label_store.read(labels)[0][0].guidelines == guidelines.load(ours).version != default.version
    monkeypatch.setenv("CITECHECK_GUIDELINES", str(tmp_path / "missing.md"))
    at = app(answer="a-001", reviewer="ana")
    assert not at.exception and "cannot read the guidelines file" in html(at)


def test_the_disagreements_page_shows_labels_side_by_side_and_records_an_adjudication(labels):
    from citecheck.labelling import dataset

    items = items_of(dataset.load([DEFAULT_LOG]).get("a-001"))
    label_store.append(labels, label_store.make_label(items[0], "supported", "ana", note="<b>clear</b>"))
    label_store.append(labels, label_store.make_label(items[0], "not_supported", "ben", note="invented"))
    label_store.append(labels, label_store.make_label(items[1], "partial", "ana"))
    label_store.append(labels, label_store.make_label(items[1], "partial", "ben"))
    at = app("pages/disagreements.py", reviewer="lead")
    assert not at.exception
    page = html(at)
    assert "&lt;b&gt;clear&lt;/b&gt;" in page and "invented" in page and "Not adjudicated yet" in page
    assert "n = 2 items with two or more labels" in page and "<mark" in page  # the chunk, its quote highlighted
    (only,) = at.selectbox(key="dis_pick").options  # the answer, sentence and first words, not the raw key
    assert only.startswith("a-001 \u00b7 sentence 1 \u00b7 \u201c") and "#" not in only
    next(b for b in at.button if b.label == "Partially supported").click().run()
    assert not at.exception
    adj = label_store.adjudications(label_store.read_events(labels)[0])[items[0].key]
    assert (adj.label, adj.adjudicator, [r.reviewer for r in adj.resolves]) == ("partial", "lead", ["ana", "ben"])
    assert adj.guidelines == guidelines.load().version
    assert "Every disagreement is adjudicated." in [s.value for s in at.success]
    assert len(label_store.read(labels)[0]) == 4  # nothing overwritten


def test_under_a_login_the_adjudicator_is_the_signed_in_user(labels, monkeypatch):
    from citecheck.labelling import dataset

    roles = labels.parent / "roles.toml"  # under sign-in only a lead named in the roles file adjudicates
    roles.write_text('[roles]\n"lead@example.org" = "lead"\n', encoding="utf-8")
    monkeypatch.setenv("CITECHECK_ROLES", str(roles))

    items = items_of(dataset.load([DEFAULT_LOG]).get("a-001"))
    label_store.append(labels, label_store.make_label(items[0], "supported", "ana"))
    label_store.append(labels, label_store.make_label(items[0], "partial", "ben"))
    at = AppTest.from_file(APP, default_timeout=60)
    at.user = {"is_logged_in": True, "email": "lead@example.org"}
    at.query_params["reviewer"] = "mallory"  # a name in the address cannot stand in for the user
    at.run()
    at.switch_page("pages/disagreements.py").run()
    assert not at.exception and [t.label for t in at.sidebar.text_input] == []
    next(b for b in at.button if b.label == "Supported").click().run()
    assert label_store.adjudications(label_store.read_events(labels)[0])[items[0].key].adjudicator == "lead@example.org"


def test_an_adjudication_note_typed_is_there_after_a_look_at_another_disagreement(labels):
    from citecheck.labelling import dataset

    first, second = (items_of(dataset.load([DEFAULT_LOG]).get(a))[0] for a in ("a-001", "a-002"))
    for item in (first, second):
        label_store.append(labels, label_store.make_label(item, "supported", "ana"))
        label_store.append(labels, label_store.make_label(item, "not_supported", "ben"))
    at = app("pages/disagreements.py", reviewer="lead")
    picks = at.selectbox(key="dis_pick").options
    assert len(picks) == 2
    at.text_input(key=f"adj-note-{first.key}").input("the fee is in the chunk").run()
    at.selectbox(key="dis_pick").set_value(second.key).run()
    assert f"adj-note-{first.key}" not in [t.key for t in at.text_input]
    at.selectbox(key="dis_pick").set_value(first.key).run()
    assert at.text_input(key=f"adj-note-{first.key}").value == "the fee is in the chunk"
    next(b for b in at.button if b.label == "Supported").click().run()
    adj = label_store.adjudications(label_store.read_events(labels)[0])[first.key]
    assert (adj.label, adj.note) == ("supported", "the fee is in the chunk")
