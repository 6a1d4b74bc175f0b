"""What the protobuf descriptors say about the built-in kinds: message types and shapes.

One table names the protobuf message of every group/version/kind that Kubernetes can encode as
protobuf; everything else (field names, nesting, lists, maps, which JSON form a message takes)
is read from the descriptors in :mod:`kstore.api.pb`, including kstore's own field options
(``proto/kstore/api/pb/options.proto``). So the wire codec and the structural schemas used for
unknown-field detection cannot disagree about a kind's shape.

Invariants: every message the table names exists in the descriptor pool (checked on first
use); :func:`schema_for_gvk` returns the same (cached, shared, read-only) schema object for the
same kind.
"""

from __future__ import annotations

import threading
from functools import cache

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from kstore.api.gvk import GroupVersionKind
from kstore.api.pb import (
    admissionregistration_v1_pb2,
    apiextensions_v1_pb2,
    apiregistration_v1_pb2,
    apps_v1_pb2,
    apps_v1beta1_pb2,
    apps_v1beta2_pb2,
    autoscaling_v1_pb2,
    autoscaling_v2_pb2,
    batch_v1_pb2,
    certificates_v1_pb2,
    coordination_v1_pb2,
    core_v1_pb2,
    discovery_v1_pb2,
    meta_v1_pb2,
    networking_v1_pb2,
    node_v1_pb2,
    options_pb2,
    policy_v1_pb2,
    rbac_v1_pb2,
    runtime_pb2,
    scheduling_v1_pb2,
    storage_v1_pb2,
)
from kstore.api.schema import ANY, SCALAR, FieldSchema

__all__ = [
    "EVERY_GROUP_VERSION_KINDS",
    "META_V1_PACKAGE",
    "UNVERSIONED_KINDS",
    "JsonKind",
    "field_inline",
    "field_nullable",
    "field_omitempty",
    "json_kind",
    "kind_messages",
    "message_for_gvk",
    "message_type",
    "schema_for_gvk",
]

META_V1_PACKAGE = "k8s.io.apimachinery.pkg.apis.meta.v1"


class JsonKind:
    """The JSON forms of ``options.proto``'s ``JsonKind`` (plain ints, for fast comparison)."""

    OBJECT = options_pb2.OBJECT
    TIME = options_pb2.TIME
    MICRO_TIME = options_pb2.MICRO_TIME
    DURATION = options_pb2.DURATION
    INT_OR_STRING = options_pb2.INT_OR_STRING
    QUANTITY = options_pb2.QUANTITY
    FIELDS_V1 = options_pb2.FIELDS_V1
    RAW_EXTENSION = options_pb2.RAW_EXTENSION
    ITEMS_LIST = options_pb2.ITEMS_LIST
    ENVELOPE = options_pb2.ENVELOPE
    JSON_SCHEMA_PROPS = options_pb2.JSON_SCHEMA_PROPS


