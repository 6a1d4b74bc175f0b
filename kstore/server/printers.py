"""Table columns of the built-in kinds, as Kubernetes' server-side printers define them.

Each :class:`Printer` names its columns (name, type, format, priority: 0 columns are always
shown, 1 only with ``-o wide``) and computes one row's cells from an external object of its
kind. The cells follow ``pkg/printers/internalversion/printers.go``: ``NAME DATA AGE`` for
ConfigMaps, ``NAME READY STATUS RESTARTS AGE`` for Pods, ``NAME READY UP-TO-DATE AVAILABLE
AGE`` for Deployments, and so on. Objects are read defensively: a missing field prints as
Kubernetes prints its zero value (``<none>``, ``0``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kstore.api.gvk import Object
from kstore.api.kinds.horizontalpodautoscaler import hpa_to_hub
from kstore.server.durations import human_duration, parse_timestamp, translate_timestamp_since

__all__ = ["Column", "Printer", "printer_for"]


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str
    format: str
    description: str
    priority: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


Cells = Callable[[Object, datetime], list[Any]]


@dataclass(frozen=True, slots=True)
class Printer:
    columns: Sequence[Column]
    cells: Cells


def _m(obj: Any, key: str) -> Mapping[str, Any]:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _l(obj: Any, key: str) -> list[Any]:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, list) else []


def _name(obj: Object) -> str:
    return str(_m(obj, "metadata").get("name", ""))


def _age(obj: Object, now: datetime) -> str:
    return translate_timestamp_since(_m(obj, "metadata").get("creationTimestamp"), now)


def _or_none(value: object) -> str:
    return str(value) if value not in (None, "") else "<none>"


_NAME = Column("Name", "string", "name", "Name must be unique within a namespace.")
_AGE = Column(
    "Age", "string", "", "CreationTimestamp is the server time when this object was created."
)


# --------------------------------------------------------------------------- core/v1


def _configmap(obj: Object, now: datetime) -> list[Any]:
    return [_name(obj), len(_m(obj, "data")) + len(_m(obj, "binaryData")), _age(obj, now)]


def _secret(obj: Object, now: datetime) -> list[Any]:
    return [_name(obj), str(obj.get("type", "")), len(_m(obj, "data")), _age(obj, now)]


def _service_account(obj: Object, now: datetime) -> list[Any]:
    secrets = obj.get("secrets")
    return [_name(obj), len(secrets) if isinstance(secrets, list) else 0, _age(obj, now)]


def _namespace(obj: Object, now: datetime) -> list[Any]:
    return [_name(obj), str(_m(obj, "status").get("phase", "")), _age(obj, now)]


def _lease(obj: Object, now: datetime) -> list[Any]:
    holder = _m(obj, "spec").get("holderIdentity")
    return [_name(obj), holder if isinstance(holder, str) else "", _age(obj, now)]


def _pod_status(pod: Object) -> tuple[str, int, int, int]:
    """(status reason, ready containers, total containers, restarts) as ``printPod``."""
    spec, status, meta = _m(pod, "spec"), _m(pod, "status"), _m(pod, "metadata")
    total = len(_l(spec, "containers"))
    ready = 0
    restarts = 0
    reason = str(status.get("reason") or status.get("phase") or "")
    initializing = False
    init_specs = _l(spec, "initContainers")
    for i, c in enumerate(_l(status, "initContainerStatuses")):
        restarts += int(c.get("restartCount") or 0)
        state = _m(c, "state")
        terminated, waiting = _m(state, "terminated"), _m(state, "waiting")
        is_terminated = isinstance(state.get("terminated"), Mapping)
        if is_terminated and int(terminated.get("exitCode") or 0) == 0:
            continue
        if is_terminated:
            if terminated.get("reason"):
                reason = f"Init:{terminated['reason']}"
            elif terminated.get("signal"):
                reason = f"Init:Signal:{terminated['signal']}"
            else:
                reason = f"Init:ExitCode:{terminated.get('exitCode', 0)}"
        elif waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = f"Init:{waiting['reason']}"
        elif c.get("started") is True and _is_sidecar(init_specs, c.get("name")):
            continue
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break
    if not initializing:
        restarts = 0
        running = False
        for c in reversed(_l(status, "containerStatuses")):
            restarts += int(c.get("restartCount") or 0)
            state = _m(c, "state")
            terminated, waiting = _m(state, "terminated"), _m(state, "waiting")
            if waiting.get("reason"):
                reason = str(waiting["reason"])
            elif terminated.get("reason"):
                reason = str(terminated["reason"])
            elif isinstance(state.get("terminated"), Mapping):
                if terminated.get("signal"):
                    reason = f"Signal:{terminated['signal']}"
                else:
                    reason = f"ExitCode:{terminated.get('exitCode', 0)}"
            elif c.get("ready") is True and isinstance(state.get("running"), Mapping):
                running = True
                ready += 1
        if reason == "Completed" and running:
            reason = "Running"
    if meta.get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return reason, ready, total, restarts


def _is_sidecar(init_specs: list[Any], name: object) -> bool:
    for spec in init_specs:
        if isinstance(spec, Mapping) and spec.get("name") == name:
            return spec.get("restartPolicy") == "Always"
    return False


def _pod(obj: Object, now: datetime) -> list[Any]:
    reason, ready, total, restarts = _pod_status(obj)
    spec, status = _m(obj, "spec"), _m(obj, "status")
    gates = _l(spec, "readinessGates")
    if gates:
        conditions = {
            c.get("type"): c.get("status") for c in _l(status, "conditions") if isinstance(c, dict)
        }
        met = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
        gate_cell = f"{met}/{len(gates)}"
    else:
        gate_cell = "<none>"
    return [
        _name(obj),
        f"{ready}/{total}",
        reason,
        str(restarts),
        _age(obj, now),
        _or_none(status.get("podIP")),
        _or_none(spec.get("nodeName")),
        _or_none(status.get("nominatedNodeName")),
        gate_cell,
    ]


def _service_external_ip(spec: Mapping[str, Any], status: Mapping[str, Any]) -> str:
    kind = spec.get("type") or "ClusterIP"
    external = [str(ip) for ip in _l(spec, "externalIPs")]
    if kind == "ExternalName":
        return str(spec.get("externalName", ""))
    if kind == "LoadBalancer":
        ingress = [
            str(i.get("ip") or i.get("hostname") or "")
            for i in _l(_m(status, "loadBalancer"), "ingress")
            if isinstance(i, Mapping)
        ]
        found = [ip for ip in ingress + external if ip]
        return ",".join(found) if found else "<pending>"
    return ",".join(external) if external else "<none>"


def _service(obj: Object, now: datetime) -> list[Any]:
    spec, status = _m(obj, "spec"), _m(obj, "status")
    ports = []
    for p in _l(spec, "ports"):
        if not isinstance(p, Mapping):
            continue
        node = f":{p['nodePort']}" if p.get("nodePort") else ""
        ports.append(f"{p.get('port', '')}{node}/{p.get('protocol', 'TCP')}")
    selector = _m(spec, "selector")
    return [
        _name(obj),
        str(spec.get("type") or "ClusterIP"),
        _or_none(spec.get("clusterIP")),
        _service_external_ip(spec, status),
        ",".join(ports) if ports else "<none>",
        _age(obj, now),
        ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
    ]


def _event(obj: Object, now: datetime) -> list[Any]:
    involved = _m(obj, "involvedObject")
    source = _m(obj, "source")
    first = obj.get("firstTimestamp") or obj.get("eventTime")
    last = obj.get("lastTimestamp") or _m(obj, "series").get("lastObservedTime") or first
    count = obj.get("count") or _m(obj, "series").get("count") or 1
    source_text = str(source.get("component") or obj.get("reportingComponent") or "")
    if source.get("host"):
        source_text = f"{source_text}, {source['host']}"
    return [
        translate_timestamp_since(last, now),
        str(obj.get("type", "")),
        str(obj.get("reason", "")),
        f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}",
        str(involved.get("fieldPath", "")),
        source_text,
        str(obj.get("message", "")).strip(),
        translate_timestamp_since(first, now),
        int(count),
        _name(obj),
    ]


#: ``helper.GetAccessModesAsString``: each mode once, in this order.
_ACCESS_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def _persistent_volume_claim(obj: Object, now: datetime) -> list[Any]:
    spec, status, meta = _m(obj, "spec"), _m(obj, "status"), _m(obj, "metadata")
    phase = "Terminating" if meta.get("deletionTimestamp") else str(status.get("phase") or "")
    volume = str(spec.get("volumeName") or "")
    capacity = modes = ""
    if volume:
        bound = _l(status, "accessModes")
        modes = ",".join(short for mode, short in _ACCESS_MODES if mode in bound)
        capacity = str(_m(status, "capacity").get("storage") or "0")
    # helper.GetPersistentVolumeClaimClass: the beta annotation first.
    annotations = _m(meta, "annotations")
    storage_class = annotations.get("volume.beta.kubernetes.io/storage-class")
    if storage_class is None:
        storage_class = spec.get("storageClassName") or ""
    attributes_class = spec.get("volumeAttributesClassName")
    mode = spec.get("volumeMode")
    return [
        _name(obj),
        phase,
        volume,
        capacity,
        modes,
        str(storage_class),
        "<unset>" if attributes_class is None else str(attributes_class),
        _age(obj, now),
        "<unset>" if mode is None else str(mode),
    ]


def _persistent_volume(obj: Object, now: datetime) -> list[Any]:
    spec, status, meta = _m(obj, "spec"), _m(obj, "status"), _m(obj, "metadata")
    claim = ""
    ref = spec.get("claimRef")
    if isinstance(ref, Mapping):
        claim = f"{ref.get('namespace') or ''}/{ref.get('name') or ''}"
    modes = _l(spec, "accessModes")
    phase = "Terminating" if meta.get("deletionTimestamp") else str(status.get("phase") or "")
    # helper.GetPersistentVolumeClass: the beta annotation first.
    annotations = _m(meta, "annotations")
    storage_class = annotations.get("volume.beta.kubernetes.io/storage-class")
    if storage_class is None:
        storage_class = spec.get("storageClassName") or ""
    attributes_class = spec.get("volumeAttributesClassName")
    mode = spec.get("volumeMode")
    return [
        _name(obj),
        str(_m(spec, "capacity").get("storage") or "0"),
        ",".join(short for mode, short in _ACCESS_MODES if mode in modes),
        str(spec.get("persistentVolumeReclaimPolicy") or ""),
        phase,
        claim,
        str(storage_class),
        "<unset>" if attributes_class is None else str(attributes_class),
        str(status.get("reason") or ""),
        _age(obj, now),
        "<unset>" if mode is None else str(mode),
    ]


def _labels_text(labels: Mapping[str, Any]) -> str:
    """``labels.FormatLabels``: ``key=value`` pairs sorted by key, ``<none>`` when empty."""
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>"


def _pod_template(obj: Object, now: datetime) -> list[Any]:
    template = _m(obj, "template")
    containers = [c for c in _l(_m(template, "spec"), "containers") if isinstance(c, dict)]
    return [
        _name(obj),
        ",".join(str(c.get("name", "")) for c in containers),
        ",".join(str(c.get("image", "")) for c in containers),
        _labels_text(_m(_m(template, "metadata"), "labels")),
    ]


def _replication_controller(obj: Object, now: datetime) -> list[Any]:
    spec, status = _m(obj, "spec"), _m(obj, "status")
    containers = [
        c for c in _l(_m(_m(spec, "template"), "spec"), "containers") if isinstance(c, dict)
    ]
    return [
        _name(obj),
        int(spec.get("replicas", 1) or 0),
        int(status.get("replicas") or 0),
        int(status.get("readyReplicas") or 0),
        _age(obj, now),
        ",".join(str(c.get("name", "")) for c in containers),
        ",".join(str(c.get("image", "")) for c in containers),
        _labels_text(_m(spec, "selector")),
    ]


def _endpoints_text(obj: Object) -> str:
    """``formatEndpoints`` with every port: up to three ``ip:port`` (or bare IPs of a subset
    without ports), then how many more."""
    subsets = [s for s in _l(obj, "subsets") if isinstance(s, dict)]
    if not subsets:
        return "<none>"
    shown: list[str] = []
    more, count, limit = False, 0, 3
    for subset in subsets:
        addresses = [a for a in _l(subset, "addresses") if isinstance(a, dict)]
        ports: list[dict[str, Any] | None] = [p for p in _l(subset, "ports") if isinstance(p, dict)]
        for port in ports or [None]:
            count += len(addresses)
            for address in addresses:
                if len(shown) == limit:
                    more = True
                    break
                ip = str(address.get("ip", ""))
                if port is None:
                    shown.append(ip)
                else:
                    host = f"[{ip}]" if ":" in ip else ip
                    shown.append(f"{host}:{int(port.get('port') or 0)}")
    text = ",".join(shown)
    if more:
        return f"{text} + {count - limit} more..."
    return text or "<none>"


def _endpoints(obj: Object, now: datetime) -> list[Any]:
    return [_name(obj), _endpoints_text(obj), _age(obj, now)]


def _resource_quota(obj: Object, now: datetime) -> list[Any]:
    """printResourceQuota: ``name: used/hard`` per resource of ``status.hard`` (sorted), the
    ``limits.*`` ones in the Limit column, the others in the Request column."""
    status = _m(obj, "status")
    hard, used = _m(status, "hard"), _m(status, "used")
    request: list[str] = []
    limit: list[str] = []
    for name in sorted(hard):
        column = limit if name.split(".")[0] == "limits" and "." in name else request
        column.append(f"{name}: {used.get(name, '0')}/{hard[name]}")
    return [_name(obj), _age(obj, now), ", ".join(request), ", ".join(limit)]


def _node_address(status: Mapping[str, Any], kind: str) -> str:
    for address in _l(status, "addresses"):
        if isinstance(address, Mapping) and address.get("type") == kind:
            return str(address.get("address", ""))
    return "<none>"


def _node(obj: Object, now: datetime) -> list[Any]:
    """printNode: the Ready condition (else Unknown), SchedulingDisabled, the roles from the
    node-role.kubernetes.io/ labels and kubernetes.io/role."""
    spec, status = _m(obj, "spec"), _m(obj, "status")
    conditions = {
        c.get("type"): c.get("status") for c in _l(status, "conditions") if isinstance(c, Mapping)
    }
    states = []
    if "Ready" in conditions:
        states.append("Ready" if conditions["Ready"] == "True" else "NotReady")
    if not states:
        states.append("Unknown")
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    roles: set[str] = set()
    for key, value in _m(_m(obj, "metadata"), "labels").items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))
    info = _m(status, "nodeInfo")
    return [
        _name(obj),
        ",".join(states),
        ",".join(sorted(roles)) or "<none>",
        _age(obj, now),
        str(info.get("kubeletVersion", "")),
        _node_address(status, "InternalIP"),
        _node_address(status, "ExternalIP"),
        str(info.get("osImage") or "<unknown>"),
        str(info.get("kernelVersion") or "<unknown>"),
        str(info.get("containerRuntimeVersion") or "<unknown>"),
    ]


# ------------------------------------------------------------------------ apps/v1


def _selector_text(selector: Mapping[str, Any]) -> str:
    parts = [f"{k}={v}" for k, v in sorted(_m(selector, "matchLabels").items())]
    for expr in _l(selector, "matchExpressions"):
        if not isinstance(expr, Mapping):
            continue
        op, key, values = expr.get("operator"), expr.get("key"), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(sorted(values))})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(sorted(values))})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) or "<none>"


def _template_cells(spec: Mapping[str, Any]) -> list[Any]:
    """The wide columns of a pod-template kind: containers, images, selector."""
    containers = [
        c for c in _l(_m(_m(spec, "template"), "spec"), "containers") if isinstance(c, dict)
    ]
    return [
        ",".join(str(c.get("name", "")) for c in containers),
        ",".join(str(c.get("image", "")) for c in containers),
        _selector_text(_m(spec, "selector")),
    ]


def _daemon_set(obj: Object, now: datetime) -> list[Any]:
    spec, status = _m(obj, "spec"), _m(obj, "status")
    node_selector = _m(_m(_m(spec, "template"), "spec"), "nodeSelector")
    return [
        _name(obj),
        *(
            int(status.get(key) or 0)
            for key in (
                "desiredNumberScheduled",
                "currentNumberScheduled",
                "numberReady",
                "updatedNumberScheduled",
                "numberAvailable",
            )
        ),
        ",".join(f"{k}={v}" for k, v in sorted(node_selector.items())) or "<none>",
        _age(obj, now),
        *_template_cells(spec),
    ]


def _deployment(obj: Object, now: datetime) -> list[Any]:
    spec, status = _m(obj, "spec"), _m(obj, "status")
    desired = spec.get("replicas", 1)
    return [
        _name(obj),
        f"{int(status.get('readyReplicas') or 0)}/{int(desired or 0)}",
        int(status.get("updatedReplicas") or 0),
        int(status.get("availableReplicas") or 0),
        _age(obj, now),
        *_template_cells(spec),
    ]


def _replica_set(obj: Object, now: datetime) -> list[Any]:
    spec, status = _m(obj, "spec"), _m(obj, "status")
    return [
        _name(obj),
        int(spec.get("replicas", 1) or 0),
        int(status.get("replicas") or 0),
        int(status.get("readyReplicas") or 0),
        _age(obj, now),
        *_template_cells(spec),
    ]


def _controller_revision(obj: Object, now: datetime) -> list[Any]:
    # The controller owner as formatResourceName prints it: "<kind>.<group>/<name>", lower case.
    controller = "<none>"
    for ref in _l(_m(obj, "metadata"), "ownerReferences"):
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            api_version = str(ref.get("apiVersion", ""))
            group = api_version.rpartition("/")[0] if "/" in api_version else ""
            kind = str(ref.get("kind", ""))
            group_kind = f"{kind}.{group}" if group else kind
            name = ref.get("name", "")
            controller = f"{group_kind.lower()}/{name}" if group_kind else str(name)
            break
    revision = obj.get("revision")
    return [
        _name(obj),
        controller,
        revision if isinstance(revision, int) else 0,
        _age(obj, now),
    ]


# -------------------------------------------------------------------- autoscaling/v2

#: ``formatHPAMetrics`` shows this many metrics, then ``+ N more...``.
_MAX_HPA_METRICS = 2


def _quantity(source: Mapping[str, Any], key: str) -> str:
    # Quantity.String() of a pointer: "<nil>" when unset.
    value = source.get(key)
    return "<nil>" if value is None else str(value)


def _hpa_metric(spec: Mapping[str, Any], status: Mapping[str, Any] | None) -> str:
    """One metric of ``formatHPAMetrics``: current/target, ``<unknown>`` without a status."""
    kind = spec.get("type")
    if kind in ("External", "Object"):
        field = "external" if kind == "External" else "object"
        target = _m(_m(spec, field), "target")
        has_status = status is not None and isinstance(status.get(field), Mapping)
        current = _m(_m(status, field), "current") if has_status else {}
        if target.get("averageValue") is not None:
            shown = "<unknown>"
            if has_status and current.get("averageValue") is not None:
                shown = _quantity(current, "averageValue")
            return f"{shown}/{_quantity(target, 'averageValue')} (avg)"
        shown = _quantity(current, "value") if has_status else "<unknown>"
        return f"{shown}/{_quantity(target, 'value')}"
    if kind == "Pods":
        shown = "<unknown>"
        if status is not None and isinstance(status.get("pods"), Mapping):
            shown = _quantity(_m(status["pods"], "current"), "averageValue")
        return f"{shown}/{_quantity(_m(_m(spec, 'pods'), 'target'), 'averageValue')}"
    if kind in ("Resource", "ContainerResource"):
        field = "resource" if kind == "Resource" else "containerResource"
        source = _m(spec, field)
        target = _m(source, "target")
        has_status = status is not None and isinstance(status.get(field), Mapping)
        current = _m(_m(status, field), "current") if has_status else {}
        name = source.get("name", "")
        if target.get("averageValue") is not None:
            shown = _quantity(current, "averageValue") if has_status else "<unknown>"
            return f"{name}: {shown}/{_quantity(target, 'averageValue')}"
        shown = "<unknown>"
        if has_status and current.get("averageUtilization") is not None:
            shown = f"{current['averageUtilization']}%"
        goal = "<auto>"
        if target.get("averageUtilization") is not None:
            goal = f"{target['averageUtilization']}%"
        return f"{name}: {shown}/{goal}"
    return "<unknown type>"


def _hpa_targets(specs: list[Any], statuses: list[Any]) -> str:
    """``formatHPAMetrics``: each metric's current and target values, the i-th status read as
    the i-th metric's."""
    if not specs:
        return "<none>"
    shown = []
    for i, spec in enumerate(specs):
        status = statuses[i] if i < len(statuses) and isinstance(statuses[i], Mapping) else None
        shown.append(_hpa_metric(spec if isinstance(spec, Mapping) else {}, status))
    text = ", ".join(shown[:_MAX_HPA_METRICS])
    if len(shown) > _MAX_HPA_METRICS:
        return f"{text} + {len(shown) - _MAX_HPA_METRICS} more..."
    return text


