"""The review page under Streamlit's OIDC login, the user injected through AppTest.user (the
login itself, a redirect to an identity provider, cannot run here: no provider, no network)."""

import pytest
import streamlit as st
from citecheck.labelling import labels as label_store
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG
from streamlit.testing.v1 import AppTest
from test_app import APP, html


@pytest.fixture(autouse=True)
def labels(tmp_path, monkeypatch):
    st.cache_resource.clear()
    st.cache_data.clear()
    monkeypatch.setenv("CITECHECK_LOGS", str(DEFAULT_LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(DEFAULT_CORPUS))
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    return tmp_path / "labels.jsonl"


def review(user: dict, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.user = user
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def test_the_signed_in_user_is_the_reviewer_and_no_name_can_be_typed(labels):
    at = review({"is_logged_in": True, "email": "lead@example.org", "name": "Lead"}, answer="a-001", reviewer="ana")
    assert not at.exception
    assert "Reviewer name" not in [t.label for t in at.sidebar.text_input]  # the name box is gone
    assert "lead@example.org: labelled 0 of" in html(at)
    assert "Sign out" in [b.label for b in at.sidebar.button]
    at.button(key="key-supported").click().run()
    records, warnings = label_store.read(labels)
    assert warnings == [] and [(r.reviewer, r.item, r.label) for r in records] == [
        ("lead@example.org", "a-001#s0#c0", "supported")]
    assert "lead@example.org: labelled 1 of" in html(at)
    assert at.query_params.get("reviewer") in (None, "ana", ["ana"])  # the URL names nobody who labels


def test_signed_out_under_a_login_nobody_labels_not_even_the_name_in_the_url(labels, monkeypatch):
    import sys
    import types

    monkeypatch.setitem(sys.modules, "authlib", types.SimpleNamespace(__version__="1.6.0"))  # the auth extra
    at = review({"is_logged_in": False}, answer="a-001", reviewer="ana")
    assert not at.exception
    assert "Reviewer name" not in [t.label for t in at.sidebar.text_input]
    assert "Sign in" in [b.label for b in at.sidebar.button]
    assert "Sign in (sidebar) before labelling" in html(at)
    at.button(key="key-supported").click().run()
    assert label_store.read(labels)[0] == []
    assert "Not saved: a reviewer name is required" in html(at)


def test_without_a_login_the_name_box_is_there(labels):
    at = review({"email": "test@example.com"}, answer="a-001", reviewer="ana")  # AppTest's default user
    assert [t.label for t in at.sidebar.text_input][:1] == ["Reviewer name"]
    assert "ana: labelled 0 of" in html(at)


@pytest.mark.parametrize("authlib", [None, "1.2.0"], ids=["missing", "too-old"])
def test_signed_out_without_authlib_the_page_says_how_to_install_it(labels, monkeypatch, authlib):
    """[auth] configured but no usable Authlib: st.login could only raise; the sidebar says what to do."""
    import sys
    import types

    if authlib is None:
        monkeypatch.setitem(sys.modules, "authlib", None)  # `import authlib` raises ImportError
    else:
        monkeypatch.setitem(sys.modules, "authlib", types.SimpleNamespace(__version__=authlib))
    at = review({"is_logged_in": False}, answer="a-001")
    assert not at.exception
    assert "Sign in" not in [b.label for b in at.sidebar.button]
    assert "Authlib 1.3.2 or later" in html(at) and "pip install -e &#x27;.[auth]&#x27;" in html(at)


def test_signed_out_with_authlib_there_is_a_sign_in_button(labels, monkeypatch):
    import sys
    import types

    monkeypatch.setitem(sys.modules, "authlib", types.SimpleNamespace(__version__="1.3.2"))
    at = review({"is_logged_in": False}, answer="a-001")
    assert "Sign in" in [b.label for b in at.sidebar.button]
    assert "Authlib 1.3.2 or later" not in html(at)
