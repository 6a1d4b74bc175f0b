"""Object uids: random version-4 UUIDs, distinct, and not shared with a forked child."""

from __future__ import annotations

import os
import uuid

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
