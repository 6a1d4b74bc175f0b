"""Migration of N ~5 KiB Pods from LMDB to etcd, beside raw batched etcd puts, same run.

Run: ``python -m bench.bench_migrate --objects 100000 [--etcd-servers URLS]`` from the
checkout (default N 10,000; without ``--etcd-servers`` a throwaway single-member etcd). The
LMDB store is filled as :mod:`bench.bench_snapshot` fills it, then timed:

- raw batched etcd puts of the same keys and values (128 puts a transaction, 8 in flight),
  under a prefix of their own: the rate a copy into etcd cannot beat;
- ``kstore migrate`` of the store into an empty prefix (the copy through a snapshot file,
  then the catch-up, with nothing pending);
- the follow step alone: N/2 Pods updated in the source after the migration, then applied to
  the target by one catch-up (history log read, transactions of the last change per key).

Objects/s count Pods; MB/s the stored bytes. Nothing here gates CI.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.bench_snapshot import fill, raw_batched_puts, row, timed
from kstore.codec.json import JsonSerializer
from kstore.storage._etcd_migrate import EtcdChangeTarget
from kstore.storage._lmdb_migrate import LmdbChangeFeed
from kstore.storage.etcd import EtcdConfig
from kstore.storage.interface import ResourceStorageConfig
from kstore.storage.lmdb import LmdbBackend, LmdbConfig, LmdbSnapshotSource
from kstore.storage.maintenance import migrate_between
from kstore.storage.migrate import _catch_up
from kstore.storage.snapshot import save_snapshot


def _attrs(obj: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    return {}, {"metadata.name": obj["metadata"]["name"]}


def _update_half(path: Path, objects: int) -> None:
    config = ResourceStorageConfig(
        resource_prefix="/pods", codec=JsonSerializer(), get_attrs=_attrs
    )

    def relabel(obj: dict[str, Any]) -> dict[str, Any]:
        meta = {**obj["metadata"], "labels": {"bench": "updated"}}
        return {**obj, "metadata": meta}

    with LmdbBackend(LmdbConfig(path=path, durable=False)) as backend:
        storage = backend.storage_for(config)
        for i in range(0, objects, 2):
            storage.guaranteed_update(f"/pods/default/pod-{i:07d}", relabel)


def run(objects: int, servers: list[str], work: Path) -> list[str]:
    store = work / "store"
    fill(store, objects)
    snapshot = work / "snap"
    info = save_snapshot(snapshot, LmdbSnapshotSource(store))
    size = info.value_bytes
    lines = [f"{objects} Pods of ~5 KiB ({size / 1e6:.0f} MB of values)"]
    seconds, _ = timed(lambda: raw_batched_puts(servers[0], b"/raw", snapshot))
    raw = seconds
    lines.append(row("raw batched etcd puts (same bytes)", seconds, objects, size))
    target = ("etcd", EtcdConfig(endpoints=tuple(servers), prefix="/registry"))
    source = ("lmdb", LmdbConfig(path=store))
    seconds, result = timed(lambda: migrate_between(source, target, work_dir=work))
    lines.append(row("kstore migrate LMDB -> etcd", seconds, objects, size))
    lines.append(
        f"  of which the copy: {result.copy_seconds:.2f} s; ratio to raw {raw / seconds:.2f}x"
    )
    revision = result.caught_up_at
    _update_half(store, objects)
    feed = LmdbChangeFeed(store)
    out = EtcdChangeTarget(target[1])
    try:
        seconds, (_reached, count) = timed(lambda: _catch_up(feed, out, revision))
    finally:
        out.close()
        feed.close()
    lines.append(row("follow: catch-up of updates", seconds, count, size * count // objects))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--etcd-servers", default="", help="etcd endpoints (default: own one)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="kstore-migrate-bench-"))
    cluster: Any = None
    try:
        if args.etcd_servers:
            servers = args.etcd_servers.split(",")
        else:
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