# (group, version) -> (proto package, kinds with a message of the same name in that package).
_GROUP_VERSIONS: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {
    ("", "v1"): (
        "k8s.io.api.core.v1",
        (
            "Namespace",
            "NamespaceList",
            "ConfigMap",
            "ConfigMapList",
            "Secret",
            "SecretList",
            "Event",
            "EventList",
            "PersistentVolumeClaim",
            "PersistentVolumeClaimList",
            "PersistentVolume",
            "PersistentVolumeList",
            "Pod",
            "PodList",
            "Service",
            "ServiceList",
            "ServiceAccount",
            "ServiceAccountList",
            "PodTemplate",
            "PodTemplateList",
            "ReplicationController",
            "ReplicationControllerList",
            "LimitRange",
            "LimitRangeList",
            "ResourceQuota",
            "ResourceQuotaList",
            "Endpoints",
            "EndpointsList",
            "Node",
            "NodeList",
            "List",
        ),
    ),
    ("apps", "v1"): (
        "k8s.io.api.apps.v1",
        (
            "ControllerRevision",
            "ControllerRevisionList",
            "DaemonSet",
            "DaemonSetList",
            "Deployment",
            "DeploymentList",
            "ReplicaSet",
            "ReplicaSetList",
            "StatefulSet",
            "StatefulSetList",
        ),
    ),
    ("admissionregistration.k8s.io", "v1"): (
        "k8s.io.api.admissionregistration.v1",
        (
            "ValidatingWebhookConfiguration",
            "ValidatingWebhookConfigurationList",
            "MutatingWebhookConfiguration",
            "MutatingWebhookConfigurationList",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyList",
            "ValidatingAdmissionPolicyBinding",
            "ValidatingAdmissionPolicyBindingList",
            "MutatingAdmissionPolicy",
            "MutatingAdmissionPolicyList",
            "MutatingAdmissionPolicyBinding",
            "MutatingAdmissionPolicyBindingList",
        ),
    ),
    ("apiextensions.k8s.io", "v1"): (
        "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1",
        ("CustomResourceDefinition", "CustomResourceDefinitionList"),
    ),
    ("apiregistration.k8s.io", "v1"): (
        "k8s.io.kube_aggregator.pkg.apis.apiregistration.v1",
        ("APIService", "APIServiceList"),
    ),
    ("apps", "v1beta2"): ("k8s.io.api.apps.v1beta2", ("Deployment", "DeploymentList")),
    ("apps", "v1beta1"): ("k8s.io.api.apps.v1beta1", ("Deployment", "DeploymentList")),
    ("autoscaling", "v1"): (
        "k8s.io.api.autoscaling.v1",
        ("HorizontalPodAutoscaler", "HorizontalPodAutoscalerList"),
    ),
    ("autoscaling", "v2"): (
        "k8s.io.api.autoscaling.v2",
        ("HorizontalPodAutoscaler", "HorizontalPodAutoscalerList"),
    ),
    ("batch", "v1"): ("k8s.io.api.batch.v1", ("Job", "JobList", "CronJob", "CronJobList")),
    ("certificates.k8s.io", "v1"): (
        "k8s.io.api.certificates.v1",
        ("CertificateSigningRequest", "CertificateSigningRequestList"),
    ),
    ("coordination.k8s.io", "v1"): ("k8s.io.api.coordination.v1", ("Lease", "LeaseList")),
    ("discovery.k8s.io", "v1"): (
        "k8s.io.api.discovery.v1",
        ("EndpointSlice", "EndpointSliceList"),
    ),
    ("networking.k8s.io", "v1"): (
        "k8s.io.api.networking.v1",
        (
            "Ingress",
            "IngressList",
            "IngressClass",
            "IngressClassList",
            "NetworkPolicy",
            "NetworkPolicyList",
            "IPAddress",
            "IPAddressList",
            "ServiceCIDR",
            "ServiceCIDRList",
        ),
    ),
    ("node.k8s.io", "v1"): ("k8s.io.api.node.v1", ("RuntimeClass", "RuntimeClassList")),
    ("policy", "v1"): (
        "k8s.io.api.policy.v1",
        ("PodDisruptionBudget", "PodDisruptionBudgetList"),
    ),
    ("rbac.authorization.k8s.io", "v1"): (
        "k8s.io.api.rbac.v1",
        (
            "Role",
            "RoleList",
            "ClusterRole",
            "ClusterRoleList",
            "RoleBinding",
            "RoleBindingList",
            "ClusterRoleBinding",
            "ClusterRoleBindingList",
        ),
    ),
    ("storage.k8s.io", "v1"): (
        "k8s.io.api.storage.v1",
        (
            "StorageClass",
            "StorageClassList",
            "CSIDriver",
            "CSIDriverList",
            "CSINode",
            "CSINodeList",
            "VolumeAttachment",
            "VolumeAttachmentList",
        ),
    ),
    ("scheduling.k8s.io", "v1"): (
        "k8s.io.api.scheduling.v1",
        ("PriorityClass", "PriorityClassList"),
    ),
    ("meta.k8s.io", "v1"): (
        META_V1_PACKAGE,
        ("PartialObjectMetadata", "PartialObjectMetadataList"),
    ),
    ("meta.k8s.io", "v1beta1"): (
        META_V1_PACKAGE,
        ("PartialObjectMetadata", "PartialObjectMetadataList"),
    ),
}
_UNVERSIONED_GROUP_VERSIONS = frozenset((("", "v1"), ("meta.k8s.io", "v1")))


