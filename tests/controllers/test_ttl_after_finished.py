"""ttl-after-finished through ``kstore.open``: a finished Job with a TTL goes when it is due,
with its pods (background); one not finished, or without a TTL, stays."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kstore import open as open_store
from kstore.controllers.ttl_after_finished import expires_at
from kstore.embedded import Client


def _eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    with open_store(
        f"lmdb://{tmp_path}/store", controllers="ttl-after-finished,garbagecollector"
    ) as opened:
        _eventually(lambda: len(opened._controllers.running) == 2)
        # What the service account controller (not run here) gives the namespace: the
        # ServiceAccount admission plugin wants the pods' account to exist.
        accounts = opened.resource("v1", "serviceaccounts").namespace("default")
        accounts.create({"metadata": {"name": "default"}})
        yield opened


def _job(name: str, ttl: int | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "template": {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
        }
    }
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


def _finish(client: Client, name: str, ago: float = 0.0) -> None:
    at = (datetime.now(UTC) - timedelta(seconds=ago)).strftime("%Y-%m-%dT%H:%M:%SZ")
    jobs = client.resource("batch/v1", "jobs", namespace="default")
    status = {
        "startTime": at,
        "completionTime": at,
        "succeeded": 1,
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": at},
            {"type": "Complete", "status": "True", "lastTransitionTime": at},
        ],
    }
    jobs.patch(name, {"status": status}, subresource="status")


def _names(client: Client) -> list[str]:
    jobs = client.resource("batch/v1", "jobs", namespace="default")
    return sorted(j["metadata"]["name"] for j in jobs.list()["items"])


def test_expires_at_is_the_finish_plus_the_ttl() -> None:
    job = _job("j", 30)
    assert expires_at(job) is None
    job["status"] = {
        "conditions": [
            {"type": "Failed", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
        ]
    }
    assert expires_at(job) == datetime(2026, 1, 1, tzinfo=UTC).timestamp() + 30
    assert expires_at(_job("no-ttl", None)) is None


def test_a_finished_job_goes_after_its_ttl(client: Client) -> None:
    jobs = client.resource("batch/v1", "jobs", namespace="default")
    pods = client.resource("v1", "pods", namespace="default")
    job = jobs.create(_job("soon", 2))
    jobs.create(_job("kept", None))
    jobs.create(_job("running", 0))
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": "soon", "uid": job["metadata"]["uid"]}
    pods.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "soon-pod", "ownerReferences": [ref]},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
    )
    _finish(client, "soon")
    _finish(client, "kept", ago=3600)
    time.sleep(0.5)
    assert "soon" in _names(client)  # not due yet (due 1 to 2 s after it finished)
    _eventually(lambda: "soon" not in _names(client))
    _eventually(lambda: pods.list()["items"] == [])  # background: its pods went too
    assert _names(client) == ["kept", "running"]
