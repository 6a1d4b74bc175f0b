"""The one fixture that runs kstore's storage conformance suite over every implementation.

Each entry of :data:`IMPLEMENTATIONS` opens a fresh, empty store in a test's temporary directory
and yields the :class:`~kstore.testing.env.ConformanceEnv` describing it. Adding a backend, or
the watch cache in front of one, is one line there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

# The suite's assertions live in kstore.testing: have pytest explain them as in test modules.
pytest.register_assert_rewrite("kstore.testing")

from kstore.storage.lmdb import LmdbBackend, LmdbConfig  # noqa: E402
from kstore.testing.env import Capabilities, ConformanceEnv  # noqa: E402


@contextmanager
def lmdb_env(tmp_path: Path) -> Iterator[ConformanceEnv]:
    backend = LmdbBackend(
        LmdbConfig(
            path=tmp_path / "lmdb",
            # The suite compacts on purpose; a timed compaction would race with it.
            compaction_interval_s=0,
            progress_notify_interval_s=0.5,
        )
    )
    try:
        yield ConformanceEnv(
            backend=backend,
            capabilities=Capabilities(progress_notify=True, expires_before_reaping=True),
        )
    finally:
        backend.close()


IMPLEMENTATIONS: dict[str, Callable[[Path], AbstractContextManager[ConformanceEnv]]] = {
    "lmdb": lmdb_env,
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def conformance_env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ConformanceEnv]:
    with IMPLEMENTATIONS[request.param](tmp_path) as env:
        yield env
