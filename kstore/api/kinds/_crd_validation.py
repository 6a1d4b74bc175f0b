"""CustomResourceDefinition validation: ``pkg/apis/apiextensions/validation`` (Kubernetes v1.36).

Kubernetes validates the internal type, so every rule here reads the internal view of
:mod:`kstore.api.kinds._crd_internal` and reports the internal paths (``spec.validation...`` for a
schema all versions share, ``spec.conversion.webhookClientConfig``, a column's ``JSONPath``).
Checks run in Kubernetes' order: ObjectMeta (the name must be ``<plural>.<group>``), the spec,
``status.acceptedNames``, ``status.storedVersions``, the API-approval annotation of protected
groups, and ``spec.preserveUnknownFields`` (v1 never allows it to become true).

Field-by-field parts live in :mod:`kstore.api.kinds._crd_fields`, ``spec.conversion`` in
:mod:`kstore.api.kinds._crd_conversion`. The schema of each version goes through one door,
:func:`validate_version_schema`: the root rules of a schema with a status subresource, then the
structural-schema checks of :mod:`kstore.api.structural`; CEL compilation plugs in there too.
On update, the schema rules the stored CRD already broke are relaxed
(:func:`kstore.api.structural.update_requirements`), as Kubernetes ratchets them; a default
must pass the OpenAPI validations and the CEL rules of its node (:class:`_DefaultValidator`).

Rules of the internal type that a v1 object can never break (top-level and per-version fields
both set, identical per-version values, ``spec.version`` not matching ``spec.versions[0]``) are
left out, as are the CA bundle's PEM check and the ``error building validator`` pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final
from urllib.parse import urlsplit  # only for the API-approval URL

from kstore.api.cel import RUNTIME_COST_BUDGET, compile_schema_rules
from kstore.api.kinds._crd_conversion import REVIEW_VERSIONS, validate_conversion
from kstore.api.kinds._crd_fields import (
    MAX_SELECTABLE_FIELDS,
    deprecation_warning_errors,
    dns1035,
    validate_column,
    validate_names,
    validate_selectable_fields,
    validate_subresources,
)
from kstore.api.kinds._crd_internal import (
    InternalSpec,
    InternalVersion,
    go_schema,
    go_versions,
    internal_spec,
)
from kstore.api.openapi_validation import compile_validator
from kstore.api.structural import (
    Structural,
    UpdateRequirements,
    schema_has,
    update_requirements,
    validate_crd_schema,
)
from kstore.api.validation._access import get_list, get_map, get_str, maps, opt_str
from kstore.api.validation._render import go_quote
from kstore.api.validation.field import JSONValue, Path, invalid, not_supported, required
from kstore.api.validation.names import is_dns1123_subdomain, name_is_dns_subdomain
from kstore.api.validation.objectmeta import (
    validate_immutable_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "validate_custom_resource_definition",
    "validate_custom_resource_definition_status_update",
    "validate_custom_resource_definition_update",
    "validate_stored_versions",
    "validate_version_schema",
]

_SCOPES: Final = ("Cluster", "Namespaced")
_APPROVAL: Final = "api-approved.kubernetes.io"

_SPEC: Final = Path("spec")
_STATUS: Final = Path("status")

#: The internal JSONSchemaProps fields in Go order: (v1 JSON name, Go name, zero is "" / False).
_SCHEMA_FIELDS: Final = (
    ("id", "ID", True),
    ("$schema", "Schema", True),
    ("$ref", "Ref", False),
    ("description", "Description", True),
    ("type", "Type", True),
    ("nullable", "Nullable", True),
    ("format", "Format", True),
    ("title", "Title", True),
    ("default", "Default", False),
    ("maximum", "Maximum", False),
    ("exclusiveMaximum", "ExclusiveMaximum", True),
    ("minimum", "Minimum", False),
    ("exclusiveMinimum", "ExclusiveMinimum", True),
    ("maxLength", "MaxLength", False),
    ("minLength", "MinLength", False),
    ("pattern", "Pattern", True),
    ("maxItems", "MaxItems", False),
    ("minItems", "MinItems", False),
    ("uniqueItems", "UniqueItems", True),
    ("multipleOf", "MultipleOf", False),
    ("enum", "Enum", False),
    ("maxProperties", "MaxProperties", False),
    ("minProperties", "MinProperties", False),
    ("required", "Required", False),
    ("items", "Items", False),
    ("allOf", "AllOf", False),
    ("oneOf", "OneOf", False),
    ("anyOf", "AnyOf", False),
    ("not", "Not", False),
    ("properties", "Properties", False),
    ("additionalProperties", "AdditionalProperties", False),
    ("patternProperties", "PatternProperties", False),
    ("dependencies", "Dependencies", False),
    ("additionalItems", "AdditionalItems", False),
    ("definitions", "Definitions", False),
    ("externalDocs", "ExternalDocs", False),
    ("example", "Example", False),
    ("x-kubernetes-preserve-unknown-fields", "XPreserveUnknownFields", False),
    ("x-kubernetes-embedded-resource", "XEmbeddedResource", True),
    ("x-kubernetes-int-or-string", "XIntOrString", True),
    ("x-kubernetes-list-map-keys", "XListMapKeys", False),
    ("x-kubernetes-list-type", "XListType", False),
    ("x-kubernetes-map-type", "XMapType", False),
    ("x-kubernetes-validations", "XValidations", False),
)
#: ``allowedFieldsAtRootSchema``: what a root schema may set when the status subresource is on.
_ROOT_FIELDS: Final = (
    "Description",
    "Type",
    "Format",
    "Title",
    "Maximum",
    "ExclusiveMaximum",
    "Minimum",
    "ExclusiveMinimum",
    "MaxLength",
    "MinLength",
    "Pattern",
    "MaxItems",
    "MinItems",
    "UniqueItems",
    "MultipleOf",
    "Required",
    "Items",
    "Properties",
    "ExternalDocs",
    "Example",
    "XPreserveUnknownFields",
    "XValidations",
)


@dataclass(frozen=True, kw_only=True, slots=True)
class _Options:
    """``validationOptions``: what create requires, and what an update relaxes for stored CRDs."""

    require_recognized_review_version: bool = True
    require_immutable_names: bool = False
    require_openapi_schema: bool = True
    #: Version names ("" for the top level) whose too many selectable fields are tolerated.
    allow_too_many_selectable_fields: frozenset[str] = field(default_factory=frozenset)
    #: The schema rules, relaxed for those the stored CRD's schemas already broke.
    schema: UpdateRequirements = field(default_factory=UpdateRequirements)


# ------------------------------------------------------------------------------ schema


def _is_zero(value: Any, scalar: bool) -> bool:
    if scalar:
        return value is None or value == "" or value is False
    return value is None


def _has_rules(schema: Mapping[str, Any]) -> bool:
    return bool(schema.get("x-kubernetes-validations"))


class _DefaultValidator:
    """A default against the schema node it sits on, as Kubernetes' ``ValidateDefaults``:
    its OpenAPI validations, then, when those pass, the CEL rules of the node and below with
    ``oldSelf`` the default itself, then (when those pass too) with no ``oldSelf``, so that
    ``optionalOldSelf`` rules see a default brought in by a create. All the defaults of one
    schema share one runtime cost budget; once spent, no further rule runs."""

    __slots__ = ("remaining",)

    def __init__(self) -> None:
        self.remaining = RUNTIME_COST_BUDGET

    def __call__(self, path: Path, value: Any, node: Structural) -> list[Cause]:
        causes = compile_validator(node.raw).validate(value, path)
        if causes or self.remaining < 0 or not schema_has(node.raw, _has_rules):
            return causes
        rules = compile_schema_rules(node.raw, path, is_root=node.embedded_resource)
        if rules.errors:
            return causes  # reported where the rules are compiled
        causes, remaining = rules.run(value, value, path=path, budget=self.remaining, ratchet=False)
        if not causes and remaining >= 0:
            causes, without_old = rules.run(value, None, path=path, budget=self.remaining)
            remaining = min(remaining, without_old)
        self.remaining = remaining
        return causes


def validate_version_schema(
    schema: Mapping[str, Any],
    path: Path,
    *,
    status_enabled: bool,
    requirements: UpdateRequirements | None = None,
) -> list[Cause]:
    """The checks of one ``openAPIV3Schema`` (``path`` is its own path).

    ``requirements`` relaxes, on an update, the rules the stored CRD's schemas already broke
    (:func:`kstore.api.structural.update_requirements`); all rules apply without it.

    With the status subresource on, the root is of type ``object`` and sets only the fields
    Kubernetes allows there; then :func:`kstore.api.structural.validate_crd_schema`: the root
    not ``nullable``, the structural-schema rules, defaults pruned and valid against their
    schema, OpenAPI and CEL (:class:`_DefaultValidator`), the per-node rules.
    """
    causes: list[Cause] = []
    if status_enabled:
        for key, go_name, scalar in _SCHEMA_FIELDS:
            value = schema.get(key)
            if _is_zero(value, scalar):
                continue
            if go_name == "Type":
                if value != "object":
                    causes.append(
                        invalid(
                            path.child("type"),
                            value,
                            'only "object" is allowed as the type at the root of the schema if '
                            "the status subresource is enabled",
                        )
                    )
                    break
                continue
            if go_name not in _ROOT_FIELDS:
                allowed = "[" + " ".join(_ROOT_FIELDS) + "]"
                causes.append(
                    invalid(
                        path,
                        go_schema(schema),
                        f"only {allowed} fields are allowed at the root of the schema if the "
                        "status subresource is enabled",
                    )
                )
                break
    req = requirements if requirements is not None else UpdateRequirements()
    causes.extend(
        validate_crd_schema(
            schema,
            path,
            require_structural=req.require_structural,
            require_pruned_defaults=req.require_pruned_defaults,
            rule_options=req.rule_options,
            validate_value=_DefaultValidator(),
        )
    )
    if not causes:
        # The rules compile against a structural schema only, as Kubernetes compiles them.
        causes.extend(compile_schema_rules(schema, path).errors)
    return causes


def _validate_validation(
    validation: Mapping[str, Any] | None, status_enabled: bool, path: Path, opts: _Options
) -> list[Cause]:
    if validation is None:
        return []
    schema = validation.get("openAPIV3Schema")
    if not isinstance(schema, Mapping):
        return []
    return validate_version_schema(
        schema,
        path.child("openAPIV3Schema"),
        status_enabled=status_enabled,
        requirements=opts.schema,
    )


def _schema_has(schema: Any, pred: Callable[[Mapping[str, Any]], bool]) -> bool:
    """``SchemaHas``: whether ``pred`` holds anywhere in the schema tree."""
    if not isinstance(schema, Mapping):
        return False
    if pred(schema):
        return True
    for key in ("items", "additionalItems", "additionalProperties", "not"):
        value = schema.get(key)
        if isinstance(value, list):
            if any(_schema_has(s, pred) for s in value):
                return True
        elif _schema_has(value, pred):
            return True
    for key in ("allOf", "oneOf", "anyOf"):
        if any(_schema_has(s, pred) for s in get_list(schema, key)):
            return True
    for key in ("properties", "patternProperties", "definitions", "dependencies"):
        if any(_schema_has(s, pred) for s in get_map(schema, key).values()):
            return True
    return False


def _schemas(spec: InternalSpec) -> list[Any]:
    found = [spec.validation] + [v.schema for v in spec.versions]
    return [v.get("openAPIV3Schema") for v in found if v is not None]


def _has_defaults(spec: InternalSpec) -> bool:
    return any(_schema_has(s, lambda n: n.get("default") is not None) for s in _schemas(spec))


def _validate_version(
    version: InternalVersion, path: Path, status_enabled: bool, opts: _Options
) -> list[Cause]:
    causes: list[Cause] = []
    warning = opt_str(version.raw, "deprecationWarning")
    deprecated = version.raw.get("deprecated") is True
    for err in deprecation_warning_errors(deprecated, warning):
        causes.append(invalid(path.child("deprecationWarning"), JSONValue(warning), err))
    causes.extend(_validate_validation(version.schema, status_enabled, path.child("schema"), opts))
    causes.extend(validate_subresources(version.subresources, path.child("subresources")))
    for i, column in enumerate(maps(version.columns)):
        causes.extend(validate_column(column, path.child("additionalPrinterColumns").index(i)))
    if version.selectable_fields:
        schema = (version.schema or {}).get("openAPIV3Schema")
        if not isinstance(schema, Mapping):
            causes.append(
                invalid(
                    path.child("selectableFields"),
                    "",
                    "may only be set when `version.schema.openAPIV3Schema` is not included",
                )
            )
        else:
            causes.extend(
                validate_selectable_fields(
                    version.selectable_fields,
                    schema,
                    path.child("selectableFields"),
                    tolerate_too_many=version.name in opts.allow_too_many_selectable_fields,
                )
            )
    return causes


# ------------------------------------------------------------------------------ spec


def _status_enabled(sub: Mapping[str, Any] | None) -> bool:
    return sub is not None and isinstance(sub.get("status"), Mapping)


def _validate_group(group: str, path: Path) -> list[Cause]:
    if not group:
        return [required(path)]
    errs = is_dns1123_subdomain(group)
    if errs:
        return [invalid(path, group, ",".join(errs))]
    if len(group.split(".")) < 2:
        return [invalid(path, group, "should be a domain with at least one dot")]
    return []


def _validate_spec(spec: InternalSpec, opts: _Options, path: Path) -> list[Cause]:
    causes = _validate_group(spec.group, path.child("group"))
    scope = spec.scope
    if not scope:
        causes.append(required(path.child("scope")))
    elif scope not in _SCOPES:
        causes.append(not_supported(path.child("scope"), scope, _SCOPES))
    versions_path = path.child("versions")
    top_schema = spec.validation is not None and isinstance(
        spec.validation.get("openAPIV3Schema"), Mapping
    )
    if not top_schema:
        for i, v in enumerate(spec.versions):
            has = v.schema is not None and isinstance(v.schema.get("openAPIV3Schema"), Mapping)
            where = versions_path.index(i).child("schema", "openAPIV3Schema")
            if opts.require_openapi_schema and not has:
                causes.append(required(where))
            elif (
                not opts.require_openapi_schema
                and not spec.preserve_unknown_fields
                and (v.served and not has)
            ):
                causes.append(required(where, "because otherwise all fields are pruned"))
    if _has_defaults(spec) and spec.preserve_unknown_fields:
        causes.append(
            invalid(
                path.child("preserveUnknownFields"),
                True,
                "must be false in order to use defaults in the schema",
            )
        )
    storage_count = 0
    seen: set[str] = set()
    unique = True
    per_version_subresources = any(v.subresources is not None for v in spec.versions)
    for i, v in enumerate(spec.versions):
        storage_count += v.storage
        if v.name in seen:
            unique = False
        seen.add(v.name)
        causes.extend(dns1035(v.name, versions_path.index(i).child("name")))
        sub = v.subresources if per_version_subresources else spec.subresources
        causes.extend(_validate_version(v, versions_path.index(i), _status_enabled(sub), opts))
    if not unique:
        causes.append(
            invalid(versions_path, go_versions(spec), "must contain unique version names")
        )
    if storage_count != 1:
        causes.append(
            invalid(
                versions_path,
                go_versions(spec),
                "must have exactly one version marked as storage version",
            )
        )
    if spec.version:
        causes.extend(dns1035(spec.version, path.child("version")))
    names = spec.names
    for key in ("plural", "singular", "kind", "listKind"):
        if not get_str(names, key):
            causes.append(required(path.child("names", key)))
    causes.extend(validate_names(names, path.child("names")))
    any_status = _status_enabled(spec.subresources) or any(
        _status_enabled(v.subresources) for v in spec.versions
    )
    causes.extend(_validate_validation(spec.validation, any_status, path.child("validation"), opts))
    causes.extend(validate_subresources(spec.subresources, path.child("subresources")))
    for i, column in enumerate(maps(spec.columns)):
        causes.extend(validate_column(column, path.child("additionalPrinterColumns").index(i)))
    if spec.selectable_fields:
        schema = (spec.validation or {}).get("openAPIV3Schema")
        if spec.validation is None:
            causes.append(
                invalid(
                    path.child("selectableFields"),
                    "",
                    "may only be set when validations.schema is included",
                )
            )
        else:
            causes.extend(
                validate_selectable_fields(
                    spec.selectable_fields,
                    schema if isinstance(schema, Mapping) else {},
                    path.child("selectableFields"),
                    tolerate_too_many="" in opts.allow_too_many_selectable_fields,
                )
            )
    strategy = get_str(spec.conversion, "strategy") if spec.conversion is not None else ""
    if spec.conversion is not None and strategy != "None" and spec.preserve_unknown_fields:
        causes.append(
            invalid(
                path.child("conversion", "strategy"),
                strategy,
                "must be None if spec.preserveUnknownFields is true",
            )
        )
    causes.extend(
        validate_conversion(
            spec,
            path.child("conversion"),
            require_recognized_review_version=opts.require_recognized_review_version,
        )
    )
    return causes


# ------------------------------------------------------------------------ status & meta


def validate_stored_versions(stored: Any, spec: InternalSpec, path: Path) -> list[Cause]:
    """``ValidateCustomResourceDefinitionStoredVersions``."""
    values = stored if isinstance(stored, list) else None
    if not values:
        return [invalid(path, values, "must have at least one stored version")]
    causes: list[Cause] = []
    index = {v: i for i, v in enumerate(values) if isinstance(v, str)}
    for v in spec.versions:
        if v.storage and v.name not in index:
            causes.append(invalid(path, values, "must have the storage version " + v.name))
        index.pop(v.name, None)
    for name, i in sorted(index.items(), key=lambda item: item[1]):
        causes.append(
            invalid(
                path.index(i),
                name,
                f"missing from spec.versions; {name} was previously a storage version, and must "
                f"remain in spec.versions until a storage migration ensures no data remains "
                f"persisted in {name} and removes {name} from status.storedVersions",
            )
        )
    return causes


def _protected_group(group: str) -> bool:
    return any(group == g or group.endswith("." + g) for g in ("k8s.io", "kubernetes.io"))


def _approval_state(annotations: Mapping[str, Any]) -> tuple[str, str]:
    value = annotations.get(_APPROVAL)
    text = value if isinstance(value, str) else ""
    quoted = go_quote(_APPROVAL)
    if not text:
        return "missing", (
            f"protected groups must have approval annotation {quoted}, see "
            "https://github.com/kubernetes/enhancements/pull/1111"
        )
    if text.startswith("unapproved"):
        return "bypassed", f"not approved: {go_quote(text)}"
    parts = urlsplit(text)
    if parts.scheme and parts.netloc:
        return "approved", f"approved in {text}"
    return "invalid", (
        f"protected groups must have approval annotation {quoted} with either a URL or a reason "
        'starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111'
    )


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return get_map(get_map(obj, "metadata"), "annotations")


def _validate_api_approval(new: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
    if not _protected_group(get_str(get_map(new, "spec"), "group")):
        return []
    state, reason = _approval_state(_annotations(new))
    if old is not None and _approval_state(_annotations(old))[0] == state:
        return []
    where = Path("metadata", "annotations").key(_APPROVAL)
    if state in ("approved", "bypassed"):
        return []
    if state == "missing":
        return [required(where, reason)]
    return [invalid(where, get_str(_annotations(new), _APPROVAL), reason)]


def _validate_preserve_unknown_fields(
    new: Mapping[str, Any], old: Mapping[str, Any] | None
) -> list[Cause]:
    if old is not None and get_map(old, "spec").get("preserveUnknownFields") is True:
        return []
    if get_map(new, "spec").get("preserveUnknownFields") is True:
        return [
            invalid(
                _SPEC.child("preserveUnknownFields"),
                True,
                "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in "
                "spec.versions[*].schema instead",
            )
        ]
    return []


def _name_rule(obj: Mapping[str, Any]) -> Callable[[str, bool], list[str]]:
    spec = get_map(obj, "spec")
    wanted = get_str(get_map(spec, "names"), "plural") + "." + get_str(spec, "group")

    def rule(name: str, prefix: bool) -> list[str]:
        errs = name_is_dns_subdomain(name, prefix)
        if name != wanted:
            errs = [*errs, 'must be spec.names.plural+"."+spec.group']
        return errs

    return rule


def _tail(obj: Mapping[str, Any], spec: InternalSpec, old: Mapping[str, Any] | None) -> list[Cause]:
    status = get_map(obj, "status")
    causes = validate_names(get_map(status, "acceptedNames"), _STATUS.child("acceptedNames"))
    causes.extend(
        validate_stored_versions(
            status.get("storedVersions"), spec, _STATUS.child("storedVersions")
        )
    )
    causes.extend(_validate_api_approval(obj, old))
    causes.extend(_validate_preserve_unknown_fields(obj, old))
    return causes


def validate_custom_resource_definition(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateCustomResourceDefinition``: a new CRD (after the strategy filled its status)."""
    causes = validate_object_meta(obj, False, _name_rule(obj), kube_finalizers=False)
    spec = internal_spec(get_map(obj, "spec"))
    causes.extend(_validate_spec(spec, _Options(), _SPEC))
    causes.extend(_tail(obj, spec, None))
    return causes


