"""The built-in kinds kstore serves: core/v1, apps, coordination.k8s.io, and the meta kinds."""

from __future__ import annotations

from functools import cache

from kstore.api.kinds import apps, coordination, core, meta
from kstore.api.scheme import Scheme, SchemeBuilder

__all__ = ["builtin_scheme", "builtin_scheme_builder"]


def builtin_scheme_builder() -> SchemeBuilder:
    """A builder holding every built-in kind; add your own kinds, then ``build()``."""
    builder = SchemeBuilder()
    builder.add(*core.DEFINITIONS, *apps.DEFINITIONS, *coordination.DEFINITIONS, *meta.DEFINITIONS)
    return builder


@cache
def builtin_scheme() -> Scheme:
    """The built-in kinds with the default runtime config (shared, immutable)."""
    return builtin_scheme_builder().build()
