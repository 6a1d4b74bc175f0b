"""PATCH (``patch``): json-patch, merge-patch, strategic-merge-patch and server-side apply.

Patch application itself belongs to the registry (:mod:`kstore.registry.patch`); this handler
reads the patch type from ``Content-Type`` and answers 415 ``UnsupportedMediaType`` for any
other type, as Kubernetes does.
"""

from __future__ import annotations

from kstore.errors import UnsupportedMediaType
from kstore.server.handlers.scope import Call, Reply, ResourceScope

__all__ = ["PATCH_TYPES", "patch"]

PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


def patch_type(content_type: str | None) -> str:
    base = (content_type or "").split(";", 1)[0].strip().lower()
    if base not in PATCH_TYPES:
        raise UnsupportedMediaType(
            "the body of the request was in an unknown format - accepted media types include: "
            + ", ".join(PATCH_TYPES)
        )
    return base


def patch(scope: ResourceScope, call: Call) -> Reply:
    kind = patch_type(call.content_type)
    raise UnsupportedMediaType(f"{kind} patches are not available on this server yet")
