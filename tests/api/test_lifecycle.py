"""Deprecation warnings from the Scheme's kind versions (kstore.api.scheme.Lifecycle), for the
built-in apps betas and for CRD versions (kstore.api.custom_kinds)."""

from __future__ import annotations

from typing import Any

from kstore.api.custom_kinds import kind_definition_for
from kstore.api.gvk import GroupVersionKind
from kstore.api.kinds import builtin_scheme_builder
from kstore.api.scheme import Lifecycle

_V1 = GroupVersionKind("apps", "v1", "Deployment")


def test_the_warning_is_due_once_the_release_reaches_the_deprecation() -> None:
    lifecycle = Lifecycle(introduced=(1, 8), deprecated=(1, 9), removed=(1, 16), replacement=_V1)
    gvk = GroupVersionKind("apps", "v1beta2", "Deployment")
    assert lifecycle.deprecation_warning(gvk, (1, 8)) == ""
    assert lifecycle.deprecation_warning(gvk, (1, 9)) == (
        "apps/v1beta2 Deployment is deprecated in v1.9+, unavailable in v1.16+; "
        "use apps/v1 Deployment"
    )
    bare = Lifecycle(deprecated=(1, 20))
    assert (
        bare.deprecation_warning(gvk, (1, 36)) == "apps/v1beta2 Deployment is deprecated in v1.20+"
    )


def test_the_apps_betas_carry_prerelease_lifecycle_gen_data() -> None:
    deployment = next(
        d for d in builtin_scheme_builder().build().definitions() if d.kind == "Deployment"
    )
    assert deployment.version("v1").lifecycle is None
    assert deployment.version("v1beta1").lifecycle == Lifecycle(
        introduced=(1, 6), deprecated=(1, 8), removed=(1, 16), replacement=_V1
    )
    assert deployment.version("v1beta2").lifecycle == Lifecycle(
        introduced=(1, 8), deprecated=(1, 9), removed=(1, 16), replacement=_V1
    )


def _crd(*versions: dict[str, Any]) -> dict[str, Any]:
    return {
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gizmos", "kind": "Gizmo"},
            "versions": [{"served": True, "storage": i == 0, **v} for i, v in enumerate(versions)],
        },
        "status": {"acceptedNames": {"plural": "gizmos", "kind": "Gizmo"}},
    }


def _warning(crd: dict[str, Any], version: str) -> str | None:
    definition = kind_definition_for(crd)
    assert definition is not None
    lifecycle = definition.version(version).lifecycle
    if lifecycle is None:
        return None
    return lifecycle.deprecation_warning(GroupVersionKind("example.com", version, "Gizmo"), (1, 36))


def test_a_crd_version_names_the_newest_served_undeprecated_newer_version() -> None:
    crd = _crd(
        {"name": "v1beta1", "deprecated": True},
        {"name": "v1"},
        {"name": "v2"},
        {"name": "v3", "served": False},
        {"name": "v4", "deprecated": True},
    )
    assert _warning(crd, "v1beta1") == (
        "example.com/v1beta1 Gizmo is deprecated; use example.com/v2 Gizmo"
    )
    assert _warning(crd, "v4") == "example.com/v4 Gizmo is deprecated"
    assert _warning(crd, "v2") is None


def test_a_crd_version_with_its_own_words_sends_them() -> None:
    crd = _crd({"name": "v1", "deprecated": True, "deprecationWarning": "v1 goes in June"})
    assert _warning(crd, "v1") == "v1 goes in June"
