"""The REST API of a real ``kstore serve`` process, over HTTP: discovery, CRUD, errors."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest
import yaml

from kstore.codec.protobuf import ProtobufSerializer

from .harness import RunningServer

CMS = "/api/v1/namespaces/default/configmaps"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
TABLE_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)


def _cm(name: str, **labels: str) -> dict[str, object]:
    return {"metadata": {"name": name, "labels": labels}, "data": {"a": "1"}}


def _create(client: httpx.Client, name: str, **labels: str) -> dict[str, object]:
    r = client.post(CMS, content=orjson.dumps(_cm(name, **labels)))
    assert r.status_code == 201, r.text
    body: dict[str, object] = r.json()
    return body


# ------------------------------------------------------------------------------ discovery


def test_aggregated_discovery_has_the_exact_content_type(client: httpx.Client) -> None:
    for path in ("/api", "/apis"):
        r = client.get(path, headers={"Accept": f"{AGGREGATED},application/json"})
        assert r.status_code == 200
        assert r.headers["content-type"] == AGGREGATED
        assert r.json()["kind"] == "APIGroupDiscoveryList"
    core = client.get("/api", headers={"Accept": AGGREGATED}).json()
    names = {r["resource"] for r in core["items"][0]["versions"][0]["resources"]}
    assert {"configmaps", "namespaces", "pods", "secrets"} <= names


def test_legacy_discovery_and_trailing_slashes(client: httpx.Client) -> None:
    versions = client.get("/api/").json()
    assert versions["kind"] == "APIVersions" and versions["versions"] == ["v1"]
    groups = client.get("/apis/").json()
    assert "apps" in [g["name"] for g in groups["groups"]]
    resources = client.get("/api/v1").json()
    cm = next(r for r in resources["resources"] if r["name"] == "configmaps")
    assert cm["namespaced"] is True and cm["shortNames"] == ["cm"]
    apps = client.get("/apis/apps/v1").json()
    assert apps["groupVersion"] == "apps/v1"
    assert client.get("/apis/apps").json()["preferredVersion"]["version"] == "v1"
    assert client.get("/version/").json()["major"] == "1"


def test_openapi_v3_index_and_group_version_document(client: httpx.Client) -> None:
    index = client.get("/openapi/v3").json()
    url = index["paths"]["api/v1"]["serverRelativeURL"]
    r = client.get(url)
    assert r.status_code == 200 and "immutable" in r.headers["cache-control"]
    op = r.json()["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"]
    assert "fieldValidation" in [p["name"] for p in op["parameters"]]


def _gnostic_document_class() -> Any:
    """The part of gnostic's ``openapi.v2.Document`` the server writes, as a message class."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    proto = descriptor_pb2.FileDescriptorProto(name="openapiv2_subset.proto", package="t")
    string = descriptor_pb2.FieldDescriptorProto.TYPE_STRING
    message = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
    optional = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    info = proto.message_type.add(name="Info")
    info.field.add(name="title", number=1, type=string, label=optional)
    info.field.add(name="version", number=2, type=string, label=optional)
    proto.message_type.add(name="Paths")
    proto.message_type.add(name="Definitions")
    doc = proto.message_type.add(name="Document")
    doc.field.add(name="swagger", number=1, type=string, label=optional)
    for name, number, type_name in (("info", 2, "Info"), ("paths", 8, "Paths")):
        doc.field.add(name=name, number=number, type=message, label=optional, type_name=type_name)
    doc.field.add(
        name="definitions", number=9, type=message, label=optional, type_name="Definitions"
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("t.Document"))


