"""The opt-in GC policy: freezes periodically, gives everything back when stopped."""

from __future__ import annotations

import gc
import time

from kstore.cache.gc_policy import LongLivedObjects


def test_freezes_periodically_and_unfreezes_on_stop() -> None:
    assert gc.get_freeze_count() == 0
    with LongLivedObjects(freeze_interval=0.05, full_collection_interval=0.12) as policy:
        keep = [{"n": i} for i in range(1000)]
        deadline = time.monotonic() + 5
        while (policy.freezes < 3 or policy.full_collections < 1) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert gc.get_freeze_count() > 0
        assert policy.freezes >= 3 and policy.full_collections >= 1
    assert gc.get_freeze_count() == 0
    assert len(keep) == 1000
