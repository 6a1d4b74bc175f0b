"""Hub objects to response bytes: objects, lists, Status and watch-stream frames.

An object is converted from its hub form to the version of the request path, then serialized
as the client asked. Objects from the watch cache carry a memo of their encodings
(:mod:`kstore.cache.caching_object`); every encoding here goes through it when present, keyed
by (what is encoded, apiVersion, media type), so an object version is converted and serialized
once however many lists and watchers send it. The items of a list whose kind converts in
batches (a CRD's conversion webhook) that are not memoized yet are converted in one call.

Shapes, as the API server writes them:

- a list is ``{"kind": "<Kind>List", "apiVersion", "metadata": {"resourceVersion",
  "continue", "remainingItemCount"}, "items": [...]}`` with ``items`` always an array; the
  items of a built-in kind's list carry no ``kind``/``apiVersion`` (typed lists drop them);
- a JSON list ends with a newline, as every JSON answer does (:mod:`kstore.server.json_body`);
- a JSON watch event is one line ``{"type": ..., "object": ...}`` (newline-delimited);
  a protobuf one is a length-prefixed ``WatchEvent`` frame;
- a bookmark carries only ``kind``, ``apiVersion`` and ``metadata`` (resourceVersion and the
  initial-events-end annotation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, cast

import orjson

from kstore.api.gvk import GroupVersion, GroupVersionKind, Object
from kstore.api.scheme import Scheme
from kstore.cache.caching_object import (
    CachedListResult,
    CachedWatchEvent,
    encoded_frame,
    encoded_object,
)
from kstore.codec.protobuf import encode_list as encode_protobuf_list
from kstore.codec.protobuf import encode_watch_event
from kstore.errors import KStoreError
from kstore.server.json_body import json_line
from kstore.server.negotiation import OutputFormat, Target
from kstore.storage.interface import EventType, ListResult, WatchEvent

__all__ = ["ResponseEncoder", "http_chunk", "list_metadata"]

_TYPE_KEYS = ("apiVersion", "kind")
_META_API = "meta.k8s.io"


def http_chunk(data: bytes) -> bytes:
    """``data`` as one chunk of an HTTP/1.1 chunked body."""
    return b"%x\r\n%b\r\n" % (len(data), data)


def list_metadata(result: ListResult) -> Object:
    meta: Object = {"resourceVersion": str(result.resource_version)}
    if result.continue_token:
        meta["continue"] = result.continue_token
    if result.remaining_item_count is not None:
        meta["remainingItemCount"] = result.remaining_item_count
    return meta


class ResponseEncoder:
    """Encodes the hub objects of one Scheme for responses. Thread-safe (stateless)."""

    def __init__(self, scheme: Scheme) -> None:
        self._scheme = scheme

    def external(self, hub: Object, gv: GroupVersion) -> Object:
        """``hub`` converted to ``gv`` (shared structure: never mutate the result)."""
        return self._scheme.from_hub(hub, gv.version)

    def external_many(self, hubs: Sequence[Object], gv: GroupVersion) -> list[Object]:
        """:meth:`external` of each of ``hubs`` (one kind), in one call where it converts in
        batches."""
        return self._scheme.from_hub_many(hubs, gv.version)

    def _batched(
        self, hubs: Sequence[Object], gv: GroupVersion, pending: Sequence[int]
    ) -> Mapping[int, Object]:
        """The items at ``pending`` converted together, when their kind converts in batches
        (else nothing: each is converted as it is encoded)."""
        if not pending:
            return {}
        gvk = GroupVersionKind(gv.group, gv.version, str(hubs[pending[0]].get("kind") or ""))
        try:
            batch = self._scheme.kind_version(gvk).from_hub_many
        except KStoreError:
            return {}
        if batch is None:
            return {}
        converted = self.external_many([hubs[i] for i in pending], gv)
        return dict(zip(pending, converted, strict=True))

    # --------------------------------------------------------------- single objects

    def object(self, hub: Object, gv: GroupVersion, fmt: OutputFormat) -> bytes:
        if fmt.target in (Target.PARTIAL, Target.PARTIAL_LIST):
            return fmt.serializer.encode(self.partial(hub, fmt.meta_version))
        return fmt.serializer.encode(self.external(hub, gv))

    def partial(self, hub: Object, meta_version: str) -> Object:
        return {
            "kind": "PartialObjectMetadata",
            "apiVersion": f"{_META_API}/{meta_version}",
            "metadata": hub.get("metadata") or {},
        }

    def event_object(self, event: WatchEvent, gv: GroupVersion, fmt: OutputFormat) -> bytes:
        """A watch event's object, encoded once per (version, media type) when cached."""
        key = ("object", gv.api_version, fmt.media_type, fmt.target.value)
        return encoded_object(event, key, lambda hub: self.object(hub, gv, fmt))

    # ------------------------------------------------------------------------ lists

    def list(
        self,
        result: ListResult,
        gv: GroupVersion,
        list_kind: str,
        fmt: OutputFormat,
        *,
        metadata: Object | None = None,
    ) -> bytes:
        """A list answer; ``metadata`` replaces the one derived from ``result``."""
        meta = list_metadata(result) if metadata is None else metadata
        if fmt.target in (Target.PARTIAL, Target.PARTIAL_LIST):
            body = {
                "kind": "PartialObjectMetadataList",
                "apiVersion": f"{_META_API}/{fmt.meta_version}",
                "metadata": meta,
                "items": [self.partial(hub, fmt.meta_version) for hub in result.items],
            }
            return fmt.serializer.encode(body)
        if fmt.is_protobuf:
            items = self._item_encodings(result, gv, fmt, "object")
            return encode_protobuf_list(gv.api_version, list_kind, items, metadata=meta)
        if fmt.media_type == "application/json":
            items = self._item_encodings(result, gv, fmt, "item")
            head = orjson.dumps({"kind": list_kind, "apiVersion": gv.api_version, "metadata": meta})
            # Ended by a newline, as Go's encoder ends every JSON answer.
            return b"".join((head[:-1], b',"items":[', b",".join(items), b"]}\n"))
        hubs = result.items
        ready = self._batched(hubs, gv, range(len(hubs)))
        body = {
            "kind": list_kind,
            "apiVersion": gv.api_version,
            "metadata": meta,
            "items": [
                self._item(ready.get(i) or self.external(hub, gv)) for i, hub in enumerate(hubs)
            ],
        }
        return fmt.serializer.encode(body)

    @staticmethod
    def _item(ext: Object) -> Object:
        return {k: v for k, v in ext.items() if k not in _TYPE_KEYS}

    def _item_encodings(
        self, result: ListResult, gv: GroupVersion, fmt: OutputFormat, what: str
    ) -> Sequence[bytes]:
        items = result.items
        memos = None
        key = (what, gv.api_version, fmt.media_type)
        if isinstance(result, CachedListResult) and len(result.item_encodings) == len(items):
            memos = result.item_encodings
        found: list[bytes | None] = (
            [None] * len(items) if memos is None else [memo.peek(key) for memo in memos]
        )
        pending = [i for i, data in enumerate(found) if data is None]
        if not pending:
            return cast(list[bytes], found)  # every item's bytes were memoized
        ready = self._batched(items, gv, pending)

        def produce(i: int) -> bytes:
            ext = ready.get(i) or self.external(items[i], gv)
            return fmt.serializer.encode(self._item(ext) if what == "item" else ext)

        for i in pending:
            found[i] = produce(i) if memos is None else memos[i].get(key, partial(produce, i))
        return cast(list[bytes], found)  # every None was filled

    # ------------------------------------------------------------------- watch frames

    def watch_frame(
        self,
        event: WatchEvent,
        gv: GroupVersion,
        kind: str,
        fmt: OutputFormat,
        table: Any = None,
    ) -> bytes:
        """One frame of a watch stream. ``table`` (a callable hub -> Table dict) renders
        object events as one-row Tables for ``kubectl get -w``."""
        if event.type is EventType.ERROR:
            return self._frame(event.type.value, event.object, fmt)
        if event.type is EventType.BOOKMARK:
            bookmark = {
                "kind": kind,
                "apiVersion": gv.api_version,
                "metadata": event.object.get("metadata") or {},
            }
            return self._frame(event.type.value, bookmark, fmt)
        if table is not None:
            return self._frame(event.type.value, table(event.object), fmt)
        key = ("frame", gv.api_version, fmt.media_type, fmt.target.value)
        # The object's encoding is taken before the frame's memo is entered: the memos lock
        # striped, non-reentrant locks while producing, so producing one inside the other can
        # deadlock when both land on the same stripe.
        raw = self.event_object(event, gv, fmt)
        type_name = event.type.value

        def encode(ev: WatchEvent) -> bytes:
            if fmt.is_protobuf:
                return encode_watch_event(type_name, raw)
            return b"".join((b'{"type":"', type_name.encode(), b'","object":', raw, b"}\n"))

        return encoded_frame(event, key, encode)

    def watch_chunk(
        self,
        event: WatchEvent,
        gv: GroupVersion,
        kind: str,
        fmt: OutputFormat,
        table: Any = None,
    ) -> bytes:
        """:meth:`watch_frame` framed as one HTTP/1.1 chunk (hexadecimal size, CRLF, the
        frame, CRLF). An object event from the cache, without ``table``, is framed once per
        (version, media type) for every watch stream it goes to."""
        if table is None and isinstance(event, CachedWatchEvent):
            memo = event.frame_encodings
            key = ("chunk", gv.api_version, fmt.media_type, fmt.target.value)
            data = memo.peek(key)
            if data is not None:
                return data
            # The frame first, outside the chunk's production (the memo's locks do not nest).
            frame = self.watch_frame(event, gv, kind, fmt)
            return memo.get(key, lambda: http_chunk(frame))
        return http_chunk(self.watch_frame(event, gv, kind, fmt, table))

    @staticmethod
    def _frame(event_type: str, obj: Object, fmt: OutputFormat) -> bytes:
        if fmt.is_protobuf:
            return encode_watch_event(event_type, obj)
        return json_line({"type": event_type, "object": obj})
