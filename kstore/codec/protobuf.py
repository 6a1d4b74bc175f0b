"""Kubernetes' protobuf wire format (``application/vnd.kubernetes.protobuf``) for built-in kinds.

An encoded object is the 4-byte magic ``k8s\\x00`` followed by a ``runtime.Unknown`` envelope:
``typeMeta`` (apiVersion, kind), ``raw`` (the object's own message), ``contentEncoding`` and
``contentType`` (both empty). Lists are objects of a List kind (``PodList``...). Watch streams
are frames of a 4-byte big-endian length and a bare ``metav1.WatchEvent`` message (no magic, no
envelope) whose ``object.raw`` is the event's object encoded as above.

The dict <-> message mapping has Kubernetes' JSON semantics (see :mod:`kstore.codec._pb_encode`
and :mod:`kstore.codec._pb_decode`): encoding an object dict gives the bytes Kubernetes writes
for the same JSON, byte for byte, and decoding gives the JSON Kubernetes would print.
Converters are generated once per message type from the descriptors;
``google.protobuf.json_format`` is never used.

Guarantees beyond :class:`~kstore.codec.serializer.Serializer`'s: ``decode`` skips fields the
schema does not know (data written by a newer Kubernetes still loads); ``decode_strict``
reports each as ``unknown field "<path>"``. An object whose kind has no protobuf message
raises :class:`~kstore.errors.BadRequest`, as does any malformed input.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from kstore.api.gvk import GroupVersionKind, Object, gvk_of
from kstore.api.proto_schema import META_V1_PACKAGE, message_for_gvk
from kstore.codec._pb_decode import (
    decoder_for,
    reset_unknown_seen,
    set_raw_extension_reader,
    unknown_seen,
)
from kstore.codec._pb_encode import encoder_for
from kstore.codec._pb_strict import unknown_field_paths
from kstore.codec._pb_values import Malformed, read_uvarint, uvarint
from kstore.codec.json import loads as json_loads
from kstore.codec.recognizer import MEDIA_TYPE_PROTOBUF, PROTOBUF_MAGIC
from kstore.codec.serializer import DecodeResult, Serializer
from kstore.errors import BadRequest

__all__ = [
    "MEDIA_TYPE_PROTOBUF",
    "PROTOBUF_MAGIC",
    "Envelope",
    "ProtobufSerializer",
    "decode_watch_event",
    "encode_list",
    "encode_watch_event",
    "read_envelope",
    "split_frames",
]

_WATCH_EVENT = f"{META_V1_PACKAGE}.WatchEvent"
_FRAME_HEADER = struct.Struct(">I")
# OverflowError: the compiled decoders keep positions in C integers, and a length too large for
# one is reported there (the Python decoders report the same data as running past its end).
_CODEC_ERRORS = (
    Malformed,
    IndexError,
    UnicodeDecodeError,
    orjson.JSONDecodeError,
    RecursionError,
    OverflowError,
)


@dataclass(frozen=True, slots=True)
class Envelope:
    """A decoded ``runtime.Unknown``; the object's message is ``data[raw_start:raw_end]``."""

    api_version: str
    kind: str
    data: bytes
    raw_start: int
    raw_end: int
    content_encoding: str
    content_type: str

    @property
    def raw(self) -> bytes:
        return self.data[self.raw_start : self.raw_end]


class ProtobufSerializer(Serializer):
    """``application/vnd.kubernetes.protobuf`` <-> object dicts, for kinds with a message."""

    @property
    def media_type(self) -> str:
        return MEDIA_TYPE_PROTOBUF

    def decode(self, data: bytes) -> Object:
        envelope = read_envelope(data)
        reset_unknown_seen()
        return _decode_object(envelope)

    def decode_strict(self, data: bytes) -> DecodeResult:
        envelope = read_envelope(data)
        reset_unknown_seen()
        obj = _decode_object(envelope)
        if not unknown_seen():
            return DecodeResult(obj)
        full_name = _message_name(envelope.api_version, envelope.kind)
        try:
            paths = unknown_field_paths(
                full_name, envelope.data, envelope.raw_start, envelope.raw_end
            )
        except _CODEC_ERRORS as exc:  # pragma: no cover - the fast decode accepted the data
            raise _malformed(envelope.kind, exc) from None
        return DecodeResult(obj, [f'unknown field "{p}"' for p in paths])

    def encode(self, obj: Object) -> bytes:
        gvk = gvk_of(obj)
        body = _encode_body(gvk, obj)
        try:
            return _envelope(gvk.api_version, gvk.kind, body)
        except UnicodeEncodeError:
            raise _not_unicode(gvk.kind) from None


