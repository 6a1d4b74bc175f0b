"""Real etcd for the tests: one shared single-member cluster per session, fresh stores per test.

Test modules import the fixtures they use from here (``from tests.conftest_etcd import ...``).
The single-member cluster is started once per pytest session, on the first test that needs it,
and stopped by its process id when the session ends (``config.add_cleanup``), whichever modules
use it. Each test gets its own backend under a prefix no other test uses, so its store starts
empty; at the end the prefix is deleted, which also detaches any lease, so no expiry of an old
test moves the revision during a later one.

Tests skip, saying why, only when no ``etcd`` executable is installed (``scripts/install-etcd``
installs it; the README's test command runs that first).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import grpc
import pytest
from etcd3 import etcdrpc

from kstore.storage.etcd import EtcdBackend, EtcdConfig
from kstore.testing.etcd_cluster import EtcdCluster, EtcdNotInstalled, etcd_binary

__all__ = [
    "PROGRESS_NOTIFY_INTERVAL",
    "RawEtcd",
    "backend_on_shared_cluster",
    "etcd_backend",
    "etcd_single",
    "make_backend",
    "replace_shared_cluster",
    "require_etcd",
    "shared_cluster",
]

#: etcd's progress-notify interval in the shared cluster: watches that ask for progress
#: notifications get a bookmark about this often, so a watch cache's bookmarks advance quickly.
#: Consistent reads do not depend on it (the cache proves freshness by a quorum range, see
#: kstore/cache/freshness.py); tests of that run on a member with etcd's default interval.
PROGRESS_NOTIFY_INTERVAL = 0.2

#: Single-member test clusters elect themselves sooner with a short election timeout; one member
#: has no peer to lose, so nothing else changes.
_FAST_ELECTION = ("--heartbeat-interval", "50", "--election-timeout", "250")

_prefixes = itertools.count()


def require_etcd() -> None:
    """Skip the calling test when etcd is not installed."""
    try:
        etcd_binary()
    except EtcdNotInstalled as exc:
        pytest.skip(str(exc))


class _ClusterPool:
    """The session's current single-member cluster, plus a standby started in the background
    so that replacing the current one (after a test compacted its history) costs no wait."""

    def __init__(self) -> None:
        self._current: EtcdCluster | None = None
        self._standby: EtcdCluster | None = None
        self._standby_error: BaseException | None = None
        self._starter: threading.Thread | None = None

    @staticmethod
    def _new() -> EtcdCluster:
        return EtcdCluster(
            1, progress_notify_interval=PROGRESS_NOTIFY_INTERVAL, extra_args=_FAST_ELECTION
        )

    def _start_standby(self) -> None:
        def start() -> None:
            try:
                self._standby = self._new().start()
            except BaseException as exc:  # reported when the standby is taken
                self._standby_error = exc

        self._starter = threading.Thread(target=start, name="etcd-standby", daemon=True)
        self._starter.start()

    def _take_standby(self) -> EtcdCluster:
        if self._starter is None:
            return self._new().start()
        self._starter.join()
        self._starter = None
        cluster, error = self._standby, self._standby_error
        self._standby, self._standby_error = None, None
        if cluster is None:
            raise RuntimeError(f"standby etcd did not start: {error}")
        return cluster

    def current(self) -> EtcdCluster:
        if self._current is None:
            self._current = self._take_standby()
            self._start_standby()
        return self._current

    def retire_current(self) -> None:
        if self._current is not None:
            self._current.stop()
            self._current = None

    def close(self) -> None:
        self.retire_current()
        if self._starter is not None:
            self._starter.join()
            self._starter = None
        if self._standby is not None:
            self._standby.stop()
            self._standby = None


_POOL_KEY = pytest.StashKey[_ClusterPool]()


def _pool(config: pytest.Config) -> _ClusterPool:
    pool = config.stash.get(_POOL_KEY, None)
    if pool is None:
        pool = config.stash[_POOL_KEY] = _ClusterPool()
        config.add_cleanup(pool.close)
    return pool


def shared_cluster(config: pytest.Config) -> EtcdCluster:
    """The session's single-member cluster, started on first use."""
    require_etcd()
    return _pool(config).current()


def replace_shared_cluster(config: pytest.Config) -> None:
    """Stop the session's cluster; the next test that needs one gets a fresh one. Used after
    a test compacted history: later tests may watch or list from revision 1."""
    _pool(config).retire_current()


@pytest.fixture
def etcd_single(request: pytest.FixtureRequest) -> EtcdCluster:
    """The shared single-member etcd (started once per session)."""
    return shared_cluster(request.config)


class RawEtcd:
    """The plain etcd API on the generated stubs, for what tests do behind kstore's back
    (raw puts and reads, wiping a prefix)."""

    def __init__(self, endpoint: str) -> None:
        self.channel = grpc.insecure_channel(endpoint)
        self.kv = etcdrpc.KVStub(self.channel)

    def put(self, key: bytes, value: bytes) -> int:
        return int(
            self.kv.Put(etcdrpc.PutRequest(key=key, value=value), timeout=10).header.revision
        )

    def get(self, key: bytes) -> Any:
        response = self.kv.Range(etcdrpc.RangeRequest(key=key), timeout=10)
        return response.kvs[0] if response.kvs else None

    def revision(self) -> int:
        response = self.kv.Range(etcdrpc.RangeRequest(key=b"\x00", count_only=True), timeout=10)
        return int(response.header.revision)

    def delete_prefix(self, prefix: bytes) -> None:
        end = bytearray(prefix)
        end[-1] += 1
        self.kv.DeleteRange(
            etcdrpc.DeleteRangeRequest(key=prefix, range_end=bytes(end)), timeout=10
        )

    def close(self) -> None:
        self.channel.close()


def make_backend(cluster: EtcdCluster, **overrides: Any) -> EtcdBackend:
    """A backend on ``cluster`` under a prefix of its own, without the compaction timer
    (tests compact on purpose) unless ``overrides`` say otherwise."""
    settings: dict[str, Any] = {
        "endpoints": tuple(cluster.endpoints),
        "prefix": f"/kstore-test-{next(_prefixes)}",
        "compaction_interval": 0.0,
    }
    settings.update(overrides)
    return EtcdBackend(EtcdConfig(**settings))


@contextmanager
def backend_on_shared_cluster(config: pytest.Config) -> Iterator[EtcdBackend]:
    """A fresh backend on the session's cluster; its keys are removed afterwards, and a
    cluster whose history the test compacted is replaced."""
    cluster = shared_cluster(config)
    backend = make_backend(cluster)
    try:
        yield backend
    finally:
        backend.close()
        if backend.compacted_revision > 0:
            replace_shared_cluster(config)
        else:
            raw = RawEtcd(cluster.endpoints[0])
            try:
                raw.delete_prefix(backend.config.prefix.encode() + b"/")
            finally:
                raw.close()


@pytest.fixture
def etcd_backend(request: pytest.FixtureRequest) -> Iterator[EtcdBackend]:
    """A fresh backend on the shared etcd (see :func:`backend_on_shared_cluster`)."""
    with backend_on_shared_cluster(request.config) as backend:
        yield backend
