"""The Calibration page's choices read back from the session and the address (core/citecheck/judging/calibration_address.py)."""

from pathlib import Path

from citecheck.judging import calibration_address
from hypothesis import given
from hypothesis import strategies as st

choices = st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=6, unique=True)
anything = st.one_of(st.none(), st.text(max_size=8), st.integers(), st.booleans())


def test_the_session_wins_then_the_address_then_the_first_choice():
    sets = calibration_address.LABEL_SETS
    assert calibration_address.chosen("expertqa", "configured", sets) == "configured"
    assert calibration_address.chosen("expertqa", calibration_address.ABSENT, sets) == "expertqa"
    assert calibration_address.chosen(None, calibration_address.ABSENT, sets) == "configured"
    assert calibration_address.chosen("../etc/passwd", calibration_address.ABSENT, sets) == "configured"  # an old or forged link falls back
    assert calibration_address.chosen(["expertqa"], calibration_address.ABSENT, sets) == "configured"  # (a repeated parameter is not a choice)


def test_no_sample_chosen_in_the_session_wins_over_a_sample_in_an_old_address():
    offered = [None, Path("a/sample-1.jsonl"), Path("a/sample-2.jsonl")]
    url_value = calibration_address.from_param("sample-2.jsonl", offered, label=lambda p: p.name)
    assert url_value == offered[2]
    assert calibration_address.chosen(url_value, None, offered) is None  # the session said "none: all labels"
    assert calibration_address.chosen(url_value, calibration_address.ABSENT, offered) == offered[2]  # a new session: the address's


def test_a_sample_is_named_in_the_address_by_file_name_never_by_path():
    offered = [None, Path("/data/labels/sample-1.jsonl")]
    name = lambda p: p.name  # noqa: E731
    assert calibration_address.param(offered[1], offered, name) == "sample-1.jsonl"
    assert calibration_address.param(None, offered, name) is None
    assert calibration_address.from_param("/data/labels/sample-1.jsonl", offered, name) is None  # a path is not a name on offer
    assert calibration_address.from_param("/etc/passwd", offered, name) is None
    assert calibration_address.from_param("sample-1.jsonl", offered, name) == offered[1]


def test_a_confidence_level_reads_back_from_its_address_text():
    offered = [0.95, 0.8, 0.9, 0.99]
    assert calibration_address.param(0.9, offered) == "0.9"
    assert calibration_address.from_param("0.9", offered) == 0.9
    assert calibration_address.from_param("0.95", offered) is None  # the default is no parameter: nothing to look up
    assert calibration_address.from_param("0.5", offered) is None


@given(choices, anything, anything)
def test_the_choice_is_always_one_on_offer(offered, url, session):
    got = calibration_address.chosen(url, session, offered)
    assert got in offered
    if session in offered:
        assert got == session
    elif url in offered:
        assert got == url
    else:
        assert got == offered[0]


@given(choices, st.data())
def test_a_choice_written_to_the_address_reads_back_as_itself(offered, data):
    value = data.draw(st.sampled_from(offered))
    written = calibration_address.param(value, offered)
    assert (written is None) == (value == offered[0])  # the default leaves the address bare
    back = calibration_address.from_param(written, offered)
    assert calibration_address.chosen(back, calibration_address.ABSENT, offered) == value  # a new session (reload, restart) gets it back


runs = st.lists(st.tuples(st.text(max_size=6), st.text(max_size=6)), min_size=1, max_size=5, unique=True)


@given(runs, st.data())
def test_a_judge_run_written_to_the_address_reads_back_as_itself(offered, data):
    run = data.draw(st.sampled_from(offered))
    judge, prompt = calibration_address.run_params(run, offered)
    assert (judge is None and prompt is None) == (run == offered[0])
    assert calibration_address.chosen(calibration_address.run_from(judge, prompt), calibration_address.ABSENT, offered) == run


def test_a_run_needs_both_its_judge_and_its_prompt_version():
    assert calibration_address.run_from("baseline", None) is None
    assert calibration_address.run_from(None, "v1") is None
    assert calibration_address.run_from("baseline", "lexical-v1") == ("baseline", "lexical-v1")
    assert calibration_address.chosen(calibration_address.run_from("gone", "v9"), calibration_address.ABSENT, [("baseline", "v1")]) == ("baseline", "v1")
