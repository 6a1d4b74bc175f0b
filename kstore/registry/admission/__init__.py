"""The admission chain: hooks embedders register, run around every write.

Mutating hooks run first, in the order they were added, and may change the object in place
(all of them once more when one asks for it: Kubernetes' reinvocation, after a webhook changed
the object); validating hooks run after them (and after the kind's own validation), in order,
and may only reject: a hook added with ``reads_only=True`` promises not to change the object
and is given it as it is (the built-in plugins: copying a Pod was 8% of its create's CPU),
every other one shares a single copy made for them. The reads of one pass (of either phase)
catch up with other processes sharing the store once (:mod:`kstore.storage.read_point`). A
hook rejects by raising a kstore error (``Forbidden``, ``Invalid``, ...); anything else it
raises becomes a 500. Warnings a hook appends to ``attributes.warnings`` are returned with the
response.

Where each phase runs follows Kubernetes: on create, mutating hooks see the request object
before the server fills system fields and validating hooks the final object; on update both
see the new object with the stored one as ``old_object``; on delete both see ``object=None``
and the stored object as ``old_object``, inside the storage transaction (so they may run once
per conflict retry). Dry-run requests run every hook with ``dry_run=True``.

Adding hooks is thread-safe and takes effect for requests that start afterwards. A hook is
taken to block (to do I/O or wait) unless it is added with ``blocking=False``, or with a probe
(``blocking=callable``) saying whether it may block now (the webhook plugins: while any webhook
is configured); while no hook may block, a server on local storage runs creates, updates and
patches on its event loop, hooks included (see
:attr:`kstore.registry.interface.Registry.writes_on_loop`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from kstore.api.gvk import Object
from kstore.errors import InternalError, KStoreError
from kstore.registry.interface import AdmissionAttributes, AdmissionHook
from kstore.registry.strategies.base import copy_value
from kstore.storage.read_point import single_sync

__all__ = ["AdmissionChain"]


class AdmissionChain:
    """Ordered mutating and validating hooks (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # Replaced, never mutated, so a request iterates a stable snapshot without locking.
        self._mutating: tuple[AdmissionHook, ...] = ()
        # Each validating hook with whether it only reads the object.
        self._validating: tuple[tuple[AdmissionHook, bool], ...] = ()
        self._may_block = False
        self._probes: tuple[Callable[[], bool], ...] = ()

    def add(
        self,
        *,
        mutating: AdmissionHook | None = None,
        validating: AdmissionHook | None = None,
        blocking: bool | Callable[[], bool] = True,
        reads_only: bool = False,
    ) -> None:
        with self._lock:
            if mutating is not None or validating is not None:
                if callable(blocking):
                    self._probes = (*self._probes, blocking)
                elif blocking:
                    self._may_block = True
            if mutating is not None:
                self._mutating = (*self._mutating, mutating)
            if validating is not None:
                self._validating = (*self._validating, (validating, reads_only))

    @property
    def empty(self) -> bool:
        return not self._mutating and not self._validating

    @property
    def may_block(self) -> bool:
        """Whether any hook was added as blocking, or a probe says its hook may block now."""
        return self._may_block or any(probe() for probe in self._probes)

    @property
    def has_validating(self) -> bool:
        return bool(self._validating)

    def mutate(self, attributes: AdmissionAttributes) -> None:
        """Every mutating hook in order; once more, all of them, when one asked for it
        (``attributes.reinvoke``: Kubernetes' reinvocation, at most one extra pass)."""
        hooks = self._mutating
        with single_sync():
            for hook in hooks:
                _run(hook, attributes)
            if attributes.reinvoke and not attributes.reinvoking:
                attributes.reinvoking = True
                for hook in hooks:
                    _run(hook, attributes)

    def validate(self, attributes: AdmissionAttributes) -> None:
        """Every validating hook in order: those that only read see ``attributes.object``
        itself, the others one copy of it (made when the first of them runs)."""
        original = attributes.object
        private: Object | None = None
        try:
            with single_sync():
                for hook, reads_only in self._validating:
                    if reads_only:
                        attributes.object = original
                    else:
                        if private is None:
                            private = copy_value(original)
                        attributes.object = private
                    _run(hook, attributes)
        finally:
            attributes.object = original


def _run(hook: AdmissionHook, attributes: AdmissionAttributes) -> None:
    try:
        hook(attributes)
    except KStoreError:
        raise
    except Exception as exc:
        raise InternalError(f"Internal error occurred: admission hook failed: {exc}") from exc
