"""Service validation on defaulted services: Kubernetes' rules, paths and messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kstore.api.kinds.core import default_service
from kstore.api.validation.core import validate_service, validate_service_update
from kstore.errors import Cause
from tests.api.test_validation_names import DNS1035, DNS_LABEL


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


def _service(default: bool = True, **spec: Any) -> dict[str, Any]:
    svc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "4"},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}]},
    }
    svc["spec"].update(spec)
    if default:
        default_service(svc)
    return svc


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]},
        {"type": "LoadBalancer", "externalTrafficPolicy": "Local", "healthCheckNodePort": 32000},
        {"clusterIP": "None", "clusterIPs": ["None"], "ports": []},
        {"type": "ExternalName", "externalName": "db.example.com.", "ports": []},
        {"sessionAffinity": "ClientIP"},
        {
            "ports": [
                {"name": "http", "port": 80, "targetPort": "web"},
                {"name": "dns", "port": 53, "protocol": "UDP", "appProtocol": "dns"},
                {"name": "dns-tcp", "port": 53, "protocol": "TCP"},
            ]
        },
    ],
)
def test_realistic_services_are_valid(spec: dict[str, Any]) -> None:
    assert validate_service(_service(**spec)) == []


def test_an_undefaulted_service_is_reported_as_kubernetes_would_report_it() -> None:
    assert _rendered(validate_service(_service(default=False))) == [
        "spec.ports[0].protocol: Required value",
        "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
        "spec.sessionAffinity: Required value",
        "spec.type: Required value",
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"ports": []}, ["spec.ports: Required value"]),
        (
            {"ports": [{"port": 80}, {"name": "b", "port": 81}]},
            ["spec.ports[0].name: Required value"],
        ),
        (
            {"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 81}]},
            ['spec.ports[1].name: Duplicate value: "a"'],
        ),
        (
            {"ports": [{"name": "Web", "port": 80}]},
            [f'spec.ports[0].name: Invalid value: "Web": {DNS_LABEL}'],
        ),
        (
            {"ports": [{"port": 0, "targetPort": 8080}]},
            ["spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"],
        ),
        (
            {"ports": [{"port": 80, "protocol": "HTTP"}]},
            [
                'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", '
                '"TCP", "UDP"'
            ],
        ),
        (
            {"ports": [{"port": 80, "targetPort": "Web"}]},
            [
                'spec.ports[0].targetPort: Invalid value: "Web": must contain only '
                "alpha-numeric characters (a-z, 0-9), and hyphens (-)"
            ],
        ),
        (
            {"ports": [{"name": "a", "port": 80}, {"name": "b", "port": 80}]},
            [
                'spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,'
                '"Port":80,"TargetPort":0,"NodePort":0}'
            ],
        ),
        (
            {"type": "Balanced"},
            [
                'spec.type: Unsupported value: "Balanced": supported values: "ClusterIP", '
                '"ExternalName", "LoadBalancer", "NodePort"'
            ],
        ),
        (
            {"ports": [{"port": 80, "nodePort": 30080}]},
            ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
        ),
        (
            {
                "type": "NodePort",
                "ports": [
                    {"name": "a", "port": 80, "nodePort": 30080},
                    {"name": "b", "port": 81, "nodePort": 30080},
                ],
            },
            ["spec.ports[1].nodePort: Duplicate value: 30080"],
        ),
        (
            {"sessionAffinity": "Sticky"},
            [
                'spec.sessionAffinity: Unsupported value: "Sticky": supported values: '
                '"ClientIP", "None"'
            ],
        ),
        (
            {
                "sessionAffinity": "ClientIP",
                "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 86401}},
            },
            [
                "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 86401: must "
                "be greater than 0 and less than 86400"
            ],
        ),
        (
            {"type": "LoadBalancer", "clusterIP": "None", "clusterIPs": ["None"]},
            [
                "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for "
                "LoadBalancer services"
            ],
        ),
        (
            {"type": "ExternalName", "ports": [], "clusterIPs": ["10.0.0.1"]},
            [
                "spec.clusterIPs: Forbidden: may not be set for ExternalName services",
                "spec.externalName: Required value",
            ],
        ),
        (
            {"type": "ExternalName", "ports": [], "externalName": "Db.Example.com"},
            [
                'spec.externalName: Invalid value: "Db.Example.com": a lowercase RFC 1123 '
                "subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'example.com', regex "
                "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
                "[a-z0-9])?)*')"
            ],
        ),
        (
            {"allocateLoadBalancerNodePorts": True},
            [
                "spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is "
                "'LoadBalancer'"
            ],
        ),
        (
            {"loadBalancerSourceRanges": ["10.0.0.0/8"]},
            [
                "spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is "
                "'LoadBalancer'"
            ],
        ),
        (
            {"externalTrafficPolicy": "Local"},
            [
                'spec.externalTrafficPolicy: Invalid value: "Local": may only be set for '
                "externally-accessible services"
            ],
        ),
        (
            {"type": "NodePort", "externalTrafficPolicy": "Global", "healthCheckNodePort": 31000},
            [
                'spec.externalTrafficPolicy: Unsupported value: "Global": supported values: '
                '"Cluster", "Local"',
                "spec.healthCheckNodePort: Invalid value: 31000: may only be set when `type` is "
                "'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ],
        ),
        (
            {"type": "LoadBalancer", "externalTrafficPolicy": "Local"},
            ["spec.healthCheckNodePort: Required value"],
        ),
        (
            {"internalTrafficPolicy": "Zone"},
            [
                'spec.internalTrafficPolicy: Unsupported value: "Zone": supported values: '
                '"Cluster", "Local"'
            ],
        ),
    ],
)
def test_service_rules(spec: dict[str, Any], expected: list[str]) -> None:
    assert _rendered(validate_service(_service(**spec))) == expected


def test_a_load_balancer_without_node_port_allocation_flag_is_reported_at_the_root() -> None:
    svc = _service(type="LoadBalancer")
    del svc["spec"]["allocateLoadBalancerNodePorts"]
    assert _rendered(validate_service(svc)) == ["allocateLoadBalancerNodePorts: Required value"]


def test_service_names_are_dns1035_labels() -> None:
    svc = _service()
    svc["metadata"]["name"] = "1web"
    assert _rendered(validate_service(svc)) == [f'metadata.name: Invalid value: "1web": {DNS1035}']


def test_topology_annotations_must_agree() -> None:
    svc = _service()
    svc["metadata"]["annotations"] = {
        "service.kubernetes.io/topology-mode": "Auto",
        "service.kubernetes.io/topology-aware-hints": "Disabled",
    }
    assert _rendered(validate_service(svc)) == [
        'metadata.annotations[service.kubernetes.io/topology-mode]: Invalid value: "Auto": must '
        "match annotations[service.kubernetes.io/topology-aware-hints] when both are specified"
    ]


def test_service_updates() -> None:
    old = _service(clusterIP="10.0.0.10", clusterIPs=["10.0.0.10"], ipFamilies=["IPv4"])
    assert validate_service_update(copy.deepcopy(old), old) == []
    moved = copy.deepcopy(old)
    moved["spec"]["clusterIP"] = "10.0.0.11"
    moved["spec"]["clusterIPs"] = ["10.0.0.11"]
    assert _rendered(validate_service_update(moved, old)) == [
        'spec.clusterIPs[0]: Invalid value: ["10.0.0.11"]: may not change once set'
    ]
    families = copy.deepcopy(old)
    families["spec"]["ipFamilies"] = ["IPv6"]
    assert _rendered(validate_service_update(families, old)) == [
        'spec.ipFamilies[0]: Invalid value: ["IPv6"]: may not change once set'
    ]
    dual = _service(
        clusterIP="10.0.0.10",
        clusterIPs=["10.0.0.10", "fd00::10"],
        ipFamilies=["IPv4", "IPv6"],
        ipFamilyPolicy="PreferDualStack",
    )
    downgraded = copy.deepcopy(dual)
    downgraded["spec"]["clusterIPs"] = ["10.0.0.10"]
    downgraded["spec"]["ipFamilies"] = ["IPv4"]
    assert _rendered(validate_service_update(downgraded, dual)) == [
        "spec.ipFamilyPolicy: Invalid value: \"PreferDualStack\": must be set to 'SingleStack' "
        "when releasing the secondary clusterIP",
        "spec.ipFamilyPolicy: Invalid value: \"PreferDualStack\": must be set to 'SingleStack' "
        "when releasing the secondary ipFamily",
    ]
    downgraded["spec"]["ipFamilyPolicy"] = "SingleStack"
    assert validate_service_update(downgraded, dual) == []
    released = copy.deepcopy(old)
    del released["spec"]["clusterIPs"], released["spec"]["clusterIP"]
    # An absent list is a nil slice to Kubernetes, printed as null.
    assert _rendered(validate_service_update(released, old)) == [
        "spec.clusterIPs[0]: Invalid value: null: primary clusterIP can not be unset"
    ]


def test_health_check_node_port_is_immutable() -> None:
    old = _service(type="LoadBalancer", externalTrafficPolicy="Local", healthCheckNodePort=32000)
    new = copy.deepcopy(old)
    new["spec"]["healthCheckNodePort"] = 32001
    assert _rendered(validate_service_update(new, old)) == [
        "spec.healthCheckNodePort: Forbidden: field is immutable"
    ]
