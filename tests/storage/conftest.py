"""Fixtures for the storage unit tests: a fresh LMDB backend per test and a Pod resource on it.

The codec is a tiny deterministic orjson one, local to these tests, so the backend is tested
without the Scheme; the backend only ever calls ``config.codec`` and ``config.transformer``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from kstore.api.gvk import Object
from kstore.storage.interface import ResourceStorageConfig, Storage, ValueTransformer
from kstore.storage.lmdb import LmdbBackend, LmdbConfig


class JsonCodec:
    """Object <-> sorted-key JSON: equal objects give equal bytes."""

    def encode(self, obj: Object) -> bytes:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)

    def decode(self, data: bytes) -> Object:
        decoded: Any = orjson.loads(data)
        if not isinstance(decoded, dict):
            raise ValueError("not an object")
        return decoded


def pod_attrs(obj: Object) -> tuple[dict[str, str], dict[str, str]]:
    meta = obj.get("metadata", {})
    fields = {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "spec.nodeName": obj.get("spec", {}).get("nodeName", ""),
    }
    return dict(meta.get("labels", {})), fields


def pod(namespace: str, name: str, **spec: Any) -> Object:
    obj: Object = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
    }
    if spec:
        obj["spec"] = dict(spec)
    return obj


def pod_config(transformer: ValueTransformer | None = None) -> ResourceStorageConfig:
    if transformer is None:
        return ResourceStorageConfig(
            resource_prefix="/pods", codec=JsonCodec(), get_attrs=pod_attrs
        )
    return ResourceStorageConfig(
        resource_prefix="/pods", codec=JsonCodec(), get_attrs=pod_attrs, transformer=transformer
    )


def rv(obj: Object) -> int:
    return int(obj["metadata"]["resourceVersion"])


def open_backend(path: Path, **overrides: Any) -> LmdbBackend:
    settings: dict[str, Any] = {"path": path, "compaction_interval_s": 0}
    settings.update(overrides)
    return LmdbBackend(LmdbConfig(**settings))


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[LmdbBackend]:
    store = open_backend(tmp_path / "store")
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def pods(backend: LmdbBackend) -> Storage:
    return backend.storage_for(pod_config())


class PausedWriter:
    """Holds the backend's writer on its next batch until :meth:`release`, so that requests
    submitted meanwhile queue up and are committed together as one group."""

    def __init__(self, backend: LmdbBackend, monkeypatch: pytest.MonkeyPatch) -> None:
        self._backend = backend
        # Every write goes through the writer thread, even a lone one.
        monkeypatch.setattr(backend, "_inline_ok", False)
        self.entered = threading.Event()
        self._gate = threading.Event()
        self.batches: list[int] = []
        original = backend._run_batch

        def run_batch(batch: list[Any]) -> None:
            if not self.entered.is_set():
                self.entered.set()
                self._gate.wait(10.0)
            self.batches.append(len(batch))
            original(batch)

        monkeypatch.setattr(backend, "_run_batch", run_batch)

    def wait_queued(self, count: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while self._backend._queue.qsize() < count:
            assert time.monotonic() < deadline, "requests did not queue up"
            time.sleep(0.005)

    def release(self) -> None:
        self._gate.set()
