"""Large JSON lists streamed item by item, as kube-apiserver streams them since v1.33.

A list of the whole collection built as one ``bytes`` holds every item decoded, converted and
encoded at once, then the joined body: several times the collection's size, for one request.
A JSON list of more than :data:`STREAM_MIN_ITEMS` objects is written instead as a sequence of
chunks of about :data:`CHUNK_BYTES`, each made from a group of items that are decoded,
converted and encoded only then, and dropped once written. The bytes are exactly those of the
list built whole (:meth:`kstore.server.encoding.ResponseEncoder.list`): the same envelope,
the same item encodings (an item's memoized encoding when the cache has one; a streamed list
does not add to the memos, so it leaves the cache's memory as it found it).

Protobuf lists, Tables and PartialObjectMetadata lists are built whole, as are the lists of
a kind whose conversion calls a webhook (a failing webhook must still be able to answer with
a Status, which is impossible once the body has started).
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson

from kstore.api.gvk import GroupVersion, Object
from kstore.cache.caching_object import CachedListResult
from kstore.server.encoding import ResponseEncoder, list_metadata
from kstore.server.negotiation import OutputFormat, Target
from kstore.storage.interface import ListResult

__all__ = ["CHUNK_BYTES", "STREAM_MIN_ITEMS", "json_list_chunks", "streams_list"]

#: Lists longer than this are streamed.
STREAM_MIN_ITEMS = 500
#: About how much each chunk carries.
CHUNK_BYTES = 64 * 1024
#: Items decoded and converted together (one conversion call where a kind converts in batches).
_GROUP = 100
_TYPE_KEYS = ("apiVersion", "kind")


def streams_list(result: ListResult, fmt: OutputFormat, *, conversion_blocks: bool) -> bool:
    """Whether the list answer for ``result`` in ``fmt`` is streamed."""
    return (
        len(result.items) > STREAM_MIN_ITEMS
        and fmt.target is Target.OBJECT
        and fmt.media_type == "application/json"
        and not fmt.is_protobuf
        and not conversion_blocks
    )


def _item(ext: Object) -> Object:
    return {k: v for k, v in ext.items() if k not in _TYPE_KEYS}


def json_list_chunks(
    encoder: ResponseEncoder,
    result: ListResult,
    gv: GroupVersion,
    list_kind: str,
    fmt: OutputFormat,
) -> Iterator[bytes]:
    """The JSON list answer for ``result`` in chunks (their concatenation is the answer)."""
    head = orjson.dumps(
        {"kind": list_kind, "apiVersion": gv.api_version, "metadata": list_metadata(result)}
    )
    parts: list[bytes] = [head[:-1], b',"items":[']
    size = len(head)
    items = result.items
    count = len(items)
    key = ("item", gv.api_version, fmt.media_type)
    memos = None
    if isinstance(result, CachedListResult) and len(result.item_encodings) == count:
        memos = result.item_encodings
    encode = fmt.serializer.encode
    for start in range(0, count, _GROUP):
        stop = min(count, start + _GROUP)
        known = [None if memos is None else memos[i].peek(key) for i in range(start, stop)]
        pending = [start + k for k, data in enumerate(known) if data is None]
        converted = dict(
            zip(pending, encoder.external_many([items[i] for i in pending], gv), strict=True)
        )
        for i in range(start, stop):
            data = known[i - start]
            if data is None:
                data = encode(_item(converted.pop(i)))
            if i:
                parts.append(b",")
            parts.append(data)
            size += len(data) + 1
        if size >= CHUNK_BYTES:
            yield b"".join(parts)
            parts = []
            size = 0
    parts.append(b"]}\n")
    yield b"".join(parts)
