"""Create, get, guaranteed_update and delete on LMDB (reference sections 1.4-1.7)."""

from __future__ import annotations

import pytest

from kstore.api.gvk import Object
from kstore.errors import AlreadyExists, BadRequest, Conflict, CorruptObject, NotFound
from kstore.storage._lmdb_records import hist_key
from kstore.storage.interface import GetOptions, Preconditions, Storage
from kstore.storage.lmdb import LmdbBackend

from .conftest import pod, pod_config, rv


class Prefixed:
    """A transformer that prepends bytes; ``stale`` marks every read as stale."""

    def __init__(self, prefix: bytes, stale: bool = False) -> None:
        self.prefix = prefix
        self.stale = stale

    def to_storage(self, data: bytes, key: str) -> bytes:
        return self.prefix + data

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        if not data.startswith(self.prefix):
            raise ValueError("wrong prefix")
        return data[len(self.prefix) :], self.stale


def test_create_returns_the_stored_object_with_its_revision(pods: Storage) -> None:
    obj = pod("ns", "a")
    out = pods.create("/pods/ns/a", obj)
    assert out == {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(rv(out))}}
    assert "resourceVersion" not in obj["metadata"]  # the caller's object is untouched
    assert pods.get("/pods/ns/a") == out


def test_create_rejects_a_resource_version_and_existing_keys(pods: Storage) -> None:
    with pytest.raises(BadRequest, match="resourceVersion should not be set"):
        pods.create(
            "/pods/ns/a", {**pod("ns", "a"), "metadata": {"name": "a", "resourceVersion": "3"}}
        )
    pods.create("/pods/ns/a", pod("ns", "a"))
    with pytest.raises(AlreadyExists) as caught:
        pods.create("/pods/ns/a", pod("ns", "a"))
    assert caught.value.message == 'pods "a" already exists'


def test_self_link_and_resource_version_are_never_stored(
    backend: LmdbBackend, pods: Storage
) -> None:
    out = pods.create("/pods/ns/a", {**pod("ns", "a"), "metadata": {"name": "a", "selfLink": "/x"}})
    assert "selfLink" not in out["metadata"]
    with backend._env.begin() as txn:
        raw = txn.get(hist_key(int(out["metadata"]["resourceVersion"])))
    assert raw is not None and b"resourceVersion" not in raw and b"selfLink" not in raw


def test_get_missing_is_not_found_or_empty(pods: Storage) -> None:
    with pytest.raises(NotFound) as caught:
        pods.get("/pods/ns/missing")
    assert caught.value.message == 'pods "missing" not found'
    assert pods.get("/pods/ns/missing", GetOptions(ignore_not_found=True)) == {}


def test_update_writes_a_new_revision_and_no_op_keeps_it(pods: Storage) -> None:
    created = pods.create("/pods/ns/a", pod("ns", "a"))
    updated = pods.guaranteed_update("/pods/ns/a", lambda o: {**o, "spec": {"nodeName": "n"}})
    assert rv(updated) > rv(created)
    same = pods.guaranteed_update("/pods/ns/a", lambda o: {**o, "spec": {"nodeName": "n"}})
    assert same == updated
    with_self_link = pods.guaranteed_update(
        "/pods/ns/a", lambda o: {**o, "metadata": {**o["metadata"], "selfLink": "/x"}}
    )
    assert rv(with_self_link) == rv(updated)
    assert "selfLink" not in with_self_link["metadata"]


def test_stale_stored_bytes_force_a_write_even_when_unchanged(backend: LmdbBackend) -> None:
    writer = backend.storage_for(pod_config(Prefixed(b"k!")))
    created = writer.create("/pods/ns/a", pod("ns", "a"))
    stale = backend.storage_for(pod_config(Prefixed(b"k!", stale=True)))
    rewritten = stale.guaranteed_update("/pods/ns/a", lambda o: o)
    assert rv(rewritten) == rv(created) + 1


def test_update_of_missing_key(pods: Storage) -> None:
    with pytest.raises(NotFound):
        pods.guaranteed_update("/pods/ns/a", lambda o: o)
    seen: list[Object] = []

    def create(obj: Object) -> Object:
        seen.append(obj)
        return pod("ns", "a")

    out = pods.guaranteed_update("/pods/ns/a", create, ignore_not_found=True)
    assert seen == [{}]
    assert pods.get("/pods/ns/a") == out


def test_update_preconditions(pods: Storage) -> None:
    pods.create(
        "/pods/ns/a", {**pod("ns", "a"), "metadata": {"name": "a", "namespace": "ns", "uid": "A"}}
    )
    pods.guaranteed_update("/pods/ns/a", lambda o: o, preconditions=Preconditions(uid="A"))
    with pytest.raises(Conflict, match="UID in precondition: B"):
        pods.guaranteed_update("/pods/ns/a", lambda o: o, preconditions=Preconditions(uid="B"))


def test_stale_cached_object_is_retried_with_fresh_state(pods: Storage) -> None:
    stale = pods.create("/pods/ns/a", {**pod("ns", "a"), "generation": 1})
    pods.guaranteed_update("/pods/ns/a", lambda o: {**o, "generation": 2})
    inputs: list[int] = []

    def bump(obj: Object) -> Object:
        inputs.append(obj["generation"])
        if obj["generation"] != 2:
            raise Conflict("stale input")
        return {**obj, "generation": obj["generation"] + 1}

    out = pods.guaranteed_update("/pods/ns/a", bump, cached_existing=stale)
    assert out["generation"] == 3
    assert inputs == [1, 2]


