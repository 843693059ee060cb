"""Roles (core/citecheck/review/roles.py, pages/_roles.py): the roles file, the role of whoever is
signed in, and the pages a reviewer may not use (Assign, the Disagreements page's adjudication),
through AppTest with injected users; without sign-in everyone is a lead and the Data page says so."""

import pytest
import streamlit as st
from citecheck.labelling import labels as label_store
from citecheck.labelling.assignments import Assignment
from citecheck.labelling.items import items_of
from citecheck.review import roles
from citecheck.review.identity import Identity
from citecheck.review.roles import LEAD, REVIEWER, RolesError
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG, load_settings
from streamlit.testing.v1 import AppTest
from test_app import APP, html

ROLES = """roles_version = 1
[roles]
"Ada@Example.org" = "lead"
"group:leads" = "lead"
"bob@example.org" = "reviewer"
"""


def signed_in(email: str) -> Identity:
    return Identity(email, "login")


def test_an_email_entry_wins_then_any_lead_group_and_nobody_else_leads():
    r = roles.parse_roles(ROLES)
    assert roles.role_of(signed_in("ada@example.org"), r).role == LEAD  # case does not matter
    assert roles.role_of(signed_in("cy@example.org"), r, {"groups": ["staff", "leads"]}).role == LEAD
    assert roles.role_of(signed_in("cy@example.org"), r, {"groups": "leads"}).role == LEAD
    assert roles.role_of(signed_in("bob@example.org"), r, {"groups": ["leads"]}).role == REVIEWER  # own entry wins
    assert roles.role_of(signed_in("cy@example.org"), r, {"groups": ["staff", 7]}).role == REVIEWER
    assert roles.role_of(signed_in("cy@example.org"), r).role == REVIEWER
    nobody = roles.role_of(signed_in("ada@example.org"), roles.Roles())
    assert nobody.role == REVIEWER and "no roles file" in nobody.why


def test_without_sign_in_everyone_leads_and_signed_out_nobody_does():
    r = roles.parse_roles(ROLES)
    for source in ("url", "session", "none"):
        assert roles.role_of(Identity("bob@example.org", source), r).lead
    assert roles.role_of(Identity("", "signed-out"), r).role == REVIEWER


def test_the_message_names_the_reviewer_and_says_what_to_do():
    role = roles.role_of(signed_in("bob@example.org"), roles.parse_roles(ROLES))
    assert roles.needs_lead(role, "This page") == ("This page needs the lead role (you are signed in as "
                                                   "bob@example.org, a reviewer). Ask a lead to add you to the "
                                                   "roles file.")
    assert roles.needs_lead(roles.role_of(signed_in("ada@example.org"), roles.parse_roles(ROLES)), "x") is None


@pytest.mark.parametrize("text, words", [
    ('[roles]\n"a@b.c" = "boss"\n', "a role is \"lead\" or \"reviewer\""),
    ('[roles\n', "not TOML"),
    ('roles_version = 2\n', "roles_version 2"),
    ('roles = "ada"\n', "must be a table"),
    ('leads = ["ada"]\n', "unknown key 'leads'"),
    ('[roles]\n"group:" = "lead"\n', "empty name"),
    ('[roles]\n"a@b.c" = 1\n', "a role is"),
])
def test_a_bad_roles_file_is_refused_naming_the_file_and_the_entry(text, words):
    with pytest.raises(RolesError) as caught:
        roles.parse_roles(text, "team/roles.toml")
    assert str(caught.value).startswith("team/roles.toml: ") and words in str(caught.value)


def test_load_names_a_missing_file(tmp_path):
    with pytest.raises(RolesError, match="cannot read the roles file"):
        roles.load(tmp_path / "nope.toml")
    assert roles.load(None) == roles.Roles()


def test_the_roles_and_lock_settings_are_read(tmp_path):
    path = tmp_path / "roles.toml"
    cfg = load_settings(["--roles", str(path), "--lock", "5"], {})
    assert cfg.roles == path.resolve() and cfg.lock_minutes == 5
    assert load_settings([], {"CITECHECK_LOCK_MINUTES": "7"}).lock_minutes == 7
    assert load_settings([], {}).lock_minutes == 30 and load_settings([], {}).roles is None
    with pytest.raises(SystemExit, match="CITECHECK_LOCK_MINUTES must be a whole number of minutes"):
        load_settings([], {"CITECHECK_LOCK_MINUTES": "soon"})


# --- the pages ------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def labels(tmp_path, monkeypatch):
    st.cache_resource.clear()
    st.cache_data.clear()
    (tmp_path / "roles.toml").write_text(ROLES, encoding="utf-8")
    monkeypatch.setenv("CITECHECK_LOGS", str(DEFAULT_LOG))
    monkeypatch.setenv("CITECHECK_CORPUS", str(DEFAULT_CORPUS))
    monkeypatch.setenv("CITECHECK_LABELS", str(tmp_path / "labels.jsonl"))
    monkeypatch.setenv("CITECHECK_VERDICTS", str(tmp_path / "verdicts.jsonl"))
    monkeypatch.setenv("CITECHECK_ROLES", str(tmp_path / "roles.toml"))
    return tmp_path / "labels.jsonl"


