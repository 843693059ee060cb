"""Full garbage collections kept short in the app server (citecheck.web.memory): after a slow full
collection, the next page run freezes what is alive, so later full collections walk only what was
made since."""

from __future__ import annotations

import gc

from citecheck.web import memory


def test_a_slow_full_collection_freezes_what_is_alive_at_the_next_settle(monkeypatch):
    monkeypatch.setattr(memory, "SLOW_MS", -1.0)  # every full collection counts as slow
    memory.watch()
    memory.watch()  # (once per process)
    assert gc.callbacks.count(memory._callback) == 1
    before = memory.freezes()
    assert memory.settle() in (True, False)  # (whatever an earlier collection left)
    kept = [[n] for n in range(50_000)]  # long-lived containers, as a big store's caches
    frozen = gc.get_freeze_count()
    gc.collect(2)  # a full collection: "slow"
    assert memory.settle() is True and memory.freezes() > before
    assert gc.get_freeze_count() >= frozen + len(kept)  # out of the collector's sight
    assert memory.settle() is False  # nothing slow since: nothing to do
    gc.unfreeze()


def test_settle_now_freezes_without_a_slow_collection(monkeypatch):
    monkeypatch.setattr(memory, "SLOW_MS", 10_000.0)
    kept = {n: (n,) for n in range(10_000)}
    assert memory.settle(now=True) is True and gc.get_freeze_count() >= len(kept)
    gc.collect(2)  # fast: nothing flagged
    assert memory.settle() is False
    gc.unfreeze()
