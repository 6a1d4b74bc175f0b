"""Snapshot save and restore of N ~5 KiB Pods, beside the raw backends' own copies, same run.

Run: ``python -m bench.bench_snapshot --objects 100000 [--etcd]`` from the checkout (the
default N is 10,000). The store is filled with N Pods
(:func:`kstore.benchmarks.storage.sample_pod`, JSON) through the LMDB backend, then timed:

- ``snapshot save`` from LMDB, beside LMDB's own ``env.copy`` of the same directory (a page
  copy, history included) and ``snapshot status`` (reads and checks the whole file);
- ``snapshot restore`` into an empty LMDB directory (durable commits);
- with ``--etcd`` (a throwaway single-member etcd, or ``--etcd-servers``): restore into an
  empty prefix, beside raw batched puts of the same keys and values (transactions of 128 puts,
  8 in flight, as the restore sends them), save from etcd, beside etcd's own snapshot stream
  (``Maintenance.Snapshot``, the whole database).

Objects/s count Pods; MB/s count the snapshot file's bytes (the raw copies: the bytes they
copy). Nothing here gates CI.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import lmdb
from etcd3 import etcdrpc

from kstore.benchmarks.storage import sample_pod
from kstore.codec.json import JsonSerializer
from kstore.storage.etcd import EtcdConfig, EtcdSnapshotSource, EtcdSnapshotTarget
from kstore.storage.interface import ResourceStorageConfig
from kstore.storage.lmdb import LmdbBackend, LmdbConfig, LmdbSnapshotSource, LmdbSnapshotTarget
from kstore.storage.snapshot import read_entries, restore_snapshot, save_snapshot, verify_snapshot

_MB = 1_000_000


def _attrs(obj: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    return {}, {"metadata.name": obj["metadata"]["name"]}


def fill(path: Path, objects: int, writers: int = 8) -> None:
    """``objects`` Pods created through the LMDB backend (without fsync: only the result
    matters here)."""
    codec = JsonSerializer()
    config = ResourceStorageConfig(resource_prefix="/pods", codec=codec, get_attrs=_attrs)
    template = sample_pod("default", "template")
    with LmdbBackend(LmdbConfig(path=path, durable=False)) as backend:
        storage = backend.storage_for(config)

        def share(first: int) -> None:
            for i in range(first, objects, writers):
                name = f"pod-{i:07d}"
                meta = {**template["metadata"], "namespace": "default", "name": name}
                storage.create(f"/pods/default/{name}", {**template, "metadata": meta})

        threads = [threading.Thread(target=share, args=(k,)) for k in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def lmdb_copy(source: Path, target: Path) -> int:
    target.mkdir()
    env = lmdb.open(str(source), readonly=True, lock=True, subdir=True, max_dbs=0)
    try:
        env.copy(str(target))
    finally:
        env.close()
    return os.path.getsize(target / "data.mdb")


def raw_batched_puts(endpoint: str, prefix: bytes, snapshot: Path) -> None:
    """The restore's writes without kstore: the same keys and values, 128 puts a transaction,
    8 in flight."""
    channel = grpc.insecure_channel(endpoint)
    kv = etcdrpc.KVStub(channel)

    def batches() -> Iterator[list[Any]]:
        batch: list[Any] = []
        for entry in read_entries(snapshot):
            put = etcdrpc.PutRequest(key=prefix + entry.key, value=entry.value)
            batch.append(etcdrpc.RequestOp(request_put=put))
            if len(batch) == 128:
                yield batch
                batch = []
        if batch:
            yield batch

    try:
        with ThreadPoolExecutor(8) as pool:
            futures = [
                pool.submit(kv.Txn, etcdrpc.TxnRequest(success=b), timeout=60) for b in batches()
            ]
            for future in futures:
                future.result()
    finally:
        channel.close()


def etcd_own_snapshot(endpoint: str) -> int:
    channel = grpc.insecure_channel(endpoint)
    try:
        stub = etcdrpc.MaintenanceStub(channel)
        return sum(len(r.blob) for r in stub.Snapshot(etcdrpc.SnapshotRequest(), timeout=600))
    finally:
        channel.close()


def row(name: str, seconds: float, objects: int, size: int) -> str:
    return (
        f"{name:<44} {seconds:8.2f} s {objects / seconds:>10,.0f} obj/s "
        f"{size / _MB / seconds:>8.1f} MB/s"
    )


def run(objects: int, etcd_servers: list[str] | None, work: Path) -> list[str]:
    store = work / "store"
    began = time.perf_counter()
    fill(store, objects)
    lines = [f"{objects} Pods of ~5 KiB (filled in {time.perf_counter() - began:.1f} s)"]
    snapshot = work / "snap"
    seconds, info = timed(lambda: save_snapshot(snapshot, LmdbSnapshotSource(store)))
    size = info.size
    lines.append(row("snapshot save (LMDB)", seconds, objects, size))
    seconds, copied = timed(lambda: lmdb_copy(store, work / "copy"))
    lines.append(row(f"raw LMDB env.copy ({copied / _MB:.0f} MB)", seconds, objects, copied))
    seconds, _ = timed(lambda: verify_snapshot(snapshot))
    lines.append(row("snapshot status (read and check)", seconds, objects, size))

    def restore_lmdb() -> None:
        with LmdbSnapshotTarget(work / "restored") as target:
            restore_snapshot(snapshot, target)

    seconds, _ = timed(restore_lmdb)
    lines.append(row("snapshot restore (LMDB, fsync'd)", seconds, objects, size))
    if etcd_servers is not None:
        config = EtcdConfig(endpoints=tuple(etcd_servers), prefix="/bench", compaction_interval=0)

        def restore_etcd() -> None:
            with EtcdSnapshotTarget(config) as target:
                restore_snapshot(snapshot, target)

        seconds, _ = timed(restore_etcd)
        lines.append(row("snapshot restore (etcd)", seconds, objects, size))
        seconds, _ = timed(lambda: raw_batched_puts(etcd_servers[0], b"/raw", snapshot))
        lines.append(row("raw batched etcd puts (same bytes)", seconds, objects, size))

        def save_etcd() -> Any:
            with EtcdSnapshotSource(config) as source:
                return save_snapshot(work / "snap-etcd", source)

        seconds, etcd_info = timed(save_etcd)
        lines.append(row("snapshot save (etcd)", seconds, objects, etcd_info.size))
        seconds, blob = timed(lambda: etcd_own_snapshot(etcd_servers[0]))
        lines.append(row(f"raw etcd snapshot ({blob / _MB:.0f} MB db)", seconds, objects, blob))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--etcd", action="store_true", help="also on a throwaway etcd member")
    parser.add_argument("--etcd-servers", default="", help="use these etcd endpoints instead")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="kstore-snapshot-bench-"))
    cluster: Any = None
    try:
        servers: list[str] | None = None
        if args.etcd_servers:
            servers = args.etcd_servers.split(",")
        elif args.etcd:
            from kstore.testing.etcd_cluster import EtcdCluster

            cluster = EtcdCluster(1, extra_args=("--quota-backend-bytes", str(8 << 30))).start()
            servers = list(cluster.endpoints)
        for line in run(args.objects, servers, work):
            print(line, flush=True)
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
