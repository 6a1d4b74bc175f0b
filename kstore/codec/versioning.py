"""The versioning codec: bytes in any version <-> the hub form of a kind, through the Scheme.

Decode: read the bytes with the serializer their content calls for, default the external
object (when asked), convert it to the hub. Encode: convert the hub object to the target
version (by default the kind's storage version), then serialize. This is what the storage layer
uses (:class:`~kstore.storage.interface.StorageCodec`) and what request decoding builds on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kstore.api.gvk import HUB_VERSION, GroupVersionKind, Object, gvk_of
from kstore.api.proto_schema import message_for_gvk
from kstore.api.scheme import Scheme
from kstore.codec.json import MEDIA_TYPE_JSON, JsonSerializer
from kstore.codec.recognizer import serializer_for_content, serializer_for_media_type
from kstore.codec.serializer import Serializer
from kstore.codec.strict import FieldValidation, check_fields
from kstore.errors import BadRequest

__all__ = ["DecodedRequest", "VersioningCodec", "decode_request", "storage_codec"]

#: Bound on remembered (apiVersion, kind) pairs per codec (a scheme has a few hundred).
_TARGETS_SIZE = 4096


class VersioningCodec:
    """Hub objects <-> bytes of one encoding, in a fixed or per-kind storage version.

    ``encode_version`` None encodes each kind in its own storage version. ``default`` applies
    the external version's defaults on decode, as Kubernetes' storage and request decoders do.
    """

    def __init__(
        self,
        scheme: Scheme,
        encoder: Serializer,
        *,
        encode_version: str | None = None,
        default: bool = True,
    ) -> None:
        self._scheme = scheme
        self._encoder = encoder
        self._encode_version = encode_version
        self._default = default
        self._targets: dict[tuple[object, object], tuple[GroupVersionKind, str]] = {}

    @property
    def scheme(self) -> Scheme:
        return self._scheme

    @property
    def encoder(self) -> Serializer:
        return self._encoder

    def decode(self, data: bytes) -> Object:
        obj = serializer_for_content(data).decode(data)
        if self._default:
            self._scheme.default(obj)
        return self._scheme.to_hub(obj)

    def encode(self, obj: Object) -> bytes:
        return self._encoder.encode(self.to_external(obj))

    def to_external(self, obj: Object) -> Object:
        """The object in the version this codec writes."""
        declared = (obj.get("apiVersion"), obj.get("kind"))
        target = self._targets.get(declared)
        if target is None:
            target = self._target(obj, declared)
        gvk, version = target
        if gvk.version == version:
            return obj
        hub = obj if gvk.version == HUB_VERSION else self._scheme.to_hub(obj)
        return self._scheme.from_hub(hub, version)

    def _target(self, obj: Object, declared: tuple[object, object]) -> tuple[GroupVersionKind, str]:
        """(the object's GVK, the version to write it in), remembered per (apiVersion, kind):
        every write asks, and the answer depends on nothing else."""
        gvk = gvk_of(obj)
        version = self._encode_version
        if version is None:
            version = self._scheme.definition_for(gvk).storage_group_version.version
        if len(self._targets) < _TARGETS_SIZE:
            self._targets[declared] = (gvk, version)
        return gvk, version


def storage_codec(scheme: Scheme, media_type: str = MEDIA_TYPE_JSON) -> VersioningCodec:
    """The codec a resource is stored with: its kind's storage version, in ``media_type``
    (JSON by default, or Kubernetes protobuf), encoded canonically so that equal objects give
    equal bytes; reads any format and version by content."""
    if media_type == MEDIA_TYPE_JSON:
        return VersioningCodec(scheme, JsonSerializer(canonical=True, max_depth=None))
    return VersioningCodec(scheme, serializer_for_media_type(media_type))


@dataclass(frozen=True, slots=True)
class DecodedRequest:
    """A request body decoded to the hub, with the warnings ``fieldValidation=Warn`` returns."""

    hub: Object
    gvk: GroupVersionKind
    warnings: list[str] = field(default_factory=list)


def unknown_fields(
    scheme: Scheme, obj: Object, gvk: GroupVersionKind, *, report: bool = True
) -> list[str]:
    """Drop from a decoded body (in place) the fields its kind's version does not know; the
    ``unknown field`` problems (none unless ``report``). A kind defined by data prunes by its
    schema; a built-in kind checks against its protobuf message's shape, where a value of the
    wrong type is a BadRequest naming it as Go's decoder does (Go's typed decode fails first,
    whatever ``fieldValidation`` says)."""
    version = scheme.kind_version(gvk)
    if version.schema_rules is not None:
        pruned = version.schema_rules.prune(obj)
        return [f'unknown field "{path}"' for path in pruned] if report else []
    if version.schema is None:
        return []
    checked = check_fields(obj, version.schema, prune=True, message=message_for_gvk(gvk))
    if checked.type_error is not None:
        raise BadRequest(
            f'{gvk.kind} in version "{gvk.version}" cannot be handled as a {gvk.kind}: '
            f"{checked.type_error}"
        )
    return [f'unknown field "{path}"' for path in checked.unknown] if report else []


def decode_request(
    scheme: Scheme,
    data: bytes,
    serializer: Serializer,
    *,
    field_validation: FieldValidation = FieldValidation.WARN,
    default: bool = True,
) -> DecodedRequest:
    """Decode a request body as the API server does: strict checks per ``field_validation``,
    unknown fields dropped, defaults applied, converted to the hub.

    A value of the wrong type is a BadRequest naming it as Go's decoder does, whatever
    ``field_validation`` says. Strict: any problem is a BadRequest ``<Kind> in version "<v>"
    cannot be handled as a <Kind>: strict decoding error: ...``. Warn: problems come back as
    warnings. Ignore: dropped.
    """
    if field_validation is FieldValidation.IGNORE:
        obj = serializer.decode(data)
        problems: list[str] = []
    else:
        result = serializer.decode_strict(data)
        obj, problems = result.obj, list(result.problems)
    gvk = gvk_of(obj)
    problems.extend(
        unknown_fields(scheme, obj, gvk, report=field_validation is not FieldValidation.IGNORE)
    )
    if problems and field_validation is FieldValidation.STRICT:
        raise BadRequest(
            f'{gvk.kind} in version "{gvk.version}" cannot be handled as a {gvk.kind}: '
            f"strict decoding error: {', '.join(problems)}"
        )
    if default:
        scheme.default(obj)
    return DecodedRequest(scheme.to_hub(obj), gvk, problems)
