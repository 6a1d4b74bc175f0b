"""Conformance: namespace- and cluster-scoped lists and watches with field selectors.

Ports of Kubernetes' ``RunTestNamespaceScopedList``, ``RunTestNamespaceScopedWatch`` and
``RunTestClusterScopedWatch`` (plus the cluster-scoped list Kubernetes has no table for). Watch
cases write a sequence of Pods and state, per write, the event the watcher must see: an update
that starts matching is ADDED, one that stops matching is DELETED carrying the previous state
with the new revision, and writes that do not match are not seen at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kstore.api.gvk import Object
from kstore.api.selectors import FieldSelector
from kstore.storage.interface import EventType, ListOptions, Storage
from kstore.testing.env import ConformanceEnv
from kstore.testing.objects import pod, pod_key, replace_with, rv_of, sorted_by_key, with_rv
from kstore.testing.watching import expect_event, expect_no_event, expect_watch_ended

__all__ = [
    "TestClusterScopedList",
    "TestClusterScopedWatch",
    "TestNamespaceScopedList",
    "TestNamespaceScopedWatch",
]

ADDED, MODIFIED, DELETED = EventType.ADDED, EventType.MODIFIED, EventType.DELETED


def _p(name: str, namespace: str = "", node: str = "", *, running: bool = False) -> Object:
    """Kubernetes' basePod / basePodUpdated (running) / basePodAssigned (node) shapes."""
    return pod(name, namespace, node_name=node, phase="Running" if running else "")


# ---------------------------------------------------------------------------------------------
# Lists


@dataclass(frozen=True)
class _ListCase:
    namespace: str  # "" lists "/pods/", else "/pods/<namespace>"
    selector: str
    inputs: tuple[Object, ...]
    expect: tuple[int, ...]  # indexes into inputs


_NAMESPACE_LIST_CASES: dict[str, _ListCase] = {
    "request without namespace, without field selector": _ListCase(
        "", "", (_p("foo1", "ns1"), _p("foo2", "ns2")), (0, 1)
    ),
    "request without namespace, field selector with metadata.namespace": _ListCase(
        "", "metadata.namespace=ns1", (_p("foo1", "ns1"), _p("foo1", "ns2")), (0,)
    ),
    "request without namespace, field selector with spec.nodename": _ListCase(
        "", "spec.nodeName=bar1", (_p("foo1", "ns1", "bar1"), _p("foo2", "ns2", "bar2")), (0,)
    ),
    "request without namespace, field selector with spec.nodename to filter out": _ListCase(
        "", "spec.nodeName!=bar1", (_p("foo1", "ns1", "bar1"), _p("foo2", "ns2", "bar2")), (1,)
    ),
    "request with namespace, without field selector": _ListCase(
        "ns1", "", (_p("foo1", "ns1"), _p("foo1", "ns2"), _p("foo2", "ns1")), (0, 2)
    ),
    "request with namespace, field selector with matched metadata.namespace": _ListCase(
        "ns1", "metadata.namespace=ns1", (_p("foo1", "ns1"), _p("foo1", "ns2")), (0,)
    ),
    "request with namespace, field selector with non-matched metadata.namespace": _ListCase(
        "ns1",
        "metadata.namespace=ns2",
        (
            _p("foo1", "ns1"),
            _p("foo1", "ns2"),
            _p("foo2", "ns1", running=True),
            _p("foo2", "ns2", running=True),
        ),
        (),
    ),
    "request with namespace, field selector with spec.nodename": _ListCase(
        "ns1",
        "spec.nodeName=bar2",
        (_p("foo1", "ns1", "bar1"), _p("foo1", "ns2", "bar2"), _p("foo2", "ns1", "bar2")),
        (2,),
    ),
    "request with namespace, field selector with spec.nodename to filter out": _ListCase(
        "ns2",
        "spec.nodeName!=bar1",
        (
            _p("foo1", "ns1"),
            _p("foo1", "ns2"),
            _p("foo3", "ns2", "bar1"),
            _p("foo2", "ns2", "bar2"),
        ),
        (1, 3),
    ),
    "request without namespace, field selector with metadata.name": _ListCase(
        "", "metadata.name=foo1", (_p("foo1", "ns1"), _p("foo1", "ns2"), _p("foo2", "ns1")), (0, 1)
    ),
    "request without namespace, field selector with metadata.name and metadata.namespace": (
        _ListCase(
            "",
            "metadata.name=foo1,metadata.namespace=ns1",
            (_p("foo1", "ns1"), _p("foo2", "ns1"), _p("foo1", "ns2")),
            (0,),
        )
    ),
    "request without namespace, field selector with metadata.name and spec.nodeName": _ListCase(
        "", "metadata.name=foo1,spec.nodeName=bar1", (_p("foo1", "ns1", "bar1"),), (0,)
    ),
    "request without namespace, field selector with metadata.name, and with spec.nodeName to "
    "filter out watch": _ListCase(
        "",
        "spec.nodeName!=bar1,metadata.name=foo1",
        (
            _p("foo1", "ns1"),
            _p("foo2", "ns1"),
            _p("foo1", "ns2", "bar1"),
            _p("foo2", "ns2", "bar1"),
            _p("foo1", "ns3", "bar2"),
            _p("foo2", "ns3", "bar2"),
        ),
        (0, 4),
    ),
    "request with namespace, with field selector metadata.name": _ListCase(
        "ns1",
        "metadata.name=foo1",
        (_p("foo1", "ns1"), _p("foo2", "ns1"), _p("foo1", "ns2"), _p("foo2", "ns2")),
        (0,),
    ),
    "request with namespace, with field selector metadata.name and metadata.namespace": _ListCase(
        "ns1",
        "metadata.name=foo1,metadata.namespace=ns1",
        (_p("foo1", "ns1"), _p("foo2", "ns1"), _p("foo1", "ns2"), _p("foo2", "ns2")),
        (0,),
    ),
    "request with namespace, with field selector metadata.name, metadata.namespace and "
    "spec.nodename": _ListCase(
        "ns2",
        "metadata.name=foo2,metadata.namespace=ns2,spec.nodeName=bar1",
        (
            _p("foo1", "ns1"),
            _p("foo2", "ns1"),
            _p("foo1", "ns2"),
            _p("foo2", "ns2", "bar1"),
            _p("foo1", "ns3", "bar1"),
            _p("foo2", "ns3", "bar1"),
        ),
        (3,),
    ),
    "request with namespace, with field selector metadata.name, metadata.namespace, and with "
    "spec.nodename to filter out": _ListCase(
        "ns2",
        "spec.nodeName!=bar2,metadata.name=foo1,metadata.namespace=ns2",
        (
            _p("foo1", "ns1"),
            _p("foo2", "ns1"),
            _p("foo1", "ns2", "bar1"),
            _p("foo2", "ns2", "bar2"),
            _p("foo1", "ns3", "bar2"),
        ),
        (2,),
    ),
}