def page(path: str, user: dict | None = None, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if user is not None:
        at.user = user
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    return at.switch_page(path).run()


REVIEWER_USER = {"is_logged_in": True, "email": "bob@example.org"}
LEAD_USER = {"is_logged_in": True, "email": "ada@example.org"}
NEEDS = "needs the lead role (you are signed in as bob@example.org, a reviewer). Ask a lead to add you to the roles file."


def disagreement(labels_path):
    from citecheck.labelling import dataset

    items = items_of(dataset.load([DEFAULT_LOG]).get("a-001"))
    label_store.append(labels_path, label_store.make_label(items[0], "supported", "ana"))
    label_store.append(labels_path, label_store.make_label(items[0], "not_supported", "cy"))
    return items[0]


def test_a_reviewer_cannot_adjudicate(labels):
    item = disagreement(labels)
    at = page("pages/disagreements.py", REVIEWER_USER)
    assert not at.exception
    assert f"Adjudicating {NEEDS}" in html(at)
    assert not [b for b in at.button if b.label == "Supported"]  # no adjudication buttons
    assert "Not adjudicated yet" in html(at)  # the disagreement itself is shown
    assert label_store.adjudications(label_store.read_events(labels)[0]) == {}
    lead = page("pages/disagreements.py", LEAD_USER)
    next(b for b in lead.button if b.label == "Supported").click().run()
    assert label_store.adjudications(label_store.read_events(labels)[0])[item.key].adjudicator == "ada@example.org"


def test_a_reviewer_cannot_assign_and_a_lead_can(labels):
    at = page("pages/assign.py", REVIEWER_USER)
    assert not at.exception
    assert f"This page {NEEDS}" in html(at)
    assert not [b for b in at.button if b.label == "Assign"]
    lead = page("pages/assign.py", LEAD_USER)
    assert not lead.exception and NEEDS not in html(lead)
    lead.radio(key="assign_how").set_value("Answer ids").run()
    lead.text_area(key="assign_ids").input("a-001 a-002").run()
    lead.text_input(key="assign_reviewers").input("ana,cy:3").run()
    next(b for b in lead.button if b.label == "Assign").click().run()
    assert not lead.exception
    (made,) = [e for e in label_store.read_events(labels)[0] if isinstance(e, Assignment)]
    assert made.lead == "ada@example.org" and made.source == "answers"
    assert [who for who, _ in made.items] == ["ana", "cy"]
    assert f"as {made.assignment}" in html(lead)
    rows = lead.dataframe[0].value
    assert list(rows["reviewer"]) == ["ana", "cy"] and sum(rows["left"]) == made.total


def test_a_lead_group_from_the_sign_in_claims_may_assign(labels):
    at = page("pages/assign.py", {"is_logged_in": True, "email": "cy@example.org", "groups": ["leads"]})
    assert not at.exception and "needs the lead role" not in html(at)
    assert [b for b in at.button if b.label == "Assign"]


def test_without_sign_in_everyone_is_a_lead_and_the_data_page_says_so(labels):
    at = page("pages/data.py")
    assert not at.exception
    assert "No sign-in is configured, so everyone is a lead" in html(at)
    at = page("pages/assign.py", reviewer="anyone")
    assert not at.exception and "needs the lead role" not in html(at)
    signed = page("pages/data.py", LEAD_USER)
    assert "No sign-in is configured" not in html(signed)


def test_a_broken_roles_file_is_said_and_nobody_leads(labels, tmp_path):
    (tmp_path / "roles.toml").write_text('[roles]\n"ada@example.org" = "boss"\n', encoding="utf-8")
    at = page("pages/assign.py", LEAD_USER)
    assert not at.exception
    assert "a role is &quot;lead&quot; or &quot;reviewer&quot;" in html(at) and "Until it is fixed nobody is a lead" in html(at)
    assert "needs the lead role (you are signed in as ada@example.org" in html(at)


def test_citecheck_app_refuses_to_start_with_a_missing_or_broken_roles_file(tmp_path):
    from citecheck.cli.app_commands import problems

    bad = tmp_path / "bad.toml"
    bad.write_text('[roles]\n"ada@example.org" = "admin"\n', encoding="utf-8")
    found = problems(load_settings(["--roles", str(bad)], {}))
    assert any(p.startswith("--roles: ") and "a role is" in p for p in found)
    assert f"--roles {tmp_path / 'nope.toml'}: no such file" in problems(load_settings(["--roles", str(tmp_path / "nope.toml")], {}))
    good = tmp_path / "roles.toml"
    good.write_text(ROLES, encoding="utf-8")
    assert not [p for p in problems(load_settings(["--roles", str(good)], {})) if "roles" in p]
