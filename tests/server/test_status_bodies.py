"""Status bodies byte for byte, as kube-apiserver writes them, over real HTTP.

Go's ``metav1.Status`` fields in their declared order (``reason``, then ``details``, then
``code``), ``details`` present exactly where Kubernetes' constructor sets it (``{}`` for a
go-restful 404 or 405, absent for a BadRequest), ``<``/``>``/``&`` escaped as Go's encoder
escapes them, and the encoder's trailing newline, which every JSON answer of the serializer
carries (objects, lists, discovery), while ``/version`` is indented without one.
"""

from __future__ import annotations

import time

import httpx
import orjson
import pytest

from kstore.errors import (
    BadRequest,
    Cause,
    Expired,
    NotFound,
    TooManyRequests,
    Unavailable,
    to_status,
)

NS = "default"
CMS = f"/api/v1/namespaces/{NS}/configmaps"
_HEAD = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
_ROUTER_404 = (
    _HEAD + b'"message":"the server could not find the requested resource",'
    b'"reason":"NotFound","details":{},"code":404}\n'
)


def _configmap(name: str, **extra: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **extra}


def _expect(response: httpx.Response, code: int, body: bytes) -> None:
    assert response.status_code == code, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.content == body


def test_a_path_the_router_does_not_serve_is_404_with_empty_details(
    client: httpx.Client,
) -> None:
    _expect(client.get("/api/v1/nope"), 404, _ROUTER_404)
    _expect(client.get("/apis/apps/v1/namespaces/default/nope"), 404, _ROUTER_404)
    _expect(client.get("/apis/apps/v9"), 404, _ROUTER_404)


def test_a_group_nobody_serves_is_the_final_not_found_handler_without_details(
    client: httpx.Client,
) -> None:
    body = (
        _HEAD + b'"message":"the server could not find the requested resource",'
        b'"reason":"NotFound","code":404}\n'
    )
    _expect(client.get("/apis/nope.example.com/v1/things"), 404, body)
    _expect(client.get("/apis/nope.example.com"), 404, body)
    _expect(client.get("/nothing/here"), 404, body)


def test_a_missing_object_is_404_naming_it(client: httpx.Client) -> None:
    _expect(
        client.get(f"{CMS}/missing"),
        404,
        _HEAD + b'"message":"configmaps \\"missing\\" not found","reason":"NotFound",'
        b'"details":{"name":"missing","kind":"configmaps"},"code":404}\n',
    )
    _expect(
        client.get("/apis/apps/v1/namespaces/default/deployments/missing"),
        404,
        _HEAD + b'"message":"deployments.apps \\"missing\\" not found","reason":"NotFound",'
        b'"details":{"name":"missing","group":"apps","kind":"deployments"},"code":404}\n',
    )


def test_conflicts_are_409_with_details(client: httpx.Client) -> None:
    assert client.post(CMS, json=_configmap("taken")).status_code == 201
    _expect(
        client.post(CMS, json=_configmap("taken")),
        409,
        _HEAD + b'"message":"configmaps \\"taken\\" already exists","reason":"AlreadyExists",'
        b'"details":{"name":"taken","kind":"configmaps"},"code":409}\n',
    )
    stale = _configmap("taken")
    stale["metadata"] = {"name": "taken", "resourceVersion": "1"}
    _expect(
        client.put(f"{CMS}/taken", json=stale),
        409,
        _HEAD + b'"message":"Operation cannot be fulfilled on configmaps \\"taken\\": the object '
        b"has been modified; please apply your changes to the latest version and try again"
        b'","reason":"Conflict","details":{"name":"taken","kind":"configmaps"},"code":409}\n',
    )


