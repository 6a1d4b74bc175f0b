"""Snapshots: every key of a store at one revision, as stored bytes, in one portable file.

A snapshot holds, for each live key, the bytes the backend stores (after encryption at rest:
encrypted values stay encrypted, nothing is decoded), its mod and create revisions and the
time it had left to live; and the revision it was read at. Keys are written without the
backend's own prefix (``/pods/ns/name``, never ``/registry/pods/ns/name``), so a snapshot of
LMDB restores into etcd and back. Saving reads one point in time
(:mod:`kstore.storage._lmdb_snapshot`, :mod:`kstore.storage._etcd_snapshot`); restoring checks
the whole file before it writes anything.

File format, version 1 (integers big-endian)::

    header   magic        8 bytes  89 4B 53 4E 41 50 0D 0A  ("\\x89KSNAP\\r\\n")
             version      u32      1
             revision     u64      the store's revision the keys were read at
             info length  u32
             info         JSON object, UTF-8: "source" ("lmdb" or "etcd"), "keyPrefix"
                          (what the source puts before each key: "" on LMDB, the etcd
                          prefix such as "/registry" on etcd), "created" (RFC 3339 UTC)
    entries  in key order, each:
             tag          u8       1
             mod rev      u64      the revision of the key's last write
             create rev   u64      the revision that created it
             ttl ms       i64      milliseconds it had left to live; 0: no expiry
             key length   u32
             value length u32
             key, value   the bytes
    end      tag          u8       0
    trailer  entries      u64      how many entries precede
             value bytes  u64      the sum of their value lengths
             sha256       32 bytes of every byte of the file before this field
             end magic    8 bytes  "KSNAPEND"

A reader refuses a file whose magic is not this one, whose version it does not read (it names
both), that ends early (truncated), or whose trailer disagrees with what precedes it
(corrupt). The non-magic bytes of the first magic byte and the CR-LF catch a file that went
through a text-mode transfer, as PNG's signature does.

Saving writes ``FILE.tmp-<pid>`` next to ``FILE``, fsyncs it and renames it over ``FILE``:
a failed save leaves no file behind and never a partial one under the final name.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from kstore.errors import BadRequest

__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "InvalidSnapshot",
    "SnapshotEntry",
    "SnapshotInfo",
    "SnapshotSource",
    "SnapshotTarget",
    "read_entries",
    "resource_of_key",
    "restore_snapshot",
    "save_snapshot",
    "verify_snapshot",
]

MAGIC = b"\x89KSNAP\r\n"
END_MAGIC = b"KSNAPEND"
FORMAT_VERSION = 1

_HEADER = struct.Struct(">IQI")  # version, revision, info length (after the magic)
_ENTRY = struct.Struct(">BQQqII")  # tag, mod rev, create rev, ttl ms, key len, value len
_ENTRY_FIELDS = struct.Struct(">QQqII")  # the same after the tag
_TAG_ENTRY = 1
_TAG_END = 0
#: The longest info JSON a reader accepts: a guard against a corrupt length.
_MAX_INFO = 1 << 20
#: Bytes gathered before one write to the file (and one hash update).
_WRITE_CHUNK = 1 << 20
#: Bytes read from the file at a time (and hashed at once).
_READ_CHUNK = 1 << 20


class InvalidSnapshot(BadRequest):
    """The file is not a snapshot this kstore can read: wrong magic or version, truncated,
    corrupt (checksum or structure), or not restorable into the target."""


@dataclass(frozen=True, slots=True)
class SnapshotEntry:
    """One key as stored. ``key`` is without the backend's prefix; ``ttl_ms`` 0: no expiry."""

    key: bytes
    value: bytes
    mod_revision: int
    create_revision: int
    ttl_ms: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class SnapshotInfo:
    """What a snapshot file holds (from :func:`verify_snapshot` or a save)."""

    path: Path
    version: int
    revision: int
    source: str
    key_prefix: str
    created: str
    entries: int
    value_bytes: int
    size: int
    sha256: str
    with_ttl: int = 0
    resources: dict[str, int] = field(default_factory=dict)
    #: Keys whose value is bound to its full storage key (see restore_snapshot), the first.
    key_bound: int = 0
    first_key_bound: bytes = b""

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "formatVersion": self.version,
            "revision": self.revision,
            "source": self.source,
            "keyPrefix": self.key_prefix,
            "created": self.created,
            "keys": self.entries,
            "keysWithTTL": self.with_ttl,
            "valueBytes": self.value_bytes,
            "size": self.size,
            "sha256": self.sha256,
            "resources": dict(sorted(self.resources.items())),
        }