class TestNamespaceScopedList:
    @pytest.mark.parametrize("case", list(_NAMESPACE_LIST_CASES))
    def test_list(self, conformance_env: ConformanceEnv, case: str) -> None:
        tc = _NAMESPACE_LIST_CASES[case]
        pods = conformance_env.pods()
        stored = [pods.create(pod_key(obj), obj) for obj in tc.inputs]
        key = f"/pods/{tc.namespace}" if tc.namespace else "/pods/"
        result = pods.list(key, ListOptions(field_selector=FieldSelector.parse(tc.selector)))
        assert result.items == sorted_by_key([stored[i] for i in tc.expect])


_CLUSTER_INPUTS = (_p("foo1"), _p("foo2", node="bar1"), _p("foo3", node="bar2"))
_CLUSTER_LIST_CASES: dict[str, tuple[str, bool, str, tuple[int, ...]]] = {
    "all objects": ("/pods/", True, "", (0, 1, 2)),
    "field selector with metadata.name": ("/pods/", True, "metadata.name=foo1", (0,)),
    "field selector with spec.nodeName": ("/pods/", True, "spec.nodeName=bar1", (1,)),
    "field selector with spec.nodeName to filter out": (
        "/pods/",
        True,
        "spec.nodeName!=bar1",
        (0, 2),
    ),
    "exact key": ("/pods/foo1", False, "", (0,)),
    "recursive on an object key": ("/pods/foo1", True, "", ()),
}


class TestClusterScopedList:
    @pytest.mark.parametrize("case", list(_CLUSTER_LIST_CASES))
    def test_list(self, conformance_env: ConformanceEnv, case: str) -> None:
        key, recursive, selector, expect = _CLUSTER_LIST_CASES[case]
        pods = conformance_env.cluster_pods()
        stored = [pods.create(pod_key(obj), obj) for obj in _CLUSTER_INPUTS]
        opts = ListOptions(recursive=recursive, field_selector=FieldSelector.parse(selector))
        assert pods.list(key, opts).items == [stored[i] for i in expect]


