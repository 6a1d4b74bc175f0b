"""The admissionregistration.k8s.io group at the REST edge: its discovery entries (cluster
scope, the api-extensions category, the policy's status) and the tables kubectl prints."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kstore.api.gvk import GroupVersionKind
from kstore.api.kinds import builtin_scheme
from kstore.server.discovery import Discovery
from kstore.server.openapi import OpenAPIV3
from kstore.server.table import build_table

GROUP = "admissionregistration.k8s.io"


def test_discovery_lists_the_six_kinds_as_cluster_scoped() -> None:
    discovery = Discovery(builtin_scheme())
    groups = orjson.loads(discovery.aggregated_groups.body)
    group = next(g for g in groups["items"] if g["metadata"]["name"] == GROUP)
    assert [v["version"] for v in group["versions"]] == ["v1"]
    resources = {r["resource"]: r for r in group["versions"][0]["resources"]}
    assert sorted(resources) == [
        "mutatingadmissionpolicies",
        "mutatingadmissionpolicybindings",
        "mutatingwebhookconfigurations",
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
        "validatingwebhookconfigurations",
    ]
    for resource in resources.values():
        assert resource["scope"] == "Cluster"
        assert resource["categories"] == ["api-extensions"]
        assert "shortNames" not in resource
    policy = resources["validatingadmissionpolicies"]
    assert [s["subresource"] for s in policy["subresources"]] == ["status"]
    assert not resources["validatingwebhookconfigurations"].get("subresources")


@pytest.mark.parametrize("kind", ["WatchEvent", "DeleteOptions", "ListOptions"])
def test_admissionregistration_v1_accepts_the_meta_kinds(kind: str) -> None:
    assert builtin_scheme().recognizes(GroupVersionKind(GROUP, "v1", kind))


def _table(kind: str, obj: dict[str, Any]) -> tuple[list[str], list[Any]]:
    table = build_table([obj], kind=kind, group=GROUP, meta_version="v1")
    names = [c["name"] for c in table["columnDefinitions"]]
    cells: list[Any] = table["rows"][0]["cells"]
    return names, cells[:-1]


def test_webhook_configuration_rows() -> None:
    obj = {"metadata": {"name": "hooks"}, "webhooks": [{"name": "a"}, {"name": "b"}]}
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        assert _table(kind, obj) == (["Name", "Webhooks", "Age"], ["hooks", 2])
    assert _table("MutatingWebhookConfiguration", {"metadata": {"name": "none"}})[1] == [
        "none",
        0,
    ]


def test_policy_rows() -> None:
    policy = {"metadata": {"name": "p"}, "spec": {"validations": [{"expression": "true"}]}}
    names, cells = _table("ValidatingAdmissionPolicy", policy)
    assert names == ["Name", "Validations", "ParamKind", "Age"]
    assert cells == ["p", 1, "<unset>"]
    policy["spec"]["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
    assert _table("ValidatingAdmissionPolicy", policy)[1] == ["p", 1, "v1/ConfigMap"]


def test_binding_rows() -> None:
    def param(ref: dict[str, Any] | None) -> Any:
        spec: dict[str, Any] = {"policyName": "p"}
        if ref is not None:
            spec["paramRef"] = ref
        names, cells = _table(
            "ValidatingAdmissionPolicyBinding", {"metadata": {"name": "b"}, "spec": spec}
        )
        assert names == ["Name", "PolicyName", "ParamRef", "Age"]
        assert cells[:2] == ["b", "p"]
        return cells[2]

    assert param(None) == "<unset>"
    assert param({"name": "limits", "namespace": "default"}) == "default/limits"
    assert param({"name": "limits"}) == "*/limits"
    selector = {
        "matchLabels": {"b": "2", "a": "1"},
        "matchExpressions": [{"key": "env", "operator": "In", "values": ["x", "y"]}],
    }
    assert param({"selector": selector}) == (
        "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},"
        "MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:env,"
        "Operator:In,Values:[x y],},},}"
    )


def test_openapi_document_of_admissionregistration_v1() -> None:
    doc = OpenAPIV3(builtin_scheme(), "v1.36.0").document(f"apis/{GROUP}/v1")
    assert doc is not None
    body = orjson.loads(doc.body)
    assert f"/apis/{GROUP}/v1/validatingadmissionpolicies/{{name}}/status" in body["paths"]
    assert f"/apis/{GROUP}/v1/validatingwebhookconfigurations" in body["paths"]
    schemas = body["components"]["schemas"]
    prefix = "io.k8s.api.admissionregistration.v1"
    hook = schemas[f"{prefix}.ValidatingWebhook"]
    assert sorted(hook["required"]) == [
        "admissionReviewVersions",
        "clientConfig",
        "name",
        "sideEffects",
    ]
    webhooks = schemas[f"{prefix}.ValidatingWebhookConfiguration"]["properties"]["webhooks"]
    assert webhooks["x-kubernetes-patch-merge-key"] == "name"
    assert webhooks["x-kubernetes-patch-strategy"] == "merge"
    binding_spec = schemas[f"{prefix}.ValidatingAdmissionPolicyBindingSpec"]
    assert sorted(binding_spec["required"]) == ["policyName", "validationActions"]


def test_mutating_admission_policy_rows() -> None:
    policy = {
        "metadata": {"name": "p"},
        "spec": {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "mutations": [{"patchType": "JSONPatch"}, {"patchType": "ApplyConfiguration"}],
        },
    }
    assert _table("MutatingAdmissionPolicy", policy) == (
        ["Name", "Mutations", "ParamKind", "Age"],
        ["p", 2, "v1/ConfigMap"],
    )
    binding = {"metadata": {"name": "b"}, "spec": {"policyName": "p"}}
    assert _table("MutatingAdmissionPolicyBinding", binding) == (
        ["Name", "PolicyName", "ParamRef", "Age"],
        ["b", "p", "<unset>"],
    )
