"""What the review page shows besides the answer (core/citecheck/review/review_view.py), on the bundled
ExpertQA sample: real expert labels and the baseline judge's verdicts on the same items."""

from __future__ import annotations

from pathlib import Path

import pytest
from citecheck.judging import verdicts as verdict_store
from citecheck.judging.judges import BaselineJudge, Progress, judge_items
from citecheck.labelling import dataset
from citecheck.labelling import labels as label_store
from citecheck.labelling.items import LABEL_TEXT, Item
from citecheck.review import paging, review_view
from citecheck.review.html import focus_token
from citecheck.review.queue import labellers, team_progress
from citecheck.web.settings import EXPERTQA_LABELS, EXPERTQA_LOG
from hypothesis import given
from hypothesis import strategies as hs


@pytest.fixture(scope="module")
def expertqa(tmp_path_factory):
    """The sample, its expert labels, and the baseline judge's verdicts on the labelled items."""
    data = dataset.load([EXPERTQA_LOG])
    labels, problems = label_store.read(EXPERTQA_LABELS)
    assert not problems
    target = tmp_path_factory.mktemp("verdicts") / "verdicts.jsonl"
    items = judge_items(data.results, {lab.item for lab in labels if lab.citation is not None},
                        data.items_by_answer)
    BaselineJudge().judge(items, on_verdict=lambda v: verdict_store.append(target, [v]), progress=Progress(total=len(items)))
    verdicts, problems = verdict_store.read(target)
    assert not problems and verdicts
    return data, labels, verdicts


def labelled_item(data, labels, verdicts) -> tuple[Item, list, label_store.Label]:
    """An item with a judge verdict and an expert label, its answer's items and that label."""
    judged = {v.item for v in verdicts}
    for lab in labels:
        if lab.item in judged and data.get(lab.answer_id) is not None:
            items = data.items(lab.answer_id)
            item = next(i for i in items if i.key == lab.item)
            if item.fingerprint == lab.fingerprint:
                return item, items, lab
    raise AssertionError("no labelled, judged item in the sample")


def test_verdicts_are_grouped_by_item_the_latest_of_each_run_kept(expertqa):
    _, _, verdicts = expertqa
    by_item = review_view.judged_by_item(verdicts)
    assert sum(len(runs) for runs in by_item.values()) == len({(v.item, v.run) for v in verdicts})
    again = review_view.judged_by_item([*verdicts, verdict_store.make(verdicts[0].item, "supported", "second look", *verdicts[0].run,
                                                 verdicts[0].prompt_sha256)])
    assert again[verdicts[0].item][verdicts[0].run].rationale == "second look"


def test_blind_mode_hides_verdicts_and_others_until_the_reviewer_labels(expertqa):
    data, labels, verdicts = expertqa
    item, items, expert = labelled_item(data, labels, verdicts)
    current = label_store.latest(labels)
    runs = review_view.judged_by_item(verdicts)[item.key]
    others = label_store.others_by_item(current, "ana").get(item.key, [])
    n = items.index(item)
    assert others and runs

    blind = review_view.item_view(data.get(item.answer_id), items, n, n, current, "ana", runs, others, blind=True)
    assert blind.shown == () and blind.hidden == (f"{len(runs)} judge verdict(s) and {len(others)} other "
                                                  "reviewer label(s) hidden until you label this item (blind mode).")
    assert 'class="cc-focus' in blind.head[0] and len(blind.head) == 2 and blind.whole is not None

    mine = label_store.make_label(item, "not_supported", "ana", note="<script>alert(1)</script>")
    current = label_store.latest([*labels, mine])
    seen = review_view.item_view(data.get(item.answer_id), items, n, n + 1, current, "ana", runs, others, blind=True)
    assert seen.hidden is None and len(seen.head) == 1  # not the focused item: no marker
    own, *verdict_parts, others_part = seen.shown
    assert "Your label: " in own and LABEL_TEXT["not_supported"] in own
    assert "<script>" not in own and "&lt;script&gt;" in own
    assert len(verdict_parts) == len(runs) and all("Judge" in p for p in verdict_parts)
    assert expert.reviewer in others_part and LABEL_TEXT[expert.label] in others_part

    unblind = review_view.item_view(data.get(item.answer_id), items, n, 0, label_store.latest(labels), "ana", runs, others, blind=False)
    assert unblind.hidden is None and unblind.shown == tuple(verdict_parts) + (others_part,)