def _established(obj: Mapping[str, Any]) -> bool:
    return any(
        get_str(c, "type") == "Established" and get_str(c, "status") == "True"
        for c in maps(get_list(get_map(obj, "status"), "conditions"))
    )


def _all_versions_have_schema(spec: InternalSpec) -> bool:
    if spec.validation is not None and isinstance(spec.validation.get("openAPIV3Schema"), Mapping):
        return True
    return all(
        v.schema is not None and isinstance(v.schema.get("openAPIV3Schema"), Mapping)
        for v in spec.versions
    )


def _update_options(new: InternalSpec, old: Mapping[str, Any], old_spec: InternalSpec) -> _Options:
    review = old_spec.conversion_review_versions or ()
    recognized = (
        old_spec.conversion is None or not review or any(v in REVIEW_VERSIONS for v in review)
    )
    tolerated: set[str] = set()
    if (
        len(old_spec.selectable_fields) > MAX_SELECTABLE_FIELDS
        and new.selectable_fields == old_spec.selectable_fields
    ):
        tolerated.add("")
    old_versions = {v.name: v for v in old_spec.versions}
    for v in new.versions:
        before = old_versions.get(v.name)
        if (
            before is not None
            and len(before.selectable_fields) > MAX_SELECTABLE_FIELDS
            and v.selectable_fields == before.selectable_fields
        ):
            tolerated.add(v.name)
    return _Options(
        require_recognized_review_version=recognized,
        require_immutable_names=_established(old),
        require_openapi_schema=_all_versions_have_schema(old_spec),
        allow_too_many_selectable_fields=frozenset(tolerated),
    )


