"""The Scheme: registration, freezing, serving rules and conversion through the hub."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kstore.api.gvk import GroupVersion, GroupVersionKind
from kstore.api.kinds import builtin_scheme, builtin_scheme_builder
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo, SchemeBuilder
from kstore.errors import BadRequest, Cause, Invalid, NotFound


def _rename(obj: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    spec = dict(obj.get("spec") or {})
    if old in spec:
        spec[new] = spec.pop(old)
    return {**obj, "spec": spec}


def _validate_widget(obj: dict[str, Any]) -> list[Cause]:
    replicas = obj.get("spec", {}).get("replicas", 0)
    if replicas < 0:
        return [Cause("FieldValueInvalid", "must be greater than or equal to 0", "spec.replicas")]
    return []


WIDGET = KindDefinition(
    group="example.com",
    kind="Widget",
    versions=(
        KindVersion(version="v2"),
        KindVersion(
            version="v1",
            to_hub=lambda o: _rename(o, "size", "replicas"),
            from_hub=lambda o: _rename(o, "replicas", "size"),
        ),
        KindVersion(version="v3alpha1"),
    ),
    storage_version="v2",
    resource=ResourceInfo(plural="widgets", singular="widget", namespaced=True),
    validate=_validate_widget,
)


def _scheme(runtime_config: dict[str, bool] | None = None) -> Any:
    return builtin_scheme_builder().add(WIDGET).build(runtime_config)


def test_custom_kind_converts_a_renamed_field_both_ways() -> None:
    scheme = _scheme()
    v1 = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    v1["spec"] = {"size": 3, "color": "red"}
    v2 = scheme.convert(v1, "example.com/v2")
    assert v2["apiVersion"] == "example.com/v2"
    assert v2["spec"] == {"replicas": 3, "color": "red"}
    assert scheme.convert(v2, "example.com/v1") == v1


@settings(max_examples=60, deadline=None)
@given(
    size=st.integers(min_value=-(2**63), max_value=2**63 - 1),
    extra=st.dictionaries(st.sampled_from(["color", "shape", "note"]), st.text(max_size=8)),
)
def test_custom_kind_round_trips_for_any_spec(size: int, extra: dict[str, str]) -> None:
    scheme = _scheme()
    v1 = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"size": size, **extra}}
    original = copy.deepcopy(v1)
    back = scheme.convert(scheme.convert(v1, "example.com/v2"), "example.com/v1")
    assert back == original
    assert v1 == original, "conversion must not mutate its input"


def test_alpha_versions_are_served_only_when_enabled() -> None:
    alpha = GroupVersionKind("example.com", "v3alpha1", "Widget")
    assert not _scheme().is_served(alpha)
    assert _scheme({"example.com/v3alpha1": True}).is_served(alpha)
    assert _scheme({"api/alpha": True}).is_served(alpha)
    assert not _scheme({"api/all": False}).is_served(GroupVersionKind("", "v1", "Pod"))
    # conversion works whether or not a version is served
    obj = {"apiVersion": "example.com/v3alpha1", "kind": "Widget", "spec": {"replicas": 1}}
    assert _scheme().convert(obj, "example.com/v1")["spec"] == {"size": 1}


def test_resources_list_only_served_versions() -> None:
    scheme = _scheme()
    served = {(r.group_version.api_version, r.info.plural) for r in scheme.resources()}
    assert ("example.com/v2", "widgets") in served
    assert ("example.com/v3alpha1", "widgets") not in served
    assert scheme.resource(GroupVersion("example.com", "v1"), "widgets").gvk.kind == "Widget"
    with pytest.raises(NotFound):
        scheme.resource(GroupVersion("example.com", "v1"), "gadgets")


def test_validation_runs_on_the_hub_and_reports_causes() -> None:
    scheme = _scheme()
    bad = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    bad["spec"] = {"size": -1}
    with pytest.raises(Invalid) as info:
        scheme.validate(scheme.to_hub(bad))
    assert info.value.message == (
        'Widget.example.com "w" is invalid: spec.replicas: must be greater than or equal to 0'
    )
    assert info.value.causes[0].field == "spec.replicas"


def test_registering_a_kind_twice_or_a_bad_storage_version_fails() -> None:
    with pytest.raises(ValueError):
        SchemeBuilder().add(WIDGET, WIDGET)
    bad = KindDefinition(
        group="x.io", kind="Y", versions=(KindVersion(version="v1"),), storage_version="v2"
    )
    with pytest.raises(ValueError):
        SchemeBuilder().add(bad)


def test_unknown_kinds_and_cross_group_conversion_are_errors() -> None:
    scheme = builtin_scheme()
    with pytest.raises(BadRequest):
        scheme.to_hub({"apiVersion": "v1", "kind": "Nope"})
    with pytest.raises(BadRequest):
        scheme.convert({"apiVersion": "v1", "kind": "Pod"}, "apps/v1")
    with pytest.raises(BadRequest):
        scheme.to_hub({"kind": "Pod"})


def test_the_scheme_is_frozen() -> None:
    scheme = builtin_scheme()
    with pytest.raises(TypeError):
        scheme._kinds[("x", "Y")] = WIDGET  # type: ignore[index]


# ---------------------------------------------------------------------- kinds added at run time


def _widget(version: str = "v1", *, served: bool = True) -> KindDefinition:
    return KindDefinition(
        group="example.com",
        kind="Widget",
        versions=(KindVersion(version=version, enabled=served),),
        storage_version=version,
        resource=ResourceInfo(plural="widgets", singular="widget", namespaced=True),
        list_kind="WidgetList",
    )


def test_with_definitions_adds_replaces_and_removes_kinds_in_a_new_scheme() -> None:
    base = builtin_scheme()
    with_widget = base.with_definitions(add=[_widget()])
    gv = GroupVersion("example.com", "v1")
    assert with_widget.resource(gv, "widgets").definition.kind == "Widget"
    assert not base.recognizes(gv.with_kind("Widget"))  # the old one is untouched
    assert set(base.resources()) < set(with_widget.resources())

    replaced = with_widget.with_definitions(add=[_widget("v2")])
    assert replaced.recognizes(GroupVersionKind("example.com", "v2", "Widget"))
    assert not replaced.recognizes(gv.with_kind("Widget"))

    removed = replaced.with_definitions(remove=[("example.com", "Widget")])
    assert removed.resources() == base.resources()


def test_with_definitions_keeps_the_runtime_config_and_each_versions_served_flag() -> None:
    base = builtin_scheme_builder().build({"apps/v1beta1": False})
    scheme = base.with_definitions(add=[_widget(served=False)])
    assert not scheme.is_served(GroupVersionKind("apps", "v1beta1", "Deployment"))
    assert scheme.recognizes(GroupVersionKind("example.com", "v1", "Widget"))
    assert not scheme.is_served(GroupVersionKind("example.com", "v1", "Widget"))


def test_with_definitions_refuses_what_a_builder_refuses() -> None:
    bad = KindDefinition(group="example.com", kind="Widget", versions=())
    with pytest.raises(ValueError, match="has no versions"):
        builtin_scheme().with_definitions(add=[bad])
