"""The ``root-ca-cert-publisher`` controller: a ``kube-root-ca.crt`` ConfigMap in every namespace.

Its ``ca.crt`` key holds the PEM certificate(s) clients in the cluster trust the API server
with. The controller creates the ConfigMap in every namespace that is not Terminating, puts
``ca.crt`` back when it is edited, and re-creates the ConfigMap when it is deleted. Which
certificate is published is decided by whoever starts the controller
(:func:`read_root_ca`); without one this controller is not run.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar, Final

from kstore.api.gvk import GroupVersion, Object
from kstore.controllers.base import Controller, ControllerTimings
from kstore.controllers.serviceaccounts import namespace_active
from kstore.errors import AlreadyExists, BadRequest, Forbidden
from kstore.registry.interface import Registry, RequestContext, UpdateOptions

__all__ = ["ROOT_CA_CONFIG_MAP", "RootCAPublisher", "read_root_ca"]

ROOT_CA_CONFIG_MAP: Final = "kube-root-ca.crt"
_KEY: Final = "ca.crt"
_NAMESPACES: Final = ("", "namespaces")
_CONFIG_MAPS: Final = ("", "configmaps")
_PEM_END: Final = "-----END CERTIFICATE-----"


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def read_root_ca(root_ca_file: Path | None, tls_cert_file: Path | None) -> str | None:
    """The CA to publish: ``root_ca_file`` as it is (kube-controller-manager's
    ``--root-ca-file``); else the last certificate of the serving chain in ``tls_cert_file``
    (its most-root certificate: the CA that signed the chain when the file carries it, the
    certificate itself when it is self-signed); else None (nothing is published)."""
    if root_ca_file is not None:
        text = _read(root_ca_file, "--root-ca-file")
        if _PEM_END not in text:
            raise BadRequest(f"--root-ca-file {root_ca_file}: no PEM certificate in it")
        return text
    if tls_cert_file is None:
        return None
    text = _read(tls_cert_file, "--tls-cert-file")
    blocks = [b for b in text.split(_PEM_END) if "-----BEGIN CERTIFICATE-----" in b]
    if not blocks:
        return None
    last = blocks[-1]
    return last[last.index("-----BEGIN CERTIFICATE-----") :] + _PEM_END + "\n"


def _read(path: Path, flag: str) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        raise BadRequest(f"{flag} {path}: {exc.strerror}") from None


class RootCAPublisher(Controller):
    name: ClassVar[str] = "root-ca-cert-publisher"
    watches: ClassVar[tuple[tuple[str, str], ...]] = (_NAMESPACES, _CONFIG_MAPS)
    # Only the published ConfigMaps: holding every ConfigMap would cost their whole size.
    field_selectors: ClassVar[dict[tuple[str, str], str]] = {
        _CONFIG_MAPS: f"metadata.name={ROOT_CA_CONFIG_MAP}"
    }

    def __init__(
        self, registry: Registry, *, root_ca: str, timings: ControllerTimings | None = None
    ) -> None:
        super().__init__(registry, timings=timings)
        self.root_ca = root_ca

    def keys_for(self, watched: tuple[str, str], key: str, obj: Object | None) -> Iterable[str]:
        if watched == _NAMESPACES:
            return (key,)
        namespace, _, name = key.partition("/")
        return (namespace,) if name == ROOT_CA_CONFIG_MAP else ()

    def reconcile(self, key: str) -> None:
        if not namespace_active(self.informer(*_NAMESPACES).get(key)):
            return
        current = self.informer(*_CONFIG_MAPS).get(f"{key}/{ROOT_CA_CONFIG_MAP}")
        wanted = {_KEY: self.root_ca}
        if current is None:
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": ROOT_CA_CONFIG_MAP, "namespace": key},
                "data": wanted,
            }
            try:
                self.create(*_CONFIG_MAPS, key, body)
            except (AlreadyExists, Forbidden):
                return
            return
        if current.get("data") == wanted and not current.get("binaryData"):
            return

        def published(stored: Object) -> Object:
            out = {k: v for k, v in stored.items() if k != "binaryData"}
            out["data"] = dict(wanted)
            return out

        ctx = RequestContext(namespace=key, request_version=GroupVersion("", "v1"))
        opts = UpdateOptions(field_manager=f"kstore-{self.name}-controller")
        self.store(*_CONFIG_MAPS).update(ctx, ROOT_CA_CONFIG_MAP, published, opts)
