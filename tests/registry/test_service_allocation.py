"""Service allocation in the registry: cluster IPs as IPAddress objects, node ports in the
stored bitmap, undone on failures, released on type changes and deletes, kept across restarts."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import BadRequest, InternalError, Invalid
from kstore.registry.allocation import parse_node_port_range, parse_service_cidrs
from kstore.registry.interface import CreateOptions, DeleteOptions, RequestContext, UpdateOptions
from kstore.registry.registry import StoreRegistry
from kstore.storage.interface import ListOptions
from kstore.storage.lmdb import LmdbBackend, LmdbConfig
from tests.registry.conftest import make_registry
from tests.registry.objects import ctx, hub


def _service(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"ports": [{"port": 80}], "selector": {"app": name}, **spec},
    }


def _create(registry: StoreRegistry, scheme: Scheme, obj: Any, *, dry_run: bool = False) -> Any:
    store = registry.store("", "services")
    return store.create(ctx(), hub(scheme, obj), CreateOptions(dry_run=dry_run)).object


def _addresses(registry: StoreRegistry) -> dict[str, Any]:
    store = registry.store("networking.k8s.io", "ipaddresses")
    return {i["metadata"]["name"]: i for i in store.list(RequestContext(), ListOptions()).items}


def _ports_in_use(registry: StoreRegistry) -> set[int]:
    services = registry.store("", "services")
    assert services.allocator is not None  # type: ignore[attr-defined]
    ports = services.allocator.node_ports  # type: ignore[attr-defined]
    bits = ports.read()
    return {ports.range.base + i for i in range(ports.range.size) if bits >> i & 1}


def _update(registry: StoreRegistry, name: str, change: Any) -> Any:
    store = registry.store("", "services")

    def updated(current: Any) -> Any:
        obj = dict(current)
        obj["spec"] = dict(current["spec"])
        change(obj["spec"])
        return obj

    return store.update(ctx(), name, updated, UpdateOptions()).object


def _delete(registry: StoreRegistry, name: str) -> None:
    registry.store("", "services").delete(ctx(), name, DeleteOptions())


@pytest.fixture
def small(scheme: Scheme, backend: LmdbBackend) -> Any:
    r = make_registry(
        scheme,
        backend,
        service_cluster_ip_range="10.0.0.0/30",
        service_node_port_range="30000-30002",
    )
    try:
        yield r
    finally:
        r.close()


def test_a_cluster_ip_service_gets_an_address_and_its_ip_address_object(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    spec = _create(registry, scheme, _service("web"))["spec"]
    ip = ipaddress.ip_address(spec["clusterIP"])
    assert ip in ipaddress.ip_network("10.0.0.0/24")
    # The network address and the kubernetes Service's first address are never handed out.
    assert str(ip) not in ("10.0.0.0", "10.0.0.1", "10.0.0.255")
    assert spec["clusterIPs"] == [str(ip)]
    assert spec["ipFamilies"] == ["IPv4"]
    assert spec["ipFamilyPolicy"] == "SingleStack"
    assert "nodePort" not in spec["ports"][0]
    address = _addresses(registry)[str(ip)]
    assert address["metadata"]["labels"] == {
        "ipaddress.kubernetes.io/ip-family": "IPv4",
        "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io",
    }
    assert address["spec"]["parentRef"] == {
        "resource": "services",
        "namespace": "default",
        "name": "web",
    }


def test_the_default_service_cidr_holds_the_flag(registry: StoreRegistry) -> None:
    cidr = registry.store("networking.k8s.io", "servicecidrs").get(RequestContext(), "kubernetes")
    assert cidr["spec"]["cidrs"] == ["10.0.0.0/24"]
    assert [(c["type"], c["status"]) for c in cidr["status"]["conditions"]] == [("Ready", "True")]


def test_headless_and_external_name_services_get_no_address(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    headless = _create(registry, scheme, _service("db", clusterIP="None"))["spec"]
    assert headless["clusterIPs"] == ["None"]
    assert headless["ipFamilies"] == ["IPv4"]
    assert headless["ipFamilyPolicy"] == "SingleStack"
    name = _service("ext", type="ExternalName", externalName="example.com")
    external = _create(registry, scheme, name)["spec"]
    assert "clusterIP" not in external
    assert "ipFamilies" not in external
    assert _addresses(registry) == {}


def test_a_requested_address_that_is_taken_or_outside_the_range_is_refused(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme, _service("a", clusterIP="10.0.0.10"))
    with pytest.raises(Invalid) as taken:
        _create(registry, scheme, _service("b", clusterIP="10.0.0.10"))
    assert taken.value.message == (
        'Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.10"]: failed to '
        "allocate IP 10.0.0.10: provided IP is already allocated"
    )
    with pytest.raises(Invalid) as outside:
        _create(registry, scheme, _service("c", clusterIP="192.168.9.9"))
    assert outside.value.message == (
        'Service "c" is invalid: spec.clusterIPs: Invalid value: ["192.168.9.9"]: failed to '
        "allocate IP 192.168.9.9: the provided network does not match the current range"
    )
    assert list(_addresses(registry)) == ["10.0.0.10"]


def test_a_full_range_is_an_internal_error_and_leaves_nothing(
    small: StoreRegistry, scheme: Scheme
) -> None:
    # 10.0.0.0/30: .1 is the kubernetes Service's, .2 the only one to hand out.
    assert _create(small, scheme, _service("a"))["spec"]["clusterIP"] == "10.0.0.2"
    with pytest.raises(InternalError) as full:
        _create(small, scheme, _service("b", type="NodePort"))
    assert full.value.message == (
        "Internal error occurred: failed to allocate a serviceIP: range is full"
    )
    assert list(_addresses(small)) == ["10.0.0.2"]
    assert _ports_in_use(small) == set()
    _delete(small, "a")
    assert _addresses(small) == {}
    assert _create(small, scheme, _service("b"))["spec"]["clusterIP"] == "10.0.0.2"


def test_node_ports_for_node_port_and_load_balancer_services(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    valid = parse_node_port_range("30000-32767")
    node_port = _create(registry, scheme, _service("np", type="NodePort"))["spec"]
    port = node_port["ports"][0]["nodePort"]
    assert valid.contains(port)
    lb = _create(
        registry,
        scheme,
        _service("lb", type="LoadBalancer", externalTrafficPolicy="Local"),
    )["spec"]
    health = lb["healthCheckNodePort"]
    assert valid.contains(health)
    assert len({port, health, lb["ports"][0]["nodePort"]}) == 3
    no_ports = _create(
        registry,
        scheme,
        _service("lb2", type="LoadBalancer", allocateLoadBalancerNodePorts=False),
    )["spec"]
    assert "nodePort" not in no_ports["ports"][0]
    assert _ports_in_use(registry) == {port, health, lb["ports"][0]["nodePort"]}


def test_a_requested_node_port_that_is_taken_or_outside_the_range_is_refused(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(
        registry, scheme, _service("a", type="NodePort", ports=[{"port": 80, "nodePort": 30080}])
    )
    with pytest.raises(Invalid) as taken:
        _create(
            registry,
            scheme,
            _service("b", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]),
        )
    assert taken.value.message == (
        'Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 30080: '
        "provided port is already allocated"
    )
    with pytest.raises(Invalid) as outside:
        _create(
            registry, scheme, _service("c", type="NodePort", ports=[{"port": 80, "nodePort": 80}])
        )
    assert outside.value.message == (
        'Service "c" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is '
        "not in the valid range. The range of valid ports is 30000-32767"
    )
    # Neither refused Service kept its cluster IP.
    assert len(_addresses(registry)) == 1
    assert _ports_in_use(registry) == {30080}


def test_a_create_refused_by_validation_leaves_nothing_allocated(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    bad = _service("web", type="NodePort", sessionAffinity="Sometimes")
    with pytest.raises(Invalid):
        _create(registry, scheme, bad)
    assert _addresses(registry) == {}
    assert _ports_in_use(registry) == set()


def test_a_dry_run_allocates_nothing(registry: StoreRegistry, scheme: Scheme) -> None:
    spec = _create(registry, scheme, _service("web", type="NodePort"), dry_run=True)["spec"]
    assert spec["clusterIP"]
    assert spec["ports"][0]["nodePort"]
    assert _addresses(registry) == {}
    assert _ports_in_use(registry) == set()


def test_type_changes_allocate_and_release(registry: StoreRegistry, scheme: Scheme) -> None:
    created = _create(registry, scheme, _service("web", type="NodePort"))["spec"]
    ip = created["clusterIP"]

    def to_cluster_ip(spec: dict[str, Any]) -> None:
        spec["type"] = "ClusterIP"
        spec.pop("externalTrafficPolicy", None)

    spec = _update(registry, "web", to_cluster_ip)["spec"]
    assert "nodePort" not in spec["ports"][0]
    assert spec["clusterIP"] == ip
    assert _ports_in_use(registry) == set()

    def to_external_name(spec: dict[str, Any]) -> None:
        spec["type"] = "ExternalName"
        spec["externalName"] = "example.com"

    spec = _update(registry, "web", to_external_name)["spec"]
    assert "clusterIP" not in spec
    assert _addresses(registry) == {}

    def to_load_balancer(spec: dict[str, Any]) -> None:
        spec["type"] = "LoadBalancer"
        spec.pop("externalName")
        spec["externalTrafficPolicy"] = "Local"
        spec["allocateLoadBalancerNodePorts"] = True
        spec["internalTrafficPolicy"] = "Cluster"

    spec = _update(registry, "web", to_load_balancer)["spec"]
    assert list(_addresses(registry)) == [spec["clusterIP"]]
    assert _ports_in_use(registry) == {spec["ports"][0]["nodePort"], spec["healthCheckNodePort"]}
    _delete(registry, "web")
    assert _addresses(registry) == {}
    assert _ports_in_use(registry) == set()


def test_allocations_survive_a_restart(tmp_path: Path, scheme: Scheme) -> None:
    path = tmp_path / "restart"
    backend = LmdbBackend(LmdbConfig(path=path, durable=False, compaction_interval_s=0))
    try:
        first = make_registry(scheme, backend)
        try:
            spec = _create(first, scheme, _service("a", type="NodePort"))["spec"]
        finally:
            first.close()
    finally:
        backend.close()
    backend = LmdbBackend(LmdbConfig(path=path, durable=False, compaction_interval_s=0))
    try:
        second = make_registry(scheme, backend)
        try:
            with pytest.raises(Invalid, match="provided IP is already allocated"):
                _create(second, scheme, _service("b", clusterIP=spec["clusterIP"]))
            again = _service(
                "c", type="NodePort", ports=[{"port": 80, "nodePort": spec["ports"][0]["nodePort"]}]
            )
            with pytest.raises(Invalid, match="provided port is already allocated"):
                _create(second, scheme, again)
        finally:
            second.close()
    finally:
        backend.close()


def test_a_service_deleted_when_its_last_finalizer_goes_releases_everything(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    obj = _service("web", type="NodePort")
    obj["metadata"]["finalizers"] = ["example.com/hold"]
    _create(registry, scheme, obj)
    _delete(registry, "web")
    assert len(_addresses(registry)) == 1
    assert len(_ports_in_use(registry)) == 1
    store = registry.store("", "services")

    def drop_finalizers(current: Any) -> Any:
        out = dict(current)
        out["metadata"] = {**current["metadata"], "finalizers": []}
        return out

    store.update(ctx(), "web", drop_finalizers, UpdateOptions())
    assert _addresses(registry) == {}
    assert _ports_in_use(registry) == set()


def test_dual_stack_ranges(scheme: Scheme, backend: LmdbBackend) -> None:
    registry = make_registry(scheme, backend, service_cluster_ip_range="10.0.0.0/24,fd00::/120")
    try:
        single = _create(registry, scheme, _service("single"))["spec"]
        assert single["ipFamilies"] == ["IPv4"]
        assert len(single["clusterIPs"]) == 1
        both = _create(registry, scheme, _service("both", ipFamilyPolicy="PreferDualStack"))
        spec = both["spec"]
        assert spec["ipFamilies"] == ["IPv4", "IPv6"]
        assert ipaddress.ip_address(spec["clusterIPs"][1]) in ipaddress.ip_network("fd00::/120")
        v6 = _create(registry, scheme, _service("v6", ipFamilies=["IPv6"]))["spec"]
        assert ipaddress.ip_address(v6["clusterIP"]).version == 6
        families = {
            a["metadata"]["labels"]["ipaddress.kubernetes.io/ip-family"]
            for a in _addresses(registry).values()
        }
        assert families == {"IPv4", "IPv6"}
        cidr = registry.store("networking.k8s.io", "servicecidrs").get(
            RequestContext(), "kubernetes"
        )
        assert cidr["spec"]["cidrs"] == ["10.0.0.0/24", "fd00::/120"]
    finally:
        registry.close()


def test_single_stack_clusters_refuse_required_dual_stack(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    with pytest.raises(Invalid) as refused:
        _create(registry, scheme, _service("web", ipFamilyPolicy="RequireDualStack"))
    assert refused.value.message == (
        'Service "web" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": '
        "this cluster is not configured for dual-stack services"
    )
    assert _addresses(registry) == {}


@pytest.mark.parametrize(
    ("flag", "ok"),
    [
        ("10.0.0.0/24", True),
        ("10.0.0.0/24,fd00::/108", True),
        ("10.0.0.0/24,10.1.0.0/24", False),
        ("nonsense", False),
        ("", False),
    ],
)
def test_the_cluster_ip_range_flag(flag: str, ok: bool) -> None:
    if ok:
        assert [str(n) for n in parse_service_cidrs(flag)] == flag.split(",")
    else:
        with pytest.raises(BadRequest):
            parse_service_cidrs(flag)


def test_the_node_port_range_flag() -> None:
    assert str(parse_node_port_range("30000-32767")) == "30000-32767"
    assert parse_node_port_range("30000-32767").size == 2768
    assert str(parse_node_port_range("30000+9")) == "30000-30009"
    for bad in ("32767-30000", "x-y", "0-10", "1-70000"):
        with pytest.raises(BadRequest):
            parse_node_port_range(bad)


def test_service_cidr_status_is_the_status_subresources(registry: StoreRegistry) -> None:
    store = registry.store("networking.k8s.io", "servicecidrs")
    created = store.create(
        RequestContext(),
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "ServiceCIDR",
            "metadata": {"name": "extra"},
            "spec": {"cidrs": ["10.96.0.0/24"]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        },
        CreateOptions(),
    ).object
    assert created["status"] == {}
    assert "generation" not in created["metadata"]

    def with_status(current: Any) -> Any:
        return {
            **current,
            "spec": {"cidrs": ["10.97.0.0/24"]},
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "False",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                        "reason": "Terminating",
                        "message": "",
                    }
                ]
            },
        }

    updated = store.update(
        RequestContext(), "extra", with_status, UpdateOptions(subresource="status")
    ).object
    assert updated["spec"] == {"cidrs": ["10.96.0.0/24"]}
    assert updated["status"]["conditions"][0]["reason"] == "Terminating"
    with pytest.raises(Invalid, match="field is immutable"):
        store.update(RequestContext(), "extra", with_status, UpdateOptions())


def test_a_replace_without_the_allocated_values_keeps_them(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    manifest = _service(
        "edge",
        type="LoadBalancer",
        externalTrafficPolicy="Local",
        ports=[{"name": "http", "port": 80}, {"name": "https", "port": 443}],
    )
    created = _create(registry, scheme, manifest)["spec"]
    store = registry.store("", "services")
    body = hub(scheme, manifest)

    def replaced(current: Any) -> Any:
        return {**body, "metadata": {**body["metadata"], "uid": current["metadata"]["uid"]}}

    spec = store.update(ctx(), "edge", replaced, UpdateOptions()).object["spec"]
    for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "healthCheckNodePort"):
        assert spec[key] == created[key], key
    assert [p["nodePort"] for p in spec["ports"]] == [p["nodePort"] for p in created["ports"]]
    assert _ports_in_use(registry) == {
        *(p["nodePort"] for p in created["ports"]),
        created["healthCheckNodePort"],
    }
