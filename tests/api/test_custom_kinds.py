"""The kind a CustomResourceDefinition defines, as the Scheme serves it."""

from __future__ import annotations

from typing import Any

from kstore.api.custom_kinds import kind_definition_for

SCHEMA = {"type": "object", "properties": {"spec": {"type": "object"}}}


def _crd(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "widgets.example.k8s.io", "uid": "u", "generation": 1},
        "spec": {
            "group": "example.k8s.io",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1beta1",
                    "served": True,
                    "storage": False,
                    "schema": {"openAPIV3Schema": SCHEMA},
                },
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": SCHEMA},
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                            "labelSelectorPath": ".status.selector",
                        },
                    },
                    "selectableFields": [{"jsonPath": ".spec.color"}],
                    "additionalPrinterColumns": [
                        {"name": "Color", "type": "string", "jsonPath": ".spec.color"}
                    ],
                },
                {"name": "v1alpha1", "served": False, "storage": False},
            ],
        },
        "status": status,
    }


ACCEPTED = {
    "plural": "widgets",
    "singular": "widget",
    "kind": "Widget",
    "listKind": "WidgetList",
    "shortNames": ["wd"],
    "categories": ["all"],
}


def test_a_crd_whose_names_are_not_accepted_serves_nothing() -> None:
    assert kind_definition_for(_crd()) is None


def test_the_kind_follows_the_accepted_names_versions_and_subresources() -> None:
    d = kind_definition_for(_crd(acceptedNames=ACCEPTED))
    assert d is not None
    assert (d.group, d.kind, d.list_kind, d.storage_version) == (
        "example.k8s.io",
        "Widget",
        "WidgetList",
        "v1",
    )
    assert [(v.version, v.enabled) for v in d.versions] == [
        ("v1beta1", True),
        ("v1", True),
        ("v1alpha1", False),
    ]
    info = d.resource
    assert info is not None
    assert (info.plural, info.singular, info.namespaced) == ("widgets", "widget", True)
    assert info.short_names == ("wd",) and info.categories == ("all",)
    assert info.subresources == ("scale", "status")
    assert info.scale is not None and info.scale.label_selector == ".status.selector"
    # Stored under the group even when it ends in .k8s.io, as kube-apiserver does.
    assert info.key_prefix == "/example.k8s.io/widgets"
    assert d.field_labels is not None
    assert d.field_labels({"spec": {"color": "red"}}) == {"spec.color": "red"}
    v1 = d.version("v1")
    assert [c.name for c in v1.printer_columns] == ["Color"]
    assert [c.name for c in d.version("v1beta1").printer_columns] == ["Age"]
    assert v1.openapi_schema == SCHEMA
