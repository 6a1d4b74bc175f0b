"""Storage-version migration and the store check, over a registry.

**Migration** (``kstore storage migrate``, and ``kstore encryption rewrite``, which is the same
code path restricted to the resources an EncryptionConfiguration names) rewrites every object
whose stored bytes are not what the registry would store now: another storage version (a
built-in kind's, or a CRD's after its ``storage: true`` version changed), another media type
(``--storage-media-type`` changed), or another encryption provider or key. It reads each object
and writes it back unchanged through ``guaranteed_update``
(:func:`kstore.storage.encryption.rewrite`): the storage encodes the object again, and writes
only when the bytes differ from those stored or the transformer calls them stale, as a
compare-and-swap that never overwrites a concurrent write (it retries on the fresh object).
So an object already current costs a read and an encode, and an interrupted migration (even
kill -9) is resumed by running it again: it re-scans, skipping what is current.

When every object of a custom resource was examined, its CRD's ``status.storedVersions``
becomes the storage version alone (a ``status`` update with the same compare-and-swap; left
alone if the CRD's storage version changed meanwhile), which is what lets a later CRD update
drop the old versions.

Custom resources are served here the way the CRD controller serves them: every
``Established`` CRD stored is turned into its kind before the migration starts.

**Check** (``kstore check``) reads every stored key (one point in time) and decodes each value
through its resource's value transformer and codec, counting keys per resource; a value that
does not decode and a key that belongs to no served resource (outside the key layout, or a
resource this server does not serve) are reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kstore.api.custom_kinds import CRD_GROUP, CRD_RESOURCE, ESTABLISHED, condition_true
from kstore.api.gvk import Object
from kstore.errors import Conflict, NotFound
from kstore.registry.interface import RequestContext, UpdateOptions
from kstore.registry.registry import StoreRegistry
from kstore.storage.encryption.rewrite import RewriteResult, RewriteTarget, rewrite
from kstore.storage.interface import ListOptions

__all__ = [
    "CheckResult",
    "check_values",
    "migrate_storage",
    "serve_custom_resources",
]

_MANAGER = "kstore-storage-migrator"


def serve_custom_resources(registry: StoreRegistry) -> int:
    """Serve every Established CRD's kind (as the CRD controller would); how many."""
    from kstore.api.custom_kinds import kind_definition_for

    crds = registry.store(CRD_GROUP, CRD_RESOURCE).list(RequestContext(), ListOptions()).items
    definitions = []
    for crd in crds:
        if not condition_true(crd, ESTABLISHED):
            continue
        definition = kind_definition_for(crd)
        if definition is not None:
            definitions.append(definition)
    if definitions:
        registry.apply_scheme(registry.scheme.with_definitions(add=definitions))
    return len(definitions)


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _storage_version(crd: Object) -> str:
    for version in _map(crd.get("spec")).get("versions") or []:
        if isinstance(version, dict) and version.get("storage") is True:
            return str(version.get("name") or "")
    return ""


class _Unchanged(Exception):
    pass


def _set_stored_versions(registry: StoreRegistry, group: str, plural: str) -> str | None:
    """storedVersions = [storage version] on the CRD of ``plural.group``; the version set,
    or None when there is no such CRD or nothing to change."""
    store = registry.store(CRD_GROUP, CRD_RESOURCE)
    name = f"{plural}.{group}"
    try:
        crd = store.get(RequestContext(), name)
    except NotFound:
        return None
    wanted = _storage_version(crd)
    if not wanted:
        return None

    def updated(current: Object) -> Object:
        if _storage_version(current) != wanted:
            raise _Unchanged  # the storage version moved on: a later migration settles it
        status = dict(_map(current.get("status")))
        if status.get("storedVersions") == [wanted]:
            raise _Unchanged
        status["storedVersions"] = [wanted]
        return {**current, "status": status}

    try:
        store.update(
            RequestContext(),
            name,
            updated,
            UpdateOptions(field_manager=_MANAGER, subresource="status"),
        )
    except (_Unchanged, NotFound, Conflict):
        return None
    return wanted


def migrate_storage(
    registry: StoreRegistry,
    covers: Callable[[str, str], bool],
    *,
    on_done: Callable[[RewriteResult], None] | None = None,
    on_stored_versions: Callable[[str, str], None] | None = None,
    page_size: int = 500,
) -> list[RewriteResult]:
    """Rewrite every object of the resources ``covers(group, plural)`` selects (see the module
    docstring); then the storedVersions of their CRDs."""
    custom = {
        (str(_map(crd.get("spec")).get("group") or ""), plural)
        for crd in registry.store(CRD_GROUP, CRD_RESOURCE)
        .list(RequestContext(), ListOptions())
        .items
        if (plural := str(_map(_map(crd.get("spec")).get("names")).get("plural") or ""))
    }
    targets: list[RewriteTarget] = registry.rewrite_targets(covers)
    results: list[RewriteResult] = []

    def done(result: RewriteResult) -> None:
        results.append(result)
        if on_done is not None:
            on_done(result)
        if (result.group, result.resource) in custom:
            version = _set_stored_versions(registry, result.group, result.resource)
            if version is not None and on_stored_versions is not None:
                on_stored_versions(f"{result.resource}.{result.group}", version)

    rewrite(targets, page_size=page_size, on_done=done)
    return results


@dataclass(kw_only=True, slots=True)
class CheckResult:
    keys: int = 0
    resources: Counter[str] = field(default_factory=Counter)
    undecodable: list[tuple[str, str]] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.undecodable and not self.outside


def check_values(registry: StoreRegistry, entries: Iterable[tuple[bytes, bytes]]) -> CheckResult:
    """Decode every ``(key, stored bytes)`` through its resource's storage (see the module
    docstring). A key ``b"?"`` marks a record outside the backend's own layout (its name as
    the value)."""
    targets = registry.rewrite_targets(lambda _group, _plural: True)
    by_prefix = {t.resource_prefix.rstrip("/") + "/": t for t in targets}
    prefixes = sorted(by_prefix, key=len, reverse=True)
    result = CheckResult()
    for raw_key, value in entries:
        if raw_key == b"?":
            result.outside.append(value.decode("utf-8", "replace"))
            continue
        result.keys += 1
        key = raw_key.decode("utf-8", "replace")
        target = next((by_prefix[p] for p in prefixes if key.startswith(p)), None)
        decode = getattr(target.storage, "decode_stored", None) if target else None
        if target is None or decode is None:
            result.outside.append(key)
            continue
        result.resources[target.qualified] += 1
        try:
            decode(key, value)
        except Exception as exc:
            result.undecodable.append((key, str(exc)))
    return result