def test_openapi_v2_in_json_and_in_gnostic_protobuf(client: httpx.Client) -> None:
    as_json = client.get("/openapi/v2")
    assert as_json.headers["content-type"] == "application/json"
    assert as_json.json()["swagger"] == "2.0"
    assert as_json.json()["paths"] == {}
    # What kubectl sends, and the media type the API server answers with.
    accept = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
    as_pb = client.get("/openapi/v2", headers={"Accept": accept})
    assert as_pb.status_code == 200
    assert as_pb.headers["content-type"] == (
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    )
    doc = _gnostic_document_class().FromString(as_pb.content)
    assert doc.swagger == "2.0"
    assert doc.info.title == "kstore" and doc.info.version.startswith("v1.")
    assert doc.HasField("paths") and doc.HasField("definitions")
    etag = as_pb.headers["etag"]
    again = client.get("/openapi/v2", headers={"Accept": accept, "If-None-Match": etag})
    assert again.status_code == 304
    assert etag != as_json.headers["etag"]


def test_health_endpoints_and_metrics(client: httpx.Client) -> None:
    for path in ("/healthz", "/livez", "/readyz"):
        r = client.get(path)
        assert (r.status_code, r.text) == (200, "ok")
    verbose = client.get("/readyz?verbose").text
    assert "[+]storage ok" in verbose and "[+]shutdown ok" in verbose
    client.get(f"{CMS}/metrics-probe")
    text = client.get("/metrics").text
    assert 'apiserver_request_total{verb="GET",group="",version="v1",resource="configmaps"' in text
    assert "apiserver_request_duration_seconds_bucket" in text
    assert 'apiserver_storage_objects{resource="namespaces"}' in text


def test_unknown_paths_answer_a_not_found_status(client: httpx.Client) -> None:
    for path in ("/api/v1/namespaces/default/widgets", "/nothing/here", "/apis/nope/v1"):
        r = client.get(path)
        assert r.status_code == 404
        assert r.json()["reason"] == "NotFound"


# ------------------------------------------------------------------------ create and get


def test_create_without_kind_or_content_type_then_get(client: httpx.Client) -> None:
    r = client.post(CMS, content=orjson.dumps(_cm("cg1")), headers={"Content-Type": ""})
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["kind"] == "ConfigMap" and created["apiVersion"] == "v1"
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    assert created["metadata"]["namespace"] == "default"
    got = client.get(f"{CMS}/cg1").json()
    assert got["data"] == {"a": "1"}
    assert got["metadata"]["uid"] == created["metadata"]["uid"]


def test_duplicate_create_is_already_exists_as_kubernetes_words_it(client: httpx.Client) -> None:
    _create(client, "dup1")
    r = client.post(CMS, content=orjson.dumps(_cm("dup1")))
    assert r.status_code == 409
    status = r.json()
    assert status["kind"] == "Status" and status["status"] == "Failure"
    assert status["reason"] == "AlreadyExists"
    assert status["message"] == 'configmaps "dup1" already exists'
    assert status["details"]["kind"] == "configmaps" and status["details"]["name"] == "dup1"


def test_get_missing_is_not_found_with_the_resource_plural(client: httpx.Client) -> None:
    r = client.get(f"{CMS}/nope")
    assert r.status_code == 404
    assert r.json()["message"] == 'configmaps "nope" not found'


def test_missing_name_is_invalid_with_field_causes(client: httpx.Client) -> None:
    r = client.post(CMS, content=b'{"data":{"a":"1"}}')
    assert r.status_code == 422
    status = r.json()
    assert status["reason"] == "Invalid"
    assert status["details"]["kind"] == "ConfigMap"
    assert any(c["field"] == "metadata.name" for c in status["details"]["causes"])


def test_generate_name(client: httpx.Client) -> None:
    r = client.post(CMS, content=b'{"metadata":{"generateName":"gen-"}}')
    assert r.status_code == 201
    assert r.json()["metadata"]["name"].startswith("gen-")


