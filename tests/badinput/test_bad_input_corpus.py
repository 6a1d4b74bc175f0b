"""The bad-input corpus against one real ``kstore serve`` process (LMDB, temporary directory).

Each case of :mod:`tests.badinput.corpus` must get its specific 4xx ``Status`` (code, reason,
message fragment), the one kube-apiserver answers it with, and never a 5xx. After the corpus
the server must still be healthy, and every stored object must sit under its own key: listing every
resource of every namespace through the API, each object's namespace and name match the
collection it was listed from, and no name holds a path separator or a traversal sequence.
"""

from __future__ import annotations

import http.client
import json
from typing import Any

import httpx
import pytest

from tests.badinput.corpus import CASES, NS, NS_PREFIXED, SETUP, Case, configmap
from tests.server.harness import RunningServer


def _send_raw(client: httpx.Client, case: Case, headers: dict[str, str]) -> httpx.Response:
    url = client.base_url
    connection = http.client.HTTPConnection(url.host, url.port, timeout=30)
    try:
        body = case.body if isinstance(case.body, bytes) else None
        connection.request(case.method, case.path, body=body, headers=headers)
        answer = connection.getresponse()
        return httpx.Response(answer.status, headers=answer.getheaders(), content=answer.read())
    finally:
        connection.close()


def _send(client: httpx.Client, case: Case) -> httpx.Response:
    headers = dict(case.headers)
    if case.content_type is not None and case.body is not None:
        headers["Content-Type"] = case.content_type
    if case.accept is not None:
        headers["Accept"] = case.accept
    if case.raw:
        return _send_raw(client, case, headers)
    content: Any = case.body() if callable(case.body) else case.body
    request = client.build_request(case.method, "/", headers=headers, content=content)
    raw = case.path + (f"?{case.query}" if case.query else "")
    request.url = request.url.copy_with(raw_path=raw.encode("ascii"))
    if case.content_type is None and case.body is not None:
        request.headers.pop("Content-Type", None)
    return client.send(request)


def _status(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise AssertionError(
            f"not a JSON Status ({response.status_code}): {response.text[:300]}"
        ) from None
    assert isinstance(body, dict), body
    return body


@pytest.fixture(scope="module")
def seeded(client: httpx.Client) -> httpx.Client:
    for path, body in SETUP:
        response = client.post(path, content=body, headers={"Content-Type": "application/json"})
        assert response.status_code == 201, response.text
    return client


def _undo(client: httpx.Client, case: Case, response: httpx.Response) -> None:
    """A case that wrongly succeeded must not disturb the next ones: delete what it created
    (through the API, so an object it cannot address stays for the key check) and re-create
    a fixture it deleted."""
    body = response.json()
    meta = body.get("metadata") if isinstance(body, dict) else None
    if case.method == "POST" and isinstance(meta, dict) and "name" in meta:
        base = case.path.split("?")[0]
        client.delete(f"{base}/{meta['name']}")
    for path, seed in SETUP:
        name = json.loads(seed)["metadata"]["name"]
        if client.get(f"{path}/{name}").status_code == 404:
            client.post(path, content=seed, headers={"Content-Type": "application/json"})


def _check(client: httpx.Client, case: Case) -> None:
    response = _send(client, case)
    if response.status_code < 300:
        _undo(client, case, response)
    status = _status(response)
    summary = f"{response.status_code} {status.get('reason')}: {status.get('message', '')[:300]}"
    assert response.status_code < 500, summary
    assert status.get("kind") == "Status", summary
    assert status.get("apiVersion") == "v1", summary
    assert status.get("status") == "Failure", summary
    assert (response.status_code, status.get("reason")) == (case.code, case.reason), summary
    assert status.get("code") == case.code, summary
    if case.message is not None:
        assert case.message in status.get("message", ""), summary


def test_corpus_is_large_and_ids_unique() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) >= 200
    assert len(set(ids)) == len(ids), sorted(i for i in ids if ids.count(i) > 1)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input_gets_its_status(seeded: httpx.Client, case: Case) -> None:
    _check(seeded, case)


