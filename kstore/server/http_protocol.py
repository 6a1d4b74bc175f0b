"""The HTTP/1.1 protocol ``kstore serve`` runs: uvicorn's, on the httptools (llhttp) parser.

The C parser costs 40-45% less server CPU per GET and about 20% per create than h11 (the
pure-Python parser). One difference shows: llhttp knows a fixed list of methods and stops at
any other, where Go's server (and h11) pass every method on. Kubernetes answers an unknown
method with a 405 ``Status``; so does this protocol, in place of uvicorn's plain-text 400, then
closes the connection (the parser cannot go on past a request line it rejected).

Each request's scope also carries (a weak reference to) its response cycle under
:data:`~kstore.server.handlers.watch.CYCLE_SCOPE_KEY`, so that a
watch stream can write its chunks straight to the connection's transport (one shared,
pre-framed chunk per event for every watcher of it) instead of through the ASGI ``send`` of
every filter in the chain (:mod:`kstore.server.handlers.watch`).

A response's status line and headers go out in the same send as its body: uvicorn writes them
as soon as the app starts the response, and the body a moment later, which cost a second
system call (about a tenth of a small GET's server CPU). Each request's cycle writes through
:class:`_HeldHead`, which keeps the first write until the next one joins it, or until the end
of the event loop's turn for a response that streams (a watch, a chunked list), whose headers
the client must get at once.
"""

from __future__ import annotations

import asyncio
import weakref
from array import array
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from kstore.errors import MethodNotAllowed, to_status
from kstore.server.handlers.watch import CYCLE_SCOPE_KEY
from kstore.server.json_body import status_json
from kstore.server.routes import METHOD_NOT_ALLOWED_MESSAGE

_METHOD_NOT_ALLOWED_BODY = status_json(to_status(MethodNotAllowed(METHOD_NOT_ALLOWED_MESSAGE)))


class _Parser(httptools.HttpRequestParser):
    """llhttp's request parser, remembering on its protocol when a method was unknown."""

    def __init__(self, protocol: KStoreHttpProtocol) -> None:
        super().__init__(protocol)
        self._protocol = protocol

    def feed_data(self, data: bytes | bytearray | memoryview | array[int]) -> None:
        try:
            super().feed_data(data)
        except httptools.HttpParserInvalidMethodError:
            self._protocol.unknown_method = True
            raise


class _HeldHead:
    """The connection's transport as one response's cycle sees it: the first write (the
    status line and headers) is held and sent with the second (the body), or on its own at
    the end of this turn of the loop; then the cycle writes to the transport itself."""

    __slots__ = ("_cycle", "_held", "_transport")

    def __init__(self, transport: asyncio.Transport, cycle: Any) -> None:
        self._transport = transport
        self._cycle = cycle
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._release()
            self._transport.write(held + data)
        elif self._cycle.transport is self:
            self._held = bytes(data)
            asyncio.get_running_loop().call_soon(self.flush)
        else:
            # A writer that kept this object (a watch stream) after the head went out.
            self._transport.write(data)

    def flush(self) -> None:
        """Send a held head now."""
        held = self._held
        if held is not None:
            self._release()
            self._transport.write(held)
        elif self._cycle.transport is self:
            self._cycle.transport = self._transport

    def _release(self) -> None:
        self._held = None
        self._cycle.transport = self._transport

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class KStoreHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with Kubernetes' 405 for a method llhttp does not know."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.unknown_method = False
        self.parser = _Parser(self)
        # As uvicorn sets its own parser: a response can still go out when the client has
        # pipelined more data after a request that closes the connection.
        self.parser.set_dangerous_leniencies(lenient_data_after_close=True)

    def on_headers_complete(self) -> None:
        previous = self.cycle
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is not None and cycle is not previous:
            # The request's task has not started yet: it sees the key.
            cycle.scope[CYCLE_SCOPE_KEY] = weakref.ref(cycle)  # type: ignore[literal-required]
            cycle.transport = _HeldHead(self.transport, cycle)  # type: ignore[assignment]

    def _flush_held_head(self) -> None:
        # What the protocol writes itself goes after the head a cycle may still hold.
        cycle = self.cycle
        if cycle is not None and isinstance(cycle.transport, _HeldHead):
            cycle.transport.flush()

    def send_400_response(self, msg: str) -> None:
        self._flush_held_head()
        if not self.unknown_method:
            super().send_400_response(msg)
            return
        head = [b"HTTP/1.1 405 Method Not Allowed\r\n"]
        for name, value in self.server_state.default_headers:
            head.append(name + b": " + value + b"\r\n")
        head.append(b"content-type: application/json\r\n")
        head.append(b"content-length: %d\r\n" % len(_METHOD_NOT_ALLOWED_BODY))
        head.append(b"connection: close\r\n\r\n")
        self.transport.write(b"".join(head) + _METHOD_NOT_ALLOWED_BODY)
        self.transport.close()