def _horizontal_pod_autoscaler(obj: Object, now: datetime) -> list[Any]:
    # Kubernetes prints from the internal (v2-shaped) object: read a v1 one as the hub.
    if obj.get("apiVersion") == "autoscaling/v1" or "targetCPUUtilizationPercentage" in _m(
        obj, "spec"
    ):
        obj = hpa_to_hub(obj)
    spec, status = _m(obj, "spec"), _m(obj, "status")
    ref = _m(spec, "scaleTargetRef")
    min_replicas = spec.get("minReplicas")
    return [
        _name(obj),
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        _hpa_targets(_l(spec, "metrics"), _l(status, "currentMetrics")),
        "<unset>" if min_replicas is None else str(min_replicas),
        int(spec.get("maxReplicas") or 0),
        int(status.get("currentReplicas") or 0),
        _age(obj, now),
    ]


# ------------------------------------------------------------------------ batch/v1


def _condition_true(status: Mapping[str, Any], kind: str) -> bool:
    return any(
        isinstance(c, Mapping) and c.get("type") == kind and c.get("status") == "True"
        for c in _l(status, "conditions")
    )


def _job_status(obj: Object) -> str:
    status = _m(obj, "status")
    if _condition_true(status, "Complete"):
        return "Complete"
    if _condition_true(status, "Failed"):
        return "Failed"
    if _m(obj, "metadata").get("deletionTimestamp"):
        return "Terminating"
    for kind in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if _condition_true(status, kind):
            return kind
    return "Running"