def test_an_invalid_object_is_422_with_its_causes_html_escaped_as_go_does(
    client: httpx.Client,
) -> None:
    rule = (
        b"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
        b"'-' or '.', and must start and end with an alphanumeric character (e.g. "
        b"'example.com', regex used for validation is "
        b"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )
    value = b'Invalid value: \\"a\\u0026b\\u003c\\": ' + rule
    _expect(
        client.post(CMS, json=_configmap("a&b<")),
        422,
        _HEAD
        + b'"message":"ConfigMap \\"a\\u0026b\\u003c\\" is invalid: metadata.name: '
        + value
        + b'","reason":"Invalid","details":{"name":"a\\u0026b\\u003c","kind":"ConfigMap",'
        b'"causes":[{"reason":"FieldValueInvalid","message":"'
        + value
        + b'","field":"metadata.name"}]},"code":422}\n',
    )


def test_a_method_without_a_route_is_405_with_empty_details(client: httpx.Client) -> None:
    _expect(
        client.put(CMS, json=_configmap("x")),
        405,
        _HEAD + b'"message":"the server does not allow this method on the requested resource",'
        b'"reason":"MethodNotAllowed","details":{},"code":405}\n',
    )


def test_a_body_of_an_unknown_media_type_is_415_without_details(client: httpx.Client) -> None:
    _expect(
        client.post(CMS, content=b"{}", headers={"Content-Type": "text/plain"}),
        415,
        _HEAD + b'"message":"the body of the request was in an unknown format - accepted media '
        b"types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        b'","reason":"UnsupportedMediaType","code":415}\n',
    )


def test_a_patch_body_of_a_type_the_route_does_not_consume_is_go_restfuls_415(
    client: httpx.Client,
) -> None:
    client.post(CMS, json=_configmap("patched"))
    body = (
        _HEAD + b'"message":"415: Unsupported Media Type","reason":"UnsupportedMediaType",'
        b'"details":{},"code":415}\n'
    )
    for content_type in ("text/plain", "application/json"):
        headers = {"Content-Type": content_type}
        _expect(client.patch(f"{CMS}/patched", content=b"{}", headers=headers), 415, body)


def test_a_body_that_does_not_decode_is_400_without_details(client: httpx.Client) -> None:
    _expect(
        client.post(CMS, json=_configmap("x", data={"a": 1})),
        400,
        _HEAD + b'"message":"ConfigMap in version \\"v1\\" cannot be handled as a ConfigMap: '
        b"json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
        b'","reason":"BadRequest","code":400}\n',
    )


def test_a_body_that_is_not_json_is_400_in_go_scanner_words(client: httpx.Client) -> None:
    headers = {"Content-Type": "application/json"}
    _expect(
        client.post(CMS, content=b'{"apiVersion":"v1",', headers=headers),
        400,
        _HEAD + b'"message":"the object provided is unrecognized (must be of type ConfigMap): '
        b"couldn't get version/kind; json parse error: unexpected end of JSON input "
        b'({\\"apiVersion\\":\\"v1\\",)","reason":"BadRequest","code":400}\n',
    )
    _expect(
        client.put(f"{CMS}/x", content=b"nonsense", headers=headers),
        400,
        _HEAD + b'"message":"the object provided is unrecognized (must be of type ConfigMap): '
        b"couldn't get version/kind; json parse error: invalid character 'o' in literal null "
        b'(expecting \'u\') (6e6f6e73656e7365)","reason":"BadRequest","code":400}\n',
    )


def test_content_in_a_terminating_namespace_is_403_with_its_cause(
    client: httpx.Client,
) -> None:
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "closing", "finalizers": ["example.com/hold"]},
    }
    assert client.post("/api/v1/namespaces", json=namespace).status_code == 201
    assert client.delete("/api/v1/namespaces/closing").status_code == 200
    _expect(
        client.post("/api/v1/namespaces/closing/configmaps", json=_configmap("c")),
        403,
        _HEAD + b'"message":"configmaps \\"c\\" is forbidden: unable to create new content in '
        b'namespace closing because it is being terminated","reason":"Forbidden","details":'
        b'{"name":"c","kind":"configmaps","causes":[{"reason":"NamespaceTerminating",'
        b'"message":"namespace closing is being terminated","field":"metadata.namespace"}]},'
        b'"code":403}\n',
    )


