"""The golden set's figures from a checked store (refusals against the golden set, retrieval hit
rate and MRR) equal the in-memory report's, whatever the questions look like: matched by
``question_key`` (case and whitespace aside), unknown to the set, missing, repeated.  The store
reads only the answers whose question the set has (storage.checked.query._golden_figures); the
in-memory report reads them all: the two paths, on the same logs."""

from __future__ import annotations

import io
import json
from pathlib import Path

from citecheck.cli.main import main
from helpers import figures_only
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"
GOLDEN = SAMPLE / "golden.jsonl"
CORPUS = SAMPLE / "corpus"
ANSWERS = [json.loads(line) for line in (SAMPLE / "answers.jsonl").read_text(encoding="utf-8").splitlines()
           if line.strip()]
QUESTIONS = [json.loads(line)["question"] for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]


def run(*argv) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, figures_only(out.getvalue())


def variant(question: str, how: int) -> str | None:
    return [question, question.upper(), "  " + question.replace(" ", "   ") + "\n", question.lower(),
            "a question the golden set does not have", None][how]


answer_plans = st.lists(st.tuples(st.integers(0, len(ANSWERS) - 1), st.integers(0, len(QUESTIONS) - 1),
                                  st.integers(0, 5), st.booleans()), min_size=1, max_size=40)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plans=answer_plans)
def test_golden_figures_from_the_store_equal_the_reports(tmp_path_factory, plans):
    tmp = tmp_path_factory.mktemp("golden")
    lines = []
    for n, (answer, question, how, repeat_id) in enumerate(plans):
        obj = dict(ANSWERS[answer])
        obj["answer_id"] = "same-id" if repeat_id else f"g-{n}"
        asked = variant(QUESTIONS[question], how)
        if asked is None:
            obj.pop("question", None)
        else:
            obj["question"] = asked
        lines.append(json.dumps(obj))
    log = tmp / "log.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = tmp / "store"
    code, _ = run("check", log, "--corpus", CORPUS, "--store", store, "--quiet")
    assert code in (0, 1, 4)
    want = run("report", log, "--corpus", CORPUS, "--golden", GOLDEN, "--format", "json")
    got = run("report", "--store", store, "--golden", GOLDEN, "--format", "json")
    assert got == want
    figures = json.loads(got[1])
    assert figures["refusals"] is not None and figures["retrieval"] is not None
