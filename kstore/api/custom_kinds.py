"""The kind a CustomResourceDefinition defines, as a :class:`KindDefinition` the Scheme serves.

:func:`kind_definition_for` reads a stored CRD (``apiextensions.k8s.io/v1``, as a dict) and gives
the definition its custom resources are served with, as kube-apiserver's apiextensions handler
serves them:

- names from ``status.acceptedNames`` (what the naming controller accepted), never from the
  spec directly: a CRD whose names are not accepted yet serves nothing;
- one :class:`KindVersion` per version, served as ``spec.versions[].served`` says, with the
  storage version marked; conversion strategy ``None``: the versions share one shape and only
  ``apiVersion`` changes (the hub is that shape too); strategy ``Webhook``, when the caller
  hands over the function that posts a review (:class:`~kstore.api.conversion_review.
  ConversionWebhook`): the hub has the storage version's shape, and every other version is
  converted to and from it by one review per object, or per list page;
- scope, subresources (``status``, ``scale``) and ``selectableFields`` as field-selector fields;
- each version's ``additionalPrinterColumns`` (an Age column where it has none).

Pure functions over dicts; nothing here knows HTTP or storage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kstore.api.conversion_review import ConversionWebhook, ReviewPost
from kstore.api.custom_schema import VersionSchema
from kstore.api.gvk import Object, version_priority
from kstore.api.scheme import (
    BatchConverter,
    Converter,
    KindDefinition,
    KindVersion,
    Lifecycle,
    PrinterColumn,
    ResourceInfo,
    ScalePaths,
)

__all__ = [
    "CLEANUP_FINALIZER",
    "CRD_GROUP",
    "CRD_RESOURCE",
    "ESTABLISHED",
    "NAMES_ACCEPTED",
    "TERMINATING",
    "CustomConversions",
    "condition_true",
    "conversion_strategy",
    "kind_definition_for",
    "printer_columns",
    "selectable_field_values",
    "set_condition",
]

CRD_GROUP: Final = "apiextensions.k8s.io"
CRD_RESOURCE: Final = "customresourcedefinitions"
#: What deleting a CRD sets, so that its objects are deleted before it goes.
CLEANUP_FINALIZER: Final = "customresourcecleanup.apiextensions.k8s.io"
NAMES_ACCEPTED: Final = "NamesAccepted"
ESTABLISHED: Final = "Established"
TERMINATING: Final = "Terminating"


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def condition_true(crd: Object, condition: str) -> bool:
    """Whether the CRD's status has ``condition`` with status ``True``."""
    for c in _list(_map(crd.get("status")).get("conditions")):
        if isinstance(c, Mapping) and c.get("type") == condition:
            return c.get("status") == "True"
    return False


def _field_value(obj: Object, json_path: str) -> str:
    """The value at a simple ``.a.b`` JSON path, as a field selector sees it ("" when absent)."""
    node: Any = obj
    for part in json_path.lstrip(".").split("."):
        if not isinstance(node, Mapping):
            return ""
        node = node.get(part)
    if node is None or isinstance(node, Mapping | list):
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


def selectable_field_values(paths: tuple[str, ...], obj: Object) -> dict[str, str]:
    """The field-selector fields a version's ``selectableFields`` add, keyed without the dot."""
    return {path.lstrip("."): _field_value(obj, path) for path in paths}


#: What Kubernetes prints for a version that defines no columns (after Name).
_AGE_COLUMN: Final = PrinterColumn(
    name="Age",
    type="date",
    json_path=".metadata.creationTimestamp",
    description="CreationTimestamp is a timestamp representing the server time when this "
    "object was created. It is not guaranteed to be set in happens-before order across "
    "separate operations. Clients may not set this value. It is represented in RFC3339 form "
    "and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
)


def printer_columns(columns: Any) -> tuple[PrinterColumn, ...]:
    """A version's ``additionalPrinterColumns`` (an Age column when it has none)."""
    out = tuple(
        PrinterColumn(
            name=str(c.get("name", "")),
            type=str(c.get("type", "")),
            json_path=str(c.get("jsonPath", "")),
            format=str(c.get("format", "")),
            description=str(c.get("description", "")),
            priority=int(c.get("priority") or 0),
        )
        for c in map(_map, _list(columns))
    )
    return out or (_AGE_COLUMN,)


