"""Conformance: create, TTL, get at each kind of resourceVersion, key schema, stats, compaction.

Ports of Kubernetes' ``RunTestCreate``, ``RunTestCreateWithTTL``, ``RunTestCreateWithKeyExist``,
``RunTestGet``, ``RunTestKeySchema``, ``RunTestStats`` and ``RunTestCompactRevision``
(``k8s.io/apiserver/pkg/storage/testing/store_tests.go``), written against
:mod:`kstore.storage.interface`. Every test takes the ``conformance_env`` fixture.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest

from kstore.api.gvk import Object
from kstore.errors import (
    AlreadyExists,
    BadRequest,
    Expired,
    KStoreError,
    NotFound,
    TooLargeResourceVersion,
)
from kstore.storage.interface import (
    EventType,
    GetOptions,
    ListOptions,
    ResourceVersionMatch,
    Stats,
    Storage,
)
from kstore.testing.env import ConformanceEnv
from kstore.testing.objects import (
    pod,
    pod_codec,
    pod_config,
    pod_key,
    rv_of,
    with_rv,
    without_rv,
)
from kstore.testing.transformers import PrefixTransformer
from kstore.testing.watching import EVENT_WAIT, next_event, watching

__all__ = [
    "TestCompactRevision",
    "TestConsistentReads",
    "TestCreate",
    "TestCreateWithTTL",
    "TestGet",
    "TestKeySchema",
    "TestStats",
]

#: A resourceVersion no store reaches (Go's math.MaxInt64, as Kubernetes' suite uses).
MAX_RV = 2**63 - 1


class TestCreate:
    def test_create_returns_the_stored_object_with_a_new_resource_version(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        obj = pod("foo", "test-ns", labels={"app": "web"})
        key = pod_key(obj)
        with pytest.raises(NotFound):
            pods.get(key)
        before = pods.current_revision()

        out = pods.create(key, obj)

        assert rv_of(out) > before
        assert out == with_rv(obj, rv_of(out))
        assert pods.get(key) == out
        assert pods.current_revision() >= rv_of(out)

    def test_create_writes_through_the_transformer_without_the_resource_version(
        self, conformance_env: ConformanceEnv
    ) -> None:
        env = conformance_env
        obj = pod("foo", "test-ns")
        key = pod_key(obj)
        out = env.pods().create(key, obj)

        # The transformer is handed the storage key (its authenticated data) and the encoding,
        # which never contains the resourceVersion: that is derived from the revision.
        assert env.transformer.write_keys, "the value transformer was not used on create"
        full_key = env.transformer.write_keys[-1]
        assert full_key.endswith(key)
        stored = pod_codec().decode(env.transformer.written[-1])
        assert stored == without_rv(out)
        # Reads hand the transformer the same key, so it can authenticate the value with it.
        env.transformer.read_keys.clear()
        assert env.pods().get(key) == out
        assert env.transformer.read_keys in ([], [full_key]), env.transformer.read_keys
        # The bytes at rest carry the transformer's prefix: another prefix cannot read them.
        foreign = env.pods(PrefixTransformer(b"other!"))
        with pytest.raises(KStoreError):
            foreign.get(key)

    def test_create_with_resource_version_set_is_rejected(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        obj = with_rv(pod("bar", "test-ns"), 1)
        before = pods.current_revision()

        with pytest.raises(BadRequest, match="resourceVersion should not be set"):
            pods.create(pod_key(obj), obj)

        with pytest.raises(NotFound):
            pods.get(pod_key(obj))
        assert pods.current_revision() == before

    def test_create_on_an_existing_key_fails_with_already_exists(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        obj = pod("foo", "test-ns")
        stored = pods.create(pod_key(obj), obj)
        before = pods.current_revision()

        with pytest.raises(AlreadyExists):
            pods.create(pod_key(obj), pod("foo", "test-ns", labels={"other": "content"}))

        assert pods.get(pod_key(obj)) == stored
        assert pods.current_revision() == before


#: TTL used by expiry tests; the wait for its DELETED event adds EVENT_WAIT (reaper slack).
TTL_SECONDS = 1


class TestCreateWithTTL:
    def test_expiry_is_a_deleted_event_with_its_own_revision(
        self, conformance_env: ConformanceEnv
    ) -> None:
        pods = conformance_env.pods()
        obj = pod("foo", "test-ns")
        out = pods.create(pod_key(obj), obj, ttl_seconds=TTL_SECONDS)

        opts = ListOptions(resource_version=str(rv_of(out)), recursive=False)
        with watching(pods, pod_key(obj), opts) as watcher:
            event = next_event(watcher, timeout=TTL_SECONDS + EVENT_WAIT)
            assert event.type is EventType.DELETED, f"expected DELETED, got {event.type}"
            assert event.resource_version > rv_of(out)
            assert event.object == with_rv(out, event.resource_version)
        with pytest.raises(NotFound):
            pods.get(pod_key(obj))

    def test_object_without_ttl_does_not_expire(self, conformance_env: ConformanceEnv) -> None:
        pods = conformance_env.pods()
        short, lasting = pod("short", "test-ns"), pod("lasting", "test-ns")
        lasting_out = pods.create(pod_key(lasting), lasting)
        pods.create(pod_key(short), short, ttl_seconds=TTL_SECONDS)

        with watching(pods, "/pods/test-ns", ListOptions(resource_version="0")) as watcher:
            seen = [next_event(watcher), next_event(watcher)]
            expiry = next_event(watcher, timeout=TTL_SECONDS + EVENT_WAIT)
        assert sorted(e.object["metadata"]["name"] for e in seen) == ["lasting", "short"]
        assert expiry.type is EventType.DELETED
        assert expiry.object["metadata"]["name"] == "short"
        assert pods.get(pod_key(lasting)) == lasting_out

    def test_expired_object_is_never_returned(self, conformance_env: ConformanceEnv) -> None:
        if not conformance_env.capabilities.expires_before_reaping:
            pytest.skip("expiry is only observed through its DELETED event on this backend")
        pods = conformance_env.pods()
        obj = pod("foo", "test-ns")
        pods.create(pod_key(obj), obj, ttl_seconds=TTL_SECONDS)
        # Just past the TTL the object is gone for every read, whether or not it was reaped.
        time.sleep(TTL_SECONDS + 0.05)
        with pytest.raises(NotFound):
            pods.get(pod_key(obj))
        assert pods.list("/pods/test-ns").items == []
        assert pods.list(pod_key(obj), ListOptions(recursive=False)).items == []


@dataclass(frozen=True)
class _GetCase:
    key: str = "/pods/test-ns/foo"
    rv: str | Callable[[dict[str, int]], str] = ""
    ignore_not_found: bool = False
    expect: tuple[str, ...] = ()  # acceptable results: "created", "updated", "empty"
    error: type[KStoreError] | None = None


_GET_CASES: dict[str, _GetCase] = {
    "get existing": _GetCase(expect=("updated",)),
    # RV "0" accepts any state, even one from before the object existed.
    "resource version 0": _GetCase(
        rv="0", ignore_not_found=True, expect=("empty", "created", "updated")
    ),
    # A get at an RV is "not older than": the newer state is allowed too.
    "object created resource version": _GetCase(
        rv=lambda rvs: str(rvs["created"]), expect=("created", "updated")
    ),
    "current object resource version": _GetCase(
        rv=lambda rvs: str(rvs["updated"]), expect=("updated",)
    ),
    "latest resource version": _GetCase(rv=lambda rvs: str(rvs["last"]), expect=("updated",)),
    "too high resource version": _GetCase(rv=str(MAX_RV), error=TooLargeResourceVersion),
    "one past the current revision": _GetCase(
        rv=lambda rvs: str(rvs["last"] + 1), error=TooLargeResourceVersion
    ),
    "invalid resource version": _GetCase(rv="abc", error=BadRequest),
    "negative resource version": _GetCase(rv="-1", error=BadRequest),
    "get non-existing": _GetCase(key="/pods/non-existing", error=NotFound),
    "get non-existing, ignore not found": _GetCase(
        key="/pods/non-existing", ignore_not_found=True, expect=("empty",)
    ),
}


class TestGet:
    @pytest.mark.parametrize("case", list(_GET_CASES))
    def test_get(self, conformance_env: ConformanceEnv, case: str) -> None:
        tc = _GET_CASES[case]
        pods = conformance_env.pods()
        obj = pod("foo", "test-ns")
        created = pods.create(pod_key(obj), obj)

        def annotate(current: Object) -> Object:
            out = dict(current)
            out["metadata"] = {**current["metadata"], "annotations": {"test-annotation": "1"}}
            return out

        # An update (with a TTL too long to matter) so that reads at older RVs are meaningful,
        # then another object so the store's revision is past the updated object's.
        updated = pods.guaranteed_update(pod_key(obj), annotate, ttl_seconds=3600)
        other = pod("bar", "test-ns")
        last = pods.create(pod_key(other), other)
        rvs = {"created": rv_of(created), "updated": rv_of(updated), "last": rv_of(last)}
        states: dict[str, Object] = {"created": created, "updated": updated, "empty": {}}

        rv = tc.rv(rvs) if callable(tc.rv) else tc.rv
        opts = GetOptions(resource_version=rv, ignore_not_found=tc.ignore_not_found)
        if tc.error is not None:
            with pytest.raises(tc.error):
                pods.get(tc.key, opts)
            return
        got = pods.get(tc.key, opts)
        assert got in [states[name] for name in tc.expect], f"unexpected state {got!r}"


class TestConsistentReads:
    def test_reads_without_resource_version_see_every_acknowledged_write(
        self, conformance_env: ConformanceEnv
    ) -> None:
        # Written straight to the backend, past any cache: "" reads are linearizable anyway.
        env = conformance_env
        pods = env.pods()
        writer = env.pod_writer(env.transformer)
        for i in range(5):
            obj = pod(f"p{i}", "ns", labels={"i": str(i)})
            stored = writer.create(pod_key(obj), obj)
            assert pods.get(pod_key(obj)) == stored
            listed = pods.list("/pods/ns")
            assert listed.items[-1] == stored
            assert listed.resource_version == rv_of(stored)
            assert pods.current_revision() == rv_of(stored)


class TestKeySchema:
    """Kubernetes' key rules with resource prefix ``/pods``: errors are BadRequest naming the
    problem; the bare prefix ``/pods/`` and keys below it are valid."""

    BAD_KEYS = (
        ("", "empty key"),
        ("/", "empty key"),
        (".", "invalid key"),
        ("..", "invalid key"),
        ("pods", "lacks resource prefix"),
        ("/pods.apps", "lacks resource prefix"),
        ("/foo/", "lacks resource prefix"),
    )
    GOOD_KEYS = ("/pods/", "/pods/name", "/pods/namespace", "/pods/namespace/name")

    def test_create_get_update_delete_validate_keys(self, conformance_env: ConformanceEnv) -> None:
        pods = conformance_env.pods()
        # Without recursion "/pods" is an exact key, and it lacks the prefix "/pods/".
        exact_bad = (*self.BAD_KEYS, ("/pods", "lacks resource prefix"))
        for key, message in exact_bad:
            with pytest.raises(BadRequest, match=message):
                pods.create(key, pod("x"))
            with pytest.raises(BadRequest, match=message):
                pods.get(key)
            with pytest.raises(BadRequest, match=message):
                pods.guaranteed_update(key, lambda cur: pod("x"))
        for key, message in (*exact_bad, ("/foo", "lacks resource prefix")):
            with pytest.raises(BadRequest, match=message):
                pods.delete(key)

        for key in self.GOOD_KEYS:
            pods.create(key, pod("x"))
        for key in self.GOOD_KEYS:
            pods.get(key)
            pods.guaranteed_update(key, lambda cur: pod("x", labels={"updated": "true"}))
        for key in self.GOOD_KEYS:
            pods.delete(key)

    def test_list_and_watch_validate_keys(self, conformance_env: ConformanceEnv) -> None:
        pods = conformance_env.pods()
        recursive, exact = ListOptions(), ListOptions(recursive=False)
        for key, message in self.BAD_KEYS:
            with pytest.raises(BadRequest, match=message):
                pods.list(key, recursive)
            with pytest.raises(BadRequest, match=message):
                pods.watch(key, recursive)
        # Without recursion "/pods" is an exact key outside the prefix; with it, "/pods/".
        with pytest.raises(BadRequest, match="lacks resource prefix"):
            pods.list("/pods", exact)
        with pytest.raises(BadRequest, match="lacks resource prefix"):
            pods.watch("/pods", exact)
        for key in ("/pods", "/pods/", "/pods/namespace", "/pods/namespace/name"):
            pods.list(key, recursive)
            pods.watch(key, recursive).stop()

    def test_resource_versions_must_be_numbers(self, conformance_env: ConformanceEnv) -> None:
        pods = conformance_env.pods()
        for rv in ("abc", "-1", "1.5"):
            with pytest.raises(BadRequest):
                pods.get("/pods/ns/foo", GetOptions(resource_version=rv))
            with pytest.raises(BadRequest):
                pods.list("/pods/", ListOptions(resource_version=rv))
            with pytest.raises(BadRequest):
                pods.watch("/pods/", ListOptions(resource_version=rv))


class TestStats:
    def _expect(self, env: ConformanceEnv, pods: Storage, *sized: Object) -> None:
        # A consistent list first, so a cache has caught up (as Kubernetes' assertStats does).
        pods.list("/pods/")
        sizes = [len(env.transformer.prefix + pod_codec().encode(without_rv(o))) for o in sized]
        average = sum(sizes) // len(sizes) if sizes else 0
        if not env.capabilities.estimates_object_size:
            average = 0
        assert pods.stats() == Stats(
            object_count=len(sized), estimated_average_object_size_bytes=average
        )

    def test_stats_follow_creates_updates_and_deletes(
        self, conformance_env: ConformanceEnv
    ) -> None:
        env = conformance_env
        pods = env.pods()
        self._expect(env, pods)
        foo = pods.create("/pods/stats/foo", pod("foo", "stats"))
        self._expect(env, pods, foo)
        bar = pods.create("/pods/stats/bar", pod("bar", "stats"))
        self._expect(env, pods, foo, bar)

        def label(current: Object) -> Object:
            return {**current, "metadata": {**current["metadata"], "labels": {"foo": "bar"}}}

        # The size is the one of the new encoding, which never holds the resourceVersion.
        bar = pods.guaranteed_update("/pods/stats/bar", label)
        self._expect(env, pods, foo, bar)
        pods.delete("/pods/stats/foo")
        self._expect(env, pods, bar)
        with pytest.raises(NotFound):
            pods.delete("/pods/stats/foo")
        self._expect(env, pods, bar)
        pods.delete("/pods/stats/bar")
        self._expect(env, pods)

    def test_stats_count_only_the_resource_prefix(self, conformance_env: ConformanceEnv) -> None:
        # "/podsfoo" shares the string prefix "/pods" but is another resource (the removed
        # Kubernetes RunTestCount checked exactly this).
        env = conformance_env
        sibling = env.storage(replace(pod_config(env.transformer), resource_prefix="/podsfoo"))
        sibling.create("/podsfoo/stats/foo", pod("foo", "stats"))
        env.bump_revision()
        pods = env.pods()
        foo = pods.create("/pods/stats/foo", pod("foo", "stats"))
        self._expect(env, pods, foo)


class TestCompactRevision:
    def test_compaction_makes_older_revisions_expire(self, conformance_env: ConformanceEnv) -> None:
        env = conformance_env
        pods = env.pods()
        pods.create("/pods/ns/foo", pod("foo", "ns"))
        listed = pods.list("/pods/")
        current = listed.resource_version
        assert env.backend.compacted_revision < current
        exact = ListOptions(
            resource_version=str(current), resource_version_match=ResourceVersionMatch.EXACT
        )
        assert pods.list("/pods/", exact).resource_version == current

        env.bump_revision()
        env.compact_and_bump(current + 1)

        with pytest.raises(Expired, match="The resourceVersion for the provided list is too old"):
            pods.list("/pods/", exact)
        assert env.backend.compacted_revision == current + 1
        # The compacted revision itself is still readable, as in etcd.
        at_compaction = ListOptions(
            resource_version=str(current + 1), resource_version_match=ResourceVersionMatch.EXACT
        )
        assert pods.list("/pods/", at_compaction).resource_version == current + 1

    def test_fresh_store_lists_at_a_nonzero_revision(self, conformance_env: ConformanceEnv) -> None:
        # A list RV of 0 would read as "any" to clients; Kubernetes rejects it from storage.
        result = conformance_env.pods().list("/pods/")
        assert result.items == []
        assert result.resource_version > 0
