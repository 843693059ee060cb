"""The faster ways of issue #36 against the ways they replace, on the same generated inputs:
sentence ends found by ``str.find`` when a text has full stops only, sentences trimmed by walking
their ends, the inline digit test of the number scan, and the whole check of the bench answers
against the pure-Python modules (tests/test_compiled.py compares the CLI's bytes both ways)."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

from citecheck.checking.checker import _numbers_regex, _numbers_scan
from citecheck.text import compiled
from citecheck.text.sentences import _END, _end_spans_scan, split_sentences
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_check import make_answer  # noqa: E402


@settings(max_examples=1000)
@given(st.text(alphabet="...\"')[ \u201d\u2019\u201ca\t\u00a0\u2028x1", max_size=60))
def test_full_stops_only_the_find_path_gives_the_patterns_ends(text):
    assert _end_spans_scan(text) == [m.span() for m in _END.finditer(text)]


def _strip_reference(text: str) -> list[tuple[int, int, int, str]]:
    """split_sentences with each piece trimmed by ``str.strip`` (what it did before)."""
    out = []
    for s in split_sentences(text):
        raw = text[s.start:s.end]
        out.append((s.index, s.start, s.end, raw.strip()))
    return out


@settings(max_examples=1000)
@given(st.text(alphabet=" \t\n\u00a0\u2028\u3000ab.!?[1]\"\u201c", max_size=60))
def test_sentences_are_trimmed_as_strip_trims_them(text):
    sentences = split_sentences(text)
    for s in sentences:
        assert s.text == text[s.start:s.end] or "[" in s.text  # (a marker-only line merged into it)
        assert s.text == s.text.strip() and s.text
    assert [(s.index, s.start, s.end, s.text) for s in sentences if "[" not in s.text] == \
        [r for r in _strip_reference(text) if "[" not in r[3]]


@settings(max_examples=1000)
@given(st.text(alphabet="aZ\u00e9\u00b2\u4e2d0159,._ -$%\u0663\uff11\u00bd\u2160/:;\x7f\x80", max_size=60))
def test_the_number_scan_with_its_inline_digit_test_finds_what_the_patterns_find(text):
    assert _numbers_scan(text) == _numbers_regex(text)


def test_the_bench_answers_check_alike_compiled_and_pure(tmp_path):
    """The bench generator's answers (every sentence with numbers, full stops only, quoted
    citations, an invented quote in one answer of ten): the check's JSON bytes compiled and pure."""
    if not compiled._usable(compiled.BUILD):
        import pytest

        pytest.skip("no current compiled build (python3 dev.py builds it with mypyc)")
    rng = random.Random(17)
    log = tmp_path / "bench.jsonl"
    log.write_text("".join(json.dumps(make_answer(i, rng)) + "\n" for i in range(300)))
    outs = []
    for pure in ("1", "0"):
        done = subprocess.run([sys.executable, "-m", "citecheck", "check", str(log), "--format", "json"],
                              capture_output=True, env={**os.environ, compiled.PURE_ENV: pure}, cwd=ROOT, timeout=300)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        outs.append(done.stdout)
    assert outs[0] == outs[1]
    records = [json.loads(line) for line in outs[0].splitlines()]
    assert len(records) == 301 and records[-1]["citations_failed"] >= 30
    assert re.search(rb'"reasons":\["quote_not_found"\]', outs[0])