def _job(obj: Object, now: datetime) -> list[Any]:
    spec, status = _m(obj, "spec"), _m(obj, "status")
    succeeded = int(status.get("succeeded") or 0)
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    if completions is not None:
        done = f"{succeeded}/{int(completions)}"
    elif int(parallelism or 0) > 1:
        done = f"{succeeded}/1 of {int(parallelism or 0)}"
    else:
        done = f"{succeeded}/1"
    start = parse_timestamp(status.get("startTime"))
    end = parse_timestamp(status.get("completionTime"))
    took = ""
    if start is not None:
        took = human_duration(((end or now) - start).total_seconds())
    return [
        _name(obj),
        _job_status(obj),
        done,
        took,
        _age(obj, now),
        *_template_cells(spec),
    ]


def _cron_job(obj: Object, now: datetime) -> list[Any]:
    spec, status = _m(obj, "spec"), _m(obj, "status")
    last = status.get("lastScheduleTime")
    suspend = spec.get("suspend")
    job_spec = _m(_m(spec, "jobTemplate"), "spec")
    return [
        _name(obj),
        str(spec.get("schedule") or ""),
        "<none>" if spec.get("timeZone") is None else str(spec["timeZone"]),
        "<unset>" if suspend is None else ("True" if suspend else "False"),
        len(_l(status, "active")),
        translate_timestamp_since(last, now) if last is not None else "<none>",
        _age(obj, now),
        *_template_cells(job_spec),
    ]


