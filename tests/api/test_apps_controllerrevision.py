"""apps/v1 ControllerRevision: no defaults, validation as Kubernetes' apps API does it, and its
table."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.controllerrevision import (
    validate_controller_revision,
    validate_controller_revision_update,
)
from kstore.errors import Cause
from kstore.server.table import build_table

SCHEME = builtin_scheme()


def _revision(**fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "web-7d9f", "namespace": "default"},
        "data": {"spec": {"template": {"metadata": {"labels": {"app": "web"}}}}},
        "revision": 1,
        **fields,
    }


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def test_nothing_is_defaulted() -> None:
    obj = _revision()
    before = copy.deepcopy(obj)
    SCHEME.default(obj)
    assert obj == before


def test_a_valid_revision() -> None:
    assert validate_controller_revision(_revision()) == []


def test_data_is_mandatory_and_revision_not_negative() -> None:
    obj = _revision(revision=-1)
    del obj["data"]
    assert _rendered(validate_controller_revision(obj)) == [
        "data: Required value: data is mandatory",
        "revision: Invalid value: -1: must be greater than or equal to 0",
    ]


def test_data_is_immutable_and_revision_is_not() -> None:
    old = _revision()
    new = copy.deepcopy(old)
    new["revision"] = 4
    assert validate_controller_revision_update(new, old) == []
    new["data"] = {"spec": {}}
    assert _rendered(validate_controller_revision_update(new, old)) == [
        'data: Invalid value: {"spec":{}}: field is immutable'
    ]


def test_the_table_names_the_controller() -> None:
    created = (datetime.now(UTC) - timedelta(minutes=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    owned = _revision(revision=2)
    owned["metadata"].update(
        creationTimestamp=created,
        ownerReferences=[
            {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "1"},
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "name": "web",
                "uid": "2",
                "controller": True,
            },
        ],
    )
    orphan = _revision()
    orphan["metadata"]["creationTimestamp"] = created
    table = build_table([owned, orphan], kind="ControllerRevision", group="apps", meta_version="v1")
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Controller",
        "Revision",
        "Age",
    ]
    assert [row["cells"] for row in table["rows"]] == [
        ["web-7d9f", "statefulset.apps/web", 2, "3m"],
        ["web-7d9f", "<none>", 1, "3m"],
    ]
