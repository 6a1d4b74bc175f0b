"""How the fields of the built-in kinds merge: the facts strategic merge patch and server-side
apply need, as one type tree per kind and version.

Kubernetes keeps these facts in the Go struct tags and markers of ``k8s.io/api`` and
``k8s.io/apimachinery/pkg/apis/meta/v1`` (``patchStrategy``/``patchMergeKey`` for strategic
merge patch; ``+listType``, ``+listMapKey``, ``+mapType``, ``+structType`` for server-side apply).
The table below lists every such fact that differs from the defaults, for the Go types kstore
has protobuf descriptors of; the shape of each type (its fields, which are lists or maps, the
message of each element) comes from those descriptors, the same source as the wire codec.

Defaults, as Kubernetes applies them:

- strategic merge patch: a list is replaced unless its field says ``patchStrategy:"merge"``;
  maps and structs are merged key by key;
- server-side apply: a list is ``atomic`` unless ``+listType`` says ``set`` or ``map`` (or,
  without ``+listType``, ``patchStrategy:"merge"`` makes it a map keyed by the merge key, or a
  set without one, as kube-openapi's schema conversion does); maps and structs are granular
  unless marked atomic.

Invariants: :func:`type_for_gvk` returns the same shared, read-only tree for the same GVK; every
(type, field) the table names exists in the descriptors (a test checks it); a type node never
changes after the tree is built.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from kstore.api.gvk import GroupVersionKind
from kstore.api.proto_schema import (
    META_V1_PACKAGE,
    JsonKind,
    field_inline,
    field_nullable,
    field_omitempty,
    json_kind,
    kind_messages,
    message_for_gvk,
)

__all__ = [
    "DEDUCED",
    "UNTYPED",
    "FieldMeta",
    "ListType",
    "NodeKind",
    "TypeNode",
    "atomic_struct_names",
    "has_patch_meta",
    "table_entries",
    "type_for_gvk",
    "zero_object",
]


class NodeKind(Enum):
    SCALAR = "scalar"
    #: A Go struct: named fields (``fields``); unknown names are not part of the type.
    STRUCT = "struct"
    #: A Go map: any key, every value of type ``item``.
    MAP = "map"
    LIST = "list"
    #: No schema: maps granular (values deduced too), lists atomic, scalars leaves.
    DEDUCED = "deduced"
    #: No schema and always a leaf (RawExtension, FieldsV1).
    UNTYPED = "untyped"


class ListType(Enum):
    ATOMIC = "atomic"
    SET = "set"
    MAP = "map"


@dataclass(frozen=True, slots=True, eq=False)
class FieldMeta:
    """One field of a struct: its type and its strategic-merge-patch tags.

    ``patch_strategies`` is the tag split on commas (``("merge", "retainKeys")``), empty when the
    field has no tag; ``patch_merge_key`` is the element key of a merged list of objects.
    """

    type: TypeNode
    patch_strategies: tuple[str, ...] = ()
    patch_merge_key: str = ""


@dataclass(frozen=True, slots=True, eq=False)
class TypeNode:
    """A node of a kind's type tree.

    STRUCT nodes have ``fields`` (filled once, after construction for recursive types); MAP and
    LIST nodes have ``item``; LIST nodes have ``list_type`` and, for ``ListType.MAP``, the
    ``list_keys`` identifying an element and ``key_defaults`` (the ``+default`` of a key field
    an element may omit). ``atomic`` marks a STRUCT or MAP that is replaced as a whole by apply.
    """

    kind: NodeKind
    name: str = ""
    fields: Mapping[str, FieldMeta] = field(default_factory=dict)
    item: TypeNode | None = None
    list_type: ListType = ListType.ATOMIC
    list_keys: tuple[str, ...] = ()
    key_defaults: Mapping[str, Any] = field(default_factory=dict)
    atomic: bool = False

    def field(self, name: str) -> FieldMeta | None:
        """The field ``name`` of a STRUCT, the element type of a MAP or DEDUCED node."""
        if self.kind is NodeKind.STRUCT:
            return self.fields.get(name)
        if self.kind is NodeKind.MAP:
            assert self.item is not None
            return FieldMeta(self.item)
        if self.kind is NodeKind.DEDUCED:
            return _DEDUCED_FIELD
        return None


SCALAR = TypeNode(NodeKind.SCALAR, name="scalar")
UNTYPED = TypeNode(NodeKind.UNTYPED, name="untyped")
DEDUCED = TypeNode(NodeKind.DEDUCED, name="deduced")
_DEDUCED_FIELD = FieldMeta(DEDUCED)


@dataclass(frozen=True, slots=True)
class _Tags:
    patch_strategy: str = ""
    patch_merge_key: str = ""
    list_type: str = ""
    list_keys: tuple[str, ...] = ()
    map_type: str = ""


def _merge(key: str, *list_keys: str, retain_keys: bool = False) -> _Tags:
    """``patchStrategy:"merge"`` by ``key``, ``+listType=map`` by ``list_keys`` (default: key)."""
    strategy = "merge,retainKeys" if retain_keys else "merge"
    return _Tags(strategy, key, "map", list_keys or (key,))


_MERGE_SET = _Tags("merge", "", "set")
_SET = _Tags(list_type="set")
_ATOMIC_MAP = _Tags(map_type="atomic")
_RETAIN_KEYS = _Tags(patch_strategy="retainKeys")


def _map_list(*keys: str) -> _Tags:
    return _Tags(list_type="map", list_keys=keys)


# Go type -> JSON field -> tags, per Go package; from kubernetes/api (core/v1, apps/v1,
# apps/v1beta1, apps/v1beta2, batch/v1, coordination/v1, policy/v1) and apimachinery meta/v1
# types.go.
_CONTAINER = {
    "ports": _merge("containerPort", "containerPort", "protocol"),
    "env": _merge("name"),
    "volumeMounts": _merge("mountPath"),
    "volumeDevices": _merge("devicePath"),
}
_CONDITIONS = {"conditions": _merge("type")}
_CORE_V1: dict[str, dict[str, _Tags]] = {
    "PersistentVolumeClaimStatus": _CONDITIONS,
    "PodVolumeHealth": {"healthConditions": _merge("status", "status", "reason")},
    "VolumeHealthStatus": {"healthConditions": _merge("status", "status", "reason")},
    "VolumeMount": {"bindMountOptions": _SET},
    "ResourceRequirements": {"claims": _map_list("name")},
    "Container": _CONTAINER,
    "EphemeralContainerCommon": _CONTAINER,
    "ContainerStatus": {
        "volumeMounts": _merge("mountPath"),
        "allocatedResourcesStatus": _merge("name"),
    },
    "ResourceStatus": {"resources": _map_list("resourceID")},
    "ContainerRestartRuleOnExitCodes": {"values": _SET},
    "PodSpec": {
        "volumes": _merge("name", retain_keys=True),
        "initContainers": _merge("name"),
        "containers": _merge("name"),
        "ephemeralContainers": _merge("name"),
        "nodeSelector": _ATOMIC_MAP,
        "imagePullSecrets": _merge("name"),
        "hostAliases": _merge("ip"),
        "topologySpreadConstraints": _merge("topologyKey", "topologyKey", "whenUnsatisfiable"),
        "schedulingGates": _merge("name"),
        "resourceClaims": _merge("name", retain_keys=True),
        "evictionResponders": _merge("name"),
    },
    "PodStatus": {
        "conditions": _merge("type"),
        # Merged by ip for strategic merge patch, yet atomic for apply.
        "hostIPs": _Tags("merge", "ip", "atomic"),
        "podIPs": _merge("ip"),
        "resourceClaimStatuses": _merge("name", retain_keys=True),
        "nodeAllocatableResourceClaimStatuses": _merge("resourceClaimName"),
        "volumeHealth": _map_list("name"),
    },
    "ServiceSpec": {
        "ports": _merge("port", "port", "protocol"),
        "selector": _ATOMIC_MAP,
    },
    "ServiceStatus": _CONDITIONS,
    "ServiceAccount": {"secrets": _merge("name")},
    "NamespaceStatus": _CONDITIONS,
    "NodeSpec": {"podCIDRs": _MERGE_SET},
    "NodeStatus": {"conditions": _merge("type"), "addresses": _merge("type")},
    "ReplicationControllerSpec": {"selector": _ATOMIC_MAP},
    "ReplicationControllerStatus": _CONDITIONS,
    "NodeAllocatableResourceClaimStatus": {
        "containers": _SET,
        "mapping": _merge("name"),
        "overhead": _merge("name"),
    },
}
_APPS: dict[str, dict[str, _Tags]] = {
    "DeploymentSpec": {"strategy": _RETAIN_KEYS},
    "DeploymentStatus": _CONDITIONS,
}
_BATCH_V1: dict[str, dict[str, _Tags]] = {
    # Merged by type for strategic merge patch, yet atomic for apply.
    "JobStatus": {"conditions": _Tags("merge", "type", "atomic")},
    "PodFailurePolicyOnExitCodesRequirement": {"values": _SET},
    "UncountedTerminatedPods": {"succeeded": _SET, "failed": _SET},
    "JobSchedulingConfiguration": {"resourceClaims": _merge("name")},
}
# Kinds kstore has in apps/v1 only (their beta messages are not in the descriptors).
_APPS_V1: dict[str, dict[str, _Tags]] = {
    **_APPS,
    "DaemonSetStatus": _CONDITIONS,
    "ReplicaSetStatus": _CONDITIONS,
    "StatefulSetStatus": _CONDITIONS,
}
_META_V1: dict[str, dict[str, _Tags]] = {
    "ObjectMeta": {"ownerReferences": _merge("uid"), "finalizers": _MERGE_SET},
}

# Go types marked ``+structType=atomic``.
_ATOMIC_STRUCTS: dict[str, frozenset[str]] = {
    "k8s.io.api.core.v1": frozenset(
        (
            "FileKeySelector",
            "ObjectFieldSelector",
            "ResourceFieldSelector",
            "ConfigMapKeySelector",
            "SecretKeySelector",
            "NodeSelector",
            "NodeSelectorTerm",
            "EvictionResponder",
            "ObjectReference",
            "LocalObjectReference",
            "TypedLocalObjectReference",
            "SecretReference",
            "TopologySelectorTerm",
        )
    ),
    "k8s.io.api.networking.v1": frozenset(("ServiceBackendPort",)),
    META_V1_PACKAGE: frozenset(("OwnerReference", "LabelSelector")),
}

# ``+default`` of list-map key fields: an element that omits the key has this value for it.
_KEY_DEFAULTS: dict[str, dict[str, Any]] = {
    "k8s.io.api.core.v1.ContainerPort": {"protocol": "TCP"},
    "k8s.io.api.core.v1.ServicePort": {"protocol": "TCP"},
    "k8s.io.api.core.v1.LocalObjectReference": {"name": ""},
}

_TAGS: dict[str, dict[str, dict[str, _Tags]]] = {
    "k8s.io.api.core.v1": _CORE_V1,
    "k8s.io.api.apps.v1": _APPS_V1,
    "k8s.io.api.apps.v1beta1": _APPS,
    "k8s.io.api.apps.v1beta2": _APPS,
    "k8s.io.api.autoscaling.v1": {},
    "k8s.io.api.autoscaling.v2": {"HorizontalPodAutoscalerStatus": _CONDITIONS},
    "k8s.io.api.batch.v1": _BATCH_V1,
    "k8s.io.api.coordination.v1": {},
    # EndpointSlice's endpoints and ports are atomic; an endpoint's addresses a set.
    "k8s.io.api.discovery.v1": {"Endpoint": {"addresses": _SET}},
    # Every list of an Ingress, IngressClass, NetworkPolicy or IPAddress is atomic; no patch
    # strategy. ServiceCIDR's conditions merge by type.
    "k8s.io.api.networking.v1": {"ServiceCIDRStatus": _CONDITIONS},
    "k8s.io.api.admissionregistration.v1": {
        "ValidatingWebhookConfiguration": {"webhooks": _merge("name")},
        "MutatingWebhookConfiguration": {"webhooks": _merge("name")},
        "ValidatingWebhook": {"matchConditions": _merge("name")},
        "MutatingWebhook": {"matchConditions": _merge("name")},
        "ValidatingAdmissionPolicySpec": {
            "matchConditions": _merge("name"),
            "variables": _merge("name"),
        },
        # +listType=map +listMapKey=type, without a patch strategy.
        "ValidatingAdmissionPolicyStatus": {"conditions": _map_list("type")},
        "MutatingAdmissionPolicySpec": {
            "matchConditions": _merge("name"),
            "variables": _merge("name"),
        },
    },
    "k8s.io.api.certificates.v1": {
        # +listType=map +listMapKey=type, without a patch strategy.
        "CertificateSigningRequestStatus": {"conditions": _map_list("type")},
    },
    # RuntimeClass's tolerations are atomic; no patch strategy.
    "k8s.io.api.node.v1": {},
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1": {
        # +listType=map +listMapKey=type; everything else of the CRD types is atomic.
        "CustomResourceDefinitionStatus": {"conditions": _map_list("type")},
    },
    "k8s.io.kube_aggregator.pkg.apis.apiregistration.v1": {"APIServiceStatus": _CONDITIONS},
    "k8s.io.api.policy.v1": {
        # A strategic merge patch replaces the selector whole rather than merging into it.
        "PodDisruptionBudgetSpec": {"selector": _Tags(patch_strategy="replace")},
        "PodDisruptionBudgetStatus": _CONDITIONS,
    },
    # RBAC declares no patch strategy: every list of it is atomic.
    "k8s.io.api.rbac.v1": {},
    "k8s.io.api.storage.v1": {
        "CSIDriverSpec": {"volumeLifecycleModes": _SET},
        "CSINodeSpec": {"drivers": _merge("name")},
        "CSINodeStatus": {"storageHealth": _merge("name")},
    },
    "k8s.io.api.scheduling.v1": {},
    META_V1_PACKAGE: _META_V1,
}


def _tags_for(desc: Descriptor) -> Mapping[str, _Tags]:
    package, _, name = desc.full_name.rpartition(".")
    return _TAGS.get(package, {}).get(name, {})


_lock = threading.Lock()
_structs: dict[str, TypeNode] = {}
_by_gvk: dict[GroupVersionKind, TypeNode | None] = {}


def type_for_gvk(gvk: GroupVersionKind) -> TypeNode | None:
    """The type tree of a built-in kind's version, or None for a kind without one (custom
    kinds: strategic merge patch is refused for them and apply uses :data:`DEDUCED`)."""
    try:
        return _by_gvk[gvk]
    except KeyError:
        pass
    desc = message_for_gvk(gvk)
    with _lock:
        node = None if desc is None else _struct(desc)
        _by_gvk[gvk] = node
    return node


def has_patch_meta(gvk: GroupVersionKind) -> bool:
    """Whether strategic merge patch is supported for the kind (it has a type tree)."""
    return type_for_gvk(gvk) is not None


_zeros: dict[GroupVersionKind, dict[str, Any]] = {}


def zero_object(gvk: GroupVersionKind) -> dict[str, Any]:
    """The containers of the kind's Go zero value, as structured-merge-diff sees a new object
    (what a create is compared with when recording who owns which field): every non-pointer
    struct field is an empty object, every list and map field without ``omitempty`` is null;
    scalars are left out (they are leaves either way). ``{}`` for kinds without a descriptor.
    Callers must not modify the result (it is shared)."""
    done = _zeros.get(gvk)
    if done is None:
        desc = message_for_gvk(gvk)
        done = {} if desc is None else _zero(desc)
        _zeros[gvk] = done
    return done


def _zero(desc: Descriptor) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fd in desc.fields:
        message = fd.message_type
        if message is not None and field_inline(fd):
            out.update(_zero(message))
        elif fd.is_repeated:  # lists and maps (map fields are repeated entries)
            if not field_omitempty(fd):
                out[fd.name] = None
        elif (
            message is not None and json_kind(message) == JsonKind.OBJECT and not field_nullable(fd)
        ):
            out[fd.name] = _zero(message)
    return out


def _struct(desc: Descriptor) -> TypeNode:
    done = _structs.get(desc.full_name)
    if done is not None:
        return done
    fields: dict[str, FieldMeta] = {}
    package, _, name = desc.full_name.rpartition(".")
    node = TypeNode(
        NodeKind.STRUCT,
        name=name,
        fields=MappingProxyType(fields),
        atomic=name in _ATOMIC_STRUCTS.get(package, ()),
    )
    # Registered before it is filled, so a message that (indirectly) contains itself works.
    _structs[desc.full_name] = node
    if desc.full_name in kind_messages():
        fields["apiVersion"] = FieldMeta(SCALAR)
        fields["kind"] = FieldMeta(SCALAR)
    _add_fields(desc, fields)
    return node


def _add_fields(desc: Descriptor, fields: dict[str, FieldMeta]) -> None:
    tags = _tags_for(desc)
    for fd in desc.fields:
        if fd.message_type is not None and field_inline(fd):
            _add_fields(fd.message_type, fields)
            continue
        fields[fd.name] = _field(fd, tags.get(fd.name, _Tags()))


def _field(fd: FieldDescriptor, tags: _Tags) -> FieldMeta:
    strategies = tuple(tags.patch_strategy.split(",")) if tags.patch_strategy else ()
    if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
        value = _value(fd.message_type.fields_by_name["value"])
        node = TypeNode(NodeKind.MAP, name="map", item=value, atomic=tags.map_type == "atomic")
    elif fd.is_repeated:
        item = _value(fd)
        list_type, keys = _list_type(tags)
        defaults: Mapping[str, Any] = {}
        if keys and fd.message_type is not None:
            defaults = _KEY_DEFAULTS.get(fd.message_type.full_name, {})
        node = TypeNode(
            NodeKind.LIST,
            name="list",
            item=item,
            list_type=list_type,
            list_keys=keys,
            key_defaults=defaults,
        )
    else:
        node = _value(fd)
    return FieldMeta(node, strategies, tags.patch_merge_key)


def _list_type(tags: _Tags) -> tuple[ListType, tuple[str, ...]]:
    """kube-openapi's rule: ``+listType`` first, else a merge strategy, else atomic."""
    if tags.list_type:
        return ListType(tags.list_type), tags.list_keys
    if tags.patch_strategy in ("merge", "merge,retainKeys"):
        if tags.patch_merge_key:
            return ListType.MAP, (tags.patch_merge_key,)
        return ListType.SET, ()
    return ListType.ATOMIC, ()


