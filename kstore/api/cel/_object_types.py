"""Schema objects as typed CEL values for the checker.

Kubernetes declares an object node's properties to cel-go as the fields of an object type, so
``self.replicas == 'a'`` (an integer property against a string) fails when the CRD is written.
The checker embedded here (cel-cpp) types structs through protobuf descriptors, so each object
node becomes a message: properties are fields under their escaped CEL names, integers
``int64``, numbers ``double``, ``format: byte`` strings ``bytes``, durations and timestamps the
well-known types, ``x-kubernetes-int-or-string`` a ``google.protobuf.Value`` (``dyn``), maps
``map<string, T>``. Protobuf has no list of lists and no map of lists or maps: those elements
are ``ListValue``/``Struct`` (a list or map of ``dyn``), looser than Kubernetes' type but never
stricter. Only the checker sees these types; values are evaluated by :mod:`._interpreter`.

The root message is ``selfType0``, as Kubernetes names the type of ``self`` ``selfType<n>``;
a nested object's message is named after its field with a ``_type`` suffix (protobuf does not
let a nested type share its field's name).
"""

from __future__ import annotations

from typing import Final

from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    struct_pb2,
    timestamp_pb2,
)

from kstore.api.cel._decl import Decl

__all__ = ["ROOT_TYPE", "ObjectTypes", "object_types"]

ROOT_TYPE: Final = "selfType0"

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS: Final = {
    "bool": _F.TYPE_BOOL,
    "int": _F.TYPE_INT64,
    "double": _F.TYPE_DOUBLE,
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
}
_WELL_KNOWN: Final = {
    "duration": ".google.protobuf.Duration",
    "timestamp": ".google.protobuf.Timestamp",
    "dyn": ".google.protobuf.Value",
}
_DEPENDENCIES: Final = (struct_pb2, duration_pb2, timestamp_pb2)
# Field numbers protobuf reserves for itself.
_RESERVED: Final = range(19000, 20000)


class ObjectTypes:
    """A descriptor file holding the message of one object node and those it nests."""

    def __init__(self, serialized: bytes) -> None:
        self.serialized = serialized

    def pool(self) -> descriptor_pool.DescriptorPool:
        pool = descriptor_pool.DescriptorPool()
        for module in _DEPENDENCIES:
            pool.AddSerializedFile(module.DESCRIPTOR.serialized_pb)
        pool.AddSerializedFile(self.serialized)
        return pool


def object_types(decl: Decl) -> ObjectTypes:
    """The messages for an object declaration, its root named :data:`ROOT_TYPE`."""
    file = descriptor_pb2.FileDescriptorProto(name="kstore_cel_self.proto", syntax="proto2")
    file.dependency.extend(m.DESCRIPTOR.name for m in _DEPENDENCIES)
    root = file.message_type.add(name=ROOT_TYPE)
    _fill(root, decl, f".{ROOT_TYPE}")
    return ObjectTypes(file.SerializeToString(deterministic=True))


def _fill(message: descriptor_pb2.DescriptorProto, decl: Decl, full_name: str) -> None:
    taken = set(decl.fields)
    number = 0
    for name, field_decl in decl.fields.items():
        number += 1
        if number in _RESERVED:
            number = _RESERVED.stop
        # An explicit JSON name: protobuf refuses fields whose derived ones clash (a_b, aB).
        field = message.field.add(name=name, number=number, label=_F.LABEL_OPTIONAL, json_name=name)
        if field_decl.kind == "list":
            field.label = _F.LABEL_REPEATED
            _set_type(field, message, field_decl.elem, name, full_name, taken)
        elif field_decl.kind == "map" and _entry_name(name) not in taken:
            # protobuf requires a map's entry type to be named after its field
            entry_name = _unique(_entry_name(name), taken)
            entry = message.nested_type.add(name=entry_name)
            entry.options.map_entry = True
            entry.field.add(name="key", number=1, label=_F.LABEL_OPTIONAL, type=_F.TYPE_STRING)
            value = entry.field.add(name="value", number=2, label=_F.LABEL_OPTIONAL)
            # A map entry holds no types of its own: an object value's type is a sibling.
            _set_type(value, message, field_decl.elem, name, full_name, taken)
            field.label = _F.LABEL_REPEATED
            field.type = _F.TYPE_MESSAGE
            field.type_name = f"{full_name}.{entry_name}"
        else:
            _set_type(field, message, field_decl, name, full_name, taken)


def _set_type(
    field: descriptor_pb2.FieldDescriptorProto,
    message: descriptor_pb2.DescriptorProto,
    decl: Decl | None,
    name: str,
    full_name: str,
    taken: set[str],
) -> None:
    kind = decl.kind if decl is not None else "dyn"
    scalar = _SCALARS.get(kind)
    if scalar is not None:
        field.type = scalar
        return
    field.type = _F.TYPE_MESSAGE
    if kind == "object" and decl is not None:
        type_name = _unique(f"{name}_type", taken)
        _fill(message.nested_type.add(name=type_name), decl, f"{full_name}.{type_name}")
        field.type_name = f"{full_name}.{type_name}"
    elif kind == "list":
        field.type_name = ".google.protobuf.ListValue"
    elif kind == "map":
        field.type_name = ".google.protobuf.Struct"
    else:
        field.type_name = _WELL_KNOWN.get(kind, ".google.protobuf.Value")


def _entry_name(field: str) -> str:
    """protobuf's name for a map field's entry type: the field in CamelCase, then Entry."""
    parts = field.split("_")
    return "".join(p[:1].upper() + p[1:] for p in parts) + "Entry"


def _unique(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name
