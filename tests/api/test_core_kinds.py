"""The core/v1 kinds: registration, v1 defaults, field-selector fields, Scheme validation."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kstore.api.gvk import GroupVersion, GroupVersionKind
from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.core import image_pull_policy_default
from kstore.codec.json import JsonSerializer
from kstore.codec.strict import FieldValidation
from kstore.codec.versioning import VersioningCodec, decode_request
from kstore.codec.yaml import YamlSerializer
from kstore.errors import Invalid, to_status
from tests.fixtures_path import fixture_files, k8s_testdata

CORE_KINDS = (
    "Namespace",
    "ConfigMap",
    "Secret",
    "Event",
    "Pod",
    "Service",
    "ServiceAccount",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "PodTemplate",
    "ReplicationController",
    "Endpoints",
    "LimitRange",
    "ResourceQuota",
    "Node",
)


def _defaulted(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    builtin_scheme().default(out)
    return out


# ---------------------------------------------------------------------------- registration


@pytest.mark.parametrize(
    ("plural", "kind", "namespaced", "short_names"),
    [
        ("namespaces", "Namespace", False, ("ns",)),
        ("configmaps", "ConfigMap", True, ("cm",)),
        ("secrets", "Secret", True, ()),
        ("events", "Event", True, ("ev",)),
        ("pods", "Pod", True, ("po",)),
        ("services", "Service", True, ("svc",)),
        ("serviceaccounts", "ServiceAccount", True, ("sa",)),
        ("persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",)),
        ("podtemplates", "PodTemplate", True, ()),
        ("replicationcontrollers", "ReplicationController", True, ("rc",)),
        ("endpoints", "Endpoints", True, ("ep",)),
        ("limitranges", "LimitRange", True, ("limits",)),
        ("resourcequotas", "ResourceQuota", True, ("quota",)),
        ("nodes", "Node", False, ("no",)),
    ],
)
def test_core_resources_are_served_at_v1(
    plural: str, kind: str, namespaced: bool, short_names: tuple[str, ...]
) -> None:
    resource = builtin_scheme().resource(GroupVersion("", "v1"), plural)
    assert resource.definition.kind == kind
    assert resource.info.namespaced is namespaced
    assert resource.info.short_names == short_names
    assert resource.definition.storage_version == "v1"
    assert resource.definition.list_kind == f"{kind}List"


def test_core_kinds_are_every_kind_served_in_the_core_group() -> None:
    served = {r.gvk.kind for r in builtin_scheme().resources() if r.gvk.group == ""}
    assert served == set(CORE_KINDS)


@pytest.mark.parametrize("kind", CORE_KINDS)
def test_core_kinds_convert_by_rewriting_api_version_only(kind: str) -> None:
    scheme = builtin_scheme()
    obj = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x"}, "extra": {"a": 1}}
    hub = scheme.to_hub(obj)
    assert hub["apiVersion"] == "__internal"
    assert scheme.from_hub(hub, "v1") == obj
    assert scheme.kind_version(GroupVersionKind("", "v1", kind)).to_hub is None


@pytest.mark.parametrize("kind", CORE_KINDS)
def test_core_list_kinds_default_and_convert_item_by_item(kind: str) -> None:
    scheme = builtin_scheme()
    items: list[dict[str, Any]] = [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]
    listing = {"apiVersion": "v1", "kind": f"{kind}List", "metadata": {}, "items": items}
    defaulted = _defaulted(listing)
    for item in defaulted["items"]:
        single = _defaulted({"apiVersion": "v1", "kind": kind, **item})
        assert {"apiVersion": "v1", "kind": kind, **item} == single
    hub = scheme.to_hub(defaulted)
    assert hub["apiVersion"] == "__internal"
    assert scheme.from_hub(hub, "v1") == defaulted


# ---------------------------------------------------------------------------- defaults


def test_pod_defaults_match_kubernetes_v1() -> None:
    pod = _defaulted(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "nginx",
                        "ports": [{"containerPort": 80}],
                        "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}},
                        "livenessProbe": {"httpGet": {"port": 80}, "periodSeconds": 5},
                        "readinessProbe": {"grpc": {"port": 9000}},
                        "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/stop"}}},
                        "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}],
                    }
                ],
                "initContainers": [{"name": "init", "image": "busybox@sha256:" + "a" * 64}],
                "volumes": [
                    {"name": "empty"},
                    {"name": "host", "hostPath": {"path": "/tmp"}},
                    {"name": "sec", "secret": {"secretName": "s", "defaultMode": 256}},
                    {
                        "name": "proj",
                        "projected": {
                            "sources": [
                                {"serviceAccountToken": {"path": "token"}},
                                {"downwardAPI": {"items": [{"path": "n", "fieldRef": {}}]}},
                            ]
                        },
                    },
                ],
            },
        }
    )
    spec = pod["spec"]
    assert {k: spec[k] for k in (
        "restartPolicy", "dnsPolicy", "terminationGracePeriodSeconds", "schedulerName",
        "securityContext", "enableServiceLinks",
    )} == {
        "restartPolicy": "Always",
        "dnsPolicy": "ClusterFirst",
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "enableServiceLinks": True,
    }  # fmt: skip
    app = spec["containers"][0]
    assert app["imagePullPolicy"] == "Always"  # no tag means :latest
    assert app["terminationMessagePath"] == "/dev/termination-log"
    assert app["terminationMessagePolicy"] == "File"
    assert app["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    # Requests default to limits, key by key, on Pods.
    assert app["resources"]["requests"] == {"memory": "1Gi", "cpu": "1"}
    assert app["livenessProbe"] == {
        "httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
        "periodSeconds": 5,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert app["readinessProbe"]["grpc"] == {"port": 9000, "service": ""}
    assert app["lifecycle"]["preStop"]["httpGet"] == {"port": 80, "path": "/stop", "scheme": "HTTP"}
    assert app["env"][0]["valueFrom"]["fieldRef"] == {"fieldPath": "x", "apiVersion": "v1"}
    assert spec["initContainers"][0]["imagePullPolicy"] == "IfNotPresent"  # digest only
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["empty"] == {"name": "empty", "emptyDir": {}}
    assert volumes["host"]["hostPath"] == {"path": "/tmp", "type": ""}
    assert volumes["sec"]["secret"]["defaultMode"] == 256  # an explicit mode is kept
    projected = volumes["proj"]["projected"]
    assert projected["defaultMode"] == 420
    assert projected["sources"][0]["serviceAccountToken"]["expirationSeconds"] == 3600
    assert projected["sources"][1]["downwardAPI"]["items"][0]["fieldRef"] == {"apiVersion": "v1"}


def test_pod_defaults_are_idempotent() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"hostNetwork": True, "containers": [{"name": "a", "image": "a:1",
                 "ports": [{"containerPort": 53}]}]},
    }  # fmt: skip
    once = _defaulted(pod)
    assert once["spec"]["containers"][0]["ports"][0]["hostPort"] == 53
    assert _defaulted(once) == once


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("docker.io/library/nginx:latest", "Always"),
        ("localhost:5000/team/app", "Always"),
        ("nginx:1.25", "IfNotPresent"),
        ("registry.example.com:5000/team/app:v2", "IfNotPresent"),
        ("nginx@sha256:" + "0" * 64, "IfNotPresent"),
        ("nginx:latest@sha256:" + "0" * 64, "Always"),
        ("Nginx", "IfNotPresent"),  # does not parse: no tag is found
        ("", "IfNotPresent"),
        ("a" * 64, "IfNotPresent"),  # a bare 64-hex id is refused
    ],
)
def test_image_pull_policy_depends_on_the_tag(image: str, policy: str) -> None:
    assert image_pull_policy_default(image) == policy


def test_service_defaults_match_kubernetes_v1() -> None:
    svc = _defaulted(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "s"},
            "spec": {
                "ports": [{"port": 80}, {"port": 443, "targetPort": "https"}],
                "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 5}},
            },
        }
    )
    assert svc["spec"] == {
        "ports": [
            {"port": 80, "protocol": "TCP", "targetPort": 80},
            {"port": 443, "targetPort": "https", "protocol": "TCP"},
        ],
        "sessionAffinity": "None",
        "type": "ClusterIP",
        "internalTrafficPolicy": "Cluster",
    }
    lb = _defaulted(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "s"},
            "spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP"},
            "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}, {"hostname": "h"}]}},
        }
    )
    assert lb["spec"]["externalTrafficPolicy"] == "Cluster"
    assert lb["spec"]["allocateLoadBalancerNodePorts"] is True
    assert lb["spec"]["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}
    assert lb["status"]["loadBalancer"]["ingress"] == [
        {"ip": "1.2.3.4", "ipMode": "VIP"},
        {"hostname": "h"},
    ]
    external_name = _defaulted(
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
         "spec": {"type": "ExternalName", "externalName": "db.example.com"}}
    )  # fmt: skip
    assert "internalTrafficPolicy" not in external_name["spec"]
    assert "externalTrafficPolicy" not in external_name["spec"]


def test_namespace_secret_configmap_event_defaults() -> None:
    ns = _defaulted({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-a"}
    assert ns["status"] == {"phase": "Active"}
    # No name yet (generateName): no label.
    unnamed = _defaulted({"apiVersion": "v1", "kind": "Namespace", "metadata": {}})
    assert "labels" not in unnamed["metadata"]
    secret = _defaulted({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
    assert secret["type"] == "Opaque"
    typed = _defaulted(
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "x.io/y"}
    )
    assert typed["type"] == "x.io/y"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    assert _defaulted(cm) == cm  # data = {} is invisible in JSON, so nothing is added
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}}
    assert _defaulted(event) == event


# ---------------------------------------------------------------------------- field selectors


def _fields(kind: str, obj: dict[str, Any]) -> dict[str, str]:
    labels = builtin_scheme().definition("", kind).field_labels
    assert labels is not None
    return dict(labels(obj))


def test_pod_field_selector_fields() -> None:
    pod = {
        "spec": {
            "nodeName": "n1",
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "serviceAccountName": "builder",
            "hostNetwork": True,
        },
        "status": {"phase": "Running", "podIPs": [{"ip": "10.1.0.4"}], "podIP": "10.1.0.4"},
    }
    assert _fields("Pod", pod) == {
        "spec.nodeName": "n1",
        "spec.restartPolicy": "Always",
        "spec.schedulerName": "default-scheduler",
        "spec.serviceAccountName": "builder",
        "spec.hostNetwork": "true",
        "status.phase": "Running",
        "status.podIP": "10.1.0.4",
        "status.nominatedNodeName": "",
    }
    assert _fields("Pod", {"status": {"podIP": "10.1.0.9"}})["status.podIP"] == "10.1.0.9"
    assert _fields("Pod", {})["spec.hostNetwork"] == "false"


def test_other_field_selector_fields() -> None:
    assert _fields("Namespace", {"metadata": {"name": "a"}, "status": {"phase": "Active"}}) == {
        "status.phase": "Active",
        "name": "a",
    }
    assert _fields("Secret", {"type": "Opaque"}) == {"type": "Opaque"}
    assert _fields("Service", {"spec": {"type": "NodePort", "clusterIP": "10.0.0.1"}}) == {
        "spec.clusterIP": "10.0.0.1",
        "spec.type": "NodePort",
    }
    event = {
        "involvedObject": {"kind": "Pod", "namespace": "d", "name": "p", "uid": "u",
                           "apiVersion": "v1", "resourceVersion": "9", "fieldPath": "spec"},
        "reason": "Started",
        "type": "Normal",
        "reportingComponent": "kubelet",
    }  # fmt: skip
    assert _fields("Event", event) == {
        "involvedObject.kind": "Pod",
        "involvedObject.namespace": "d",
        "involvedObject.name": "p",
        "involvedObject.uid": "u",
        "involvedObject.apiVersion": "v1",
        "involvedObject.resourceVersion": "9",
        "involvedObject.fieldPath": "spec",
        "reason": "Started",
        "reportingComponent": "kubelet",
        "source": "kubelet",  # source.component, else the reporting controller
        "type": "Normal",
    }
    assert builtin_scheme().definition("", "ConfigMap").field_labels is None


# ---------------------------------------------------------------------------- Scheme validation


def test_scheme_validation_raises_invalid_with_every_cause() -> None:
    scheme = builtin_scheme()
    pod = _defaulted(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "x", "namespace": "default"},
            "spec": {"containers": [{"name": "a"}, {"name": "a", "image": "nginx"}]},
        }
    )
    with pytest.raises(Invalid) as info:
        scheme.validate(scheme.to_hub(pod))
    assert info.value.message == (
        'Pod "x" is invalid: [spec.containers[0].image: Required value, '
        'spec.containers[1].name: Duplicate value: "a"]'
    )
    status = to_status(info.value)
    assert status["code"] == 422
    assert status["details"]["kind"] == "Pod"
    assert [c["field"] for c in status["details"]["causes"]] == [
        "spec.containers[0].image",
        "spec.containers[1].name",
    ]


def test_scheme_validates_updates_with_the_update_rules() -> None:
    scheme = builtin_scheme()
    old = scheme.to_hub(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "d", "resourceVersion": "1"},
            "data": {"k": "v"},
            "immutable": True,
        }
    )
    new = copy.deepcopy(old)
    new["data"] = {"k": "changed"}
    with pytest.raises(Invalid) as info:
        scheme.validate_update(new, old)
    assert info.value.message == (
        'ConfigMap "c" is invalid: data: Forbidden: field is immutable when `immutable` is set'
    )


# ---------------------------------------------------------------------------- fixtures


def _core_fixtures() -> list[Path]:
    k8s_testdata()
    return [
        p
        for p in fixture_files(".json")
        if p.parent.name == "HEAD" and p.name.startswith("core.v1.")
    ]


@pytest.mark.fixtures
def test_kubernetes_fixtures_decode_although_they_are_not_valid_objects() -> None:
    """Decoding never validates: the fixtures' nameValue-style values go through every decode
    path (storage codec with defaults, request decoding in each field-validation mode)."""
    scheme = builtin_scheme()
    fixtures = _core_fixtures()
    found = {p.name.split(".")[2] for p in fixtures}
    assert found == set(CORE_KINDS)
    for path in fixtures:
        data = path.read_bytes()
        kind = json.loads(data)["kind"]
        hub = VersioningCodec(scheme, JsonSerializer()).decode(data)
        assert hub["kind"] == kind
        for mode in FieldValidation:
            decoded = decode_request(scheme, data, JsonSerializer(), field_validation=mode)
            assert decoded.gvk == GroupVersionKind("", "v1", kind)
        yaml_data = path.with_suffix(".yaml").read_bytes()
        assert decode_request(scheme, yaml_data, YamlSerializer()).hub["kind"] == kind
        # Validation is opt-in, and these objects are indeed not valid.
        with pytest.raises(Invalid):
            scheme.validate(hub)
