"""Calls between two processes over one socket, objects with behaviour passed by reference.

Each side runs an :class:`Endpoint` on its end of a connected socket. A call names an object
the other side exported (0 is its root) and a method; arguments and results travel pickled,
with one rule deciding what is copied and what stays home:

- data is copied: builtins, enums, dataclass instances (ListOptions, ListResult, WatchEvent,
  ResourceStorageConfig...), module-level functions (by name), exceptions (their class, args
  and attributes, so a kstore error arrives as the same class with the same fields; one that
  goes back where it was raised arrives as the very object raised);
- the Pods' storage codec is rebuilt on the other side (it is a pure function of the scheme);
- everything else (value transformers, watchers, storages, closures, bound methods) stays where
  it was made and the other side gets a proxy whose method calls come back here. So a
  transformer that records what it was given, or a ``try_update`` closure, behaves exactly as
  in one process, whichever process calls it.

Every incoming call runs in a thread of its own, so calls nest (a read in one process calling
back the transformer in the other, whose callback writes) and block (a watcher's ``next``)
without holding up the connection.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import io
import itertools
import os
import pathlib
import pickle
import socket
import threading
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any

from kstore.codec.versioning import VersioningCodec
from kstore.storage.interface import IdentityTransformer, WatchEvent
from kstore.testing.objects import pod_codec

__all__ = ["Endpoint", "Remote", "RemoteCallable", "RemoteWatcher", "RpcClosed"]

#: No call of the suite takes this long; a hang fails the test instead of the run.
_CALL_TIMEOUT = 120.0

_PLAIN = (str, bytes, int, float, bool, type(None), dict, list, tuple, set, frozenset)


class RpcClosed(ConnectionError):
    """The other process went away before answering."""


def _rebuild_exception(
    cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]
) -> BaseException:
    # Not through __init__: some errors take constructor arguments their args do not keep.
    exc = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(state)
    return exc


def _by_value(obj: object) -> bool:
    if isinstance(obj, (*_PLAIN, enum.Enum, type)):
        return True
    if type(obj) is IdentityTransformer or isinstance(obj, pathlib.PurePath):
        return True
    if dataclasses.is_dataclass(obj):
        return True
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return "<" not in obj.__qualname__  # module-level: pickled by name
    return type(obj).__module__ == "kstore.api.selectors"


class Remote:
    """An object of the other process: attribute access gives a method calling it there."""

    def __init__(self, endpoint: Endpoint, ref: int) -> None:
        self._endpoint = endpoint
        self._ref = ref

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._endpoint.call(self._ref, name, args, kwargs)

        return call

    def remote_attribute(self, name: str) -> Any:
        """A plain attribute or property of the remote object (read there)."""
        return self._endpoint.call(self._ref, name, None, None)


class RemoteCallable(Remote):
    """A function of the other process (a ``try_update``, a ``validate_deletion``...)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._endpoint.call(self._ref, "__call__", args, kwargs)


class RemoteWatcher(Remote):
    """A watcher running in the other process; ``next`` waits there."""

    def next(self, timeout: float | None = None) -> WatchEvent | None:
        event: WatchEvent | None = self._endpoint.call(self._ref, "next", (timeout,), {})
        return event

    def stop(self) -> None:
        self._endpoint.call(self._ref, "stop", (), {})

    @property
    def stopped(self) -> bool:
        return bool(self.remote_attribute("stopped"))

    def __iter__(self) -> Iterator[WatchEvent]:
        while (event := self.next()) is not None:
            yield event


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, endpoint: Endpoint) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._endpoint = endpoint

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _PLAIN):
            return None
        if isinstance(obj, Remote) and obj._endpoint is self._endpoint:
            return ("home", obj._ref)
        if isinstance(obj, VersioningCodec):
            return ("pod-codec",)
        if isinstance(obj, BaseException):
            home = self._endpoint.home_of(obj)
            if home is not None:
                return ("home", home)  # raised there, passed through here: the same object
            # Not through pickle's own reduction: some errors' constructors take arguments
            # their ``args`` do not keep; the class, args and attributes rebuild them.
            state = {k: v for k, v in vars(obj).items() if not k.startswith("__")}
            return ("exception", self._endpoint.export(obj), type(obj), obj.args, state)
        if _by_value(obj):
            return None
        kind = "callable" if callable(obj) else "object"
        if hasattr(obj, "next") and hasattr(obj, "stop") and hasattr(obj, "stopped"):
            kind = "watcher"
        return (kind, self._endpoint.export(obj))


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, endpoint: Endpoint) -> None:
        super().__init__(file)
        self._endpoint = endpoint

    def persistent_load(self, pid: Any) -> Any:
        kind = pid[0]
        if kind == "pod-codec":
            return pod_codec()
        if kind == "home":
            return self._endpoint.exported(pid[1])
        if kind == "exception":
            _, ref, cls, args, state = pid
            exc = _rebuild_exception(cls, args, state)
            self._endpoint.note_import(exc, ref)
            return exc
        proxy = {"callable": RemoteCallable, "watcher": RemoteWatcher, "object": Remote}[kind]
        return proxy(self._endpoint, pid[1])


