"""kstore's storage conformance suite through the etcd backend's asyncio verbs.

Every suite class runs again with each storage replaced by a blocking adapter that awaits
the native coroutines (``as_async(storage)``, on ``grpc.aio``) on an event loop per calling
thread (two loops, two ``grpc.aio`` clients, where the suite races two threads): create,
get, guaranteed_update and delete go through :mod:`kstore.storage._etcd_aio` and the shared
steps of :mod:`kstore.storage._etcd_steps`, so both forms of each verb are held to the same
behaviour. Capabilities are etcd's (see ``test_etcd_conformance``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kstore.storage.aio import as_async
from kstore.storage.etcd import EtcdAsyncStorage, EtcdBackend
from kstore.storage.interface import ResourceStorageConfig, Storage
from kstore.testing.env import ConformanceEnv
from tests.conformance import test_storage_conformance as suite
from tests.conformance.test_etcd_conformance import ETCD_CAPABILITIES
from tests.conftest_etcd import etcd_backend, etcd_single  # noqa: F401  (fixtures)
from tests.loop_thread import BlockingOverAsync, LoopPerThread

pytestmark = pytest.mark.etcd

for _name in suite.__all__:
    globals()[_name] = getattr(suite, _name)


@pytest.fixture
def conformance_env(etcd_backend: EtcdBackend) -> Iterator[ConformanceEnv]:  # noqa: F811
    loops = LoopPerThread()

    def make_storage(config: ResourceStorageConfig) -> Storage:
        aio = as_async(etcd_backend.storage_for(config))
        assert isinstance(aio, EtcdAsyncStorage), "the etcd backend's verbs must be native"
        return BlockingOverAsync(aio, loops)

    try:
        yield ConformanceEnv(
            backend=etcd_backend, make_storage=make_storage, capabilities=ETCD_CAPABILITIES
        )
    finally:
        etcd_backend.close()  # its asyncio channels close on their loops, still running
        loops.close()
