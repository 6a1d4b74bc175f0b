"""Derived trees: Kubernetes' Unfold, StripValueValidations, StripNullable and ToKubeOpenAPI."""

from __future__ import annotations

from pathlib import Path as FilePath
from typing import Any

import yaml

from kstore.api.structural import (
    build_structural,
    strip_nullable,
    strip_value_validations,
    to_openapi,
    unfold,
)
from tests.fixtures_path import crd_corpus

INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]


def test_unfold_spells_out_int_or_string() -> None:
    tree = build_structural(
        {
            "type": "object",
            "properties": {
                "plain": {"x-kubernetes-int-or-string": True},
                "with_any_of": {
                    "x-kubernetes-int-or-string": True,
                    "anyOf": [{"maximum": 3}],
                    "allOf": [{"minimum": 1}],
                },
                "spelled": {"x-kubernetes-int-or-string": True, "anyOf": INT_OR_STRING},
            },
        }
    )
    unfolded = unfold(tree)
    props = unfolded.properties
    assert props["plain"].validations["anyOf"] == INT_OR_STRING
    assert props["with_any_of"].validations["anyOf"] == [{"maximum": 3}]
    assert props["with_any_of"].validations["allOf"] == [{"anyOf": INT_OR_STRING}, {"minimum": 1}]
    assert props["spelled"] is tree.properties["spelled"]
    # The original tree is shared, so it is left alone.
    assert "anyOf" not in tree.properties["plain"].validations


def test_strip_value_validations_and_nullable() -> None:
    tree = build_structural(
        {
            "type": "object",
            "properties": {"a": {"type": "string", "nullable": True, "maxLength": 3}},
        }
    )
    assert strip_value_validations(tree).properties["a"].validations == {}
    stripped = strip_nullable(tree)
    assert not stripped.properties["a"].nullable
    assert stripped.properties["a"].validations == {"maxLength": 3}
    assert tree.properties["a"].nullable


def _same(a: Any, b: Any) -> bool:
    return to_openapi(a) == to_openapi(b)


def test_to_openapi_round_trips_every_corpus_schema() -> None:
    root: FilePath = crd_corpus()
    for path in sorted(root.glob("*/crds/*.yaml")):
        crd = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
        for version in crd["spec"]["versions"]:
            schema = version["schema"]["openAPIV3Schema"]
            tree = build_structural(schema)
            openapi = to_openapi(tree)
            assert openapi == schema, f"{path.name} {version['name']}"
            assert _same(build_structural(openapi), tree)