def _stateful_set(obj: Object, now: datetime) -> list[Any]:
    spec, status = _m(obj, "spec"), _m(obj, "status")
    desired = spec.get("replicas", 1)
    return [
        _name(obj),
        f"{int(status.get('readyReplicas') or 0)}/{int(desired or 0)}",
        _age(obj, now),
        *_template_cells(spec)[:2],
    ]


def _pod_disruption_budget(obj: Object, now: datetime) -> list[Any]:
    # IntOrString.String(): a count in decimal, a string as written; "N/A" when unset.
    spec = _m(obj, "spec")
    limits = [
        "N/A" if spec.get(key) is None else str(spec[key])
        for key in ("minAvailable", "maxUnavailable")
    ]
    allowed = _m(obj, "status").get("disruptionsAllowed")
    return [_name(obj), *limits, allowed if isinstance(allowed, int) else 0, _age(obj, now)]


def _api_service(obj: Object, now: datetime) -> list[Any]:
    # The aggregator's own table: "Local" or "<ns>/<name>"; "True", or "<status> (<reason>)".
    service = _m(obj, "spec").get("service")
    where = "Local"
    if isinstance(service, Mapping):
        where = f"{service.get('namespace') or ''}/{service.get('name') or ''}"
    available = "Unknown"
    for condition in _m(obj, "status").get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == "Available":
            status, reason = str(condition.get("status") or ""), condition.get("reason")
            available = f"{status} ({reason})" if status != "True" and reason else status
            break
    return [_name(obj), where, available, _age(obj, now)]


def _col(name: str, kind: str, description: str, priority: int = 0) -> Column:
    return Column(name, kind, "", description, priority)


#: The wide columns of the containers in a pod template (``layoutContainerCells``).
_TEMPLATE_CONTAINERS = (
    _col("Containers", "string", "Names of each container in the template.", 1),
    _col("Images", "string", "Images referenced by each container in the template.", 1),
)


# ---------------------------------------------------------------- networking.k8s.io/v1

#: ``formatHosts`` shows this many rule hosts, then ``+ N more...``.
_MAX_HOSTS = 3


def _ingress_hosts(rules: list[Any]) -> str:
    shown: list[str] = []
    more = False
    for rule in rules:
        if len(shown) == _MAX_HOSTS:
            # Any rule after the one with the third host; Kubernetes then counts every rule
            # past the third, with a host or not.
            more = True
            break
        host = rule.get("host") if isinstance(rule, Mapping) else None
        if host:
            shown.append(str(host))
    if not shown:
        return "*"
    text = ",".join(shown)
    return f"{text} + {len(rules) - _MAX_HOSTS} more..." if more else text


def _ingress(obj: Object, now: datetime) -> list[Any]:
    spec = _m(obj, "spec")
    # The server prints tables wide, so the address is never clipped; IPs before hostnames per
    # point, the whole set sorted.
    points = _l(_m(_m(obj, "status"), "loadBalancer"), "ingress")
    addresses = {
        str(p.get("ip") or p.get("hostname"))
        for p in points
        if isinstance(p, Mapping) and (p.get("ip") or p.get("hostname"))
    }
    return [
        _name(obj),
        _or_none(spec.get("ingressClassName")),
        _ingress_hosts(_l(spec, "rules")),
        ",".join(sorted(addresses)),
        "80, 443" if _l(spec, "tls") else "80",
        _age(obj, now),
    ]


def _ingress_class(obj: Object, now: datetime) -> list[Any]:
    spec = _m(obj, "spec")
    params = spec.get("parameters")
    parameters = "<none>"
    if isinstance(params, Mapping):
        # Kind[.apiGroup]/name
        group = params.get("apiGroup")
        kind = str(params.get("kind", ""))
        parameters = f"{kind}.{group}" if isinstance(group, str) else kind
        parameters = f"{parameters}/{params.get('name', '')}"
    return [_name(obj), str(spec.get("controller", "")), parameters, _age(obj, now)]


