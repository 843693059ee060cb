"""Why an answer fails, in words, and the item that shows it (checking.answer_problems): the line
the review page shows when the Failures page sends a product owner to an answer."""

from citecheck.checking import answer_problems
from citecheck.checking.files import check_options
from citecheck.labelling import dataset
from citecheck.labelling.items import items_of
from citecheck.web.settings import DEFAULT_CORPUS, DEFAULT_LOG


def test_every_failing_sample_answer_says_why_and_focuses_an_item_of_its_first_problem():
    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    failing = 0
    for result in data.results:
        found = answer_problems.problems(result)
        assert bool(found) == (not result.ok), result.answer.answer_id  # the same test as check's "clean"
        why = answer_problems.why_text(result)
        if not found:
            assert why == ""
            continue
        failing += 1
        assert why.startswith(f"Fails: {found[0].where}: {found[0].words}")
        items = items_of(result)
        n = answer_problems.first_failing_item(result, items)
        if items:
            assert n is not None
            first = found[0]
            item = items[n]
            assert item.sentence == first.sentence or item.citation == first.citation
            if first.citation is not None and any(i.citation == first.citation for i in items):
                assert item.citation == first.citation
    assert failing == 13  # the sample's failing answers, as check and report count them


def test_a_failed_marker_is_named_with_its_sentence_and_reason():
    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    result = data.get("a-035")
    words = [f"{p.where}: {p.words}" for p in answer_problems.problems(result)]
    assert any("marker [7]" in w and "outside 1..5 for the 5 retrieved chunks" in w for w in words), words
    assert all(w.startswith("sentence ") or w.startswith("marker [") for w in words)


def test_a_long_list_of_problems_is_cut_with_a_count():
    data = dataset.load([DEFAULT_LOG], check_options(DEFAULT_CORPUS))
    result = max(data.results, key=lambda r: len(answer_problems.problems(r)))
    n = len(answer_problems.problems(result))
    if n > 1:
        assert answer_problems.why_text(result, limit=1).endswith(f"; and {n - 1} more")