def test_a_stale_label_is_marked_and_counts_as_unlabelled(expertqa):
    data, labels, verdicts = expertqa
    item, items, _ = labelled_item(data, labels, verdicts)
    old = label_store.make_label(item._replace(fingerprint="sha256:an-older-text"), item.labels[0], "ana")
    current = label_store.latest([old])
    assert review_view.chosen_label(item, current, "ana") is None and review_view.chosen_label(item, current, "") is None
    runs = review_view.judged_by_item(verdicts)[item.key]
    view = review_view.item_view(data.get(item.answer_id), items, 0, 0, current, "ana", runs, [], blind=True)
    assert view.shown[0].startswith('<div class="cc-meta">STALE') and view.hidden.startswith(f"{len(runs)} judge")
    assert review_view.chosen_label(item, label_store.latest([label_store.make_label(item, item.labels[1], "ana")]), "ana") == item.labels[1]


def test_an_item_box_is_one_html_block_with_the_whole_chunk_folded(expertqa):
    data, labels, verdicts = expertqa
    item, items, _ = labelled_item(data, labels, verdicts)
    result, n = data.get(item.answer_id), items.index(item)
    runs = review_view.judged_by_item(verdicts)[item.key]
    others = label_store.others_by_item(label_store.latest(labels), "ana").get(item.key, [])
    before = review_view.item_view(result, items, n, n, label_store.latest(labels), "ana", runs, others, blind=True, moves=4)
    fold = (f'<details class="cc-whole" data-fold="{focus_token(item.key)}"><summary>Whole chunk</summary>'
            f"{before.whole}</details>")
    assert 'data-move="4"' in before.head[0]
    assert before.html() == "".join(before.head) + fold + f'<div class="cc-meta">{before.hidden}</div>'

    mine = label_store.make_label(item, item.labels[0], "ana", note="<b>bold</b> & <img src=x onerror=alert(1)>")
    after = review_view.item_view(result, items, n, n, label_store.latest([*labels, mine]), "ana", runs, others, blind=True, moves=4)
    assert after.html() == "".join(after.head) + fold + "".join(after.shown) and "Your label: " in after.html()
    assert "<img" not in after.html() and "&lt;img src=x" in after.html()

    assert review_view.ItemView(("<p>head</p>",), None, (), None).html() == "<p>head</p>"  # uncited: no fold
    assert review_view.ItemView((), None, (), "1 judge verdict(s) <hidden>").html() == (
        '<div class="cc-meta">1 judge verdict(s) &lt;hidden&gt;</div>')


def test_the_history_in_blind_mode_shows_only_the_reviewers_own_entries(expertqa):
    data, labels, verdicts = expertqa
    item, _, expert = labelled_item(data, labels, verdicts)
    mine = label_store.make_label(item, item.labels[0], "ana")
    events = [*labels, mine]
    hidden = review_view.history_html(events, item, "ana", blind=True, chosen=None)
    others = sum(1 for lab in labels if lab.item == item.key)
    assert expert.reviewer not in hidden and "ana" in hidden
    assert f"{others} entr{'y' if others == 1 else 'ies'} by others hidden" in hidden
    shown = review_view.history_html(events, item, "ana", blind=True, chosen=item.labels[0])
    assert expert.reviewer in shown and "hidden" not in shown


