"""The Scheme: every kind kstore knows, its versions, and how to move an object between them.

A kind is registered once with a :class:`KindDefinition`: its group, its external versions
(each with optional defaulting, conversion to and from the hub, and a structural schema), its
storage version, its validation (run on the hub form), and, when it is an API resource, its
:class:`ResourceInfo`. A :class:`SchemeBuilder` collects definitions; :meth:`SchemeBuilder.build`
returns a frozen :class:`Scheme`.

Invariants the Scheme keeps:

- conversion always goes external -> hub -> external, so N versions need 2N functions;
- converters never mutate their input; they may share untouched sub-trees with it, so every
  object that passes through the Scheme is treated as read-only unless the caller owns it;
- defaulting runs on an external object the caller owns (freshly decoded), in place;
- ``hub -> v -> hub`` is the identity for every version ``v`` (fields a version cannot express
  are kept by its converter, e.g. in an annotation), which tests check for every kind;
- a kind whose conversions call out (a CRD's conversion webhook: :attr:`KindDefinition.
  conversion_blocks`) is converted only off the event loop; its versions may convert many
  objects in one call (:meth:`Scheme.from_hub_many`), as a list answer does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

from kstore.api.gvk import HUB_VERSION, GroupVersion, GroupVersionKind, Object, gvk_of
from kstore.api.schema import FieldSchema
from kstore.errors import BadRequest, Cause, Invalid, NotFound

__all__ = [
    "BatchConverter",
    "Converter",
    "Defaulter",
    "KindDefinition",
    "KindVersion",
    "Lifecycle",
    "PrinterColumn",
    "ResourceInfo",
    "ScalePaths",
    "SchemaRules",
    "Scheme",
    "SchemeBuilder",
    "UpdateValidator",
    "Validator",
    "version_stability",
]

#: Turns an object of one version into another; must not mutate its argument.
Converter = Callable[[Object], Object]
#: Converts many objects of one version at once (in order); must not mutate its arguments.
BatchConverter = Callable[[Sequence[Object]], list[Object]]
#: Fills defaults into an external object the caller owns, in place.
Defaulter = Callable[[Object], None]
#: Validates a hub object; returns one cause per problem (empty when valid).
Validator = Callable[[Object], list[Cause]]
#: Validates an update of a hub object (new, old); returns one cause per problem.
UpdateValidator = Callable[[Object, Object], list[Cause]]

DEFAULT_VERBS = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)


def version_stability(version: str) -> str:
    """``alpha``, ``beta`` or ``ga``, from a Kubernetes version name such as ``v2beta1``."""
    if "alpha" in version:
        return "alpha"
    if "beta" in version:
        return "beta"
    return "ga"


@dataclass(frozen=True, kw_only=True, slots=True)
class ScalePaths:
    """Where a kind defined by data keeps what its ``scale`` subresource shows (a CRD's
    ``subresources.scale``): simple JSON paths such as ``.spec.replicas``; the label selector
    path, when given, names a string in its serialized form."""

    spec_replicas: str
    status_replicas: str
    label_selector: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class ResourceInfo:
    """How a kind is exposed as an API resource (discovery, URLs, storage keys)."""

    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = DEFAULT_VERBS
    subresources: tuple[str, ...] = ()
    #: The ``scale`` subresource's paths, for kinds defined by data (None: the built-in kinds'
    #: ``spec.replicas``, ``status.replicas`` and ``spec.selector``).
    scale: ScalePaths | None = None
    #: The storage key prefix, when the kind's rule is not the built-in one (custom resources
    #: live under ``/<group>/<plural>`` whatever their group).
    key_prefix: str = ""
    #: Why creates are refused (405) while the kind is still served, e.g. its CRD is being
    #: deleted; "" when they are not.
    create_refused: str = ""


class SchemaRules(Protocol):
    """What a version's schema says of an object, for kinds defined by data (a CRD version's
    OpenAPI schema, list types and CEL rules), beside the kind's own validation."""

    def prune(self, obj: Object) -> list[str]:
        """Drop the fields the schema does not declare (in place); their paths, which
        ``fieldValidation`` reports as unknown fields."""
        ...

    @property
    def type_node(self) -> Any:
        """The object's type tree for server-side apply (a :class:`~kstore.api.patch_meta.
        TypeNode`: list types and map keys from the schema)."""
        ...

    def validate(self, obj: Object) -> list[Cause]:
        """The schema's causes against ``obj`` (field paths from the object's root)."""
        ...

    def validate_update(
        self, obj: Object, old: Object, warnings: list[str] | None = None
    ) -> list[Cause]:
        """As :meth:`validate`, with the rules that compare ``obj`` with ``old`` and
        Kubernetes' ratcheting of unchanged values; what ratcheting turns into warnings
        goes to ``warnings`` when given."""
        ...


