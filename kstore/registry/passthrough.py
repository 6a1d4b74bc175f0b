"""Errors raised by the registry's own code inside a storage call, kept apart from storage's.

The store re-words storage errors for its resource (``/services/specs`` is ``services``; a
precondition failure reads ``Operation cannot be fulfilled on services "x": ...``). An error
that the registry's own function raises inside ``guaranteed_update`` or a deletion check (an
update function's 409 apply conflict, an admission hook's 403, the resourceVersion 409) is
already worded for the client and must reach it as it is: :func:`guarded` wraps such errors in
:class:`Raised` on their way through the storage call, and the caller unwraps them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from kstore.errors import KStoreError

__all__ = ["Raised", "guarded"]

_F = TypeVar("_F", bound=Callable[..., Any])


class Raised(Exception):
    """A kstore error of the registry's own code, carried through a storage call."""

    def __init__(self, error: KStoreError) -> None:
        super().__init__(error.message)
        self.error = error


def guarded(fn: _F) -> _F:
    """``fn`` with its kstore errors wrapped in :class:`Raised`."""

    def wrapped(*args: Any) -> Any:
        try:
            return fn(*args)
        except KStoreError as exc:
            raise Raised(exc) from exc

    return cast(_F, wrapped)
