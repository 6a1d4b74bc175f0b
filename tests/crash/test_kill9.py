"""Crash safety of the LMDB backend: kill -9 at random moments, ten times.

After each kill the store is reopened and checked: every acknowledged create is present with
its revision (unless an acknowledged delete removed it), every acknowledged delete is gone, the
counter is at least at its last acknowledged value, and no revision is ever handed out twice,
within a run or across restarts.

A process kill keeps the kernel's page cache, so this checks LMDB's commit protocol and our
revision bookkeeping, not fsync (see reliability.md 4); the durable flags are checked in
tests/storage/test_lmdb_store.py.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kstore.errors import NotFound
from kstore.storage.interface import (
    GetOptions,
    ListOptions,
    ResourceStorageConfig,
    ResourceVersionMatch,
)
from kstore.storage.lmdb import LmdbBackend, LmdbConfig

from .writer_child import _attrs, _Codec

CHILD = Path(__file__).with_name("writer_child.py")
REPO_ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 10


def _run_and_kill(store: Path, seed: int, rng: random.Random) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(store), str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert child.stdout is not None
    ready = child.stdout.readline().decode()
    assert ready.startswith("READY"), ready + child.stderr.read().decode()  # type: ignore[union-attr]
    time.sleep(rng.uniform(0.05, 0.6))
    child.send_signal(signal.SIGKILL)
    rest, _ = child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    text = ready + rest.decode()
    # A line cut by the kill was never completely reported: it is not an acknowledgement.
    lines = text.split("\n")[:-1]
    return lines


@pytest.mark.fault
def test_acknowledged_writes_survive_kill_9_and_revisions_are_never_reused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    rng = random.Random(20260101)
    config = ResourceStorageConfig(resource_prefix="/pods", codec=_Codec(), get_attrs=_attrs)
    started = time.monotonic()
    all_revisions: set[int] = set()
    created: dict[str, int] = {}
    deleted: dict[str, int] = {}
    deleting: set[str] = set()
    last_count, last_count_rev = 0, 0
    previous_max = 0
    total_acked = 0
    for seed in range(ROUNDS):
        lines = _run_and_kill(store, seed, rng)
        round_revisions: list[int] = []
        for line in lines[1:]:
            kind, *fields = line.split(" ")
            if kind == "C":
                created[fields[0]] = int(fields[1])
                round_revisions.append(int(fields[1]))
            elif kind == "X":
                deleting.add(fields[0])
            elif kind == "D":
                deleted[fields[0]] = int(fields[1])
                round_revisions.append(int(fields[1]))
            elif kind == "U":
                revision, count = int(fields[0]), int(fields[1])
                round_revisions.append(revision)
                assert count > last_count, "the counter went backwards after a restart"
                last_count, last_count_rev = count, revision
            else:
                raise AssertionError(f"unexpected line {line!r}")
        total_acked += len(round_revisions)
        ready_revision = int(lines[0].split(" ")[1])
        assert ready_revision >= previous_max
        assert not set(round_revisions) & all_revisions, "a revision was handed out twice"
        assert len(set(round_revisions)) == len(round_revisions)
        if round_revisions:
            assert min(round_revisions) > ready_revision
            previous_max = max(previous_max, max(round_revisions))
        all_revisions.update(round_revisions)

        backend = LmdbBackend(LmdbConfig(path=store, compaction_interval_s=0))
        try:
            pods = backend.storage_for(config)
            assert backend.current_revision() >= previous_max
            for key, revision in created.items():
                if key in deleted:
                    with pytest.raises(NotFound):
                        pods.get(key)
                elif key in deleting:
                    # A delete was in flight at the kill: either outcome is legal.
                    found = pods.get(key, GetOptions(ignore_not_found=True))
                    assert not found or int(found["metadata"]["resourceVersion"]) == revision
                else:
                    assert int(pods.get(key)["metadata"]["resourceVersion"]) == revision, key
            if last_count:
                counter = pods.get("/pods/shared/counter")
                assert counter["count"] >= last_count
                assert int(counter["metadata"]["resourceVersion"]) >= last_count_rev
            # History is intact too: a sample of creates is visible at its exact revision.
            for key, revision in list(created.items())[-5:]:
                at = pods.list(
                    key,
                    ListOptions(
                        recursive=False,
                        resource_version=str(revision),
                        resource_version_match=ResourceVersionMatch.EXACT,
                    ),
                )
                assert len(at.items) == 1 and at.resource_version == revision
            # The next revision is new.
            probe = pods.create(f"/pods/probe/r{seed}", {"metadata": {"name": f"r{seed}"}})
            probe_rev = int(probe["metadata"]["resourceVersion"])
            assert probe_rev > previous_max and probe_rev not in all_revisions
            all_revisions.add(probe_rev)
            previous_max = probe_rev
        finally:
            backend.close()
    assert total_acked > ROUNDS * 10, f"only {total_acked} writes were acknowledged"
    assert time.monotonic() - started < 60
