"""kstore's storage conformance suite on one LMDB store opened by two processes at once.

Every suite class of ``test_storage_conformance.py`` runs again with a backend that writes in
one process and reads and watches in the other (:mod:`tests.conformance.split_backend`): this
test process and a peer process (:mod:`tests.conformance.lmdb_rpc_peer`) each open the test's
store, as two ``kstore serve --workers`` processes do. Both directions run: ``writes-here``
(this process writes and, having opened the store first, leads: it reaps TTLs and its
compactions reach the peer through the store) and ``writes-there`` (the peer writes; reads,
watches and the leader's reaping are here). Value transformers, ``try_update`` closures and
the like stay in the process that made them and are called across (:mod:`tests.conformance.rpc`),
so the suite's assertions on them hold as in one process.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kstore.storage.lmdb import LmdbBackend, LmdbConfig
from kstore.testing.env import Capabilities, ConformanceEnv
from tests.conformance import test_storage_conformance as suite

from .rpc import Endpoint, Remote
from .split_backend import SplitBackend

for _name in suite.__all__:
    globals()[_name] = getattr(suite, _name)

_ROOT = Path(__file__).resolve().parents[2]


class PeerProcess:
    """The peer, started once per module: a child on one end of a socket pair."""

    def __init__(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.conformance.lmdb_rpc_peer", str(theirs.fileno())],
            cwd=_ROOT,
            pass_fds=(theirs.fileno(),),
        )
        theirs.close()
        # Nothing is exported here but what the tests hand over in their calls.
        self.endpoint = Endpoint(mine, root=object())
        self.root = self.endpoint.root()
        assert int(self.root.pid()) == self.process.pid

    def stop(self) -> None:
        self.endpoint.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise


@pytest.fixture(scope="module")
def peer() -> Iterator[PeerProcess]:
    started = PeerProcess()
    try:
        yield started
    finally:
        started.stop()


def _config(path: Path) -> LmdbConfig:
    # As the one-process run: the suite compacts on purpose, a timed compaction would race.
    return LmdbConfig(path=path, compaction_interval_s=0, progress_notify_interval_s=0.5)


@pytest.fixture(params=["writes-here", "writes-there"])
def conformance_env(
    request: pytest.FixtureRequest, tmp_path: Path, peer: PeerProcess
) -> Iterator[ConformanceEnv]:
    path = tmp_path / "lmdb"
    # Opened here first, so this process holds the store's lead (reaper, compaction schedule).
    here = LmdbBackend(_config(path))
    there: Remote | None = None
    try:
        there = peer.root.open(_config(path))
        assert not there.remote_attribute("leads"), "the peer must not lead: this process does"

        def close() -> None:
            peer.root.close_all()
            here.close()

        if request.param == "writes-here":
            backend = SplitBackend(writes=here, reads=there, close=close)
        else:
            backend = SplitBackend(writes=there, reads=here, close=close)
        yield ConformanceEnv(
            backend=backend,
            capabilities=Capabilities(progress_notify=True, expires_before_reaping=True),
        )
    finally:
        peer.root.close_all()
        peer.endpoint.forget_exports()
        here.close()
