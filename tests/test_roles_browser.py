"""Roles under sign-in, in a real browser (Debian's headless Chromium, Playwright): a reviewer
without the lead role who opens the Assign page, the Team page or a disagreement is told which role
they need and is given nothing to act with; a lead assigns, sees the team and adjudicates.

Sign-in cannot run here (no identity provider, no network), so the server is started with an
``[auth]`` section in a secrets file of the test's own and each browser context carries the cookie
Streamlit sets after a login (``_streamlit_user``, signed with that section's ``cookie_secret``):
the server then gives the page ``st.user`` with ``is_logged_in`` and the email, as after a real login."""

from __future__ import annotations

import json
import os

import pytest
from appserver import running_app
from citecheck.labelling import labels
from citecheck.labelling.dataset import load
from citecheck.storage import streams
from test_browser import CHROMIUM, launch
from test_review_browser import LINES

LEAD, REVIEWER = "ada@example.org", "bob@example.org"
SECRET = "citecheck-browser-test-cookie-secret"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


def signed_cookie(url: str, email: str) -> dict:
    """The cookie a login leaves (streamlit's own signing, so the server reads it as its own)."""
    from streamlit.web.server.server_util import AUTH_COOKIE_NAME
    from streamlit.web.server.starlette.starlette_app_utils import create_signed_value

    claims = {"origin": url, "is_logged_in": True, "email": email, "name": email.split("@")[0]}
    value = create_signed_value(SECRET, AUTH_COOKIE_NAME, json.dumps(claims)).decode("latin-1")
    return {"name": AUTH_COOKIE_NAME, "value": value, "url": url}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """One server for the module: sign-in configured, ada a lead, bob a reviewer, two reviewers who disagree."""
    folder = tmp_path_factory.mktemp("roles")
    log, store = folder / "log.jsonl", folder / "labels.jsonl"
    log.write_text("".join(line + "\n" for line in LINES[:3]), encoding="utf-8")
    item = load([log]).all_items[0]
    labels.append(store, labels.make_label(item, "supported", "ana@example.org"))
    labels.append(store, labels.make_label(item, "not_supported", REVIEWER))
    roles = folder / "roles.toml"
    roles.write_text(f'[roles]\n"{LEAD}" = "lead"\n"{REVIEWER}" = "reviewer"\n', encoding="utf-8")
    secrets = folder / "secrets.toml"
    secrets.write_text(  # (the URL is only checked by st.login, which these tests never reach)
        '[auth]\nredirect_uri = "http://127.0.0.1:1/oauth2callback"\n'
        f'cookie_secret = "{SECRET}"\nclient_id = "citecheck-test"\nclient_secret = "unused"\n'
        'server_metadata_url = "http://127.0.0.1:1/.well-known/openid-configuration"\n', encoding="utf-8")
    with pytest.MonkeyPatch.context() as env:  # (read by the server only: the checkout's .streamlit left alone)
        env.setenv("STREAMLIT_SECRETS_FILES", str(secrets))
        with running_app(["--log", log, "--labels", store, "--corpus", "", "--roles", roles, "--overlap", "2"]) as url:
            env.delenv("STREAMLIT_SECRETS_FILES")
            yield url, store, item


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


def signed_in(browser, url: str, email: str | None):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    if email:
        context.add_cookies([signed_cookie(url, email)])
    return context.new_page()