# As Kubernetes registers them (metav1.AddToGroupVersion): WatchEvent and the option kinds in
# every group version; the unversioned kinds (Status, discovery documents) as "v1" and
# "meta.k8s.io/v1". kstore.api.kinds.meta registers the same kinds in the Scheme (a test checks
# that the two lists agree; this module cannot import that package, which builds its schemas
# from this one).
EVERY_GROUP_VERSION_KINDS = frozenset(
    (
        "WatchEvent",
        "ListOptions",
        "GetOptions",
        "DeleteOptions",
        "CreateOptions",
        "UpdateOptions",
        "PatchOptions",
    )
)
UNVERSIONED_KINDS = frozenset(
    ("Status", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList")
)


_FILES = (
    runtime_pb2,
    meta_v1_pb2,
    core_v1_pb2,
    apps_v1_pb2,
    apps_v1beta1_pb2,
    apps_v1beta2_pb2,
    autoscaling_v1_pb2,
    autoscaling_v2_pb2,
    batch_v1_pb2,
    coordination_v1_pb2,
    discovery_v1_pb2,
    networking_v1_pb2,
    node_v1_pb2,
    policy_v1_pb2,
    rbac_v1_pb2,
    admissionregistration_v1_pb2,
    certificates_v1_pb2,
    storage_v1_pb2,
    scheduling_v1_pb2,
    apiextensions_v1_pb2,
    apiregistration_v1_pb2,
)


@cache
def _messages() -> dict[str, Descriptor]:
    """Every message of the generated files, by full name."""
    out: dict[str, Descriptor] = {}
    stack: list[Descriptor] = []
    for module in _FILES:
        stack.extend(module.DESCRIPTOR.message_types_by_name.values())
    while stack:
        desc = stack.pop()
        if desc.full_name in out:
            continue
        out[desc.full_name] = desc
        for fd in desc.fields:
            if fd.message_type is not None:
                stack.append(fd.message_type)
    return out


def message_type(full_name: str) -> Descriptor:
    """The descriptor of a message by its full name (``k8s.io.api.core.v1.Pod``)."""
    try:
        return _messages()[full_name]
    except KeyError:
        raise KeyError(f"no protobuf message {full_name!r} in kstore.api.pb") from None


@cache
def _kind_table() -> dict[tuple[str, str, str], Descriptor]:
    table: dict[tuple[str, str, str], Descriptor] = {}
    for (group, version), (package, kinds) in _GROUP_VERSIONS.items():
        for kind in kinds:
            table[(group, version, kind)] = message_type(f"{package}.{kind}")
    for kind in EVERY_GROUP_VERSION_KINDS | UNVERSIONED_KINDS:
        message_type(f"{META_V1_PACKAGE}.{kind}")  # fail early if the .proto lost it
    return table


def message_for_gvk(gvk: GroupVersionKind) -> Descriptor | None:
    """The message a kind is encoded as on Kubernetes' protobuf wire, or None when it has none."""
    found = _kind_table().get((gvk.group, gvk.version, gvk.kind))
    if found is not None:
        return found
    if gvk.kind in EVERY_GROUP_VERSION_KINDS and gvk.version:
        return message_type(f"{META_V1_PACKAGE}.{gvk.kind}")
    if gvk.kind in UNVERSIONED_KINDS and (gvk.group, gvk.version) in _UNVERSIONED_GROUP_VERSIONS:
        return message_type(f"{META_V1_PACKAGE}.{gvk.kind}")
    return None


@cache
def kind_messages() -> frozenset[str]:
    """Full names of the messages that are kinds (their JSON carries apiVersion and kind)."""
    names = {d.full_name for d in _kind_table().values()}
    names.update(f"{META_V1_PACKAGE}.{k}" for k in EVERY_GROUP_VERSION_KINDS | UNVERSIONED_KINDS)
    return frozenset(names)


def json_kind(desc: Descriptor) -> int:
    """The JSON form of a message (a :class:`JsonKind` value)."""
    value: int = desc.GetOptions().Extensions[options_pb2.json]
    return value


def field_nullable(fd: FieldDescriptor) -> bool:
    """The Go field is a pointer: on the wire only when set."""
    return bool(fd.GetOptions().Extensions[options_pb2.nullable])


def field_omitempty(fd: FieldDescriptor) -> bool:
    """The Go JSON tag has omitempty."""
    return bool(fd.GetOptions().Extensions[options_pb2.omitempty])


def field_required(fd: FieldDescriptor) -> bool:
    """Whether a published schema lists the field as required: as its ``+required`` or
    ``+optional`` marker says where it has one that overrides the JSON tag, else when the tag
    has no omitempty (openapi-gen's rules)."""
    opts = fd.GetOptions()
    if opts.HasExtension(options_pb2.required):
        return bool(opts.Extensions[options_pb2.required])
    return not opts.Extensions[options_pb2.omitempty]


def field_inline(fd: FieldDescriptor) -> bool:
    """The field's message spreads its fields into the parent's JSON object."""
    return bool(fd.GetOptions().Extensions[options_pb2.inline])


_schema_lock = threading.Lock()
_schemas: dict[str, FieldSchema] = {}


def schema_for_gvk(gvk: GroupVersionKind) -> FieldSchema | None:
    """The structural schema of a kind with a protobuf message, or None for any other kind.

    JSON field names; inline messages merged into their parent; map fields are MAP, repeated
    fields LIST; Time, MicroTime, Duration, IntOrString and Quantity are SCALAR;
    RawExtension and FieldsV1 are ANY. Kinds, wherever they appear (also as list items),
    include ``apiVersion`` and ``kind``.
    """
    desc = message_for_gvk(gvk)
    if desc is None:
        return None
    with _schema_lock:
        return _object_schema(desc)


def _object_schema(desc: Descriptor) -> FieldSchema:
    done = _schemas.get(desc.full_name)
    if done is not None:
        return done
    fields: dict[str, FieldSchema] = {}
    # Registered before it is filled, so a message that (indirectly) contains itself works.
    schema = FieldSchema.object(fields)
    _schemas[desc.full_name] = schema
    if desc.full_name in kind_messages():
        fields["apiVersion"] = SCALAR
        fields["kind"] = SCALAR
    _add_fields(desc, fields)
    return schema


def _add_fields(desc: Descriptor, fields: dict[str, FieldSchema]) -> None:
    for fd in desc.fields:
        if fd.message_type is not None and field_inline(fd):
            _add_fields(fd.message_type, fields)
            continue
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            fields[fd.name] = FieldSchema.map_of(
                _value_schema(fd.message_type.fields_by_name["value"])
            )
        elif fd.is_repeated:
            fields[fd.name] = FieldSchema.list_of(_value_schema(fd))
        else:
            fields[fd.name] = _value_schema(fd)


def _value_schema(fd: FieldDescriptor) -> FieldSchema:
    """The schema of one value of a field (an element, for repeated fields)."""
    desc = fd.message_type
    if desc is None:
        return SCALAR
    form = json_kind(desc)
    if form == JsonKind.OBJECT:
        return _object_schema(desc)
    if form in (JsonKind.FIELDS_V1, JsonKind.RAW_EXTENSION, JsonKind.ENVELOPE):
        return ANY
    if form == JsonKind.JSON_SCHEMA_PROPS:
        return _json_schema_props()
    if form == JsonKind.ITEMS_LIST:
        return FieldSchema.list_of(_value_schema(desc.fields_by_name["items"]))
    return SCALAR


@cache
def _json_schema_props() -> FieldSchema:
    """apiextensions v1 ``JSONSchemaProps`` by its JSON names (its JSON is not the descriptor's:
    see ``kstore.codec._pb_json_schema``). Members that are one of two shapes (``items``: schema
    or list; ``additionalProperties``/``additionalItems``: schema or bool; ``dependencies``
    values: schema or list) and raw JSON (``default``, ``enum``, ``example``) are ANY."""
    fields: dict[str, FieldSchema] = {}
    schema = FieldSchema.object(fields)
    scalars = (
        "id $schema $ref description type format title maximum exclusiveMaximum minimum "
        "exclusiveMinimum maxLength minLength pattern maxItems minItems uniqueItems multipleOf "
        "maxProperties minProperties nullable x-kubernetes-preserve-unknown-fields "
        "x-kubernetes-embedded-resource x-kubernetes-int-or-string x-kubernetes-list-type "
        "x-kubernetes-map-type"
    )
    fields.update(dict.fromkeys(scalars.split(), SCALAR))
    fields.update(dict.fromkeys(("default", "example", "items"), ANY))
    fields.update(dict.fromkeys(("additionalProperties", "additionalItems"), ANY))
    fields["enum"] = FieldSchema.list_of(ANY)
    fields["dependencies"] = FieldSchema.map_of(ANY)
    for key in ("required", "x-kubernetes-list-map-keys"):
        fields[key] = FieldSchema.list_of(SCALAR)
    for key in ("allOf", "oneOf", "anyOf"):
        fields[key] = FieldSchema.list_of(schema)
    for key in ("properties", "patternProperties", "definitions"):
        fields[key] = FieldSchema.map_of(schema)
    fields["not"] = schema
    fields["externalDocs"] = FieldSchema.object({"description": SCALAR, "url": SCALAR})
    rule = ("rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf")
    fields["x-kubernetes-validations"] = FieldSchema.list_of(
        FieldSchema.object(dict.fromkeys(rule, SCALAR))
    )
    return schema
