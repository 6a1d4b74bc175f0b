"""Custom objects nested as deep as kube-apiserver allows, on a real ``kstore serve``.

kube-apiserver's only depth limit is Go's JSON decoder: 10,000 levels of objects and arrays,
the outermost counted. A custom object (``x-kubernetes-preserve-unknown-fields``) up to that
depth is created, read back (get, list, watch), merge- and JSON-patched and server-side
applied, on LMDB and on etcd; one level more is refused with Go's words; the server answers
other requests all along.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from kstore.codec.json import loads as _loads
from tests.clients.servers import BACKENDS, storage_args
from tests.server.harness import RunningServer, start_server

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
PATH = "/apis/deep.example.com/v1/namespaces/default/nests"
JSON = {"Content-Type": "application/json"}
GO_LIMIT = 10_000


def loads(data: bytes | str) -> Any:
    # What the server answers: its managedFields may nest past the 10,000 levels of a body.
    return _loads(data, max_depth=None)


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    with storage_args(request.config, request.param) as args:
        running = start_server(tmp_path_factory.mktemp("deep") / "data", *args)
        try:
            with httpx.Client(base_url=running.url, timeout=60) as c:
                assert c.post(CRDS, json=_crd()).status_code == 201
                deadline = time.monotonic() + 20
                while c.get(PATH).status_code != 200:
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
            yield running
        finally:
            assert running.stop() == 0, running.log()


@pytest.fixture
def client(server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=120) as c:
        yield c


def _crd() -> dict[str, Any]:
    spec = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "nests.deep.example.com"},
        "spec": {
            "group": "deep.example.com",
            "scope": "Namespaced",
            "names": {"plural": "nests", "kind": "Nest"},
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


def _body(name: str, depth: int, leaf: bytes = b"{}") -> bytes:
    """A Nest whose JSON nests ``depth`` levels in all: the root, ``spec``, then ``a`` keys."""
    head = b'{"apiVersion":"deep.example.com/v1","kind":"Nest","metadata":{"name":"%s"},"spec":'
    below = depth - 2
    return head % name.encode() + b'{"a":' * below + leaf + b"}" * below + b"}"


def _leaf(obj: dict[str, Any], depth: int) -> Any:
    spec = obj["spec"]
    for _ in range(depth - 2):
        spec = spec["a"]
    return spec


def _watch_event(client: httpx.Client, resource_version: str) -> dict[str, Any]:
    url = f"{PATH}?watch=1&resourceVersion={resource_version}&timeoutSeconds=30"
    with client.stream("GET", url) as stream:
        for line in stream.iter_lines():
            if line.strip():
                event: dict[str, Any] = loads(line)
                return event
    raise AssertionError("the watch ended without an event")


def _round_trip(client: httpx.Client, name: str, depth: int) -> None:
    start_rv = loads(client.get(PATH).content)["metadata"]["resourceVersion"]
    created = client.post(PATH, content=_body(name, depth), headers=JSON)
    assert created.status_code == 201, created.text[:500]
    assert _leaf(loads(created.content), depth) == {}

    got = loads(client.get(f"{PATH}/{name}").content)
    assert _leaf(got, depth) == {}
    assert got["metadata"]["managedFields"][0]["operation"] == "Update"
    listed = loads(client.get(PATH, params={"fieldSelector": f"metadata.name={name}"}).content)
    assert [_leaf(item, depth) for item in listed["items"]] == [{}]
    event = _watch_event(client, start_rv)
    assert event["type"] == "ADDED"
    assert _leaf(event["object"], depth) == {}

    merged = client.patch(
        f"{PATH}/{name}",
        content=b'{"metadata":{"labels":{"patched":"merge"}}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert merged.status_code == 200, merged.text[:500]
    pointer = "/spec" + "/a" * (depth - 2)
    json_patched = client.patch(
        f"{PATH}/{name}",
        content=orjson.dumps([{"op": "add", "path": f"{pointer}/leaf", "value": "x"}]),
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert json_patched.status_code == 200, json_patched.text[:500]
    assert _leaf(loads(json_patched.content), depth) == {"leaf": "x"}

    applied = client.patch(
        f"{PATH}/{name}",
        params={"fieldManager": "deep-applier", "force": "true"},
        content=_body(name, depth, b'{"leaf":"y"}'),
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert applied.status_code == 200, applied.text[:500]
    after = loads(applied.content)
    assert _leaf(after, depth) == {"leaf": "y"}
    assert after["metadata"]["labels"] == {"patched": "merge"}
    managers = [entry["manager"] for entry in after["metadata"]["managedFields"]]
    assert "deep-applier" in managers

    assert client.delete(f"{PATH}/{name}").status_code == 200


def test_a_1000_level_object_round_trips_in_json_and_yaml(client: httpx.Client) -> None:
    _round_trip(client, "thousand", 1000)
    created = client.post(PATH, content=_body("yaml", 1000), headers=JSON)
    assert created.status_code == 201
    as_yaml = client.get(f"{PATH}/yaml", headers={"Accept": "application/yaml"})
    assert as_yaml.status_code == 200
    assert as_yaml.headers["content-type"].startswith("application/yaml")
    assert as_yaml.text.count("\n") > 1000


def test_an_object_at_go_s_limit_round_trips_while_other_requests_are_served(
    client: httpx.Client, server: RunningServer
) -> None:
    served: list[float] = []
    done = threading.Event()

    def other_requests() -> None:
        with httpx.Client(base_url=server.url, timeout=30) as other:
            while not done.is_set() and len(served) < 10_000:
                began = time.monotonic()
                assert other.get("/api/v1/namespaces/default").status_code == 200
                served.append(time.monotonic() - began)
                time.sleep(0.02)

    background = threading.Thread(target=other_requests, daemon=True)
    background.start()
    try:
        _round_trip(client, "limit", GO_LIMIT)
    finally:
        done.set()
        background.join(30)
    assert len(served) >= 5, served
    assert client.get("/readyz").status_code == 200


def test_one_level_past_go_s_limit_is_refused_with_kube_apiserver_s_message(
    client: httpx.Client,
) -> None:
    answer = client.post(PATH, content=_body("past", GO_LIMIT + 1), headers=JSON)
    assert answer.status_code == 400
    status = answer.json()
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "BadRequest", 400)
    assert status["message"] == (
        "the object provided is unrecognized (must be of type Nest): couldn't get "
        "version/kind; json parse error: invalid character '{' exceeded max depth "
        '({"apiVersion":"deep.example.co ...)'
    )
    assert client.get(f"{PATH}/past").status_code == 404
    # A deep array counts the same as deep objects (spec is level 2, the arrays below it).
    arrays = _body("arrays", 3, b"[" * (GO_LIMIT - 1) + b"]" * (GO_LIMIT - 1))
    answer = client.post(PATH, content=arrays, headers=JSON)
    assert answer.status_code == 400
    assert "invalid character '[' exceeded max depth" in answer.json()["message"]
    assert client.get("/readyz").status_code == 200


def test_a_yaml_body_deeper_than_libyaml_goes_is_a_clean_bad_request(
    client: httpx.Client,
) -> None:
    depth = 1100
    body = (
        b"apiVersion: deep.example.com/v1\nkind: Nest\nmetadata: {name: deepyaml}\nspec: "
        + b"{a: " * depth
        + b"1"
        + b"}" * depth
    )
    answer = client.post(PATH, content=body, headers={"Content-Type": "application/yaml"})
    assert answer.status_code == 400
    assert "nested deeper than the limit of 1000 levels for YAML" in answer.json()["message"]


def test_a_deep_object_is_read_back_from_storage_itself(client: httpx.Client) -> None:
    # A quorum read (resourceVersion="") decodes the stored bytes, not the watch cache's copy.
    created = client.post(PATH, content=_body("kept", 2000), headers=JSON)
    assert created.status_code == 201
    got = client.get(f"{PATH}/kept", params={"resourceVersion": ""})
    assert _leaf(loads(got.content), 2000) == {}
    assert client.delete(f"{PATH}/kept").status_code == 200


def test_apply_on_a_crd_whose_root_schema_only_preserves_unknown_fields(
    client: httpx.Client,
) -> None:
    # Every field but apiVersion, kind and metadata is deduced from its value.
    crd = _crd()
    crd["metadata"]["name"] = "opens.deep.example.com"
    crd["spec"]["names"] = {"plural": "opens", "kind": "Open"}
    crd["spec"]["versions"][0]["schema"] = {
        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    }
    assert client.post(CRDS, json=crd).status_code == 201
    path = "/apis/deep.example.com/v1/namespaces/default/opens"
    deadline = time.monotonic() + 20
    while client.get(path).status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    below = 998
    config = (
        b'{"apiVersion":"deep.example.com/v1","kind":"Open","metadata":{"name":"o"},'
        b'"top":[1,2],"spec":' + b'{"a":' * below + b'{"v":1}' + b"}" * below + b"}"
    )
    applied = client.patch(
        f"{path}/o",
        params={"fieldManager": "opener"},
        content=config,
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert applied.status_code == 201, applied.text[:500]
    fields = loads(applied.content)["metadata"]["managedFields"][0]["fieldsV1"]
    assert fields["f:top"] == {}
    spec_fields = fields["f:spec"]
    for _ in range(below):
        spec_fields = spec_fields["f:a"]
    assert spec_fields == {".": {}, "f:v": {}}
    again = client.patch(
        f"{path}/o",
        params={"fieldManager": "opener"},
        content=config.replace(b'{"v":1}', b'{"v":2}'),
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert again.status_code == 200, again.text[:500]
    assert _leaf(loads(again.content), below + 2) == {"v": 2}
