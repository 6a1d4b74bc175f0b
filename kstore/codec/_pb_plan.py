"""Field plans: what the dict <-> wire converters need to know about each message field.

A plan is read once per message type from its descriptor (and kstore's field options, see
``proto/kstore/api/pb/options.proto``) and then only consulted by the code generators in
:mod:`kstore.codec._pb_encode` and :mod:`kstore.codec._pb_decode` and by the slow strict walker.
Plans are immutable and cached per message full name.

Vocabulary (Kubernetes marshals from Go structs):

- ``always``: a non-pointer singular field; written on the wire even when zero;
- ``nullable``: a pointer field; written only when set (a set zero is still written);
- ``omitempty``: JSON leaves the field out when it is a zero scalar, empty list/map or nil;
- ``inline``: the message's fields are members of the parent's JSON object;
- ``form``: for message fields, the message's JSON form (:class:`JsonKind`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from functools import cache

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from kstore.api.proto_schema import (
    JsonKind,
    field_inline,
    field_nullable,
    field_omitempty,
    json_kind,
    kind_messages,
    message_type,
)
from kstore.codec._pb_values import uvarint

__all__ = [
    "LEAF_CACHE_SIZE",
    "WIRE_LEN",
    "WIRE_VARINT",
    "FieldPlan",
    "JsonKind",
    "MessagePlan",
    "Scalar",
    "is_flat",
    "plan_for",
]

WIRE_VARINT = 0
WIRE_I64 = 1
WIRE_LEN = 2
WIRE_I32 = 5


class Scalar(IntEnum):
    """The value kinds Kubernetes' messages use (no floats, enums or fixed-width ints)."""

    STRING = 1
    BYTES = 2
    BOOL = 3
    INT32 = 4
    INT64 = 5
    MESSAGE = 6


_SCALARS = {
    FieldDescriptor.TYPE_STRING: Scalar.STRING,
    FieldDescriptor.TYPE_BYTES: Scalar.BYTES,
    FieldDescriptor.TYPE_BOOL: Scalar.BOOL,
    FieldDescriptor.TYPE_INT32: Scalar.INT32,
    FieldDescriptor.TYPE_INT64: Scalar.INT64,
    FieldDescriptor.TYPE_MESSAGE: Scalar.MESSAGE,
}


@dataclass(frozen=True, slots=True)
class FieldPlan:
    """One field of a message, as the converters see it."""

    name: str  # the JSON member name (Kubernetes' proto field names are its JSON names)
    number: int
    scalar: Scalar
    repeated: bool
    is_map: bool
    nullable: bool
    omitempty: bool
    inline: bool
    message: str  # full name of the message type ("" for scalars; for maps: the value's)
    form: int  # JsonKind of ``message`` (OBJECT for scalars)
    map_value: Scalar  # for maps: the value's kind (keys are always strings)

    @property
    def wire_type(self) -> int:
        if self.scalar in (Scalar.BOOL, Scalar.INT32, Scalar.INT64) and not self.is_map:
            return WIRE_VARINT
        return WIRE_LEN

    @property
    def key(self) -> int:
        """The tag as an integer: ``number << 3 | wire type``."""
        return self.number << 3 | self.wire_type

    @property
    def tag(self) -> bytes:
        return uvarint(self.key)

    @property
    def always(self) -> bool:
        """Written on the wire even when zero (a non-pointer singular Go field)."""
        return not (self.repeated or self.is_map or self.nullable)


@dataclass(frozen=True, slots=True)
class MessagePlan:
    full_name: str
    form: int  # JsonKind
    fields: tuple[FieldPlan, ...]  # by field number
    is_kind: bool  # its JSON carries apiVersion and kind (it is a top-level kind)

    def field_by_number(self, number: int) -> FieldPlan | None:
        for f in self.fields:
            if f.number == number:
                return f
        return None


@cache
def plan_for(full_name: str) -> MessagePlan:
    """The plan of one message type (cached; plans are immutable)."""
    desc = message_type(full_name)
    form = json_kind(desc)
    # JSONSchemaProps has a codec of its own (kstore.codec._pb_json_schema) and fields (doubles)
    # no other message has: its plan lists none.
    fields = (
        ()
        if form == JsonKind.JSON_SCHEMA_PROPS
        else tuple(sorted((_field_plan(fd) for fd in desc.fields), key=lambda f: f.number))
    )
    return MessagePlan(
        full_name=full_name,
        form=form,
        fields=fields,
        is_kind=full_name in kind_messages(),
    )


def _field_plan(fd: FieldDescriptor) -> FieldPlan:
    scalar = _SCALARS.get(fd.type)
    if scalar is None:
        raise TypeError(f"{fd.full_name}: protobuf type {fd.type} is not used by Kubernetes")
    message = ""
    form = JsonKind.OBJECT
    is_map = False
    map_value = Scalar.STRING
    target: Descriptor | None = fd.message_type
    if target is not None and target.GetOptions().map_entry:
        is_map = True
        value_fd = target.fields_by_name["value"]
        if target.fields_by_name["key"].type != FieldDescriptor.TYPE_STRING:
            raise TypeError(f"{fd.full_name}: only string map keys are supported")
        map_value = _SCALARS[value_fd.type]
        target = value_fd.message_type
    if target is not None:
        message = target.full_name
        form = json_kind(target)
    return FieldPlan(
        name=fd.name,
        number=fd.number,
        scalar=scalar,
        repeated=fd.is_repeated and not is_map,
        is_map=is_map,
        nullable=field_nullable(fd),
        omitempty=field_omitempty(fd),
        inline=field_inline(fd),
        message=message,
        form=form,
        map_value=map_value,
    )


#: Entries per message type in the leaf caches of the encoders and decoders. Kubernetes objects
#: repeat small messages (the ports, volume mounts and probes of every pod of a Deployment, the
#: conditions of one object); a few hundred distinct ones per type cover many templates, and a
#: full cache is simply emptied (bench/bench_protobuf.py measures both directions).
LEAF_CACHE_SIZE = 256


@cache
def is_flat(full_name: str) -> bool:
    """Whether a message's JSON is an object of immutable, hashable values only.

    Its fields are single scalars (strings, numbers, booleans), Time, MicroTime, Duration,
    IntOrString, Quantity, or inline messages that are flat too: no lists, maps or nested
    objects. Such a message's decoded dict can be shared through a shallow copy, and its
    object dict can key a cache of its encoding.
    """
    plan = plan_for(full_name)
    if plan.form != JsonKind.OBJECT:
        return False
    for f in plan.fields:
        if f.repeated or f.is_map:
            return False
        if f.scalar is Scalar.MESSAGE:
            if f.form == JsonKind.OBJECT:
                if not (f.inline and is_flat(f.message)):
                    return False
            elif f.form in (
                JsonKind.FIELDS_V1,
                JsonKind.RAW_EXTENSION,
                JsonKind.ITEMS_LIST,
                JsonKind.JSON_SCHEMA_PROPS,
            ):
                return False
    return True
