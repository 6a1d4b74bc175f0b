"""Real ``kstore serve`` processes for the client suite, on LMDB or on a real etcd.

:func:`storage_args` gives the serve flags of a backend: nothing for LMDB (the process gets its
own data directory), ``--storage-backend etcd`` with the session's single-member etcd and a key
prefix of its own for etcd. When the server is gone the prefix is removed (an etcd whose
history a server compacted is replaced instead, so that no later test finds its revisions
compacted). A server that compacts on purpose gets an etcd of its own.

:func:`start_compacting_server` starts the same command line with a short
``--etcd-compaction-interval``; :func:`tests.server.harness.start_server` starts the plain one.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from kstore.testing.etcd_cluster import EtcdCluster
from tests.conftest_etcd import RawEtcd, replace_shared_cluster, require_etcd, shared_cluster
from tests.server.harness import RunningServer, start_server

__all__ = ["BACKENDS", "start_compacting_server", "storage_args", "wait_for_watches"]

#: The backends every scenario runs on; etcd ones carry the ``etcd`` marker.
BACKENDS = ("lmdb", pytest.param("etcd", marks=pytest.mark.etcd))

_COMPACT_REV_KEY = b"compact_rev_key"
_prefixes = itertools.count()
#: A single member elects itself sooner with a short election timeout (as tests.conftest_etcd).
_FAST_ELECTION = ("--heartbeat-interval", "50", "--election-timeout", "250")


def _etcd_args(cluster: EtcdCluster, prefix: str) -> tuple[str, ...]:
    return (
        "--storage-backend",
        "etcd",
        "--etcd-servers",
        ",".join(cluster.endpoints),
        "--etcd-prefix",
        prefix,
    )


@contextmanager
def storage_args(
    config: pytest.Config, backend: str, *, own_etcd: bool = False
) -> Iterator[tuple[str, ...]]:
    """The ``kstore serve`` flags for ``backend``; cleans the backend up afterwards.

    ``own_etcd`` starts a single-member etcd for this server alone (stopped afterwards)
    instead of using the session's: for a server that compacts, whose compaction would
    reach every prefix of a shared etcd while other servers still use it.
    """
    if backend == "lmdb":
        yield ()
        return
    if own_etcd:
        require_etcd()
        with EtcdCluster(1, extra_args=_FAST_ELECTION) as own:
            yield _etcd_args(own, "/registry")
        return
    cluster = shared_cluster(config)
    prefix = f"/kstore-clients-{os.getpid()}-{next(_prefixes)}"
    try:
        yield _etcd_args(cluster, prefix)
    finally:
        raw = RawEtcd(cluster.endpoints[0])
        try:
            compacted = raw.get(_COMPACT_REV_KEY) is not None
            if not compacted:
                raw.delete_prefix(prefix.encode() + b"/")
        finally:
            raw.close()
        if compacted:
            replace_shared_cluster(config)


def _open_watches(url: str, resource: str) -> int:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    total = 0
    for line in text.splitlines():
        if line.startswith("apiserver_longrunning_requests{") and (
            'verb="WATCH"' in line and f'resource="{resource}"' in line
        ):
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def wait_for_watches(url: str, resource: str, count: int = 1, timeout: float = 20.0) -> None:
    """Wait until the server has ``count`` watches of ``resource`` open (its
    ``apiserver_longrunning_requests`` gauge), so that a change made next is seen by a watch
    and not by the list before it."""
    deadline = time.monotonic() + timeout
    while _open_watches(url, resource) < count:
        assert time.monotonic() < deadline, f"no watch of {resource} opened"
        time.sleep(0.05)


def start_compacting_server(data_dir: Path, seconds: float, *args: str) -> RunningServer:
    """``kstore serve`` (on 127.0.0.1, a free port) compacting every ``seconds``."""
    return start_server(data_dir, "--etcd-compaction-interval", f"{seconds}s", *args)
