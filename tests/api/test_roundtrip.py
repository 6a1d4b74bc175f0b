"""Lossless conversion of every built-in kind, with hypothesis-generated objects.

As Kubernetes' round-trip fuzz tests, for every kind of the built-in Scheme:

- every ordered pair of versions (a, b): ``a -> hub -> b -> hub -> a`` gives the original back;
- every version v: ``hub -> v -> hub`` is the identity;
- no conversion mutates its input, and converting equal inputs gives byte-identical JSON;
- defaulting is idempotent, and defaulted objects round-trip too.

Kinds whose versions all share the hub's shape get fewer examples (there, conversion only
rewrites ``apiVersion``), and so do List kinds (their items are tested as their own kind).
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kstore.api.gvk import HUB_VERSION, GroupVersion
from kstore.api.kinds import builtin_scheme
from kstore.api.scheme import KindDefinition
from tests.strategies import has_strategy, object_of

SCHEME = builtin_scheme()
DEFINITIONS = sorted(SCHEME.definitions(), key=lambda d: (d.group, d.kind))


def _converts(d: KindDefinition) -> bool:
    return any(v.to_hub is not None or v.from_hub is not None for v in d.versions)


def _settings(d: KindDefinition) -> settings:
    if d.kind.endswith("List"):
        # Each example holds several items; the item kind is tested on its own.
        examples = 10
    elif _converts(d):
        examples = 50
    elif any(v.default for v in d.versions):
        examples = 25
    else:
        examples = 10
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _id(d: KindDefinition, *versions: str) -> str:
    return "/".join([d.group or "core", d.kind, *versions])


PAIRS = [
    pytest.param(d, a.version, b.version, id=_id(d, a.version, b.version))
    for d in DEFINITIONS
    for a in d.versions
    for b in d.versions
]
SINGLE = [pytest.param(d, v.version, id=_id(d, v.version)) for d in DEFINITIONS for v in d.versions]


def _checked(convert: Any, obj: dict[str, Any], *args: Any) -> dict[str, Any]:
    """Run one conversion step, asserting it leaves its input alone and is deterministic."""
    before = copy.deepcopy(obj)
    out: dict[str, Any] = convert(obj, *args)
    assert obj == before, "conversion mutated its input"
    again: dict[str, Any] = convert(copy.deepcopy(obj), *args)
    assert orjson.dumps(out) == orjson.dumps(again), "equal inputs gave different bytes"
    return out


def test_every_builtin_kind_has_a_strategy() -> None:
    missing = [_id(d) for d in DEFINITIONS if not has_strategy(d.group, d.kind)]
    assert missing == []


@pytest.mark.parametrize(("definition", "a", "b"), PAIRS)
def test_a_to_hub_to_b_to_hub_to_a_returns_the_original(
    definition: KindDefinition, a: str, b: str
) -> None:
    @_settings(definition)
    @given(obj=object_of(definition.group, definition.kind, a))
    def check(obj: dict[str, Any]) -> None:
        hub = _checked(SCHEME.to_hub, obj)
        assert hub["apiVersion"] == GroupVersion(definition.group, HUB_VERSION).api_version
        in_b = _checked(SCHEME.from_hub, hub, b)
        assert in_b["apiVersion"] == GroupVersion(definition.group, b).api_version
        hub_again = _checked(SCHEME.to_hub, in_b)
        assert hub_again == hub
        back = _checked(SCHEME.from_hub, hub_again, a)
        assert back == obj

    check()


@pytest.mark.parametrize(("definition", "version"), SINGLE)
def test_hub_to_version_to_hub_is_the_identity(definition: KindDefinition, version: str) -> None:
    versions = [v.version for v in definition.versions]

    @_settings(definition)
    @given(
        source=st.sampled_from(versions).flatmap(
            lambda v: object_of(definition.group, definition.kind, v)
        )
    )
    def check(source: dict[str, Any]) -> None:
        hub = SCHEME.to_hub(source)
        external = _checked(SCHEME.from_hub, hub, version)
        assert _checked(SCHEME.to_hub, external) == hub

    check()


@pytest.mark.parametrize(("definition", "version"), SINGLE)
def test_defaulting_is_idempotent_and_defaulted_objects_round_trip(
    definition: KindDefinition, version: str
) -> None:
    others = [v.version for v in definition.versions]

    @_settings(definition)
    @given(obj=object_of(definition.group, definition.kind, version), other=st.sampled_from(others))
    def check(obj: dict[str, Any], other: str) -> None:
        once = copy.deepcopy(obj)
        SCHEME.default(once)
        twice = copy.deepcopy(once)
        SCHEME.default(twice)
        assert twice == once
        via_other = SCHEME.from_hub(SCHEME.to_hub(once), other)
        assert SCHEME.from_hub(SCHEME.to_hub(via_other), version) == once

    check()


@pytest.mark.parametrize(("definition", "version"), SINGLE)
def test_encoding_is_stable_through_a_json_round_trip(
    definition: KindDefinition, version: str
) -> None:
    @settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(obj=object_of(definition.group, definition.kind, version))
    def check(obj: dict[str, Any]) -> None:
        hub = SCHEME.to_hub(obj)
        data = orjson.dumps(SCHEME.from_hub(hub, version))
        assert orjson.dumps(orjson.loads(data)) == data
        assert orjson.loads(data) == obj

    check()


@pytest.mark.parametrize(
    "api_version",
    ["v1", "apps/v1", "apps/v1beta1", "coordination.k8s.io/v1", "meta.k8s.io/v1"],
)
def test_option_kinds_and_watch_events_exist_in_every_group_version(api_version: str) -> None:
    gv = GroupVersion.parse(api_version)
    for kind in ("WatchEvent", "DeleteOptions", "ListOptions", "CreateOptions", "PatchOptions"):
        assert SCHEME.recognizes(gv.with_kind(kind)), kind


@pytest.mark.parametrize("api_version", ["v1", "meta.k8s.io/v1"])
def test_unversioned_kinds_are_recognized_as_v1_and_as_meta_v1(api_version: str) -> None:
    gv = GroupVersion.parse(api_version)
    for kind in ("Status", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList"):
        assert SCHEME.recognizes(gv.with_kind(kind)), kind


def test_table_and_partial_metadata_are_meta_v1_and_v1beta1_only() -> None:
    for version in ("v1", "v1beta1"):
        for kind in ("Table", "PartialObjectMetadata", "PartialObjectMetadataList"):
            assert SCHEME.recognizes(GroupVersion("meta.k8s.io", version).with_kind(kind))
    assert not SCHEME.recognizes(GroupVersion("apps", "v1").with_kind("Table"))
    assert not SCHEME.recognizes(GroupVersion("meta.k8s.io", "v1beta1").with_kind("DeleteOptions"))
    assert not any(d.resource for d in DEFINITIONS if d.group == "meta.k8s.io")
