"""A CustomResourceDefinition's spec as Kubernetes validates it: the internal type's shape.

Kubernetes validates a CRD after converting it from ``apiextensions.k8s.io/v1`` to its internal
type (``Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_...``). That conversion is not
a rename, and error paths follow the internal shape, so kstore reproduces it as a read-only view:

- ``spec.version`` is the name of ``spec.versions[0]``;
- when every version carries the same ``schema`` (or ``subresources``, ``additionalPrinterColumns``,
  ``selectableFields``), the value moves to the top level (``spec.validation``,
  ``spec.subresources``, ...) and the versions lose it. So a one-version CRD's schema errors are
  reported under ``spec.validation.openAPIV3Schema``, as kube-apiserver reports them;
- ``spec.conversion.webhook.{clientConfig,conversionReviewVersions}`` become
  ``spec.conversion.{webhookClientConfig,conversionReviewVersions}``;
- ``spec.preserveUnknownFields`` is always set (``false`` when absent).

Comparisons use Kubernetes' semantic equality as far as JSON can tell: an absent list equals an
empty one, an absent struct does not equal an empty one.

It also renders internal values the way ``field.Invalid`` prints them: the internal types have no
JSON tags, so ``json.Marshal`` writes Go field names and every zero value (:func:`go_versions`,
:func:`go_schema`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kstore.api.validation._access import get_bool, get_list, get_map, get_str, maps, opt_str
from kstore.api.validation.field import GoStruct

__all__ = [
    "InternalSpec",
    "InternalVersion",
    "go_schema",
    "go_versions",
    "internal_spec",
]

#: The per-version fields that move to the top level when all versions agree (v1 JSON names).
_LIFTED: Final = ("schema", "subresources", "additionalPrinterColumns", "selectableFields")
_LISTS: Final = frozenset(("additionalPrinterColumns", "selectableFields"))


@dataclass(frozen=True, slots=True)
class InternalVersion:
    """One ``spec.versions[i]``; lifted fields are ``None`` here when they moved to the top."""

    raw: Mapping[str, Any]
    schema: Mapping[str, Any] | None
    subresources: Mapping[str, Any] | None
    columns: Sequence[Any]
    selectable_fields: Sequence[Any]

    @property
    def name(self) -> str:
        return get_str(self.raw, "name")

    @property
    def served(self) -> bool:
        return get_bool(self.raw, "served")

    @property
    def storage(self) -> bool:
        return get_bool(self.raw, "storage")


@dataclass(frozen=True, slots=True)
class InternalSpec:
    """The internal ``CustomResourceDefinitionSpec`` of a v1 spec (see the module docstring)."""

    raw: Mapping[str, Any]
    version: str
    versions: tuple[InternalVersion, ...]
    validation: Mapping[str, Any] | None
    subresources: Mapping[str, Any] | None
    columns: Sequence[Any]
    selectable_fields: Sequence[Any]
    preserve_unknown_fields: bool
    #: ``None`` when the v1 spec has no ``conversion`` (defaulting gives it one).
    conversion: Mapping[str, Any] | None
    webhook_client_config: Mapping[str, Any] | None
    conversion_review_versions: Sequence[Any] | None

    @property
    def group(self) -> str:
        return get_str(self.raw, "group")

    @property
    def scope(self) -> str:
        return get_str(self.raw, "scope")

    @property
    def names(self) -> Mapping[str, Any]:
        return get_map(self.raw, "names")


def _field(version: Mapping[str, Any], key: str) -> Any:
    value = version.get(key)
    if key in _LISTS:
        return value if isinstance(value, list) and value else None
    return value if isinstance(value, Mapping) else None


def _struct(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    """A pointer-to-struct field: ``None`` when absent or null."""
    value = obj.get(key)
    return value if isinstance(value, Mapping) else None


def internal_spec(spec: Mapping[str, Any]) -> InternalSpec:
    """The internal view of a v1 ``spec`` (nothing is copied; the view is read-only)."""
    versions = maps(get_list(spec, "versions"))
    lifted: dict[str, Any] = {}
    if versions:
        for key in _LIFTED:
            first = _field(versions[0], key)
            if all(_field(v, key) == first for v in versions):
                lifted[key] = first

    def per_version(v: Mapping[str, Any], key: str) -> Any:
        return None if key in lifted else _field(v, key)

    internal_versions = tuple(
        InternalVersion(
            raw=v,
            schema=per_version(v, "schema"),
            subresources=per_version(v, "subresources"),
            columns=per_version(v, "additionalPrinterColumns") or (),
            selectable_fields=per_version(v, "selectableFields") or (),
        )
        for v in versions
    )
    conversion = _struct(spec, "conversion")
    webhook = _struct(conversion, "webhook") if conversion is not None else None
    client_config = _struct(webhook, "clientConfig") if webhook is not None else None
    review = webhook.get("conversionReviewVersions") if webhook is not None else None
    return InternalSpec(
        raw=spec,
        version=get_str(versions[0], "name") if versions else "",
        versions=internal_versions,
        validation=lifted.get("schema"),
        subresources=lifted.get("subresources"),
        columns=lifted.get("additionalPrinterColumns") or (),
        selectable_fields=lifted.get("selectableFields") or (),
        preserve_unknown_fields=get_bool(spec, "preserveUnknownFields"),
        conversion=conversion,
        webhook_client_config=client_config,
        conversion_review_versions=review if isinstance(review, list) else None,
    )


# ------------------------------------------------------------------ rendering as Go prints it


def _or_items(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        return GoStruct(Schema=None, JSONSchemas=[go_schema(s) for s in maps(value)])
    return GoStruct(Schema=go_schema(value), JSONSchemas=None)


def _or_bool(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool):
        return GoStruct(Allows=value, Schema=None)
    # A schema allows additional items/properties (v1's UnmarshalJSON sets Allows).
    return GoStruct(Allows=True, Schema=go_schema(value))


def _schema_map(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return None
    return {k: go_schema(v) for k, v in value.items()}


def _schema_list(value: Any) -> Any:
    return [go_schema(s) for s in maps(value)] if isinstance(value, list) else None


def _dependencies(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return None
    out = {}
    for key, dep in value.items():
        if isinstance(dep, list):
            out[key] = GoStruct(Schema=None, Property=dep)
        else:
            out[key] = GoStruct(Schema=go_schema(dep), Property=None)
    return out


def _rules(value: Any) -> Any:
    if not isinstance(value, list):
        return None
    return [
        GoStruct(
            Rule=get_str(r, "rule"),
            Message=get_str(r, "message"),
            MessageExpression=get_str(r, "messageExpression"),
            Reason=opt_str(r, "reason"),
            FieldPath=get_str(r, "fieldPath"),
            OptionalOldSelf=r.get("optionalOldSelf"),
        )
        for r in maps(value)
    ]


def go_schema(schema: Any) -> Any:
    """An internal ``JSONSchemaProps`` (from its v1 JSON) as ``json.Marshal`` writes it."""
    if not isinstance(schema, Mapping):
        return None
    s = schema
    docs = s.get("externalDocs")
    return GoStruct(
        ID=get_str(s, "id"),
        Schema=get_str(s, "$schema"),
        Ref=opt_str(s, "$ref"),
        Description=get_str(s, "description"),
        Type=get_str(s, "type"),
        Nullable=get_bool(s, "nullable"),
        Format=get_str(s, "format"),
        Title=get_str(s, "title"),
        Default=s.get("default"),
        Maximum=s.get("maximum"),
        ExclusiveMaximum=get_bool(s, "exclusiveMaximum"),
        Minimum=s.get("minimum"),
        ExclusiveMinimum=get_bool(s, "exclusiveMinimum"),
        MaxLength=s.get("maxLength"),
        MinLength=s.get("minLength"),
        Pattern=get_str(s, "pattern"),
        MaxItems=s.get("maxItems"),
        MinItems=s.get("minItems"),
        UniqueItems=get_bool(s, "uniqueItems"),
        MultipleOf=s.get("multipleOf"),
        Enum=s.get("enum") if isinstance(s.get("enum"), list) else None,
        MaxProperties=s.get("maxProperties"),
        MinProperties=s.get("minProperties"),
        Required=s.get("required") if isinstance(s.get("required"), list) else None,
        Items=_or_items(s.get("items")),
        AllOf=_schema_list(s.get("allOf")),
        OneOf=_schema_list(s.get("oneOf")),
        AnyOf=_schema_list(s.get("anyOf")),
        Not=go_schema(s.get("not")),
        Properties=_schema_map(s.get("properties")),
        AdditionalProperties=_or_bool(s.get("additionalProperties")),
        PatternProperties=_schema_map(s.get("patternProperties")),
        Dependencies=_dependencies(s.get("dependencies")),
        AdditionalItems=_or_bool(s.get("additionalItems")),
        Definitions=_schema_map(s.get("definitions")),
        ExternalDocs=(
            GoStruct(Description=get_str(docs, "description"), URL=get_str(docs, "url"))
            if isinstance(docs, Mapping)
            else None
        ),
        Example=s.get("example"),
        XPreserveUnknownFields=s.get("x-kubernetes-preserve-unknown-fields"),
        XEmbeddedResource=get_bool(s, "x-kubernetes-embedded-resource"),
        XIntOrString=get_bool(s, "x-kubernetes-int-or-string"),
        XListMapKeys=s.get("x-kubernetes-list-map-keys"),
        XListType=opt_str(s, "x-kubernetes-list-type"),
        XMapType=opt_str(s, "x-kubernetes-map-type"),
        XValidations=_rules(s.get("x-kubernetes-validations")),
    )


def _go_validation(validation: Mapping[str, Any] | None) -> Any:
    if validation is None:
        return None
    return GoStruct(OpenAPIV3Schema=go_schema(validation.get("openAPIV3Schema")))


def _go_subresources(sub: Mapping[str, Any] | None) -> Any:
    if sub is None:
        return None
    scale = sub.get("scale")
    return GoStruct(
        Status={} if isinstance(sub.get("status"), Mapping) else None,
        Scale=(
            GoStruct(
                SpecReplicasPath=get_str(scale, "specReplicasPath"),
                StatusReplicasPath=get_str(scale, "statusReplicasPath"),
                LabelSelectorPath=opt_str(scale, "labelSelectorPath"),
            )
            if isinstance(scale, Mapping)
            else None
        ),
    )


def _go_columns(columns: Sequence[Any]) -> Any:
    if not columns:
        return None
    return [
        GoStruct(
            Name=get_str(c, "name"),
            Type=get_str(c, "type"),
            Format=get_str(c, "format"),
            Description=get_str(c, "description"),
            Priority=c.get("priority") if isinstance(c.get("priority"), int) else 0,
            JSONPath=get_str(c, "jsonPath"),
        )
        for c in maps(columns)
    ]


def go_versions(spec: InternalSpec) -> list[GoStruct]:
    """``spec.Versions`` of the internal type, as ``field.Invalid`` prints it."""
    return [
        GoStruct(
            Name=v.name,
            Served=v.served,
            Storage=v.storage,
            Deprecated=get_bool(v.raw, "deprecated"),
            DeprecationWarning=opt_str(v.raw, "deprecationWarning"),
            Schema=_go_validation(v.schema),
            Subresources=_go_subresources(v.subresources),
            AdditionalPrinterColumns=_go_columns(v.columns),
            SelectableFields=(
                [GoStruct(JSONPath=get_str(f, "jsonPath")) for f in maps(v.selectable_fields)]
                if v.selectable_fields
                else None
            ),
        )
        for v in spec.versions
    ]