class SnapshotSource(Protocol):
    """A store read at one point in time."""

    #: "lmdb" or "etcd", and what the store puts before each key (see the module docstring).
    name: str
    key_prefix: str

    def read(self) -> tuple[int, Iterator[SnapshotEntry]]:
        """The revision read at and every live key at it, in key order. The iterator holds
        the point in time (a read transaction, a pinned revision) until it is exhausted or
        closed."""
        ...


class SnapshotTarget(Protocol):
    """A store a snapshot is restored into."""

    name: str
    key_prefix: str

    def inspect(self, entry: SnapshotEntry) -> None:
        """Note what :meth:`check` needs to know of ``entry``; never raises."""
        ...

    def check(self, *, force: bool) -> None:
        """Raise (InvalidSnapshot, or the store's own error) when the entries inspected cannot
        all be written, or the store is not empty and ``force`` is not set; writes nothing."""
        ...

    def load(self, entries: Iterable[SnapshotEntry], revision: int, *, force: bool) -> int:
        """Write every entry (emptying the store first when ``force``); the store's revision
        afterwards."""
        ...


def resource_of_key(key: bytes) -> str:
    """The resource a key belongs to, from the key layout: its first segment, or its first
    two when the first is an API group (has a dot, ``/example.com/widgets/...``) or
    ``services`` (``/services/specs``, ``/services/endpoints``)."""
    parts = key.decode("utf-8", "replace").split("/")
    if len(parts) < 3:
        return parts[-1] or "/"
    first = parts[1]
    if ("." in first or first == "services") and len(parts) > 3:
        return f"{first}/{parts[2]}"
    return first


# -- writing -------------------------------------------------------------------------------


class _HashingWriter:
    """Buffers, hashes and writes: what the trailer's checksum covers is exactly what went
    to the file."""

    def __init__(self, f: IO[bytes]) -> None:
        self._f = f
        self._hash = hashlib.sha256()
        self._buffer: list[bytes] = []
        self._pending = 0

    def write(self, data: bytes) -> None:
        self._buffer.append(data)
        self._pending += len(data)
        if self._pending >= _WRITE_CHUNK:
            self.flush()

    def flush(self) -> None:
        if self._buffer:
            chunk = b"".join(self._buffer)
            self._hash.update(chunk)
            self._f.write(chunk)
            self._buffer.clear()
            self._pending = 0

    def digest(self) -> bytes:
        self.flush()
        return self._hash.digest()


def _now_rfc3339() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def save_snapshot(path: str | os.PathLike[str], source: SnapshotSource) -> SnapshotInfo:
    """Write a snapshot of ``source`` to ``path`` (see the module docstring)."""
    final = Path(path)
    temp = final.with_name(f"{final.name}.tmp-{os.getpid()}")
    created = _now_rfc3339()
    count = value_bytes = with_ttl = 0
    resources: Counter[str] = Counter()
    try:
        with temp.open("wb") as f:
            out = _HashingWriter(f)
            revision, entries = source.read()
            info = json.dumps(
                {"source": source.name, "keyPrefix": source.key_prefix, "created": created},
                sort_keys=True,
            ).encode()
            out.write(MAGIC + _HEADER.pack(FORMAT_VERSION, revision, len(info)) + info)
            pack = _ENTRY.pack
            try:
                for entry in entries:
                    key, value = entry.key, entry.value
                    out.write(
                        pack(
                            _TAG_ENTRY,
                            entry.mod_revision,
                            entry.create_revision,
                            entry.ttl_ms,
                            len(key),
                            len(value),
                        )
                    )
                    out.write(key)
                    out.write(value)
                    count += 1
                    value_bytes += len(value)
                    if entry.ttl_ms:
                        with_ttl += 1
                    resources[resource_of_key(key)] += 1
            finally:
                # Ends the source's point in time (its read transaction) even on an error.
                close = getattr(entries, "close", None)
                if close is not None:
                    close()
            out.write(bytes([_TAG_END]))
            out.write(struct.pack(">QQ", count, value_bytes))
            digest = out.digest()
            f.write(digest + END_MAGIC)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, final)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_directory(final.parent)
    return SnapshotInfo(
        path=final,
        version=FORMAT_VERSION,
        revision=revision,
        source=source.name,
        key_prefix=source.key_prefix,
        created=created,
        entries=count,
        value_bytes=value_bytes,
        size=final.stat().st_size,
        sha256=digest.hex(),
        with_ttl=with_ttl,
        resources=dict(resources),
    )


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- reading -------------------------------------------------------------------------------

