"""Delete and DeleteCollection of one resource, as Kubernetes' generic store does them.

:class:`Deleter` works for a :class:`~kstore.registry.store.GenericStore` (which delegates its
``delete`` and ``delete_collection`` to it):

1. the object is read (404 when missing) and the DeleteOptions preconditions checked on it;
2. :func:`~kstore.registry.graceful.before_delete` decides: a graceful delete already under way
   with a period that is not shorter changes nothing; otherwise
3. when the delete is graceful, finalizers are pending, or the propagation policy changes the
   ``orphan`` / ``foregroundDeletion`` finalizers, the object is updated first (Kubernetes'
   ``updateForGracefulDeletionAndFinalizers``): it is kept with a ``deletionTimestamp`` while a
   grace period runs or finalizers remain (``deleted=False``);
4. otherwise it is deleted now, with the preconditions (the resourceVersion one moved to the
   marked object's) and delete admission checked on the state deleted; a concurrent delete
   after the mark counts as done.

Delete admission (mutating, then validating hooks, with ``old_object`` and no object) runs inside
the storage transactions, so once per conflict retry. DeleteCollection lists page by page and
deletes each item (not atomic; items that vanish meanwhile are skipped). Dry runs read, check and
admit, and write nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from kstore.api.gvk import Object
from kstore.errors import KStoreError, NotFound
from kstore.registry.graceful import (
    before_delete,
    check_delete_preconditions,
    gc_finalizers,
    mark_as_deleting,
    validate_delete_options,
)
from kstore.registry.interface import DeleteOptions, DeleteResult, RequestContext
from kstore.registry.passthrough import Raised, guarded
from kstore.registry.strategies.base import copy_value, meta, read_meta
from kstore.storage.interface import ListOptions, Preconditions, ResourceVersionMatch

if TYPE_CHECKING:
    from kstore.registry.store import GenericStore

__all__ = ["DELETE_COLLECTION_PAGE_SIZE", "Deleter"]

#: Kubernetes' deleteCollectionPageSize.
DELETE_COLLECTION_PAGE_SIZE: Final = 10_000


class _DeleteNow(Exception):
    pass


class _AlreadyDeleting(Exception):
    pass


@dataclass(frozen=True, slots=True)
class _Marked:
    """What marking an object for deletion left: the object as written (or read), whether it
    must now be deleted, and the last state seen (returned if a concurrent delete wins)."""

    object: Object
    delete_now: bool
    last_existing: Object | None


class Deleter:
    """The deletes of one store (see the module docstring). Thread-safe."""

    def __init__(self, store: GenericStore) -> None:
        self._store = store

    def delete(self, ctx: RequestContext, name: str, opts: DeleteOptions) -> DeleteResult:
        store = self._store
        strategy = store.strategy
        validate_delete_options(opts)
        key = store.key(ctx, name)
        try:
            current = store.storage.get(key)
        except KStoreError as exc:
            raise store.interpret_error(exc, name) from None
        check_delete_preconditions(strategy, current, opts.preconditions)
        decision = before_delete(strategy, copy_value(current), opts.grace_period_seconds)
        if decision.pending:
            return DeleteResult(object=current, deleted=False)
        # The first decision fixes the grace period for the retries (Kubernetes' options).
        opts = replace(opts, grace_period_seconds=decision.grace_period_seconds)
        pending_finalizers = bool(read_meta(current).get("finalizers"))
        needs_gc_update = gc_finalizers(strategy, ctx, current, opts) is not None
        if not read_meta(current).get("deletionTimestamp"):
            needs_gc_update |= strategy.prepare_for_delete(copy_value(current))
        last_existing: Object | None = None
        preconditions = opts.preconditions
        if decision.graceful or pending_finalizers or needs_gc_update:
            outcome = self._mark(ctx, key, name, opts, current)
            if not outcome.delete_now:
                return DeleteResult(object=outcome.object, deleted=False)
            last_existing = outcome.last_existing
            if preconditions is not None and preconditions.resource_version is not None:
                rv = str(read_meta(outcome.object).get("resourceVersion") or "")
                preconditions = replace(preconditions, resource_version=rv)
            if opts.dry_run:
                return DeleteResult(object=outcome.object, deleted=True)
        return self._delete_now(ctx, key, name, opts, preconditions, last_existing)

    def _delete_now(
        self,
        ctx: RequestContext,
        key: str,
        name: str,
        opts: DeleteOptions,
        preconditions: Preconditions | None,
        last_existing: Object | None,
    ) -> DeleteResult:
        store = self._store

        @guarded
        def validate(existing: Object) -> None:
            store.admit_delete(ctx, name, existing, opts.dry_run)

        try:
            if opts.dry_run:
                current = store.storage.get(key)
                if preconditions is not None:
                    store.check_storage_preconditions(current, preconditions)
                validate(current)
                return DeleteResult(object=current, deleted=True)
            deleted = store.storage.delete(
                key, preconditions=preconditions, validate_deletion=validate
            )
        except Raised as raised:
            raise raised.error from None
        except NotFound:
            if last_existing is not None:
                return DeleteResult(object=last_existing, deleted=True)
            raise store.not_found(name) from None
        except KStoreError as exc:
            raise store.interpret_error(exc, name) from None
        return DeleteResult(object=deleted, deleted=True)

    def _mark(
        self, ctx: RequestContext, key: str, name: str, opts: DeleteOptions, read: Object
    ) -> _Marked:
        """Kubernetes' updateForGracefulDeletionAndFinalizers."""
        store = self._store
        strategy = store.strategy
        state: dict[str, Any] = {"graceful": 0, "pending": False, "last": None}

        @guarded
        def try_update(existing: Object) -> Object:
            store.admit_delete(ctx, name, existing, opts.dry_run)
            obj = copy_value(existing)
            check_delete_preconditions(strategy, obj, opts.preconditions)
            decision = before_delete(strategy, obj, opts.grace_period_seconds)
            if decision.pending:
                raise _AlreadyDeleting()
            finalizers = gc_finalizers(strategy, ctx, obj, opts)
            if finalizers is not None:
                meta(obj)["finalizers"] = finalizers
            if not read_meta(obj).get("deletionTimestamp"):
                strategy.prepare_for_delete(obj)
            state["pending"] = bool(read_meta(obj).get("finalizers"))
            if not decision.graceful:
                if state["pending"]:
                    mark_as_deleting(obj)
                    return obj
                raise _DeleteNow()
            state["graceful"] = decision.grace_period_seconds or 0
            state["last"] = obj
            return obj

        try:
            if opts.dry_run:
                current = store.storage.get(key)
                if opts.preconditions is not None:
                    store.check_storage_preconditions(current, opts.preconditions)
                out = try_update(current)
            else:
                out = store.storage.guaranteed_update(
                    key,
                    try_update,
                    preconditions=opts.preconditions,
                    ttl_seconds=strategy.ttl_seconds,
                )
        except Raised as raised:
            raise raised.error from None
        except _DeleteNow:
            return _Marked(read, True, state["last"])
        except _AlreadyDeleting:
            return _Marked(read, False, None)
        except KStoreError as exc:
            raise store.interpret_error(exc, name) from None
        if state["pending"] or state["graceful"] > 0:
            return _Marked(out, False, state["last"])
        return _Marked(out, True, state["last"])

    def delete_collection(
        self, ctx: RequestContext, list_opts: ListOptions, opts: DeleteOptions
    ) -> Sequence[Object]:
        """Delete every object the list selects, page by page (10,000 unless the caller set
        a limit, in which case only one page); returns the objects listed for deletion."""
        store = self._store
        validate_delete_options(opts)
        has_limit = list_opts.limit > 0
        page_opts = (
            list_opts if has_limit else replace(list_opts, limit=DELETE_COLLECTION_PAGE_SIZE)
        )
        deleted: list[Object] = []
        while True:
            page = store.list(ctx, page_opts)
            for item in page.items:
                item_meta = read_meta(item)
                item_ctx = ctx
                if store.info.namespaced and not ctx.namespace:
                    item_ctx = replace(ctx, namespace=str(item_meta.get("namespace") or ""))
                try:
                    store.delete(item_ctx, str(item_meta.get("name") or ""), opts)
                except NotFound:
                    continue
                deleted.append(item)
            if has_limit or not page.continue_token:
                return deleted
            page_opts = replace(
                page_opts,
                continue_token=page.continue_token,
                resource_version="",
                resource_version_match=ResourceVersionMatch.UNSET,
            )
