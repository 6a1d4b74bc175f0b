"""One catch-up with other processes for all the reads of a short task.

A consistent read on a store that several processes share (LMDB under ``kstore serve
--workers N`` or beside ``kstore.open``) first brings this process's watch hub up to the store's
current revision (:meth:`kstore.storage.lmdb.LmdbBackend.sync`: a read transaction, and the
changes found). An admission pass reads several objects (the namespace, its LimitRanges and
ResourceQuotas, the service account, the priority classes), and catching up before each read
cost more than the reads. Inside ``with single_sync():`` a backend catches up at most once; the
reads after it are then all as of that moment or later, which began after the task did, so each
is still consistent with every write acknowledged before the task started (kube-apiserver's
admission plugins read informers, which promise less).

The scope is task-local (a context variable): other requests on the same event loop or thread
are not affected.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from types import TracebackType

__all__ = ["single_sync", "synced_once"]

#: The revision each backend caught up to within the current scope; None outside any scope.
_SCOPE: ContextVar[dict[int, int] | None] = ContextVar("kstore_single_sync", default=None)


class single_sync:
    """A scope in which each backend catches up with other processes at most once."""

    __slots__ = ("_token",)

    def __init__(self) -> None:
        self._token: Token[dict[int, int] | None] | None = None

    def __enter__(self) -> None:
        if _SCOPE.get() is None:  # nested scopes share the outer one
            self._token = _SCOPE.set({})

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            _SCOPE.reset(self._token)
            self._token = None


def synced_once(owner: object, catch_up: Callable[[], int]) -> int:
    """``catch_up()`` (which returns the revision caught up to), unless ``owner`` already
    caught up in the current :class:`single_sync` scope: then that revision."""
    scope = _SCOPE.get()
    if scope is None:
        return catch_up()
    key = id(owner)
    revision = scope.get(key)
    if revision is None:
        revision = scope[key] = catch_up()
    return revision
