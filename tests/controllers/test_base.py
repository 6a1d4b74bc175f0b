"""The controller base: the work queue, the informer, the worker loop, leader election."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kstore import open as open_store
from kstore.controllers import ControllerSettings, enabled_controllers, start_controllers
from kstore.controllers.base import Controller, ControllerTimings, WorkQueue
from kstore.controllers.leader import LeaderElection, LeaderElectionConfig
from kstore.embedded import Client
from kstore.errors import BadRequest, Conflict

_FAST = LeaderElectionConfig(
    lease_duration_seconds=1.0, renew_deadline_seconds=0.6, retry_period_seconds=0.1
)
_prefixes = itertools.count()


def _eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)


# -- the work queue ---------------------------------------------------------------------------


def test_queue_hands_out_a_key_added_twice_once() -> None:
    queue = WorkQueue()
    queue.add("a")
    queue.add("b")
    queue.add("a")
    assert len(queue) == 2
    assert [queue.get(0), queue.get(0), queue.get(0)] == ["a", "b", None]


def test_queue_keeps_a_key_added_while_processed_until_it_is_done() -> None:
    queue = WorkQueue()
    queue.add("a")
    assert queue.get(0) == "a"
    queue.add("a")
    assert queue.get(0) is None  # never handed to a second worker at once
    queue.done("a")
    assert queue.get(0) == "a"
    queue.done("a")
    assert queue.get(0) is None


def test_queue_delays_and_backs_off_per_key() -> None:
    queue = WorkQueue(base_backoff=0.05, max_backoff=0.15)
    assert [queue.add_rate_limited("a") for _ in range(4)] == [0.05, 0.1, 0.15, 0.15]
    assert queue.failures("a") == 4
    queue.forget("a")
    assert queue.failures("a") == 0
    started = time.monotonic()
    assert queue.get(1.0) == "a"
    assert time.monotonic() - started >= 0.04


def test_queue_shut_down_wakes_a_waiting_get() -> None:
    queue = WorkQueue()
    got: list[str | None] = []
    thread = threading.Thread(target=lambda: got.append(queue.get()))
    thread.start()
    time.sleep(0.05)
    queue.shut_down()
    thread.join(2)
    assert got == [None]


# -- the controller loop ----------------------------------------------------------------------


class _Recorder(Controller):
    """Records the config maps it reconciles; fails the first time for names starting
    ``conflict``."""

    name: ClassVar[str] = "recorder"
    watches: ClassVar[tuple[tuple[str, str], ...]] = (("", "configmaps"),)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[str] = []

    def reconcile(self, key: str) -> None:
        self.seen.append(key)
        if key.startswith("default/conflict") and self.seen.count(key) == 1:
            raise Conflict("changed meanwhile")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    with open_store(f"lmdb://{tmp_path}/store", controllers=()) as opened:
        yield opened


def _cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def test_controller_lists_watches_retries_and_resyncs(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    cms.create(_cm("before"))
    timings = ControllerTimings(resync_seconds=0.3, base_backoff_seconds=0.01)
    controller = _Recorder(client.registry, timings=timings)
    controller.start()
    try:
        _eventually(lambda: "default/before" in controller.seen)
        cms.create(_cm("conflict-1"))
        # The Conflict is retried after the backoff.
        _eventually(lambda: controller.seen.count("default/conflict-1") >= 2)
        cms.delete("before")
        _eventually(lambda: controller.informer("", "configmaps").get("default/before") is None)
        # The resync queues every cached key again.
        count = controller.seen.count("default/conflict-1")
        _eventually(lambda: controller.seen.count("default/conflict-1") > count)
    finally:
        controller.stop()
    assert controller.stopped


def test_informer_relist_reports_what_vanished(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    cms.create(_cm("gone"))
    controller = _Recorder(client.registry, timings=ControllerTimings(resync_seconds=60))
    controller.start()
    informer = controller.informer("", "configmaps")
    controller.stop()  # no watch any more: only a list can tell
    cms.delete("gone")
    seen: list[tuple[str, bool]] = []
    informer._handler = lambda key, obj: seen.append((key, obj is None))
    informer.relist()
    assert ("default/gone", True) in seen
    assert informer.get("default/gone") is None
    assert informer.lists == 2


# -- --controllers ----------------------------------------------------------------------------


def test_controllers_syntax_is_kube_controller_managers() -> None:
    assert enabled_controllers("*") == {
        "clusterrole-aggregation",
        "garbagecollector",
        "pv-protection",
        "pvc-protection",
        "resourcequota",
        "root-ca-cert-publisher",
        "serviceaccount",
        "ttl-after-finished",
    }
    assert enabled_controllers(
        [
            "*",
            "-serviceaccount",
            "-garbagecollector",
            "-ttl-after-finished",
            "-clusterrole-aggregation",
            "-pv-protection",
            "-pvc-protection",
            "-resourcequota",
        ]
    ) == {"root-ca-cert-publisher"}
    assert enabled_controllers("serviceaccount") == {"serviceaccount"}
    assert enabled_controllers("") == frozenset()
    with pytest.raises(BadRequest, match=r"unknown controller.*'nope'"):
        enabled_controllers("*,nope")
    with pytest.raises(BadRequest, match=r"unknown controller.*'nope'"):
        enabled_controllers("-nope")


def test_open_refuses_unknown_controllers(tmp_path: Path) -> None:
    with pytest.raises(BadRequest, match="unknown controller"):
        open_store(f"lmdb://{tmp_path}/store", controllers="bogus")


# -- leader election ----------------------------------------------------------------------------


class _Candidate:
    def __init__(self, client: Client, identity: str) -> None:
        self.starts = 0
        self.stops = 0
        self.election = LeaderElection(
            client.registry,
            config=LeaderElectionConfig(
                lease_duration_seconds=_FAST.lease_duration_seconds,
                renew_deadline_seconds=_FAST.renew_deadline_seconds,
                retry_period_seconds=_FAST.retry_period_seconds,
                identity=identity,
            ),
            on_started=self._started,
            on_stopped=self._stopped,
        )

    def _started(self) -> None:
        self.starts += 1

    def _stopped(self) -> None:
        self.stops += 1


def _lease(client: Client) -> dict[str, Any]:
    leases = client.resource("coordination.k8s.io/v1", "leases", namespace="kube-system")
    spec: dict[str, Any] = leases.get("kube-controller-manager")["spec"]
    return spec


def test_identity_is_hostname_underscore_uuid(client: Client) -> None:
    election = LeaderElection(client.registry, on_started=lambda: None, on_stopped=lambda: None)
    host, _, rest = election.identity.rpartition("_")
    assert host and len(rest) == 36 and rest.count("-") == 4
    assert election.config.lease_duration_seconds == 15
    assert election.config.renew_deadline_seconds == 10
    assert election.config.retry_period_seconds == 2


def _two_on_etcd(request: pytest.FixtureRequest) -> tuple[Client, Client, str]:
    from tests.conftest_etcd import shared_cluster

    endpoint = shared_cluster(request.config).endpoints[0]
    url = f"etcd://{endpoint}/kstore-test-leader-{next(_prefixes)}-{time.time_ns()}"
    first = open_store(url, controllers=())
    second = open_store(url, controllers=())
    return first, second, url


@pytest.mark.etcd
def test_one_leader_of_two_registries_on_one_etcd_and_failover(
    request: pytest.FixtureRequest,
) -> None:
    first, second, _ = _two_on_etcd(request)
    a, b = _Candidate(first, "host_a"), _Candidate(second, "host_b")
    try:
        a.election.start()
        _eventually(lambda: a.election.is_leader)
        b.election.start()
        time.sleep(3 * _FAST.lease_duration_seconds)
        assert a.election.is_leader and not b.election.is_leader
        assert (a.starts, b.starts) == (1, 0)
        spec = _lease(first)
        assert spec["holderIdentity"] == "host_a"
        assert spec["leaseDurationSeconds"] == 1
        # The leader stops (and releases the lease): the other takes over.
        a.election.stop()
        assert (a.starts, a.stops) == (1, 1)
        _eventually(lambda: b.election.is_leader)
        spec = _lease(second)
        assert spec["holderIdentity"] == "host_b"
        assert spec["leaseTransitions"] == 1
    finally:
        a.election.stop()
        b.election.stop()
        first.close()
        second.close()


@pytest.mark.etcd
def test_a_lease_not_released_expires(request: pytest.FixtureRequest) -> None:
    first, second, _ = _two_on_etcd(request)
    a, b = _Candidate(first, "host_a"), _Candidate(second, "host_b")
    try:
        assert a.election.try_acquire_or_renew()  # and never renewed nor released
        assert not b.election.try_acquire_or_renew()
        b.election.start()
        time.sleep(_FAST.lease_duration_seconds / 2)
        assert not b.election.is_leader
        _eventually(lambda: b.election.is_leader, timeout=5)
        assert _lease(second)["holderIdentity"] == "host_b"
        assert not a.election.try_acquire_or_renew()
    finally:
        b.election.stop()
        first.close()
        second.close()


@pytest.mark.etcd
def test_two_registries_run_the_controllers_once(request: pytest.FixtureRequest) -> None:
    from tests.conftest_etcd import shared_cluster

    endpoint = shared_cluster(request.config).endpoints[0]
    url = f"etcd://{endpoint}/kstore-test-leader-{next(_prefixes)}-{time.time_ns()}"
    first = open_store(url, leader_election=_FAST)
    second = open_store(url, leader_election=_FAST)
    try:
        runs = [first._controllers, second._controllers]
        _eventually(lambda: sum(bool(r.running) for r in runs) == 1)
        time.sleep(3 * _FAST.retry_period_seconds)
        assert sum(bool(r.running) for r in runs) == 1
        leader, follower = (first, second) if runs[0].running else (second, first)
        namespaces = follower.resource("v1", "namespaces")
        namespaces.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns-x"}})
        sas = follower.resource("v1", "serviceaccounts", namespace="ns-x")
        _eventually(lambda: [s["metadata"]["name"] for s in sas.list()["items"]] == ["default"])
        leader.close()
        # The follower takes over and keeps the default account there.
        _eventually(lambda: bool(runs[1 if leader is first else 0].running))
        sas.delete("default")
        _eventually(lambda: [s["metadata"]["name"] for s in sas.list()["items"]] == ["default"])
    finally:
        first.close()
        second.close()


def test_start_controllers_without_any_enabled_runs_no_election(client: Client) -> None:
    running = start_controllers(client.registry, settings=ControllerSettings(controllers=()))
    try:
        assert running.election is None and running.running == []
    finally:
        running.stop()


def test_informer_lists_in_pages_and_holds_only_what_its_selector_matches(client: Client) -> None:
    from kstore.api.selectors import FieldSelector
    from kstore.registry.informer import PAGE_SIZE, Informer
    from kstore.storage.interface import ListOptions

    cms = client.resource("v1", "configmaps", namespace="default")
    for i in range(1_050):
        cms.create(_cm(f"cm-{i:04d}"))
    store = client.registry.store("", "configmaps")
    calls: list[ListOptions] = []
    real_list = store.list

    def recording_list(ctx: Any, opts: ListOptions) -> Any:
        calls.append(opts)
        result = real_list(ctx, opts)
        assert len(result.items) <= PAGE_SIZE
        return result

    stopping = threading.Event()
    everything = Informer(store, lambda key, obj: None, stopping=stopping)
    store.list = recording_list  # type: ignore[method-assign]
    try:
        everything.relist()
        pages = -(-1_050 // PAGE_SIZE)
        assert [c.limit for c in calls] == [PAGE_SIZE] * pages
        assert [bool(c.continue_token) for c in calls] == [False] + [True] * (pages - 1)
        assert len(everything.keys()) == 1_050
        assert everything.get("default/cm-1049") is not None
        one = Informer(
            store,
            lambda key, obj: None,
            stopping=stopping,
            field_selector=FieldSelector.parse("metadata.name=cm-0007"),
        )
        one.relist()
        assert one.keys() == ["default/cm-0007"]
    finally:
        del store.list
        stopping.set()


def test_informer_retries_a_watch_refused_while_the_cache_fills_without_listing_again(
    client: Client,
) -> None:
    # A server's watch cache answers 429 until its first list is in (a big collection at a
    # start): the list the informer holds is still good, so only the watch is tried again.
    from kstore.errors import TooManyRequests
    from kstore.registry.informer import Informer

    cms = client.resource("v1", "configmaps", namespace="default")
    cms.create(_cm("before"))
    store = client.registry.store("", "configmaps")
    real_watch = store.watch
    refusals = [0]

    def filling_watch(ctx: Any, opts: Any) -> Any:
        if refusals[0] < 3:
            refusals[0] += 1
            raise TooManyRequests("the watch cache of configmaps is not ready yet")
        return real_watch(ctx, opts)

    stopping = threading.Event()
    informer = Informer(store, lambda key, obj: None, stopping=stopping, relist_pause_seconds=0.01)
    store.watch = filling_watch  # type: ignore[method-assign]
    try:
        informer.start()
        cms.create(_cm("after"))
        _eventually(lambda: informer.get("default/after") is not None)
        assert refusals[0] == 3
        assert informer.lists == 1
        assert informer.get("default/before") is not None
    finally:
        del store.watch
        stopping.set()
        informer.interrupt()
        informer.join(5.0)


def test_an_inline_informer_is_told_in_the_caches_thread_and_lists_again_when_its_watch_ends(
    client: Client,
) -> None:
    # Inline: the watch cache's dispatching thread hands each event on (the informer's own
    # thread only waits for the watch to end); a watch ended under it means a new list.
    from kstore.registry.informer import Informer

    cms = client.resource("v1", "configmaps", namespace="default")
    cms.create(_cm("before"))
    store = client.registry.store("", "configmaps")
    seen: list[tuple[str, bool, str]] = []

    def handler(key: str, obj: Any) -> None:
        seen.append((key, obj is None, threading.current_thread().name))

    stopping = threading.Event()
    informer = Informer(store, handler, stopping=stopping, inline=True, relist_pause_seconds=0.01)
    try:
        informer.start()
        seen.clear()
        for i in range(20):
            cms.create(_cm(f"cm-{i:02d}"))
        cms.delete("cm-03")
        _eventually(lambda: len(seen) == 21)
        assert [k for k, _, _ in seen] == [f"default/cm-{i:02d}" for i in range(20)] + [
            "default/cm-03"
        ]
        assert [gone for _, gone, _ in seen] == [False] * 20 + [True]
        assert {thread for _, _, thread in seen} == {"kstore-cache configmaps"}
        assert informer.get("default/cm-03") is None and informer.get("default/cm-19")
        # The watch ends (as a cache that lists again ends its watchers): the informer lists
        # again and follows the new watch.
        lists = informer.lists
        watcher = informer._watcher
        assert watcher is not None
        watcher.terminate()
        _eventually(lambda: informer.lists == lists + 1)
        cms.create(_cm("after"))
        _eventually(lambda: informer.get("default/after") is not None)
    finally:
        stopping.set()
        informer.interrupt()
        informer.join(5.0)
    assert not informer._thread or not informer._thread.is_alive()
