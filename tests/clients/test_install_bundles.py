"""Install bundles as users apply them: ``kubectl apply --server-side -f <folder>``, every object
read back with ``kubectl get -f``, then ``kubectl delete -f`` leaving nothing behind; on LMDB and
on etcd.

Two kinds of bundle: the published manifests in ``../shared/install-bundles`` (kube-state-metrics,
metrics-server with its APIService), copied unchanged from their projects, and manifests written
here in the shape of well-known projects' installs (a storage provisioner, an ingress controller,
a custom-metrics adapter, a webhook-backed operator) with the kinds those installs hold.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.clients.kubectl import Kubectl
from tests.fixtures_path import SHARED

BUNDLES = SHARED / "install-bundles"


def _documents(folder: Path) -> list[dict[str, Any]]:
    """The objects of a folder's manifests, in kubectl's order (files by name, then in order)."""
    docs: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def _identity(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = obj["metadata"]
    return (obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"])


def _eventually(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def _install_read_back_and_delete(k: Kubectl, source: tuple[str, str], namespace: str = "") -> None:
    """Apply ``source`` (``("-f", folder)`` or ``("-k", kustomization)``) server-side, read every
    object back, delete it all and check that nothing is left. Namespaced objects without a
    namespace go to ``namespace`` (kubectl's)."""
    if source[0] == "-k":
        docs = [d for d in yaml.safe_load_all(k.ok("kustomize", source[1])) if d]
    else:
        docs = _documents(Path(source[1]))
    applied = k.ok("apply", "--server-side", *source).splitlines()
    assert len(applied) == len(docs)
    assert all(line.endswith(" serverside-applied") for line in applied), applied

    listed = json.loads(k.ok("get", *source, "-o", "json", "--show-managed-fields"))
    items = listed["items"] if listed.get("kind") == "List" else [listed]
    wanted = [_identity(d) for d in docs]
    # kubectl fills in the namespace of a namespaced object from its context.
    assert [(*w[:2], w[3]) for w in wanted] == [(*g[:2], g[3]) for g in map(_identity, items)]
    for doc, want, item in zip(docs, wanted, items, strict=True):
        meta = item["metadata"]
        if want[2]:
            assert meta["namespace"] == want[2]
        elif namespace and meta.get("namespace"):
            assert meta["namespace"] == namespace
        assert meta["uid"]
        assert meta["resourceVersion"]
        # The applier owns what it set; an object of a bare name owns nothing, and an empty
        # field set is no entry, as Kubernetes' field manager drops those.
        owns = set(doc) - {"apiVersion", "kind", "metadata"} or set(doc["metadata"]) - {
            "name",
            "namespace",
        }
        operations = [m["operation"] for m in meta.get("managedFields", [])]
        assert ("Apply" in operations) == bool(owns), json.dumps(item)

    # kubectl says "<kind> \"<name>\" deleted" (plus " from <ns> namespace" when namespaced).
    deleted = k.ok("delete", *source).splitlines()
    assert len(deleted) == len(docs)
    assert all(" deleted" in line for line in deleted), deleted
    assert _eventually(
        lambda: k.ok("get", *source, "--ignore-not-found", "-o", "name").strip() == ""
    )
    missing = k.run("get", *source)
    assert missing.code == 1
    assert missing.stderr.count("(NotFound)") == len(docs)


# ------------------------------------------------------------------- published bundles


def _published(name: str) -> Path:
    folder = BUNDLES / name
    if not folder.is_dir():
        pytest.skip(f"install bundles not found at {BUNDLES}")
    return folder


def test_kube_state_metrics_installs_reads_back_and_deletes(kubectl: Kubectl) -> None:
    _install_read_back_and_delete(kubectl, ("-f", str(_published("kube-state-metrics"))))


def _metrics_server_kustomization(tmp_path: Path) -> Path:
    """metrics-server's base as the project builds it: the copied files beside the
    kustomization.yaml of the same commit (``commonLabels: k8s-app: metrics-server``, which
    gives the Deployment its selector and the template its labels)."""
    folder = _published("metrics-server")
    target = tmp_path / "metrics-server"
    target.mkdir()
    names = sorted(p.name for p in folder.glob("*.yaml"))
    for name in names:
        (target / name).write_text((folder / name).read_text())
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "commonLabels": {"k8s-app": "metrics-server"},
        "resources": names,
    }
    (target / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    return target


def test_metrics_server_installs_with_its_api_service_unavailable(
    kubectl: Kubectl, tmp_path: Path
) -> None:
    folder = _metrics_server_kustomization(tmp_path)
    kubectl.ok("apply", "--server-side", "-k", str(folder))

    # The Service is there but nothing serves it: the aggregator's answer for a node-less
    # cluster, and no metrics.k8s.io group in discovery.
    def available() -> list[str]:
        rows = kubectl.ok("get", "apiservice", "v1beta1.metrics.k8s.io").splitlines()
        return rows[1].split()[1:4]

    assert _eventually(
        lambda: available() == ["kube-system/metrics-server", "False", "(EndpointsNotFound)"]
    )
    groups = kubectl.ok("api-versions").split()
    assert "apiregistration.k8s.io/v1" in groups
    assert "metrics.k8s.io/v1beta1" not in groups
    # Applying the same bundle again changes nothing and is answered as a re-apply.
    again = kubectl.ok("apply", "--server-side", "-k", str(folder)).splitlines()
    assert all(line.endswith(" serverside-applied") for line in again)
    _install_read_back_and_delete(kubectl, ("-k", str(folder)))


# ------------------------------------------------------ bundles in well-known projects' shape

_STORAGE_PROVISIONER = """\
apiVersion: v1
kind: ServiceAccount
metadata:
  name: local-path-provisioner-service-account
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: local-path-provisioner-role
rules:
  - apiGroups: [""]
    resources: ["nodes", "persistentvolumeclaims", "configmaps", "pods", "pods/log"]
    verbs: ["get", "list", "watch"]
  - apiGroups: [""]
    resources: ["persistentvolumes"]
    verbs: ["get", "list", "watch", "create", "patch", "update", "delete"]
  - apiGroups: ["storage.k8s.io"]
    resources: ["storageclasses"]
    verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: local-path-provisioner-bind
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: local-path-provisioner-role
subjects:
  - kind: ServiceAccount
    name: local-path-provisioner-service-account
    namespace: {namespace}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: local-path-provisioner
spec:
  replicas: 1
  selector:
    matchLabels:
      app: local-path-provisioner
  template:
    metadata:
      labels:
        app: local-path-provisioner
    spec:
      serviceAccountName: local-path-provisioner-service-account
      containers:
        - name: local-path-provisioner
          image: rancher/local-path-provisioner:v0.0.31
          command:
            - local-path-provisioner
            - --debug
            - start
            - --config
            - /etc/config/config.json
          volumeMounts:
            - name: config-volume
              mountPath: /etc/config/
          env:
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
      volumes:
        - name: config-volume
          configMap:
            name: local-path-config
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-path
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local-path-config
data:
  config.json: |-
    {"nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES",
                      "paths": ["/opt/local-path-provisioner"]}]}
"""

_INGRESS_CONTROLLER = """\
apiVersion: v1
kind: ServiceAccount
metadata:
  name: ingress-nginx
  labels:
    app.kubernetes.io/name: ingress-nginx
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: ingress-nginx
rules:
  - apiGroups: [""]
    resources: ["configmaps", "pods", "secrets", "endpoints"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    resourceNames: ["ingress-nginx-leader"]
    verbs: ["get", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: ingress-nginx
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: ingress-nginx
subjects:
  - kind: ServiceAccount
    name: ingress-nginx
    namespace: {namespace}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ingress-nginx-controller
data:
  allow-snippet-annotations: "false"
---
apiVersion: v1
kind: Service
metadata:
  name: ingress-nginx-controller
spec:
  type: ClusterIP
  ipFamilyPolicy: SingleStack
  ipFamilies: [IPv4]
  ports:
    - name: http
      port: 80
      protocol: TCP
      targetPort: http
      appProtocol: http
    - name: https
      port: 443
      protocol: TCP
      targetPort: https
      appProtocol: https
  selector:
    app.kubernetes.io/name: ingress-nginx
    app.kubernetes.io/component: controller
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ingress-nginx-controller
spec:
  revisionHistoryLimit: 10
  selector:
    matchLabels:
      app.kubernetes.io/name: ingress-nginx
      app.kubernetes.io/component: controller
  template:
    metadata:
      labels:
        app.kubernetes.io/name: ingress-nginx
        app.kubernetes.io/component: controller
    spec:
      serviceAccountName: ingress-nginx
      terminationGracePeriodSeconds: 300
      nodeSelector:
        kubernetes.io/os: linux
      containers:
        - name: controller
          image: registry.k8s.io/ingress-nginx/controller:v1.12.0
          args: ["/nginx-ingress-controller", "--election-id=ingress-nginx-leader"]
          securityContext:
            runAsNonRoot: true
            runAsUser: 101
            allowPrivilegeEscalation: false
            capabilities:
              drop: ["ALL"]
              add: ["NET_BIND_SERVICE"]
          ports:
            - name: http
              containerPort: 80
              protocol: TCP
            - name: https
              containerPort: 443
              protocol: TCP
          readinessProbe:
            httpGet:
              path: /healthz
              port: 10254
          resources:
            requests:
              cpu: 100m
              memory: 90Mi
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: ingress-nginx-controller
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: ingress-nginx
      app.kubernetes.io/component: controller
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: ingress-nginx-controller
spec:
  podSelector:
    matchLabels:
      app.kubernetes.io/name: ingress-nginx
  policyTypes: [Ingress]
  ingress:
    - ports:
        - port: http
        - port: https
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx-{namespace}
spec:
  controller: k8s.io/ingress-nginx
"""

_METRICS_ADAPTER = """\
apiVersion: v1
kind: Service
metadata:
  name: prometheus-adapter
spec:
  ports:
    - name: https
      port: 443
      targetPort: 6443
  selector:
    app.kubernetes.io/name: prometheus-adapter
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.custom.metrics.k8s.io
spec:
  group: custom.metrics.k8s.io
  version: v1beta1
  service:
    name: prometheus-adapter
    namespace: {namespace}
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: 100
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: custom-metrics-reader-{namespace}
  labels:
    rbac.authorization.k8s.io/aggregate-to-view: "true"
    example.com/aggregate-to-metrics: "true"
rules:
  - apiGroups: ["custom.metrics.k8s.io"]
    resources: ["*"]
    verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: metrics-viewer-{namespace}
aggregationRule:
  clusterRoleSelectors:
    - matchLabels:
        example.com/aggregate-to-metrics: "true"
rules: []
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: metrics-critical-{namespace}
value: 1000000
globalDefault: false
description: Metrics pipeline pods.
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  minReplicas: 2
  maxReplicas: 10
  metrics:
    - type: Pods
      pods:
        metric:
          name: http_requests_per_second
        target:
          type: AverageValue
          averageValue: "100"
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 80
"""

_WEBHOOK_OPERATOR = """\
apiVersion: v1
kind: Service
metadata:
  name: operator-webhook
spec:
  ports:
    - name: https
      port: 443
      targetPort: 10250
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: operator-webhook-{namespace}
webhooks:
  - name: webhook.operator.example.com
    admissionReviewVersions: ["v1"]
    sideEffects: None
    failurePolicy: Fail
    clientConfig:
      service:
        name: operator-webhook
        namespace: {namespace}
        path: /validate
    rules:
      - apiGroups: ["operator.example.com"]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["*/*"]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: operator-webhook-{namespace}
webhooks:
  - name: webhook.operator.example.com
    admissionReviewVersions: ["v1"]
    sideEffects: None
    clientConfig:
      service:
        name: operator-webhook
        namespace: {namespace}
        path: /mutate
    rules:
      - apiGroups: ["operator.example.com"]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["*/*"]
"""

_SHAPED: dict[str, str] = {
    "storage-provisioner": _STORAGE_PROVISIONER,
    "ingress-controller": _INGRESS_CONTROLLER,
    "metrics-adapter": _METRICS_ADAPTER,
    "webhook-operator": _WEBHOOK_OPERATOR,
}


@pytest.mark.parametrize("bundle", sorted(_SHAPED))
def test_bundles_in_the_shape_of_well_known_installs(
    k: Kubectl, namespace: str, tmp_path: Path, bundle: str
) -> None:
    folder = tmp_path / bundle
    folder.mkdir()
    (folder / "install.yaml").write_text(_SHAPED[bundle].replace("{namespace}", namespace))
    _install_read_back_and_delete(k, ("-f", str(folder)), namespace)