# ---------------------------------------------------------- admissionregistration.k8s.io/v1


def _webhook_configuration(obj: Object, now: datetime) -> list[Any]:
    webhooks = obj.get("webhooks")
    return [_name(obj), len(webhooks) if isinstance(webhooks, list) else 0, _age(obj, now)]


def _validating_admission_policy(obj: Object, now: datetime) -> list[Any]:
    spec = _m(obj, "spec")
    validations = spec.get("validations")
    kind = spec.get("paramKind")
    param_kind = "<unset>"
    if isinstance(kind, Mapping):
        param_kind = f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}"
    count = len(validations) if isinstance(validations, list) else 0
    return [_name(obj), count, param_kind, _age(obj, now)]


def _mutating_admission_policy(obj: Object, now: datetime) -> list[Any]:
    row = _validating_admission_policy(obj, now)
    mutations = _m(obj, "spec").get("mutations")
    row[1] = len(mutations) if isinstance(mutations, list) else 0
    return row


def _go_label_selector(selector: Mapping[str, Any]) -> str:
    # The generated String() of metav1.LabelSelector (labels sorted, values as Go's %v).
    labels = selector.get("matchLabels")
    labels = labels if isinstance(labels, Mapping) else {}
    label_text = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    expressions = selector.get("matchExpressions")
    parts = []
    for e in expressions if isinstance(expressions, list) else []:
        e = e if isinstance(e, Mapping) else {}
        values = e.get("values")
        values_text = " ".join(str(v) for v in values) if isinstance(values, list) else ""
        parts.append(
            f"LabelSelectorRequirement{{Key:{e.get('key', '')},"
            f"Operator:{e.get('operator', '')},Values:[{values_text}],}},"
        )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{label_text}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{''.join(parts)}}},}}"
    )


def _validating_admission_policy_binding(obj: Object, now: datetime) -> list[Any]:
    spec = _m(obj, "spec")
    ref = spec.get("paramRef")
    param = "<unset>"
    if isinstance(ref, Mapping):
        name = ref.get("name")
        namespace = ref.get("namespace")
        selector = ref.get("selector")
        if isinstance(name, str) and name:
            # Whether the parameter is cluster-scoped cannot be told here: "*/" without one.
            param = (
                f"{namespace}/{name}" if isinstance(namespace, str) and namespace else f"*/{name}"
            )
        elif isinstance(selector, Mapping):
            param = _go_label_selector(selector)
    return [_name(obj), str(spec.get("policyName", "")), param, _age(obj, now)]


_POLICY_BINDING = Printer(
    (
        _NAME,
        _col(
            "PolicyName",
            "string",
            "PolicyName indicates the policy definition which the policy binding binded to",
        ),
        _col(
            "ParamRef",
            "string",
            "ParamRef indicates the param resource which sets the configration param",
        ),
        _AGE,
    ),
    _validating_admission_policy_binding,
)

_WEBHOOK_CONFIGURATION = Printer(
    (
        _NAME,
        Column(
            "Webhooks",
            "integer",
            "",
            "Webhooks indicates the number of webhooks registered in this configuration",
        ),
        _AGE,
    ),
    _webhook_configuration,
)


# -------------------------------------------------------------------- certificates.k8s.io/v1


# The column descriptions kube-apiserver sends: certificates/v1beta1's field docs.
_SIGNER_NAME_DOC = (
    "Requested signer for the request. It is a qualified name in the form: "
    "`scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet client "
    'certificate, it is assigned\n    "kubernetes.io/kube-apiserver-client-kubelet".\n 2. If '
    'it\'s a kubelet serving certificate, it is assigned\n    "kubernetes.io/kubelet-serving".'
    '\n 3. Otherwise, it is assigned "kubernetes.io/legacy-unknown".\nDistribution of trust '
    "for signers happens out of band. You can select on this field using `spec.signerName`."
)
_EXPIRATION_SECONDS_DOC = (
    "expirationSeconds is the requested duration of validity of the issued certificate. The "
    "certificate signer may issue a certificate with a different validity duration so a client "
    "must check the delta between the notBefore and and notAfter fields in the issued "
    "certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of "
    "the well-known Kubernetes signers will honor this field as long as the requested duration "
    "is not greater than the maximum duration they will honor per the "
    "--cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate "
    "signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware "
    "of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose "
    "configured maximum is shorter than the requested duration\n  3. Signer whose configured "
    "minimum is longer than the requested duration\n\nThe minimum valid value for "
    "expirationSeconds is 600, i.e. 10 minutes."
)


def _csr_condition(obj: Object) -> str:
    # Denied before Approved, else Pending; then Failed and Issued.
    types = {c.get("type") for c in _l(_m(obj, "status"), "conditions") if isinstance(c, Mapping)}
    text = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        text += ",Failed"
    if _m(obj, "status").get("certificate"):
        text += ",Issued"
    return text


def _certificate_signing_request(obj: Object, now: datetime) -> list[Any]:
    spec = _m(obj, "spec")
    seconds = spec.get("expirationSeconds")
    requested = human_duration(seconds) if isinstance(seconds, int) else "<none>"
    return [
        _name(obj),
        _age(obj, now),
        _or_none(spec.get("signerName")),
        str(spec.get("username", "")),
        requested,
        _csr_condition(obj),
    ]


def _ip_address(obj: Object, now: datetime) -> list[Any]:
    parent = _m(obj, "spec").get("parentRef")
    parent_ref = "<none>"
    if isinstance(parent, Mapping):
        # resource[.group][/namespace]/name, lower case
        group, resource = str(parent.get("group") or ""), str(parent.get("resource") or "")
        parent_ref = (f"{resource}.{group}" if group else resource).lower()
        if parent.get("namespace"):
            parent_ref += f"/{parent['namespace']}"
        parent_ref += f"/{parent.get('name') or ''}"
    return [_name(obj), parent_ref, _age(obj, now)]


def _service_cidr(obj: Object, now: datetime) -> list[Any]:
    cidrs = _l(_m(obj, "spec"), "cidrs")
    return [_name(obj), ",".join(str(c) for c in cidrs), _age(obj, now)]


# ------------------------------------------------------------------- storage.k8s.io/v1

_DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


def _bool_or(obj: Mapping[str, Any], key: str, default: bool) -> bool:
    value = obj.get(key)
    return value if isinstance(value, bool) else default


def _storage_class(obj: Object, now: datetime) -> list[Any]:
    annotations = _m(_m(obj, "metadata"), "annotations")
    name = _name(obj)
    if any(annotations.get(key) == "true" for key in _DEFAULT_CLASS_ANNOTATIONS):
        name += " (default)"
    return [
        name,
        str(obj.get("provisioner", "")),
        str(obj.get("reclaimPolicy") or "Delete"),
        str(obj.get("volumeBindingMode") or "Immediate"),
        _bool_or(obj, "allowVolumeExpansion", False),
        _age(obj, now),
    ]


