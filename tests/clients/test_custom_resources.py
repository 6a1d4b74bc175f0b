"""Custom resources served live from CRDs, as kubectl and the Python client use them, on LMDB
and on etcd: a CRD applied is Established within a second and its kind is served at once
(discovery, tables with its printer columns, explain, scale, status); deleting the CRD deletes
its objects and stops serving them; a re-created CRD starts empty; clashing names are refused
in the NamesAccepted condition."""

from __future__ import annotations

import itertools
import json
import time
from typing import TYPE_CHECKING, Any

import pytest

from tests.clients.kubectl import Kubectl

if TYPE_CHECKING:
    from kubernetes import client

_groups = itertools.count()


def _crd(group: str, plural: str = "widgets", kind: str = "Widget", **names: Any) -> str:
    return json.dumps(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": plural, "kind": kind, **names},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "properties": {
                                    "spec": {
                                        "type": "object",
                                        "properties": {
                                            "color": {"type": "string"},
                                            "replicas": {"type": "integer"},
                                        },
                                    },
                                    "status": {
                                        "type": "object",
                                        "properties": {"replicas": {"type": "integer"}},
                                    },
                                },
                            }
                        },
                        "subresources": {
                            "status": {},
                            "scale": {
                                "specReplicasPath": ".spec.replicas",
                                "statusReplicasPath": ".status.replicas",
                            },
                        },
                        "additionalPrinterColumns": [
                            {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                            {
                                "name": "Replicas",
                                "type": "integer",
                                "jsonPath": ".spec.replicas",
                                "priority": 1,
                            },
                        ],
                    }
                ],
            },
        }
    )


def _group() -> str:
    return f"g{next(_groups)}.example.com"


def _established(kubectl: Kubectl, name: str) -> float:
    started = time.monotonic()
    kubectl.ok("wait", "--for", "condition=Established", f"crd/{name}", "--timeout", "10s")
    return time.monotonic() - started


def test_a_crd_is_served_live_with_its_columns_scale_and_status(
    kubectl: Kubectl, k: Kubectl
) -> None:
    group = _group()
    kubectl.ok("apply", "-f", "-", stdin=_crd(group, shortNames=["wdg"], categories=["all"]))
    assert _established(kubectl, f"widgets.{group}") < 1.0
    widget = {
        "apiVersion": f"{group}/v1",
        "kind": "Widget",
        "metadata": {"name": "w1"},
        "spec": {"color": "red", "replicas": 2},
    }
    assert k.ok("apply", "-f", "-", stdin=json.dumps(widget)).strip() == (
        f"widget.{group}/w1 created"
    )
    rows = [line.split() for line in k.ok("get", f"widgets.{group}").splitlines()]
    assert rows == [["NAME", "COLOR"], ["w1", "red"]]  # the columns given, no Age added
    wide = [line.split() for line in k.ok("get", f"wdg.{group}", "-o", "wide").splitlines()]
    assert wide == [["NAME", "COLOR", "REPLICAS"], ["w1", "red", "2"]]
    assert f"widget.{group}/w1" in k.ok("get", "all")

    assert k.ok("scale", f"widgets.{group}", "w1", "--replicas", "5").strip() == (
        f"widget.{group}/w1 scaled"
    )
    got = json.loads(k.ok("get", f"widgets.{group}", "w1", "-o", "json"))
    assert got["spec"]["replicas"] == 5 and got["metadata"]["generation"] == 2

    # The status subresource: the main resource ignores status, the subresource only status.
    got["status"] = {"replicas": 5}
    got["spec"]["color"] = "blue"
    k.ok("replace", "--subresource", "status", "-f", "-", stdin=json.dumps(got))
    after = json.loads(k.ok("get", f"widgets.{group}", "w1", "-o", "json"))
    assert after["status"] == {"replicas": 5} and after["spec"]["color"] == "red"

    resources = kubectl.ok("api-resources", "--api-group", group)
    assert "wdg" in resources and "Widget" in resources
    explained = kubectl.ok("explain", f"widgets.{group}.spec")
    assert "color" in explained and "replicas" in explained


