"""Deeply nested custom objects through real clients, on LMDB and on etcd.

kubectl creates, reads, merge-patches and server-side applies a 1,000-level object (kubectl
decodes what it reads with Go's JSON decoder, whose 10,000-level limit the object's
managedFields would pass at 10,000). The Python client creates, reads and patches one at
kube-apiserver's limit of 10,000 levels, and gets its 400 one level deeper. The Python client
parses with the stdlib parser, bounded by the interpreter's recursion limit: importing
:mod:`kstore.codec.json` raises it, as any program handling such objects must.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest

from kstore.codec.json import dumps
from kstore.codec.json import loads as _loads
from tests.clients.kubectl import Kubectl

if TYPE_CHECKING:
    from kubernetes import client

GROUP = "deep.example.com"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"nests.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "nests", "kind": "Nest"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                        },
                    }
                },
            }
        ],
    },
}


def loads(data: bytes | str) -> Any:
    # What the server answers: its managedFields may nest past the 10,000 levels of a body.
    return _loads(data, max_depth=None)


@pytest.fixture(scope="module")
def crd(kubectl: Kubectl) -> None:
    kubectl.ok("apply", "-f", "-", stdin=json.dumps(CRD))
    deadline = time.monotonic() + 20
    while kubectl.run("get", "nests").code != 0:
        assert time.monotonic() < deadline, "the Nest kind is not served"
        time.sleep(0.1)


def _nest(name: str, depth: int, leaf: Any) -> dict[str, Any]:
    """A Nest whose JSON nests ``depth`` levels: the root, ``spec``, then ``a`` keys."""
    value: Any = leaf
    for _ in range(depth - 2):
        value = {"a": value}
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Nest",
        "metadata": {"name": name},
        "spec": value,
    }


def _leaf(obj: dict[str, Any], depth: int) -> Any:
    value = obj["spec"]
    for _ in range(depth - 2):
        value = value["a"]
    return value


def test_kubectl_round_trips_a_1000_level_object(
    kubectl: Kubectl, namespace: str, crd: None
) -> None:
    k = kubectl.in_namespace(namespace)
    depth = 1000
    path = k.write("nest.json", dumps(_nest("k", depth, {"v": 1})).decode())
    k.ok("create", "-f", str(path))
    got = loads(k.ok("get", "nest", "k", "-o", "json"))
    assert _leaf(got, depth) == {"v": 1}
    k.ok("patch", "nest", "k", "--type=merge", "-p", '{"metadata":{"labels":{"p":"m"}}}')
    applied = k.write("apply.json", dumps(_nest("k", depth, {"v": 2})).decode())
    k.ok("apply", "--server-side", "--force-conflicts", "-f", str(applied))
    got = loads(k.ok("get", "nest", "k", "-o", "json", "--show-managed-fields"))
    assert _leaf(got, depth) == {"v": 2}
    assert got["metadata"]["labels"] == {"p": "m"}
    managers = {entry["manager"] for entry in got["metadata"]["managedFields"]}
    assert "kubectl" in managers
    assert "k" in k.ok("get", "nests")


def test_the_python_client_round_trips_an_object_at_go_s_limit_and_gets_the_400_past_it(
    api_client: client.ApiClient, namespace: str, crd: None
) -> None:
    from kubernetes import client

    objects = client.CustomObjectsApi(api_client)
    depth = 10_000
    created = objects.create_namespaced_custom_object(
        GROUP, "v1", namespace, "nests", _nest("p", depth, {"v": 1})
    )
    assert _leaf(created, depth) == {"v": 1}
    got = objects.get_namespaced_custom_object(GROUP, "v1", namespace, "nests", "p")
    assert _leaf(got, depth) == {"v": 1}
    patched = objects.patch_namespaced_custom_object(
        GROUP, "v1", namespace, "nests", "p", {"metadata": {"labels": {"p": "m"}}}
    )
    assert patched["metadata"]["labels"] == {"p": "m"}
    assert _leaf(patched, depth) == {"v": 1}
    listed = objects.list_namespaced_custom_object(GROUP, "v1", namespace, "nests")
    assert [item["metadata"]["name"] for item in listed["items"]] == ["p"]

    with pytest.raises(client.ApiException) as refused:
        objects.create_namespaced_custom_object(
            GROUP, "v1", namespace, "nests", _nest("q", depth + 1, {"v": 1})
        )
    assert refused.value.status == 400
    status = json.loads(refused.value.body)
    assert status["reason"] == "BadRequest"
    assert status["message"].startswith(
        "the object provided is unrecognized (must be of type Nest): couldn't get "
        "version/kind; json parse error: invalid character '{' exceeded max depth ("
    )
    objects.delete_namespaced_custom_object(GROUP, "v1", namespace, "nests", "p")
