"""Objects the benchmarks share: Kubernetes' Pod fixture and a realistic ~5 KiB Pod."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

FIXTURES = Path(__file__).resolve().parents[1] / ".." / "shared" / "k8s-testdata" / "HEAD"


def fixture(name: str) -> dict[str, Any]:
    """A Kubernetes compatibility fixture (e.g. ``core.v1.Pod.json``), decoded."""
    data: dict[str, Any] = orjson.loads((FIXTURES / name).read_bytes())
    return data


def _container(name: str, image: str, port: int) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "command": ["/bin/server", "--config=/etc/app/config.yaml"],
        "args": ["--port", str(port), "--log-level=info"],
        "ports": [
            {"name": "http", "containerPort": port, "protocol": "TCP"},
            {"name": "metrics", "containerPort": port + 1000, "protocol": "TCP"},
        ],
        "env": [
            {"name": "APP_ENV", "value": "production"},
            {"name": "APP_REGION", "value": "eu-west-1"},
            {
                "name": "POD_NAME",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
            },
            {
                "name": "DB_PASSWORD",
                "valueFrom": {"secretKeyRef": {"name": "db-credentials", "key": "password"}},
            },
        ],
        "resources": {
            "limits": {"cpu": "500m", "memory": "512Mi"},
            "requests": {"cpu": "250m", "memory": "256Mi"},
        },
        "volumeMounts": [
            {"name": "config", "mountPath": "/etc/app", "readOnly": True},
            {"name": "data", "mountPath": "/var/lib/app"},
            {
                "name": "kube-api-access-x7k2p",
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "readOnly": True,
            },
        ],
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"},
            "initialDelaySeconds": 10,
            "timeoutSeconds": 1,
            "periodSeconds": 10,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "readinessProbe": {
            "httpGet": {"path": "/readyz", "port": "http", "scheme": "HTTP"},
            "timeoutSeconds": 1,
            "periodSeconds": 5,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
    }


def _container_status(name: str, image: str) -> dict[str, Any]:
    return {
        "name": name,
        "state": {"running": {"startedAt": "2026-11-30T10:00:05Z"}},
        "lastState": {},
        "ready": True,
        "restartCount": 0,
        "image": image,
        "imageID": f"docker.io/library/{image}@sha256:" + "4f" * 32,
        "containerID": "containerd://" + "9a" * 32,
        "started": True,
    }


def realistic_pod(index: int = 0) -> dict[str, Any]:
    """A Deployment-managed Pod of about 5 KiB of compact JSON, as a real cluster stores it."""
    name = f"web-7d4b9c8f6d-{index:05d}"
    images = ("registry.example.com/web/frontend:1.27.3", "registry.example.com/web/sidecar:0.9.1")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": "web-7d4b9c8f6d-",
            "namespace": "production",
            "uid": f"5e1f7c2a-3b4d-4e8f-9a0b-{index:012d}",
            "creationTimestamp": "2026-11-30T10:00:00Z",
            "labels": {
                "app": "web",
                "pod-template-hash": "7d4b9c8f6d",
                "tier": "frontend",
                "version": "1.27.3",
            },
            "annotations": {
                "kubectl.kubernetes.io/restartedAt": "2026-11-30T09:59:58Z",
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "9080",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-7d4b9c8f6d",
                    "uid": "0b7e4f2d-8c1a-4d3e-b5f6-a7c8d9e0f1a2",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-11-30T10:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:metadata": {
                            "f:generateName": {},
                            "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                            "f:ownerReferences": {".": {}, 'k:{"uid":"0b7e4f2d"}': {}},
                        },
                        "f:spec": {"f:containers": {'k:{"name":"frontend"}': {".": {}}}},
                    },
                },
            ],
        },
        "spec": {
            "volumes": [
                {"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}},
                {"name": "data", "emptyDir": {"sizeLimit": "1Gi"}},
                {
                    "name": "kube-api-access-x7k2p",
                    "projected": {
                        "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {
                                "configMap": {
                                    "name": "kube-root-ca.crt",
                                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                }
                            },
                        ],
                        "defaultMode": 420,
                    },
                },
            ],
            "containers": [
                _container("frontend", images[0], 8080),
                _container("sidecar", images[1], 9090),
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "web",
            "serviceAccount": "web",
            "nodeName": "node-3.eu-west-1.compute.internal",
            "securityContext": {"runAsNonRoot": True, "fsGroup": 2000},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": "2026-11-30T10:00:06Z"}
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": "10.0.3.17",
            "podIP": "10.244.3.41",
            "podIPs": [{"ip": "10.244.3.41"}],
            "startTime": "2026-11-30T10:00:00Z",
            "containerStatuses": [
                _container_status("frontend", images[0]),
                _container_status("sidecar", images[1]),
            ],
            "qosClass": "Burstable",
        },
    }