def test_a_delete_answers_with_a_success_status_in_go_order(client: httpx.Client) -> None:
    created = client.post(CMS, json=_configmap("gone")).json()
    uid = created["metadata"]["uid"].encode()
    response = client.delete(f"{CMS}/gone")
    assert response.status_code == 200
    assert response.content == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success",'
        b'"details":{"name":"gone","kind":"configmaps","uid":"' + uid + b'"}}\n'
    )


def test_every_json_answer_of_the_serializer_ends_with_a_newline(client: httpx.Client) -> None:
    client.post(CMS, json=_configmap("nl"))
    table = "application/json;as=Table;v=v1;g=meta.k8s.io"
    for path, accept in [
        (f"{CMS}/nl", "application/json"),
        (CMS, "application/json"),
        (CMS, table),
        (f"{CMS}/nl", table),
        ("/api", "application/json"),
        ("/apis", "application/json"),
        ("/apis/apps", "application/json"),
        ("/apis/apps/v1", "application/json"),
        ("/api/v1", "application/json"),
        ("/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"),
    ]:
        response = client.get(path, headers={"Accept": accept})
        assert response.status_code == 200, (path, accept)
        assert response.content.endswith(b"}\n"), (path, accept)
        assert not response.content.endswith(b"\n\n"), (path, accept)
        orjson.loads(response.content)


def test_objects_lists_and_watch_events_escape_html_as_go_encoder_does(
    client: httpx.Client,
) -> None:
    client.post(CMS, json=_configmap("html", data={"u": "https://x?a=1&b=<2>\u2028"}))
    escaped = b'"u":"https://x?a=1\\u0026b=\\u003c2\\u003e\\u2028"'
    assert escaped in client.get(f"{CMS}/html").content
    assert escaped in client.get(CMS, params={"fieldSelector": "metadata.name=html"}).content
    params = {"watch": "true", "timeoutSeconds": "1", "fieldSelector": "metadata.name=html"}
    with client.stream("GET", CMS, params=params) as watch:
        assert escaped in next(watch.iter_bytes())
    assert client.get(f"{CMS}/html").json()["data"]["u"] == "https://x?a=1&b=<2>\u2028"


def test_version_is_indented_without_a_newline_as_write_raw_json_writes_it(
    client: httpx.Client,
) -> None:
    body = client.get("/version").content
    assert body.startswith(b'{\n  "major": "1",\n  "minor": "36",\n')
    assert body.endswith(b'"\n}')


def test_a_protobuf_or_yaml_status_has_no_json_newline_added(client: httpx.Client) -> None:
    proto = client.get(f"{CMS}/missing", headers={"Accept": "application/vnd.kubernetes.protobuf"})
    assert proto.status_code == 404
    assert proto.content.startswith(b"k8s\x00")
    yaml = client.get(f"{CMS}/missing", headers={"Accept": "application/yaml"})
    assert yaml.status_code == 404
    assert yaml.text.startswith("apiVersion: v1\n")
    assert yaml.text.endswith("reason: NotFound\nstatus: Failure\n")


# ----------------------------------------------------------------------- to_status, directly


def test_details_follow_what_the_go_constructor_sets() -> None:
    assert "details" not in to_status(BadRequest("bad"))
    assert "details" not in to_status(Expired("too old"))
    assert "details" not in to_status(Unavailable("down"))
    assert to_status(NotFound("the server could not find the requested resource"))["details"] == {}
    assert "details" not in to_status(NotFound("gone", details=False))
    assert to_status(TooManyRequests("busy", retry_after_seconds=2))["details"] == {
        "retryAfterSeconds": 2
    }
    assert to_status(Unavailable("later", retry_after_seconds=5))["details"] == {
        "retryAfterSeconds": 5
    }


def test_an_unexpected_exception_is_an_internal_error_with_its_message_as_cause() -> None:
    status = to_status(ValueError("boom"))
    assert list(status) == [
        "kind",
        "apiVersion",
        "metadata",
        "status",
        "message",
        "reason",
        "details",
        "code",
    ]
    assert status["message"] == "Internal error occurred: boom"
    assert status["details"] == {"causes": [{"message": "boom"}]}
    assert status["code"] == 500


