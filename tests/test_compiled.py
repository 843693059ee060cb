"""The compiled build of the hot modules (core/citecheck/text/compiled.py, issue #14) gives the same bytes
as the pure-Python modules: ``citecheck check`` (JSON and text) on the sample data, on a
generated log with every reason code and on every malformed log of the fuzz families is run
both ways and compared.  When no current build exists (no C compiler), the comparison is
skipped with the reason; ``python3 dev.py`` builds it, so CI runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from citecheck.checking import checker
from citecheck.contract import reasons
from citecheck.text import compiled
from fuzzlogs import cases
from test_store import generated_log

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"
BUILT = compiled._usable(compiled.BUILD) and os.environ.get(compiled.PURE_ENV, "") in ("", "0")
REQUIRE_COMPILED = "CITECHECK_REQUIRE_COMPILED"  # set by .ci/run: a missing or failed build fails instead of skipping
needs_build = pytest.mark.skipif(not BUILT and not os.environ.get(REQUIRE_COMPILED),
                                 reason="no current compiled build (python3 dev.py builds it with mypyc)")


def test_ci_has_a_current_build():
    """In CI a module of the compiled set that mypyc refuses must fail the run, not skip the comparisons."""
    if not os.environ.get(REQUIRE_COMPILED):
        pytest.skip(f"{REQUIRE_COMPILED} is not set (only .ci/run requires the build)")
    assert BUILT, "the mypyc build failed or is stale: run `python3 dev.py test` and read its build line"


def check(pure: bool, *argv) -> tuple[int, bytes, bytes]:
    env = {**os.environ, compiled.PURE_ENV: "1" if pure else "0"}
    code = ("import sys; from citecheck.checking import checker; from citecheck.cli.main import main; "
            "assert checker.__file__.endswith('.py') == (sys.argv[1] == '1'), checker.__file__; "
            "sys.exit(main(sys.argv[2:]))")
    done = subprocess.run([sys.executable, "-c", code, "1" if pure else "0", *map(str, argv)], capture_output=True,
                          env=env, cwd=ROOT, timeout=300)
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")[-2000:]
    return done.returncode, done.stdout, done.stderr


def same_both_ways(*argv) -> bytes:
    pure, fast = check(True, *argv), check(False, *argv)
    assert fast == pure
    return pure[1]


@pytest.fixture(scope="module")
def fuzz_logs(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("fuzz")
    paths = []
    for i, case in enumerate(cases()):
        if case.kind == "file" and case.data.strip() and len(case.data) < 1_000_000:
            path = folder / f"case-{i:03d}.jsonl"
            path.write_bytes(case.data)
            paths.append(path)
    return paths


def test_the_suite_runs_the_compiled_modules_when_they_are_built():
    assert checker.__file__.endswith(".py") != BUILT


@needs_build
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_sample_data_gives_the_same_bytes_compiled_and_pure(fmt):
    out = same_both_ways("check", SAMPLE / "answers.jsonl", "--corpus", SAMPLE / "corpus", "--format", fmt)
    if fmt == "json":
        summary = json.loads(out.splitlines()[-1])
        assert all(summary["reasons"][code] >= 1 for code in reasons.ALL_REASONS), summary["reasons"]
    same_both_ways("check", SAMPLE / "answers.jsonl", "--casefold", "--refusal", "No idea.", "--format", fmt)


@needs_build
def test_a_generated_log_with_every_reason_code_gives_the_same_bytes(tmp_path):
    log = generated_log(tmp_path / "gen.jsonl")
    out = same_both_ways("check", log, "--corpus", SAMPLE / "corpus", "--format", "json")
    records = [json.loads(line) for line in out.splitlines()]
    assert {r["record"] for r in records} == {"answer", "error", "summary"}
    assert all(records[-1]["reasons"][code] >= 1 for code in reasons.ALL_REASONS)
    same_both_ways("check", log, "--corpus", SAMPLE / "corpus")


@needs_build
def test_a_store_written_compiled_holds_the_rows_one_written_in_python_holds(tmp_path, fuzz_logs):
    """``check --store`` makes each answer's row with the compiled ``reports.answer_row`` (store_row):
    every table of a store written either way holds the same rows, of a log with every reason
    code and of malformed logs."""
    import pyarrow.parquet as pq
    from citecheck.storage.checked import schema

    logs = [generated_log(tmp_path / "gen.jsonl"), *fuzz_logs[:40]]
    outs = [check(pure, "check", *logs, "--corpus", SAMPLE / "corpus", "--store", tmp_path / ("pure" if pure else "compiled"))
            for pure in (True, False)]
    assert outs[0][0] == outs[1][0] and outs[0][1].replace(b"pure", b"compiled") == outs[1][1]
    for table in schema.TABLES:
        parts = [sorted((tmp_path / kind / table).glob("log-*/part-*.parquet")) for kind in ("pure", "compiled")]
        assert [p.relative_to(tmp_path / "pure") for p in parts[0]] == \
            [p.relative_to(tmp_path / "compiled") for p in parts[1]] and parts[0]
        for pure_part, compiled_part in zip(*parts):
            assert pq.read_table(pure_part).equals(pq.read_table(compiled_part)), (table, pure_part.name)


@needs_build
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_every_malformed_log_gives_the_same_bytes(fuzz_logs, fmt):
    out = same_both_ways("check", *fuzz_logs, "--format", fmt)
    if fmt == "json":
        kinds = [json.loads(line)["record"] for line in out.splitlines()]
        assert kinds.count("error") > 50 and kinds.count("answer") > 100


def test_a_build_is_used_only_for_the_sources_it_was_built_from(tmp_path):
    sources = compiled.source_hashes()
    (tmp_path / compiled.STAMP).write_text(compiled._stamp(sources, True))
    assert compiled._usable(tmp_path)
    edited = {**sources, compiled.MODULES[0]: "0" * 64}
    (tmp_path / compiled.STAMP).write_text(compiled._stamp(edited, True))
    assert not compiled._usable(tmp_path)
    (tmp_path / compiled.STAMP).write_text(compiled._stamp(sources, False))  # a build that failed
    assert not compiled._usable(tmp_path)


def test_options_answers_and_results_pickle_whichever_modules_run():
    """Dask sends them between processes; a compiled frozen class cannot be set field by field."""
    import pickle

    from citecheck.contract.log import read_log

    options = checker.CheckOptions(casefold=True, refusals=("No idea.",))
    assert pickle.loads(pickle.dumps(options)) == options
    for _, answer in read_log(SAMPLE / "answers.jsonl"):
        result = checker.check_answer(answer, options)
        assert pickle.loads(pickle.dumps(answer)) == answer
        assert pickle.loads(pickle.dumps(result)) == result


TRACES = Path(__file__).resolve().parent / "fixtures" / "traces"
# (format, fixture files): every trace fixture, the broken one included, and the bench's traces
TRACE_IMPORTS = [("otel", ["openinference_rag.jsonl", "otlp_agent_base64.json", "genai_semconv.jsonl", "otlp_broken.jsonl"]),
                 ("langfuse", ["langfuse_traces.jsonl", "langfuse_agent_download.json", "langfuse_api_page.json"]),
                 ("phoenix", ["phoenix_rag.jsonl", "phoenix_agent.jsonl"]),
                 ("langsmith", ["langsmith_rag_tree.json", "langsmith_agent_runs.jsonl"])]


@needs_build
@pytest.mark.parametrize("kind,files", TRACE_IMPORTS, ids=[kind for kind, _ in TRACE_IMPORTS])
def test_trace_imports_give_the_same_log_compiled_and_pure(tmp_path, kind, files):
    """The trace importers' hot modules (importers/spans, traces, trace_citations) are compiled too:
    each import writes the same log, says the same summary and exits the same way both ways."""
    inputs = [TRACES / name for name in files]
    if kind == "otel":  # (and a few hundred requests of the bench's shape: markers, JSON-string metadata)
        sys.path.insert(0, str(ROOT / "bench"))
        from bench_import_otel import generate

        generate(tmp_path / "bench.jsonl", 300)
        inputs.append(tmp_path / "bench.jsonl")
    outcomes = []
    for pure in (True, False):
        out = tmp_path / f"{'pure' if pure else 'compiled'}.jsonl"
        code, stdout, stderr = check(pure, "import", kind, *inputs, "--out", out)
        outcomes.append((code, stdout, stderr.replace(bytes(out), b"OUT"), out.read_bytes() if out.exists() else None))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][3]  # (a log was written)
