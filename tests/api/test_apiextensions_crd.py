"""apiextensions.k8s.io/v1 CustomResourceDefinition: v1's defaults and the validation of
``pkg/apis/apiextensions/validation`` (Kubernetes v1.36), with its paths and messages.

Expected messages are quoted from ``validation.go`` and ``validation_test.go`` of
k8s.io/apiextensions-apiserver (and ``k8s.io/apiserver/pkg/util/webhook/validation.go``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds._crd_validation import (
    validate_custom_resource_definition,
    validate_custom_resource_definition_status_update,
    validate_custom_resource_definition_update,
    validate_version_schema,
)
from kstore.api.validation.field import Path
from kstore.errors import Cause
from tests.fixtures_path import REPO_ROOT

SCHEME = builtin_scheme()
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"spec": {"type": "object", "properties": {"size": {"type": "string"}}}},
}


def _version(name: str = "v1", *, storage: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "served": True,
        "storage": storage,
        "schema": {"openAPIV3Schema": copy.deepcopy(SCHEMA)},
        **extra,
    }


def _crd(*versions: dict[str, Any], **spec: Any) -> dict[str, Any]:
    crd: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "foos.example.com", "resourceVersion": "5", "uid": "u"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "foos", "kind": "Foo"},
            "versions": list(versions) or [_version()],
            **spec,
        },
    }
    SCHEME.default(crd)
    return crd


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def _errors(crd: dict[str, Any]) -> list[str]:
    return _rendered(validate_custom_resource_definition(crd))


# ------------------------------------------------------------------------- registration


def test_the_kind_is_served_as_kubernetes_serves_it() -> None:
    definition = SCHEME.definition("apiextensions.k8s.io", "CustomResourceDefinition")
    assert definition.storage_version == "v1"
    assert definition.list_kind == "CustomResourceDefinitionList"
    info = definition.resource
    assert info is not None
    assert (info.plural, info.singular, info.namespaced) == (
        "customresourcedefinitions",
        "customresourcedefinition",
        False,
    )
    assert info.short_names == ("crd", "crds")
    assert info.categories == ("api-extensions",)
    assert info.subresources == ("status",)


# ------------------------------------------------------------------------------ defaults


def test_defaults_fill_names_conversion_and_stored_versions() -> None:
    crd = _crd(_version("v1beta1", storage=False), _version("v1"))
    spec = crd["spec"]
    assert spec["names"]["singular"] == "foo"
    assert spec["names"]["listKind"] == "FooList"
    assert spec["conversion"] == {"strategy": "None"}
    assert crd["status"]["storedVersions"] == ["v1"]
    assert "preserveUnknownFields" not in spec
    assert _errors(crd) == []


def test_defaults_keep_what_is_set_and_give_webhook_services_port_443() -> None:
    webhook = {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"service": {"namespace": "system", "name": "conv"}},
    }
    crd = _crd(
        names={"plural": "foos", "kind": "Foo", "singular": "thefoo", "listKind": "Foos"},
        conversion={"strategy": "Webhook", "webhook": webhook},
    )
    assert crd["spec"]["names"]["singular"] == "thefoo"
    assert crd["spec"]["names"]["listKind"] == "Foos"
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] == 443
    assert _errors(crd) == []


def test_no_list_kind_default_without_a_kind() -> None:
    crd = _crd(names={"plural": "foos"})
    assert "listKind" not in crd["spec"]["names"]
    assert crd["spec"]["names"]["singular"] == ""
    assert _errors(crd) == [
        "spec.names.singular: Required value",
        "spec.names.kind: Required value",
        "spec.names.listKind: Required value",
    ]


# ------------------------------------------------------------------------ metadata/group


def test_name_must_be_plural_dot_group() -> None:
    crd = _crd()
    crd["metadata"]["name"] = "foo.example.com"
    assert _errors(crd) == [
        'metadata.name: Invalid value: "foo.example.com": must be spec.names.plural+"."+spec.group'
    ]


def test_group_is_required_a_subdomain_with_a_dot() -> None:
    crd = _crd(group="")
    crd["metadata"]["name"] = "foos."
    assert "spec.group: Required value" in _errors(crd)
    crd = _crd(group="example")
    crd["metadata"]["name"] = "foos.example"
    assert _errors(crd) == [
        'spec.group: Invalid value: "example": should be a domain with at least one dot'
    ]


def test_scope_is_required_and_cluster_or_namespaced() -> None:
    assert "spec.scope: Required value" in _errors(_crd(scope=""))
    assert _errors(_crd(scope="Global")) == [
        'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'
    ]


# ------------------------------------------------------------------------------ versions


def test_versions_need_exactly_one_storage_version() -> None:
    crd = _crd(_version("v1", storage=False), _version("v2", storage=False, served=False))
    errors = _errors(crd)
    assert errors[0].startswith('spec.versions: Invalid value: [{"Name":"v1","Served":true,')
    assert errors[0].endswith(": must have exactly one version marked as storage version")
    assert (
        errors[1]
        == "status.storedVersions: Invalid value: null: must have at least one stored version"
    )


def test_version_names_are_unique_dns1035_labels() -> None:
    crd = _crd(_version("v1"), _version("v1", storage=False))
    assert any(e.endswith(": must contain unique version names") for e in _errors(crd))
    bad = _crd(_version("1v"))
    assert bad["status"]["storedVersions"] == ["1v"]
    dns = (
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
        "with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',"
        "  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    )
    # The internal spec.version copies versions[0].name, so Kubernetes reports it twice.
    assert _errors(bad) == [
        f'spec.versions[0].name: Invalid value: "1v": {dns}',
        f'spec.version: Invalid value: "1v": {dns}',
    ]


def test_every_version_needs_a_schema() -> None:
    bare = _version("v2", storage=False)
    del bare["schema"]
    crd = _crd(_version("v1"), bare)
    assert _errors(crd) == ["spec.versions[1].schema.openAPIV3Schema: Required value"]


def test_deprecation_warning_only_for_deprecated_versions() -> None:
    crd = _crd(_version(deprecationWarning="old"))
    assert _errors(crd) == [
        'spec.versions[0].deprecationWarning: Invalid value: "old": '
        "can only be set for deprecated versions"
    ]
    crd = _crd(_version(deprecated=True, deprecationWarning="x" * 257))
    assert _errors(crd)[0].endswith(": must be <= 256 characters long")


def test_preserve_unknown_fields_may_not_be_true_in_v1() -> None:
    crd = _crd(preserveUnknownFields=True)
    assert _errors(crd) == [
        "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set "
        "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
    ]


def test_defaults_in_a_schema_need_pruning() -> None:
    version = _version()
    version["schema"]["openAPIV3Schema"]["properties"]["spec"]["default"] = {}
    crd = _crd(version, preserveUnknownFields=True)
    assert _errors(crd)[0] == (
        "spec.preserveUnknownFields: Invalid value: true: "
        "must be false in order to use defaults in the schema"
    )


# -------------------------------------------------------------------------------- names


def test_names_are_dns1035_labels_and_kinds_may_have_mixed_case() -> None:
    crd = _crd(
        names={
            "plural": "foos",
            "singular": "foo",
            "kind": "Foo_Bar",
            "shortNames": ["f.o"],
            "categories": ["all", "Bad"],
        }
    )
    errors = _errors(crd)
    assert errors[0].startswith(
        'spec.names.kind: Invalid value: "Foo_Bar": may have mixed case, but should otherwise '
        "match: a DNS-1035 label must consist of"
    )
    assert errors[1].startswith('spec.names.listKind: Invalid value: "Foo_BarList": may have')
    assert errors[2].startswith('spec.names.shortNames[0]: Invalid value: "f.o": a DNS-1035')
    assert errors[3].startswith('spec.names.categories[1]: Invalid value: "Bad": a DNS-1035')
    assert len(errors) == 4


def test_kind_and_list_kind_may_not_be_the_same() -> None:
    crd = _crd(names={"plural": "foos", "kind": "Foo", "listKind": "Foo"})
    assert _errors(crd) == [
        'spec.names.listKind: Invalid value: "Foo": kind and listKind may not be the same'
    ]


def test_accepted_names_are_checked_too() -> None:
    crd = _crd()
    crd["status"]["acceptedNames"] = {"plural": "Foos", "kind": "Foo"}
    assert _errors(crd)[0].startswith('status.acceptedNames.plural: Invalid value: "Foos": ')


# ------------------------------------------------------------------- columns/subresources


def test_printer_columns_of_a_shared_schema_are_reported_at_the_top_level() -> None:
    columns = [
        {"name": "", "type": "", "jsonPath": ""},
        {"name": "Size", "type": "text", "format": "hex", "jsonPath": "spec.size"},
    ]
    crd = _crd(_version(additionalPrinterColumns=columns))
    # One version: the internal type holds its columns at spec.additionalPrinterColumns.
    assert _errors(crd) == [
        "spec.additionalPrinterColumns[0].name: Required value",
        "spec.additionalPrinterColumns[0].type: Required value: "
        "must be one of boolean,date,integer,number,string",
        "spec.additionalPrinterColumns[0].JSONPath: Required value",
        'spec.additionalPrinterColumns[1].type: Invalid value: "text": '
        "must be one of boolean,date,integer,number,string",
        'spec.additionalPrinterColumns[1].format: Invalid value: "hex": '
        "must be one of byte,date,date-time,double,float,int32,int64,password",
        'spec.additionalPrinterColumns[1].JSONPath: Invalid value: "spec.size": '
        "must be a simple json path starting with .",
    ]


def test_columns_differing_between_versions_stay_per_version() -> None:
    crd = _crd(
        _version("v1", additionalPrinterColumns=[{"name": "A", "type": "bool", "jsonPath": ".a"}]),
        _version("v2", storage=False),
    )
    assert _errors(crd) == [
        'spec.versions[0].additionalPrinterColumns[0].type: Invalid value: "bool": '
        "must be one of boolean,date,integer,number,string"
    ]


def test_scale_paths_must_point_under_spec_and_status() -> None:
    scale = {
        "specReplicasPath": ".status.replicas",
        "statusReplicasPath": "",
        "labelSelectorPath": ".metadata.labels",
    }
    crd = _crd(_version(subresources={"scale": scale}))
    assert _errors(crd) == [
        'spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": '
        "should be a json path under .spec",
        "spec.subresources.scale.statusReplicasPath: Required value",
        'spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": '
        "should be a json path under either .spec or .status",
    ]


# --------------------------------------------------------------------------- conversion


def test_webhook_conversion_needs_a_client_config_and_review_versions() -> None:
    crd = _crd(conversion={"strategy": "Webhook"})
    assert _errors(crd) == [
        "spec.conversion.webhookClientConfig: Required value: "
        "required when strategy is set to Webhook",
        "spec.conversion.conversionReviewVersions: Required value",
    ]


def test_webhook_url_rules() -> None:
    webhook = {
        "conversionReviewVersions": ["v2"],
        "clientConfig": {"url": "http://user@/convert?x=1#frag"},
    }
    crd = _crd(conversion={"strategy": "Webhook", "webhook": webhook})
    where = "spec.conversion.webhookClientConfig.url"
    assert _errors(crd) == [
        f'{where}: Invalid value: "http": '
        "'https' is the only allowed URL scheme; desired format: https://host[/path]",
        f'{where}: Invalid value: "": host must be specified; desired format: https://host[/path]',
        f'{where}: Invalid value: "user": user information is not permitted in the URL',
        f'{where}: Invalid value: "frag": fragments are not permitted in the URL',
        f'{where}: Invalid value: "x=1": query parameters are not permitted in the URL',
        'spec.conversion.conversionReviewVersions: Invalid value: ["v2"]: '
        "must include at least one of v1, v1beta1",
    ]


def test_webhook_service_rules() -> None:
    webhook = {
        "conversionReviewVersions": ["v1", "v1"],
        "clientConfig": {"service": {"name": "", "namespace": "ns", "port": 0, "path": "/a//B"}},
    }
    crd = _crd(conversion={"strategy": "Webhook", "webhook": webhook})
    where = "spec.conversion.webhookClientConfig.service"
    assert _errors(crd) == [
        f"{where}.name: Required value",
        f"{where}.port: Invalid value: 0: port is not valid: must be between 1 and 65535, "
        "inclusive",
        f'{where}.path: Invalid value: "/a//B": segment[1] may not be empty',
        f'{where}.path: Invalid value: "/a//B": segment[2]: a lowercase RFC 1123 subdomain must '
        "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
        "an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        'spec.conversion.conversionReviewVersions[1]: Invalid value: "v1": duplicate version',
    ]


def test_none_conversion_forbids_webhook_settings() -> None:
    webhook = {"conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://x/"}}
    crd = _crd(conversion={"strategy": "None", "webhook": webhook})
    assert _errors(crd) == [
        "spec.conversion.webhookClientConfig: Forbidden: "
        "should not be set when strategy is not set to Webhook",
        "spec.conversion.conversionReviewVersions: Forbidden: "
        "should not be set when strategy is not set to Webhook",
    ]


def test_unknown_conversion_strategy() -> None:
    crd = _crd(conversion={"strategy": "Magic"})
    assert _errors(crd) == [
        'spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"'
    ]


# ----------------------------------------------------------------------- selectable fields


def test_selectable_fields_point_at_scalar_fields() -> None:
    fields = [
        {"jsonPath": ".spec.size"},
        {"jsonPath": ".spec"},
        {"jsonPath": ".spec.missing"},
        {"jsonPath": ".spec.size"},
        {"jsonPath": ""},
    ]
    crd = _crd(_version(selectableFields=fields))
    where = "spec.selectableFields"
    assert _errors(crd) == [
        f'{where}[1].jsonPath: Invalid value: ".spec": must point to a field of type string, '
        "boolean or integer. Enum string fields and strings with formats are allowed.",
        f'{where}[2].jsonPath: Invalid value: ".spec.missing": '
        "is an invalid path: does not refer to a valid field",
        f'{where}[3].jsonPath: Duplicate value: ".spec.size"',
        f"{where}[4].jsonPath: Required value",
    ]


def test_at_most_eight_selectable_fields() -> None:
    props = {f"f{i}": {"type": "string"} for i in range(9)}
    version = _version(selectableFields=[{"jsonPath": f".spec.f{i}"} for i in range(9)])
    version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"] = props
    assert _errors(_crd(version)) == [
        "spec.selectableFields: Too many: 9: must have at most 8 items"
    ]


# --------------------------------------------------------------------------------- schema


def test_status_subresource_root_must_be_an_object_with_allowed_fields() -> None:
    path = Path("spec", "validation", "openAPIV3Schema")
    assert _rendered(validate_version_schema({"type": "array"}, path, status_enabled=True)) == [
        'spec.validation.openAPIV3Schema.type: Invalid value: "array": only "object" is '
        "allowed as the type at the root of the schema if the status subresource is enabled",
        # then the structural-schema rules, as Kubernetes reports them after the status ones
        "spec.validation.openAPIV3Schema.items: Required value: must be specified",
        'spec.validation.openAPIV3Schema.type: Invalid value: "array": must be object at the root',
    ]
    causes = validate_version_schema(
        {"type": "object", "nullable": True}, path, status_enabled=True
    )
    rendered = _rendered(causes)
    assert rendered[0].startswith('spec.validation.openAPIV3Schema: Invalid value: {"ID":"",')
    assert rendered[0].endswith(
        "only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum "
        "MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items "
        "Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed "
        "at the root of the schema if the status subresource is enabled"
    )
    assert rendered[1] == (
        "spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root"
    )
    assert validate_version_schema(SCHEMA, path, status_enabled=True) == []


def test_schema_checks_run_on_each_versions_schema() -> None:
    v2 = _version("v2", storage=False)
    v2["schema"]["openAPIV3Schema"]["nullable"] = True
    crd = _crd(_version("v1"), v2)
    assert _errors(crd) == [
        "spec.versions[1].schema.openAPIV3Schema.nullable: Forbidden: "
        "nullable cannot be true at the root"
    ]


# ------------------------------------------------------------------------ stored versions


def test_stored_versions_must_stay_in_spec_versions() -> None:
    crd = _crd(_version("v2"))
    crd["status"]["storedVersions"] = ["v1", "v2"]
    assert _errors(crd) == [
        'status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was '
        "previously a storage version, and must remain in spec.versions until a storage "
        "migration ensures no data remains persisted in v1 and removes v1 from "
        "status.storedVersions"
    ]
    crd["status"]["storedVersions"] = ["v3"]
    assert _errors(crd)[0] == (
        'status.storedVersions: Invalid value: ["v3"]: must have the storage version v2'
    )


def test_protected_groups_need_api_approval() -> None:
    crd = _crd(group="widgets.k8s.io")
    crd["metadata"]["name"] = "foos.widgets.k8s.io"
    quoted = '"api-approved.kubernetes.io"'
    assert _errors(crd) == [
        f"metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups "
        f"must have approval annotation {quoted}, see "
        "https://github.com/kubernetes/enhancements/pull/1111"
    ]
    crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": "yes"}
    assert _errors(crd)[0].startswith(
        'metadata.annotations[api-approved.kubernetes.io]: Invalid value: "yes": protected '
        f"groups must have approval annotation {quoted} with either a URL or a reason starting "
        'with "unapproved"'
    )
    for approval in ("unapproved, testing", "https://github.com/kubernetes/kubernetes/pull/1"):
        crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": approval}
        assert _errors(crd) == []


# --------------------------------------------------------------------------------- update


def _established(crd: dict[str, Any]) -> dict[str, Any]:
    old = copy.deepcopy(crd)
    old["status"]["conditions"] = [{"type": "Established", "status": "True"}]
    return old


def test_group_and_plural_are_immutable() -> None:
    old = _crd()
    new = _crd(group="example.org", names={"plural": "bars", "kind": "Foo"})
    new["metadata"]["name"] = "foos.example.com"
    errors = _rendered(validate_custom_resource_definition_update(new, old))
    assert 'spec.group: Invalid value: "example.org": field is immutable' in errors
    assert 'spec.names.plural: Invalid value: "bars": field is immutable' in errors


def test_scope_and_kind_are_immutable_once_established() -> None:
    old = _crd()
    new = _crd(scope="Cluster", names={"plural": "foos", "kind": "Bar"})
    assert validate_custom_resource_definition_update(new, old) == []
    assert _rendered(validate_custom_resource_definition_update(new, _established(old))) == [
        'spec.scope: Invalid value: "Cluster": field is immutable',
        'spec.names.kind: Invalid value: "Bar": field is immutable',
    ]


def test_update_tolerates_a_stored_crd_without_schemas() -> None:
    bare = _version("v2", storage=False)
    del bare["schema"]
    old = _crd(_version("v1"), copy.deepcopy(bare))
    new = _crd(_version("v1"), bare)
    # A served version without a schema would lose every field to pruning.
    assert _rendered(validate_custom_resource_definition_update(new, old)) == [
        "spec.versions[1].schema.openAPIV3Schema: Required value: because otherwise all fields "
        "are pruned"
    ]
    new["spec"]["versions"][1]["served"] = False
    assert validate_custom_resource_definition_update(new, old) == []


def test_update_keeps_preserve_unknown_fields_of_old_crds() -> None:
    old = _crd(preserveUnknownFields=True)
    new = _crd(preserveUnknownFields=True)
    assert validate_custom_resource_definition_update(new, old) == []


def test_status_update_checks_accepted_names() -> None:
    old = _crd()
    new = copy.deepcopy(old)
    new["status"]["acceptedNames"] = {"plural": "foos", "kind": "Foo", "listKind": "Foo"}
    assert _rendered(validate_custom_resource_definition_status_update(new, old)) == [
        'status.acceptedNames.listKind: Invalid value: "Foo": kind and listKind may not be the same'
    ]


@pytest.mark.parametrize("strategy", ["Webhook"])
def test_webhook_conversion_needs_preserve_unknown_fields_false(strategy: str) -> None:
    webhook = {"conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://conv/"}}
    old = _crd(preserveUnknownFields=True)
    new = _crd(preserveUnknownFields=True, conversion={"strategy": strategy, "webhook": webhook})
    assert _rendered(validate_custom_resource_definition_update(new, old)) == [
        'spec.conversion.strategy: Invalid value: "Webhook": '
        "must be None if spec.preserveUnknownFields is true"
    ]


# ---------------------------------------------------------------------------- real CRDs

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CORPUS = (REPO_ROOT / ".." / "shared" / "crd-corpus").resolve()


def test_published_crds_are_valid() -> None:
    """Flux, cert-manager and Kyverno install their CRDs on every Kubernetes: none may be
    refused (status as the strategy leaves it on create)."""
    files = sorted(_CORPUS.glob("*/crds/*.yaml"))
    if not files:
        pytest.skip(f"the CRD corpus is not at {_CORPUS}")
    checked = 0
    for path in files:
        for doc in yaml.load_all(path.read_text(), Loader=_LOADER):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            doc.pop("status", None)
            SCHEME.default(doc)
            assert _errors(doc) == [], path.name
            checked += 1
    assert checked >= 30
