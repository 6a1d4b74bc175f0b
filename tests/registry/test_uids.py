"""Object uids: random version-4 UUIDs, distinct, and not shared with a forked child; generated
names: five characters of Kubernetes' alphabet, each equally likely, from the same pooled
randomness (no system call per name)."""

from __future__ import annotations

import os
import random
import uuid
from collections import Counter

import pytest

from kstore.registry import names
from kstore.registry.store import new_uid


def test_uids_are_version_4_uuids_written_as_uuid_writes_them() -> None:
    for _ in range(600):  # more than one 4 KiB chunk of randomness
        text = new_uid()
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert str(parsed) == text


def test_uids_do_not_repeat() -> None:
    assert len({new_uid() for _ in range(20_000)}) == 20_000


def test_a_forked_child_does_not_repeat_its_parents_next_uids() -> None:
    new_uid()  # the parent now holds unused random bytes
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        os.write(write, "".join(new_uid() for _ in range(10)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        child = pipe.read().decode()
    os.waitpid(pid, 0)
    parent = "".join(new_uid() for _ in range(10))
    assert child and child != parent


def test_generated_names_draw_evenly_from_the_alphabet_without_a_system_call_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    urandom = os.urandom

    def counted(size: int) -> bytes:
        calls.append(size)
        return urandom(size)

    monkeypatch.setattr(os, "urandom", counted)
    monkeypatch.setattr(random, "_urandom", counted)  # what SystemRandom (secrets) calls
    generated = [names.generate_name("web-") for _ in range(4000)]
    assert all(len(n) == 9 and n.startswith("web-") for n in generated)
    counts = Counter(c for n in generated for c in n[4:])
    assert set(counts) == set("bcdfghjklmnpqrstvwxz2456789")
    # 20,000 characters, 741 expected of each: far outside this only if some were favoured.
    assert 600 < min(counts.values()) <= max(counts.values()) < 900
    assert len(calls) <= 12  # 4 KiB of randomness serves hundreds of names
    assert len(set(generated)) > 3990
    cut = names.generate_name("a" * 70)
    assert len(cut) == 63 and cut[:58] == "a" * 58 and "a" not in cut[58:]