@dataclass(frozen=True, kw_only=True, slots=True)
class PrinterColumn:
    """A column ``kubectl get`` prints for a kind defined by data (a CRD's
    ``additionalPrinterColumns``): the value at ``json_path``, typed ``integer``, ``number``,
    ``string``, ``boolean`` or ``date`` (printed as an age); ``priority`` > 0 only with
    ``-o wide``."""

    name: str
    type: str
    json_path: str
    format: str = ""
    description: str = ""
    priority: int = 0


Release = tuple[int, int]


@dataclass(frozen=True, kw_only=True, slots=True)
class Lifecycle:
    """Where a served version stands in Kubernetes' release lifecycle, and the ``Warning``
    kube-apiserver adds to every request to it once it is deprecated.

    A built-in version carries prerelease-lifecycle-gen's data for its kind: the releases
    (major, minor) it was ``introduced``, ``deprecated`` and ``removed`` in, and its
    ``replacement``; the warning is due once the server's release has reached ``deprecated``.
    A CRD version marked ``deprecated`` carries the text to send instead (``warning``: its
    ``deprecationWarning``, or the default Kubernetes words; ``""`` sends nothing).
    """

    introduced: Release | None = None
    deprecated: Release | None = None
    removed: Release | None = None
    replacement: GroupVersionKind | None = None
    warning: str | None = None

    def deprecation_warning(self, gvk: GroupVersionKind, release: Release) -> str:
        """The warning of a request to ``gvk`` on a server at ``release`` ("" when none), in
        the words of Kubernetes' ``deprecation.WarningMessage``."""
        if self.warning is not None:
            return self.warning
        if self.deprecated is None or self.deprecated > release:
            return ""
        major, minor = self.deprecated
        text = f"{gvk.api_version} {gvk.kind} is deprecated in v{major}.{minor}+"
        if self.removed is not None:
            text += f", unavailable in v{self.removed[0]}.{self.removed[1]}+"
        if self.replacement is not None:
            text += f"; use {self.replacement.api_version} {self.replacement.kind}"
        return text


