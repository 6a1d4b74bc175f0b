"""networking.k8s.io/v1 IngressClass: the parameters' scope default and validation as Kubernetes'
networking API words it."""

from __future__ import annotations

import copy
from typing import Any

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.networking import validate_ingress_class, validate_ingress_class_update
from kstore.errors import Cause

SCHEME = builtin_scheme()


def _ingress_class(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": {"name": "nginx", "resourceVersion": "3"},
        "spec": {"controller": "k8s.io/ingress-nginx", **spec},
    }


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def test_parameters_without_a_scope_are_cluster_scoped() -> None:
    ingress_class = _ingress_class(parameters={"kind": "Params", "name": "p"})
    SCHEME.default(ingress_class)
    assert ingress_class["spec"]["parameters"]["scope"] == "Cluster"
    bare = _ingress_class()
    SCHEME.default(bare)
    assert "parameters" not in bare["spec"]
    assert validate_ingress_class(ingress_class) == []


def test_controller_is_a_required_domain_prefixed_path() -> None:
    missing = _ingress_class(controller="")
    assert _rendered(validate_ingress_class(missing)) == ["spec.controller: Required value"]
    bare = _ingress_class(controller="nginx")
    assert _rendered(validate_ingress_class(bare)) == [
        'spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as '
        '"acme.io/foo")'
    ]


def test_the_controller_is_immutable() -> None:
    old = _ingress_class()
    new = copy.deepcopy(old)
    new["spec"]["controller"] = "example.com/other"
    assert _rendered(validate_ingress_class_update(new, old)) == [
        'spec.controller: Invalid value: "example.com/other": field is immutable'
    ]


def test_parameters_scope_and_namespace() -> None:
    cases = {
        "Namespace": {"kind": "Params", "name": "p", "scope": "Namespace"},
        "Cluster": {"kind": "Params", "name": "p", "scope": "Cluster", "namespace": "ns"},
        "Global": {"kind": "", "name": "p", "scope": "Global"},
    }
    rendered = {
        name: _rendered(validate_ingress_class(_ingress_class(parameters=params)))
        for name, params in cases.items()
    }
    assert rendered == {
        "Namespace": [
            "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"
        ],
        "Cluster": ["spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"],
        "Global": [
            "spec.parameters.kind: Required value",
            'spec.parameters.scope: Unsupported value: "Global": supported values: "Cluster", '
            '"Namespace"',
        ],
    }
