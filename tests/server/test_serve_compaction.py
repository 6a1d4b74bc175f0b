"""``ServeConfig.compaction_interval_seconds`` (kube-apiserver's ``--etcd-compaction-interval``)
reaches the backend ``kstore serve`` opens: history older than about one interval is
compacted away, 0 turns compaction off, a negative interval is refused."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest

from kstore.api.gvk import Object
from kstore.errors import BadRequest
from kstore.server.serve import ServeConfig, open_backend
from kstore.storage.interface import ResourceStorageConfig


class _Json:
    def encode(self, obj: Object) -> bytes:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)

    def decode(self, data: bytes) -> Object:
        decoded: Object = orjson.loads(data)
        return decoded


def _attrs(obj: Object) -> tuple[dict[str, str], dict[str, str]]:
    return {}, {"metadata.name": obj["metadata"]["name"]}


_CONFIGMAPS = ResourceStorageConfig(resource_prefix="/configmaps", codec=_Json(), get_attrs=_attrs)


def _cm(n: int) -> Object:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"n": n}}


def test_lmdb_compacts_history_older_than_the_interval(tmp_path: Path) -> None:
    backend = open_backend(ServeConfig(data_dir=tmp_path / "d", compaction_interval_seconds=0.2))
    try:
        store = backend.storage_for(_CONFIGMAPS)
        first = int(store.create("/configmaps/ns/a", _cm(0))["metadata"]["resourceVersion"])
        deadline = time.monotonic() + 10
        n = 0
        while backend.compacted_revision < first:
            assert time.monotonic() < deadline, "never compacted"
            n += 1
            store.guaranteed_update("/configmaps/ns/a", lambda o, n=n: {**o, "data": {"n": n}})
            time.sleep(0.05)
        # About one interval of history is kept: not everything up to the newest write.
        assert backend.compacted_revision < backend.current_revision()
    finally:
        backend.close()


def test_zero_interval_never_compacts(tmp_path: Path) -> None:
    backend = open_backend(ServeConfig(data_dir=tmp_path / "d", compaction_interval_seconds=0))
    try:
        store = backend.storage_for(_CONFIGMAPS)
        store.create("/configmaps/ns/a", _cm(0))
        for n in range(1, 5):
            store.guaranteed_update("/configmaps/ns/a", lambda o, n=n: {**o, "data": {"n": n}})
            time.sleep(0.1)
        assert backend.compacted_revision == 0
    finally:
        backend.close()


def test_negative_interval_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadRequest, match="invalid compaction interval"):
        open_backend(ServeConfig(data_dir=tmp_path / "d", compaction_interval_seconds=-1))
