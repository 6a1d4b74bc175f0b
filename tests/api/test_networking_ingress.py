"""networking.k8s.io/v1 Ingress: no defaults, and validation as Kubernetes' networking API
words it."""

from __future__ import annotations

import copy
from typing import Any

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds._ingress_validation import (
    validate_ingress,
    validate_ingress_status_update,
    validate_ingress_update,
)
from kstore.errors import Cause

SCHEME = builtin_scheme()


def _backend(name: str = "web", **port: Any) -> dict[str, Any]:
    return {"service": {"name": name, "port": port or {"number": 80}}}


def _ingress(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "3"},
        "spec": spec
        or {
            "rules": [
                {
                    "host": "www.example.com",
                    "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": _backend()}]},
                }
            ]
        },
    }


def _rule(host: str = "", **path: Any) -> dict[str, Any]:
    item = {"path": "/", "pathType": "Prefix", "backend": _backend(), **path}
    return {"host": host, "http": {"paths": [item]}} if host else {"http": {"paths": [item]}}


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def test_ingress_v1_has_no_defaults_not_even_path_type() -> None:
    ingress = _ingress(rules=[{"http": {"paths": [{"path": "/", "backend": _backend()}]}}])
    before = copy.deepcopy(ingress)
    SCHEME.default(ingress)
    assert ingress == before
    assert _rendered(validate_ingress(ingress)) == [
        "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"
    ]


def test_a_valid_ingress_passes() -> None:
    ingress = _ingress(
        ingressClassName="nginx",
        defaultBackend={"resource": {"apiGroup": "k8s.example.com", "kind": "Bucket", "name": "b"}},
        tls=[{"hosts": ["www.example.com", "*.example.com"], "secretName": "tls"}],
        rules=[
            _rule("www.example.com"),
            _rule("*.example.com", pathType="Exact", path="/api"),
            _rule(pathType="ImplementationSpecific", path=""),
        ],
    )
    assert validate_ingress(ingress) == []


def test_either_a_default_backend_or_rules() -> None:
    assert _rendered(validate_ingress(_ingress(tls=[]))) == [
        "spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"
    ]


def test_hosts_are_dns_names_or_wildcards_never_ips() -> None:
    ingress = _ingress(rules=[_rule("10.0.0.1"), _rule("Foo.example.com"), _rule("*")])
    assert _rendered(validate_ingress(ingress)) == [
        'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
        'spec.rules[1].host: Invalid value: "Foo.example.com": a lowercase RFC 1123 subdomain '
        "must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
        "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        'spec.rules[2].host: Invalid value: "*": a wildcard DNS-1123 subdomain must start with '
        "'*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric "
        "characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', "
        "regex used for validation is "
        "'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]


def test_paths_and_path_types() -> None:
    ingress = _ingress(
        rules=[
            _rule(path="api"),
            _rule(pathType="Exact", path="/a//b/.."),
            _rule(pathType="ImplementationSpecific", path="x"),
            _rule(pathType="Regex"),
            {"http": {"paths": []}},
        ]
    )
    assert _rendered(validate_ingress(ingress)) == [
        'spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path',
        "spec.rules[1].http.paths[0].path: Invalid value: \"/a//b/..\": must not contain '//'",
        "spec.rules[1].http.paths[0].path: Invalid value: \"/a//b/..\": cannot end with '/..'",
        'spec.rules[2].http.paths[0].path: Invalid value: "x": must be an absolute path',
        'spec.rules[3].http.paths[0].pathType: Unsupported value: "Regex": supported values: '
        '"Exact", "ImplementationSpecific", "Prefix"',
        "spec.rules[4].http.paths: Required value",
    ]


def test_backends_name_exactly_one_target_and_port() -> None:
    both = {**_backend(), "resource": {"kind": "Bucket", "name": "b"}}
    ingress = _ingress(
        rules=[
            _rule(backend=both),
            _rule(backend={}),
            _rule(backend={"service": {"name": "web"}}),
            _rule(backend={"service": {"name": "web", "port": {"name": "http", "number": 80}}}),
            _rule(backend={"service": {"name": "1web", "port": {"number": 70000}}}),
        ]
    )
    assert _rendered(validate_ingress(ingress)) == [
        'spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both resource and '
        "service backends",
        'spec.rules[1].http.paths[0].backend: Invalid value: "": resource or service backend is '
        "required",
        "spec.rules[2].http.paths[0].backend: Required value: port name or number is required",
        'spec.rules[3].http.paths[0].backend: Invalid value: "": cannot set both port name & '
        "port number",
        'spec.rules[4].http.paths[0].backend.service.name: Invalid value: "1web": a DNS-1035 '
        "label must consist of lower case alphanumeric characters or '-', start with an "
        "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
        "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        "spec.rules[4].http.paths[0].backend.service.port.number: Invalid value: 70000: must be "
        "between 1 and 65535, inclusive",
    ]


def test_the_class_annotation_must_agree_with_the_class_name_on_create_only() -> None:
    ingress = _ingress(ingressClassName="nginx", defaultBackend=_backend())
    ingress["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "traefik"}
    assert _rendered(validate_ingress(ingress)) == [
        'annotations.kubernetes.io/ingress.class: Invalid value: "traefik": must match '
        "`ingressClassName` when both are specified"
    ]
    assert validate_ingress_update(ingress, copy.deepcopy(ingress)) == []


def test_an_update_keeps_accepting_what_was_already_stored() -> None:
    old = _ingress(tls=[{"secretName": "Bad_Name"}], defaultBackend=_backend())
    new = copy.deepcopy(old)
    new["spec"]["defaultBackend"] = _backend(name="other")
    assert validate_ingress_update(new, old) == []
    assert _rendered(validate_ingress(new)) == [
        'spec.tls[0].secretName: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must '
        "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
        "an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ]


def test_status_load_balancer_points() -> None:
    old = _ingress()
    new = copy.deepcopy(old)
    new["status"] = {
        "loadBalancer": {
            "ingress": [{"ip": "10.0.0.300"}, {"hostname": "10.0.0.1"}, {"ip": "010.0.0.1"}]
        }
    }
    assert _rendered(validate_ingress_status_update(new, old)) == [
        'status.loadBalancer.ingress[0].ip: Invalid value: "10.0.0.300": must be a valid IP '
        "address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        'status.loadBalancer.ingress[1].hostname: Invalid value: "10.0.0.1": must be a DNS name, '
        "not an IP address",
    ]