#: Encrypted values whose storage key is authenticated (Kubernetes' ``aesgcm`` provider):
#: they only decrypt under the exact key they were written at.
_KEY_BOUND_PREFIX = b"k8s:enc:aesgcm:"


@dataclass(slots=True)
class _Header:
    version: int
    revision: int
    source: str
    key_prefix: str
    created: str


class _Reader:
    """Reads a snapshot sequentially, refusing what does not parse.

    The file is read in chunks of ``_READ_CHUNK`` bytes, each hashed as it is read, up to the
    trailer's last 40 bytes (the checksum and the end marker, which the checksum does not
    cover): one hash update per chunk rather than per field."""

    def __init__(self, f: IO[bytes], path: Path, size: int) -> None:
        self._f = f
        self._path = path
        self._size = size
        self._hash = hashlib.sha256()
        # The bytes the checksum covers, and how many of them were read from the file.
        self._covered = max(size - 40, 0)
        self._read = 0
        self._buffer = b""
        self._offset = 0
        self.position = 0
        self.digest = b""

    def _fail(self, reason: str) -> InvalidSnapshot:
        return InvalidSnapshot(f"{self._path} is not a valid kstore snapshot: {reason}")

    def read(self, n: int, what: str) -> bytes:
        """The next ``n`` bytes covered by the checksum."""
        end = self._offset + n
        if end <= len(self._buffer):
            data = self._buffer[self._offset : end]
            self._offset = end
            self.position += n
            return data
        if n > self._covered - self.position:
            raise self._fail(f"truncated (the file ends inside {what}, at byte {self._size})")
        parts = [self._buffer[self._offset :]]
        have = len(parts[0])
        while have < n:
            chunk = self._f.read(min(max(_READ_CHUNK, n - have), self._covered - self._read))
            if not chunk:
                raise self._fail(f"truncated (the file ends inside {what})")
            self._hash.update(chunk)
            self._read += len(chunk)
            parts.append(chunk)
            have += len(chunk)
        joined = b"".join(parts)
        self._buffer, self._offset = joined, n
        self.position += n
        return joined[:n]

    def header(self) -> _Header:
        magic = self._f.read(len(MAGIC))
        if magic != MAGIC:
            raise self._fail("it does not start with the snapshot magic")
        if self._covered < len(MAGIC):
            raise self._fail("truncated (the file ends inside the header)")
        self._hash.update(magic)
        self._read = self.position = len(MAGIC)
        version = int.from_bytes(self.read(4, "the header"), "big")
        if version != FORMAT_VERSION:
            raise InvalidSnapshot(
                f"{self._path} has snapshot format version {version}; this kstore reads "
                f"version {FORMAT_VERSION}"
            )
        revision, info_len = struct.unpack(">QI", self.read(_HEADER.size - 4, "the header"))
        if info_len > _MAX_INFO:
            raise self._fail(f"its header claims {info_len} bytes of info")
        try:
            info = json.loads(self.read(info_len, "the header"))
            return _Header(
                version,
                revision,
                str(info["source"]),
                str(info["keyPrefix"]),
                str(info.get("created", "")),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise self._fail(f"its header info does not parse ({exc})") from None

    def entries(self) -> Iterator[SnapshotEntry]:
        """Every entry, then the trailer is checked (the generator raises there)."""
        count = value_bytes = 0
        unpack = _ENTRY_FIELDS.unpack
        read = self.read
        while True:
            tag = read(1, "an entry")[0]
            if tag == _TAG_END:
                break
            if tag != _TAG_ENTRY:
                raise self._fail(f"unknown entry tag {tag} at byte {self.position - 1}")
            mod_rev, create_rev, ttl_ms, key_len, value_len = unpack(
                read(_ENTRY_FIELDS.size, "an entry")
            )
            key = read(key_len, "an entry's key")
            value = read(value_len, "an entry's value")
            count += 1
            value_bytes += value_len
            yield SnapshotEntry(key, value, mod_rev, create_rev, ttl_ms)
        counts = read(16, "the trailer")
        if self.position != self._covered:
            raise self._fail("bytes follow its trailer")
        stored = self._f.read(40)
        if len(stored) != 40:
            raise self._fail("truncated (the file ends inside the trailer)")
        if stored[32:] != END_MAGIC:
            raise self._fail("the trailer's end marker is missing")
        digest = self._hash.digest()
        if stored[:32] != digest:
            raise self._fail("its SHA-256 checksum does not match its content (corrupt)")
        if struct.unpack(">QQ", counts) != (count, value_bytes):
            raise self._fail("its trailer's counts do not match its entries")
        self.digest = digest


def _open(path: Path) -> tuple[IO[bytes], int]:
    try:
        f = path.open("rb")
    except OSError as exc:
        raise InvalidSnapshot(f"cannot read {path}: {exc.strerror}") from None
    return f, os.fstat(f.fileno()).st_size


def read_entries(path: str | os.PathLike[str]) -> Iterator[SnapshotEntry]:
    """The entries of the snapshot at ``path``; the checksum is checked after the last one
    (raising InvalidSnapshot then), so check the file with :func:`verify_snapshot` before
    acting on entries."""
    p = Path(path)
    f, size = _open(p)
    with f:
        reader = _Reader(f, p, size)
        reader.header()
        yield from reader.entries()


def verify_snapshot(
    path: str | os.PathLike[str], inspect: Callable[[SnapshotEntry], None] | None = None
) -> SnapshotInfo:
    """Read the whole snapshot at ``path`` and check it; what it holds. InvalidSnapshot when
    it is not a snapshot, has another format version, is truncated or corrupt. ``inspect``
    sees every entry on the way (it must not act on them: the file is only known good once
    this returns)."""
    p = Path(path)
    f, size = _open(p)
    resources: Counter[str] = Counter()
    count = value_bytes = with_ttl = key_bound = 0
    first_key_bound = b""
    with f:
        reader = _Reader(f, p, size)
        header = reader.header()
        for entry in reader.entries():
            if inspect is not None:
                inspect(entry)
            count += 1
            value_bytes += len(entry.value)
            if entry.ttl_ms:
                with_ttl += 1
            if entry.value.startswith(_KEY_BOUND_PREFIX):
                key_bound += 1
                first_key_bound = first_key_bound or entry.key
            resources[resource_of_key(entry.key)] += 1
    return SnapshotInfo(
        path=p,
        version=header.version,
        revision=header.revision,
        source=header.source,
        key_prefix=header.key_prefix,
        created=header.created,
        entries=count,
        value_bytes=value_bytes,
        size=size,
        sha256=reader.digest.hex(),
        with_ttl=with_ttl,
        resources=dict(resources),
        key_bound=key_bound,
        first_key_bound=first_key_bound,
    )


# -- restoring -----------------------------------------------------------------------------


def _check_key_bound_values(info: SnapshotInfo, target: SnapshotTarget) -> None:
    if info.key_prefix == target.key_prefix or not info.key_bound:
        return
    first = info.first_key_bound.decode("utf-8", "replace")
    raise InvalidSnapshot(
        f"{info.key_bound} values of {info.path} are encrypted with aesgcm, which "
        f'authenticates their full storage key ("{info.key_prefix}{first}", ...); restored '
        f'under the key prefix "{target.key_prefix}" they could not be decrypted. Restore '
        f'into a store with the key prefix "{info.key_prefix}"'
    )


def restore_snapshot(
    path: str | os.PathLike[str], target: SnapshotTarget, *, force: bool = False
) -> tuple[SnapshotInfo, int]:
    """Restore the snapshot at ``path`` into ``target``: the file is checked whole (format,
    checksum, truncation) while the target inspects every entry, then whether the target can
    take them all and is empty (unless ``force``), and only then written (a second read).
    Returns the snapshot's info and the target's revision afterwards."""
    p = Path(path)
    info = verify_snapshot(p, target.inspect)
    _check_key_bound_values(info, target)
    target.check(force=force)
    revision = target.load(read_entries(p), info.revision, force=force)
    return info, revision
