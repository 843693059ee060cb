"""Full garbage collections kept short in the app server.

A server holding a large store's structures (the review index, the search facts, the labels read
so far) has millions of container objects that live as long as the server does.  CPython's full
(generation 2) collection walks every one of them: 60-100 ms at 1,000,000 answers, and one came
about every key press, which was most of the difference between Next at a million answers and at
a thousand (bench/bench_browser.py).  :func:`watch` notes a full collection that took longer than
:data:`SLOW_MS`; the next :func:`settle` (at the start of a page run) moves everything alive out
of the collector's sight (``gc.freeze``), so later collections walk only what was made since.
Objects frozen are still freed when their last reference goes; only a cycle among them would
outlive its use, and a freeze follows a full collection, when there is next to no garbage.
"""

from __future__ import annotations

import gc
import threading
import time

SLOW_MS = 20.0  # a full collection slower than this freezes what is alive at the next page run

_lock = threading.Lock()
_state = {"watching": False, "slow": False, "started": 0.0, "freezes": 0}


def _callback(phase: str, info: dict) -> None:
    if phase == "start":
        _state["started"] = time.perf_counter()
    elif info.get("generation") == 2 and (time.perf_counter() - _state["started"]) * 1000 > SLOW_MS:
        _state["slow"] = True


def watch() -> None:
    """Time every full collection from now on (once per process)."""
    with _lock:
        if not _state["watching"]:
            gc.callbacks.append(_callback)
            _state["watching"] = True


def settle(now: bool = False) -> bool:
    """Freeze what is alive if a full collection was slow since the last freeze (or ``now``: after
    a server's warm-up has made its caches); returns whether it did."""
    with _lock:
        if not (now or _state["slow"]):
            return False
        gc.collect()  # (slow once more, the last time: its own flag is cleared below)
        gc.freeze()
        _state["slow"] = False
        _state["freezes"] += 1
    return True


def freezes() -> int:
    """How many times :func:`settle` has frozen (for the tests)."""
    return int(_state["freezes"])