def test_deleting_a_crd_deletes_its_objects_and_a_new_one_starts_empty(
    kubectl: Kubectl, k: Kubectl
) -> None:
    group = _group()
    kubectl.ok("apply", "-f", "-", stdin=_crd(group))
    _established(kubectl, f"widgets.{group}")
    for name in ("a", "b"):
        k.ok(
            "create",
            "-f",
            "-",
            stdin=json.dumps(
                {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": name}}
            ),
        )
    kubectl.ok("delete", "crd", f"widgets.{group}", "--timeout", "20s")
    # Every server stops serving the kind as its watch brings the CRD's deletion (on etcd a
    # moment after the delete returns); kubectl then says one or the other depending on
    # whether its discovery cache knew the kind.
    deadline = time.monotonic() + 5
    while (gone := k.run("get", f"widgets.{group}")).code == 0:
        assert time.monotonic() < deadline, "the kind was still served 5 s after its CRD went"
        time.sleep(0.05)
    assert (
        "the server doesn't have a resource type" in gone.stderr
        or "the server could not find the requested resource" in gone.stderr
    ), gone
    kubectl.ok("apply", "-f", "-", stdin=_crd(group))
    _established(kubectl, f"widgets.{group}")
    assert k.ok("get", f"widgets.{group}", "-o", "name").strip() == ""


def test_a_plural_another_crd_of_the_group_holds_is_refused_in_its_condition(
    kubectl: Kubectl,
) -> None:
    group = _group()
    kubectl.ok("apply", "-f", "-", stdin=_crd(group, singular="widget"))
    _established(kubectl, f"widgets.{group}")
    clash = json.loads(_crd(group, plural="gadgets", kind="Gadget", singular="widgets"))
    kubectl.ok("apply", "-f", "-", stdin=json.dumps(clash))
    kubectl.ok(
        "wait", "--for", "condition=NamesAccepted=False", f"crd/gadgets.{group}", "--timeout", "10s"
    )
    crd = json.loads(kubectl.ok("get", "crd", f"gadgets.{group}", "-o", "json"))
    accepted = {c["type"]: c for c in crd["status"]["conditions"]}["NamesAccepted"]
    assert (accepted["reason"], accepted["message"]) == (
        "SingularConflict",
        '"widgets" is already in use',
    )


def test_the_python_client_reads_and_writes_custom_objects(
    kubectl: Kubectl, api_client: client.ApiClient, namespace: str
) -> None:
    from kubernetes import client, dynamic

    group = _group()
    kubectl.ok("apply", "-f", "-", stdin=_crd(group))
    _established(kubectl, f"widgets.{group}")
    custom = client.CustomObjectsApi(api_client)
    body = {
        "apiVersion": f"{group}/v1",
        "kind": "Widget",
        "metadata": {"name": "p"},
        "spec": {"color": "green"},
    }
    created = custom.create_namespaced_custom_object(group, "v1", namespace, "widgets", body)
    assert created["metadata"]["generation"] == 1
    patched = custom.patch_namespaced_custom_object(
        group, "v1", namespace, "widgets", "p", {"spec": {"replicas": 3}}
    )
    assert patched["spec"] == {"color": "green", "replicas": 3}
    listed = custom.list_namespaced_custom_object(group, "v1", namespace, "widgets")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["p"]

    resource = dynamic.DynamicClient(api_client).resources.get(
        api_version=f"{group}/v1", kind="Widget"
    )
    assert resource.get(name="p", namespace=namespace).spec.replicas == 3
    custom.delete_namespaced_custom_object(group, "v1", namespace, "widgets", "p")
    with pytest.raises(client.ApiException) as info:
        custom.get_namespaced_custom_object(group, "v1", namespace, "widgets", "p")
    assert info.value.status == 404
