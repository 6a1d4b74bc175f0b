"""Service allocation through real clients, on LMDB and on etcd: ``kubectl create service``,
``kubectl expose``, a LoadBalancer with ``externalTrafficPolicy: Local`` (now accepted, with a
health check node port), a requested IP that is taken, a node port outside the range, a full
range, the IPAddress and ServiceCIDR objects (``kubectl get`` with their columns) and the Python
client's typed networking API.

The module's server runs with ``--service-cluster-ip-range=10.0.0.0/27`` (29 addresses to hand
out: .1 is the kubernetes Service's, .0 and .31 are never used) and
``--service-node-port-range=30000-30099``. On etcd a second server on the same prefix races the
first creating Services: no address or port is given twice.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl
from tests.clients.servers import storage_args
from tests.server.harness import RunningServer, start_server

RANGE = ipaddress.ip_network("10.0.0.0/27")
#: What dynamic allocation may hand out: not the network, broadcast or first address.
DYNAMIC = {str(ip) for ip in RANGE.hosts()} - {"10.0.0.1"}


FLAGS = ("--service-cluster-ip-range=10.0.0.0/27", "--service-node-port-range=30000-30099")


@pytest.fixture(scope="module")
def server_args(request: pytest.FixtureRequest, backend: str) -> Iterator[tuple[str, ...]]:
    """The module's storage flags (on etcd: its prefix, which a second server may share)."""
    with storage_args(request.config, backend) as args:
        yield (*args, *FLAGS)


