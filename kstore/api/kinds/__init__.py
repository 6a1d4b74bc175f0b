"""The built-in kinds kstore serves: core/v1, apps, coordination.k8s.io, and the meta kinds.

Their structural schemas (which fields each version has, for ``fieldValidation``) come from the
protobuf descriptors of the same kinds, so the wire format and the field checks cannot drift.
"""

from __future__ import annotations

import dataclasses
from functools import cache

from kstore.api.gvk import GroupVersionKind
from kstore.api.kinds import apps, coordination, core, meta
from kstore.api.proto_schema import schema_for_gvk
from kstore.api.scheme import KindDefinition, Scheme, SchemeBuilder

__all__ = ["builtin_scheme", "builtin_scheme_builder"]


def _with_schemas(definition: KindDefinition) -> KindDefinition:
    versions = tuple(
        v
        if v.schema is not None
        else dataclasses.replace(
            v, schema=schema_for_gvk(GroupVersionKind(definition.group, v.version, definition.kind))
        )
        for v in definition.versions
    )
    return dataclasses.replace(definition, versions=versions)


@cache
def _builtin_definitions() -> tuple[KindDefinition, ...]:
    every = (*core.DEFINITIONS, *apps.DEFINITIONS, *coordination.DEFINITIONS, *meta.DEFINITIONS)
    return tuple(_with_schemas(d) for d in every)


def builtin_scheme_builder() -> SchemeBuilder:
    """A builder holding every built-in kind; add your own kinds, then ``build()``."""
    return SchemeBuilder().add(*_builtin_definitions())


@cache
def builtin_scheme() -> Scheme:
    """The built-in kinds with the default runtime config (shared, immutable)."""
    return builtin_scheme_builder().build()
