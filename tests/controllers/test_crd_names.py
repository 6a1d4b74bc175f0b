"""The names a CRD is granted and its NamesAccepted condition, as Kubernetes' naming controller
decides them."""

from __future__ import annotations

from typing import Any

from kstore.api.custom_kinds import set_condition
from kstore.controllers.crd_names import NameClaims, accepted_names


def _crd(
    plural: str,
    kind: str,
    group: str = "example.com",
    accepted: dict[str, Any] | None = None,
    **names: Any,
) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {
                "plural": plural,
                "singular": plural.rstrip("s"),
                "kind": kind,
                "listKind": f"{kind}List",
                **names,
            },
        },
        "status": {"acceptedNames": accepted or {}},
    }


def _claims(*crds: dict[str, Any], builtin: list[tuple[str, ...]] | None = None) -> NameClaims:
    return NameClaims.of("example.com", crds, builtin or [])


def test_fresh_names_are_all_granted() -> None:
    crd = _crd("widgets", "Widget", shortNames=["wd"], categories=["all"])
    granted, condition = accepted_names(crd, _claims(crd))
    assert granted == {
        "plural": "widgets",
        "singular": "widget",
        "kind": "Widget",
        "listKind": "WidgetList",
        "shortNames": ["wd"],
        "categories": ["all"],
    }
    assert condition == {
        "type": "NamesAccepted",
        "status": "True",
        "reason": "NoConflicts",
        "message": "no conflicts found",
    }


def test_a_plural_another_crd_of_the_group_holds_is_refused() -> None:
    holder = _crd("widgets", "Widget", accepted={"plural": "widgets", "kind": "Widget"})
    newcomer = _crd("widgets", "Gadget")
    granted, condition = accepted_names(newcomer, _claims(holder, newcomer))
    assert "plural" not in granted and granted["kind"] == "Gadget"
    assert condition["status"] == "False"
    assert (condition["reason"], condition["message"]) == (
        "PluralConflict",
        '"widgets" is already in use',
    )


def test_another_group_does_not_conflict() -> None:
    elsewhere = _crd("widgets", "Widget", group="other.io", accepted={"plural": "widgets"})
    crd = _crd("widgets", "Widget")
    assert accepted_names(crd, _claims(elsewhere, crd))[1]["status"] == "True"


def test_kind_and_short_name_conflicts_have_their_own_reasons() -> None:
    holder = _crd("widgets", "Widget", accepted={"kind": "Widget", "shortNames": ["wd"]})
    kind_clash = _crd("gadgets", "Widget")
    assert accepted_names(kind_clash, _claims(holder))[1]["reason"] == "KindConflict"
    short_clash = _crd("gadgets", "Gadget", shortNames=["wd"])
    _, condition = accepted_names(short_clash, _claims(holder))
    assert (condition["reason"], condition["message"]) == (
        "ShortNamesConflict",
        '"wd" is already in use',
    )


def test_a_built_in_resource_of_the_group_holds_its_names() -> None:
    crd = _crd("deployments", "Deployment")
    builtin = [("deployments", "deployment", "Deployment", "DeploymentList", "deploy")]
    granted, condition = accepted_names(crd, _claims(crd, builtin=builtin))
    assert condition["status"] == "False"
    assert condition["reason"] == "ListKindConflict"  # the last conflict found is named
    assert granted == {}


def test_a_crd_keeps_its_own_names_when_asked_again() -> None:
    accepted = {
        "plural": "widgets",
        "singular": "widget",
        "kind": "Widget",
        "listKind": "WidgetList",
    }
    crd = _crd("widgets", "Widget", accepted=accepted)
    granted, condition = accepted_names(crd, _claims(crd))
    assert condition["status"] == "True" and granted == accepted


def test_conditions_keep_their_transition_time_until_their_status_changes() -> None:
    status: dict[str, Any] = {}
    true = {"type": "Established", "status": "True", "reason": "A", "message": "a"}
    assert set_condition(status, true, "2026-01-01T00:00:00Z")
    assert not set_condition(status, true, "2026-01-02T00:00:00Z")
    reworded = {**true, "message": "b"}
    assert set_condition(status, reworded, "2026-01-03T00:00:00Z")
    assert status["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert set_condition(status, {**true, "status": "False"}, "2026-01-04T00:00:00Z")
    assert status["conditions"] == [
        {
            "type": "Established",
            "status": "False",
            "reason": "A",
            "message": "a",
            "lastTransitionTime": "2026-01-04T00:00:00Z",
        }
    ]