def validate_custom_resource_definition_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidateCustomResourceDefinitionUpdate``: what an update may not change (group and
    plural always; scope and kind once the CRD is Established) and the new CRD's rules, relaxed
    where the stored CRD already broke them."""
    causes = validate_object_meta_update(new, old, kube_finalizers=False)
    spec = internal_spec(get_map(new, "spec"))
    old_spec = internal_spec(get_map(old, "spec"))
    opts = _update_options(spec, old, old_spec)
    spec_causes = _validate_spec(spec, opts, _SPEC)
    if spec_causes:
        # The schema rules the stored CRD already broke are relaxed. Relaxing only removes
        # causes, so a spec valid under every rule needs no look at the old schemas (a
        # re-apply of a large CRD does not pay for it).
        relaxed = update_requirements(
            s if isinstance(s, Mapping) else None for s in _schemas(old_spec)
        )
        if relaxed != opts.schema:
            spec_causes = _validate_spec(spec, replace(opts, schema=relaxed), _SPEC)
    causes.extend(spec_causes)
    if opts.require_immutable_names:
        causes.extend(validate_immutable_field(spec.scope, old_spec.scope, _SPEC.child("scope")))
        causes.extend(
            validate_immutable_field(
                get_str(spec.names, "kind"),
                get_str(old_spec.names, "kind"),
                _SPEC.child("names", "kind"),
            )
        )
    causes.extend(validate_immutable_field(spec.group, old_spec.group, _SPEC.child("group")))
    causes.extend(
        validate_immutable_field(
            get_str(spec.names, "plural"),
            get_str(old_spec.names, "plural"),
            _SPEC.child("names", "plural"),
        )
    )
    causes.extend(_tail(new, spec, old))
    return causes


def validate_custom_resource_definition_status_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidateUpdateCustomResourceDefinitionStatus``: metadata and the accepted names."""
    causes = validate_object_meta_update(new, old, kube_finalizers=False)
    causes.extend(
        validate_names(
            get_map(get_map(new, "status"), "acceptedNames"), _STATUS.child("acceptedNames")
        )
    )
    return causes
