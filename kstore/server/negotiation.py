"""Content negotiation: which serializer reads a request body and which one writes the answer.

Bodies: a missing ``Content-Type`` means JSON (the Python client 37.x and kr8s send none, and
the API server accepts that); JSON, YAML and Kubernetes protobuf are read; anything else is a
415 ``UnsupportedMediaType`` Status.

Answers follow ``Accept`` in the client's order (``q`` weights respected): JSON, YAML or
protobuf; on reads, ``as=Table`` (``g=meta.k8s.io``, ``v=v1`` or ``v1beta1``) asks for a Table
and ``as=PartialObjectMetadata[List]`` for metadata only. A clause kstore cannot honour is
skipped, as Kubernetes skips it; when none is left the answer is 406 ``NotAcceptable``.
Watches stream JSON or protobuf only (YAML has no stream framing).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from kstore.codec.json import MEDIA_TYPE_JSON
from kstore.codec.recognizer import MEDIA_TYPE_PROTOBUF, serializer_for_media_type
from kstore.codec.serializer import Serializer
from kstore.codec.yaml import MEDIA_TYPE_YAML
from kstore.errors import NotAcceptable, UnsupportedMediaType
from kstore.server.json_body import GoEscapedJson

__all__ = [
    "NotAcceptable",
    "OutputFormat",
    "Target",
    "body_serializer",
    "negotiate",
]

_ACCEPTED = f"{MEDIA_TYPE_JSON}, {MEDIA_TYPE_YAML}, {MEDIA_TYPE_PROTOBUF}"
_META_GROUP = "meta.k8s.io"


class Target(StrEnum):
    """What the answer carries: the object itself or one of the meta.k8s.io transforms."""

    OBJECT = ""
    TABLE = "Table"
    PARTIAL = "PartialObjectMetadata"
    PARTIAL_LIST = "PartialObjectMetadataList"


@dataclass(frozen=True, slots=True)
class OutputFormat:
    """How to write an answer: ``content_type`` is the header value, ``meta_version`` the
    meta.k8s.io version of a Table or PartialObjectMetadata answer."""

    serializer: Serializer
    content_type: str
    target: Target = Target.OBJECT
    meta_version: str = "v1"

    @property
    def media_type(self) -> str:
        return self.serializer.media_type

    @property
    def is_protobuf(self) -> bool:
        return self.serializer.media_type == MEDIA_TYPE_PROTOBUF


#: Answers in JSON escape as Go's encoder does (kstore.server.json_body).
_ANSWER_JSON = GoEscapedJson(serializer_for_media_type(MEDIA_TYPE_JSON))
_JSON_FORMAT = OutputFormat(_ANSWER_JSON, MEDIA_TYPE_JSON)
_YAML_FORMAT = OutputFormat(serializer_for_media_type(MEDIA_TYPE_YAML), MEDIA_TYPE_YAML)


def _answer_serializer(media_type: str) -> Serializer:
    return _ANSWER_JSON if media_type == MEDIA_TYPE_JSON else serializer_for_media_type(media_type)


_BASE_TYPES = {
    MEDIA_TYPE_JSON: MEDIA_TYPE_JSON,
    MEDIA_TYPE_YAML: MEDIA_TYPE_YAML,
    MEDIA_TYPE_PROTOBUF: MEDIA_TYPE_PROTOBUF,
    "*/*": MEDIA_TYPE_JSON,
    "application/*": MEDIA_TYPE_JSON,
}


def json_format() -> OutputFormat:
    return _JSON_FORMAT


def _clauses(accept: str) -> list[tuple[str, dict[str, str]]]:
    """Media ranges with their parameters, best ``q`` first (stable for equal weights)."""
    parsed: list[tuple[float, int, str, dict[str, str]]] = []
    for index, clause in enumerate(accept.split(",")):
        pieces = clause.split(";")
        base = pieces[0].strip().lower()
        if not base:
            continue
        params: dict[str, str] = {}
        for piece in pieces[1:]:
            key, _, value = piece.partition("=")
            params[key.strip().lower()] = value.strip().strip('"')
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 0.0
        if q > 0:
            parsed.append((-q, index, base, params))
    parsed.sort()
    return [(base, params) for _, _, base, params in parsed]


def negotiate(
    accept: str | None, *, transforms: bool = False, stream: bool = False
) -> OutputFormat:
    """The answer format for an ``Accept`` header.

    ``transforms`` allows Table/PartialObjectMetadata (reads only); ``stream`` restricts to
    the media types that can frame a watch stream.
    """
    if not accept:
        return _JSON_FORMAT
    if accept == MEDIA_TYPE_JSON:
        return _JSON_FORMAT
    for base, params in _clauses(accept):
        media = _BASE_TYPES.get(base)
        if media is None:
            continue
        if stream and media == MEDIA_TYPE_YAML:
            continue
        as_kind = params.get("as")
        if as_kind is None:
            if media == MEDIA_TYPE_PROTOBUF:
                content_type = (
                    f"{MEDIA_TYPE_PROTOBUF};stream=watch" if stream else MEDIA_TYPE_PROTOBUF
                )
                return OutputFormat(serializer_for_media_type(media), content_type)
            return _YAML_FORMAT if media == MEDIA_TYPE_YAML else _JSON_FORMAT
        if not transforms or params.get("g") != _META_GROUP:
            continue
        meta_version = params.get("v", "")
        if meta_version not in ("v1", "v1beta1"):
            continue
        try:
            target = Target(as_kind)
        except ValueError:
            continue
        if target is Target.OBJECT:
            continue
        # Tables have no protobuf encoding here; a watch stream carries its events as JSON.
        if media == MEDIA_TYPE_PROTOBUF and target is Target.TABLE:
            continue
        if stream:
            media = MEDIA_TYPE_PROTOBUF if media == MEDIA_TYPE_PROTOBUF else MEDIA_TYPE_JSON
            content_type = (
                f"{MEDIA_TYPE_PROTOBUF};stream=watch"
                if media == MEDIA_TYPE_PROTOBUF
                else MEDIA_TYPE_JSON
            )
        else:
            content_type = f"{media};as={target.value};v={meta_version};g={_META_GROUP}"
        return OutputFormat(_answer_serializer(media), content_type, target, meta_version)
    raise NotAcceptable(f"only the following media types are accepted: {_ACCEPTED}")


def body_serializer(content_type: str | None) -> Serializer:
    """The serializer that reads a request body of this ``Content-Type``."""
    if not content_type:
        return _JSON_FORMAT.serializer
    base = content_type.split(";", 1)[0].strip().lower()
    if base in (MEDIA_TYPE_JSON, MEDIA_TYPE_YAML, MEDIA_TYPE_PROTOBUF):
        return serializer_for_media_type(base)
    raise UnsupportedMediaType(
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{_ACCEPTED}"
    )
