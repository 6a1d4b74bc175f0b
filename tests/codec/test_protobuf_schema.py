"""Structural schemas of the built-in kinds, read from the protobuf descriptors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kstore.api.gvk import GroupVersionKind, gvk_of
from kstore.api.proto_schema import message_for_gvk, schema_for_gvk
from kstore.api.schema import FieldSchema, SchemaType
from kstore.codec.strict import unknown_fields
from tests.fixtures_path import fixture_files

POD = GroupVersionKind("", "v1", "Pod")
DEPLOYMENT_V1 = GroupVersionKind("apps", "v1", "Deployment")
DEPLOYMENT_V1BETA1 = GroupVersionKind("apps", "v1beta1", "Deployment")


def _at(schema: FieldSchema, *path: str) -> FieldSchema:
    node = schema
    for name in path:
        if name == "[]":
            assert node.items is not None
            node = node.items
        else:
            assert node.type is SchemaType.OBJECT, f"{name}: parent is {node.type}"
            node = node.fields[name]
    return node


def _pod() -> FieldSchema:
    schema = schema_for_gvk(POD)
    assert schema is not None
    return schema


def test_pod_schema_has_type_meta_and_top_level_fields() -> None:
    assert set(_pod().fields) == {"apiVersion", "kind", "metadata", "spec", "status"}
    assert _at(_pod(), "kind").type is SchemaType.SCALAR


def test_pod_schema_maps_lists_and_scalar_forms() -> None:
    pod = _pod()
    assert _at(pod, "metadata", "labels").type is SchemaType.MAP
    assert _at(pod, "metadata", "labels", "[]").type is SchemaType.SCALAR
    assert _at(pod, "metadata", "creationTimestamp").type is SchemaType.SCALAR
    assert _at(pod, "spec", "containers").type is SchemaType.LIST
    assert _at(pod, "spec", "containers", "[]", "resources", "limits", "[]").type is (
        SchemaType.SCALAR
    )
    assert _at(pod, "spec", "containers", "[]", "ports", "[]", "containerPort").type is (
        SchemaType.SCALAR
    )
    http_port = _at(pod, "spec", "containers", "[]", "livenessProbe", "httpGet", "port")
    assert http_port.type is SchemaType.SCALAR  # IntOrString
    assert _at(pod, "metadata", "managedFields", "[]", "fieldsV1").type is SchemaType.ANY


def test_pod_schema_merges_inline_messages_into_their_parent() -> None:
    volume = _at(_pod(), "spec", "volumes", "[]")
    assert "configMap" in volume.fields and "name" in volume.fields
    assert "volumeSource" not in volume.fields
    probe = _at(_pod(), "spec", "containers", "[]", "livenessProbe")
    assert "httpGet" in probe.fields and "handler" not in probe.fields
    env_ref = _at(_pod(), "spec", "containers", "[]", "env", "[]", "valueFrom", "secretKeyRef")
    assert {"name", "key", "optional"} <= set(env_ref.fields)


def test_deployment_schemas_differ_where_the_versions_differ() -> None:
    v1 = schema_for_gvk(DEPLOYMENT_V1)
    v1beta1 = schema_for_gvk(DEPLOYMENT_V1BETA1)
    assert v1 is not None and v1beta1 is not None
    assert "rollbackTo" in _at(v1beta1, "spec").fields
    assert "rollbackTo" not in _at(v1, "spec").fields
    assert _at(v1, "spec", "strategy", "rollingUpdate", "maxSurge").type is SchemaType.SCALAR
    container = _at(v1, "spec", "template", "spec", "containers", "[]")
    assert container is _at(_pod(), "spec", "containers", "[]")
    assert _at(v1, "spec", "selector", "matchLabels").type is SchemaType.MAP


def test_schemas_are_cached_and_list_items_are_kinds() -> None:
    assert schema_for_gvk(POD) is schema_for_gvk(POD)
    pod_list = schema_for_gvk(GroupVersionKind("", "v1", "PodList"))
    assert pod_list is not None
    assert _at(pod_list, "items", "[]") is _pod()


def test_kinds_without_a_message_have_no_schema() -> None:
    assert schema_for_gvk(GroupVersionKind("example.com", "v1", "Widget")) is None
    assert schema_for_gvk(GroupVersionKind("apps", "v1", "Pod")) is None
    assert message_for_gvk(GroupVersionKind("meta.k8s.io", "v1", "Table")) is None


def test_meta_kinds_resolve_where_kubernetes_registers_them() -> None:
    assert message_for_gvk(GroupVersionKind("", "v1", "Status")) is not None
    assert message_for_gvk(GroupVersionKind("apps", "v1", "Status")) is None
    delete = message_for_gvk(GroupVersionKind("apps", "v1", "DeleteOptions"))
    assert delete is not None
    assert delete.full_name == "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions"


@pytest.mark.fixtures
@pytest.mark.parametrize("path", fixture_files(".json"), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_fixture_field_is_known_to_its_schema(path: Path) -> None:
    obj = json.loads(path.read_bytes())
    schema = schema_for_gvk(gvk_of(obj))
    assert schema is not None
    assert unknown_fields(obj, schema, prune=False) == []


def test_an_unknown_field_is_found_by_path() -> None:
    obj = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "a", "foo": 1}]}}
    assert unknown_fields(obj, _pod(), prune=False) == ["spec.containers[0].foo"]


def test_meta_kind_lists_agree_with_the_scheme_registration() -> None:
    from kstore.api.kinds import meta
    from kstore.api.proto_schema import EVERY_GROUP_VERSION_KINDS, UNVERSIONED_KINDS

    assert frozenset(("WatchEvent", *meta.OPTION_KINDS)) == EVERY_GROUP_VERSION_KINDS
    assert frozenset(meta.UNVERSIONED_KINDS) == UNVERSIONED_KINDS