def test_progress_texts_count_what_the_queue_counts(expertqa):
    data, labels, _ = expertqa
    current = label_store.latest(labels)
    reviewer = labels[0].reviewer
    overall = team_progress(data.all_items, labellers(current), reviewer, 2)
    here = label_store.progress(data.items(labels[0].answer_id), current, reviewer)
    text = review_view.progress_text(reviewer, overall, here, 2)
    assert text.startswith(f"{reviewer}: labelled {overall.mine:,} of {overall.total:,} items overall, "
                           f"{here.labelled} of {here.total} in this answer")
    assert text.endswith(f"team: {overall.done:,} of {overall.total:,} items done (2 reviewers each)")
    assert "reviewers each" not in review_view.progress_text(reviewer, overall, here, 1)
    assert review_view.share_done(overall) == overall.done / overall.total
    assert review_view.share_done(team_progress([], {}, reviewer, 1)) == 1.0
    assert review_view.sample_text("sample-1", 2, 5).startswith("Calibration sample sample-1: 2 of 5 sampled items")
    assert "Resume (U) opens the next one" in review_view.sample_text("sample-1", 4, 5)
    # the sample done: no "next one" for Resume to open (the page promised one after the last label)
    done = review_view.sample_text("sample-1", 5, 5)
    assert done == "Calibration sample sample-1: all 5 sampled items labelled by you; none is left for Resume (U) to open."


def test_the_focused_heading_names_the_sentence_and_the_chunk(expertqa):
    data, labels, _ = expertqa
    items = data.items(labels[0].answer_id)
    (title, where), = review_view.focused_heading(items, 0)
    assert title == f"Focused item 1 of {len(items)}"
    assert where == f"sentence {items[0].sentence + 1}, citation of {items[0].chunk_id}"
    uncited = Item("a", 4, None, None, "sha256:x")
    assert review_view.focused_heading([uncited], 0) == [("Focused item 1 of 1", "sentence 5")]


# --- the sentence rows of the page shown -------------------------------------------------------------


@given(sentences=hs.lists(hs.integers(0, 200), max_size=120), page=hs.integers(-2, 8),
       per_citation=hs.integers(1, 3))
def test_the_rows_hold_exactly_the_items_of_the_sentences_shown(sentences, page, per_citation):
    total = max(sentences, default=-1) + 1
    items = [Item("a", s, c, f"c{c}", "") for s in sorted(sentences) for c in range(per_citation)]
    shown = paging.window(total, page)
    rows = review_view.by_sentence(items, shown)
    expected: dict[int, list[int]] = {}
    for n, item in enumerate(items):  # the slow way: every item looked at
        if shown.start <= item.sentence < shown.end:
            expected.setdefault(item.sentence, []).append(n)
    assert rows == expected
    if items:
        focus = len(items) // 2
        start = paging.window(total, review_view.start_page(items, focus))
        assert start.start <= items[focus].sentence < start.end  # the focused item's page opens
    assert review_view.start_page([], 0) == 1


def test_label_buttons_tick_the_current_label_and_number_the_focused_items(expertqa):
    data, labels, _ = expertqa
    item = next(i for i in data.all_items if i.citation is not None)
    buttons = review_view.label_buttons(item, item.labels[1], None, "key", shortcuts=True)
    assert [b.label for b in buttons] == list(item.labels) and [b.shortcut for b in buttons] == ["1", "2", "3", "4"]
    assert [b.primary for b in buttons] == [False, True, False, False]
    assert buttons[1].text == "\u2713 " + LABEL_TEXT[item.labels[1]] and buttons[0].text == LABEL_TEXT[item.labels[0]]
    assert buttons[0].key == f"key-{item.labels[0]}" and buttons[0].help is None


def test_a_rows_label_buttons_are_data_and_a_click_is_taken_only_for_its_own_item(expertqa):
    from citecheck.labelling import guidelines
    from citecheck.review.html import focus_token

    data, _, _ = expertqa
    item, other = [i for i in data.all_items if i.citation is not None][:2]
    rules = guidelines.load()
    row = review_view.row_labels_data(item, item.labels[2], rules)
    assert row["token"] == focus_token(item.key) and row["chosen"] == item.labels[2]
    assert [entry[:2] for entry in row["labels"]] == [[label, LABEL_TEXT[label]] for label in item.labels]
    assert all(entry[2] == (rules.definitions.get(entry[0]) or "") for entry in row["labels"])  # plain text: a title
    assert review_view.row_labels_data(item, None, None)["labels"][0][2] == ""
    click = {"token": row["token"], "label": item.labels[1]}
    assert review_view.row_choice(click, item) == item.labels[1]
    assert review_view.row_choice({**click, "label": item.labels[2]}, item) == item.labels[2]  # (repeats: saved as nothing)
    assert review_view.row_choice(click, other) is None  # another row's click
    for bad in (None, "supported", {"label": item.labels[1]}, {**click, "label": "verified"}, {**click, "label": 3}):
        assert review_view.row_choice(bad, item) is None


