import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

# Tests do not time things (benchmarks in bench/ do): no per-example deadline, which a loaded
# machine would turn into flaky failures.
from hypothesis import settings  # noqa: E402

settings.register_profile("citecheck", deadline=None)
settings.load_profile("citecheck")


# --- the order of the files: the longest first ---------------------------------------------------
# ``dev.py test`` runs each file on one of three workers (pytest-xdist's loadfile, with
# --no-loadscope-reorder: xdist would otherwise start the files with the most tests first, which
# left the store writers' two tests, four minutes, to start near the end and finish alone).  Files
# are started longest first, so the last ones to start are short and the workers finish together.
# Seconds per file in a whole run of the suite (``python3 dev.py test --junitxml=J``, summed per
# file); files not named are short and keep their order after these.  Refresh when a file's time
# changes a lot: a wrong figure costs time, never a result.
FILE_SECONDS = {
    "test_review_browser": 299, "test_store_writers": 125, "test_log_schema": 98, "test_journeys_browser": 93,
    "test_assign_browser": 89, "test_comments_browser": 88, "test_store_differential": 82,
    "test_store_review_browser": 72, "test_team_browser": 71, "test_browser": 59, "test_app_postgres": 57,
    "test_store_dask": 54, "test_search_label_filters": 51, "test_search_index_command": 50, "test_browser_text": 48,
    "test_calibration_browser": 47, "test_store_crash": 45, "test_span_marking_browser": 44,
    "test_roles_browser": 43, "test_fuzz": 42, "test_review_search_browser": 41, "test_search_differential": 40,
    "test_failures_browser": 60, "test_follow_browser": 37, "test_page_requests": 25, "test_compiled": 35, "test_app": 34,
    "test_installed_wheel": 32, "test_store_speed_paths": 28, "test_judge_walkthrough": 25, "test_store_failing": 24,
    "test_judge_repeats": 24, "test_answer_log": 24, "test_trace_fast_paths": 23, "test_store_index": 23,
    "test_browser_sessions": 22, "test_judge_comparison": 22, "test_server_warm_up": 22, "test_judge": 22,
    "test_app_truth": 21, "test_event_cache": 21,
}


def pytest_collection_modifyitems(config, items):
    """The longest files first (``FILE_SECONDS``); a stable sort, so each file's tests keep their order."""
    items.sort(key=lambda item: -FILE_SECONDS.get(item.path.stem, 0))


# --- PostgreSQL: one throwaway cluster per test session, one fresh database per test -------------
import os  # noqa: E402

import pytest  # noqa: E402

REQUIRE_PG = "CITECHECK_REQUIRE_PG"  # set by .ci/run: a missing PostgreSQL fails instead of skipping


@pytest.fixture(scope="session")
def pg_cluster():
    import pgcluster

    try:
        cluster = pgcluster.start(durable=False)
    except FileNotFoundError as exc:
        if os.environ.get(REQUIRE_PG):
            raise
        pytest.skip(f"no PostgreSQL here ({exc}); .ci/run installs it and runs these tests")
    yield cluster
    from citecheck.storage import postgres

    postgres.close_all()
    cluster.stop()


@pytest.fixture
def pg_url(pg_cluster):
    """The URL (with its password) of a new, empty database on the session's cluster. Each database
    gets its own pool of connections in this process: it is closed after the test, or a session of
    tests would exhaust the server's connection slots."""
    yield pg_cluster.create_database()
    from citecheck.storage import postgres

    postgres.close_all()


@pytest.fixture(params=["file", "postgresql"])
def store(request, tmp_path):
    """Where labels or verdicts go: a JSON-lines file, then a PostgreSQL database. Tests taking this
    fixture run once per store; each gets a path or URL it can pass to ``append`` and ``read``."""
    if request.param == "file":
        return tmp_path / "events.jsonl"
    return request.getfixturevalue("pg_url")
import pytest  # noqa: E402


@pytest.fixture
def small_disk(tmp_path):
    """A real 64 KiB filesystem (tmpfs), or a skip saying why it could not be mounted."""
    mount = tmp_path / "small"
    mount.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command: the disk-full cases run with a simulated os.write only")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip()}); simulated os.write cases still run")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)