def test_namespace_prefix_does_not_leak(seeded: httpx.Client) -> None:
    """``corpus`` is a prefix of ``corpus-2``: a list of one never shows the other's objects."""
    body = json.dumps(configmap("only-in-prefixed")).encode()
    created = seeded.post(
        f"/api/v1/namespaces/{NS_PREFIXED}/configmaps",
        content=body,
        headers={"Content-Type": "application/json"},
    )
    assert created.status_code == 201, created.text
    listed = seeded.get(f"/api/v1/namespaces/{NS}/configmaps").json()
    assert {item["metadata"]["namespace"] for item in listed["items"]} == {NS}
    names = {item["metadata"]["name"] for item in listed["items"]}
    assert "only-in-prefixed" not in names
    prefixed = seeded.get(f"/api/v1/namespaces/{NS_PREFIXED}/configmaps").json()
    assert [i["metadata"]["name"] for i in prefixed["items"]] == ["only-in-prefixed"]
    missing = seeded.get(f"/api/v1/namespaces/{NS}/configmaps/only-in-prefixed")
    assert missing.status_code == 404


#: Case families whose requests aim at keys other than the object's own.
_KEY_PROBES = ("name-", "path-", "mismatch-", "list-continue-")


def _served_resources(client: httpx.Client) -> list[tuple[str, bool]]:
    """(collection path prefix, namespaced) of every listable resource the server serves."""
    out: list[tuple[str, bool]] = []
    roots = [("/api/v1", "")]
    for group in client.get("/apis").json()["groups"]:
        version = group["preferredVersion"]["groupVersion"]
        roots.append((f"/apis/{version}", version))
    for root, _ in roots:
        for resource in client.get(root).json()["resources"]:
            if "/" in resource["name"] or "list" not in resource["verbs"]:
                continue
            out.append((f"{root}/{resource['name']}", bool(resource["namespaced"])))
    return out


def test_server_healthy_and_every_object_under_its_own_key(
    server: RunningServer, seeded: httpx.Client
) -> None:
    """Runs after the corpus (pytest keeps definition order within a module); it replays the
    name, path and mismatch cases itself so that it holds when run alone too."""
    for case in CASES:
        if case.id.startswith(_KEY_PROBES):
            response = _send(seeded, case)
            if response.status_code < 300:
                _undo(seeded, case, response)
    assert server.process.poll() is None, server.log()
    assert "Traceback" not in server.log(), server.log()[-3000:]
    assert seeded.get("/healthz").status_code == 200
    assert seeded.get("/readyz").status_code == 200
    namespaces = [
        item["metadata"]["name"] for item in seeded.get("/api/v1/namespaces").json()["items"]
    ]
    assert NS in namespaces and NS_PREFIXED in namespaces
    checked = 0
    for collection, namespaced in _served_resources(seeded):
        plural = collection.rsplit("/", 1)[1]
        everywhere = seeded.get(collection)
        assert everywhere.status_code == 200, (collection, everywhere.text)
        total = len(everywhere.json()["items"])
        per_namespace = 0
        for ns in namespaces if namespaced else [""]:
            base = collection.rsplit("/", 1)[0]
            path = f"{base}/namespaces/{ns}/{plural}" if ns else collection
            items = seeded.get(path).json()["items"]
            per_namespace += len(items)
            for item in items:
                meta = item["metadata"]
                name = meta["name"]
                assert meta.get("namespace", "") == ns, (path, meta)
                assert name not in (".", "..") and "/" not in name and "%" not in name, meta
                assert "\x00" not in name and ".." not in name, meta
                fetched = seeded.get(f"{path}/{name}")
                assert fetched.status_code == 200, (path, name, fetched.text)
                assert fetched.json()["metadata"]["uid"] == meta["uid"]
                checked += 1
        # Every object of the cluster-wide list is reachable through exactly one namespace.
        assert per_namespace == total, (collection, per_namespace, total)
    assert checked >= 5
