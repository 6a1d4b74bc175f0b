"""ConfigMap, Secret, Namespace and Event validation: Kubernetes' rules, paths and messages."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from kstore.api.kinds.core import default_namespace, default_secret
from kstore.api.validation.core import (
    secret_data,
    validate_config_map,
    validate_config_map_update,
    validate_event,
    validate_namespace,
    validate_namespace_update,
    validate_secret,
    validate_secret_update,
)
from kstore.errors import Cause
from tests.api.test_validation_names import CONFIG_KEY, DNS_LABEL, DNS_SUBDOMAIN, NAME_PART

MIB = 1024 * 1024


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _cm(**fields: Any) -> dict[str, Any]:
    cm: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "app-config", "namespace": "default", "resourceVersion": "5"},
    }
    cm.update(fields)
    return cm


# ---------------------------------------------------------------------------- ConfigMap


def test_a_realistic_config_map_is_valid() -> None:
    cm = _cm(
        data={"app.properties": "a=1\nb=2\n", "LOG_LEVEL": "debug"},
        binaryData={"logo.png": _b64(b"\x89PNG")},
    )
    assert validate_config_map(cm) == []


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"data": {"a/b": "x"}},
            [f'data[a/b]: Invalid value: "a/b": {CONFIG_KEY}'],
        ),
        (
            {"binaryData": {"..": _b64(b"x")}},
            ["binaryData[..]: Invalid value: \"..\": must not be '..'"],
        ),
        (
            {"data": {"k": "x"}, "binaryData": {"k": _b64(b"y")}},
            ['data[k]: Invalid value: "k": duplicate of key present in binaryData'],
        ),
    ],
)
def test_config_map_keys(fields: dict[str, Any], expected: list[str]) -> None:
    assert _rendered(validate_config_map(_cm(**fields))) == expected


def test_config_map_data_and_binary_data_share_one_mebibyte() -> None:
    half = MIB // 2
    at_limit = _cm(data={"a": "x" * half}, binaryData={"b": _b64(b"y" * half)})
    assert validate_config_map(at_limit) == []
    over = _cm(data={"a": "x" * half}, binaryData={"b": _b64(b"y" * (half + 1))})
    causes = validate_config_map(over)
    # Kubernetes reports the whole object on field.NewPath(""), printed "[]".
    assert _rendered(causes) == ["[]: Too long: may not be more than 1048576 bytes"]
    assert causes[0].field == "[]"
    assert causes[0].type == "FieldValueTooLong"


def test_config_map_name_must_be_a_dns_subdomain() -> None:
    cm = _cm()
    cm["metadata"]["name"] = "App_Config"
    assert _rendered(validate_config_map(cm)) == [
        f'metadata.name: Invalid value: "App_Config": {DNS_SUBDOMAIN}'
    ]


def test_immutable_config_maps_stay_as_they_are() -> None:
    old = _cm(immutable=True, data={"k": "v"})
    same = copy.deepcopy(old)
    assert validate_config_map_update(same, old) == []
    changed = _cm(data={"k": "w"}, binaryData={"b": _b64(b"x")})
    assert _rendered(validate_config_map_update(changed, old)) == [
        "immutable: Forbidden: field is immutable when `immutable` is set",
        "data: Forbidden: field is immutable when `immutable` is set",
        "binaryData: Forbidden: field is immutable when `immutable` is set",
    ]


def test_a_mutable_config_map_may_become_immutable() -> None:
    old = _cm(data={"k": "v"})
    new = _cm(data={"k": "w"}, immutable=True)
    assert validate_config_map_update(new, old) == []


# ---------------------------------------------------------------------------- Secret


def _secret(kind: str = "", **fields: Any) -> dict[str, Any]:
    secret: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "creds", "namespace": "default", "resourceVersion": "3"},
    }
    if kind:
        secret["type"] = kind
    secret.update(fields)
    default_secret(secret)
    return secret


def test_a_realistic_secret_is_valid() -> None:
    secret = _secret(data={"password": _b64(b"s3cr3t")}, stringData={"user": "admin"})
    assert secret["type"] == "Opaque"
    assert validate_secret(secret) == []
    assert secret_data(secret) == {"password": b"s3cr3t", "user": b"admin"}


def test_string_data_is_merged_over_data_before_the_checks() -> None:
    secret = _secret(data={"k": _b64(b"old")}, stringData={"k": "new", "bad key": "x"})
    assert secret_data(secret) == {"k": b"new", "bad key": b"x"}
    assert _rendered(validate_secret(secret)) == [
        f'data[bad key]: Invalid value: "bad key": {CONFIG_KEY}'
    ]


def test_secret_data_is_measured_decoded() -> None:
    # The base64 text of 1 MiB is larger than 1 MiB; the decoded bytes are exactly at the limit.
    assert validate_secret(_secret(data={"blob": _b64(b"\0" * MIB)})) == []
    over = _secret(data={"blob": _b64(b"\0" * MIB)}, stringData={"x": "y"})
    assert _rendered(validate_secret(over)) == [
        "data: Too long: may not be more than 1048576 bytes"
    ]


@pytest.mark.parametrize(
    ("kind", "fields", "expected"),
    [
        ("kubernetes.io/tls", {"data": {"tls.crt": _b64(b"c"), "tls.key": _b64(b"k")}}, []),
        (
            "kubernetes.io/tls",
            {"data": {"tls.crt": _b64(b"c")}},
            ["data[tls.key]: Required value"],
        ),
        (
            "kubernetes.io/tls",
            {},
            ["data[tls.crt]: Required value", "data[tls.key]: Required value"],
        ),
        (
            "kubernetes.io/dockerconfigjson",
            {"data": {".dockerconfigjson": _b64(b'{"auths":{}}')}},
            [],
        ),
        (
            "kubernetes.io/dockerconfigjson",
            {},
            ["data[.dockerconfigjson]: Required value"],
        ),
        (
            "kubernetes.io/dockerconfigjson",
            {"stringData": {".dockerconfigjson": "not json"}},
            [
                'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid '
                "character 'o' in literal null (expecting 'u')"
            ],
        ),
        (
            "kubernetes.io/dockercfg",
            {"stringData": {".dockercfg": "[]"}},
            [
                'data[.dockercfg]: Invalid value: "<secret contents redacted>": json: cannot '
                "unmarshal array into Go value of type map[string]interface {}"
            ],
        ),
        ("kubernetes.io/basic-auth", {"stringData": {"username": ""}}, []),
        (
            "kubernetes.io/basic-auth",
            {},
            ["data[username]: Required value", "data[password]: Required value"],
        ),
        ("kubernetes.io/ssh-auth", {"stringData": {"ssh-privatekey": "k"}}, []),
        (
            "kubernetes.io/ssh-auth",
            {"stringData": {"ssh-privatekey": ""}},
            ["data[ssh-privatekey]: Required value"],
        ),
        (
            "kubernetes.io/service-account-token",
            {},
            ["metadata.annotations[kubernetes.io/service-account.name]: Required value"],
        ),
        ("example.com/custom", {"data": {"anything": _b64(b"x")}}, []),
    ],
)
def test_secret_types_require_their_keys(
    kind: str, fields: dict[str, Any], expected: list[str]
) -> None:
    assert _rendered(validate_secret(_secret(kind, **fields))) == expected


def test_service_account_token_secrets_name_their_account() -> None:
    secret = _secret("kubernetes.io/service-account-token")
    secret["metadata"]["annotations"] = {"kubernetes.io/service-account.name": "default"}
    assert validate_secret(secret) == []


def test_secret_type_is_immutable() -> None:
    old = _secret("kubernetes.io/tls", stringData={"tls.crt": "c", "tls.key": "k"})
    new = copy.deepcopy(old)
    new["type"] = "Opaque"
    assert _rendered(validate_secret_update(new, old)) == [
        'type: Invalid value: "Opaque": field is immutable'
    ]


def test_immutable_secrets_keep_their_data() -> None:
    old = _secret(immutable=True, data={"k": _b64(b"v")})
    assert validate_secret_update(copy.deepcopy(old), old) == []
    # stringData that decodes to the same bytes is no change at all.
    same_bytes = _secret(immutable=True, stringData={"k": "v"})
    assert validate_secret_update(same_bytes, old) == []
    changed = _secret(data={"k": _b64(b"w")})
    assert _rendered(validate_secret_update(changed, old)) == [
        "immutable: Forbidden: field is immutable when `immutable` is set",
        "data: Forbidden: field is immutable when `immutable` is set",
    ]


# ---------------------------------------------------------------------------- Namespace


def _namespace(name: str, **fields: Any) -> dict[str, Any]:
    ns: dict[str, Any] = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    ns.update(fields)
    default_namespace(ns)
    return ns


def test_namespace_names_are_dns_labels() -> None:
    assert validate_namespace(_namespace("team-a")) == []
    assert _rendered(validate_namespace(_namespace("team.a"))) == [
        'metadata.name: Invalid value: "team.a": must not contain dots'
    ]
    assert _rendered(validate_namespace(_namespace("Team"))) == [
        f'metadata.name: Invalid value: "Team": {DNS_LABEL}'
    ]


def test_namespaces_are_cluster_scoped() -> None:
    ns = _namespace("team-a")
    ns["metadata"]["namespace"] = "default"
    assert _rendered(validate_namespace(ns)) == [
        "metadata.namespace: Forbidden: not allowed on this type"
    ]


def test_namespace_spec_finalizers() -> None:
    ns = _namespace("team-a", spec={"finalizers": ["kubernetes", "custom", "x/-"]})
    assert _rendered(validate_namespace(ns)) == [
        'spec.finalizers: Invalid value: "custom": name is neither a standard finalizer name '
        "nor is it fully qualified",
        f'spec.finalizers: Invalid value: "x/-": {NAME_PART}',
    ]


def test_namespace_update_checks_both_the_object_and_the_change() -> None:
    old = _namespace("team-a")
    old["metadata"]["resourceVersion"] = "1"
    renamed = copy.deepcopy(old)
    renamed["metadata"]["name"] = "team-b"
    assert _rendered(validate_namespace_update(renamed, old)) == [
        'metadata.name: Invalid value: "team-b": field is immutable'
    ]


# ---------------------------------------------------------------------------- Event


def _event(namespace: str = "default", **fields: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web.17a2b", "namespace": namespace},
        "involvedObject": {"kind": "Pod", "namespace": namespace, "name": "web"},
        "reason": "Started",
        "message": "Started container web",
        "source": {"component": "kubelet"},
        "type": "Normal",
    }
    event.update(fields)
    return event


def test_legacy_events_are_valid_in_their_objects_namespace() -> None:
    assert validate_event(_event()) == []
    node_event = _event(involvedObject={"kind": "Node", "name": "n1"})
    assert validate_event(node_event) == []


def test_event_namespace_must_match_the_involved_object() -> None:
    event = _event(involvedObject={"kind": "Pod", "namespace": "other", "name": "web"})
    assert _rendered(validate_event(event)) == [
        'involvedObject.namespace: Invalid value: "other": does not match event.namespace'
    ]
    cluster_object = _event("team-a", involvedObject={"kind": "Node", "name": "n1"})
    assert _rendered(validate_event(cluster_object)) == [
        'involvedObject.namespace: Invalid value: "": does not match event.namespace'
    ]


def test_events_with_event_time_need_reporting_fields() -> None:
    event = _event(eventTime="2024-05-01T10:00:00.000000Z", action="", reportingComponent="")
    event.pop("reason")
    assert _rendered(validate_event(event)) == [
        "reportingController: Required value",
        'reportingController: Invalid value: "": name part must be non-empty',
        f'reportingController: Invalid value: "": {NAME_PART}',
        "reportingInstance: Required value",
        "action: Required value",
        "reason: Required value",
    ]
    good = _event(
        eventTime="2024-05-01T10:00:00.000000Z",
        action="Started",
        reportingComponent="kubelet",
        reportingInstance="node-1",
    )
    assert validate_event(good) == []
    long_message = dict(good, message="m" * 1025, reason="r" * 129)
    assert _rendered(validate_event(long_message)) == [
        'reason: Invalid value: "": can have at most 128 characters',
        'message: Invalid value: "": can have at most 1024 characters',
    ]


def test_event_namespace_must_be_a_dns_subdomain() -> None:
    event = _event("Bad_NS")
    assert _rendered(validate_event(event)) == [
        f'namespace: Invalid value: "Bad_NS": {DNS_SUBDOMAIN}'
    ]
