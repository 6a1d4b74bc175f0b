"""HTTP clients for robustness runs: ConfigMap writes with unique values, and resuming watches.

Everything here speaks to a real ``kstore serve`` over HTTP (httpx, a test dependency) and
works on ConfigMaps of one namespace whose ``data.v`` holds a value unique to each write, so a
watch event or a read names exactly the write it reflects.

- :class:`ConfigMapApi`: create / update (compare-and-swap on ``resourceVersion``) / delete
  (with a resourceVersion precondition) / get / list, each answering the HTTP status and what
  a test needs (revision, value); transport errors propagate as ``httpx.TransportError``, which
  callers record as an unknown outcome.
- :class:`HttpWatcher`: a thread that watches the namespace from a revision and keeps watching
  across connection ends (a ``timeoutSeconds`` expiry, a server killed and restarted) by
  resuming from the last revision it received, exactly as a client-go reflector does; on 410
  it relists and watches from the list's revision, marking the broken connection as expired.
  Each connection is one :class:`~kstore.testing.watch_history.WatchSegment`.

Invariants: every loop is bounded by a deadline or a stop flag; the watcher never resumes from
a revision it did not receive (or list); events are interned in a shared :class:`Interner`, so
many watchers of one history hold one object per change.
"""

from __future__ import annotations

import threading
import time
from array import array
from typing import Any

import httpx
import orjson

from kstore.testing.watch_history import Change, WatchRecord, WatchSegment

__all__ = ["ConfigMapApi", "HttpWatcher", "Interner", "change_of", "read_history"]

#: A watch connection ends after this long and is resumed: every watcher exercises resumption
#: even without faults, and notices a stop request at least this often.
WATCH_CONNECTION_SECONDS = 5


class Interner:
    """One shared :class:`Change` per distinct change seen by any watcher (thread-safe:
    ``dict.setdefault`` is atomic)."""

    def __init__(self) -> None:
        self._seen: dict[Change, Change] = {}

    def __call__(self, change: Change) -> Change:
        return self._seen.setdefault(change, change)


def change_of(event_type: str, obj: dict[str, Any]) -> Change:
    """The :class:`Change` a watch event (or a listed/returned object) stands for."""
    metadata = obj["metadata"]
    data = obj.get("data") or {}
    return Change(int(metadata["resourceVersion"]), event_type, metadata["name"], data.get("v"))


def _body(name: str, value: str, revision: int | None = None) -> bytes:
    metadata: dict[str, Any] = {"name": name}
    if revision is not None:
        metadata["resourceVersion"] = str(revision)
    return orjson.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {"v": value}}
    )


class ConfigMapApi:
    """ConfigMaps of one namespace over one ``httpx.Client``."""

    def __init__(self, client: httpx.Client, namespace: str) -> None:
        self.client = client
        self.namespace = namespace
        self.path = f"/api/v1/namespaces/{namespace}/configmaps"

    def create_namespace(self) -> int:
        body = orjson.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ""}})
        body = body.replace(b'"name":""', b'"name":' + orjson.dumps(self.namespace))
        return self.client.post("/api/v1/namespaces", content=body).status_code

    def create(self, name: str, value: str) -> tuple[int, int | None]:
        response = self.client.post(self.path, content=_body(name, value))
        return response.status_code, _revision(response)

    def update(self, name: str, value: str, revision: int | None) -> tuple[int, int | None]:
        """PUT with ``revision`` as the precondition (409 Conflict when stale; None: an
        unconditional update)."""
        response = self.client.put(f"{self.path}/{name}", content=_body(name, value, revision))
        return response.status_code, _revision(response)

    def delete(self, name: str, revision: int | None = None) -> int:
        """DELETE, with a resourceVersion precondition when ``revision`` is given."""
        content = b""
        if revision is not None:
            content = orjson.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "DeleteOptions",
                    "preconditions": {"resourceVersion": str(revision)},
                }
            )
        response = self.client.request("DELETE", f"{self.path}/{name}", content=content)
        return response.status_code

    def get(self, name: str) -> tuple[int, Change | None]:
        response = self.client.get(f"{self.path}/{name}")
        if response.status_code != 200:
            return response.status_code, None
        return 200, change_of("ADDED", response.json())

    def list_all(self) -> tuple[int, dict[str, Change]]:
        """The list's revision and each item (as an ADDED change), by name."""
        response = self.client.get(self.path)
        response.raise_for_status()
        listed = response.json()
        items = {item["metadata"]["name"]: change_of("ADDED", item) for item in listed["items"]}
        return int(listed["metadata"]["resourceVersion"]), items

    def list_pages(self, limit: int, max_pages: int = 1000) -> list[tuple[int, list[Change]]]:
        """Every page of a list in pages of ``limit`` (following ``continue``): each page's
        revision and items in order."""
        pages: list[tuple[int, list[Change]]] = []
        params = {"limit": str(limit)}
        for _ in range(max_pages):
            response = self.client.get(self.path, params=params)
            response.raise_for_status()
            listed = response.json()
            items = [change_of("ADDED", item) for item in listed["items"]]
            pages.append((int(listed["metadata"]["resourceVersion"]), items))
            token = listed["metadata"].get("continue")
            if not token:
                return pages
            params = {"limit": str(limit), "continue": token}
        raise AssertionError(f"a list in pages of {limit} did not end after {max_pages} pages")