@dataclass(frozen=True, kw_only=True, slots=True)
class KindVersion:
    """One external version of a kind.

    ``to_hub``/``from_hub`` of ``None`` mean the version has the hub's shape: conversion only
    rewrites ``apiVersion``. ``enabled`` of ``None`` means "by stability": GA and beta versions
    are served, alpha versions only when the runtime config enables them.
    """

    version: str
    to_hub: Converter | None = None
    from_hub: Converter | None = None
    #: ``from_hub`` for many objects in one call (None: ``from_hub`` one by one).
    from_hub_many: BatchConverter | None = None
    default: Defaulter | None = None
    schema: FieldSchema | None = None
    enabled: bool | None = None
    #: The columns of kinds without a printer of their own (empty: Name and Created At).
    printer_columns: tuple[PrinterColumn, ...] = ()
    #: The version's OpenAPI v3 schema, for kinds defined by data (a CRD version's
    #: ``openAPIV3Schema``); built-in kinds' schemas come from their protobuf messages.
    openapi_schema: Mapping[str, Any] | None = None
    #: The rules of that schema, compiled once (None: the kind has no schema to validate by).
    schema_rules: SchemaRules | None = None
    #: The version's release lifecycle (None: not deprecated, nothing to warn of).
    lifecycle: Lifecycle | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class KindDefinition:
    """Everything the Scheme knows of one kind."""

    group: str
    kind: str
    versions: tuple[KindVersion, ...]
    storage_version: str = ""
    resource: ResourceInfo | None = None
    validate: Validator | None = None
    validate_update: UpdateValidator | None = None
    #: Extra field-selector fields beyond metadata.name/metadata.namespace (e.g. Pod spec.nodeName).
    field_labels: Callable[[Object], Mapping[str, str]] | None = None
    list_kind: str = ""
    #: Whether converting between its versions may block (calls a conversion webhook): the
    #: server then converts its objects on worker threads, never on the event loop.
    conversion_blocks: bool = False

    def version(self, version: str) -> KindVersion:
        for v in self.versions:
            if v.version == version:
                return v
        raise NotFound(f'no version "{version}" of kind {self.kind} in group "{self.group}"')

    @property
    def hub_api_version(self) -> str:
        return GroupVersion(self.group, HUB_VERSION).api_version

    @property
    def storage_group_version(self) -> GroupVersion:
        return GroupVersion(self.group, self.storage_version or self.versions[0].version)


@dataclass(frozen=True, slots=True)
class _Entry:
    definition: KindDefinition
    version: KindVersion


@dataclass(frozen=True, slots=True)
class RegisteredResource:
    """A resource served at one group/version, as discovery and the router see it."""

    group_version: GroupVersion
    definition: KindDefinition

    @property
    def info(self) -> ResourceInfo:
        assert self.definition.resource is not None
        return self.definition.resource

    @property
    def gvk(self) -> GroupVersionKind:
        return self.group_version.with_kind(self.definition.kind)


class SchemeBuilder:
    """Collects kind definitions; :meth:`build` freezes them into a :class:`Scheme`."""

    def __init__(self) -> None:
        self._definitions: dict[tuple[str, str], KindDefinition] = {}

    def add(self, *definitions: KindDefinition) -> SchemeBuilder:
        for d in definitions:
            key = (d.group, d.kind)
            if key in self._definitions:
                raise ValueError(f"kind {d.kind} in group {d.group!r} is registered twice")
            if not d.versions:
                raise ValueError(f"kind {d.kind} has no versions")
            names = [v.version for v in d.versions]
            if len(set(names)) != len(names) or HUB_VERSION in names:
                raise ValueError(f"kind {d.kind} has duplicate or reserved version names")
            if d.storage_version and d.storage_version not in names:
                raise ValueError(
                    f"storage version {d.storage_version} of {d.kind} is not a version"
                )
            self._definitions[key] = d
        return self

    def extend(self, other: SchemeBuilder) -> SchemeBuilder:
        return self.add(*other._definitions.values())

    def build(self, runtime_config: Mapping[str, bool] | None = None) -> Scheme:
        """Freeze the registered kinds.

        ``runtime_config`` follows ``--runtime-config``: keys are ``group/version`` (``v1`` for
        the core group), ``api/all``, ``api/alpha``, ``api/beta`` or ``api/ga``; values enable or
        disable serving. Conversion works for every registered version either way.
        """
        return Scheme(self._definitions.values(), runtime_config or {})