def read_envelope(data: bytes) -> Envelope:
    """Check the magic and read the ``runtime.Unknown`` envelope (the object stays encoded)."""
    if not data:
        raise BadRequest("empty data")
    if not data.startswith(PROTOBUF_MAGIC):
        expected = " ".join(str(c) for c in PROTOBUF_MAGIC)
        raise BadRequest(
            f"provided data does not appear to be a protobuf message, expected prefix [{expected}]"
        )
    if len(data) == len(PROTOBUF_MAGIC):
        raise BadRequest("empty body")
    data = bytes(data)
    try:
        return _read_unknown(data, len(PROTOBUF_MAGIC), len(data))
    except _CODEC_ERRORS as exc:
        raise BadRequest(f"unable to decode the protobuf envelope: {exc}") from None


def encode_list(
    api_version: str,
    kind: str,
    items: Iterable[Object | bytes],
    *,
    metadata: Object | None = None,
) -> bytes:
    """A List kind (``PodList``...) whose items are object dicts or already-encoded objects.

    Encoded items (the output of :meth:`ProtobufSerializer.encode`, e.g. cached or stored
    bytes) are embedded without being decoded, which is how a list is served from cached
    encodings. The result is byte for byte what encoding the equivalent list dict gives.
    """
    gvk = GroupVersionKind.from_api_version(api_version, kind)
    desc = _descriptor(gvk)
    items_field = desc.fields_by_name.get("items")
    if items_field is None or items_field.message_type is None:
        raise BadRequest(f"{kind} is not a list kind")
    item_name = items_field.message_type.full_name
    encode_item = encoder_for(item_name)
    w = bytearray()
    meta_body = bytearray()
    encoder_for(desc.fields_by_name["metadata"].message_type.full_name)(meta_body, metadata or {})
    w += b"\x0a" + uvarint(len(meta_body)) + meta_body
    try:
        for item in items:
            if isinstance(item, (bytes, bytearray, memoryview)):
                envelope = read_envelope(bytes(item))
                if _message_name(envelope.api_version, envelope.kind) != item_name:
                    raise BadRequest(
                        f"a {envelope.kind} ({envelope.api_version}) cannot be an item of {kind}"
                    )
                w += b"\x12" + uvarint(envelope.raw_end - envelope.raw_start)
                w += memoryview(envelope.data)[envelope.raw_start : envelope.raw_end]
            else:
                body = bytearray()
                encode_item(body, item)
                w += b"\x12" + uvarint(len(body)) + body
    except (AttributeError, TypeError, ValueError) as exc:
        raise BadRequest(f"{kind} cannot be encoded as protobuf: {exc}") from None
    return _envelope(api_version, kind, w)


def encode_watch_event(event_type: str, obj: Object | bytes) -> bytes:
    """One watch-stream frame: length, then ``WatchEvent{type, object{raw=<encoded obj>}}``.

    ``obj`` may already be encoded (encode once, send to every watcher).
    """
    raw = obj if isinstance(obj, bytes) else ProtobufSerializer().encode(obj)
    kind = event_type.encode()
    body = bytearray()
    body += b"\x0a" + uvarint(len(kind)) + kind
    inner = b"\x0a" + uvarint(len(raw)) + raw
    body += b"\x12" + uvarint(len(inner)) + inner
    return _FRAME_HEADER.pack(len(body)) + bytes(body)


def split_frames(buffer: bytes) -> tuple[list[bytes], bytes]:
    """Complete length-delimited frames at the start of ``buffer``, and the unconsumed rest."""
    frames: list[bytes] = []
    p = 0
    while len(buffer) - p >= 4:
        (n,) = _FRAME_HEADER.unpack_from(buffer, p)
        if len(buffer) - p - 4 < n:
            break
        frames.append(buffer[p + 4 : p + 4 + n])
        p += 4 + n
    return frames, buffer[p:]


def decode_watch_event(frame: bytes) -> tuple[str, Object | None]:
    """The event type and object of one frame (without its 4-byte length)."""
    r: dict[str, Any] = {}
    reset_unknown_seen()
    try:
        decoder_for(_WATCH_EVENT)(frame, 0, len(frame), r)
    except _CODEC_ERRORS as exc:
        raise _malformed("WatchEvent", exc) from None
    obj = r.get("object")
    if obj is not None and not isinstance(obj, dict):
        raise BadRequest("the watch event's object is not an object")
    return str(r.get("type", "")), obj


# --- internals -----------------------------------------------------------------------------


def _descriptor(gvk: GroupVersionKind) -> Any:
    desc = message_for_gvk(gvk)
    if desc is None:
        raise BadRequest(
            f'no kind "{gvk.kind}" is registered for version "{gvk.api_version}" in the '
            "protobuf scheme (only built-in kinds can be encoded as protobuf)",
            kind=gvk.kind,
            group=gvk.group,
        )
    return desc


