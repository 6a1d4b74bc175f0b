"""The ``serviceaccount`` controller: a ``default`` ServiceAccount in every namespace.

As kube-controller-manager's: a namespace that is created, or whose ``default``
ServiceAccount is deleted, gets one (again); a namespace that is Terminating (or being
deleted) gets none, since its objects are being removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Final

from kstore.api.gvk import Object
from kstore.controllers.base import Controller
from kstore.errors import AlreadyExists, Forbidden

__all__ = ["ServiceAccountsController", "namespace_active"]

_DEFAULT: Final = "default"
_NAMESPACES: Final = ("", "namespaces")
_SERVICE_ACCOUNTS: Final = ("", "serviceaccounts")


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def namespace_active(namespace: Object | None) -> bool:
    """Whether objects may be created in ``namespace`` (it exists and is not Terminating)."""
    if namespace is None:
        return False
    if _map(namespace.get("metadata")).get("deletionTimestamp"):
        return False
    return _map(namespace.get("status")).get("phase") != "Terminating"


class ServiceAccountsController(Controller):
    name: ClassVar[str] = "serviceaccount"
    watches: ClassVar[tuple[tuple[str, str], ...]] = (_NAMESPACES, _SERVICE_ACCOUNTS)

    def keys_for(self, watched: tuple[str, str], key: str, obj: Object | None) -> Iterable[str]:
        if watched == _NAMESPACES:
            return (key,)
        namespace, _, name = key.partition("/")
        return (namespace,) if name == _DEFAULT else ()

    def reconcile(self, key: str) -> None:
        if not namespace_active(self.informer(*_NAMESPACES).get(key)):
            return
        if self.informer(*_SERVICE_ACCOUNTS).get(f"{key}/{_DEFAULT}") is not None:
            return
        body = {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": _DEFAULT, "namespace": key},
        }
        try:
            self.create(*_SERVICE_ACCOUNTS, key, body)
        except AlreadyExists:
            return  # created meanwhile (its event is on the way)
        except Forbidden:
            return  # the namespace began terminating meanwhile
