"""Watches over HTTP: newline-delimited events, bookmarks, watch-list, protobuf frames."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import orjson

from kstore.codec.protobuf import decode_watch_event, split_frames

CMS = "/api/v1/namespaces/default/configmaps"


def _events(response: httpx.Response) -> Iterator[dict[str, object]]:
    for line in response.iter_lines():
        if line:
            yield orjson.loads(line)


def _later(action: object, delay: float = 0.3) -> threading.Thread:
    def run() -> None:
        time.sleep(delay)
        action()  # type: ignore[operator]

    t = threading.Thread(target=run)
    t.start()
    return t


def test_watch_from_a_resource_version_streams_changes_in_order(client: httpx.Client) -> None:
    listed = client.get(CMS, params={"labelSelector": "suite=w1"}).json()
    rv = listed["metadata"]["resourceVersion"]

    def changes() -> None:
        with httpx.Client(base_url=str(client.base_url)) as c:
            body = {"metadata": {"name": "w1", "labels": {"suite": "w1"}}, "data": {"a": "1"}}
            created = c.post(CMS, content=orjson.dumps(body)).json()
            created["data"] = {"a": "2"}
            c.put(f"{CMS}/w1", content=orjson.dumps(created))
            c.delete(f"{CMS}/w1")

    worker = _later(changes)
    seen: list[tuple[str, str]] = []
    params = {"watch": "true", "resourceVersion": rv, "labelSelector": "suite=w1"}
    params["timeoutSeconds"] = "5"
    with client.stream("GET", CMS, params=params) as r:
        assert r.status_code == 200
        assert r.headers["content-type"] == "application/json"
        for event in _events(r):
            obj = event["object"]
            assert isinstance(obj, dict)
            seen.append((str(event["type"]), obj["metadata"]["name"]))
            if event["type"] == "DELETED":
                break
    worker.join()
    assert seen == [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")]


def test_legacy_watch_with_capital_true_sends_existing_objects_first(
    client: httpx.Client,
) -> None:
    client.post(CMS, content=b'{"metadata":{"name":"w2","labels":{"suite":"w2"}}}')
    params = {"watch": "True", "labelSelector": "suite=w2", "timeoutSeconds": "1"}
    started = time.monotonic()
    with client.stream("GET", CMS, params=params) as r:
        events = list(_events(r))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "w2")]  # type: ignore[index]
    assert time.monotonic() - started < 5  # timeoutSeconds ends the stream


def test_watch_list_ends_initial_events_with_the_annotated_bookmark(
    client: httpx.Client,
) -> None:
    client.post(CMS, content=b'{"metadata":{"name":"w3"}}')
    params = {
        "watch": "true",
        "sendInitialEvents": "true",
        "allowWatchBookmarks": "true",
        "resourceVersionMatch": "NotOlderThan",
        "fieldSelector": "metadata.name=w3",
        "timeoutSeconds": "5",
    }
    with client.stream("GET", CMS, params=params) as r:
        events = []
        for event in _events(r):
            events.append(event)
            if event["type"] == "BOOKMARK":
                break
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    bookmark = events[1]["object"]
    assert isinstance(bookmark, dict)
    assert bookmark["kind"] == "ConfigMap" and bookmark["apiVersion"] == "v1"
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(bookmark["metadata"]["resourceVersion"]) >= int(
        events[0]["object"]["metadata"]["resourceVersion"]  # type: ignore[index]
    )


def test_watch_path_prefix_selects_one_object(client: httpx.Client) -> None:
    client.post(CMS, content=b'{"metadata":{"name":"w4"}}')
    client.post(CMS, content=b'{"metadata":{"name":"w4-other"}}')
    with client.stream(
        "GET", "/api/v1/watch/namespaces/default/configmaps/w4", params={"timeoutSeconds": "1"}
    ) as r:
        names = [e["object"]["metadata"]["name"] for e in _events(r)]  # type: ignore[index]
    assert names == ["w4"]


def test_protobuf_watch_frames(client: httpx.Client) -> None:
    client.post(CMS, content=b'{"metadata":{"name":"w5","labels":{"suite":"w5"}}}')
    headers = {"Accept": "application/vnd.kubernetes.protobuf;stream=watch"}
    params = {"watch": "1", "labelSelector": "suite=w5", "timeoutSeconds": "1"}
    with client.stream("GET", CMS, params=params, headers=headers) as r:
        assert r.headers["content-type"] == "application/vnd.kubernetes.protobuf;stream=watch"
        data = r.read()
    frames, rest = split_frames(data)
    assert rest == b""
    kind, obj = decode_watch_event(frames[0])
    assert kind == "ADDED" and obj is not None


def test_table_watch_sends_one_row_tables(client: httpx.Client) -> None:
    client.post(CMS, content=b'{"metadata":{"name":"w6","labels":{"suite":"w6"}}}')
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    params = {"watch": "true", "labelSelector": "suite=w6", "timeoutSeconds": "1"}
    with client.stream("GET", CMS, params=params, headers={"Accept": accept}) as r:
        events = list(_events(r))
    table = events[0]["object"]
    assert isinstance(table, dict) and table["kind"] == "Table"
    assert table["rows"][0]["cells"][0] == "w6"


def test_bad_watch_options_are_a_status_not_a_stream(client: httpx.Client) -> None:
    r = client.get(CMS, params={"watch": "true", "sendInitialEvents": "true"})
    assert r.status_code == 422
    assert r.json()["reason"] == "Invalid"
