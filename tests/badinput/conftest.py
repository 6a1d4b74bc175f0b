"""Fixtures: one ``kstore serve`` process (LMDB, temporary directory) per bad-input module."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.server.harness import RunningServer, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = start_server(tmp_path_factory.mktemp("badinput") / "data")
    yield running
    status = running.stop()
    assert status == 0, running.log()


@pytest.fixture(scope="module")
def client(server: RunningServer) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c
