"""A response's head and body leave in one write (kstore.server.http_protocol._HeldHead)."""

from __future__ import annotations

import asyncio
from typing import Any

from kstore.server.http_protocol import _HeldHead


class _Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else None


class _Cycle:
    transport: Any


def _held(transport: _Transport) -> tuple[_Cycle, _HeldHead]:
    cycle = _Cycle()
    cycle.transport = _HeldHead(transport, cycle)  # type: ignore[arg-type]
    return cycle, cycle.transport


def test_head_and_body_leave_in_one_write_and_the_cycle_gets_the_transport_back() -> None:
    async def run() -> None:
        transport = _Transport()
        cycle, _ = _held(transport)
        cycle.transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
        assert transport.writes == []
        cycle.transport.write(b"{}")
        assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]
        assert cycle.transport is transport
        await asyncio.sleep(0)  # the end-of-turn flush finds nothing held
        assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]

    asyncio.run(run())


def test_a_streaming_head_goes_out_at_the_end_of_the_turn() -> None:
    async def run() -> None:
        transport = _Transport()
        cycle, held = _held(transport)
        cycle.transport.write(b"HEAD")
        await asyncio.sleep(0)
        assert transport.writes == [b"HEAD"]
        assert cycle.transport is transport
        # A writer that kept the wrapper writes straight through, in order.
        held.write(b"chunk")
        assert transport.writes == [b"HEAD", b"chunk"]

    asyncio.run(run())


def test_close_and_flush_send_a_held_head_first() -> None:
    async def run() -> None:
        transport = _Transport()
        cycle, _ = _held(transport)
        cycle.transport.write(b"HEAD")
        cycle.transport.close()
        assert transport.writes == [b"HEAD"] and transport.closed

        transport = _Transport()
        cycle, held = _held(transport)
        cycle.transport.write(b"HEAD")
        held.flush()
        held.flush()
        assert transport.writes == [b"HEAD"]
        assert held.get_extra_info("peername") == ("127.0.0.1", 1)
        assert not held.is_closing()

    asyncio.run(run())
