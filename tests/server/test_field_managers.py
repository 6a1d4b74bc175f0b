"""Writes without ``fieldManager`` are recorded under the client's product name, as
Kubernetes' ``managerOrUserAgent`` does (``kubectl scale`` and the Python client send none),
so two such clients own their own fields instead of sharing one anonymous entry."""

from __future__ import annotations

import httpx
import orjson

CMS = "/api/v1/namespaces/default/configmaps"


def _entries(obj: dict[str, object]) -> list[tuple[str, str, object]]:
    meta = obj["metadata"]
    assert isinstance(meta, dict)
    return [(e["manager"], e["operation"], e["fieldsV1"]) for e in meta["managedFields"]]


def test_create_patch_and_put_record_the_user_agent_product(client: httpx.Client) -> None:
    body = {"metadata": {"name": "fm1"}, "data": {"a": "1"}}
    r = client.post(CMS, content=orjson.dumps(body), headers={"User-Agent": "maker/1.0 (linux)"})
    assert r.status_code == 201, r.text
    assert _entries(r.json()) == [("maker", "Update", {"f:data": {".": {}, "f:a": {}}})]

    r = client.patch(
        f"{CMS}/fm1",
        content=b'{"data":{"b":"2"}}',
        headers={"Content-Type": "application/merge-patch+json", "User-Agent": "patcher/2"},
    )
    assert r.status_code == 200, r.text
    assert sorted(_entries(r.json())) == [
        ("maker", "Update", {"f:data": {".": {}, "f:a": {}}}),
        ("patcher", "Update", {"f:data": {"f:b": {}}}),
    ]

    named = client.patch(
        f"{CMS}/fm1",
        params={"fieldManager": "explicit"},
        content=b'{"data":{"c":"3"}}',
        headers={"Content-Type": "application/merge-patch+json", "User-Agent": "patcher/2"},
    )
    assert sorted(m for m, _, _ in _entries(named.json())) == ["explicit", "maker", "patcher"]


def test_apply_still_requires_the_parameter(client: httpx.Client) -> None:
    r = client.patch(
        f"{CMS}/fm2",
        content=b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fm2"}}',
        headers={"Content-Type": "application/apply-patch+yaml", "User-Agent": "kubectl/v1"},
    )
    assert r.status_code == 422
    assert r.json()["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
        "is required for apply patch"
    )
