"""networking.k8s.io/v1 IPAddress and ServiceCIDR validation, as Kubernetes' networking API words
it."""

from __future__ import annotations

from typing import Any

from kstore.api.kinds.servicecidr import (
    validate_ip_address,
    validate_ip_address_update,
    validate_service_cidr,
    validate_service_cidr_update,
)
from kstore.errors import Cause


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def _ip(ip_name: str, **parent: Any) -> dict[str, Any]:
    ref = {"group": "", "resource": "services", "namespace": "default", "name": "web", **parent}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IPAddress",
        "metadata": {"name": ip_name, "resourceVersion": "2"},
        "spec": {"parentRef": ref},
    }


def _cidr(*cidrs: str) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "ServiceCIDR",
        "metadata": {"name": "extra", "resourceVersion": "2"},
        "spec": {"cidrs": list(cidrs)},
    }


def test_ip_address_names_are_canonical_ip_addresses() -> None:
    assert validate_ip_address(_ip("10.0.0.7")) == []
    assert validate_ip_address(_ip("2001:db8::1")) == []
    assert _rendered(validate_ip_address(_ip("web"))) == [
        'metadata.name: Invalid value: "web": ParseAddr("web"): unable to parse IP'
    ]
    assert _rendered(validate_ip_address(_ip("2001:DB8::1"))) == [
        'metadata.name: Invalid value: "2001:DB8::1": must be a canonical format IP address'
    ]


def test_ip_address_parent_reference() -> None:
    ip = _ip("10.0.0.7")
    del ip["spec"]["parentRef"]
    assert _rendered(validate_ip_address(ip)) == ["spec.parentRef: Required value"]
    causes = validate_ip_address(_ip("10.0.0.7", resource="", name="", group="Bad_Group"))
    assert [c.field for c in causes] == [
        "spec.parentRef.group",
        "spec.parentRef.resource",
        "spec.parentRef.name",
    ]
    assert _rendered(validate_ip_address(_ip("10.0.0.7", name="a/b")))[0].startswith(
        "spec.parentRef.name: Invalid value: \"a/b\": may not contain '/'"
    )


def test_ip_address_parent_reference_is_immutable() -> None:
    old = _ip("10.0.0.7")
    assert validate_ip_address_update(_ip("10.0.0.7"), old) == []
    causes = validate_ip_address_update(_ip("10.0.0.7", name="other"), old)
    assert [(c.field, c.message.endswith("field is immutable")) for c in causes] == [
        ("spec.parentRef", True)
    ]


def test_service_cidr_holds_one_or_two_canonical_cidrs_of_different_families() -> None:
    assert validate_service_cidr(_cidr("10.0.0.0/24")) == []
    assert validate_service_cidr(_cidr("10.0.0.0/24", "fd00::/108")) == []
    assert _rendered(validate_service_cidr(_cidr())) == [
        "spec.cidrs: Required value: at least one CIDR required"
    ]
    assert _rendered(validate_service_cidr(_cidr("10.0.0.1/24"))) == [
        'spec.cidrs[0]: Invalid value: "10.0.0.1/24": must be in canonical form ("10.0.0.0/24")'
    ]
    assert _rendered(validate_service_cidr(_cidr("10.0.0.0"))) == [
        'spec.cidrs[0]: Invalid value: "10.0.0.0": must be a valid CIDR value, '
        "(e.g. 10.9.8.0/24 or 2001:db8::/64)"
    ]
    both_v4 = validate_service_cidr(_cidr("10.0.0.0/24", "10.1.0.0/24"))
    assert [
        c.message.endswith("may only hold up to one CIDR for each IP family") for c in both_v4
    ] == [True]
    assert [c.field for c in both_v4] == ["spec.cidrs"]
    three = validate_service_cidr(_cidr("10.0.0.0/24", "fd00::/108", "10.1.0.0/24"))
    assert [c.message.endswith("may only hold up to 2 values") for c in three] == [True]


def test_service_cidr_ranges_are_immutable_but_may_become_dual_stack() -> None:
    old = _cidr("10.0.0.0/24")
    assert validate_service_cidr_update(_cidr("10.0.0.0/24", "fd00::/108"), old) == []
    assert _rendered(validate_service_cidr_update(_cidr("10.1.0.0/24"), old)) == [
        'spec.cidrs[0]: Invalid value: "10.1.0.0/24": field is immutable'
    ]
    shrunk = validate_service_cidr_update(old, _cidr("10.0.0.0/24", "fd00::/108"))
    assert [c.field for c in shrunk] == ["spec.cidrs"]
