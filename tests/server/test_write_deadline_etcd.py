"""A write whose storage call does not return gets 504 at its deadline; the server keeps serving.

A real ``kstore serve`` on a single-member etcd of its own; the member is stopped (SIGSTOP:
its sockets stay open and silent, so storage calls hang rather than fail). A create or delete
with ``?timeout=1s`` must then answer 504 Timeout within a couple of seconds, as kube-apiserver's
handlers do, while requests that do not need etcd are still answered. After the member resumes,
writes succeed again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from kstore.testing.etcd_cluster import EtcdCluster
from tests.conftest_etcd import require_etcd
from tests.server.harness import RunningServer, start_server

pytestmark = [pytest.mark.etcd, pytest.mark.fault]

CMS = "/api/v1/namespaces/default/configmaps"
_FAST_ELECTION = ("--heartbeat-interval", "50", "--election-timeout", "250")
_TIMEOUT_MESSAGE = (
    "Timeout: request did not complete within requested timeout - context deadline exceeded"
)


@pytest.fixture
def etcd() -> Iterator[EtcdCluster]:
    require_etcd()
    with EtcdCluster(1, extra_args=_FAST_ELECTION) as cluster:
        yield cluster


@pytest.fixture
def server(etcd: EtcdCluster, tmp_path: Path) -> Iterator[RunningServer]:
    running = start_server(
        tmp_path / "data",
        "--storage-backend",
        "etcd",
        "--etcd-servers",
        ",".join(etcd.endpoints),
        "--etcd-prefix",
        "/registry",
    )
    try:
        yield running
    finally:
        etcd.resume(0)
        running.stop()


def _config_map(name: str) -> bytes:
    return orjson.dumps({"metadata": {"name": name}, "data": {"k": "v"}})


def _assert_timeout(response_status: int, body: bytes, elapsed: float) -> None:
    assert response_status == 504, body
    status = orjson.loads(body)
    assert (status["kind"], status["status"], status["reason"], status["code"]) == (
        "Status",
        "Failure",
        "Timeout",
        504,
    )
    assert status["message"] == _TIMEOUT_MESSAGE
    assert elapsed < 3.0, f"504 after {elapsed:.1f}s, want about 1s"


def test_writes_on_a_stopped_etcd_answer_504_at_their_timeout_and_the_server_keeps_serving(
    etcd: EtcdCluster, server: RunningServer
) -> None:
    with server.client() as c:
        assert c.post(CMS, content=_config_map("before")).status_code == 201
        etcd.pause(0)

        started = time.monotonic()
        r = c.post(CMS, params={"timeout": "1s"}, content=_config_map("stuck"))
        _assert_timeout(r.status_code, r.content, time.monotonic() - started)

        started = time.monotonic()
        r = c.delete(f"{CMS}/before", params={"timeout": "1s"})
        _assert_timeout(r.status_code, r.content, time.monotonic() - started)

        # Still serving: what needs no etcd answers at once, a bad timeout is still a 400.
        started = time.monotonic()
        assert c.get("/version").status_code == 200
        r = c.post(CMS, params={"timeout": "soon"}, content=_config_map("bad"))
        assert time.monotonic() - started < 2.0
        assert r.status_code == 400, r.text
        assert r.json()["message"] == (
            'invalid timeout specified in the request URL - time: invalid duration "soon"'
        )

        etcd.resume(0)
        deadline = time.monotonic() + 20
        while True:
            r = c.post(CMS, params={"timeout": "5s"}, content=_config_map("after"))
            if r.status_code == 201 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert r.status_code == 201, r.text
    assert "Traceback" not in server.log()
