"""Group, version, kind and resource names, and the ``apiVersion`` string rules.

The core group is the empty string; its ``apiVersion`` is the bare version (``v1``). Every other
group's is ``<group>/<version>``. The hub (internal) version of every kind is ``__internal``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kstore.errors import BadRequest

__all__ = [
    "HUB_VERSION",
    "GroupVersion",
    "GroupVersionKind",
    "GroupVersionResource",
    "Object",
    "gvk_of",
    "version_priority",
]

#: An object in memory: a plain dict in its Kubernetes JSON shape.
Object = dict[str, Any]

#: The version name of every kind's hub, as Kubernetes' ``runtime.APIVersionInternal``.
HUB_VERSION = "__internal"


@dataclass(frozen=True, slots=True, order=True)
class GroupVersion:
    group: str
    version: str

    @classmethod
    def parse(cls, api_version: str) -> GroupVersion:
        """Split an ``apiVersion`` such as ``apps/v1`` or ``v1``; BadRequest when malformed."""
        if not isinstance(api_version, str) or not api_version:
            raise BadRequest(f"unexpected GroupVersion string: {api_version!r}")
        group, slash, version = api_version.rpartition("/")
        if slash and (not group or not version or "/" in group):
            raise BadRequest(f"unexpected GroupVersion string: {api_version}")
        if not version:
            raise BadRequest(f"unexpected GroupVersion string: {api_version}")
        return cls(group, version)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def with_kind(self, kind: str) -> GroupVersionKind:
        return GroupVersionKind(self.group, self.version, kind)

    def __str__(self) -> str:
        return self.api_version


@dataclass(frozen=True, slots=True, order=True)
class GroupVersionKind:
    group: str
    version: str
    kind: str

    @classmethod
    def from_api_version(cls, api_version: str, kind: str) -> GroupVersionKind:
        gv = GroupVersion.parse(api_version)
        return cls(gv.group, gv.version, kind)

    @property
    def group_version(self) -> GroupVersion:
        return GroupVersion(self.group, self.version)

    @property
    def api_version(self) -> str:
        # As GroupVersion.api_version, without building one (every conversion asks).
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.api_version}, Kind={self.kind}"


@dataclass(frozen=True, slots=True, order=True)
class GroupVersionResource:
    group: str
    version: str
    resource: str

    @property
    def group_version(self) -> GroupVersion:
        return GroupVersion(self.group, self.version)

    def __str__(self) -> str:
        return f"{self.group_version.api_version}, Resource={self.resource}"


#: Bound on the (apiVersion, kind) pairs :func:`gvk_of` remembers: a scheme has a few
#: hundred, and a client sending made-up ones must not grow it without end.
_DECLARED_SIZE = 4096
_declared: dict[tuple[str, str], GroupVersionKind] = {}


def gvk_of(obj: Object) -> GroupVersionKind:
    """The GVK an object declares; BadRequest when ``apiVersion`` or ``kind`` is missing."""
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if isinstance(api_version, str) and isinstance(kind, str):
        # A write asks several times per object (decode, default, convert, encode): parsed
        # once per pair. Only well-formed pairs are remembered, so errors are raised each time.
        found = _declared.get((api_version, kind))
        if found is not None:
            return found
    if not isinstance(kind, str) or not kind:
        raise BadRequest("Object 'Kind' is missing in the object")
    if not isinstance(api_version, str) or not api_version:
        raise BadRequest(f"Object 'apiVersion' is missing in object of kind {kind!r}")
    gvk = GroupVersionKind.from_api_version(api_version, kind)
    if len(_declared) < _DECLARED_SIZE:
        _declared[(api_version, kind)] = gvk
    return gvk


_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key putting the preferred version first (v1 > v1beta2 > v1beta1 > v1alpha1 > foo),
    Kubernetes' kube-aware version order."""
    m = _VERSION.match(version)
    if m is None:
        return (3, 0, 0, version)
    major = int(m.group(1))
    stability = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    minor = int(m.group(3) or 0)
    return (stability, -major, -minor, version)
