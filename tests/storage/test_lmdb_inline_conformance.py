"""The storage conformance suite on LMDB with every lone write committed inline.

The suite calls the storage from pytest's main thread, where the backend never commits on the
caller's thread (see :meth:`kstore.storage.lmdb.LmdbBackend._commit_inline`), so the suite in
tests/conformance exercises the writer thread only. Here the backend is told that the main
thread is some other thread, so every write the suite makes alone takes the inline path, and
the whole contract (revisions, preconditions, TTL, watch order, compaction) is checked on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kstore.storage.lmdb import LmdbBackend, LmdbConfig
from kstore.testing.env import Capabilities, ConformanceEnv

from ..conformance.test_storage_conformance import *  # noqa: F403


@pytest.fixture
def conformance_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ConformanceEnv]:
    backend = LmdbBackend(
        LmdbConfig(path=tmp_path / "lmdb", compaction_interval_s=0, progress_notify_interval_s=0.5)
    )
    # No thread has ident -1: the main thread counts as any other.
    monkeypatch.setattr(backend, "_main_thread", -1)
    commits = backend._inline_commits
    try:
        yield ConformanceEnv(
            backend=backend,
            capabilities=Capabilities(progress_notify=True, expires_before_reaping=True),
        )
        if backend.current_revision() > 1:
            assert backend._inline_commits > commits, "no write took the inline path"
    finally:
        backend.close()
