"""The Service store: the generic store with Kubernetes' service allocation around each write.

Every create and update of a Service runs in a :class:`~kstore.registry.allocation.Transaction`:
what the strategy allocates while preparing the object (cluster IPs, node ports, the health
check port) is undone when the write fails (validation, admission, a conflict, a name taken)
and kept when it is stored; what the update frees is released only after it is stored. A
retried update or a retried generated name starts its allocations afresh. A delete that removes
the Service releases all it held.

Allocation reads and writes other objects (IPAddresses, the node port record), so these writes
run on a worker thread when called from an event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from kstore.api.gvk import Object
from kstore.registry.allocation import ServiceAllocator, Transaction, current_transaction
from kstore.registry.interface import (
    CreateOptions,
    DeleteOptions,
    DeleteResult,
    RequestContext,
    UpdatedObject,
    UpdateOptions,
    WriteResult,
)
from kstore.registry.store import GenericStore, _Request
from kstore.storage.interface import GetOptions

__all__ = ["ServiceStore"]

_T = TypeVar("_T")


class ServiceStore(GenericStore):
    """Services, with their allocations (see the module docstring)."""

    allocator: ServiceAllocator | None = None

    def _in_transaction(self, dry_run: bool, write: Callable[[], _T]) -> _T:
        txn = Transaction(dry_run=dry_run)
        token = current_transaction().set(txn)
        try:
            result = write()
        except BaseException:
            txn.revert()
            raise
        finally:
            current_transaction().reset(token)
        txn.commit()
        return result

    # The generic store's blocking writes, which the transaction wraps (also for the async
    # forms, which run them on a worker thread).
    _generic_create = GenericStore.create
    _generic_update = GenericStore.update

    def _create(self, ctx: RequestContext, obj: Object, opts: CreateOptions) -> WriteResult:
        return self._in_transaction(opts.dry_run, lambda: self._generic_create(ctx, obj, opts))

    def _update(
        self, ctx: RequestContext, name: str, updated: UpdatedObject, opts: UpdateOptions
    ) -> WriteResult:
        return self._in_transaction(
            opts.dry_run, lambda: self._generic_update(ctx, name, updated, opts)
        )

    def create(self, ctx: RequestContext, obj: Object, opts: CreateOptions) -> WriteResult:
        return self._create(ctx, obj, opts)

    async def create_async(
        self, ctx: RequestContext, obj: Object, opts: CreateOptions
    ) -> WriteResult:
        return await asyncio.to_thread(self._create, ctx, obj, opts)

    def update(
        self, ctx: RequestContext, name: str, updated: UpdatedObject, opts: UpdateOptions
    ) -> WriteResult:
        return self._update(ctx, name, updated, opts)

    async def update_async(
        self, ctx: RequestContext, name: str, updated: UpdatedObject, opts: UpdateOptions
    ) -> WriteResult:
        return await asyncio.to_thread(self._update, ctx, name, updated, opts)

    @staticmethod
    def _start_afresh() -> None:
        txn = current_transaction().get()
        if txn is not None:
            txn.revert()

    def _prepared_create(
        self, ctx: RequestContext, obj: Object, opts: CreateOptions, request: _Request
    ) -> str:
        self._start_afresh()
        return super()._prepared_create(ctx, obj, opts, request)

    def _updated(
        self,
        ctx: RequestContext,
        name: str,
        current: Object,
        updated: UpdatedObject,
        opts: UpdateOptions,
        allow_create: bool,
        request: _Request,
    ) -> Object:
        self._start_afresh()
        return super()._updated(ctx, name, current, updated, opts, allow_create, request)

    def _delete_emptied(self, key: str, name: str, opts: UpdateOptions) -> None:
        # An update that removed the last finalizer of a Service being deleted deletes it.
        last = self.storage.get(key, GetOptions(ignore_not_found=True))
        super()._delete_emptied(key, name, opts)
        if last and not opts.dry_run and self.allocator is not None:
            self.allocator.release_all(last)

    def delete(self, ctx: RequestContext, name: str, opts: DeleteOptions) -> DeleteResult:
        result = super().delete(ctx, name, opts)
        if result.deleted and not opts.dry_run and self.allocator is not None:
            self.allocator.release_all(result.object)
        return result
