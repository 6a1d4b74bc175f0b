"""Conformance: delete, with preconditions, validation and a (possibly stale) cached object.

Ports of Kubernetes' ``RunTestUnconditionalDelete``, ``RunTestConditionalDelete`` and the
suggestion family (``RunTestDeleteWithSuggestion``, ``...AndConflict``, ``...OfDeletedObject``,
``RunTestDeleteWithConflict``, ``RunTestValidateDeletionWithSuggestion``,
``RunTestValidateDeletionWithOnlySuggestionValid``, ``RunTestPreconditionalDeleteWithSuggestion``,
``RunTestPreconditionalDeleteWithOnlySuggestionPass``). The rules: a delete returns the last
state with the delete's own (newer) revision; a failed precondition is Conflict; a
``validate_deletion`` error is returned as the very same exception; a stale ``cached_existing``
never changes the outcome, it only saves a read.
"""

from __future__ import annotations

import pytest

from kstore.api.gvk import Object
from kstore.errors import Conflict, NotFound
from kstore.storage.interface import Preconditions, Storage
from kstore.testing.env import ConformanceEnv
from kstore.testing.objects import pod, rv_of, with_rv
from kstore.testing.watching import run_bounded

__all__ = ["TestConditionalDelete", "TestDelete", "TestDeleteWithSuggestion"]


def _set_labels(storage: Storage, key: str, labels: dict[str, str]) -> Object:
    def relabel(current: Object) -> Object:
        return {**current, "metadata": {**current["metadata"], "labels": labels}}

    return storage.guaranteed_update(key, relabel)


def _set_uid(storage: Storage, key: str, uid: str) -> Object:
    def set_uid(current: Object) -> Object:
        return {**current, "metadata": {**current["metadata"], "uid": uid}}

    return storage.guaranteed_update(key, set_uid)


