"""Pod validation on defaulted pods: Kubernetes' rules, paths and messages."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kstore.api.kinds.core import default_pod, default_pod_spec
from kstore.api.validation import Path
from kstore.api.validation.core import validate_pod, validate_pod_template_spec, validate_pod_update
from kstore.errors import Cause
from tests.api.test_validation_names import DNS_LABEL, DNS_SUBDOMAIN, LABEL_VALUE, NAME_PART

PROTOCOLS = '"SCTP", "TCP", "UDP"'


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


def _pod(edit: Callable[[dict[str, Any]], None] | None = None, *, default: bool = True) -> dict:
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0",
            "namespace": "default",
            "labels": {"app": "web"},
            "resourceVersion": "7",
        },
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "image": "registry.example.com/web:1.4",
                    "ports": [{"name": "http", "containerPort": 8080}],
                    "env": [{"name": "MODE", "value": "prod"}],
                    "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
                    "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}},
                },
                {"name": "sidecar", "image": "busybox"},
            ],
            "initContainers": [{"name": "init", "image": "busybox:1.36", "command": ["true"]}],
            "volumes": [{"name": "cache"}, {"name": "cfg", "configMap": {"name": "web"}}],
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web"}],
        },
    }
    if edit is not None:
        edit(pod)
    if default:
        default_pod(pod)
    return pod


def _spec(pod: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = pod["spec"]
    return spec


def test_a_realistic_defaulted_pod_is_valid() -> None:
    assert validate_pod(_pod()) == []


def test_an_undefaulted_pod_is_reported_as_kubernetes_would_report_it() -> None:
    pod = _pod(default=False)
    assert _rendered(validate_pod(pod)) == [
        "spec.terminationGracePeriodSeconds: Required value",
        "spec.volumes[0]: Required value: must specify a volume type",
        "spec.containers[0].terminationMessagePolicy: Required value",
        "spec.containers[0].ports[0].protocol: Required value",
        "spec.containers[0].imagePullPolicy: Required value",
        "spec.containers[1].terminationMessagePolicy: Required value",
        "spec.containers[1].imagePullPolicy: Required value",
        "spec.initContainers[0].terminationMessagePolicy: Required value",
        "spec.initContainers[0].imagePullPolicy: Required value",
        "spec.restartPolicy: Required value",
        "spec.dnsPolicy: Required value",
    ]


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """An edit that sets a dotted path (list indexes as numbers) before defaulting."""

    def edit(pod: dict[str, Any]) -> None:
        keys = path.split(".")
        node: Any = pod
        for key in keys[:-1]:
            node = node[int(key)] if key.isdigit() else node[key]
        last = keys[-1]
        if value is _DELETE:
            del node[int(last) if last.isdigit() else last]
        elif last.isdigit():
            node[int(last)] = value
        else:
            node[last] = value

    return edit


_DELETE = object()


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (_set("spec.containers", []), ["spec.containers: Required value"]),
        (
            _set("spec.containers.1.name", "web"),
            ['spec.containers[1].name: Duplicate value: "web"'],
        ),
        (
            _set("spec.containers.1.name", "Side_Car"),
            [f'spec.containers[1].name: Invalid value: "Side_Car": {DNS_LABEL}'],
        ),
        (_set("spec.containers.1.name", ""), ["spec.containers[1].name: Required value"]),
        (_set("spec.containers.1.image", ""), ["spec.containers[1].image: Required value"]),
        (
            _set("spec.containers.1.image", " busybox"),
            [
                'spec.containers[1].image: Invalid value: " busybox": must not have leading or '
                "trailing whitespace"
            ],
        ),
        (
            _set("spec.initContainers.0.name", "web"),
            ['spec.initContainers[0].name: Duplicate value: "web"'],
        ),
        (
            _set("spec.containers.0.ports.0.containerPort", 70000),
            [
                "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be "
                "between 1 and 65535, inclusive"
            ],
        ),
        (
            _set("spec.containers.0.ports.0.containerPort", 0),
            ["spec.containers[0].ports[0].containerPort: Required value"],
        ),
        (
            _set("spec.containers.0.ports.0.protocol", "HTTP"),
            [
                'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported '
                f"values: {PROTOCOLS}"
            ],
        ),
        (
            _set("spec.containers.0.ports.0.name", "HTTP-Port-Name-Long"),
            [
                'spec.containers[0].ports[0].name: Invalid value: "HTTP-Port-Name-Long": must be '
                "no more than 15 characters",
                'spec.containers[0].ports[0].name: Invalid value: "HTTP-Port-Name-Long": must '
                "contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
            ],
        ),
        (
            _set("spec.containers.0.ports", [{"containerPort": 80}, {"containerPort": 80,
                 "hostPort": 80}, {"containerPort": 81, "hostPort": 80}]),
            ['spec.containers[0].ports[2].hostPort: Duplicate value: "TCP//80"'],
        ),
        (
            _set("spec.containers.0.imagePullPolicy", "Sometimes"),
            [
                'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported '
                'values: "Always", "IfNotPresent", "Never"'
            ],
        ),
        (
            _set("spec.containers.0.terminationMessagePolicy", "Log"),
            [
                'spec.containers[0].terminationMessagePolicy: Unsupported value: "Log": '
                'supported values: "File", "FallbackToLogsOnError"'
            ],
        ),
        (
            _set("spec.containers.0.env.0.name", "A=B"),
            [
                'spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment '
                "variable name must consist only of printable ASCII characters other than '='"
            ],
        ),
        (
            _set("spec.containers.0.envFrom", [{"prefix": "P_"}]),
            [
                'spec.containers[0].envFrom: Invalid value: "": must specify one of: '
                "`configMapRef` or `secretRef`"
            ],
        ),
        (
            _set("spec.containers.0.restartPolicy", "Always"),
            [
                "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init "
                "containers"
            ],
        ),
        (
            _set("spec.initContainers.0.readinessProbe", {"exec": {"command": ["true"]}}),
            [
                "spec.initContainers[0].readinessProbe: Forbidden: may not be set for init "
                "containers without restartPolicy=Always"
            ],
        ),
        (_set("spec.initContainers.0.restartPolicy", "Always"), []),
        (
            _set("spec.initContainers.0.restartPolicy", "Never"),
            [
                'spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported '
                'values: "Always"'
            ],
        ),
        (
            _set("spec.containers.0.securityContext", {"runAsUser": -1}),
            [
                "spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be "
                "between 0 and 2147483647, inclusive"
            ],
        ),
        (
            _set("spec.restartPolicy", "Sometimes"),
            [
                'spec.restartPolicy: Unsupported value: "Sometimes": supported values: '
                '"Always", "OnFailure", "Never"'
            ],
        ),
        (
            _set("spec.dnsPolicy", "Google"),
            [
                'spec.dnsPolicy: Unsupported value: "Google": supported values: '
                '"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"'
            ],
        ),
        (
            _set("spec.dnsPolicy", "None"),
            [
                "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is "
                "None"
            ],
        ),
        (
            _set("spec.nodeSelector", {"disk": "fast ssd"}),
            [f'spec.nodeSelector: Invalid value: "fast ssd": {LABEL_VALUE}'],
        ),
        (
            _set("spec.volumes.1.secret", {"secretName": "s"}),
            # Kubernetes counts secret before configMap, so configMap is the extra one.
            ["spec.volumes[1].configMap: Forbidden: may not specify more than 1 volume type"],
        ),
        (
            _set("spec.volumes.1.name", "cache"),
            ['spec.volumes[1].name: Duplicate value: "cache"'],
        ),
        (
            _set("spec.volumes.1.name", "Cfg"),
            [f'spec.volumes[1].name: Invalid value: "Cfg": {DNS_LABEL}'],
        ),
        (
            _set("spec.serviceAccountName", "Builder"),
            [f'spec.serviceAccountName: Invalid value: "Builder": {DNS_SUBDOMAIN}'],
        ),
        (
            _set("spec.hostname", "web.0"),
            ['spec.hostname: Invalid value: "web.0": must not contain dots'],
        ),
        (
            _set("spec.activeDeadlineSeconds", 0),
            [
                "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and "
                "2147483647, inclusive"
            ],
        ),
        (
            _set("spec.tolerations", [{"operator": "Equal", "value": "x", "effect": "Evict"}]),
            [
                'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists '
                'when `key` is empty, which means "match all values and all keys"',
                'spec.tolerations[0].effect: Unsupported value: "Evict": supported values: '
                '"NoSchedule", "PreferNoSchedule", "NoExecute"',
            ],
        ),
        (
            _set("spec.tolerations", [{"key": "k", "operator": "Exists", "value": "v",
                 "tolerationSeconds": 5}]),
            [
                'spec.tolerations[0].effect: Invalid value: "": effect must be \'NoExecute\' '
                "when `tolerationSeconds` is set",
                'spec.tolerations[0].operator: Invalid value: "v": value must be empty when '
                "`operator` is 'Exists'",
            ],
        ),
        (
            _set("spec.schedulingGates", [{"name": "example.com/gate"}, {"name":
                 "example.com/gate"}]),
            ['spec.schedulingGates[1]: Duplicate value: "example.com/gate"'],
        ),
        (
            _set("spec.readinessGates", [{"conditionType": "-x"}]),
            [f'spec.readinessGates[0].conditionType: Invalid value: "-x": {NAME_PART}'],
        ),
        (
            _set("spec.preemptionPolicy", "Always"),
            [
                'spec.preemptionPolicy: Unsupported value: "Always": supported values: '
                '"PreemptLowerPriority", "Never"'
            ],
        ),
        (
            _set("spec.volumes.1", {"name": "tok", "projected": {"sources": [
                 {"serviceAccountToken": {"path": "t"}}]}}),
            [
                "spec.volumes[1].projected.sources[0].serviceAccountToken: Forbidden: must not "
                "be specified when serviceAccountName is not set"
            ],
        ),
        (
            _set("spec.ephemeralContainers", [{"name": "debug", "image": "busybox"}]),
            ["spec.ephemeralContainers: Forbidden: cannot be set on create"],
        ),
        (
            _set("metadata.annotations", {"controller.kubernetes.io/pod-deletion-cost": "007"}),
            [
                "metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid "
                'value: "007": must be a 32bit integer'
            ],
        ),
        (
            _set("metadata.annotations", {"kubernetes.io/config.mirror": "hash"}),
            [
                'metadata.annotations[kubernetes.io/config.mirror]: Invalid value: "hash": must '
                "set spec.nodeName if mirror pod annotation is set"
            ],
        ),
    ],
)  # fmt: skip
def test_pod_rules(edit: Callable[[dict[str, Any]], None], expected: list[str]) -> None:
    assert _rendered(validate_pod(_pod(edit))) == expected


def test_host_network_pods_use_their_container_ports_on_the_host() -> None:
    pod = _pod(_set("spec.hostNetwork", True))
    assert _spec(pod)["containers"][0]["ports"][0]["hostPort"] == 8080
    assert validate_pod(pod) == []
    _spec(pod)["containers"][0]["ports"][0]["hostPort"] = 9090
    assert _rendered(validate_pod(pod)) == [
        "spec.containers[0].ports[0].hostPort: Invalid value: 9090: must match "
        "`containerPort` when `hostNetwork` is true"
    ]


def test_pod_names_are_dns_subdomains() -> None:
    pod = _pod(_set("metadata.name", "Web_0"))
    causes = validate_pod(pod)
    assert _rendered(causes) == [f'metadata.name: Invalid value: "Web_0": {DNS_SUBDOMAIN}']
    assert causes[0].type == "FieldValueInvalid"


def test_a_multi_cause_pod_is_reported_in_kubernetes_order() -> None:
    def edit(pod: dict[str, Any]) -> None:
        pod["metadata"].pop("namespace")
        pod["spec"]["containers"][0]["image"] = ""
        pod["spec"]["containers"][1]["name"] = "web"

    assert _rendered(validate_pod(_pod(edit))) == [
        "metadata.namespace: Required value",
        "spec.containers[0].image: Required value",
        'spec.containers[1].name: Duplicate value: "web"',
    ]


# ---------------------------------------------------------------------------- update


def test_pod_updates() -> None:
    old = _pod()
    assert validate_pod_update(copy.deepcopy(old), old) == []
    new_image = copy.deepcopy(old)
    _spec(new_image)["containers"][0]["image"] = "registry.example.com/web:1.5"
    assert validate_pod_update(new_image, old) == []

    fewer = copy.deepcopy(old)
    _spec(fewer)["containers"].pop()
    assert _rendered(validate_pod_update(fewer, old)) == [
        "spec.containers: Forbidden: pod updates may not add or remove containers"
    ]

    deadline_old = _pod(_set("spec.activeDeadlineSeconds", 60))
    longer = copy.deepcopy(deadline_old)
    _spec(longer)["activeDeadlineSeconds"] = 120
    assert _rendered(validate_pod_update(longer, deadline_old)) == [
        "spec.activeDeadlineSeconds: Invalid value: 120: must be less than or equal to previous "
        "value"
    ]
    unset = copy.deepcopy(deadline_old)
    del _spec(unset)["activeDeadlineSeconds"]
    assert _rendered(validate_pod_update(unset, deadline_old)) == [
        "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive "
        "integer to nil value"
    ]


def test_tolerations_may_only_be_added_and_gates_only_removed() -> None:
    old = _pod(_set("spec.schedulingGates", [{"name": "example.com/a"}]))
    added = copy.deepcopy(old)
    _spec(added)["tolerations"].append({"key": "k", "operator": "Exists", "effect": "NoExecute",
                                        "tolerationSeconds": 30})  # fmt: skip
    assert validate_pod_update(added, old) == []
    changed = copy.deepcopy(old)
    _spec(changed)["tolerations"][0]["value"] = "api"
    assert _rendered(validate_pod_update(changed, old)) == [
        "spec.tolerations: Forbidden: existing toleration can not be modified except its "
        "tolerationSeconds"
    ]
    gated = copy.deepcopy(old)
    _spec(gated)["schedulingGates"] = [{"name": "example.com/a"}, {"name": "example.com/b"}]
    assert _rendered(validate_pod_update(gated, old)) == [
        "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new "
        "scheduling gate 'example.com/b'"
    ]
    ungated = copy.deepcopy(old)
    del _spec(ungated)["schedulingGates"]
    assert validate_pod_update(ungated, old) == []


def test_mirror_pod_annotations_cannot_be_added_or_removed() -> None:
    old = _pod()
    new = copy.deepcopy(old)
    new["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "h"}
    _spec(new)["nodeName"] = "node-1"
    assert _rendered(validate_pod_update(new, old)) == [
        "metadata.annotations[kubernetes.io/config.mirror]: Forbidden: may not add mirror pod "
        "annotation"
    ]
    assert _rendered(validate_pod_update(old, new))[0:1] == [
        "metadata.annotations[kubernetes.io/config.mirror]: Forbidden: may not remove or update "
        "mirror pod annotation"
    ]


def test_an_invalid_deletion_cost_already_stored_is_tolerated_on_update() -> None:
    bad = _set("metadata.annotations", {"controller.kubernetes.io/pod-deletion-cost": "+1"})
    old = _pod(bad)
    assert validate_pod_update(copy.deepcopy(old), old) == []


# ---------------------------------------------------------------------------- templates


def test_pod_template_paths_skip_metadata() -> None:
    template: dict[str, Any] = {
        "metadata": {"labels": {"app": "-"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    default_pod_spec(template["spec"])
    assert _rendered(validate_pod_template_spec(template, Path("spec", "template"))) == [
        f'spec.template.labels: Invalid value: "-": {LABEL_VALUE}'
    ]
    template["spec"]["ephemeralContainers"] = [{"name": "d", "image": "busybox"}]
    default_pod_spec(template["spec"])
    assert _rendered(validate_pod_template_spec(template, Path("spec", "template")))[1:] == [
        "spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in "
        "pod template"
    ]
