"""The ``kubernetes`` Service and its Endpoints and EndpointSlice, through real kubectl and the
Python client on LMDB and on etcd: the Service's cluster IP is the first of the range and its
port 443 leads to the server's own port; the endpoints give the ``--advertise-address``; what
is deleted or edited comes back. Two servers on one etcd (the same port on two loopback
addresses) are both listed, write nothing once they agree, and a server that stops is taken
out; servers on different ports do not fight over the Service's port."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client

from tests.clients.kubectl import Kubectl
from tests.clients.servers import storage_args
from tests.server.harness import RunningServer, start_server

_ADVERTISED = "192.0.2.10"
_SERVICE = "/api/v1/namespaces/default/services/kubernetes"
_ENDPOINTS = "/api/v1/namespaces/default/endpoints/kubernetes"
_SLICE = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes"
_LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"


def _eventually(check: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)


def _port(server: RunningServer) -> int:
    return int(server.url.rsplit(":", 1)[1])


@pytest.fixture(scope="module")
def kstore_server(
    request: pytest.FixtureRequest, backend: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    """``kstore serve`` advertising a documentation address (loopback ones may not be
    endpoints)."""
    with storage_args(request.config, backend) as args:
        data = tmp_path_factory.mktemp(f"kubernetes-svc-{backend}") / "data"
        server = start_server(data, *args, f"--advertise-address={_ADVERTISED}")
        try:
            yield server
        finally:
            status = server.stop()
        assert status == 0, server.log()


def _slice_addresses(c: httpx.Client) -> list[str]:
    got = c.get(_SLICE)
    if got.status_code != 200:
        return []
    return [a for e in got.json().get("endpoints") or [] for a in e["addresses"]]


def test_kubectl_gets_the_kubernetes_service(
    kubectl: Kubectl, kstore_server: RunningServer
) -> None:
    _eventually(lambda: kubectl.run("get", "svc", "kubernetes", "-n", "default").code == 0)
    row = kubectl.ok("get", "svc", "kubernetes", "-n", "default", "--no-headers").split()
    assert row[:5] == ["kubernetes", "ClusterIP", "10.0.0.1", "<none>", "443/TCP"]
    target = kubectl.ok(
        "get", "svc", "kubernetes", "-n", "default", "-o", "jsonpath={.spec.ports[0].targetPort}"
    )
    assert int(target) == _port(kstore_server)
    labels = kubectl.ok(
        "get", "svc", "kubernetes", "-n", "default", "-o", "jsonpath={.metadata.labels}"
    )
    assert labels == '{"component":"apiserver","provider":"kubernetes"}'


def test_kubectl_gets_the_endpoint_slice_and_endpoints(
    kubectl: Kubectl, kstore_server: RunningServer
) -> None:
    port = _port(kstore_server)
    with kstore_server.client() as c:
        _eventually(lambda: _slice_addresses(c) == [_ADVERTISED])
    rows = kubectl.ok("get", "endpointslices", "-n", "default", "--no-headers").splitlines()
    assert [r.split()[:4] for r in rows] == [["kubernetes", "IPv4", str(port), _ADVERTISED]]
    selected = kubectl.ok(
        "get", "endpointslices", "-n", "default", "-l", "kubernetes.io/service-name=kubernetes",
        "-o", "name",
    )  # fmt: skip
    assert selected.strip() == "endpointslice.discovery.k8s.io/kubernetes"
    endpoints = kubectl.ok("get", "endpoints", "kubernetes", "-n", "default", "--no-headers")
    assert endpoints.split()[:2] == ["kubernetes", f"{_ADVERTISED}:{port}"]


def test_python_client_reads_them_and_what_is_removed_comes_back(
    api_client: client.ApiClient, kstore_server: RunningServer
) -> None:
    core = client.CoreV1Api(api_client)
    discovery = client.DiscoveryV1Api(api_client)
    port = _port(kstore_server)
    with kstore_server.client() as c:
        _eventually(lambda: _slice_addresses(c) == [_ADVERTISED])
    endpoints = core.read_namespaced_endpoints("kubernetes", "default")
    assert endpoints.metadata.labels == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    (subset,) = endpoints.subsets
    assert [a.ip for a in subset.addresses] == [_ADVERTISED]
    assert [(p.name, p.port, p.protocol) for p in subset.ports] == [("https", port, "TCP")]
    found = discovery.read_namespaced_endpoint_slice("kubernetes", "default")
    assert found.address_type == "IPv4"
    assert [(p.name, p.port, p.protocol) for p in found.ports] == [("https", port, "TCP")]
    assert [e.conditions.ready for e in found.endpoints] == [True]
    # Deleted, the slice is written again; emptied, the Endpoints are filled again.
    discovery.delete_namespaced_endpoint_slice("kubernetes", "default")
    core.patch_namespaced_endpoints("kubernetes", "default", {"subsets": []})
    with kstore_server.client() as c:
        _eventually(lambda: _slice_addresses(c) == [_ADVERTISED])
        _eventually(
            lambda: (
                c.get(_ENDPOINTS).json().get("subsets", [{}])[0].get("addresses")
                == [{"ip": _ADVERTISED}]
            )
        )
    # The Service's port edited away comes back to the server's.
    core.patch_namespaced_service(
        "kubernetes",
        "default",
        {"spec": {"ports": [{"name": "https", "port": 443, "targetPort": 1}]}},
    )
    _eventually(
        lambda: (
            core.read_namespaced_service("kubernetes", "default").spec.ports[0].target_port == port
        )
    )


def test_endpoint_reconciler_none_keeps_the_service_only(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data", "--endpoint-reconciler-type=none")
    try:
        with server.client() as c:
            _eventually(lambda: c.get(_SERVICE).status_code == 200)
            time.sleep(1.0)
            assert c.get(_ENDPOINTS).status_code == 404
            assert c.get(_SLICE).status_code == 404
            names = [lease["metadata"]["name"] for lease in c.get(_LEASES).json()["items"]]
            assert not [n for n in names if n.startswith("kube-apiserver-endpoint-")]
    finally:
        assert server.stop() == 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _versions(c: httpx.Client) -> tuple[Any, ...]:
    return tuple(
        c.get(p).json()["metadata"]["resourceVersion"] for p in (_SERVICE, _ENDPOINTS, _SLICE)
    )


@pytest.mark.etcd
def test_two_servers_on_one_etcd_are_both_listed_and_agree(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    port = _free_port()
    with storage_args(request.config, "etcd") as args:
        one = start_server(
            tmp_path / "one", *args, "--bind-address=127.0.0.2", f"--port={port}",
            "--advertise-address=192.0.2.11",
        )  # fmt: skip
        two = start_server(
            tmp_path / "two", *args, "--bind-address=127.0.0.3", f"--port={port}",
            "--advertise-address=192.0.2.12",
        )  # fmt: skip
        try:
            with one.client() as a, two.client() as b:
                both = ["192.0.2.11", "192.0.2.12"]
                _eventually(lambda: _slice_addresses(a) == both)
                _eventually(
                    lambda: (
                        [x["ip"] for x in a.get(_ENDPOINTS).json()["subsets"][0]["addresses"]]
                        == both
                    )
                )
                # Once they agree neither rewrites what the other wrote.
                settled = _versions(a)
                time.sleep(2.0)
                assert _versions(b) == settled
                leases = [
                    lease["spec"]["holderIdentity"]
                    for lease in a.get(_LEASES).json()["items"]
                    if lease["metadata"]["name"].startswith("kube-apiserver-endpoint-")
                ]
                assert sorted(leases) == [f"192.0.2.11:{port}", f"192.0.2.12:{port}"]
                # A server that stops takes itself out.
                assert two.stop() == 0
                _eventually(lambda: _slice_addresses(a) == ["192.0.2.11"])
                _eventually(
                    lambda: (
                        [x["ip"] for x in a.get(_ENDPOINTS).json()["subsets"][0]["addresses"]]
                        == ["192.0.2.11"]
                    )
                )
        finally:
            for server in (one, two):
                if server.process.poll() is None:
                    assert server.stop() == 0


@pytest.mark.etcd
def test_servers_on_different_ports_keep_the_first_ones_port(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    with storage_args(request.config, "etcd") as args:
        one = start_server(tmp_path / "one", *args, "--advertise-address=192.0.2.21")
        try:
            with one.client() as a:
                _eventually(lambda: _slice_addresses(a) == ["192.0.2.21"])
                two = start_server(tmp_path / "two", *args, "--advertise-address=192.0.2.22")
                try:
                    time.sleep(2.0)
                    settled = _versions(a)
                    time.sleep(1.0)
                    assert _versions(a) == settled
                    service = a.get(_SERVICE).json()
                    assert service["spec"]["ports"][0]["targetPort"] == _port(one)
                    assert _slice_addresses(a) == ["192.0.2.21"]
                finally:
                    assert two.stop() == 0
        finally:
            assert one.stop() == 0
