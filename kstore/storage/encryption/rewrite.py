"""Re-encrypt every stored object of some resources with their current first key.

This is the last step of a key rotation (and of turning encryption on or off), done the way
Kubernetes documents it: read every object and write it back unchanged. The write goes
through :meth:`~kstore.storage.interface.Storage.guaranteed_update` with an update function
that returns the object as it is, so:

- an object whose stored bytes were read through the first provider and key is not written
  (identical bytes, not stale): running the rewrite twice costs only reads;
- an object read through any other provider or key is **stale**, which forces the write, so
  it is stored again through the first one (that is the ``stale`` contract of the storage
  interface, not something this module checks itself);
- a concurrent writer is never overwritten: the update is a compare-and-swap, retried on
  fresh state by the storage; an object deleted meanwhile is skipped.

Objects are listed a page at a time. A page token that expires because history was compacted
meanwhile restarts the listing from the start (at most ``max_restarts`` times): objects
already rewritten are then read again but not written again. An object that cannot be read
(wrong or missing key) stops the rewrite with its :class:`~kstore.errors.CorruptObject`, so a
rotation never completes while some object is unreadable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kstore.api.gvk import Object
from kstore.errors import Expired, NotFound
from kstore.storage.interface import ListOptions, Storage

__all__ = ["RewriteResult", "RewriteTarget", "rewrite"]


@dataclass(frozen=True, kw_only=True, slots=True)
class RewriteTarget:
    """One resource to rewrite. ``resource_prefix`` is the storage's key prefix (``/secrets``);
    ``ttl_seconds`` is the TTL its writes carry (Events), since an update stores its own."""

    group: str
    resource: str
    storage: Storage
    resource_prefix: str
    namespaced: bool
    ttl_seconds: int | None = None

    @property
    def qualified(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource


@dataclass(frozen=True, kw_only=True, slots=True)
class RewriteResult:
    """What a rewrite did to one resource: ``examined`` objects listed; ``rewritten``, those
    whose resourceVersion changed since they were listed (written again here, or by a
    concurrent writer: either way now stored through the first key); ``gone``, those deleted
    before their turn."""

    group: str
    resource: str
    examined: int
    rewritten: int
    gone: int


def _unchanged(obj: Object) -> Object:
    return obj


def _key_of(target: RewriteTarget, obj: Object) -> str:
    meta = obj.get("metadata") or {}
    name = str(meta.get("name") or "")
    prefix = target.resource_prefix.rstrip("/")
    if target.namespaced:
        return f"{prefix}/{meta.get('namespace') or ''}/{name}"
    return f"{prefix}/{name}"


def _rewrite_one(target: RewriteTarget, page_size: int, max_restarts: int) -> RewriteResult:
    examined = rewritten = gone = restarts = 0
    token = ""
    while True:
        try:
            page = target.storage.list(
                target.resource_prefix, ListOptions(limit=page_size, continue_token=token)
            )
        except Expired:
            if not token or restarts >= max_restarts:
                raise
            restarts, token = restarts + 1, ""
            continue
        for obj in page.items:
            examined += 1
            listed = str((obj.get("metadata") or {}).get("resourceVersion") or "")
            try:
                stored = target.storage.guaranteed_update(
                    _key_of(target, obj), _unchanged, ttl_seconds=target.ttl_seconds
                )
            except NotFound:
                gone += 1
                continue
            if str(stored.get("metadata", {}).get("resourceVersion") or "") != listed:
                rewritten += 1
        token = page.continue_token
        if not token:
            return RewriteResult(
                group=target.group,
                resource=target.resource,
                examined=examined,
                rewritten=rewritten,
                gone=gone,
            )


def rewrite(
    targets: Iterable[RewriteTarget],
    *,
    page_size: int = 500,
    max_restarts: int = 3,
    on_done: Callable[[RewriteResult], None] | None = None,
) -> list[RewriteResult]:
    """Rewrite every object of every target (see the module docstring), one resource after
    the other; ``on_done`` is told about each resource as it finishes."""
    if page_size <= 0:
        raise ValueError("page_size must be positive")
    results: list[RewriteResult] = []
    for target in targets:
        result = _rewrite_one(target, page_size, max_restarts)
        results.append(result)
        if on_done is not None:
            on_done(result)
    return results