class Endpoint:
    """One side of the connection: exports objects, calls the other side's, answers its calls."""

    def __init__(self, sock: socket.socket, root: object) -> None:
        self._sock = sock
        self._conn = Connection(os.dup(sock.fileno()))
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._exports: dict[int, object] = {0: root}
        self._export_ids: dict[int, int] = {id(root): 0}
        self._imports: dict[int, tuple[BaseException, int]] = {}
        self._refs = itertools.count(1)
        self._call_ids = itertools.count(1)
        self._waiting: dict[int, list[Any]] = {}
        self._closed = False
        self._reader = threading.Thread(target=self._read, name="rpc-reader", daemon=True)
        self._reader.start()

    # -- exports ------------------------------------------------------------------------------

    def export(self, obj: object) -> int:
        with self._lock:
            ref = self._export_ids.get(id(obj))
            if ref is None:
                ref = next(self._refs)
                self._exports[ref] = obj
                self._export_ids[id(obj)] = ref
            return ref

    def exported(self, ref: int) -> object:
        with self._lock:
            return self._exports[ref]

    def note_import(self, exc: BaseException, ref: int) -> None:
        """``exc`` is the copy of the other side's export ``ref``."""
        with self._lock:
            self._imports[id(exc)] = (exc, ref)

    def home_of(self, exc: BaseException) -> int | None:
        """The other side's reference of ``exc`` if it came from there."""
        with self._lock:
            found = self._imports.get(id(exc))
        return found[1] if found is not None and found[0] is exc else None

    def forget_exports(self) -> None:
        """Drop every export but the root, and every import (the objects of a finished test)."""
        with self._lock:
            root = self._exports[0]
            self._exports = {0: root}
            self._export_ids = {id(root): 0}
            self._imports = {}

    # -- calls --------------------------------------------------------------------------------

    def root(self) -> Remote:
        return Remote(self, 0)

    def call(
        self, ref: int, method: str, args: tuple[Any, ...] | None, kwargs: dict[str, Any] | None
    ) -> Any:
        call_id = next(self._call_ids)
        slot: list[Any] = [threading.Event()]
        with self._lock:
            if self._closed:
                raise RpcClosed("the other process is gone")
            self._waiting[call_id] = slot
        self._send(("call", call_id, ref, method, args, kwargs))
        if not slot[0].wait(_CALL_TIMEOUT):
            raise TimeoutError(f"no answer to {method} in {_CALL_TIMEOUT} s")
        kind, value = slot[1], slot[2]
        if kind == "err":
            raise value
        return value

    def _send(self, message: tuple[Any, ...]) -> None:
        buffer = io.BytesIO()
        _Pickler(buffer, self).dump(message)
        with self._send_lock:
            self._conn.send_bytes(buffer.getbuffer())

    def _read(self) -> None:
        try:
            while True:
                data = self._conn.recv_bytes()
                message = _Unpickler(io.BytesIO(data), self).load()
                if message[0] == "call":
                    threading.Thread(target=self._answer, args=message[1:], daemon=True).start()
                else:
                    kind, call_id, value = message
                    with self._lock:
                        slot = self._waiting.pop(call_id)
                    slot.extend((kind, value))
                    slot[0].set()
        except (EOFError, OSError):
            pass
        finally:
            self._conn.close()
            with self._lock:
                self._closed = True
                waiting, self._waiting = self._waiting, {}
            for slot in waiting.values():
                slot.extend(("err", RpcClosed("the other process is gone")))
                slot[0].set()

    def _answer(
        self,
        call_id: int,
        ref: int,
        method: str,
        args: tuple[Any, ...] | None,
        kwargs: dict[str, Any] | None,
    ) -> None:
        try:
            target = self.exported(ref)
            if args is None:
                reply: tuple[Any, ...] = ("ok", call_id, getattr(target, method))
            else:
                function = target if method == "__call__" else getattr(target, method)
                reply = ("ok", call_id, function(*args, **(kwargs or {})))
        except BaseException as exc:  # every failure belongs to the caller
            reply = ("err", call_id, exc)
        try:
            try:
                self._send(reply)
            except (pickle.PicklingError, TypeError, AttributeError) as exc:
                self._send(("err", call_id, RuntimeError(f"{method}: unsendable answer: {exc!r}")))
        except (OSError, ValueError):
            pass  # the connection is gone: the caller learns it from its own side

    @property
    def closed(self) -> bool:
        return self._closed

    def wait_closed(self) -> None:
        """Block until the other side has closed the connection."""
        self._reader.join()

    def close(self) -> None:
        """End the connection (the other side sees its end) and wait for the reader."""
        # A shutdown, not only a close: it wakes the reader blocked on the socket.
        self._sock.shutdown(socket.SHUT_RDWR)
        self._reader.join(timeout=30)
        self._sock.close()