def visit(page, url: str, heading: str) -> None:
    from playwright.sync_api import expect

    page.goto(url, timeout=60_000)
    expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible(timeout=60_000)
    expect(page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')).to_have_count(1, timeout=30_000)


def raw(store) -> list[dict]:
    return streams.read_all(store, labels.STREAM, lambda v: v)[0]


def test_a_reviewer_is_told_the_role_each_lead_page_needs_and_cannot_act(app, browser):
    from playwright.sync_api import expect

    url, store, _ = app
    before = raw(store)
    bob = signed_in(browser, url, REVIEWER)
    told = f"needs the lead role (you are signed in as {REVIEWER}, a reviewer). Ask a lead to add you to the roles file."

    visit(bob, f"{url}/assign?reviewer={LEAD}", "Assign work")  # a lead's name in the address changes nothing
    expect(bob.get_by_text(f"This page {told}")).to_be_visible()
    expect(bob.get_by_role("button", name="Assign", exact=True)).to_have_count(0)
    expect(bob.get_by_role("textbox", name="Reviewers")).to_have_count(0)

    visit(bob, f"{url}/team", "Team")
    expect(bob.get_by_text(f"The Team page {told}")).to_be_visible()
    expect(bob.get_by_role("heading", name="Reviewers", exact=True)).to_have_count(0)
    expect(bob.get_by_role("button", name="Download the figures (CSV)")).to_have_count(0)

    visit(bob, f"{url}/disagreements", "Disagreements")
    expect(bob.get_by_text(f"Adjudicating {told}")).to_be_visible()
    for name in ("Supported", "Partially supported", "Not supported"):
        expect(bob.get_by_role("button", name=name)).to_have_count(0)
    expect(bob.get_by_placeholder("optional")).to_have_count(0)
    bob.keyboard.press("1")  # the adjudication keys do nothing either
    expect(bob.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')).to_have_count(1, timeout=30_000)

    nobody = signed_in(browser, url, None)  # under sign-in, not signed in: a name in the address is nobody
    visit(nobody, f"{url}/assign?reviewer={LEAD}", "Assign work")
    expect(nobody.get_by_text("This page needs the lead role (you are signed in as nobody, a reviewer).",
                              exact=False)).to_be_visible()
    expect(nobody.get_by_role("button", name="Assign", exact=True)).to_have_count(0)
    assert raw(store) == before  # nothing written
    bob.context.close()
    nobody.context.close()


def test_a_lead_assigns_sees_the_team_and_adjudicates(app, browser):
    from playwright.sync_api import expect

    url, store, item = app
    ada = signed_in(browser, url, LEAD)

    visit(ada, f"{url}/assign", "Assign work")
    expect(ada.get_by_text("needs the lead role", exact=False)).to_have_count(0)
    ada.get_by_role("radio", name="Answer ids").check(force=True)
    ids = ada.get_by_role("textbox", name="Answer ids")
    ids.fill("a-002")
    ids.press("Control+Enter")
    expect(ada.get_by_text("1 item(s) from", exact=False)).to_be_visible(timeout=20_000)
    reviewers = ada.get_by_role("textbox", name="Reviewers")
    reviewers.fill(REVIEWER)
    reviewers.press("Enter")
    expect(ada.get_by_role("button", name="Assign", exact=True)).to_be_enabled(timeout=20_000)
    ada.get_by_role("button", name="Assign", exact=True).click()
    expect(ada.get_by_text("Assigned 1 item(s) as", exact=False)).to_be_visible(timeout=20_000)
    made = raw(store)[-1]
    assert (made["event"], made["lead"]) == ("assignment", LEAD)

    visit(ada, f"{url}/team", "Team")
    expect(ada.get_by_text("needs the lead role", exact=False)).to_have_count(0)
    expect(ada.get_by_role("heading", name="Reviewers", exact=True)).to_be_visible()
    expect(ada.get_by_role("button", name="Download the figures (CSV)")).to_be_visible()

    visit(ada, f"{url}/disagreements", "Disagreements")
    expect(ada.get_by_text("needs the lead role", exact=False)).to_have_count(0)
    ada.get_by_role("button", name="Partially supported").click()
    expect(ada.get_by_text(f"Recorded \u201cPartially supported\u201d for {item.key}")).to_be_visible(timeout=20_000)
    decided = raw(store)[-1]
    assert (decided["event"], decided["adjudicator"], decided["item"], decided["label"]) == (
        "adjudication", LEAD, item.key, "partial")
    ada.context.close()
