"""Large JSON lists over HTTP are streamed (chunked, no Content-Length) and carry what the
pages of the same collection carry: items, resourceVersion, continue token and remaining
count; protobuf and Table lists of the same size are answered whole."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import orjson
import pytest

from kstore.codec.protobuf import ProtobufSerializer
from kstore.server.list_stream import STREAM_MIN_ITEMS
from tests.server.harness import RunningServer

NAMESPACE = "streamed"
COUNT = STREAM_MIN_ITEMS + 120
COLLECTION = f"/api/v1/namespaces/{NAMESPACE}/configmaps"


@pytest.fixture(scope="module")
def filled(server: RunningServer) -> Iterator[RunningServer]:
    with server.client() as c:
        created = c.post("/api/v1/namespaces", json={"metadata": {"name": NAMESPACE}})
        assert created.status_code == 201, created.text

    def create(worker: int) -> None:
        with server.client() as c:
            for i in range(worker, COUNT, 4):
                body = {"metadata": {"name": f"cm-{i:04d}"}, "data": {"i": str(i) * (i % 50)}}
                answer = c.post(COLLECTION, json=body)
                assert answer.status_code == 201, answer.text

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(create, range(4)))
    yield server


def get(client: httpx.Client, path: str, accept: str = "application/json") -> httpx.Response:
    answer = client.get(path, headers={"Accept": accept})
    assert answer.status_code == 200, answer.text
    return answer


def names(body: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in body["items"]]


def test_a_full_list_is_streamed_and_equals_its_pages(filled: RunningServer) -> None:
    with filled.client() as c:
        whole = get(c, COLLECTION)
        assert "content-length" not in whole.headers
        assert whole.headers["transfer-encoding"] == "chunked"
        assert whole.content.endswith(b"]}\n")
        body = orjson.loads(whole.content)
        assert body["kind"] == "ConfigMapList" and body["apiVersion"] == "v1"
        assert names(body) == [f"cm-{i:04d}" for i in range(COUNT)]
        assert "continue" not in body["metadata"]
        revision = body["metadata"]["resourceVersion"]
        # The same collection in pages of 300 (answered whole), at the list's revision.
        items: list[Any] = []
        token = ""
        while True:
            page = get(c, f"{COLLECTION}?limit=300&continue={token}")
            assert "content-length" in page.headers
            data = orjson.loads(page.content)
            items.extend(data["items"])
            token = data["metadata"].get("continue", "")
            if not token:
                break
        assert items == body["items"]
        # At an exact revision the list is read from storage, streamed the same way.
        exact = get(c, f"{COLLECTION}?resourceVersion={revision}&resourceVersionMatch=Exact")
        assert "content-length" not in exact.headers
        assert exact.content == whole.content


def test_a_streamed_page_carries_its_continue_token_and_remaining_count(
    filled: RunningServer,
) -> None:
    limit = STREAM_MIN_ITEMS + 50
    with filled.client() as c:
        first = get(c, f"{COLLECTION}?limit={limit}")
        assert "content-length" not in first.headers
        body = orjson.loads(first.content)
        assert len(body["items"]) == limit
        assert body["metadata"]["remainingItemCount"] == COUNT - limit
        rest = orjson.loads(get(c, f"{COLLECTION}?continue={body['metadata']['continue']}").content)
        assert rest["metadata"]["resourceVersion"] == body["metadata"]["resourceVersion"]
        assert names(body) + names(rest) == [f"cm-{i:04d}" for i in range(COUNT)]
        # At resourceVersion 0 the cache ignores the limit: everything, streamed.
        any_age = get(c, f"{COLLECTION}?resourceVersion=0&limit={limit}")
        assert "content-length" not in any_age.headers
        assert len(orjson.loads(any_age.content)["items"]) == COUNT


def test_protobuf_and_table_lists_are_answered_whole(filled: RunningServer) -> None:
    with filled.client() as c:
        proto = get(c, COLLECTION, "application/vnd.kubernetes.protobuf")
        assert int(proto.headers["content-length"]) == len(proto.content)
        decoded = ProtobufSerializer().decode(proto.content)
        assert decoded["kind"] == "ConfigMapList" and len(decoded["items"]) == COUNT
        table = get(c, COLLECTION, "application/json;as=Table;v=v1;g=meta.k8s.io")
        assert int(table.headers["content-length"]) == len(table.content)
        assert len(orjson.loads(table.content)["rows"]) == COUNT
