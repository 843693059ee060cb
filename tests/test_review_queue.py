"""The labelling queue with overlap, the team's progress, the reviewer's identity, the focus marker and the key listener."""

import pytest
from citecheck.labelling.items import Item
from citecheck.review import identity
from citecheck.review.html import focus_marker_html, focus_token, run_token
from citecheck.review.queue import TeamProgress, next_in_queue, team_progress


def item(answer: str, sentence: int) -> Item:
    return Item(answer, sentence, 0, "c1", f"fp-{answer}-{sentence}")


A = [("a1", [item("a1", 0), item("a1", 1)]), ("a2", [item("a2", 0)]), ("a3", [item("a3", 0)])]


def team_of(*pairs):
    """(reviewer, answer, sentence) triples -> the labellers map, fingerprints current."""
    out = {}
    for who, answer, sentence in pairs:
        it = item(answer, sentence)
        out.setdefault(it.key, {})[who] = it.fingerprint
    return out


def test_queue_moves_on_across_answers_and_says_when_finished():
    assert next_in_queue(A, {}, "ana", 1, after=("a1", 1)) == ("a2", 0)
    done = team_of(("ana", "a1", 0), ("ana", "a1", 1), ("ana", "a2", 0), ("ana", "a3", 0))
    assert next_in_queue(A, done, "ana", 1, after=("a3", 0)) is None


def test_queue_comes_round_to_items_passed_over_but_never_to_labelled_ones():
    team = team_of(("ana", "a2", 0), ("ana", "a3", 0))
    assert next_in_queue(A, team, "ana", 1, after=("a3", 0)) == ("a1", 0)


def test_overlap_skips_done_items_and_prefers_started_ones():
    team = team_of(("ben", "a3", 0), ("ben", "a1", 0), ("cy", "a1", 0))
    # overlap 1: everything ben touched is done for ana
    assert next_in_queue(A, team, "ana", 1) == ("a1", 1)
    # overlap 2: a1#0 is done (ben, cy); a3 was started by ben, so it comes before the untouched a1#1
    assert next_in_queue(A, team, "ana", 2) == ("a3", 0)
    assert next_in_queue(A, team, "ben", 2) == ("a1", 1)


def test_stale_labels_do_not_count():
    stale = {item("a1", 0).key: {"ana": "an old fingerprint"}}
    assert next_in_queue(A, stale, "ana", 1) == ("a1", 0)


def test_team_progress_counts_own_and_done_items():
    items = [i for _, its in A for i in its]
    team = team_of(("ana", "a1", 0), ("ben", "a1", 0), ("ben", "a2", 0))
    assert team_progress(items, team, "ana", 2) == TeamProgress(1, 1, 4, 2)
    assert team_progress(items, team, "ben", 1) == TeamProgress(2, 2, 4, 1)


@pytest.mark.parametrize(("url", "session", "user", "expected"), [
    ("ana", None, None, ("ana", "url")),
    ("ana", "bob", None, ("bob", "session")),
    (None, None, None, ("", "none")),
    ("  \x00ana\n ", None, None, ("ana", "url")),
    ("ana", "bob", {"is_logged_in": True, "email": "lead@example.org"}, ("lead@example.org", "login")),
    ("ana", None, {"email": "test@example.com"}, ("ana", "url")),  # no [auth]: st.user has no is_logged_in
    ("ana", "bob", {"is_logged_in": False}, ("", "signed-out")),  # [auth] set: only a login names the reviewer
    ("ana", None, {"is_logged_in": True}, ("", "signed-out")),  # signed in without an email: nobody to record
    (None, None, {"is_logged_in": True, "email": " lead@example.org\n"}, ("lead@example.org", "login")),
])
def test_identity(url, session, user, expected):
    who = identity.resolve(url, session, user)
    assert (who.name, who.source) == expected
    assert who.signed_in == (expected[1] == "login")
    assert who.by_login == (expected[1] in ("login", "signed-out"))


def test_the_focus_marker_carries_no_untrusted_text():
    key = '"><script>alert(1)</script>#s0#c0'
    token = focus_token(key)
    marker = focus_marker_html(key, 1, 2, 7, 4)
    assert "<script>alert" not in marker and "alert" not in marker
    assert f'data-focus="{token}" data-move="7"' in marker  # what the key listener scrolls to, once per move
    assert focus_marker_html(key, 1, 2, 8, 4) != marker  # a move onto the same item is a new mark
    with pytest.raises(ValueError):  # the move count is a number, never text from elsewhere
        focus_marker_html(key, 1, 2, '7"><script>', 4)  # type: ignore[arg-type]
    run = run_token()
    assert f'data-move="7" data-run="{run}"' in focus_marker_html(key, 1, 2, 7, 4, run)  # a mark per run of the page
    assert run_token() != run
    with pytest.raises(ValueError):  # the run is hex from run_token, never text from elsewhere
        focus_marker_html(key, 1, 2, 7, 4, '1"><script>')


def test_the_key_queue_installer_carries_only_its_constants():
    from citecheck.review import keypresses

    page = keypresses.installer_html()
    assert page.count("</script>") == 1 and page.startswith("<script>")  # its code cannot end the element early
    assert keypresses.installer_html() == page  # the same on every run: the frame is not drawn again
    code = keypresses.script()
    assert "@" not in code and "window.__ccKeyQueue" in code
    for key in "1234jknpuzJKNPUZ":
        assert key in code.split('keys = "')[1].split('"')[0]