def test_the_row_script_puts_text_in_the_page_as_text_only():
    script = (Path(__file__).parent.parent / "pages" / "row_labels" / "row.js").read_text(encoding="utf-8")
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script and "textContent" in script


def test_label_help_is_the_guidelines_definition_as_literal_text():
    from citecheck.labelling import guidelines
    from citecheck.text.markup import md_literal

    rules = guidelines.load()  # the bundled guidelines
    label = next(iter(rules.definitions))
    assert review_view.label_help(rules, label) == md_literal(rules.definitions[label]) and review_view.label_help(None, label) is None


def test_the_answer_parts_and_unresolved_citations_of_the_sample():
    from citecheck.checking.files import check_options
    from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG

    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    result = data.results[0]
    head, extras = review_view.answer_parts(result)
    assert len(head) == 3 and "Question" in head[1] and extras == []
    bad = [(r, s) for r in data.results for s in r.sentences
           if any(r.citations[i].chunk_index is None for i in s.citations)]
    assert bad, "the sample log has a citation to no chunk"
    r, s = bad[0]
    parts = review_view.unresolved(r, s)
    assert len(parts) == sum(r.citations[i].chunk_index is None for i in s.citations)
    fine = next(s for r_ in data.results for s in r_.sentences if s.citations and all(
        r_.citations[i].chunk_index is not None for i in s.citations))
    assert review_view.unresolved(next(r_ for r_ in data.results if fine in r_.sentences), fine) == []


def test_counts_on_the_review_page_use_the_figures_format():
    """"800000 items" on Review against "800,000" on Failures: one number format."""
    from citecheck.review.html import answer_heading_html
    from citecheck.review.queue import TeamProgress

    here = label_store.Progress(labelled=1, total=2, stale=0)
    text = review_view.progress_text("ana", TeamProgress(mine=1234, done=5678, total=800000, overlap=2), here, 2)
    assert "1,234 of 800,000 items overall" in text and "5,678 of 800,000 items done" in text
    assert "(12,345 of 800,000)" in answer_heading_html("a", 12345, 800000)
    assert "3,000 of 12,000 sampled items" in review_view.sample_text("s", 3000, 12000)


def test_the_answer_head_says_why_it_fails_and_never_shows_a_bare_question():
    import json

    from citecheck.checking import answer_problems
    from citecheck.checking.files import check_options
    from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG

    lines = DEFAULT_LOG.read_text(encoding="utf-8").splitlines()
    failing = next(x for x in lines if '"a-035"' in x)
    clean = json.loads(lines[0])
    clean["question"] = ""
    data = dataset.load_bytes("x.jsonl", (failing + "\n" + json.dumps(clean) + "\n").encode(),
                              check_options(DEFAULT_CORPUS))
    head, _ = review_view.answer_parts(data.get("a-035"))
    why = answer_problems.why_text(data.get("a-035"))
    assert why and any("cc-why" in h and "Fails: sentence" in h for h in head)
    assert any("<b>Question</b>" in h or "Question" in h for h in head)
    head, _ = review_view.answer_parts(data.get("a-001"))
    assert not any("Question" in h for h in head)  # no question logged: no bare "Question:"
    assert not any("cc-why" in h for h in head)  # and it does not fail


