"""The ``components.schemas`` of the OpenAPI v3 documents: the structural schema of every kind
and of every type it contains, for ``kubectl explain`` and kubectl's OpenAPI-based patching.

Each schema comes from the kind's protobuf descriptor (field names, nesting, scalar types: the
same source as the wire codec) and its merge facts from :mod:`kstore.api.patch_meta`
(``x-kubernetes-patch-strategy``/``-patch-merge-key`` for strategic merge patch,
``x-kubernetes-list-type``/``-list-map-keys``/``-map-type`` for apply). Components are named
as Kubernetes names them (``io.k8s.api.core.v1.PodSpec``) and referenced through ``allOf``, as
its v3 documents do; a kind's schema carries ``x-kubernetes-group-version-kind``. A field is
``required`` when its Go JSON tag has no ``omitempty`` (openapi-gen's rule). There are no
descriptions: the schemas give structure and types only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from kstore.api.gvk import GroupVersionKind, Object
from kstore.api.patch_meta import FieldMeta, ListType, NodeKind, TypeNode, type_for_gvk
from kstore.api.proto_schema import (
    JsonKind,
    field_inline,
    field_required,
    json_kind,
    kind_messages,
    message_for_gvk,
)

__all__ = ["component_name", "component_schemas"]

_INT32: Final = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_SFIXED32,
    }
)
_INT64: Final = frozenset(
    {
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED64,
    }
)
# The JSON forms that are one string or number, as Kubernetes publishes them.
_SCALAR_FORMS: Final[dict[int, Object]] = {
    JsonKind.TIME: {"type": "string", "format": "date-time"},
    JsonKind.MICRO_TIME: {"type": "string", "format": "date-time"},
    JsonKind.DURATION: {"type": "string"},
    JsonKind.QUANTITY: {"type": "string"},
    JsonKind.INT_OR_STRING: {"x-kubernetes-int-or-string": True, "format": "int-or-string"},
}


def component_name(desc: Descriptor) -> str:
    """Kubernetes' name of a message's schema: the Go package path reversed at its host (a
    proto package spells the path's dashes as underscores: ``apiextensions_apiserver``)."""
    name = desc.full_name
    if not name.startswith("k8s.io."):
        return name
    package, _, message = name[len("k8s.io.") :].rpartition(".")
    return f"io.k8s.{package.replace('_', '-')}.{message}"


def _ref(desc: Descriptor, *, struct: bool) -> Object:
    """A reference to ``desc``'s schema; a struct's with the empty object as its default, as
    Kubernetes writes one (a string form such as Time has none)."""
    out: Object = {"allOf": [{"$ref": f"#/components/schemas/{component_name(desc)}"}]}
    if struct:
        out["default"] = {}
    return out


def _scalar(fd: FieldDescriptor) -> Object:
    t = fd.type
    if t == FieldDescriptor.TYPE_STRING:
        return {"type": "string"}
    if t == FieldDescriptor.TYPE_BYTES:
        return {"type": "string", "format": "byte"}
    if t == FieldDescriptor.TYPE_BOOL:
        return {"type": "boolean"}
    if t in _INT32:
        return {"type": "integer", "format": "int32"}
    if t in _INT64:
        return {"type": "integer", "format": "int64"}
    return {"type": "number", "format": "double"}


class _Builder:
    """Collects the components reachable from some kinds."""

    def __init__(self) -> None:
        self.schemas: dict[str, Object] = {}
        self._kinds: dict[str, list[GroupVersionKind]] = {}

    def add_kind(self, gvk: GroupVersionKind) -> None:
        desc = message_for_gvk(gvk)
        node = type_for_gvk(gvk)
        if desc is None or node is None:
            return
        self._struct(desc, node)
        self._kinds.setdefault(component_name(desc), []).append(gvk)

    def finish(self) -> dict[str, Object]:
        for name, gvks in self._kinds.items():
            self.schemas[name]["x-kubernetes-group-version-kind"] = [
                {"group": g.group, "kind": g.kind, "version": g.version} for g in gvks
            ]
        return dict(sorted(self.schemas.items()))

    def _value(self, fd: FieldDescriptor, node: TypeNode) -> Object:
        """The schema of one value of ``fd`` (an element, for a repeated field)."""
        desc = fd.message_type
        if desc is None:
            return _scalar(fd)
        form = json_kind(desc)
        if form == JsonKind.OBJECT:
            self._struct(desc, node)
            return _ref(desc, struct=True)
        if form in _SCALAR_FORMS:
            name = component_name(desc)
            self.schemas.setdefault(name, dict(_SCALAR_FORMS[form]))
            return _ref(desc, struct=False)
        if form == JsonKind.ITEMS_LIST:
            items = desc.fields_by_name["items"]
            item = node.item if node.item is not None else node
            return {"type": "array", "items": self._value(items, item)}
        if form == JsonKind.JSON_SCHEMA_PROPS:
            # A JSON Schema, published as an object whose members are all kept.
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        return {"type": "object"}  # RawExtension, FieldsV1: any JSON object

    def _field(self, fd: FieldDescriptor, meta: FieldMeta) -> Object:
        node = meta.type
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            value_fd = fd.message_type.fields_by_name["value"]
            assert node.item is not None
            out: Object = {
                "type": "object",
                "additionalProperties": self._value(value_fd, node.item),
            }
            if node.atomic:
                out["x-kubernetes-map-type"] = "atomic"
            return out
        if fd.is_repeated:
            assert node.item is not None
            out = {"type": "array", "items": self._value(fd, node.item)}
            if node.list_type is not ListType.ATOMIC or meta.patch_strategies:
                out["x-kubernetes-list-type"] = node.list_type.value
            if node.list_type is ListType.MAP:
                out["x-kubernetes-list-map-keys"] = list(node.list_keys)
        else:
            out = self._value(fd, node)
        if meta.patch_strategies:
            out["x-kubernetes-patch-strategy"] = ",".join(meta.patch_strategies)
        if meta.patch_merge_key:
            out["x-kubernetes-patch-merge-key"] = meta.patch_merge_key
        return out

    def _struct(self, desc: Descriptor, node: TypeNode) -> None:
        name = component_name(desc)
        if name in self.schemas:
            return
        schema: Object = {"type": "object"}
        self.schemas[name] = schema  # before the fields: a type may contain itself
        properties: dict[str, Object] = {}
        required: list[str] = []
        if desc.full_name in kind_messages():
            properties["apiVersion"] = {"type": "string"}
            properties["kind"] = {"type": "string"}
        for fd in _fields(desc):
            meta = node.fields.get(fd.name) if node.kind is NodeKind.STRUCT else None
            if meta is None:
                continue
            properties[fd.name] = self._field(fd, meta)
            if field_required(fd):
                required.append(fd.name)
        schema["properties"] = dict(sorted(properties.items()))
        if required:
            schema["required"] = sorted(required)
        if node.atomic:
            schema["x-kubernetes-map-type"] = "atomic"


def _fields(desc: Descriptor) -> Iterable[FieldDescriptor]:
    """The JSON fields of a message: inline messages' fields in place of the inline field."""
    for fd in desc.fields:
        if fd.message_type is not None and field_inline(fd):
            yield from _fields(fd.message_type)
        else:
            yield fd


def component_schemas(gvks: Iterable[GroupVersionKind]) -> dict[str, Any]:
    """``components.schemas`` for the kinds ``gvks`` and every type they contain (kinds without
    a protobuf descriptor are left out)."""
    builder = _Builder()
    for gvk in gvks:
        builder.add_kind(gvk)
    return builder.finish()
