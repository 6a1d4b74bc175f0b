"""discovery.k8s.io/v1 EndpointSlice: port defaults and validation as Kubernetes' discovery API
words it."""

from __future__ import annotations

import copy
from typing import Any

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds._ip import parse_ip_sloppy
from kstore.api.kinds.endpointslice import (
    validate_endpoint_slice,
    validate_endpoint_slice_update,
)
from kstore.errors import Cause

SCHEME = builtin_scheme()


def _slice(address_type: str = "IPv4", **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "web-abc", "namespace": "default", "resourceVersion": "5"},
        "addressType": address_type,
        "endpoints": [{"addresses": ["10.1.2.3"]}],
        **fields,
    }


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


def test_ports_get_an_empty_name_and_tcp() -> None:
    es = _slice(ports=[{"port": 80}, {"name": "dns", "protocol": "UDP", "port": 53}])
    SCHEME.default(es)
    assert es["ports"] == [
        {"port": 80, "name": "", "protocol": "TCP"},
        {"name": "dns", "protocol": "UDP", "port": 53},
    ]
    assert validate_endpoint_slice(es) == []


def test_address_type_and_addresses() -> None:
    assert _rendered(validate_endpoint_slice(_slice(""))) == ["addressType: Required value"]
    assert _rendered(validate_endpoint_slice(_slice("IP"))) == [
        'addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"'
    ]
    addresses = ["10.0.0.1", "fd00::1", "127.0.0.1", "169.254.1.1", "0.0.0.0", "224.0.0.5", "x"]
    v4 = _slice(endpoints=[{"addresses": addresses}, {"addresses": []}])
    where = "endpoints[0].addresses"
    assert _rendered(validate_endpoint_slice(v4)) == [
        f'{where}[1]: Invalid value: "fd00::1": must be a valid IPv4 address',
        f'{where}[2]: Invalid value: "127.0.0.1": may not be in the loopback range '
        "(127.0.0.0/8, ::1/128)",
        f'{where}[3]: Invalid value: "169.254.1.1": may not be in the link-local range '
        "(169.254.0.0/16, fe80::/10)",
        f'{where}[4]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)',
        f'{where}[5]: Invalid value: "224.0.0.5": may not be in the link-local multicast range '
        "(224.0.0.0/24, ff02::/10)",
        f'{where}[6]: Invalid value: "x": must be a valid IPv4 address',
        f'{where}[6]: Invalid value: "x": must be a valid IP address',
        "endpoints[1].addresses: Required value: must contain at least 1 address",
    ]
    v6 = _slice("IPv6", endpoints=[{"addresses": ["2001:db8::5", "10.0.0.1", "::ffff:10.0.0.1"]}])
    assert _rendered(validate_endpoint_slice(v6)) == [
        f'{where}[1]: Invalid value: "10.0.0.1": must be a valid IPv6 address',
        f'{where}[2]: Invalid value: "::ffff:10.0.0.1": must be a valid IPv6 address',
    ]
    fqdn = _slice("FQDN", endpoints=[{"addresses": ["db.example.com.", "localhost", "A.b"]}])
    rendered = _rendered(validate_endpoint_slice(fqdn))
    assert rendered[0] == (
        f'{where}[1]: Invalid value: "localhost": should be a domain with at least two segments '
        "separated by dots"
    )
    assert rendered[1].startswith(f'{where}[2]: Invalid value: "A.b": a lowercase RFC 1123')
    assert len(rendered) == 2
    # Leading zeros are read as decimal, as Kubernetes' legacy parser reads them.
    assert str(parse_ip_sloppy("010.001.002.003")) == "10.1.2.3"


def test_endpoint_fields() -> None:
    endpoint = {
        "addresses": ["10.1.2.3"],
        "hostname": "Web",
        "nodeName": "node_1",
        "deprecatedTopology": {"topology.kubernetes.io/zone": "a"},
        "hints": {"forZones": [{"name": "a"}, {"name": "a"}], "forNodes": [{"name": "n"}] * 9},
    }
    rendered = _rendered(validate_endpoint_slice(_slice(endpoints=[endpoint])))
    assert rendered[0].startswith('endpoints[0].nodeName: Invalid value: "node_1": a lowercase')
    assert rendered[1:] == [
        "endpoints[0].deprecatedTopology[topology.kubernetes.io/zone]: Internal error: reserved "
        "key was not removed in conversion",
        rendered[2],
        'endpoints[0].hints.forZones[1].name: Duplicate value: "a"',
        "endpoints[0].hints.forNodes: Too many: 9: must have at most 8 items",
    ]
    assert rendered[2].startswith('endpoints[0].hostname: Invalid value: "Web": a lowercase')


def test_ports() -> None:
    ports = [
        {"name": "http", "protocol": "TCP", "port": 80},
        {"name": "http", "protocol": "ICMP", "port": 81},
        {"name": "Bad", "port": 82},
        {"name": "", "protocol": "TCP", "appProtocol": "not a name"},
    ]
    rendered = _rendered(validate_endpoint_slice(_slice(ports=ports)))
    assert rendered[:3] == [
        'ports[1].name: Duplicate value: "http"',
        'ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
        rendered[2],
    ]
    assert rendered[2].startswith('ports[2].name: Invalid value: "Bad": a lowercase RFC 1123')
    assert rendered[3] == "ports[2].protocol: Required value"
    assert rendered[4].startswith(
        'ports[3].appProtocol: Invalid value: "not a name": name part must consist'
    )
    assert len(rendered) == 5


def test_the_address_type_is_immutable() -> None:
    old = _slice()
    new = copy.deepcopy(old)
    new["endpoints"][0]["addresses"] = ["10.9.9.9"]
    assert validate_endpoint_slice_update(new, old) == []
    new["addressType"] = "FQDN"
    assert _rendered(validate_endpoint_slice_update(new, old)) == [
        'addressType: Invalid value: "FQDN": field is immutable'
    ]
