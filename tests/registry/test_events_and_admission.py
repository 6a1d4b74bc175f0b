"""Event expiry (the registry's event TTL) and the admission chain embedders register.

Every test runs twice: with the blocking create and update and with their asyncio forms
(the ``write_face`` fixture)."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import Forbidden, InternalError, NotFound
from kstore.registry.interface import (
    AdmissionAttributes,
    CreateOptions,
    DeleteOptions,
    Operation,
    UpdateOptions,
)
from kstore.registry.registry import StoreRegistry
from kstore.storage.lmdb import LmdbBackend
from tests.registry.conftest import make_registry
from tests.registry.objects import changed, config_map, ctx, hub, wait_for

pytestmark = pytest.mark.usefixtures("write_face")


def _event(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Started",
        "message": "started",
        "type": "Normal",
    }


def _missing(registry: StoreRegistry, name: str) -> bool:
    try:
        registry.store("", "events").get(ctx(), name)
    except NotFound:
        return True
    return False


def test_events_expire_after_the_event_ttl(scheme: Scheme, backend: LmdbBackend) -> None:
    registry = make_registry(scheme, backend, event_ttl_seconds=1)
    try:
        events = registry.store("", "events")
        events.create(ctx(), hub(scheme, _event("e")), CreateOptions())
        assert not _missing(registry, "e")
        assert wait_for(lambda: _missing(registry, "e"), timeout=6.0)
    finally:
        registry.close()


def test_updating_an_event_renews_its_ttl(scheme: Scheme, backend: LmdbBackend) -> None:
    registry = make_registry(scheme, backend, event_ttl_seconds=2)
    try:
        events = registry.store("", "events")
        events.create(ctx(), hub(scheme, _event("e")), CreateOptions())
        assert not wait_for(lambda: _missing(registry, "e"), timeout=1.2)
        events.update(ctx(), "e", changed(lambda o: o.update(count=2)), UpdateOptions())
        assert not wait_for(lambda: _missing(registry, "e"), timeout=1.2)
        assert wait_for(lambda: _missing(registry, "e"), timeout=6.0)
    finally:
        registry.close()


def test_event_ttl_zero_keeps_events(scheme: Scheme, backend: LmdbBackend) -> None:
    registry = make_registry(scheme, backend, event_ttl_seconds=0)
    try:
        registry.store("", "events").create(ctx(), hub(scheme, _event("e")), CreateOptions())
        assert registry.store("", "events").strategy.ttl_seconds is None
    finally:
        registry.close()


def test_other_kinds_never_expire(registry: StoreRegistry) -> None:
    assert registry.store("", "configmaps").strategy.ttl_seconds is None
    assert registry.store("", "events").strategy.ttl_seconds == 3600


def test_mutating_hooks_run_in_order_before_validating_hooks(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    calls: list[str] = []

    def label(value: str) -> Any:
        def hook(a: AdmissionAttributes) -> None:
            calls.append(f"mutate:{value}")
            assert a.object is not None
            a.object.setdefault("metadata", {}).setdefault("labels", {})["order"] = value

        return hook

    def check(a: AdmissionAttributes) -> None:
        assert a.object is not None
        calls.append(f"validate:{a.object['metadata']['labels']['order']}")

    registry.add_admission(mutating=label("first"), validating=check)
    registry.add_admission(mutating=label("second"))
    stored = (
        registry.store("", "configmaps")
        .create(ctx(), hub(scheme, config_map("c")), CreateOptions())
        .object
    )
    assert calls == ["mutate:first", "mutate:second", "validate:second"]
    assert stored["metadata"]["labels"] == {"order": "second"}


def test_validating_hook_sees_the_final_object_and_can_reject(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    seen: list[dict[str, Any]] = []

    def deny(a: AdmissionAttributes) -> None:
        assert a.object is not None
        seen.append(a.object)
        raise Forbidden("configmaps are closed today")

    registry.add_admission(validating=deny)
    with pytest.raises(Forbidden):
        registry.store("", "configmaps").create(
            ctx(), hub(scheme, config_map("c")), CreateOptions()
        )
    assert seen[0]["metadata"]["uid"]  # system fields were filled before validation
    with pytest.raises(NotFound):
        registry.store("", "configmaps").get(ctx(), "c")


def test_a_validating_hook_changes_only_its_copy_unless_it_promised_to_read_only(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def scribble(tag: str) -> Any:
        def hook(a: AdmissionAttributes) -> None:
            assert a.object is not None
            seen.append((tag, a.object))
            a.object.setdefault("data", {})[tag] = "scribbled"

        return hook

    def observe(a: AdmissionAttributes) -> None:
        assert a.object is not None
        seen.append(("observer", a.object))

    registry.add_admission(validating=scribble("first"))
    registry.add_admission(validating=observe, reads_only=True)
    registry.add_admission(validating=scribble("second"))
    stored = registry.store("", "configmaps").create(
        ctx(), hub(scheme, config_map("c")), CreateOptions()
    )
    # The two that did not promise share one copy; the one that did gets the object itself,
    # which reaches storage untouched by the others.
    (_, first), (_, observed), (_, second) = seen
    assert first is second and observed is not first
    assert "first" not in observed.get("data", {})
    assert stored.object.get("data", {}).keys().isdisjoint({"first", "second"})


def test_hooks_see_updates_with_the_old_object_and_deletes_without_an_object(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("", "configmaps")
    store.create(ctx(), hub(scheme, config_map("c", k="1")), CreateOptions())
    seen: list[tuple[Operation, Any, Any, bool]] = []

    def record(a: AdmissionAttributes) -> None:
        old = a.old_object["data"] if a.old_object else None
        new = a.object["data"] if a.object else None
        seen.append((a.operation, old, new, a.dry_run))

    registry.add_admission(validating=record)
    store.update(ctx(), "c", changed(lambda o: o["data"].update(k="2")), UpdateOptions())
    store.delete(ctx(), "c", DeleteOptions(dry_run=True))
    store.delete(ctx(), "c", DeleteOptions())
    assert seen == [
        (Operation.UPDATE, {"k": "1"}, {"k": "2"}, False),
        (Operation.DELETE, {"k": "2"}, None, True),
        (Operation.DELETE, {"k": "2"}, None, False),
    ]


def test_a_rejected_delete_keeps_the_object(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store("", "configmaps")
    store.create(ctx(), hub(scheme, config_map("c")), CreateOptions())

    def protect(a: AdmissionAttributes) -> None:
        if a.operation is Operation.DELETE:
            raise Forbidden('configmaps "c" is forbidden: protected')

    registry.add_admission(validating=protect)
    with pytest.raises(Forbidden):
        store.delete(ctx(), "c", DeleteOptions())
    assert store.get(ctx(), "c")["metadata"]["name"] == "c"


def test_hook_warnings_are_returned(registry: StoreRegistry, scheme: Scheme) -> None:
    registry.add_admission(mutating=lambda a: a.warnings.append("think twice"))
    result = registry.store("", "configmaps").create(
        ctx(), hub(scheme, config_map("c")), CreateOptions()
    )
    assert result.warnings == ("think twice",)


def test_a_hook_that_crashes_is_an_internal_error(registry: StoreRegistry, scheme: Scheme) -> None:
    def crash(a: AdmissionAttributes) -> None:
        raise RuntimeError("boom")

    registry.add_admission(mutating=crash)
    with pytest.raises(InternalError) as caught:
        registry.store("", "configmaps").create(
            ctx(), hub(scheme, config_map("c")), CreateOptions()
        )
    assert "boom" in caught.value.message


def test_dry_run_runs_admission_with_the_dry_run_flag(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    flags: list[bool] = []
    registry.add_admission(validating=lambda a: flags.append(a.dry_run))
    registry.store("", "configmaps").create(
        ctx(), hub(scheme, config_map("c")), CreateOptions(dry_run=True)
    )
    assert flags == [True]