@pytest.fixture(scope="module")
def kstore_server(
    server_args: tuple[str, ...], backend: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    server = start_server(tmp_path_factory.mktemp(f"allocation-{backend}") / "data", *server_args)
    try:
        yield server
    finally:
        status = server.stop()
    assert status == 0, server.log()


def _get(k: Kubectl, *args: str) -> Any:
    return json.loads(k.ok("get", *args, "-o", "json"))


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def test_kubectl_create_service_clusterip(k: Kubectl) -> None:
    out = k.ok("create", "service", "clusterip", "web", "--tcp=80:8080")
    assert out.strip() == "service/web created"
    spec = _get(k, "service", "web")["spec"]
    assert spec["clusterIP"] in DYNAMIC
    assert spec["clusterIPs"] == [spec["clusterIP"]]
    assert spec["ipFamilies"] == ["IPv4"]
    assert spec["ipFamilyPolicy"] == "SingleStack"
    rows = _rows(k.ok("get", "service", "web"))
    assert rows[0] == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert rows[1][:5] == ["web", "ClusterIP", spec["clusterIP"], "<none>", "80/TCP"]
    address = _get(k, "ipaddress", spec["clusterIP"])
    assert address["spec"]["parentRef"] == {
        "resource": "services",
        "namespace": k.namespace,
        "name": "web",
    }
    ip_rows = _rows(k.ok("get", "ip", spec["clusterIP"]))
    assert ip_rows[0] == ["NAME", "PARENTREF", "AGE"]
    assert ip_rows[1][:2] == [spec["clusterIP"], f"services/{k.namespace}/web"]
    k.ok("delete", "service", "web")
    assert k.fails("get", "ipaddress", spec["clusterIP"]).code == 1


def test_kubectl_expose_a_deployment_as_a_node_port(k: Kubectl) -> None:
    k.ok("create", "deployment", "api", "--image=nginx", "--port=8080")
    out = k.ok("expose", "deployment", "api", "--type=NodePort", "--port=80", "--target-port=8080")
    assert out.strip() == "service/api exposed"
    spec = _get(k, "service", "api")["spec"]
    node_port = spec["ports"][0]["nodePort"]
    assert 30000 <= node_port <= 30099
    assert spec["clusterIP"] in DYNAMIC
    rows = _rows(k.ok("get", "service", "api", "-o", "wide"))
    assert rows[0] == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    assert rows[1][:5] == ["api", "NodePort", spec["clusterIP"], "<none>", f"80:{node_port}/TCP"]


LOAD_BALANCER = """\
apiVersion: v1
kind: Service
metadata:
  name: edge
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  selector:
    app: edge
  ports:
  - name: http
    port: 80
  - name: https
    port: 443
"""


def test_a_load_balancer_with_local_traffic_gets_a_health_check_node_port(k: Kubectl) -> None:
    path = k.write("edge.yaml", LOAD_BALANCER)
    assert "serverside-applied" in k.ok("apply", "--server-side", "-f", str(path))
    spec = _get(k, "service", "edge")["spec"]
    ports = [p["nodePort"] for p in spec["ports"]] + [spec["healthCheckNodePort"]]
    assert all(30000 <= p <= 30099 for p in ports)
    assert len(set(ports)) == 3
    # Applying the same manifest again keeps every allocation.
    k.ok("apply", "--server-side", "-f", str(path))
    again = _get(k, "service", "edge")["spec"]
    assert [p["nodePort"] for p in again["ports"]] + [again["healthCheckNodePort"]] == ports
    assert again["clusterIP"] == spec["clusterIP"]
    k.ok("delete", "-f", str(path))


def test_a_taken_ip_and_a_port_out_of_range_are_refused(k: Kubectl) -> None:
    k.ok("create", "service", "clusterip", "first", "--tcp=80", "--clusterip=10.0.0.9")
    taken = k.fails("create", "service", "clusterip", "second", "--tcp=80", "--clusterip=10.0.0.9")
    assert taken.stderr.strip() == (
        'error: failed to create ClusterIP service: Service "second" is invalid: '
        'spec.clusterIPs: Invalid value: ["10.0.0.9"]: '
        "failed to allocate IP 10.0.0.9: provided IP is already allocated"
    )
    outside = k.fails("create", "service", "nodeport", "third", "--tcp=80", "--node-port=31000")
    assert outside.stderr.strip() == (
        'error: failed to create NodePort service: Service "third" is invalid: '
        "spec.ports[0].nodePort: Invalid value: 31000: provided "
        "port is not in the valid range. The range of valid ports is 30000-30099"
    )
    # Neither refused Service holds an address.
    assert k.fails("get", "service", "second").code == 1
    owners = [
        a["spec"]["parentRef"]["name"]
        for a in _get(k, "ipaddresses")["items"]
        if a["spec"]["parentRef"].get("namespace") == k.namespace
    ]
    assert owners == ["first"]


def test_a_full_range_refuses_the_next_service(
    api_client: client.ApiClient, core: client.CoreV1Api, namespace: str
) -> None:
    networking = client.NetworkingV1Api(api_client)
    held = {a.metadata.name for a in networking.list_ip_address().items}
    free = sorted(DYNAMIC - held)
    body = {"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80}]}}
    created = []
    for i in range(len(free)):
        svc = core.create_namespaced_service(namespace, {**body, "metadata": {"name": f"s{i}"}})
        created.append(svc.spec.cluster_ip)
    assert sorted(created) == free
    with pytest.raises(ApiException) as full:
        core.create_namespaced_service(namespace, {**body, "metadata": {"name": "one-too-many"}})
    assert full.value.status == 500
    status = json.loads(full.value.body)
    assert status["message"] == (
        "Internal error occurred: failed to allocate a serviceIP: range is full"
    )
    assert status["reason"] == "InternalError"
    core.delete_namespaced_service("s0", namespace)
    svc = core.create_namespaced_service(namespace, {**body, "metadata": {"name": "one-more"}})
    assert svc.spec.cluster_ip == created[0]
    for i in range(1, len(free)):
        core.delete_namespaced_service(f"s{i}", namespace)
    core.delete_namespaced_service("one-more", namespace)


def test_python_client_networking_objects(api_client: client.ApiClient) -> None:
    networking = client.NetworkingV1Api(api_client)
    default = networking.read_service_cidr("kubernetes")
    assert default.spec.cidrs == ["10.0.0.0/27"]
    assert [(c.type, c.status) for c in default.status.conditions] == [("Ready", "True")]
    extra = networking.create_service_cidr(
        client.V1ServiceCIDR(
            metadata=client.V1ObjectMeta(name="extra"),
            spec=client.V1ServiceCIDRSpec(cidrs=["10.96.0.0/24"]),
        )
    )
    assert extra.spec.cidrs == ["10.96.0.0/24"]
    with pytest.raises(ApiException) as bad:
        networking.create_service_cidr(
            {"metadata": {"name": "bad"}, "spec": {"cidrs": ["10.96.0.1/24"]}}
        )
    assert bad.value.status == 422
    assert json.loads(bad.value.body)["message"] == (
        'ServiceCIDR.networking.k8s.io "bad" is invalid: spec.cidrs[0]: Invalid value: '
        '"10.96.0.1/24": must be in canonical form ("10.96.0.0/24")'
    )
    networking.delete_service_cidr("extra")
    address = networking.create_ip_address(
        client.V1IPAddress(
            metadata=client.V1ObjectMeta(name="192.168.7.7"),
            spec=client.V1IPAddressSpec(
                parent_ref=client.V1ParentReference(
                    group="example.com", resource="gateways", name="gw", namespace="default"
                )
            ),
        )
    )
    assert address.spec.parent_ref.resource == "gateways"
    assert "192.168.7.7" in {a.metadata.name for a in networking.list_ip_address().items}
    networking.delete_ip_address("192.168.7.7")


def test_kubectl_get_servicecidrs(kubectl: Kubectl) -> None:
    rows = _rows(kubectl.ok("get", "servicecidrs"))
    assert rows[0] == ["NAME", "CIDRS", "AGE"]
    assert rows[1][:2] == ["kubernetes", "10.0.0.0/27"]


def test_concurrent_creates_never_allocate_twice(
    backend: str,
    server_args: tuple[str, ...],
    core: client.CoreV1Api,
    namespace: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """16 NodePort Services created at once, 8 at a time: on etcd half through a second server
    sharing the store (as two kube-apiservers), on LMDB all through the one server."""
    other = None
    if backend == "etcd":
        other = start_server(tmp_path_factory.mktemp("allocation-other") / "data", *server_args)
    try:
        configuration = client.Configuration()
        configuration.host = other.url if other is not None else core.api_client.configuration.host
        with client.ApiClient(configuration) as other_api:
            apis = [core, client.CoreV1Api(other_api)]
            ports = [{"name": "http", "port": 80}, {"name": "https", "port": 443}]
            body = {
                "apiVersion": "v1",
                "kind": "Service",
                "spec": {"type": "NodePort", "ports": ports},
            }

            def create(i: int) -> Any:
                named = {**body, "metadata": {"name": f"race-{i}"}}
                return apis[i % 2].create_namespaced_service(namespace, named)

            with ThreadPoolExecutor(max_workers=8) as pool:
                created = list(pool.map(create, range(16), timeout=120))
    finally:
        if other is not None:
            assert other.stop() == 0, other.log()
    ips = [s.spec.cluster_ip for s in created]
    node_ports = [p.node_port for s in created for p in s.spec.ports]
    assert len(set(ips)) == 16
    assert len(set(node_ports)) == 32
    assert all(30000 <= p <= 30099 for p in node_ports)
    networking = client.NetworkingV1Api(core.api_client)
    owners = {
        a.metadata.name: a.spec.parent_ref.name
        for a in networking.list_ip_address().items
        if a.spec.parent_ref.namespace == namespace
    }
    assert owners == {s.spec.cluster_ip: s.metadata.name for s in created}
    for s in created:
        core.delete_namespaced_service(s.metadata.name, namespace)
    assert not [
        a for a in networking.list_ip_address().items if a.spec.parent_ref.namespace == namespace
    ]


def test_api_resources_list_the_allocation_kinds(kubectl: Kubectl) -> None:
    rows = _rows(kubectl.ok("api-resources", "--api-group=networking.k8s.io"))
    assert ["ipaddresses", "ip", "networking.k8s.io/v1", "false", "IPAddress"] in rows
    assert ["servicecidrs", "networking.k8s.io/v1", "false", "ServiceCIDR"] in rows
    explained = kubectl.ok("explain", "ipaddresses.spec")
    assert "parentRef\t<ParentReference> -required-" in explained