def _value(fd: FieldDescriptor) -> TypeNode:
    """The type of one value of a field (an element, for repeated fields)."""
    desc = fd.message_type
    if desc is None:
        return SCALAR
    form = json_kind(desc)
    if form == JsonKind.OBJECT:
        return _struct(desc)
    if form in (
        JsonKind.FIELDS_V1,
        JsonKind.RAW_EXTENSION,
        JsonKind.ENVELOPE,
        JsonKind.JSON_SCHEMA_PROPS,
    ):
        return UNTYPED
    if form == JsonKind.ITEMS_LIST:
        return TypeNode(NodeKind.LIST, name="list", item=_value(desc.fields_by_name["items"]))
    return SCALAR


def table_entries() -> list[tuple[str, str]]:
    """Every (message full name, field) the table names, for the consistency test."""
    out = [
        (f"{package}.{type_name}", field_name)
        for package, types in _TAGS.items()
        for type_name, fields in types.items()
        for field_name in fields
    ]
    out.extend((name, key) for name, keys in _KEY_DEFAULTS.items() for key in keys)
    return out


def atomic_struct_names() -> list[str]:
    """Full names of the structs the table marks atomic, for the consistency test."""
    return [f"{p}.{n}" for p, names in _ATOMIC_STRUCTS.items() for n in names]
