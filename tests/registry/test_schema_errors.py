"""An object the field manager cannot walk is answered by validation, not by the field manager.

Kubernetes' create and update handlers record managedFields with ``UpdateNoErrors``: when the
object does not fit the kind's schema (a keyed list element without its key), managedFields
are dropped and the request goes on, so validation answers it with a 422 naming the field.
"""

from __future__ import annotations

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import Invalid
from kstore.registry.interface import CreateOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from tests.registry.objects import ctx, deployment, hub, pod


def _fields(error: Invalid) -> list[tuple[str, str]]:
    return [(cause.field, cause.type) for cause in error.causes]


def test_create_of_a_pod_with_a_nameless_container_is_invalid_not_a_schema_error(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    body = pod("nameless")
    del body["spec"]["containers"][0]["name"]
    with pytest.raises(Invalid) as caught:
        registry.store("", "pods").create(
            ctx(), hub(scheme, body), CreateOptions(field_manager="kubectl")
        )
    assert ("spec.containers[0].name", "FieldValueRequired") in _fields(caught.value)
    assert str(caught.value).startswith(
        'Pod "nameless" is invalid: spec.containers[0].name: Required value'
    )


def test_update_that_drops_a_container_name_is_invalid_not_a_schema_error(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("apps", "deployments")
    store.create(ctx(api_version="apps/v1"), hub(scheme, deployment("web")), CreateOptions())
    body = deployment("web")
    del body["spec"]["template"]["spec"]["containers"][0]["name"]
    changed = hub(scheme, body)
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx(api_version="apps/v1"),
            "web",
            lambda current: {**changed, "metadata": dict(changed["metadata"])},
            UpdateOptions(field_manager="kubectl"),
        )
    assert (
        "spec.template.spec.containers[0].name",
        "FieldValueRequired",
    ) in _fields(caught.value)


def test_a_valid_create_still_records_its_managed_fields(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    stored = (
        registry.store("", "pods")
        .create(ctx(), hub(scheme, pod("named")), CreateOptions(field_manager="kubectl"))
        .object
    )
    entries = stored["metadata"]["managedFields"]
    assert [(e["manager"], e["operation"]) for e in entries] == [("kubectl", "Update")]
