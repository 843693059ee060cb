"""The fuzzer (tests/fuzzlogs.py) on a bounded sample: malformed logs through ``check`` and
``report`` (text and JSON) and every page give no traceback, no hang and lose no line.

bench/bench_fuzz.py runs every case (and ``--full`` the large ones) and prints the figures.
"""

import fuzzlogs
import pytest

SAMPLE = fuzzlogs.sample(every=15)
# Families whose first case also goes through every page with AppTest (a page run takes a
# second or so, so not all of them).
PAGE_FAMILIES = ("lone-surrogate", "huge-number", "deep-nesting", "pathological", "huge-line", "dir", "missing",
                 "empty", "json", "text", "non-utf8")


def test_the_sample_covers_every_family():
    assert {c.family for c in SAMPLE} == {c.family for c in fuzzlogs.cases()}


@pytest.mark.parametrize("case", SAMPLE, ids=lambda c: f"{c.family}:{c.name}"[:80])
def test_commands_hold(case, tmp_path):
    path = case.write(tmp_path)
    outcomes = [fuzzlogs.run_command(case, path, command, fmt, limit=60) for command, fmt in fuzzlogs.COMMANDS]
    assert [o for o in outcomes if o.status != "ok"] == []


@pytest.mark.parametrize("family", PAGE_FAMILIES)
def test_pages_hold(family, tmp_path):
    case = next(c for c in SAMPLE if c.family == family)
    path = case.write(tmp_path)
    outcomes = fuzzlogs.run_pages(path, tmp_path, limit=120)
    assert [o for o in outcomes if o.status != "ok"] == []