class Scheme:
    """A frozen registry of kinds. Thread-safe: it never changes after construction.

    The kinds served can still change while a server runs (a CustomResourceDefinition created
    or deleted): :meth:`with_definitions` makes the next Scheme, and whoever holds the current
    one swaps it whole, so that a request that took a Scheme sees one consistent set of kinds
    to its end.
    """

    def __init__(self, definitions: Iterable[KindDefinition], runtime_config: Mapping[str, bool]):
        self._runtime_config = MappingProxyType(dict(runtime_config))
        by_gvk: dict[GroupVersionKind, _Entry] = {}
        kinds: dict[tuple[str, str], KindDefinition] = {}
        served: dict[GroupVersionKind, bool] = {}
        for d in definitions:
            kinds[(d.group, d.kind)] = d
            for v in d.versions:
                gvk = GroupVersionKind(d.group, v.version, d.kind)
                by_gvk[gvk] = _Entry(d, v)
                served[gvk] = _is_enabled(d.group, v, runtime_config)
        self._by_gvk = MappingProxyType(by_gvk)
        self._kinds = MappingProxyType(kinds)
        self._served = MappingProxyType(served)
        resources: dict[tuple[GroupVersion, str], RegisteredResource] = {}
        for gvk, entry in by_gvk.items():
            if entry.definition.resource is None or not served[gvk]:
                continue
            gv = gvk.group_version
            resources[(gv, entry.definition.resource.plural)] = RegisteredResource(
                gv, entry.definition
            )
        self._resources = MappingProxyType(resources)

    def with_definitions(
        self,
        add: Iterable[KindDefinition] = (),
        remove: Iterable[tuple[str, str]] = (),
    ) -> Scheme:
        """A new Scheme: this one's kinds less ``remove`` (``(group, kind)`` pairs; absent ones
        are ignored), plus ``add`` (replacing a kind of the same group and name), under the
        same runtime config. This Scheme is left as it is."""
        kinds = dict(self._kinds)
        for key in remove:
            kinds.pop(key, None)
        for d in add:
            SchemeBuilder().add(d)  # the same checks as a kind registered at start
            kinds[(d.group, d.kind)] = d
        return Scheme(kinds.values(), self._runtime_config)

    # ----------------------------------------------------------------- lookups

    def definition(self, group: str, kind: str) -> KindDefinition:
        try:
            return self._kinds[(group, kind)]
        except KeyError:
            raise NotFound(f'no kind "{kind}" is registered in group "{group}"') from None

    def definitions(self) -> Sequence[KindDefinition]:
        return tuple(self._kinds.values())

    def recognizes(self, gvk: GroupVersionKind) -> bool:
        return gvk in self._by_gvk

    def is_served(self, gvk: GroupVersionKind) -> bool:
        return self._served.get(gvk, False)

    def kind_version(self, gvk: GroupVersionKind) -> KindVersion:
        return self._entry(gvk).version

    def definition_for(self, gvk: GroupVersionKind) -> KindDefinition:
        if gvk.version == HUB_VERSION:
            return self.definition(gvk.group, gvk.kind)
        return self._entry(gvk).definition

    def resource(self, group_version: GroupVersion, plural: str) -> RegisteredResource:
        try:
            return self._resources[(group_version, plural)]
        except KeyError:
            raise NotFound(
                f"the server could not find the requested resource ({plural} "
                f"{group_version.api_version})"
            ) from None

    def resources(self) -> Sequence[RegisteredResource]:
        """Every served resource, sorted by group/version then plural name."""
        return tuple(v for _, v in sorted(self._resources.items(), key=lambda kv: kv[0]))

    def served_group_versions(self) -> Sequence[GroupVersion]:
        return tuple(sorted({gv for gv, _ in self._resources}))

    def _entry(self, gvk: GroupVersionKind) -> _Entry:
        try:
            return self._by_gvk[gvk]
        except KeyError:
            raise BadRequest(
                f'no kind "{gvk.kind}" is registered for version "{gvk.api_version}" in scheme'
            ) from None

    # ------------------------------------------------------ defaulting, conversion

    def default(self, obj: Object) -> None:
        """Apply the defaults of the object's own version, in place (the caller owns ``obj``)."""
        defaulter = self._entry(gvk_of(obj)).version.default
        if defaulter is not None:
            defaulter(obj)

    def to_hub(self, obj: Object) -> Object:
        """Convert an external object to its kind's hub form; a hub object is returned as is."""
        gvk = gvk_of(obj)
        if gvk.version == HUB_VERSION:
            self.definition(gvk.group, gvk.kind)
            return obj
        entry = self._entry(gvk)
        if entry.version.to_hub is None:
            out = dict(obj)
        else:
            out = entry.version.to_hub(obj)
        out["apiVersion"] = entry.definition.hub_api_version
        return out

    def from_hub(self, hub: Object, version: str) -> Object:
        """Convert a hub object to ``version`` of its kind."""
        gvk = gvk_of(hub)
        if gvk.version != HUB_VERSION:
            raise BadRequest(f"object of {gvk} is not in the hub version")
        target = GroupVersionKind(gvk.group, version, gvk.kind)
        if version == HUB_VERSION:
            return hub
        entry = self._entry(target)
        if entry.version.from_hub is None:
            out = dict(hub)
        else:
            out = entry.version.from_hub(hub)
        out["apiVersion"] = target.api_version
        return out

    def from_hub_many(self, hubs: Sequence[Object], version: str) -> list[Object]:
        """:meth:`from_hub` of every object of ``hubs`` (all of one kind), in one call of the
        version's batch converter where it has one (a conversion webhook's one review)."""
        if not hubs:
            return []
        gvk = gvk_of(hubs[0])
        if version == HUB_VERSION or gvk.version != HUB_VERSION:
            return [self.from_hub(hub, version) for hub in hubs]
        target = GroupVersionKind(gvk.group, version, gvk.kind)
        batch = self._entry(target).version.from_hub_many
        if batch is None:
            return [self.from_hub(hub, version) for hub in hubs]
        out = batch(hubs)
        for obj in out:
            obj["apiVersion"] = target.api_version
        return out

    def convert(self, obj: Object, api_version: str) -> Object:
        """Convert ``obj`` to ``api_version`` (``group/version``) of the same kind, via the hub.

        An object already in that version is returned unchanged.
        """
        target = GroupVersion.parse(api_version)
        gvk = gvk_of(obj)
        if target.group != gvk.group:
            raise BadRequest(
                f"{gvk.kind} in group {gvk.group!r} cannot be converted to {api_version}"
            )
        if gvk.version == target.version:
            self.definition_for(gvk)
            return obj
        return self.from_hub(self.to_hub(obj), target.version)

    # ---------------------------------------------------------------- validation

    def validate(self, hub: Object) -> None:
        """Validate a hub object on create; raise :class:`Invalid` with every cause."""
        d = self.definition_for(gvk_of(hub))
        if d.validate is not None:
            self._raise_invalid(d, hub, d.validate(hub))

    def validate_update(self, new: Object, old: Object) -> None:
        """Validate a hub object on update; raise :class:`Invalid` with every cause."""
        d = self.definition_for(gvk_of(new))
        causes: list[Cause] = []
        if d.validate_update is not None:
            causes = d.validate_update(new, old)
        elif d.validate is not None:
            causes = d.validate(new)
        self._raise_invalid(d, new, causes)

    @staticmethod
    def _raise_invalid(d: KindDefinition, obj: Object, causes: list[Cause]) -> None:
        if causes:
            meta = obj.get("metadata") or {}
            name = meta.get("name") or meta.get("generateName") or ""
            raise Invalid.for_object(d.kind, str(name), causes, group=d.group)


def _is_enabled(group: str, version: KindVersion, runtime_config: Mapping[str, bool]) -> bool:
    gv = GroupVersion(group, version.version).api_version
    if gv in runtime_config:
        return runtime_config[gv]
    stability = version_stability(version.version)
    if f"api/{stability}" in runtime_config:
        return runtime_config[f"api/{stability}"]
    if "api/all" in runtime_config:
        return runtime_config["api/all"]
    if version.enabled is not None:
        return version.enabled
    return stability != "alpha"