def _csi_driver(obj: Object, now: datetime) -> list[Any]:
    spec = _m(obj, "spec")
    audiences = [
        str(request.get("audience", ""))
        for request in _l(spec, "tokenRequests")
        if isinstance(request, Mapping)
    ]
    modes = ",".join(str(mode) for mode in _l(spec, "volumeLifecycleModes"))
    return [
        _name(obj),
        _bool_or(spec, "attachRequired", True),
        _bool_or(spec, "podInfoOnMount", True),
        _bool_or(spec, "storageCapacity", False),
        ",".join(audiences) if audiences else "<unset>",
        _bool_or(spec, "requiresRepublish", False),
        modes or "<none>",
        _age(obj, now),
    ]


def _volume_attachment(obj: Object, now: datetime) -> list[Any]:
    spec = _m(obj, "spec")
    volume = _m(spec, "source").get("persistentVolumeName")
    return [
        _name(obj),
        str(spec.get("attacher", "")),
        volume if isinstance(volume, str) else "",
        str(spec.get("nodeName", "")),
        _bool_or(_m(obj, "status"), "attached", False),
        _age(obj, now),
    ]


def _csi_node(obj: Object, now: datetime) -> list[Any]:
    return [_name(obj), len(_l(_m(obj, "spec"), "drivers")), _age(obj, now)]


def _network_policy(obj: Object, now: datetime) -> list[Any]:
    return [_name(obj), _selector_text(_m(_m(obj, "spec"), "podSelector")), _age(obj, now)]


# -------------------------------------------------------------------- discovery.k8s.io/v1


def _list_with_more(items: list[str], limit: int = 3) -> str:
    # listWithMoreString: the first three, "+ N more..." past them, "<unset>" for none.
    text = ",".join(items[:limit])
    if len(items) > limit:
        return f"{text} + {len(items) - limit} more..."
    return text or "<unset>"


def _endpoint_slice(obj: Object, now: datetime) -> list[Any]:
    ports = []
    for port in _l(obj, "ports"):
        if not isinstance(port, Mapping):
            continue
        number, name = port.get("port"), port.get("name")
        ports.append(str(number) if number is not None else "*" if name is None else str(name))
    addresses = [
        str(address)
        for endpoint in _l(obj, "endpoints")
        if isinstance(endpoint, Mapping)
        for address in _l(endpoint, "addresses")
    ]
    return [
        _name(obj),
        str(obj.get("addressType") or ""),
        _list_with_more(ports),
        _list_with_more(addresses),
        _age(obj, now),
    ]


# ------------------------------------------------------------------------ node.k8s.io/v1


def _runtime_class(obj: Object, now: datetime) -> list[Any]:
    return [_name(obj), str(obj.get("handler") or ""), _age(obj, now)]


# ------------------------------------------------------------------ scheduling.k8s.io/v1


def _priority_class(obj: Object, now: datetime) -> list[Any]:
    value = obj.get("value")
    policy = obj.get("preemptionPolicy")
    return [
        _name(obj),
        value if isinstance(value, int) else 0,
        obj.get("globalDefault") is True,
        _age(obj, now),
        "<unset>" if policy is None else str(policy),
    ]


# ------------------------------------------------------------ rbac.authorization.k8s.io/v1


def _role(obj: Object, now: datetime) -> list[Any]:
    # printRole prints the creation time itself (RFC 3339, UTC), not an age.
    return [_name(obj), str(_m(obj, "metadata").get("creationTimestamp") or "")]


