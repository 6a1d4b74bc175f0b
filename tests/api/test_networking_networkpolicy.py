"""networking.k8s.io/v1 NetworkPolicy: defaults and validation as Kubernetes' networking API
words them."""

from __future__ import annotations

import copy
from typing import Any

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds._ip import parse_cidr_sloppy
from kstore.api.kinds.networkpolicy import validate_network_policy, validate_network_policy_update
from kstore.errors import Cause

SCHEME = builtin_scheme()
_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


def _policy(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "deny", "namespace": "default", "resourceVersion": "3"},
        "spec": {"podSelector": {}, **spec},
    }


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


def test_ports_get_tcp_and_policy_types_follow_the_rules() -> None:
    ingress_only = _policy(ingress=[{"ports": [{"port": 80}, {"protocol": "UDP"}]}])
    SCHEME.default(ingress_only)
    assert ingress_only["spec"]["policyTypes"] == ["Ingress"]
    assert ingress_only["spec"]["ingress"][0]["ports"] == [
        {"port": 80, "protocol": "TCP"},
        {"protocol": "UDP"},
    ]
    with_egress = _policy(egress=[{"ports": [{"port": 53}]}])
    SCHEME.default(with_egress)
    assert with_egress["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert with_egress["spec"]["egress"][0]["ports"][0]["protocol"] == "TCP"
    explicit = _policy(policyTypes=["Egress"], egress=[{}])
    SCHEME.default(explicit)
    assert explicit["spec"]["policyTypes"] == ["Egress"]
    assert validate_network_policy(ingress_only) == []
    assert validate_network_policy(with_egress) == []


def test_ports() -> None:
    ports = [
        {"protocol": "ICMP", "port": 80, "endPort": 70},
        {"protocol": "TCP", "port": "http", "endPort": 90},
        {"protocol": "TCP", "endPort": 3},
        {"protocol": "TCP", "port": 0},
        {"protocol": "TCP", "port": "Not_A_Name"},
    ]
    rendered = _rendered(validate_network_policy(_policy(ingress=[{"ports": ports}])))
    where = "spec.ingress[0].ports"
    assert rendered == [
        f'{where}[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"',
        f"{where}[0].endPort: Invalid value: 70: must be greater than or equal to `port`",
        f"{where}[1].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
        f"{where}[2].endPort: Invalid value: 3: may not be specified when `port` is not specified",
        f"{where}[3].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        f'{where}[4].port: Invalid value: "Not_A_Name": must contain only alpha-numeric '
        "characters (a-z, 0-9), and hyphens (-)",
    ]


def test_peers_and_ip_blocks() -> None:
    peers = [
        {},
        {"podSelector": {}, "namespaceSelector": {"matchLabels": {"team": "a"}}},
        {"podSelector": {}, "ipBlock": {"cidr": "10.0.0.0/8"}},
        {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16", "10.0.0.0/8", "x"]}},
        {"ipBlock": {"cidr": "10.0.0.0/33"}},
        {"ipBlock": {"cidr": ""}},
    ]
    rendered = _rendered(validate_network_policy(_policy(egress=[{"to": peers}])))
    where = "spec.egress[0].to"
    assert rendered == [
        f"{where}[0]: Required value: must specify a peer",
        f"{where}[2]: Forbidden: may not specify both ipBlock and another peer",
        f'{where}[3].ipBlock.except[0]: Invalid value: "11.0.0.0/16": must be a strict subset '
        "of `cidr`",
        f'{where}[3].ipBlock.except[1]: Invalid value: "10.0.0.0/8": must be a strict subset '
        "of `cidr`",
        f'{where}[3].ipBlock.except[2]: Invalid value: "x": {_CIDR}',
        f'{where}[4].ipBlock.cidr: Invalid value: "10.0.0.0/33": {_CIDR}',
        f"{where}[5].ipBlock.cidr: Required value",
    ]


def test_cidrs_are_parsed_as_legacy_fields() -> None:
    # Without StrictIPCIDRValidation: leading zeros and host bits are accepted.
    assert str(parse_cidr_sloppy("010.001.0.0/016")) == "10.1.0.0/16"
    assert str(parse_cidr_sloppy("10.1.2.3/8")) == "10.0.0.0/8"
    assert str(parse_cidr_sloppy("2001:db8::1/64")) == "2001:db8::/64"
    for bad in ("10.0.0.0", "10.0.0.256/8", "10.0.0/8", "::/129", "fe80::1%eth0/64", "a/1"):
        assert parse_cidr_sloppy(bad) is None, bad
    block = {"ipBlock": {"cidr": "2001:db8::/32", "except": ["2001:db8:1::/48", "10.0.0.0/8"]}}
    assert _rendered(validate_network_policy(_policy(ingress=[{"from": [block]}]))) == [
        'spec.ingress[0].from[0].ipBlock.except[1]: Invalid value: "10.0.0.0/8": must be a '
        "strict subset of `cidr`"
    ]


def test_policy_types_and_selectors() -> None:
    too_many = _policy(policyTypes=["Ingress", "Egress", "Ingress"])
    assert _rendered(validate_network_policy(too_many)) == [
        'spec.policyTypes: Invalid value: ["Ingress","Egress","Ingress"]: may not specify more '
        "than two policyTypes"
    ]
    unknown = _policy(policyTypes=["Sideways"])
    assert _rendered(validate_network_policy(unknown)) == [
        'spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"'
    ]
    selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a b"]}]}
    bad_selector = _policy(podSelector=selector)
    assert _rendered(validate_network_policy(bad_selector)) == [
        'spec.podSelector.matchExpressions[0].values[0]: Invalid value: "a b": a valid label '
        "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
        "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
        "or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    ]
    # An update of a policy whose stored selector already had such a value is not refused
    # for it.
    changed = copy.deepcopy(bad_selector)
    changed["spec"]["policyTypes"] = ["Ingress"]
    assert validate_network_policy_update(changed, bad_selector) == []
    assert validate_network_policy_update(bad_selector, _policy()) != []


def test_a_name_must_be_a_dns_subdomain() -> None:
    policy = _policy()
    policy["metadata"]["name"] = "Deny"
    assert [c.field for c in validate_network_policy(policy)] == ["metadata.name"]
