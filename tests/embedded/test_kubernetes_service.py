"""The ``kubernetes`` Service of a store opened with ``kstore.open``: there as soon as the
store is open (first address of the range, port 443 to 6443), back when deleted, with no
Endpoints, EndpointSlice or Lease naming an address (nothing embedded serves one), and taken
over by a ``kstore serve`` that opens the store afterwards."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from kstore.embedded import Client, open
from kstore.errors import NotFound
from kstore.registry.registry import RegistryConfig
from tests.server.harness import start_server


def _service(client: Client) -> dict[str, Any]:
    found: dict[str, Any] = client.resource("v1", "services").namespace("default").get("kubernetes")
    return found


def test_the_service_is_there_without_endpoints(tmp_path: Path) -> None:
    with open(f"lmdb://{tmp_path / 'store'}?durable=false", controllers=()) as client:
        service = _service(client)
        assert service["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
        spec = service["spec"]
        assert (spec["type"], spec["clusterIP"], spec["clusterIPs"]) == (
            "ClusterIP",
            "10.0.0.1",
            ["10.0.0.1"],
        )
        assert spec["ports"] == [
            {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}
        ]
        for version, resource in (("v1", "endpoints"), ("discovery.k8s.io/v1", "endpointslices")):
            with pytest.raises(NotFound):
                client.resource(version, resource).namespace("default").get("kubernetes")
        leases = client.resource("coordination.k8s.io/v1", "leases").namespace("kube-system")
        names = [lease["metadata"]["name"] for lease in leases.list()["items"]]
        assert not [n for n in names if n.startswith("kube-apiserver-endpoint-")]
        # Deleted, it comes back (with the same cluster IP, freed by the delete).
        client.resource("v1", "services").namespace("default").delete("kubernetes")
        deadline = time.monotonic() + 10
        while True:
            try:
                assert _service(client)["spec"]["clusterIP"] == "10.0.0.1"
                break
            except NotFound:
                assert time.monotonic() < deadline, "the Service did not come back"
                time.sleep(0.05)


def test_the_range_and_the_system_namespaces_setting_are_followed(tmp_path: Path) -> None:
    config = RegistryConfig(service_cluster_ip_range="10.96.0.0/16")
    with open(f"lmdb://{tmp_path / 'a'}?durable=false", config=config) as client:
        assert _service(client)["spec"]["clusterIP"] == "10.96.0.1"
    # Without the system namespaces there is no default namespace to hold it.
    config = RegistryConfig(system_namespaces=False)
    with open(f"lmdb://{tmp_path / 'b'}?durable=false", config=config) as client:
        client.resource("v1", "namespaces").create({"metadata": {"name": "default"}})
        with pytest.raises(NotFound):
            _service(client)


def test_a_server_on_the_store_takes_the_service_over(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with open(f"lmdb://{data}", controllers=()) as client:
        assert _service(client)["spec"]["ports"][0]["targetPort"] == 6443
    server = start_server(data)
    try:
        port = int(server.url.rsplit(":", 1)[1])
        path = "/api/v1/namespaces/default/services/kubernetes"
        deadline = time.monotonic() + 15
        with httpx.Client(base_url=server.url, timeout=10) as http:
            while http.get(path).json()["spec"]["ports"][0]["targetPort"] != port:
                assert time.monotonic() < deadline, "the server kept the embedded port"
                time.sleep(0.05)
    finally:
        assert server.stop() == 0, server.log()