def test_the_focus_mark_names_the_keys_the_focused_item_takes():
    """An uncited sentence takes two labels, a citation four: the focus mark says 'keys 1-2' or
    'keys 1-4', the number of its label buttons (pages/_review_items.py draws one per label)."""
    from citecheck.web.settings import DEFAULT_LOG

    data = dataset.load([DEFAULT_LOG])
    items = data.items("a-035")
    kinds = {item.citation is None for item in items}
    assert kinds == {True, False}  # both kinds in one answer
    for n, item in enumerate(items):
        view = review_view.item_view(data.get("a-035"), items, n, n, {}, "ana", {}, [], blind=True)
        mark = next(part for part in view.head if 'class="cc-focus"' in part)
        buttons = review_view.label_buttons(item, None, None, "p", True)
        assert [b.shortcut for b in buttons] == [str(k) for k in range(1, len(item.labels) + 1)]
        assert f"keys 1-{len(buttons)} label it" in mark
        assert ("keys 1-2 label it" in mark) == (item.citation is None)


def test_what_the_last_action_did_is_said_in_the_focused_items_box_only():
    """The notice of the last key or click ("Saved ...", "This is the last item ...") goes right under
    the focus mark, where the page scrolls to; no other box carries it (pages/review.py draws it at
    the top only for an answer without items)."""
    from citecheck.review.html import notice_html
    from citecheck.web.settings import DEFAULT_LOG

    data = dataset.load([DEFAULT_LOG])
    items = data.items("a-035")
    said = ("success", 'Saved \u201cSupported\u201d for sentence 1 of <a-035>.')
    for n in range(len(items)):
        view = review_view.item_view(data.get("a-035"), items, n, 1, {}, "ana", {}, [], blind=True, notice=said)
        marks = [k for k, part in enumerate(view.head) if 'class="cc-focus"' in part]
        if n == 1:
            assert marks == [0] and view.head[1] == notice_html(*said)
            assert "&lt;a-035&gt;" in view.head[1] and "<a-035>" not in view.html()
        else:
            assert marks == [] and all(notice_html(*said) not in part for part in view.head)


def test_a_marker_out_of_range_is_told_with_the_answers_chunk_count():
    """"[7]: the marker number is outside 1..n for the n retrieved chunks" left the reviewer to
    count: the page and its "Fails:" line name n, and say the same words."""
    import json

    from citecheck.checking.answer_problems import why_text
    from citecheck.contract import reasons
    from citecheck.web.settings import DEFAULT_LOG

    data = dataset.load([DEFAULT_LOG])
    result = data.get("a-035")
    chunks = len(json.loads(next(line for line in DEFAULT_LOG.read_text().splitlines() if '"a-035"' in line))["chunks"])
    words = f"the marker number is outside 1..{chunks} for the {chunks} retrieved chunks"
    shown = [part for s in result.sentences for part in review_view.unresolved(result, s)]
    assert shown == [f'<div class="cc-fail">[7]: {words}</div>']
    assert f"marker [7]: {words}" in why_text(result)
    assert reasons.describe(reasons.MARKER_OUT_OF_RANGE) == reasons.DESCRIPTIONS[reasons.MARKER_OUT_OF_RANGE]
    assert "none were retrieved" in reasons.describe(reasons.MARKER_OUT_OF_RANGE, 0)
    assert "only 1 chunk" in reasons.describe(reasons.MARKER_OUT_OF_RANGE, 1)
    assert reasons.describe(reasons.QUOTE_NOT_FOUND, 5) == reasons.DESCRIPTIONS[reasons.QUOTE_NOT_FOUND]


def test_a_sentence_whose_citations_all_failed_is_not_called_uncited_beside_them():
    """On the review page a sentence with no citation is "uncited"; one whose every citation failed
    (a chunk never retrieved, a marker out of range) says "no valid citation", next to the failed
    citations it shows.  ``check``'s text report keeps the code, ``uncited``, for both."""
    from citecheck.reports.check_report import sentence_flags
    from citecheck.web.settings import DEFAULT_LOG

    data = dataset.load([DEFAULT_LOG])
    seen = set()
    for result in data.results:
        for s in result.sentences:
            if not s.uncited or s.refusal:
                continue
            words = sentence_flags(s)
            assert sentence_flags(s, words=False)[0] == "uncited"
            if s.citations:
                assert "no valid citation" in words and "uncited" not in words
                assert all(result.citations[i].reasons for i in s.citations)
            else:
                assert "uncited" in words
            seen.add(bool(s.citations))
    assert seen == {True, False}  # the sample has both
