"""Which serializer reads a given body: protobuf by its magic, JSON by its first byte, else YAML.

Stored data may be in any format a resource has ever used; reading by content (as Kubernetes'
storage decoder does) keeps old data readable after the storage media type changes.
"""

from __future__ import annotations

from functools import cache

from kstore.codec.json import MEDIA_TYPE_JSON, JsonSerializer
from kstore.codec.serializer import Serializer
from kstore.codec.yaml import MEDIA_TYPE_YAML, YamlSerializer
from kstore.errors import UnsupportedMediaType

__all__ = [
    "MEDIA_TYPE_PROTOBUF",
    "PROTOBUF_MAGIC",
    "serializer_for_content",
    "serializer_for_media_type",
]

MEDIA_TYPE_PROTOBUF = "application/vnd.kubernetes.protobuf"
PROTOBUF_MAGIC = b"k8s\x00"

_JSON = JsonSerializer()
# Stored data is read whatever its depth: what was accepted once stays readable.
_STORED_JSON = JsonSerializer(max_depth=None)
_YAML = YamlSerializer()


@cache
def _protobuf() -> Serializer:
    # Imported on first use: the generated descriptors are only loaded when protobuf is used.
    from kstore.codec.protobuf import ProtobufSerializer

    serializer: Serializer = ProtobufSerializer()
    return serializer


def serializer_for_content(data: bytes) -> Serializer:
    """The serializer that can read ``data``, judged by its first bytes."""
    if data.startswith(PROTOBUF_MAGIC):
        return _protobuf()
    if data.lstrip(b" \t\r\n")[:1] in (b"{", b"["):
        return _STORED_JSON
    return _YAML


def serializer_for_media_type(media_type: str) -> Serializer:
    """The serializer for a media type (parameters such as ``;charset=utf-8`` are ignored)."""
    base = media_type.split(";", 1)[0].strip().lower()
    if base in (MEDIA_TYPE_JSON, "*/*", "application/*", ""):
        return _JSON
    if base in (MEDIA_TYPE_YAML, "application/x-yaml", "text/yaml"):
        return _YAML
    if base == MEDIA_TYPE_PROTOBUF:
        return _protobuf()
    raise UnsupportedMediaType(f'the media type "{media_type}" is not supported')
