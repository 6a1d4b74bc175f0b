"""NetworkPolicy, PriorityClass, RuntimeClass and EndpointSlice with real kubectl and the
Python client: discovery, server-side apply, the columns ``kubectl get`` prints (wide too),
refusals in Kubernetes' words, the system priority classes; on LMDB and on etcd."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl
from tests.clients.manifests import to_yaml


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


def _policy(name: str = "web", port: Any = 80) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name},
        "spec": {
            "podSelector": {"matchLabels": {"app": "web"}},
            "ingress": [
                {
                    "from": [
                        {"namespaceSelector": {"matchLabels": {"team": "a"}}},
                        {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}},
                    ],
                    "ports": [{"port": port}],
                }
            ],
        },
    }


def test_discovery_names_the_three_kinds(kubectl: Kubectl) -> None:
    rows = _rows(kubectl.ok("api-resources"))
    assert ["networkpolicies", "netpol", "networking.k8s.io/v1", "true", "NetworkPolicy"] in rows
    assert ["priorityclasses", "pc", "scheduling.k8s.io/v1", "false", "PriorityClass"] in rows
    assert ["runtimeclasses", "node.k8s.io/v1", "false", "RuntimeClass"] in rows


def test_network_policy_apply_get_and_refusals(k: Kubectl, namespace: str) -> None:
    k.write("np.yaml", to_yaml(_policy()))
    assert k.ok("apply", "--server-side", "-f", "np.yaml").strip() == (
        "networkpolicy.networking.k8s.io/web serverside-applied"
    )
    for args in (("get", "netpol"), ("get", "networkpolicies", "-o", "wide")):
        rows = _rows(k.ok(*args))
        assert rows[0] == ["NAME", "POD-SELECTOR", "AGE"]
        assert rows[1][:2] == ["web", "app=web"]
    stored = json.loads(k.ok("get", "netpol", "web", "-o", "json"))
    assert stored["spec"]["policyTypes"] == ["Ingress"]
    assert stored["spec"]["ingress"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]
    assert stored["metadata"]["generation"] == 1
    assert [line.split()[0] for line in k.ok("get", "all").splitlines()[1:]] == []

    # A second apply that changes the port bumps the generation.
    k.write("np.yaml", to_yaml(_policy(port=443)))
    k.ok("apply", "--server-side", "-f", "np.yaml")
    jsonpath = "{.metadata.generation} {.spec.ingress[0].ports[0].port}"
    assert k.ok("get", "netpol", "web", "-o", f"jsonpath={jsonpath}") == "2 443"

    bad = _policy(name="bad", port=70000)
    bad["spec"]["ingress"][0]["from"][1]["ipBlock"]["except"] = ["192.168.0.0/16"]
    k.write("bad.yaml", to_yaml(bad))
    result = k.fails("apply", "--server-side", "-f", "bad.yaml")
    assert 'The NetworkPolicy "bad" is invalid:' in result.stderr, (result.stderr, namespace)
    assert (
        'spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: "192.168.0.0/16": must be a '
        "strict subset of `cidr`"
    ) in result.stderr
    assert (
        "spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, "
        "inclusive"
    ) in result.stderr
    assert k.ok("delete", "netpol", "web").strip() == (
        f'networkpolicy.networking.k8s.io "web" deleted from {namespace} namespace'
    )
    assert k.ok("get", "netpol").strip() == ""


def test_priority_classes_system_ones_and_a_user_one(kubectl: Kubectl) -> None:
    rows = {r[0]: r for r in _rows(kubectl.ok("get", "pc"))[1:]}
    assert _rows(kubectl.ok("get", "priorityclasses"))[0] == [
        "NAME",
        "VALUE",
        "GLOBAL-DEFAULT",
        "AGE",
        "PREEMPTIONPOLICY",
    ]
    node, cluster = rows["system-node-critical"], rows["system-cluster-critical"]
    assert (node[1], node[2], node[-1]) == ("2000001000", "false", "PreemptLowerPriority")
    assert (cluster[1], cluster[2], cluster[-1]) == ("2000000000", "false", "PreemptLowerPriority")
    result = kubectl.fails("delete", "pc", "system-node-critical")
    assert (
        'priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system '
        "priority class and cannot be deleted"
    ) in result.stderr

    out = kubectl.ok(
        "create", "priorityclass", "kn-batch", "--value=1000", "--preemption-policy=Never"
    )
    assert out.strip() == "priorityclass.scheduling.k8s.io/kn-batch created"
    wide = _rows(kubectl.ok("get", "pc", "kn-batch", "-o", "wide"))
    assert [wide[1][i] for i in (0, 1, 2, 4)] == ["kn-batch", "1000", "false", "Never"]
    manifest = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "kn-batch"},
        "value": 1000,
        "preemptionPolicy": "Never",
        "description": "batch jobs",
    }
    kubectl.write("pc.yaml", to_yaml(manifest))
    kubectl.ok("apply", "--server-side", "--force-conflicts", "-f", "pc.yaml")
    jsonpath = "{.description} {.metadata.generation}"
    assert kubectl.ok("get", "pc", "kn-batch", "-o", f"jsonpath={jsonpath}") == "batch jobs 1"
    manifest["value"] = 5
    kubectl.write("pc.yaml", to_yaml(manifest))
    result = kubectl.fails("apply", "--server-side", "--force-conflicts", "-f", "pc.yaml")
    assert "value: Forbidden: may not be changed in an update." in result.stderr

    result = kubectl.fails("create", "priorityclass", "system-mine", "--value=10")
    assert (
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for "
        "system use only. error: system-mine is not a known system priority class"
    ) in result.stderr
    result = kubectl.fails("create", "priorityclass", "kn-huge", "--value=1000000001")
    assert (
        "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"
    ) in result.stderr
    kubectl.ok("delete", "pc", "kn-batch")


def test_runtime_class_apply_get_and_the_immutable_handler(kubectl: Kubectl) -> None:
    manifest = {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "kn-gvisor"},
        "handler": "runsc",
        "overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}},
        "scheduling": {
            "nodeSelector": {"runtime": "gvisor"},
            "tolerations": [{"key": "runtime", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }
    kubectl.write("rc.yaml", to_yaml(manifest))
    assert kubectl.ok("apply", "--server-side", "-f", "rc.yaml").strip() == (
        "runtimeclass.node.k8s.io/kn-gvisor serverside-applied"
    )
    for args in (("get", "runtimeclass"), ("get", "runtimeclasses", "-o", "wide")):
        rows = {r[0]: r for r in _rows(kubectl.ok(*args))}
        assert rows["NAME"] == ["NAME", "HANDLER", "AGE"]
        assert rows["kn-gvisor"][1] == "runsc"
    stored = json.loads(kubectl.ok("get", "runtimeclass", "kn-gvisor", "-o", "json"))
    assert stored["overhead"] == {"podFixed": {"cpu": "250m", "memory": "64Mi"}}
    assert "generation" not in stored["metadata"]
    manifest["handler"] = "kata"
    kubectl.write("rc.yaml", to_yaml(manifest))
    result = kubectl.fails("apply", "--server-side", "-f", "rc.yaml")
    assert 'handler: Invalid value: "kata": field is immutable' in result.stderr
    assert kubectl.ok("delete", "runtimeclass", "kn-gvisor").strip() == (
        'runtimeclass.node.k8s.io "kn-gvisor" deleted'
    )


def _error(caught: pytest.ExceptionInfo[ApiException]) -> tuple[int, str]:
    return caught.value.status, json.loads(caught.value.body)["reason"]


def test_python_client_network_policy_crud(api_client: client.ApiClient, namespace: str) -> None:
    networking = client.NetworkingV1Api(api_client)
    body = client.V1NetworkPolicy(
        metadata=client.V1ObjectMeta(name="egress"),
        spec=client.V1NetworkPolicySpec(
            pod_selector=client.V1LabelSelector(),
            egress=[
                client.V1NetworkPolicyEgressRule(
                    ports=[client.V1NetworkPolicyPort(port=53, protocol="UDP")],
                    to=[client.V1NetworkPolicyPeer(ip_block=client.V1IPBlock(cidr="0.0.0.0/0"))],
                )
            ],
        ),
    )
    created = networking.create_namespaced_network_policy(namespace, body)
    assert created.spec.policy_types == ["Ingress", "Egress"]
    assert created.spec.egress[0].ports[0].port == 53
    listed = networking.list_namespaced_network_policy(namespace).items
    assert [p.metadata.name for p in listed] == ["egress"]
    patched = networking.patch_namespaced_network_policy(
        "egress", namespace, {"spec": {"policyTypes": ["Egress"]}}
    )
    assert (patched.spec.policy_types, patched.metadata.generation) == (["Egress"], 2)
    with pytest.raises(ApiException) as invalid:
        networking.patch_namespaced_network_policy(
            "egress", namespace, {"spec": {"policyTypes": ["Sideways"]}}
        )
    assert _error(invalid) == (422, "Invalid")
    networking.delete_namespaced_network_policy("egress", namespace)
    assert networking.list_namespaced_network_policy(namespace).items == []


def test_python_client_priority_and_runtime_classes(api_client: client.ApiClient) -> None:
    scheduling = client.SchedulingV1Api(api_client)
    names = {pc.metadata.name: pc.value for pc in scheduling.list_priority_class().items}
    assert names["system-node-critical"] == 2000001000
    assert names["system-cluster-critical"] == 2000000000
    created = scheduling.create_priority_class(
        client.V1PriorityClass(metadata=client.V1ObjectMeta(name="kn-py"), value=7)
    )
    assert (created.preemption_policy, created.global_default) == ("PreemptLowerPriority", None)
    with pytest.raises(ApiException) as forbidden:
        scheduling.delete_priority_class("system-cluster-critical")
    assert _error(forbidden) == (403, "Forbidden")
    scheduling.delete_priority_class("kn-py")

    node = client.NodeV1Api(api_client)
    runtime = node.create_runtime_class(
        client.V1RuntimeClass(metadata=client.V1ObjectMeta(name="kn-py-rc"), handler="runc")
    )
    assert runtime.handler == "runc"
    replaced = node.replace_runtime_class(
        "kn-py-rc",
        client.V1RuntimeClass(
            metadata=client.V1ObjectMeta(
                name="kn-py-rc", resource_version=runtime.metadata.resource_version
            ),
            handler="runc",
            scheduling=client.V1Scheduling(node_selector={"os": "linux"}),
        ),
    )
    assert replaced.scheduling.node_selector == {"os": "linux"}
    with pytest.raises(ApiException) as invalid:
        node.create_runtime_class(
            client.V1RuntimeClass(metadata=client.V1ObjectMeta(name="kn-bad"), handler="Bad")
        )
    assert _error(invalid) == (422, "Invalid")
    node.delete_runtime_class("kn-py-rc")
    assert "kn-py-rc" not in [r.metadata.name for r in node.list_runtime_class().items]


def _endpoint_slice(address: str = "10.1.0.5") -> dict[str, Any]:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "web-abc", "labels": {"kubernetes.io/service-name": "web"}},
        "addressType": "IPv4",
        "endpoints": [
            {"addresses": [address], "conditions": {"ready": True}, "nodeName": "node-1"}
        ],
        "ports": [{"name": "http", "port": 8080}],
    }


def test_endpoint_slice_apply_get_and_refusals(k: Kubectl, namespace: str) -> None:
    assert ["endpointslices", "discovery.k8s.io/v1", "true", "EndpointSlice"] in _rows(
        k.ok("api-resources")
    )
    k.write("es.yaml", to_yaml(_endpoint_slice()))
    assert k.ok("apply", "--server-side", "-f", "es.yaml").strip() == (
        "endpointslice.discovery.k8s.io/web-abc serverside-applied"
    )
    for args in (("get", "endpointslices"), ("get", "endpointslice", "-o", "wide")):
        rows = _rows(k.ok(*args))
        assert rows[0] == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
        assert rows[1][:4] == ["web-abc", "IPv4", "8080", "10.1.0.5"]
    stored = json.loads(k.ok("get", "endpointslice", "web-abc", "-o", "json"))
    assert stored["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]
    assert stored["metadata"]["generation"] == 1
    selected = k.ok("get", "endpointslices", "-l", "kubernetes.io/service-name=web", "-o", "name")
    assert selected.strip() == "endpointslice.discovery.k8s.io/web-abc"

    k.write("es.yaml", to_yaml(_endpoint_slice("10.1.0.6")))
    k.ok("apply", "--server-side", "-f", "es.yaml")
    jsonpath = "{.metadata.generation} {.endpoints[0].addresses[0]}"
    assert k.ok("get", "endpointslice", "web-abc", "-o", f"jsonpath={jsonpath}") == "2 10.1.0.6"

    k.write("es.yaml", to_yaml(_endpoint_slice("127.0.0.1")))
    result = k.fails("apply", "--server-side", "-f", "es.yaml")
    assert (
        'endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback '
        "range (127.0.0.0/8, ::1/128)"
    ) in result.stderr, (result.stderr, namespace)
    changed = _endpoint_slice()
    changed["addressType"] = "FQDN"
    k.write("es.yaml", to_yaml(changed))
    result = k.fails("apply", "--server-side", "-f", "es.yaml")
    assert 'addressType: Invalid value: "FQDN": field is immutable' in result.stderr
    assert k.ok("delete", "endpointslice", "web-abc").strip() == (
        f'endpointslice.discovery.k8s.io "web-abc" deleted from {namespace} namespace'
    )


def test_python_client_endpoint_slice_crud(api_client: client.ApiClient, namespace: str) -> None:
    discovery = client.DiscoveryV1Api(api_client)
    body = client.V1EndpointSlice(
        metadata=client.V1ObjectMeta(name="db-1"),
        address_type="IPv6",
        endpoints=[
            client.V1Endpoint(
                addresses=["2001:db8::5"],
                conditions=client.V1EndpointConditions(ready=True, serving=True),
                hints=client.V1EndpointHints(for_zones=[client.V1ForZone(name="zone-a")]),
            )
        ],
        ports=[client.DiscoveryV1EndpointPort(port=5432, protocol="TCP")],
    )
    created = discovery.create_namespaced_endpoint_slice(namespace, body)
    assert created.ports[0].name == ""
    assert created.endpoints[0].hints.for_zones[0].name == "zone-a"
    listed = discovery.list_namespaced_endpoint_slice(namespace).items
    assert [s.metadata.name for s in listed] == ["db-1"]
    with pytest.raises(ApiException) as invalid:
        discovery.patch_namespaced_endpoint_slice(
            "db-1", namespace, {"endpoints": [{"addresses": ["10.0.0.1"]}]}
        )
    assert _error(invalid) == (422, "Invalid")
    assert "must be a valid IPv6 address" in json.loads(invalid.value.body)["message"]
    discovery.delete_namespaced_endpoint_slice("db-1", namespace)
    assert discovery.list_namespaced_endpoint_slice(namespace).items == []
