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
