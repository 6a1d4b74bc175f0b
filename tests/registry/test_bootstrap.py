"""What a registry makes when it starts: retried while storage times out (a Timeout leaves a
write's outcome unknown), and completed when an earlier start stopped half-way."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.gvk import Object
from kstore.api.scheme import Scheme
from kstore.errors import NotFound, Timeout
from kstore.registry.bootstrap import run_bootstrap_step
from kstore.registry.interface import RequestContext, UpdateOptions
from kstore.registry.namespaces import SYSTEM_NAMESPACES
from kstore.storage.interface import ResourceStorageConfig, Storage
from kstore.storage.lmdb import LmdbBackend
from tests.registry.conftest import make_registry


class _Clock:
    """A clock that moves only when the step sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


def _times_out(times: int) -> tuple[list[int], Any]:
    calls: list[int] = []

    def step() -> None:
        calls.append(1)
        if len(calls) <= times:
            raise Timeout("etcd may or may not have applied the write")

    return calls, step


def test_a_step_that_times_out_is_run_again_after_growing_pauses() -> None:
    clock = _Clock()
    calls, step = _times_out(4)
    run_bootstrap_step("a step", step, clock=clock.time, sleep=clock.sleep)
    assert len(calls) == 5
    assert clock.pauses == [0.2, 0.4, 0.8, 1.6]


def test_the_last_timeout_is_raised_once_the_deadline_would_pass() -> None:
    clock = _Clock()
    calls, step = _times_out(100)
    with pytest.raises(Timeout):
        run_bootstrap_step(
            "a step", step, deadline_seconds=4.5, clock=clock.time, sleep=clock.sleep
        )
    # After 0.2 + 0.4 + 0.8 + 1.6 = 3.0 s of pauses, the next (2.0) would end past 4.5 s.
    assert clock.pauses == [0.2, 0.4, 0.8, 1.6]
    assert len(calls) == 5


def test_other_errors_fail_at_once() -> None:
    clock = _Clock()

    def step() -> None:
        raise NotFound("gone")

    with pytest.raises(NotFound):
        run_bootstrap_step("a step", step, clock=clock.time, sleep=clock.sleep)
    assert clock.pauses == []


class _AnswersTimeoutAfterFirstCreates:
    """A storage whose first ``failures`` creates are applied but answered with Timeout, as
    etcd's answer can be lost after it applied a write."""

    def __init__(self, storage: Storage, failures: int) -> None:
        self._storage = storage
        self._failures = failures

    def create(self, key: str, obj: Object, *, ttl_seconds: int | None = None) -> Object:
        stored = self._storage.create(key, obj, ttl_seconds=ttl_seconds)
        if self._failures > 0:
            self._failures -= 1
            raise Timeout("etcd may or may not have applied the write")
        return stored

    def __getattr__(self, name: str) -> Any:
        return getattr(self._storage, name)


def test_a_start_whose_writes_time_out_after_applying_them_still_makes_everything(
    scheme: Scheme, backend: LmdbBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_storage_for = backend.storage_for
    faulty = ("/namespaces", "/priorityclasses", "/servicecidrs")

    def storage_for(config: ResourceStorageConfig) -> Any:
        storage = real_storage_for(config)
        if config.resource_prefix.endswith(faulty):
            return _AnswersTimeoutAfterFirstCreates(storage, failures=1)
        return storage

    monkeypatch.setattr(backend, "storage_for", storage_for)
    registry = make_registry(scheme, backend, system_priority_classes=True)
    try:
        ctx = RequestContext()
        namespaces = registry.store("", "namespaces")
        for name in SYSTEM_NAMESPACES:
            assert namespaces.get(ctx, name)["metadata"]["name"] == name
        classes = registry.store("scheduling.k8s.io", "priorityclasses")
        assert classes.get(ctx, "system-node-critical")["value"] == 2_000_001_000
        cidr = registry.store("networking.k8s.io", "servicecidrs").get(ctx, "kubernetes")
        assert [(c["type"], c["status"]) for c in cidr["status"]["conditions"]] == [
            ("Ready", "True")
        ]
    finally:
        registry.close()


def test_a_default_service_cidr_left_not_ready_is_made_ready_at_the_next_start(
    scheme: Scheme, backend: LmdbBackend
) -> None:
    ctx = RequestContext()
    registry = make_registry(scheme, backend)
    try:

        def not_ready(current: Object) -> Object:
            return {**current, "status": {}}

        registry.store("networking.k8s.io", "servicecidrs").update(
            ctx, "kubernetes", not_ready, UpdateOptions(subresource="status")
        )
    finally:
        registry.close()
    registry = make_registry(scheme, backend)
    try:
        cidr = registry.store("networking.k8s.io", "servicecidrs").get(ctx, "kubernetes")
        assert [(c["type"], c["status"]) for c in cidr["status"]["conditions"]] == [
            ("Ready", "True")
        ]
    finally:
        registry.close()