# ---------------------------------------------------------------------------------------------
# Watches

_Step = tuple[Object, EventType | None]


def run_watch_steps(
    storage: Storage, watch_key: str, recursive: bool, selector: str, steps: list[_Step]
) -> None:
    """Watch from the current revision, write each step's Pod, expect each step's event."""
    field_selector = FieldSelector.parse(selector)
    start = storage.list("/pods/", ListOptions(field_selector=field_selector))
    opts = ListOptions(
        resource_version=str(start.resource_version),
        field_selector=field_selector,
        recursive=recursive,
    )
    watcher = storage.watch(watch_key, opts)
    try:
        current: dict[str, Object] = {}
        for obj, expected in steps:
            key = pod_key(obj)
            out = storage.guaranteed_update(key, replace_with(obj), ignore_not_found=True)
            if expected is DELETED:
                # Stopped matching: the last state the watcher knew, at the new revision.
                expect_event(watcher, DELETED, with_rv(current[key], rv_of(out)))
            elif expected is not None:
                expect_event(watcher, expected, out)
            current[key] = out
        expect_no_event(watcher)
    finally:
        watcher.stop()
    expect_watch_ended(watcher)


_CLUSTER_WATCH_CASES: dict[str, tuple[str, bool, str, list[_Step]]] = {
    "cluster-wide watch, request without name, without field selector": (
        "/pods/",
        True,
        "",
        [
            (_p("t1-foo1"), ADDED),
            (_p("t1-foo1", running=True), MODIFIED),
            (_p("t1-foo2", node="t1-bar1"), ADDED),
        ],
    ),
    "cluster-wide watch, request without name, field selector with spec.nodeName": (
        "/pods/",
        True,
        "spec.nodeName=t2-bar1",
        [(_p("t2-foo1"), None), (_p("t2-foo1", node="t2-bar1"), ADDED)],
    ),
    "cluster-wide watch, request without name, field selector with spec.nodeName to filter out "
    "watch": (
        "/pods/",
        True,
        "spec.nodeName!=t3-bar1",
        [
            (_p("t3-foo1"), ADDED),
            (_p("t3-foo2"), ADDED),
            (_p("t3-foo1", running=True), MODIFIED),
            (_p("t3-foo1", node="t3-bar1"), DELETED),
        ],
    ),
    "cluster-wide watch, request with name, field selector with metadata.name": (
        "/pods/t4-foo1",
        False,
        "metadata.name=t4-foo1",
        [
            (_p("t4-foo1"), ADDED),
            (_p("t4-foo2"), None),
            (_p("t4-foo1", running=True), MODIFIED),
            (_p("t4-foo2", running=True), None),
        ],
    ),
    "cluster-wide watch, request with name, field selector with metadata.name and spec.nodeName": (
        "/pods/t5-foo1",
        False,
        "metadata.name=t5-foo1,spec.nodeName=t5-bar1",
        [
            (_p("t5-foo1"), None),
            (_p("t5-foo2"), None),
            (_p("t5-foo1", running=True), None),
            (_p("t5-foo2", running=True), None),
            (_p("t5-foo1", node="t5-bar1"), ADDED),
        ],
    ),
    "cluster-wide watch, request with name, field selector with metadata.name, and with "
    "spec.nodeName to filter out watch": (
        "/pods/t6-foo1",
        False,
        "spec.nodeName!=t6-bar1,metadata.name=t6-foo1",
        [
            (_p("t6-foo1"), ADDED),
            (_p("t6-foo2"), None),
            (_p("t6-foo1", running=True), MODIFIED),
            (_p("t6-foo1", node="t6-bar1"), DELETED),
            (_p("t6-foo2", node="t6-bar1"), None),
        ],
    ),
}


class TestClusterScopedWatch:
    @pytest.mark.parametrize("case", list(_CLUSTER_WATCH_CASES))
    def test_watch(self, conformance_env: ConformanceEnv, case: str) -> None:
        key, recursive, selector, steps = _CLUSTER_WATCH_CASES[case]
        run_watch_steps(conformance_env.cluster_pods(), key, recursive, selector, steps)


def _ns_steps(prefix: str, *steps: tuple[str, str, str, bool, EventType | None]) -> list[_Step]:
    """Steps from (name, namespace, node, running, event), names prefixed with ``prefix``."""
    out: list[_Step] = []
    for name, namespace, node, running, event in steps:
        node_name = f"{prefix}-{node}" if node else ""
        obj = _p(f"{prefix}-{name}", f"{prefix}-{namespace}", node_name, running=running)
        out.append((obj, event))
    return out


