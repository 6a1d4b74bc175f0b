"""The merge facts of the built-in kinds (kstore.api.patch_meta): every table entry names a real
field, and the facts strategic merge patch and apply depend on read as Kubernetes declares them."""

from __future__ import annotations

import pytest

from kstore.api.gvk import GroupVersionKind
from kstore.api.patch_meta import (
    FieldMeta,
    ListType,
    NodeKind,
    TypeNode,
    atomic_struct_names,
    has_patch_meta,
    table_entries,
    type_for_gvk,
)
from kstore.api.proto_schema import message_type

POD = GroupVersionKind("", "v1", "Pod")
DEPLOYMENT_VERSIONS = ("v1", "v1beta1", "v1beta2")


def _walk(node: TypeNode, *path: str) -> TypeNode:
    for name in path:
        if node.kind is NodeKind.LIST:
            assert node.item is not None
            node = node.item
        meta = node.field(name)
        assert meta is not None, name
        node = meta.type
    return node


def _field(gvk: GroupVersionKind, *path: str) -> FieldMeta:
    root = type_for_gvk(gvk)
    assert root is not None
    parent = _walk(root, *path[:-1])
    if parent.kind is NodeKind.LIST:
        assert parent.item is not None
        parent = parent.item
    meta = parent.field(path[-1])
    assert meta is not None
    return meta


@pytest.mark.parametrize(("message", "field"), sorted(table_entries()))
def test_every_table_entry_names_a_field_of_the_descriptors(message: str, field: str) -> None:
    desc = message_type(message)
    names = {f.name for f in desc.fields}
    assert field in names


@pytest.mark.parametrize("message", sorted(atomic_struct_names()))
def test_every_atomic_struct_is_a_known_message(message: str) -> None:
    assert message_type(message).full_name == message


def test_containers_merge_by_name_for_patch_and_apply() -> None:
    meta = _field(POD, "spec", "containers")
    assert meta.patch_strategies == ("merge",)
    assert meta.patch_merge_key == "name"
    assert meta.type.list_type is ListType.MAP
    assert meta.type.list_keys == ("name",)


def test_container_ports_merge_by_port_and_apply_keys_by_port_and_protocol() -> None:
    meta = _field(POD, "spec", "containers", "ports")
    assert meta.patch_merge_key == "containerPort"
    assert meta.type.list_keys == ("containerPort", "protocol")
    assert meta.type.key_defaults == {"protocol": "TCP"}


@pytest.mark.parametrize(
    ("path", "key"),
    [
        (("spec", "containers", "env"), "name"),
        (("spec", "containers", "volumeMounts"), "mountPath"),
        (("spec", "volumes"), "name"),
        (("spec", "initContainers"), "name"),
        (("status", "conditions"), "type"),
        (("metadata", "ownerReferences"), "uid"),
    ],
)
def test_keyed_lists_of_pods(path: tuple[str, ...], key: str) -> None:
    meta = _field(POD, *path)
    assert "merge" in meta.patch_strategies
    assert meta.patch_merge_key == key


def test_volumes_carry_retain_keys() -> None:
    assert _field(POD, "spec", "volumes").patch_strategies == ("merge", "retainKeys")


def test_tolerations_are_replaced_and_atomic() -> None:
    meta = _field(POD, "spec", "tolerations")
    assert meta.patch_strategies == ()
    assert meta.type.list_type is ListType.ATOMIC


def test_finalizers_are_a_merged_set() -> None:
    meta = _field(POD, "metadata", "finalizers")
    assert meta.patch_strategies == ("merge",)
    assert meta.patch_merge_key == ""
    assert meta.type.list_type is ListType.SET


def test_host_ips_merge_for_patch_but_are_atomic_for_apply() -> None:
    meta = _field(POD, "status", "hostIPs")
    assert meta.patch_merge_key == "ip"
    assert meta.type.list_type is ListType.ATOMIC


def test_node_selector_and_label_selectors_are_atomic() -> None:
    assert _field(POD, "spec", "nodeSelector").type.atomic
    deployment = GroupVersionKind("apps", "v1", "Deployment")
    assert _field(deployment, "spec", "selector").type.atomic
    assert not _field(POD, "metadata", "labels").type.atomic


@pytest.mark.parametrize("version", DEPLOYMENT_VERSIONS)
def test_deployment_strategy_retains_keys_in_every_version(version: str) -> None:
    gvk = GroupVersionKind("apps", version, "Deployment")
    assert _field(gvk, "spec", "strategy").patch_strategies == ("retainKeys",)
    assert _field(gvk, "status", "conditions").patch_merge_key == "type"


def test_service_ports_key_by_port_and_protocol() -> None:
    meta = _field(GroupVersionKind("", "v1", "Service"), "spec", "ports")
    assert meta.patch_merge_key == "port"
    assert meta.type.list_keys == ("port", "protocol")


def test_kinds_carry_api_version_and_kind_fields() -> None:
    root = type_for_gvk(GroupVersionKind("", "v1", "ConfigMap"))
    assert root is not None
    assert {"apiVersion", "kind", "metadata", "data", "binaryData"} <= set(root.fields)
    assert root.fields["data"].type.kind is NodeKind.MAP


def test_custom_kinds_have_no_patch_metadata() -> None:
    gvk = GroupVersionKind("example.com", "v1", "Widget")
    assert type_for_gvk(gvk) is None
    assert not has_patch_meta(gvk)
    assert has_patch_meta(POD)


def test_type_trees_are_shared_per_kind() -> None:
    assert type_for_gvk(POD) is type_for_gvk(GroupVersionKind("", "v1", "Pod"))
