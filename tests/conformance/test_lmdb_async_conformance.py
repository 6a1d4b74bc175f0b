"""kstore's storage conformance suite through the LMDB store's asyncio verbs.

Every suite class runs again with each storage replaced by a blocking adapter that awaits
``as_async(storage)`` on an event loop per calling thread: creates queue for the writer
thread and await its commit on the loop (:mod:`kstore.storage._lmdb_aio`), gets read on the
loop, the other verbs run in the loop's executor. Capabilities are the LMDB store's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kstore.storage._lmdb_aio import LmdbAsyncStorage
from kstore.storage.aio import as_async
from kstore.storage.interface import ResourceStorageConfig, Storage
from kstore.testing.env import ConformanceEnv
from tests.conformance import test_storage_conformance as suite
from tests.conformance.conftest import lmdb_env
from tests.loop_thread import BlockingOverAsync, LoopPerThread

for _name in suite.__all__:
    globals()[_name] = getattr(suite, _name)


@pytest.fixture
def conformance_env(tmp_path: Path) -> Iterator[ConformanceEnv]:
    loops = LoopPerThread()
    with lmdb_env(tmp_path) as env:

        def make_storage(config: ResourceStorageConfig) -> Storage:
            aio = as_async(env.backend.storage_for(config))
            assert isinstance(aio, LmdbAsyncStorage), "the LMDB store's creates must be native"
            return BlockingOverAsync(aio, loops)

        env.make_storage = make_storage
        try:
            yield env
        finally:
            loops.close()
