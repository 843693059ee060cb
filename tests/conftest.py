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