#: Python conversions an embedder gives for versions of CRD kinds, by ``(apiVersion, kind)``:
#: ``(to_hub, from_hub)`` of that version; the hub has the shape of the versions without one.
CustomConversions = Mapping[tuple[str, str], tuple[Converter, Converter]]


def _lifecycle(spec: Mapping[str, Any], version: Mapping[str, Any]) -> Lifecycle | None:
    """A deprecated version's warning: its ``deprecationWarning``, else Kubernetes' default
    words, naming the newest served version that is not deprecated and newer than it."""
    if version.get("deprecated") is not True:
        return None
    warning = version.get("deprecationWarning")
    if isinstance(warning, str):
        return Lifecycle(warning=warning)
    name = str(version.get("name"))
    group = spec.get("group")
    kind = _map(spec.get("names")).get("kind")
    text = f"{group}/{name} {kind} is deprecated"
    newer = [
        str(other.get("name"))
        for other in map(_map, _list(spec.get("versions")))
        if other.get("served") is True
        and other.get("deprecated") is not True
        and version_priority(str(other.get("name"))) < version_priority(name)
    ]
    if newer:
        text += f"; use {group}/{min(newer, key=version_priority)} {kind}"
    return Lifecycle(warning=text)


def conversion_strategy(crd: Object) -> str:
    """The CRD's ``spec.conversion.strategy`` (``None`` when unset)."""
    return str(_map(_map(crd.get("spec")).get("conversion")).get("strategy") or "None")


_Converters = tuple[Converter | None, Converter | None, BatchConverter | None]


def _webhook_converters(
    webhook: ConversionWebhook, api_version: str, storage_api_version: str
) -> _Converters:
    """A non-storage version's converters through the webhook: the hub is the storage
    version's shape, so each direction is one review."""

    def to_hub(obj: Object) -> Object:
        return webhook.convert([obj], storage_api_version)[0]

    def from_hub(hub: Object) -> Object:
        return webhook.convert([{**hub, "apiVersion": storage_api_version}], api_version)[0]

    def from_hub_many(hubs: Sequence[Object]) -> list[Object]:
        stored = [{**hub, "apiVersion": storage_api_version} for hub in hubs]
        return webhook.convert(stored, api_version, as_list=True)

    return to_hub, from_hub, from_hub_many