class TestDelete:
    def test_delete_returns_last_state_with_the_delete_revision(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        stored = pods.create("/pods/test-ns/foo", pod("foo", "test-ns"))

        out = pods.delete("/pods/test-ns/foo")

        assert rv_of(out) > rv_of(stored), "a delete is a write with its own, newer revision"
        assert out == with_rv(stored, rv_of(out))
        assert pods.current_revision() >= rv_of(out)
        with pytest.raises(NotFound):
            pods.get("/pods/test-ns/foo")

    def test_delete_of_a_missing_key_is_not_found(self, conformance_env: ConformanceEnv) -> None:
        pods = conformance_env.pods()
        before = pods.current_revision()
        with pytest.raises(NotFound):
            pods.delete("/pods/non-existing")
        assert pods.current_revision() == before

    def test_delete_with_empty_preconditions_is_unconditional(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        stored = pods.create("/pods/test-ns/foo", pod("foo", "test-ns", uid="A"))
        out = pods.delete("/pods/test-ns/foo", preconditions=Preconditions())
        assert out == with_rv(stored, rv_of(out))


class TestConditionalDelete:
    def test_uid_precondition_that_holds_deletes(self, conformance_env: ConformanceEnv) -> None:
        pods = conformance_env.pods()
        stored = pods.create("/pods/test-ns/foo", pod("foo", "test-ns", uid="A"))
        out = pods.delete("/pods/test-ns/foo", preconditions=Preconditions(uid="A"))
        assert rv_of(out) > rv_of(stored)
        assert out == with_rv(stored, rv_of(out))

    def test_uid_precondition_that_fails_is_a_conflict(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        stored = pods.create("/pods/test-ns/foo", pod("foo", "test-ns", uid="A"))
        with pytest.raises(
            Conflict,
            match="Precondition failed: UID in precondition: B, UID in object meta: A",
        ):
            pods.delete("/pods/test-ns/foo", preconditions=Preconditions(uid="B"))
        assert pods.get("/pods/test-ns/foo") == stored

    def test_resource_version_precondition(self, conformance_env: ConformanceEnv) -> None:
        pods = conformance_env.pods()
        created = pods.create("/pods/test-ns/foo", pod("foo", "test-ns"))
        updated = _set_labels(pods, "/pods/test-ns/foo", {"v": "2"})
        stale = Preconditions(resource_version=str(rv_of(created)))
        with pytest.raises(Conflict, match="Precondition failed: ResourceVersion in precondition"):
            pods.delete("/pods/test-ns/foo", preconditions=stale)
        assert pods.get("/pods/test-ns/foo") == updated

        current = Preconditions(resource_version=str(rv_of(updated)))
        out = pods.delete("/pods/test-ns/foo", preconditions=current)
        assert out == with_rv(updated, rv_of(out))


class TestDeleteWithSuggestion:
    def test_delete_with_the_current_object_as_suggestion(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        original = pods.create("/pods/test-ns/name", pod("name", "test-ns"))
        pods.delete("/pods/test-ns/name", cached_existing=original)
        with pytest.raises(NotFound):
            pods.get("/pods/test-ns/name")

    def test_delete_with_a_stale_suggestion_returns_the_current_state(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        original = pods.create("/pods/test-ns/name", pod("name", "test-ns"))
        updated = _set_labels(pods, "/pods/test-ns/name", {"foo": "bar"})

        out = pods.delete("/pods/test-ns/name", cached_existing=original)

        assert out == with_rv(updated, rv_of(out))
        assert rv_of(out) > rv_of(updated)
        with pytest.raises(NotFound):
            pods.get("/pods/test-ns/name")

    def test_delete_retries_after_a_conflicting_update(
        self, conformance_env: ConformanceEnv
    ) -> None:
        # validate_deletion runs on the state the delete read; an update sneaks in during the
        # first call, so the delete must notice, re-read and validate again: exactly twice.
        pods = conformance_env.pods()
        pods.create("/pods/test-ns/name", pod("name", "test-ns"))
        calls: list[Object] = []
        updated: list[Object] = []

        def validate_with_update(obj: Object) -> None:
            calls.append(obj)
            if len(calls) == 1:
                updated.append(_set_labels(pods, "/pods/test-ns/name", {"foo": "bar"}))

        out = run_bounded(
            lambda: pods.delete("/pods/test-ns/name", validate_deletion=validate_with_update),
            "a delete whose validation writes to the same key",
        )

        assert len(calls) == 2, f"validate_deletion ran {len(calls)} times, expected 2"
        assert calls[1] == updated[0]
        assert out == with_rv(updated[0], rv_of(out))
        with pytest.raises(NotFound):
            pods.get("/pods/test-ns/name")

    def test_delete_with_suggestion_of_a_deleted_object_is_not_found(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        original = pods.create("/pods/test-ns/name", pod("name", "test-ns"))
        pods.delete("/pods/test-ns/name", cached_existing=original)
        with pytest.raises(NotFound):
            pods.delete("/pods/test-ns/name", cached_existing=original)

    def test_validation_error_is_returned_unchanged_after_one_call(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        original = pods.create("/pods/test-ns/name", pod("name", "test-ns"))
        refusal = ValueError("validation error")
        calls: list[Object] = []

        def refuse(obj: Object) -> None:
            calls.append(obj)
            raise refusal

        with pytest.raises(ValueError) as raised:
            pods.delete("/pods/test-ns/name", validate_deletion=refuse, cached_existing=original)
        assert raised.value is refusal
        assert len(calls) == 1
        assert pods.get("/pods/test-ns/name") == original

    def test_validation_sees_the_fresh_object_when_the_suggestion_is_stale(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        original = pods.create("/pods/test-ns/name", pod("name", "test-ns"))
        _set_labels(pods, "/pods/test-ns/name", {"foo": "bar"})
        calls: list[Object] = []

        def accept_only_fresh(obj: Object) -> None:
            calls.append(obj)
            if (obj["metadata"].get("labels") or {}).get("foo") != "bar":
                raise ValueError("stale object")

        pods.delete(
            "/pods/test-ns/name", validate_deletion=accept_only_fresh, cached_existing=original
        )
        # A backend may ignore the suggestion (one call) or try it first (two calls).
        assert 1 <= len(calls) <= 2
        with pytest.raises(NotFound):
            pods.get("/pods/test-ns/name")

    def test_validation_that_only_the_stale_suggestion_passes_fails(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        original = pods.create("/pods/test-ns/name", pod("name", "test-ns", labels={"foo": "bar"}))
        updated = _set_labels(pods, "/pods/test-ns/name", {"foo": "barbar"})
        calls: list[Object] = []

        def accept_only_foo_bar(obj: Object) -> None:
            calls.append(obj)
            if (obj["metadata"].get("labels") or {}).get("foo") != "bar":
                raise ValueError("stale object")

        with pytest.raises(ValueError, match="stale object"):
            pods.delete(
                "/pods/test-ns/name",
                validate_deletion=accept_only_foo_bar,
                cached_existing=original,
            )
        assert 1 <= len(calls) <= 2
        assert pods.get("/pods/test-ns/name") == updated

    def test_precondition_holding_on_the_current_object_deletes_despite_stale_suggestion(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        original = pods.create("/pods/test-ns/name", pod("name", "test-ns"))
        _set_uid(pods, "/pods/test-ns/name", "myUID")

        pods.delete(
            "/pods/test-ns/name",
            preconditions=Preconditions(uid="myUID"),
            cached_existing=original,
        )
        with pytest.raises(NotFound):
            pods.get("/pods/test-ns/name")

    def test_precondition_holding_only_on_the_stale_suggestion_is_a_conflict(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        original = pods.create("/pods/test-ns/name", pod("name", "test-ns", uid="myUID"))
        updated = _set_uid(pods, "/pods/test-ns/name", "otherUID")

        with pytest.raises(Conflict):
            pods.delete(
                "/pods/test-ns/name",
                preconditions=Preconditions(uid="myUID"),
                cached_existing=original,
            )
        assert pods.get("/pods/test-ns/name") == updated
