"""Paths, verbs, query booleans and Accept headers, read as the API server reads them."""

from __future__ import annotations

import pytest

from kstore.errors import BadRequest, KStoreError, NotFound, UnsupportedMediaType
from kstore.server.negotiation import NotAcceptable, Target, body_serializer, negotiate
from kstore.server.request_info import RequestInfo, parse_path, query_bool, verb_for


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/api/v1/namespaces/default/configmaps", ("", "v1", "default", "configmaps", "", "")),
        ("/api/v1/namespaces/default/configmaps/a", ("", "v1", "default", "configmaps", "a", "")),
        ("/api/v1/namespaces/d/pods/p/status", ("", "v1", "d", "pods", "p", "status")),
        ("/api/v1/namespaces", ("", "v1", "", "namespaces", "", "")),
        ("/api/v1/namespaces/ns1", ("", "v1", "ns1", "namespaces", "ns1", "")),
        ("/api/v1/namespaces/ns1/status", ("", "v1", "ns1", "namespaces", "ns1", "status")),
        ("/api/v1/namespaces/ns1/finalize", ("", "v1", "ns1", "namespaces", "ns1", "finalize")),
        ("/apis/apps/v1/deployments", ("apps", "v1", "", "deployments", "", "")),
        ("/apis/apps/v1/namespaces/x/deployments/d", ("apps", "v1", "x", "deployments", "d", "")),
    ],
)
def test_resource_paths_parse_like_kubernetes_request_info(
    path: str, expected: tuple[str, ...]
) -> None:
    info = parse_path(path)
    assert info is not None
    assert (
        info.group,
        info.version,
        info.namespace,
        info.resource,
        info.name,
        info.subresource,
    ) == expected
    assert not info.watch_prefix


def test_watch_prefix_is_recognised_and_stripped() -> None:
    info = parse_path("/api/v1/watch/namespaces/default/configmaps/a")
    assert info == RequestInfo("", "v1", "default", "configmaps", "a", "", True)
    assert verb_for("GET", info, False) == "watch"


@pytest.mark.parametrize("path", ["/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1"])
def test_discovery_paths_are_not_resource_paths(path: str) -> None:
    assert parse_path(path) is None
    assert parse_path(path + "/") is None


def test_too_many_segments_is_not_found() -> None:
    with pytest.raises(NotFound):
        parse_path("/api/v1/namespaces/d/pods/p/status/extra")


def test_empty_segment_is_a_bad_request() -> None:
    with pytest.raises(BadRequest):
        parse_path("/api/v1/namespaces/d//p")


@pytest.mark.parametrize(
    ("method", "name", "watch", "verb"),
    [
        ("GET", "a", False, "get"),
        ("GET", "", False, "list"),
        ("GET", "", True, "watch"),
        ("POST", "", False, "create"),
        ("PUT", "a", False, "update"),
        ("PATCH", "a", False, "patch"),
        ("DELETE", "a", False, "delete"),
        ("DELETE", "", False, "deletecollection"),
    ],
)
def test_verbs_follow_method_name_and_watch(method: str, name: str, watch: bool, verb: str) -> None:
    info = RequestInfo("", "v1", "d", "configmaps", name, "", False)
    assert verb_for(method, info, watch) == verb


@pytest.mark.parametrize("value", ["true", "True", "1", "yes", ""])
def test_query_booleans_are_true_unless_false_or_zero(value: str) -> None:
    assert query_bool(value) is True


@pytest.mark.parametrize("value", ["false", "False", "FALSE", "0"])
def test_query_booleans_false(value: str) -> None:
    assert query_bool(value) is False


def test_kubectl_table_accept_negotiates_a_table() -> None:
    accept = (
        "application/json;as=Table;v=v1;g=meta.k8s.io,"
        "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
    )
    fmt = negotiate(accept, transforms=True)
    assert fmt.target is Target.TABLE
    assert fmt.content_type == "application/json;as=Table;v=v1;g=meta.k8s.io"
    # Writes never transform: the plain JSON clause is chosen.
    assert negotiate(accept).target is Target.OBJECT


def test_protobuf_accept_and_stream_content_types() -> None:
    accept = "application/vnd.kubernetes.protobuf,application/json"
    assert negotiate(accept).content_type == "application/vnd.kubernetes.protobuf"
    assert (
        negotiate(accept, stream=True).content_type
        == "application/vnd.kubernetes.protobuf;stream=watch"
    )


def test_q_weights_order_the_choice() -> None:
    fmt = negotiate("application/json;q=0.5,application/yaml")
    assert fmt.media_type == "application/yaml"


def test_yaml_cannot_stream_a_watch() -> None:
    with pytest.raises(NotAcceptable) as err:
        negotiate("application/yaml", stream=True)
    assert err.value.code == 406


def test_unknown_accept_is_not_acceptable() -> None:
    with pytest.raises(KStoreError) as err:
        negotiate("text/html")
    assert err.value.code == 406
    assert err.value.reason == "NotAcceptable"


def test_missing_content_type_reads_json_and_unknown_is_415() -> None:
    assert body_serializer(None).media_type == "application/json"
    assert body_serializer("application/yaml; charset=utf-8").media_type == "application/yaml"
    with pytest.raises(UnsupportedMediaType) as err:
        body_serializer("text/plain")
    assert err.value.code == 415
    assert "unknown format" in err.value.message