def _role_binding(obj: Object, now: datetime) -> list[Any]:
    ref = _m(obj, "roleRef")
    users: list[str] = []
    groups: list[str] = []
    service_accounts: list[str] = []
    for subject in _l(obj, "subjects"):
        if not isinstance(subject, Mapping):
            continue
        kind, name = subject.get("kind"), str(subject.get("name", ""))
        if kind == "ServiceAccount":
            service_accounts.append(f"{subject.get('namespace', '')}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
    return [
        _name(obj),
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        _age(obj, now),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(service_accounts),
    ]


_ROLE = Printer(
    (_NAME, _col("Created At", "date", "When the object was created.")),
    _role,
)
_ROLE_BINDING = Printer(
    (
        _NAME,
        _col("Role", "string", "The role the binding grants."),
        _AGE,
        _col("Users", "string", "Users in the roleBinding", 1),
        _col("Groups", "string", "Groups in the roleBinding", 1),
        _col("ServiceAccounts", "string", "ServiceAccounts in the roleBinding", 1),
    ),
    _role_binding,
)


_PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "ConfigMap"): Printer(
        (_NAME, _col("Data", "integer", "Number of keys in data and binaryData."), _AGE),
        _configmap,
    ),
    ("", "Secret"): Printer(
        (
            _NAME,
            _col("Type", "string", "The type of secret."),
            _col("Data", "integer", "Number of keys in data."),
            _AGE,
        ),
        _secret,
    ),
    ("", "Namespace"): Printer(
        (_NAME, _col("Status", "string", "The phase of the namespace."), _AGE), _namespace
    ),
    ("", "ServiceAccount"): Printer(
        (_NAME, _col("Secrets", "integer", "Number of secrets of the service account."), _AGE),
        _service_account,
    ),
    ("", "Pod"): Printer(
        (
            _NAME,
            _col("Ready", "string", "Ready containers of all containers."),
            _col("Status", "string", "The aggregate status of the containers in this pod."),
            _col("Restarts", "string", "Restarts of the containers in this pod."),
            _AGE,
            _col("IP", "string", "The IP address of the pod.", 1),
            _col("Node", "string", "The node the pod is bound to.", 1),
            _col("Nominated Node", "string", "The node the scheduler nominated.", 1),
            _col("Readiness Gates", "string", "Readiness gates met of all gates.", 1),
        ),
        _pod,
    ),
    ("", "Service"): Printer(
        (
            _NAME,
            _col("Type", "string", "The type of the service."),
            _col("Cluster-IP", "string", "The cluster IP of the service."),
            _col("External-IP", "string", "The external IPs of the service."),
            _col("Port(s)", "string", "The ports of the service."),
            _AGE,
            _col("Selector", "string", "The pod selector of the service.", 1),
        ),
        _service,
    ),
    ("", "Endpoints"): Printer(
        (
            _NAME,
            _col("Endpoints", "string", "The addresses and ports of the endpoints."),
            _AGE,
        ),
        _endpoints,
    ),
    # printLimitRange prints the creation time itself (RFC 3339, UTC), as printRole does.
    ("", "LimitRange"): _ROLE,
    ("", "ResourceQuota"): Printer(
        (
            _NAME,
            _AGE,
            _col("Request", "string", "The requests (and object counts): used/hard."),
            _col("Limit", "string", "The limits: used/hard."),
        ),
        _resource_quota,
    ),
    ("", "Node"): Printer(
        (
            _NAME,
            _col("Status", "string", "The status of the node."),
            _col("Roles", "string", "The roles of the node."),
            _AGE,
            _col("Version", "string", "Kubelet Version reported by the node."),
            _col("Internal-IP", "string", "List of internal IPs.", 1),
            _col("External-IP", "string", "List of external IPs.", 1),
            _col("OS-Image", "string", "OS Image reported by the node.", 1),
            _col("Kernel-Version", "string", "Kernel Version reported by the node.", 1),
            _col(
                "Container-Runtime", "string", "Container Runtime Version reported by the node.", 1
            ),
        ),
        _node,
    ),
    ("", "PodTemplate"): Printer(
        (
            _NAME,
            _col("Containers", "string", "Names of each container in the template."),
            _col("Images", "string", "Images referenced by each container in the template."),
            _col("Pod Labels", "string", "The labels of the pod template."),
        ),
        _pod_template,
    ),
    ("", "ReplicationController"): Printer(
        (
            _NAME,
            _col("Desired", "integer", "The desired number of replicas."),
            _col("Current", "integer", "The most recently observed number of replicas."),
            _col("Ready", "integer", "The number of ready replicas."),
            _AGE,
            *_TEMPLATE_CONTAINERS,
            _col("Selector", "string", "The label selector of the replication controller.", 1),
        ),
        _replication_controller,
    ),
    ("", "PersistentVolumeClaim"): Printer(
        (
            _NAME,
            _col("Status", "string", "The phase of the claim."),
            _col("Volume", "string", "The volume bound to the claim."),
            _col("Capacity", "string", "The capacity of the bound volume."),
            _col("Access Modes", "string", "The access modes of the bound volume."),
            _col("StorageClass", "string", "StorageClass of the pvc"),
            _col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
            _AGE,
            _col("VolumeMode", "string", "The volume mode the claim asks for.", 1),
        ),
        _persistent_volume_claim,
    ),
    ("", "PersistentVolume"): Printer(
        (
            _NAME,
            _col("Capacity", "string", "The capacity of the volume."),
            _col("Access Modes", "string", "The access modes of the volume."),
            _col("Reclaim Policy", "string", "What happens to the volume when it is released."),
            _col("Status", "string", "The phase of the volume."),
            _col("Claim", "string", "The claim bound to the volume."),
            _col("StorageClass", "string", "StorageClass of the pv"),
            _col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
            _col("Reason", "string", "Why the volume is in its phase."),
            _AGE,
            _col("VolumeMode", "string", "The volume mode of the volume.", 1),
        ),
        _persistent_volume,
    ),
    ("", "Event"): Printer(
        (
            _col("Last Seen", "string", "When the event was last observed."),
            _col("Type", "string", "The type of the event."),
            _col("Reason", "string", "Why the event happened."),
            _col("Object", "string", "The object the event is about."),
            _col("Subobject", "string", "The part of the object the event is about.", 1),
            _col("Source", "string", "The component that reported the event.", 1),
            _col("Message", "string", "A description of the event."),
            _col("First Seen", "string", "When the event was first observed.", 1),
            _col("Count", "string", "How many times the event happened.", 1),
            Column("Name", "string", "name", "The name of the event.", 1),
        ),
        _event,
    ),
    ("apps", "DaemonSet"): Printer(
        (
            _NAME,
            _col("Desired", "integer", "The number of nodes that should run the daemon pod."),
            _col("Current", "integer", "The number of nodes running at least one daemon pod."),
            _col("Ready", "integer", "The number of nodes with a ready daemon pod."),
            _col("Up-to-date", "integer", "The number of nodes running the updated daemon pod."),
            _col("Available", "integer", "The number of nodes with an available daemon pod."),
            _col("Node Selector", "string", "The node selector of the pod template."),
            _AGE,
            *_TEMPLATE_CONTAINERS,
            _col("Selector", "string", "The label selector of the daemon set.", 1),
        ),
        _daemon_set,
    ),
    ("apps", "Deployment"): Printer(
        (
            _NAME,
            _col("Ready", "string", "Ready replicas of the desired replicas."),
            _col("Up-to-date", "integer", "Replicas updated to the desired template."),
            _col("Available", "integer", "Replicas available to users."),
            _AGE,
            _col("Containers", "string", "The containers of the pod template.", 1),
            _col("Images", "string", "The images of the pod template.", 1),
            _col("Selector", "string", "The label selector of the deployment.", 1),
        ),
        _deployment,
    ),
    ("apps", "ReplicaSet"): Printer(
        (
            _NAME,
            _col("Desired", "integer", "The desired number of replicas."),
            _col("Current", "integer", "The most recently observed number of replicas."),
            _col("Ready", "integer", "The number of ready replicas."),
            _AGE,
            *_TEMPLATE_CONTAINERS,
            _col("Selector", "string", "The label selector of the replica set.", 1),
        ),
        _replica_set,
    ),
    ("apps", "StatefulSet"): Printer(
        (
            _NAME,
            _col("Ready", "string", "Number of the pod with ready state"),
            _AGE,
            *_TEMPLATE_CONTAINERS,
        ),
        _stateful_set,
    ),
    ("apps", "ControllerRevision"): Printer(
        (
            _NAME,
            _col("Controller", "string", "Controller of the object"),
            _col(
                "Revision",
                "string",
                "The revision of the state the object holds.",
            ),
            _AGE,
        ),
        _controller_revision,
    ),
    ("autoscaling", "HorizontalPodAutoscaler"): Printer(
        (
            _NAME,
            _col("Reference", "string", "The target resource to scale."),
            _col("Targets", "string", "The metrics the replica count is computed from."),
            _col("MinPods", "string", "The lower limit for the number of replicas."),
            _col("MaxPods", "string", "The upper limit for the number of replicas."),
            _col("Replicas", "string", "The current number of replicas."),
            _AGE,
        ),
        _horizontal_pod_autoscaler,
    ),
    ("batch", "Job"): Printer(
        (
            _NAME,
            _col("Status", "string", "Status of the job."),
            _col("Completions", "string", "The number of pods which reached phase Succeeded."),
            _col("Duration", "string", "Time required to complete the job."),
            _AGE,
            *_TEMPLATE_CONTAINERS,
            _col(
                "Selector", "string", "A label query over pods that should match the pod count.", 1
            ),
        ),
        _job,
    ),
    ("batch", "CronJob"): Printer(
        (
            _NAME,
            _col("Schedule", "string", "The schedule in Cron format."),
            _col("Timezone", "string", "The time zone name for the given schedule."),
            Column("Suspend", "boolean", "", "Whether subsequent executions are suspended."),
            Column("Active", "integer", "", "The number of currently running jobs."),
            _col("Last Schedule", "string", "When the job was last successfully scheduled."),
            _AGE,
            *_TEMPLATE_CONTAINERS,
            _col(
                "Selector", "string", "A label query over pods that should match the pod count.", 1
            ),
        ),
        _cron_job,
    ),
    ("coordination.k8s.io", "Lease"): Printer(
        (_NAME, _col("Holder", "string", "The holder of the lease."), _AGE), _lease
    ),
    ("policy", "PodDisruptionBudget"): Printer(
        (
            _NAME,
            _col("Min Available", "string", "The minimum number of pods that must be available."),
            _col(
                "Max Unavailable", "string", "The maximum number of pods that may be unavailable."
            ),
            Column(
                "Allowed Disruptions",
                "integer",
                "",
                "Calculated number of pods that may be disrupted at this time.",
            ),
            _AGE,
        ),
        _pod_disruption_budget,
    ),
    ("networking.k8s.io", "Ingress"): Printer(
        (
            _NAME,
            _col(
                "Class",
                "string",
                "The name of the IngressClass resource that should be used for additional "
                "configuration",
            ),
            _col(
                "Hosts",
                "string",
                "Hosts that incoming requests are matched against before the ingress rule",
            ),
            _col(
                "Address",
                "string",
                "Address is a list containing ingress points for the load-balancer",
            ),
            _col("Ports", "string", "Ports of TLS configurations that open"),
            _AGE,
        ),
        _ingress,
    ),
    ("networking.k8s.io", "IngressClass"): Printer(
        (
            _NAME,
            _col("Controller", "string", "Controller that is responsible for handling this class"),
            _col("Parameters", "string", "A reference to a resource with additional parameters"),
            _AGE,
        ),
        _ingress_class,
    ),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): _WEBHOOK_CONFIGURATION,
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): _WEBHOOK_CONFIGURATION,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): Printer(
        (
            _NAME,
            Column(
                "Validations",
                "integer",
                "",
                "Validations indicates the number of validation rules defined in this "
                "configuration",
            ),
            _col(
                "ParamKind",
                "string",
                "ParamKind specifies the kind of resources used to parameterize this policy",
            ),
            _AGE,
        ),
        _validating_admission_policy,
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): _POLICY_BINDING,
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): Printer(
        (
            _NAME,
            Column(
                "Mutations",
                "integer",
                "",
                "Mutation indicates the number of mutations rules defined in this configuration",
            ),
            _col(
                "ParamKind",
                "string",
                "ParamKind specifies the kind of resources used to parameterize this policy",
            ),
            _AGE,
        ),
        _mutating_admission_policy,
    ),
    # Kubernetes prints both kinds of binding alike.
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): _POLICY_BINDING,
    ("certificates.k8s.io", "CertificateSigningRequest"): Printer(
        (
            _NAME,
            _AGE,
            _col("SignerName", "string", _SIGNER_NAME_DOC),
            _col("Requestor", "string", "Base64-encoded PKCS#10 CSR data"),
            _col("RequestedDuration", "string", _EXPIRATION_SECONDS_DOC),
            _col(
                "Condition",
                "string",
                "Conditions applied to the request, such as approval or denial.",
            ),
        ),
        _certificate_signing_request,
    ),
    ("discovery.k8s.io", "EndpointSlice"): Printer(
        (
            _NAME,
            _col("AddressType", "string", "The type of the addresses of this slice."),
            _col("Ports", "string", "The ports of the endpoints in this slice."),
            _col("Endpoints", "string", "The addresses of the endpoints in this slice."),
            _AGE,
        ),
        _endpoint_slice,
    ),
    ("networking.k8s.io", "NetworkPolicy"): Printer(
        (_NAME, _col("Pod-Selector", "string", "The pods the policy applies to."), _AGE),
        _network_policy,
    ),
    # Kubernetes describes the Handler column with ObjectMeta's (absent) "handler" doc: "".
    ("node.k8s.io", "RuntimeClass"): Printer(
        (_NAME, _col("Handler", "string", ""), _AGE), _runtime_class
    ),
    ("scheduling.k8s.io", "PriorityClass"): Printer(
        (
            _NAME,
            _col("Value", "integer", "The priority pods of this class receive."),
            _col("Global-Default", "boolean", "Whether this is the default class of pods."),
            _AGE,
            _col("PreemptionPolicy", "string", "Whether pods of this class preempt others."),
        ),
        _priority_class,
    ),
    ("networking.k8s.io", "IPAddress"): Printer(
        (
            _NAME,
            _col(
                "ParentRef",
                "string",
                "ParentRef references the resource that an IPAddress is attached to. An IPAddress "
                "must reference a parent object.",
            ),
            _AGE,
        ),
        _ip_address,
    ),
    ("networking.k8s.io", "ServiceCIDR"): Printer(
        (
            _NAME,
            _col(
                "CIDRs",
                "string",
                'CIDRs defines the IP blocks in CIDR notation (e.g. "192.168.0.0/24" or '
                '"2001:db8::/64") from which to assign service cluster IPs. Max of two CIDRs '
                "is allowed, one of each IP family. This field is immutable.",
            ),
            _AGE,
        ),
        _service_cidr,
    ),
    ("rbac.authorization.k8s.io", "Role"): _ROLE,
    ("rbac.authorization.k8s.io", "ClusterRole"): _ROLE,
    ("rbac.authorization.k8s.io", "RoleBinding"): _ROLE_BINDING,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): _ROLE_BINDING,
    ("storage.k8s.io", "StorageClass"): Printer(
        (
            _NAME,
            _col("Provisioner", "string", "The provisioner of the class."),
            _col("ReclaimPolicy", "string", "The reclaim policy of provisioned volumes."),
            _col("VolumeBindingMode", "string", "When claims of the class are bound."),
            _col("AllowVolumeExpansion", "string", "Whether the class allows volume expansion."),
            _AGE,
        ),
        _storage_class,
    ),
    ("storage.k8s.io", "CSIDriver"): Printer(
        (
            _NAME,
            _col("AttachRequired", "boolean", "Whether the driver needs an attach operation."),
            _col("PodInfoOnMount", "boolean", "Whether the driver gets pod information on mount."),
            _col("StorageCapacity", "boolean", "Whether scheduling considers its capacity."),
            _col("TokenRequests", "string", "Audiences of the tokens the driver asks for."),
            _col("RequiresRepublish", "boolean", "Whether volumes are published periodically."),
            _col("Modes", "string", "The volume lifecycle modes the driver supports."),
            _AGE,
        ),
        _csi_driver,
    ),
    ("storage.k8s.io", "VolumeAttachment"): Printer(
        (
            _NAME,
            Column("Attacher", "string", "name", "The volume driver that handles the attachment."),
            _col("PV", "string", "The persistent volume to attach."),
            _col("Node", "string", "The node the volume is attached to."),
            _col("Attached", "boolean", "Whether the volume is attached."),
            _AGE,
        ),
        _volume_attachment,
    ),
    ("storage.k8s.io", "CSINode"): Printer(
        (
            _NAME,
            _col(
                "Drivers",
                "integer",
                "Drivers indicates the number of CSI drivers registered on the node",
            ),
            _AGE,
        ),
        _csi_node,
    ),
    ("apiregistration.k8s.io", "APIService"): Printer(
        (
            _NAME,
            _col("Service", "string", "The reference to the service that hosts this API endpoint."),
            _col("Available", "string", "Whether this service is available."),
            _AGE,
        ),
        _api_service,
    ),
}


def printer_for(group: str, kind: str) -> Printer | None:
    """The printer of a built-in kind, or None (the default Name/Created At columns)."""
    return _PRINTERS.get((group, kind))