def test_causes_keep_go_field_order_and_leave_empty_fields_out() -> None:
    status = to_status(NotFound("x", name="n", group="g", kind="k", causes=[Cause("T", "m", "f")]))
    assert list(status["details"]) == ["name", "group", "kind", "causes"]
    assert status["details"]["causes"] == [{"reason": "T", "message": "m", "field": "f"}]
    assert Cause("", "only").to_dict() == {"message": "only"}


@pytest.mark.parametrize("char", ["<", ">", "&", "\u2028", "\u2029"])
def test_the_status_encoder_escapes_as_go_encoding_json(char: str) -> None:
    from kstore.server.json_body import status_json

    body = status_json(to_status(BadRequest(f"a{char}b")))
    assert f"\\u{ord(char):04x}".encode() in body
    assert char.encode() not in body
    assert orjson.loads(body)["message"] == f"a{char}b"


# ------------------------------------------------------------ deprecated versions' Warning

_V1BETA1 = (
    '299 - "apps/v1beta1 Deployment is deprecated in v1.8+, unavailable in v1.16+; '
    'use apps/v1 Deployment"'
)
_V1BETA2 = (
    '299 - "apps/v1beta2 Deployment is deprecated in v1.9+, unavailable in v1.16+; '
    'use apps/v1 Deployment"'
)


def _deployment(api_version: str, name: str) -> dict[str, object]:
    labels = {"app": name}
    return {
        "apiVersion": api_version,
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def test_every_answer_of_a_deprecated_version_carries_its_warning(client: httpx.Client) -> None:
    base = "/apis/apps/v1beta1/namespaces/default/deployments"
    created = client.post(base, json=_deployment("apps/v1beta1", "old"))
    assert created.status_code == 201, created.text
    assert created.headers.get_list("warning") == [_V1BETA1]
    for response in (
        client.get(base),
        client.get(f"{base}/old"),
        client.get(f"{base}/missing"),
        client.put(base, json={}),
        client.get(f"{base}/old/status"),
    ):
        assert response.headers.get_list("warning") == [_V1BETA1], response.request.url
    v1beta2 = client.get("/apis/apps/v1beta2/namespaces/default/deployments/old")
    assert v1beta2.status_code == 200
    assert v1beta2.headers.get_list("warning") == [_V1BETA2]
    scale = client.get("/apis/apps/v1beta2/namespaces/default/deployments/old/scale")
    assert scale.headers.get_list("warning") == [
        '299 - "apps/v1beta2 Scale is deprecated in v1.9+, unavailable in v1.16+; '
        'use autoscaling/v1 Scale"'
    ]
    with client.stream("GET", base, params={"watch": "true", "timeoutSeconds": "1"}) as watch:
        assert watch.headers.get_list("warning") == [_V1BETA1]
    current = client.get("/apis/apps/v1/namespaces/default/deployments/old")
    assert current.status_code == 200
    assert "warning" not in current.headers
    assert client.delete(f"{base}/old").headers.get_list("warning") == [_V1BETA1]


def test_requests_to_deprecated_versions_are_counted_in_metrics(client: httpx.Client) -> None:
    client.get("/apis/apps/v1beta2/namespaces/default/deployments")
    client.get("/apis/apps/v1/namespaces/default/deployments")
    metrics = client.get("/metrics").text
    assert (
        'apiserver_requested_deprecated_apis{group="apps",removed_release="1.16",'
        'resource="deployments",subresource="",version="v1beta2"} 1\n'
    ) in metrics
    requested = [
        line
        for line in metrics.splitlines()
        if line.startswith("apiserver_requested_deprecated_apis{")
    ]
    assert requested and not [line for line in requested if 'version="v1"}' in line]


def _versioned_crd(group: str, v1: dict[str, object]) -> dict[str, object]:
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gizmos.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gizmos", "kind": "Gizmo"},
            "versions": [
                {"name": "v1", "served": True, "storage": False, "schema": schema, **v1},
                {"name": "v2", "served": True, "storage": True, "schema": schema},
                {"name": "v3alpha1", "served": True, "storage": False, "schema": schema},
            ],
        },
    }