def _message_name(api_version: str, kind: str) -> str:
    if not kind:
        raise BadRequest("Object 'Kind' is missing in the protobuf envelope")
    if not api_version:
        raise BadRequest(f"Object 'apiVersion' is missing in the protobuf envelope of {kind}")
    name: str = _descriptor(GroupVersionKind.from_api_version(api_version, kind)).full_name
    return name


def _malformed(kind: str, exc: BaseException) -> BadRequest:
    if isinstance(exc, UnicodeDecodeError):
        detail = "a string field is not valid UTF-8"
    elif isinstance(exc, IndexError):
        detail = "the data ends in the middle of a field"
    elif isinstance(exc, OverflowError):
        detail = "a length runs past the end of the data"
    else:
        detail = str(exc)
    return BadRequest(f"unable to decode {kind} from protobuf: {detail}", kind=kind)


def _decode_object(envelope: Envelope) -> Object:
    full_name = _message_name(envelope.api_version, envelope.kind)
    obj: dict[str, Any] = {"kind": envelope.kind, "apiVersion": envelope.api_version}
    try:
        decoder_for(full_name)(envelope.data, envelope.raw_start, envelope.raw_end, obj)
    except _CODEC_ERRORS as exc:
        raise _malformed(envelope.kind, exc) from None
    return obj


def _encode_body(gvk: GroupVersionKind, obj: Object) -> bytearray:
    encode = encoder_for(_descriptor(gvk).full_name)
    w = bytearray()
    try:
        encode(w, obj)
    except orjson.JSONEncodeError as exc:  # FieldsV1 or RawExtension content
        raise BadRequest(f"{gvk.kind} cannot be encoded as protobuf: {exc}") from None
    except UnicodeEncodeError:
        raise _not_unicode(gvk.kind) from None
    except (AttributeError, TypeError, ValueError) as exc:
        raise BadRequest(f"{gvk.kind} cannot be encoded as protobuf: {_type_error(exc)}") from None
    except RecursionError:
        raise BadRequest(f"{gvk.kind} cannot be encoded as protobuf: nested too deeply") from None
    return w


def _not_unicode(kind: str) -> BadRequest:
    return BadRequest(
        f"{kind} cannot be encoded as protobuf: a string is not valid Unicode (lone surrogate)"
    )


def _type_error(exc: BaseException) -> str:
    return f"a field holds a value of the wrong type ({exc})"


def _envelope(api_version: str, kind: str, body: bytes | bytearray) -> bytes:
    av = api_version.encode()
    k = kind.encode()
    type_meta = b"\x0a" + uvarint(len(av)) + av + b"\x12" + uvarint(len(k)) + k
    head = PROTOBUF_MAGIC + b"\x0a" + uvarint(len(type_meta)) + type_meta
    # raw, then contentEncoding and contentType: empty, but always written (Go value fields).
    return b"".join((head, b"\x12", uvarint(len(body)), body, b"\x1a\x00\x22\x00"))


def _read_unknown(b: bytes, p: int, e: int) -> Envelope:
    api_version = kind = content_encoding = content_type = ""
    raw_start = raw_end = p
    while p < e:
        t = b[p]
        p += 1
        if t > 0x7F:
            t, p = read_uvarint(b, p, t)
        if t & 7 != 2:
            raise Malformed(f"unexpected wire type {t & 7} for field {t >> 3} of Unknown")
        n = b[p]
        p += 1
        if n > 0x7F:
            n, p = read_uvarint(b, p, n)
        q = p + n
        if q > e:
            raise Malformed("a field runs past the end of the envelope")
        number = t >> 3
        if number == 1:
            api_version, kind = _read_type_meta(b, p, q)
        elif number == 2:
            raw_start, raw_end = p, q
        elif number == 3:
            content_encoding = b[p:q].decode()
        elif number == 4:
            content_type = b[p:q].decode()
        p = q
    return Envelope(api_version, kind, b, raw_start, raw_end, content_encoding, content_type)


def _read_type_meta(b: bytes, p: int, e: int) -> tuple[str, str]:
    values = ["", ""]
    while p < e:
        t = b[p]
        p += 1
        if t > 0x7F:
            t, p = read_uvarint(b, p, t)
        if t & 7 != 2:
            raise Malformed("unexpected wire type in the envelope's typeMeta")
        n = b[p]
        p += 1
        if n > 0x7F:
            n, p = read_uvarint(b, p, n)
        q = p + n
        if q > e:
            raise Malformed("a field runs past the end of the envelope's typeMeta")
        if t >> 3 in (1, 2):
            values[(t >> 3) - 1] = b[p:q].decode()
        p = q
    return values[0], values[1]


def _read_raw_extension(raw: bytes) -> Any:
    """RawExtension bytes: an embedded protobuf object (by its magic) or JSON."""
    if raw.startswith(PROTOBUF_MAGIC):
        return _decode_object(read_envelope(raw))
    return json_loads(raw)


set_raw_extension_reader(_read_raw_extension)
