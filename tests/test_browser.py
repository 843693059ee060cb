"""One real-browser test: the running app in Debian's headless Chromium, driven by Playwright."""

import json
import os
from pathlib import Path

import pytest
from appserver import free_port, running_app  # noqa: F401 (free_port: imported from here by other tests)
from citecheck.contract.log import checksum
from citecheck.labelling import labels as label_store
from citecheck.web.settings import DEFAULT_LOG

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
PAYLOAD = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)"),
]


@pytest.fixture
def server(tmp_path):
    lines = DEFAULT_LOG.read_text(encoding="utf-8").splitlines()
    hostile = json.loads(lines[1])
    hostile["answer_id"] = "hostile"
    chunk = hostile["chunks"][0]
    chunk["text"] = PAYLOAD + " " + chunk["text"]
    chunk["checksum"] = checksum(chunk["text"])
    for c in hostile["citations"]:
        for key in ("quote_start", "quote_end"):  # markers-shape quotes carry no offsets
            if key in c:
                c[key] += len(PAYLOAD) + 1
    log = tmp_path / "log.jsonl"
    log.write_text(lines[32] + "\n" + json.dumps(hostile) + "\n", encoding="utf-8")
    labels = tmp_path / "labels.jsonl"
    with running_app(["--log", log, "--labels", labels]) as url:
        yield url, labels


def launch(pw):
    """Debian's chromium, headless, with the flags this machine's closed network needs."""
    return pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
        "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"])


def test_review_in_a_real_browser(server):
    from playwright.sync_api import expect, sync_playwright

    url, labels = server
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page()
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{url}/?answer=a-033", timeout=60_000)
        expect(page.get_by_text("Answer a-033")).to_be_visible(timeout=60_000)

        # the verified quote is highlighted in a <mark>; the failed citation's footnote is absent
        expect(page.locator("mark.cc-quote", has_text="take 5-7 business days").first).to_be_visible()
        reader = page.locator(".cc-answer")
        expect(reader.locator("sup")).to_have_count(1)
        expect(page.get_by_text("closest text in the chunk, not a match").first).to_be_visible()

        # label with the keyboard and find the record in the file
        name = page.get_by_role("textbox", name="Reviewer name")
        name.fill("ana")
        name.press("Enter")
        expect(page.get_by_text("ana: labelled 0 of")).to_be_visible(timeout=20_000)
        page.locator("h3").first.click()  # move focus out of the text box
        page.keyboard.press("1")
        expect(page.get_by_text("ana: labelled 1 of")).to_be_visible(timeout=20_000)
        records, _ = label_store.read(labels)
        assert [(r.answer_id, r.label, r.reviewer) for r in records] == [("a-033", "supported", "ana")]

        # a chunk holding an HTML payload shows as literal text and runs nothing
        page.goto(f"{url}/?answer=hostile", timeout=60_000)
        expect(page.get_by_text("Answer hostile")).to_be_visible(timeout=60_000)
        expect(page.get_by_text('<img src=x onerror="window.__pwned=1">').first).to_be_visible()
        assert page.evaluate("window.__pwned === undefined")
        assert page.locator(".cc-chunk img").count() == 0 and not dialogs
        page.screenshot(path=str(Path(labels).parent / "review.png"), full_page=True)
        browser.close()


def test_first_request_to_a_fresh_server_goes_through_the_router(server):
    """Streamlit maps /failures to pages/failures.py before app.py has ever run; the page hands
    over to the router, so the navigation and the page are the real ones."""
    from playwright.sync_api import expect, sync_playwright

    url, _ = server
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page()
        page.goto(f"{url}/failures", timeout=60_000)
        expect(page.get_by_role("heading", name="Failed answers")).to_be_visible(timeout=60_000)
        nav = page.get_by_test_id("stSidebarNav")
        expect(nav.get_by_text("Judge calibration")).to_be_visible()
        expect(nav.get_by_text("common")).to_have_count(0)
        assert page.url.endswith("/failures")
        browser.close()


def test_a_review_link_opened_in_a_new_tab_of_a_running_server_finds_its_page(server):
    """The Failures table's links open in a new tab, a new session of a server that has already
    run: each opens its answer, with no "Page not found" on the way (as /review?... gave)."""
    from urllib.parse import urljoin

    from citecheck.text.markup import review_link
    from playwright.sync_api import expect, sync_playwright

    url, _ = server
    with sync_playwright() as pw:
        browser = launch(pw)
        first = browser.new_context().new_page()
        first.goto(f"{url}/failures", timeout=60_000)
        expect(first.get_by_role("heading", name="Failed answers")).to_be_visible(timeout=60_000)
        tab = browser.new_context().new_page()
        tab.goto(urljoin(f"{url}/failures", review_link("a-033")), timeout=60_000)
        _shows_a033_without_page_not_found(tab)
        browser.close()


def _shows_a033_without_page_not_found(page) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_role("heading", name="Answer a-033")).to_be_visible(timeout=60_000)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=60_000)
    assert "Page not found" not in page.inner_text("body")


def test_review_opened_by_its_name_finds_its_answer_without_page_not_found(server):
    """Review is the default page, which Streamlit serves at the root only: a typed or bookmarked
    /review?answer=... met "Page not found" before the root ran.  A hidden page sends it on to the
    root with its query, and the menu shows Review."""
    from playwright.sync_api import expect, sync_playwright

    url, _ = server
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_context().new_page()
        page.goto(f"{url}/review?answer=a-033", timeout=60_000)
        _shows_a033_without_page_not_found(page)
        assert "/review" not in page.url and "answer=a-033" in page.url
        nav = page.get_by_test_id("stSidebarNav")
        expect(nav.get_by_text("Review", exact=True)).to_have_count(1)  # (the hidden page is not in the menu)
        browser.close()


def test_an_uploaded_log_is_what_the_data_page_shows_at_once(server, tmp_path):
    """Upload a log with two unreadable lines on the Data page: the page's figures and unreadable
    lines are the uploaded log's in the same view (they were the configured log's until the reviewer
    left the page and came back), the banner says which log is shown, and the switch back works."""
    from playwright.sync_api import expect, sync_playwright

    url, _ = server
    good = DEFAULT_LOG.read_text(encoding="utf-8").splitlines()[:9]
    mine = tmp_path / "mine.jsonl"
    mine.write_text("\n".join([good[0], "{not json", *good[1:], '{"log_version": 1}']) + "\n", encoding="utf-8")
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.goto(f"{url}/data", timeout=60_000)
        expect(page.get_by_text("Every line of the loaded logs was readable.")).to_be_visible(timeout=60_000)
        page.locator('input[type="file"]').set_input_files(str(mine))
        expect(page.get_by_role("heading", name="2 unreadable line(s)")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Every line of the loaded logs was readable.")).to_have_count(0)
        expect(page.get_by_text("Showing the uploaded log", exact=False).first).to_be_visible()
        answers = page.get_by_test_id("stMetric").filter(has_text="Answers").first
        expect(answers).to_contain_text("9")
        page.get_by_text("Use the uploaded log").click()
        expect(page.get_by_text("Every line of the loaded logs was readable.")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Showing the uploaded log", exact=False)).to_have_count(0)
        browser.close()