def _crd_warnings(client: httpx.Client, group: str, version: str) -> list[str]:
    path = f"/apis/{group}/{version}/namespaces/default/gizmos"
    deadline = time.monotonic() + 10
    while (response := client.get(path)).status_code != 200:
        assert time.monotonic() < deadline, response.text
        time.sleep(0.05)
    return response.headers.get_list("warning")


@pytest.mark.parametrize(
    ("v1", "expected"),
    [
        ({"deprecated": True}, ['299 - "{g}/v1 Gizmo is deprecated; use {g}/v2 Gizmo"']),
        (
            {"deprecated": True, "deprecationWarning": "gizmos v1 go away soon"},
            ['299 - "gizmos v1 go away soon"'],
        ),
        ({}, []),
    ],
    ids=["default-words", "own-words", "not-deprecated"],
)
def test_a_deprecated_crd_version_warns_through_the_same_path(
    client: httpx.Client, v1: dict[str, object], expected: list[str]
) -> None:
    group = f"w{time.monotonic_ns()}.example.com"
    crd = _versioned_crd(group, v1)
    response = client.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
    assert response.status_code == 201, response.text
    assert _crd_warnings(client, group, "v1") == [e.format(g=group) for e in expected]
    assert _crd_warnings(client, group, "v2") == []


# ------------------------------------------------------------------------ pretty printing

_PRETTY_404 = (
    b'{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n  "status": "Failure",\n'
    b'  "message": "configmaps \\"missing\\" not found",\n  "reason": "NotFound",\n'
    b'  "details": {\n    "name": "missing",\n    "kind": "configmaps"\n  },\n  "code": 404\n}'
)


def test_curl_and_pretty_true_get_json_indented_as_marshal_indent_writes_it(
    client: httpx.Client,
) -> None:
    curl = {"User-Agent": "curl/8.5.0"}
    _expect(client.get(f"{CMS}/missing", headers=curl), 404, _PRETTY_404)
    _expect(client.get(f"{CMS}/missing", params={"pretty": "true"}), 404, _PRETTY_404)
    _expect(
        client.get(f"{CMS}/missing", headers={"User-Agent": "Mozilla/5.0 (X11)"}), 404, _PRETTY_404
    )
    # An explicit pretty=false wins over the user agent; other agents get the compact form.
    compact = client.get(f"{CMS}/missing", params={"pretty": "false"}, headers=curl)
    assert compact.content.startswith(b'{"kind":"Status",') and compact.content.endswith(b"}\n")
    client.post(CMS, json=_configmap("shown", data={"url": "https://x?a=1&b=<2>"}))
    shown = client.get(f"{CMS}/shown", headers=curl)
    assert shown.status_code == 200
    assert shown.content.startswith(b'{\n  "')
    assert b'"url": "https://x?a=1\\u0026b=\\u003c2\\u003e"' in shown.content
    assert shown.content.endswith(b"\n}")
    listed = client.get(CMS, params={"pretty": "1"})
    assert listed.content.startswith(b'{\n  "kind": "ConfigMapList",\n  "apiVersion": "v1",\n')
    assert int(listed.headers["content-length"]) == len(listed.content)


def test_watch_streams_and_openapi_are_never_pretty(client: httpx.Client) -> None:
    curl = {"User-Agent": "curl/8.5.0"}
    client.post(CMS, json=_configmap("watched"))
    params = {"watch": "true", "timeoutSeconds": "1", "fieldSelector": "metadata.name=watched"}
    with client.stream("GET", CMS, params=params, headers=curl) as watch:
        first = next(watch.iter_lines())
    assert first.startswith('{"type":"ADDED","object":{')
    assert client.get("/openapi/v3", headers=curl).content.startswith(b'{"paths":')
