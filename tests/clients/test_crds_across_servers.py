"""Two ``kstore serve`` processes on one etcd, as two kube-apiservers: a CRD created through one
is served by the other within 2 s, and its deletion is seen by both."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests.clients.servers import storage_args
from tests.server.harness import start_server

pytestmark = pytest.mark.etcd

GROUP = "across.example.com"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"things.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Cluster",
        "names": {"plural": "things", "kind": "Thing"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}
THINGS = f"/apis/{GROUP}/v1/things"


def _until(client: httpx.Client, path: str, code: int, timeout: float) -> float:
    started = time.monotonic()
    while client.get(path).status_code != code:
        assert time.monotonic() - started < timeout, f"{path} did not answer {code} in {timeout} s"
        time.sleep(0.02)
    return time.monotonic() - started


def test_a_crd_made_on_one_server_is_served_by_the_other(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    with storage_args(request.config, "etcd") as args:
        one = start_server(tmp_path / "one", *args)
        two = start_server(tmp_path / "two", *args)
        try:
            with one.client() as a, two.client() as b:
                assert b.get(THINGS).status_code == 404
                assert (
                    a.post(
                        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=CRD
                    ).status_code
                    == 201
                )
                assert _until(b, THINGS, 200, 2.0) < 2.0
                made = b.post(
                    THINGS,
                    json={"apiVersion": f"{GROUP}/v1", "kind": "Thing", "metadata": {"name": "t"}},
                )
                assert made.status_code == 201
                assert (
                    a.get(f"{THINGS}/t").json()["metadata"]["uid"] == made.json()["metadata"]["uid"]
                )
                assert (
                    b.delete(
                        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.{GROUP}"
                    ).status_code
                    == 200
                )
                _until(a, THINGS, 404, 5.0)
                _until(b, THINGS, 404, 5.0)
        finally:
            assert one.stop() == 0, one.log()
            assert two.stop() == 0, two.log()