def test_error_from_a_fresh_cached_object_is_returned(pods: Storage) -> None:
    fresh = pods.create("/pods/ns/a", pod("ns", "a"))
    calls: list[int] = []

    def refuse(obj: Object) -> Object:
        calls.append(1)
        raise BadRequest("no")

    with pytest.raises(BadRequest, match="no"):
        pods.guaranteed_update("/pods/ns/a", refuse, cached_existing=fresh)
    assert len(calls) == 1


def test_unchanged_stale_suggestion_is_compared_with_storage(pods: Storage) -> None:
    stale = pods.create("/pods/ns/a", pod("ns", "a"))
    current = pods.guaranteed_update("/pods/ns/a", lambda o: {**o, "spec": {"nodeName": "x"}})
    # Returning the (stale) input unchanged must not silently report the stale revision.
    out = pods.guaranteed_update("/pods/ns/a", lambda o: o, cached_existing=stale)
    assert out == current


def test_concurrent_change_between_read_and_write_is_retried(pods: Storage) -> None:
    pods.create("/pods/ns/a", {**pod("ns", "a"), "count": 0})
    calls = 0

    def racing(obj: Object) -> Object:
        nonlocal calls
        calls += 1
        if calls == 1:
            pods.guaranteed_update("/pods/ns/a", lambda o: {**o, "count": o["count"] + 10})
        return {**obj, "count": obj["count"] + 1}

    out = pods.guaranteed_update("/pods/ns/a", racing)
    assert calls == 2
    assert out["count"] == 11


def test_delete_returns_the_last_state_with_the_delete_revision(pods: Storage) -> None:
    created = pods.create("/pods/ns/a", pod("ns", "a"))
    deleted = pods.delete("/pods/ns/a")
    assert rv(deleted) == rv(created) + 1
    assert {**deleted, "metadata": {**deleted["metadata"], "resourceVersion": "x"}} == {
        **created,
        "metadata": {**created["metadata"], "resourceVersion": "x"},
    }
    with pytest.raises(NotFound):
        pods.delete("/pods/ns/a")


def test_delete_with_stale_suggestion_returns_the_current_state(pods: Storage) -> None:
    stale = pods.create("/pods/ns/a", pod("ns", "a"))
    updated = pods.guaranteed_update("/pods/ns/a", lambda o: {**o, "spec": {"nodeName": "n"}})
    out = pods.delete("/pods/ns/a", cached_existing=stale)
    assert out["spec"] == {"nodeName": "n"}
    assert rv(out) == rv(updated) + 1
    with pytest.raises(NotFound):
        pods.delete("/pods/ns/a", cached_existing=stale)


def test_delete_preconditions_and_validation(pods: Storage) -> None:
    pods.create(
        "/pods/ns/a", {**pod("ns", "a"), "metadata": {"name": "a", "namespace": "ns", "uid": "A"}}
    )
    with pytest.raises(Conflict):
        pods.delete("/pods/ns/a", preconditions=Preconditions(uid="B"))
    refusal = BadRequest("keep it")
    calls: list[Object] = []

    def refuse(obj: Object) -> None:
        calls.append(obj)
        raise refusal

    with pytest.raises(BadRequest) as caught:
        pods.delete("/pods/ns/a", validate_deletion=refuse)
    assert caught.value is refusal
    assert len(calls) == 1
    assert pods.get("/pods/ns/a")["metadata"]["uid"] == "A"
    pods.delete("/pods/ns/a", preconditions=Preconditions(uid="A"))


def test_validation_failing_only_on_a_stale_suggestion_rereads(pods: Storage) -> None:
    stale = pods.create("/pods/ns/a", pod("ns", "a"))
    pods.guaranteed_update("/pods/ns/a", lambda o: {**o, "spec": {"nodeName": "fresh"}})

    def only_fresh(obj: Object) -> None:
        if obj.get("spec", {}).get("nodeName") != "fresh":
            raise BadRequest("stale object")

    out = pods.delete("/pods/ns/a", validate_deletion=only_fresh, cached_existing=stale)
    assert out["spec"] == {"nodeName": "fresh"}


def test_unreadable_bytes_are_corrupt_object_errors(backend: LmdbBackend) -> None:
    writer = backend.storage_for(pod_config(Prefixed(b"other!")))
    writer.create("/pods/ns/a", pod("ns", "a"))
    reader = backend.storage_for(pod_config(Prefixed(b"k!")))
    with pytest.raises(CorruptObject, match='unable to transform key "/pods/ns/a"'):
        reader.get("/pods/ns/a")
    with pytest.raises(CorruptObject):
        reader.list("/pods")
    with pytest.raises(CorruptObject):
        reader.guaranteed_update("/pods/ns/a", lambda o: o)
    with pytest.raises(CorruptObject):
        reader.delete("/pods/ns/a")
    assert writer.get("/pods/ns/a")["metadata"]["name"] == "a"


def test_stats_count_live_objects_and_average_stored_size(pods: Storage) -> None:
    assert pods.stats().object_count == 0
    pods.create("/pods/ns/a", pod("ns", "a"))
    pods.create("/pods/ns/b", {**pod("ns", "b"), "data": "x" * 100})
    stats = pods.stats()
    assert stats.object_count == 2
    codec = pod_config().codec
    sizes = [
        len(codec.encode(pod("ns", "a"))),
        len(codec.encode({**pod("ns", "b"), "data": "x" * 100})),
    ]
    assert stats.estimated_average_object_size_bytes == sum(sizes) // 2
    pods.delete("/pods/ns/a")
    assert pods.stats().object_count == 1