def test_yaml_and_protobuf_bodies_and_answers(client: httpx.Client) -> None:
    body = yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", **_cm("yaml1")})
    r = client.post(
        CMS,
        content=body.encode(),
        headers={"Content-Type": "application/yaml", "Accept": "application/yaml"},
    )
    assert r.status_code == 201, r.text
    assert r.headers["content-type"] == "application/yaml"
    assert yaml.safe_load(r.text)["metadata"]["name"] == "yaml1"
    pb = ProtobufSerializer()
    data = pb.encode({"apiVersion": "v1", "kind": "ConfigMap", **_cm("proto1")})
    r = client.post(
        CMS,
        content=data,
        headers={
            "Content-Type": "application/vnd.kubernetes.protobuf",
            "Accept": "application/vnd.kubernetes.protobuf,application/json",
        },
    )
    assert r.status_code == 201, r.text
    assert r.headers["content-type"] == "application/vnd.kubernetes.protobuf"
    assert pb.decode(r.content)["metadata"]["name"] == "proto1"
    listed = client.get(CMS, headers={"Accept": "application/vnd.kubernetes.protobuf"})
    assert pb.decode(listed.content)["kind"] == "ConfigMapList"


def test_unsupported_media_types_are_415_and_406(client: httpx.Client) -> None:
    r = client.post(CMS, content=b"a=b", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415 and r.json()["reason"] == "UnsupportedMediaType"
    r = client.get(f"{CMS}/x", headers={"Accept": "text/html"})
    assert r.status_code == 406 and r.json()["reason"] == "NotAcceptable"


def test_body_of_another_version_is_a_bad_request(client: httpx.Client) -> None:
    body = orjson.dumps({"apiVersion": "apps/v1beta1", "kind": "Deployment", "metadata": {}})
    r = client.post("/apis/apps/v1/namespaces/default/deployments", content=body)
    assert r.status_code == 400
    assert r.json()["message"] == (
        "the API version in the data (apps/v1beta1) does not match the expected API version "
        "(apps/v1)"
    )


def test_namespace_mismatch_is_a_bad_request(client: httpx.Client) -> None:
    body = orjson.dumps({"metadata": {"name": "nsm", "namespace": "other"}})
    r = client.post(CMS, content=body)
    assert r.status_code == 400
    assert "does not match the namespace" in r.json()["message"]


@pytest.mark.parametrize(
    ("validation", "status", "warned"),
    [("Strict", 400, False), ("Warn", 201, True), ("Ignore", 201, False)],
)
def test_field_validation(client: httpx.Client, validation: str, status: int, warned: bool) -> None:
    name = f"fv-{validation.lower()}"
    body = orjson.dumps({"metadata": {"name": name}, "datax": {"a": "1"}})
    r = client.post(f"{CMS}?fieldValidation={validation}", content=body)
    assert r.status_code == status, r.text
    if status == 400:
        assert 'strict decoding error: unknown field "datax"' in r.json()["message"]
    warnings = r.headers.get_list("warning")
    assert bool(warnings) is warned
    if warned:
        assert warnings[0] == '299 - "unknown field \\"datax\\""'
    if status == 201:
        assert "datax" not in r.json()


def test_dry_run_create_is_not_persisted(client: httpx.Client) -> None:
    r = client.post(f"{CMS}?dryRun=All", content=orjson.dumps(_cm("dry1")))
    assert r.status_code == 201
    assert client.get(f"{CMS}/dry1").status_code == 404
    r = client.post(f"{CMS}?dryRun=Some", content=orjson.dumps(_cm("dry2")))
    assert r.status_code == 422


# ---------------------------------------------------------------------------------- list


def test_list_pages_with_limit_and_continue(client: httpx.Client) -> None:
    for i in range(7):
        _create(client, f"page-{i}", suite="paging")
    names: list[str] = []
    token = ""
    pages = 0
    while True:
        r = client.get(CMS, params={"labelSelector": "suite=paging", "limit": 3, "continue": token})
        assert r.status_code == 200, r.text
        page = r.json()
        assert page["kind"] == "ConfigMapList" and page["apiVersion"] == "v1"
        assert page["metadata"]["resourceVersion"]
        assert all("kind" not in item for item in page["items"])
        names += [item["metadata"]["name"] for item in page["items"]]
        pages += 1
        token = page["metadata"].get("continue", "")
        if not token:
            break
    assert names == [f"page-{i}" for i in range(7)]
    assert pages == 3


def test_empty_list_has_an_items_array(client: httpx.Client) -> None:
    r = client.get(CMS, params={"labelSelector": "nothing=here"})
    assert r.json()["items"] == []


def test_field_selectors(client: httpx.Client) -> None:
    _create(client, "fs-1")
    r = client.get(CMS, params={"fieldSelector": "metadata.name=fs-1,metadata.name=fs-1"})
    assert [i["metadata"]["name"] for i in r.json()["items"]] == ["fs-1"]
    r = client.get(CMS, params={"fieldSelector": "spec.nodeName=x"})
    assert r.status_code == 400
    assert r.json()["message"] == "field label not supported: spec.nodeName"
    pods = client.get("/api/v1/pods", params={"fieldSelector": "spec.nodeName=x"})
    assert pods.status_code == 200


def test_list_option_validation_is_422(client: httpx.Client) -> None:
    r = client.get(CMS, params={"resourceVersionMatch": "NotOlderThan"})
    assert r.status_code == 422
    assert r.json()["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden unless resourceVersion is provided"
    )


def test_table_answers_for_kubectl_get(client: httpx.Client) -> None:
    _create(client, "tbl-1", suite="table")
    r = client.get(CMS, params={"labelSelector": "suite=table"}, headers={"Accept": TABLE_ACCEPT})
    assert r.headers["content-type"] == "application/json;as=Table;v=v1;g=meta.k8s.io"
    table = r.json()
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    row = table["rows"][0]
    assert row["cells"][:2] == ["tbl-1", 1]
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["labels"] == {"suite": "table"}


def test_list_across_namespaces_and_cluster_scoped_namespaces(client: httpx.Client) -> None:
    _create(client, "all-ns-1")
    r = client.get("/api/v1/configmaps", params={"fieldSelector": "metadata.name=all-ns-1"})
    assert [i["metadata"]["namespace"] for i in r.json()["items"]] == ["default"]
    ns = client.get("/api/v1/namespaces/default")
    assert ns.status_code == 200 and ns.json()["kind"] == "Namespace"
    assert client.post("/api/v1/configmaps", content=b"{}").status_code == 405


# ------------------------------------------------------------------------ update, delete


def test_update_conflicts_on_a_stale_resource_version(client: httpx.Client) -> None:
    created = _create(client, "upd1")
    first = dict(created)
    first["data"] = {"a": "2"}
    r = client.put(f"{CMS}/upd1", content=orjson.dumps(first))
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {"a": "2"}
    r = client.put(f"{CMS}/upd1", content=orjson.dumps(first))
    assert r.status_code == 409
    assert r.json()["message"] == (
        'Operation cannot be fulfilled on configmaps "upd1": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


def test_update_name_must_match_the_url(client: httpx.Client) -> None:
    created = _create(client, "upd2")
    r = client.put(f"{CMS}/other", content=orjson.dumps(created))
    assert r.status_code == 400
    assert r.json()["message"] == (
        "the name of the object (upd2) does not match the name on the URL (other)"
    )


def test_delete_answers_a_success_status_then_not_found(client: httpx.Client) -> None:
    created = _create(client, "del1")
    r = client.request(
        "DELETE",
        f"{CMS}/del1",
        content=b'{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}',
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 200, r.text
    status = r.json()
    assert status["kind"] == "Status" and status["status"] == "Success"
    assert status["details"] == {
        "name": "del1",
        "kind": "configmaps",
        "uid": created["metadata"]["uid"],  # type: ignore[index]
    }
    assert client.get(f"{CMS}/del1").status_code == 404
    again = client.delete(f"{CMS}/del1")
    assert again.status_code == 404
    assert again.json()["message"] == 'configmaps "del1" not found'


def test_delete_preconditions_and_dry_run(client: httpx.Client) -> None:
    _create(client, "del2")
    r = client.request("DELETE", f"{CMS}/del2", content=b'{"preconditions":{"uid":"not-the-uid"}}')
    assert r.status_code == 409 and r.json()["reason"] == "Conflict"
    r = client.delete(f"{CMS}/del2", params={"dryRun": "All"})
    assert r.status_code == 200
    assert client.get(f"{CMS}/del2").status_code == 200
    r = client.request("DELETE", f"{CMS}/del2", content=b'{"propagationPolicy":"Sideways"}')
    assert r.status_code == 422


def test_delete_collection_returns_the_deleted_list(client: httpx.Client) -> None:
    for i in range(3):
        _create(client, f"dc-{i}", suite="dc")
    _create(client, "dc-keep")
    r = client.delete(CMS, params={"labelSelector": "suite=dc"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["kind"] == "ConfigMapList"
    assert sorted(i["metadata"]["name"] for i in body["items"]) == ["dc-0", "dc-1", "dc-2"]
    left = client.get(CMS, params={"labelSelector": "suite=dc"}).json()["items"]
    assert left == []
    assert client.get(f"{CMS}/dc-keep").status_code == 200


def test_pod_delete_answers_with_the_object(client: httpx.Client, server: RunningServer) -> None:
    pod = {
        "metadata": {"name": "p1"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    # The account the ServiceAccount admission plugin wants (a cluster's controller makes it).
    account = orjson.dumps({"metadata": {"name": "default"}})
    r = client.post("/api/v1/namespaces/default/serviceaccounts", content=account)
    assert r.status_code in (201, 409), r.text
    r = client.post("/api/v1/namespaces/default/pods", content=orjson.dumps(pod))
    assert r.status_code == 201, r.text
    r = client.delete("/api/v1/namespaces/default/pods/p1", params={"gracePeriodSeconds": "0"})
    assert r.status_code == 200, r.text
    assert r.json()["kind"] == "Pod"


def test_body_size_limit(client: httpx.Client) -> None:
    big = b'{"metadata":{"name":"big"},"data":{"a":"' + b"x" * (3 * 1024 * 1024) + b'"}}'
    r = client.post(CMS, content=big)
    assert r.status_code == 413
    assert r.json()["reason"] == "RequestEntityTooLarge"


# ---------------------------------------------------------------------------------- patch


def test_patch_types_accumulate(client: httpx.Client) -> None:
    _create(client, "pt1")
    for content_type, body in (
        ("application/merge-patch+json", b'{"data":{"m":"1"}}'),
        ("application/json-patch+json", b'[{"op":"add","path":"/data/j","value":"2"}]'),
        ("application/strategic-merge-patch+json", b'{"data":{"s":"3"}}'),
    ):
        r = client.patch(f"{CMS}/pt1", content=body, headers={"Content-Type": content_type})
        assert r.status_code == 200, r.text
    assert client.get(f"{CMS}/pt1").json()["data"] == {"a": "1", "m": "1", "j": "2", "s": "3"}


def test_patch_of_a_missing_object_is_not_found_and_bad_type_is_415(
    client: httpx.Client,
) -> None:
    r = client.patch(
        f"{CMS}/pt-missing",
        content=b'{"data":{}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 404
    r = client.patch(f"{CMS}/pt-missing", content=b"{}", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415


def test_server_side_apply_creates_then_updates(client: httpx.Client) -> None:
    body = orjson.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa1"}, "data": {"a": "1"}}
    )
    headers = {"Content-Type": "application/apply-patch+yaml"}
    r = client.patch(
        f"{CMS}/ssa1", params={"fieldManager": "kubectl"}, content=body, headers=headers
    )
    assert r.status_code == 201, r.text
    managers = [m["manager"] for m in r.json()["metadata"]["managedFields"]]
    assert managers == ["kubectl"]
    r = client.patch(
        f"{CMS}/ssa1", params={"fieldManager": "kubectl"}, content=body, headers=headers
    )
    assert r.status_code == 200, r.text


def test_dry_run_patch_changes_nothing(client: httpx.Client) -> None:
    _create(client, "pt-dry")
    r = client.patch(
        f"{CMS}/pt-dry",
        params={"dryRun": "All"},
        content=b'{"data":{"a":"changed"}}',
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert r.status_code == 200 and r.json()["data"] == {"a": "changed"}
    assert client.get(f"{CMS}/pt-dry").json()["data"] == {"a": "1"}