def _revision(response: httpx.Response) -> int | None:
    if response.status_code >= 300:
        return None
    return int(response.json()["metadata"]["resourceVersion"])


class HttpWatcher(threading.Thread):
    """Watches ConfigMaps of ``namespace`` from ``start`` until :meth:`request_stop` (or
    ``deadline``, a ``time.monotonic()`` value), resuming across connection ends; see the
    module docstring. ``record`` holds every connection's events."""

    def __init__(
        self,
        base_url: str,
        namespace: str,
        start: int,
        *,
        name: str,
        interner: Interner,
        deadline: float,
    ) -> None:
        super().__init__(name=name, daemon=True)
        self.base_url = base_url
        self.namespace = namespace
        self.record = WatchRecord(name)
        self.record.segments.append(WatchSegment(start))
        #: time.monotonic() at which each event (in record order) was received.
        self.received_at = array("d")
        self.connection_errors = 0
        self._interner = interner
        self._deadline = deadline
        self._stop_now = threading.Event()
        self._progress = threading.Condition()

    # -- control ---------------------------------------------------------------------------

    def wait_reached(self, target: int, timeout: float) -> bool:
        """Wait until every change up to ``target`` was received; whether it was in time."""
        end = time.monotonic() + timeout
        with self._progress:
            while self.record.reached() < target and self.is_alive():
                left = end - time.monotonic()
                if left <= 0:
                    break
                self._progress.wait(min(left, 0.2))
        return self.record.reached() >= target

    def request_stop(self) -> None:
        """Stop after the current connection's next event or end (at most
        :data:`WATCH_CONNECTION_SECONDS`); join the thread to wait for it."""
        self._stop_now.set()

    def _done(self) -> bool:
        return self._stop_now.is_set() or time.monotonic() > self._deadline

    # -- the loop --------------------------------------------------------------------------

    def run(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=httpx.Timeout(10.0)) as client:
            api = ConfigMapApi(client, self.namespace)
            while not self._done():
                segment = self.record.segments[-1]
                try:
                    self._stream(client, segment)
                except httpx.TransportError as exc:
                    self.connection_errors += 1
                    segment.error = f"{type(exc).__name__}: {exc}"
                    time.sleep(0.05)
                if self._done():
                    break
                if segment.expired:
                    start = self._relist(api)
                    if start is None:
                        continue
                else:
                    start = segment.reached()
                if segment.events or segment.expired or segment.error is None:
                    self.record.segments.append(WatchSegment(start))
                else:
                    segment.error = None  # nothing was delivered: retry on the same segment

    def _relist(self, api: ConfigMapApi) -> int | None:
        try:
            revision, _ = api.list_all()
        except (httpx.TransportError, httpx.HTTPStatusError):
            time.sleep(0.05)
            return None
        return revision

    def _stream(self, client: httpx.Client, segment: WatchSegment) -> None:
        params = {
            "watch": "true",
            "resourceVersion": str(segment.start),
            "timeoutSeconds": str(WATCH_CONNECTION_SECONDS),
        }
        path = f"/api/v1/namespaces/{self.namespace}/configmaps"
        with client.stream("GET", path, params=params) as response:
            if response.status_code == 410:
                segment.expired = True
                return
            if response.status_code != 200:
                response.read()
                segment.error = f"HTTP {response.status_code}: {response.text[:200]}"
                time.sleep(0.05)
                return
            for line in response.iter_lines():
                if not line:
                    continue
                event = orjson.loads(line)
                kind = event["type"]
                if kind == "ERROR":
                    status = event["object"]
                    if status.get("code") == 410:
                        segment.expired = True
                    else:
                        segment.error = f"ERROR event: {status}"
                    return
                if kind == "BOOKMARK":
                    continue
                segment.events.append(self._interner(change_of(kind, event["object"])))
                self.received_at.append(time.monotonic())
                with self._progress:
                    self._progress.notify_all()
                if self._stop_now.is_set():
                    return


def read_history(
    base_url: str, namespace: str, start: int, until: int, *, timeout: float = 30.0
) -> list[Change]:
    """Every change of the namespace's ConfigMaps after ``start`` up to ``until``, read with one
    watch (the server must still hold that history: run it without the watch cache, whose
    window begins at its start, and without compaction). Raises AssertionError when the watch
    ends before ``until`` or reports an error."""
    changes: list[Change] = []
    params = {"watch": "true", "resourceVersion": str(start), "timeoutSeconds": str(int(timeout))}
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    if until <= start:
        return changes
    with (
        httpx.Client(base_url=base_url, timeout=httpx.Timeout(timeout)) as client,
        client.stream("GET", path, params=params) as response,
    ):
        if response.status_code != 200:
            raise AssertionError(f"history watch: HTTP {response.status_code} {response.read()!r}")
        for line in response.iter_lines():
            if not line:
                continue
            event = orjson.loads(line)
            if event["type"] not in ("ADDED", "MODIFIED", "DELETED"):
                raise AssertionError(f"history watch from {start}: {event}")
            changes.append(change_of(event["type"], event["object"]))
            if changes[-1].revision >= until:
                return changes
    raise AssertionError(f"history watch from {start} ended at {changes[-1:]}, before {until}")