_NAMESPACE_WATCH_CASES: dict[str, tuple[str, bool, str, list[_Step]]] = {
    "namespaced watch, request without name, request without namespace, without field selector": (
        "/pods/",
        True,
        "",
        _ns_steps(
            "t1",
            ("foo1", "ns1", "", False, ADDED),
            ("foo2", "ns2", "", False, ADDED),
            ("foo1", "ns1", "", True, MODIFIED),
            ("foo2", "ns2", "", True, MODIFIED),
        ),
    ),
    "namespaced watch, request without name, request without namespace, field selector with "
    "metadata.namespace": (
        "/pods/",
        True,
        "metadata.namespace=t2-ns1",
        _ns_steps(
            "t2",
            ("foo1", "ns1", "", False, ADDED),
            ("foo1", "ns2", "", False, None),
            ("foo1", "ns1", "", True, MODIFIED),
            ("foo1", "ns2", "", True, None),
        ),
    ),
    "namespaced watch, request without name, request without namespace, field selector with "
    "spec.nodename": (
        "/pods/",
        True,
        "spec.nodeName=t3-bar1",
        _ns_steps(
            "t3",
            ("foo1", "ns1", "", False, None),
            ("foo2", "ns2", "", False, None),
            ("foo1", "ns1", "bar1", False, ADDED),
            ("foo2", "ns2", "bar1", False, ADDED),
        ),
    ),
    "namespaced watch, request without name, request without namespace, field selector with "
    "spec.nodename to filter out watch": (
        "/pods/",
        True,
        "spec.nodeName!=t4-bar1",
        _ns_steps(
            "t4",
            ("foo1", "ns1", "", False, ADDED),
            ("foo2", "ns1", "", False, ADDED),
            ("foo1", "ns1", "", True, MODIFIED),
            ("foo1", "ns1", "bar1", False, DELETED),
        ),
    ),
    "namespaced watch, request without name, request with namespace, without field selector": (
        "/pods/t5-ns1/",
        True,
        "",
        _ns_steps(
            "t5",
            ("foo1", "ns1", "", False, ADDED),
            ("foo1", "ns2", "", False, None),
            ("foo2", "ns1", "", False, ADDED),
            ("foo1", "ns1", "", True, MODIFIED),
            ("foo1", "ns2", "", True, None),
        ),
    ),
    "namespaced watch, request without name, request with namespace, field selector with "
    "matched metadata.namespace": (
        "/pods/t6-ns1/",
        True,
        "metadata.namespace=t6-ns1",
        _ns_steps(
            "t6",
            ("foo1", "ns1", "", False, ADDED),
            ("foo1", "ns2", "", False, None),
            ("foo1", "ns1", "", True, MODIFIED),
        ),
    ),
    "namespaced watch, request without name, request with namespace, field selector with "
    "non-matched metadata.namespace": (
        "/pods/t7-ns1/",
        True,
        "metadata.namespace=t7-ns2",
        _ns_steps(
            "t7",
            ("foo1", "ns1", "", False, None),
            ("foo1", "ns2", "", False, None),
            ("foo1", "ns1", "", True, None),
            ("foo1", "ns2", "", True, None),
        ),
    ),
    "namespaced watch, request without name, request with namespace, field selector with "
    "spec.nodename": (
        "/pods/t8-ns1/",
        True,
        "spec.nodeName=t8-bar2",
        _ns_steps(
            "t8",
            ("foo1", "ns1", "", False, None),
            ("foo1", "ns1", "bar1", False, None),
            ("foo1", "ns2", "bar2", False, None),
            ("foo1", "ns1", "bar2", False, ADDED),
        ),
    ),
    "namespaced watch, request without name, request with namespace, field selector with "
    "spec.nodename to filter out watch": (
        "/pods/t9-ns2/",
        True,
        "spec.nodeName!=t9-bar1",
        _ns_steps(
            "t9",
            ("foo1", "ns1", "", False, None),
            ("foo1", "ns2", "", False, ADDED),
            ("foo1", "ns2", "bar1", False, DELETED),
            ("foo1", "ns2", "bar2", False, ADDED),
        ),
    ),
    "namespaced watch, request with name, request without namespace, field selector with "
    "metadata.name": (
        "/pods/",
        True,
        "metadata.name=t10-foo1",
        _ns_steps(
            "t10",
            ("foo1", "ns1", "", False, ADDED),
            ("foo1", "ns2", "", False, ADDED),
            ("foo2", "ns1", "", False, None),
            ("foo1", "ns1", "", True, MODIFIED),
            ("foo1", "ns1", "bar1", False, MODIFIED),
        ),
    ),
    "namespaced watch, request with name, request without namespace, field selector with "
    "metadata.name and metadata.namespace": (
        "/pods/",
        True,
        "metadata.name=t11-foo1,metadata.namespace=t11-ns1",
        _ns_steps(
            "t11",
            ("foo1", "ns1", "", False, ADDED),
            ("foo2", "ns1", "", False, None),
            ("foo1", "ns2", "", False, None),
            ("foo1", "ns1", "", True, MODIFIED),
            ("foo1", "ns1", "bar1", False, MODIFIED),
        ),
    ),
    "namespaced watch, request with name, request without namespace, field selector with "
    "metadata.name and spec.nodeName": (
        "/pods/",
        True,
        "metadata.name=t12-foo1,spec.nodeName=t12-bar1",
        _ns_steps(
            "t12",
            ("foo1", "ns1", "", False, None),
            ("foo1", "ns1", "", True, None),
            ("foo1", "ns1", "bar1", False, ADDED),
        ),
    ),
    "namespaced watch, request with name, request without namespace, field selector with "
    "metadata.name, and with spec.nodeName to filter out watch": (
        "/pods/",
        True,
        "spec.nodeName!=t15-bar1,metadata.name=t15-foo1",
        _ns_steps(
            "t15",
            ("foo1", "ns1", "", False, ADDED),
            ("foo2", "ns1", "", False, None),
            ("foo1", "ns1", "", True, MODIFIED),
            ("foo1", "ns1", "bar1", False, DELETED),
            ("foo1", "ns1", "bar2", False, ADDED),
        ),
    ),
    "namespaced watch, request with name, request with namespace, with field selector "
    "metadata.name": (
        "/pods/t16-ns1/t16-foo1",
        False,
        "metadata.name=t16-foo1",
        _ns_steps(
            "t16",
            ("foo1", "ns1", "", False, ADDED),
            ("foo2", "ns1", "", False, None),
            ("foo1", "ns1", "", True, MODIFIED),
            ("foo1", "ns1", "bar1", False, MODIFIED),
        ),
    ),
    "namespaced watch, request with name, request with namespace, with field selector "
    "metadata.name and metadata.namespace": (
        "/pods/t17-ns1/t17-foo2",
        False,
        "metadata.name=t17-foo2,metadata.namespace=t17-ns1",
        _ns_steps(
            "t17",
            ("foo1", "ns1", "", False, None),
            ("foo2", "ns1", "", False, ADDED),
            ("foo1", "ns1", "", True, None),
            ("foo2", "ns1", "bar1", False, MODIFIED),
        ),
    ),
    "namespaced watch, request with name, request with namespace, with field selector "
    "metadata.name, metadata.namespace and spec.nodename": (
        "/pods/t18-ns1/t18-foo1",
        False,
        "metadata.name=t18-foo1,metadata.namespace=t18-ns1,spec.nodeName=t18-bar1",
        _ns_steps(
            "t18",
            ("foo1", "ns1", "", False, None),
            ("foo2", "ns1", "", False, None),
            ("foo1", "ns2", "", False, None),
            ("foo1", "ns1", "", True, None),
            ("foo1", "ns1", "bar1", False, ADDED),
        ),
    ),
    "namespaced watch, request with name, request with namespace, with field selector "
    "metadata.name, metadata.namespace, and with spec.nodename to filter out watch": (
        "/pods/t19-ns1/t19-foo2",
        False,
        "spec.nodeName!=t19-bar1,metadata.name=t19-foo2,metadata.namespace=t19-ns1",
        _ns_steps(
            "t19",
            ("foo1", "ns1", "", False, None),
            ("foo2", "ns2", "", False, None),
            ("foo2", "ns1", "", False, ADDED),
            ("foo2", "ns1", "", True, MODIFIED),
            ("foo2", "ns1", "bar1", False, DELETED),
        ),
    ),
}


class TestNamespaceScopedWatch:
    @pytest.mark.parametrize("case", list(_NAMESPACE_WATCH_CASES))
    def test_watch(self, conformance_env: ConformanceEnv, case: str) -> None:
        key, recursive, selector, steps = _NAMESPACE_WATCH_CASES[case]
        run_watch_steps(conformance_env.pods(), key, recursive, selector, steps)
