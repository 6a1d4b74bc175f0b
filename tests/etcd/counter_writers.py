"""Writers that count through a ``kstore serve``: ConfigMaps as counters, every write logged.

Each writer thread owns one counter ConfigMap and raises its ``data.n`` by one per PUT, with
the resourceVersion it last read as the precondition, so etcd can apply each increment at
most once. After a failure whose outcome is unknown (a 5xx, a dropped connection) or a 409,
it reads the counter again and goes on from what is stored, as a client of kube-apiserver
would. Every few writes it also creates a ConfigMap of its own. Every request is logged with
its start and end (``time.monotonic()``) and outcome, so a test can tell when writes resumed
after a fault and check that every acknowledged write is stored.

Bounded: each writer stops after ``max_ops`` requests or when told to stop.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import httpx
import orjson

__all__ = ["CounterWriters", "Op"]

CMS = "/api/v1/namespaces/default/configmaps"
#: Every this many counter writes, a writer creates a ConfigMap.
_CREATE_EVERY = 4


@dataclass(frozen=True, slots=True)
class Op:
    """One request: ``kind`` (update, create), ``name``, the counter value it wrote (update),
    its HTTP status (0: no answer), start and end."""

    kind: str
    name: str
    value: int
    status: int
    invoked: float
    returned: float

    @property
    def acknowledged(self) -> bool:
        return 200 <= self.status < 300


@dataclass
class _Writer:
    counter: str
    ops: list[Op] = field(default_factory=list)
    created: int = 0
    crash: str = ""


class CounterWriters:
    """``count`` writer threads on ``url``; names start with ``prefix`` (unique per run)."""

    def __init__(self, url: str, prefix: str, count: int = 4, max_ops: int = 5000) -> None:
        self._url = url
        self._prefix = prefix
        self._max_ops = max_ops
        self._stop = threading.Event()
        self._writers = [_Writer(f"{prefix}-w{i}") for i in range(count)]
        self._threads: list[threading.Thread] = []

    # -- running -----------------------------------------------------------------------------

    def start(self) -> None:
        with httpx.Client(base_url=self._url, timeout=40.0) as client:
            for writer in self._writers:
                body = {"metadata": {"name": writer.counter}, "data": {"n": "0"}}
                response = client.post(CMS, content=orjson.dumps(body))
                assert response.status_code == 201, response.text
        for writer in self._writers:
            thread = threading.Thread(target=self._run, args=(writer,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)
            assert not thread.is_alive(), "a writer did not stop"

    def _run(self, writer: _Writer) -> None:
        try:
            with httpx.Client(base_url=self._url, timeout=40.0) as client:
                self._loop(client, writer)
        except Exception as exc:  # reported by the test, never swallowed
            writer.crash = repr(exc)

    def _loop(self, client: httpx.Client, writer: _Writer) -> None:
        current = self._read(client, writer.counter)
        for number in range(self._max_ops):
            if self._stop.is_set():
                return
            if number % _CREATE_EVERY == _CREATE_EVERY - 1:
                self._create(client, writer)
                continue
            value = int(current["data"]["n"]) + 1
            body = dict(current, data={"n": str(value)})
            status, answer = self._send(client, writer, "update", writer.counter, value, body)
            if status == 200:
                current = answer
            else:
                current = self._read(client, writer.counter)

    def _create(self, client: httpx.Client, writer: _Writer) -> None:
        writer.created += 1
        name = f"{writer.counter}-c{writer.created}"
        body = {"metadata": {"name": name}, "data": {"by": writer.counter}}
        self._send(client, writer, "create", name, 0, body)

    def _send(
        self, client: httpx.Client, writer: _Writer, kind: str, name: str, value: int, body: dict
    ) -> tuple[int, dict]:
        invoked = time.monotonic()
        try:
            if kind == "create":
                response = client.post(CMS, content=orjson.dumps(body))
            else:
                response = client.put(f"{CMS}/{name}", content=orjson.dumps(body))
            status = response.status_code
            answer = response.json() if status < 300 else {}
        except httpx.HTTPError:
            status, answer = 0, {}
        writer.ops.append(Op(kind, name, value, status, invoked, time.monotonic()))
        return status, answer

    def _read(self, client: httpx.Client, name: str) -> dict:
        """The counter as stored; retried through the fault (bounded)."""
        deadline = time.monotonic() + 60
        while True:
            try:
                response = client.get(f"{CMS}/{name}")
                if response.status_code == 200:
                    return dict(response.json())
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, f"could not read {name} within 60 s"
            time.sleep(0.05)

    # -- results -----------------------------------------------------------------------------

    @property
    def ops(self) -> list[Op]:
        return [op for writer in self._writers for op in writer.ops]

    @property
    def crashes(self) -> list[str]:
        return [writer.crash for writer in self._writers if writer.crash]

    @property
    def counters(self) -> list[str]:
        return [writer.counter for writer in self._writers]

    def first_ack_after(self, moment: float) -> float:
        """Seconds from ``moment`` to the first acknowledged write invoked at or after it."""
        returned = [op.returned for op in self.ops if op.acknowledged and op.invoked >= moment]
        return min(returned, default=float("inf")) - moment
