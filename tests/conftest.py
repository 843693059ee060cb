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
