"""Ratcheting with real clients: a CRD's schema is tightened with ``kubectl apply`` after
objects were written; kubectl and the Python client can still change those objects' other
fields (kubectl prints the CEL rule's failure as a warning, as it does against kube-apiserver),
and are refused when they touch an offending value or create a new offending object."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl

GROUP = "ratchet.example.com"
CRD_NAME = f"widgets.{GROUP}"


def _crd_yaml(tight: bool) -> str:
    """The CRD (as JSON, which kubectl reads as YAML), loose or with the tightened schema."""
    name: dict[str, Any] = {"type": "string"}
    code: dict[str, Any] = {"type": "string"}
    if tight:
        name["maxLength"] = 3
        code["x-kubernetes-validations"] = [
            {"rule": "self.startsWith('x')", "message": "must start with x"}
        ]
    spec = {
        "type": "object",
        "properties": {"name": name, "code": code, "count": {"type": "integer"}},
    }
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
                }
            ],
        },
    }
    return json.dumps(crd) + "\n"


WIDGET = """
apiVersion: ratchet.example.com/v1
kind: Widget
metadata: {{name: {name}}}
spec: {{name: toolong, code: yy, count: 1}}
"""


@pytest.fixture(scope="module")
def tightened(kubectl: Kubectl) -> None:
    """The CRD, first loose, then tightened once objects exist in the test namespaces."""
    kubectl.ok("apply", "-f", "-", stdin=_crd_yaml(False))
    kubectl.ok("wait", "--for", "condition=Established", f"crd/{CRD_NAME}", "--timeout=10s")


def _tighten(kubectl: Kubectl) -> None:
    kubectl.ok("apply", "-f", "-", stdin=_crd_yaml(True))
    deadline = time.monotonic() + 5
    probe = WIDGET.format(name="probe")
    while kubectl.run("create", "--dry-run=server", "-f", "-", stdin=probe).code == 0:
        assert time.monotonic() < deadline, "the tightened schema was not in force within 5 s"
        time.sleep(0.05)


def test_kubectl_updates_a_widget_the_tightened_schema_would_refuse(
    k: Kubectl, kubectl: Kubectl, tightened: None
) -> None:
    k.ok("apply", "-f", "-", stdin=_crd_yaml(False) + "---\n" + WIDGET.format(name="w"))
    _tighten(kubectl)
    labelled = k.run("label", "widget", "w", "tier=web")
    assert labelled.code == 0, labelled
    assert labelled.stdout == "widget.ratchet.example.com/w labeled\n"
    assert 'Warning: spec.code: Invalid value: "yy": must start with x' in labelled.stderr
    k.ok("patch", "widget", "w", "--type", "merge", "-p", '{"spec":{"count":2}}')
    k.ok("annotate", "widget", "w", "note=kept")
    got = json.loads(k.ok("get", "widget", "w", "-o", "json"))
    assert got["spec"] == {"name": "toolong", "code": "yy", "count": 2}
    assert got["metadata"]["labels"] == {"tier": "web"}

    refused = k.fails("patch", "widget", "w", "--type", "merge", "-p", '{"spec":{"name":"longer"}}')
    assert (
        'The Widget "w" is invalid: \n* spec.name: Too long: may not be more than 3 bytes'
        in refused.stderr
    )
    created = k.fails("create", "-f", "-", stdin=WIDGET.format(name="w2"))
    assert "spec.name: Too long: may not be more than 3 bytes" in created.stderr


def test_python_client_patches_a_widget_written_before_the_schema_was_tightened(
    api_client: client.ApiClient, namespace: str, kubectl: Kubectl, tightened: None
) -> None:
    kubectl.ok("apply", "-f", "-", stdin=_crd_yaml(False))
    deadline = time.monotonic() + 5
    api = client.CustomObjectsApi(api_client)
    body = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": "p"},
        "spec": {"name": "toolong", "code": "xy", "count": 1},
    }
    while True:
        try:
            api.create_namespaced_custom_object(GROUP, "v1", namespace, "widgets", body)
            break
        except ApiException as exc:
            # The loose schema may take a moment to be back in force after another test.
            assert exc.status == 422 and time.monotonic() < deadline, exc
            time.sleep(0.05)
    _tighten(kubectl)
    patched = api.patch_namespaced_custom_object(
        GROUP, "v1", namespace, "widgets", "p", {"spec": {"count": 7}}
    )
    assert patched["spec"] == {"name": "toolong", "code": "xy", "count": 7}
    with pytest.raises(ApiException) as refused:
        api.patch_namespaced_custom_object(
            GROUP, "v1", namespace, "widgets", "p", {"spec": {"name": "abcd"}}
        )
    assert refused.value.status == 422
    causes = json.loads(refused.value.body)["details"]["causes"]
    assert causes[0] == {
        "reason": "FieldValueTooLong",
        "message": "Too long: may not be more than 3 bytes",
        "field": "spec.name",
    }