def kind_definition_for(
    crd: Object,
    conversions: CustomConversions | None = None,
    review_post: ReviewPost | None = None,
) -> KindDefinition | None:
    """The kind ``crd`` serves, or None while it serves nothing (its names not accepted yet,
    or no version served). A version named in ``conversions`` converts with the functions
    given there (the embedder's stand-in for a conversion webhook); with ``conversion.
    strategy: Webhook`` and a ``review_post`` (which calls the CRD's webhook: given by the
    layer that may do I/O), the others convert through the webhook; else by rewriting
    ``apiVersion`` only, as ``conversion.strategy: None``."""
    spec = _map(crd.get("spec"))
    accepted = _map(_map(crd.get("status")).get("acceptedNames"))
    kind, plural = accepted.get("kind"), accepted.get("plural")
    group = spec.get("group")
    if not (isinstance(kind, str) and kind and isinstance(plural, str) and plural):
        return None
    if not isinstance(group, str) or not group:
        return None
    versions: list[KindVersion] = []
    storage_version = ""
    subresources: set[str] = set()
    selectable: tuple[str, ...] = ()
    scale: ScalePaths | None = None
    webhook = _webhook(crd, spec, review_post, kind, accepted)
    stored_name = next(
        (str(_map(v).get("name")) for v in _list(spec.get("versions")) if _map(v).get("storage")),
        "",
    )
    blocks = False
    for v in _list(spec.get("versions")):
        v = _map(v)
        name = v.get("name")
        if not isinstance(name, str) or not name:
            continue
        schema = _map(v.get("schema")).get("openAPIV3Schema")
        rules = VersionSchema(schema) if schema is not None else None
        converters: _Converters = (None, None, None)
        given = (conversions or {}).get((f"{group}/{name}", kind))
        if given is not None:
            converters = (given[0], given[1], None)
        elif webhook is not None and stored_name and name != stored_name:
            converters = _webhook_converters(webhook, f"{group}/{name}", f"{group}/{stored_name}")
            blocks = True
        versions.append(
            KindVersion(
                version=name,
                to_hub=converters[0],
                from_hub=converters[1],
                from_hub_many=converters[2],
                enabled=bool(v.get("served")),
                printer_columns=printer_columns(v.get("additionalPrinterColumns")),
                openapi_schema=schema,
                schema_rules=rules,
                default=rules.default if rules is not None else None,
                lifecycle=_lifecycle(spec, v),
            )
        )
        if v.get("storage"):
            storage_version = name
            selectable = tuple(
                str(_map(f).get("jsonPath", "")) for f in _list(v.get("selectableFields"))
            )
        served_subresources = _map(v.get("subresources"))
        subresources.update(k for k in served_subresources if k in ("status", "scale"))
        if "scale" in served_subresources and (scale is None or v.get("storage")):
            paths = _map(served_subresources["scale"])
            scale = ScalePaths(
                spec_replicas=str(paths.get("specReplicasPath") or ""),
                status_replicas=str(paths.get("statusReplicasPath") or ""),
                label_selector=str(paths.get("labelSelectorPath") or ""),
            )
    if not versions or not any(v.enabled for v in versions):
        return None

    def field_labels(obj: Object) -> Mapping[str, str]:
        return selectable_field_values(selectable, obj)

    short_names = tuple(str(n) for n in _list(accepted.get("shortNames")))
    categories = tuple(str(c) for c in _list(accepted.get("categories")))
    return KindDefinition(
        group=group,
        kind=kind,
        versions=tuple(versions),
        storage_version=storage_version or versions[0].version,
        resource=ResourceInfo(
            plural=plural,
            singular=str(accepted.get("singular") or kind.lower()),
            namespaced=spec.get("scope") == "Namespaced",
            short_names=short_names,
            categories=categories,
            subresources=tuple(sorted(subresources)),
            scale=scale,
            # kube-apiserver keeps custom resources under their group, even a *.k8s.io one.
            key_prefix=f"/{group}/{plural}",
            create_refused=(
                "create not allowed while custom resource definition is terminating"
                if condition_true(crd, TERMINATING)
                else ""
            ),
        ),
        field_labels=field_labels if selectable else None,
        list_kind=str(accepted.get("listKind") or f"{kind}List"),
        conversion_blocks=blocks,
    )


def _webhook(
    crd: Object,
    spec: Mapping[str, Any],
    review_post: ReviewPost | None,
    kind: str,
    accepted: Mapping[str, Any],
) -> ConversionWebhook | None:
    """The CRD's conversion webhook, when it has one and the caller can call it."""
    if review_post is None or conversion_strategy(crd) != "Webhook":
        return None
    webhook = _map(_map(spec.get("conversion")).get("webhook"))
    return ConversionWebhook(
        review_post,
        review_versions=[str(v) for v in _list(webhook.get("conversionReviewVersions"))],
        list_kind=str(accepted.get("listKind") or f"{kind}List"),
    )


def set_condition(status: dict[str, Any], condition: Mapping[str, str], now: str) -> bool:
    """Put ``condition`` into ``status["conditions"]`` (replacing the one of its type, keeping
    its ``lastTransitionTime`` unless the status changes); whether anything changed."""
    conditions = [dict(c) for c in status.get("conditions") or [] if isinstance(c, Mapping)]
    for i, old in enumerate(conditions):
        if old.get("type") != condition["type"]:
            continue
        same_status = old.get("status") == condition["status"]
        new = {
            **condition,
            "lastTransitionTime": old.get("lastTransitionTime") if same_status else now,
        }
        if same_status and all(old.get(k) == v for k, v in condition.items()):
            return False
        conditions[i] = new
        status["conditions"] = conditions
        return True
    conditions.append({**condition, "lastTransitionTime": now})
    status["conditions"] = conditions
    return True
