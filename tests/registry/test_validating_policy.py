"""ValidatingAdmissionPolicy in process (``kstore.open``): what a policy and its bindings do to
the requests they match, as kube-apiserver's plugin does it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

import kstore
from kstore.api.cel.admission import AuthorizationCheck, AuthorizationDecision
from kstore.embedded import Client
from kstore.errors import Forbidden, Invalid, KStoreError, RequestEntityTooLarge
from kstore.registry.admission.policy import (
    VALIDATION_FAILURE_ANNOTATION,
    plugin_of,
    set_authorizer,
)
from kstore.registry.interface import CreateOptions, RequestContext, UserInfo
from tests.registry.objects import wait_for

GROUP_VERSION = "admissionregistration.k8s.io/v1"
CONFIGMAPS = {
    "apiGroups": [""],
    "apiVersions": ["v1"],
    "operations": ["CREATE", "UPDATE", "DELETE"],
    "resources": ["configmaps"],
}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    warnings: list[str] = []
    with kstore.open(
        f"lmdb://{tmp_path / 'store'}", controllers=(), on_warning=warnings.append
    ) as c:
        c.warnings = warnings  # type: ignore[attr-defined]
        yield c


def _warnings(client: Client) -> list[str]:
    found: list[str] = client.warnings  # type: ignore[attr-defined]
    return found


def bind(
    client: Client,
    name: str,
    spec: dict[str, Any],
    *,
    binding: dict[str, Any] | None = None,
    binding_name: str = "",
) -> None:
    """Create the policy ``name`` and a Deny binding of it (``binding`` adds to its spec),
    then wait until both are in force."""
    policies = client.resource(GROUP_VERSION, "validatingadmissionpolicies")
    bindings = client.resource(GROUP_VERSION, "validatingadmissionpolicybindings")
    full = {"matchConstraints": {"resourceRules": [CONFIGMAPS]}, **spec}
    policies.create({"metadata": {"name": name}, "spec": full})
    binding_name = binding_name or f"{name}-binding"
    bspec = {"policyName": name, "validationActions": ["Deny"], **(binding or {})}
    bindings.create({"metadata": {"name": binding_name}, "spec": bspec})
    plugin = plugin_of(client.registry)
    assert plugin is not None
    assert wait_for(lambda: (name, binding_name) in plugin.in_force(), timeout=2.0)


def configmaps(client: Client, namespace: str = "default") -> Any:
    return client.resource("v1", "configmaps", namespace=namespace)


def cm(name: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, **meta}, "data": data or {}}


def refused(call: Any, *args: Any) -> KStoreError:
    with pytest.raises(KStoreError) as info:
        call(*args)
    return info.value


def test_a_false_validation_denies_with_kubernetes_message_and_422(client: Client) -> None:
    bind(client, "no-bad", {"validations": [{"expression": "object.metadata.name != 'bad'"}]})
    configmaps(client).create(cm("good"))
    error = refused(configmaps(client).create, cm("bad"))
    assert isinstance(error, Invalid)
    assert error.code == 422
    text = (
        "ValidatingAdmissionPolicy 'no-bad' with binding 'no-bad-binding' denied request: "
        "failed expression: object.metadata.name != 'bad'"
    )
    assert error.message == f'configmaps "bad" is forbidden: {text}'
    assert [c.message for c in error.causes] == [text]


def test_message_message_expression_and_reason(client: Client) -> None:
    bind(
        client,
        "messages",
        {
            "validations": [
                {"expression": "object.metadata.name != 'a'", "message": "no a"},
                {
                    "expression": "object.metadata.name != 'b'",
                    "messageExpression": "'name ' + object.metadata.name + ' is taken'",
                    "message": "fallback",
                    "reason": "Forbidden",
                },
                {
                    "expression": "object.metadata.name != 'c'",
                    "messageExpression": "object.missing",
                    "message": "fallback c",
                },
                {
                    "expression": "object.metadata.name != 'd'",
                    "messageExpression": "'  '",
                    "reason": "RequestEntityTooLarge",
                },
            ]
        },
    )
    a = refused(configmaps(client).create, cm("a"))
    assert isinstance(a, Invalid) and a.message.endswith("denied request: no a")
    b = refused(configmaps(client).create, cm("b"))
    assert isinstance(b, Forbidden) and b.code == 403
    assert b.message.endswith("denied request: name b is taken")
    c = refused(configmaps(client).create, cm("c"))
    assert isinstance(c, Invalid)
    assert c.message.endswith("denied request: fallback c")
    d = refused(configmaps(client).create, cm("d"))
    assert isinstance(d, RequestEntityTooLarge) and d.code == 413
    assert d.message.endswith("denied request: failed expression: object.metadata.name != 'd'")


def test_warn_and_audit_actions_admit_and_report(client: Client) -> None:
    bind(
        client,
        "soft",
        {"validations": [{"expression": "size(object.data) > 0", "message": "empty"}]},
        binding={"validationActions": ["Warn", "Audit"]},
    )
    annotations: dict[str, str] = {}
    store = client.registry.store("", "configmaps")
    scheme = client.scheme
    hub = scheme.to_hub({"apiVersion": "v1", "kind": "ConfigMap", **cm("empty")})
    ctx = RequestContext(namespace="default", audit_annotations=annotations)
    result = store.create(ctx, hub, CreateOptions())
    assert result.warnings == (
        "Validation failed for ValidatingAdmissionPolicy 'soft' with binding 'soft-binding': empty",
    )
    assert orjson.loads(annotations[VALIDATION_FAILURE_ANNOTATION]) == [
        {
            "message": "empty",
            "policy": "soft",
            "binding": "soft-binding",
            "expressionIndex": 0,
            "validationActions": ["Warn", "Audit"],
        }
    ]
    configmaps(client).create(cm("full", {"k": "v"}))
    assert len(_warnings(client)) == 0


def test_audit_annotations_are_keyed_by_policy(client: Client) -> None:
    bind(
        client,
        "audited",
        {
            "validations": [{"expression": "true"}],
            "auditAnnotations": [
                {"key": "name", "valueExpression": "'cm ' + object.metadata.name"},
                {"key": "skipped", "valueExpression": "null"},
            ],
        },
    )
    annotations: dict[str, str] = {}
    store = client.registry.store("", "configmaps")
    hub = client.scheme.to_hub({"apiVersion": "v1", "kind": "ConfigMap", **cm("x")})
    store.create(
        RequestContext(namespace="default", audit_annotations=annotations), hub, CreateOptions()
    )
    assert annotations == {"audited/name": "cm x"}


def test_params_by_name_in_the_requests_namespace_or_the_refs(client: Client) -> None:
    configmaps(client, "kube-system").create(cm("limits", {"max": "2"}))
    configmaps(client).create(cm("limits", {"max": "1"}))
    bind(
        client,
        "sized",
        {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {
                "resourceRules": [{**CONFIGMAPS, "resourceNames": ["a", "b", "c"]}]
            },
            "validations": [
                {
                    "expression": "size(object.data) <= int(params.data.max)",
                    "messageExpression": "'at most ' + params.data.max + ' keys'",
                }
            ],
        },
        binding={"paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"}},
    )
    configmaps(client).create(cm("a", {"k": "v"}))
    error = refused(configmaps(client).create, cm("b", {"k": "v", "l": "w"}))
    assert error.message.endswith("denied request: at most 1 keys")
    # No param in this namespace: Deny.
    client.resource("v1", "namespaces").create({"metadata": {"name": "other"}})
    error = refused(configmaps(client, "other").create, cm("c"))
    assert error.message.endswith(
        "ValidatingAdmissionPolicy 'sized' with binding 'sized-binding' denied request: "
        "failed to configure binding: no params found for policy binding with `Deny` "
        "parameterNotFoundAction"
    )


def test_params_from_another_namespace_and_not_found_allowed(client: Client) -> None:
    configmaps(client, "kube-system").create(cm("limits", {"max": "0"}))
    bind(
        client,
        "empty-only",
        {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{**CONFIGMAPS, "resourceNames": ["x"]}]},
            "validations": [{"expression": "size(object.data) <= int(params.data.max)"}],
        },
        binding={
            "paramRef": {
                "name": "limits",
                "namespace": "kube-system",
                "parameterNotFoundAction": "Deny",
            }
        },
    )
    refused(configmaps(client).create, cm("x", {"k": "v"}))
    bind(
        client,
        "missing-param",
        {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{**CONFIGMAPS, "resourceNames": ["y"]}]},
            "validations": [{"expression": "false"}],
        },
        binding={"paramRef": {"name": "nowhere", "parameterNotFoundAction": "Allow"}},
    )
    configmaps(client).create(cm("y"))


def test_params_by_selector_are_each_evaluated(client: Client) -> None:
    configmaps(client).create(cm("forbid-x", {"name": "x"}, labels={"rule": "yes"}))
    configmaps(client).create(cm("forbid-y", {"name": "y"}, labels={"rule": "yes"}))
    configmaps(client).create(cm("ignored", {"name": "z"}))
    bind(
        client,
        "names",
        {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {
                "resourceRules": [CONFIGMAPS],
                "objectSelector": {"matchLabels": {"checked": "yes"}},
            },
            "validations": [
                {
                    "expression": "object.metadata.name != params.data.name",
                    "messageExpression": "'forbidden by ' + params.metadata.name",
                }
            ],
        },
        binding={
            "paramRef": {
                "selector": {"matchLabels": {"rule": "yes"}},
                "parameterNotFoundAction": "Allow",
            }
        },
    )
    assert refused(configmaps(client).create, cm("x", labels={"checked": "yes"})).message.endswith(
        "forbidden by forbid-x"
    )
    assert refused(configmaps(client).create, cm("y", labels={"checked": "yes"})).message.endswith(
        "forbidden by forbid-y"
    )
    configmaps(client).create(cm("z", labels={"checked": "yes"}))


def test_no_param_ref_gives_null_params(client: Client) -> None:
    bind(
        client,
        "nullable",
        {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "validations": [{"expression": "params == null && object.metadata.name != 'n'"}],
        },
    )
    configmaps(client).create(cm("m"))
    refused(configmaps(client).create, cm("n"))


def test_match_conditions_skip_or_fail(client: Client) -> None:
    bind(
        client,
        "conditioned",
        {
            "matchConditions": [
                {"name": "labelled", "expression": "has(object.metadata.labels)"},
                {"name": "strict", "expression": "object.metadata.labels.strict == 'yes'"},
            ],
            "validations": [{"expression": "false", "message": "strict configmaps are refused"}],
        },
    )
    configmaps(client).create(cm("plain"))
    error = refused(configmaps(client).create, cm("s", labels={"strict": "yes"}))
    assert error.message.endswith("denied request: strict configmaps are refused")
    # The second condition errs (no such key): the failure policy (Fail) refuses.
    error = refused(configmaps(client).create, cm("other", labels={"x": "y"}))
    assert error.message.endswith(
        "denied request: expression 'object.metadata.labels.strict == 'yes'' resulted in "
        "error: no such key: strict"
    )


def test_failure_policy_ignore_admits_on_errors(client: Client) -> None:
    bind(
        client,
        "ignored",
        {
            "failurePolicy": "Ignore",
            "validations": [{"expression": "object.data.missing == 'x'"}],
        },
    )
    configmaps(client).create(cm("fine"))
    bind(
        client,
        "failing",
        {"validations": [{"expression": "object.data.missing == 'x'"}]},
    )
    error = refused(configmaps(client).create, cm("refused"))
    assert error.message.endswith(
        "ValidatingAdmissionPolicy 'failing' with binding 'failing-binding' denied request: "
        "expression 'object.data.missing == 'x'' resulted in error: no such key: missing"
    )


def test_cost_budget_is_enforced(client: Client) -> None:
    expensive = (
        "lists.range(200).all(a, lists.range(200).all(b, lists.range(200).all(c, a + b + c >= 0)))"
    )
    bind(client, "costly", {"validations": [{"expression": expensive}]})
    error = refused(configmaps(client).create, cm("any"))
    assert error.message.endswith("operation cancelled: actual cost limit exceeded") or (
        error.message.endswith(
            "validation failed due to running out of cost budget, no further validation "
            "rules will be run"
        )
    )


def test_variables_are_lazy_cached_and_in_order(client: Client) -> None:
    bind(
        client,
        "vars",
        {
            "variables": [
                {"name": "labels", "expression": "object.metadata.?labels.orValue({})"},
                {"name": "team", "expression": "variables.labels.team"},
                {"name": "broken", "expression": "object.data.nothing"},
            ],
            "validations": [
                {"expression": "!('team' in variables.labels) || variables.team != 'x'"},
                {"expression": "object.metadata.name != 'b' || variables.broken == ''"},
            ],
        },
    )
    configmaps(client).create(cm("ok", labels={"team": "y"}))
    configmaps(client).create(cm("no-labels"))
    refused(configmaps(client).create, cm("x", labels={"team": "x"}))
    error = refused(configmaps(client).create, cm("b"))
    assert 'composited variable "broken" fails to evaluate: no such key: nothing' in error.message


def test_request_old_object_and_namespace_object(client: Client) -> None:
    client.resource("v1", "namespaces").create(
        {"metadata": {"name": "guarded", "labels": {"tier": "gold"}}}
    )
    bind(
        client,
        "context",
        {
            "validations": [
                {
                    "expression": "request.operation != 'UPDATE' || "
                    "object.data.v > oldObject.data.v",
                    "message": "v must grow",
                },
                {
                    "expression": "request.operation != 'DELETE' || "
                    "(object == null && oldObject.metadata.name == request.name)",
                },
                {
                    "expression": "namespaceObject.metadata.labels.tier == 'gold' && "
                    "!has(namespaceObject.metadata.managedFields) && "
                    "request.kind.kind == 'ConfigMap' && request.resource.resource == "
                    "'configmaps' && request.requestKind.version == 'v1' && "
                    "request.namespace == 'guarded' && request.dryRun == false && "
                    "request.options.kind in ['CreateOptions', 'UpdateOptions', 'DeleteOptions']",
                    "message": "context",
                },
            ],
            "matchConstraints": {
                "resourceRules": [CONFIGMAPS],
                "namespaceSelector": {"matchLabels": {"tier": "gold"}},
            },
        },
    )
    guarded = configmaps(client, "guarded")
    guarded.create(cm("c", {"v": "1"}))
    error = refused(guarded.update, cm("c", {"v": "0"}))
    assert error.message.endswith("v must grow")
    guarded.update(cm("c", {"v": "2"}))
    guarded.delete("c")
    # Another namespace is not selected.
    configmaps(client).create(cm("c", {"v": "1"}))
    configmaps(client).update(cm("c", {"v": "0"}))


def test_user_info_and_the_authorizer(client: Client) -> None:
    asked: list[AuthorizationCheck] = []

    def authorize(check: AuthorizationCheck) -> AuthorizationDecision:
        asked.append(check)
        allowed = check.user.get("username") == "admin" or check.verb == "get"
        return AuthorizationDecision(allowed, "" if allowed else "not an admin")

    set_authorizer(client.registry, authorize)
    bind(
        client,
        "authz",
        {
            "validations": [
                {
                    "expression": "authorizer.group('').resource('secrets')"
                    ".namespace(object.metadata.namespace).check('create').allowed()",
                    "messageExpression": "request.userInfo.username + ' may not'",
                },
                {
                    "expression": "authorizer.group('').resource('secrets').check('create')"
                    ".reason() in ['', 'not an admin']"
                },
                {"expression": "authorizer.requestResource.check('get').allowed()"},
                {
                    "expression": "authorizer.serviceAccount('default', 'robot')"
                    ".path('/healthz').check('get').allowed()"
                },
            ]
        },
    )
    store = client.registry.store("", "configmaps")

    def create(user: str, name: str) -> None:
        hub = client.scheme.to_hub({"apiVersion": "v1", "kind": "ConfigMap", **cm(name)})
        ctx = RequestContext(namespace="default", user=UserInfo(name=user, groups=("g",)))
        store.create(ctx, hub, CreateOptions())

    create("admin", "one")
    error = refused(create, "alice", "two")
    assert error.message.endswith("denied request: alice may not")
    first = asked[0]
    assert (first.verb, first.resource, first.namespace, first.api_group) == (
        "create",
        "secrets",
        "default",
        "",
    )
    assert first.user == {"username": "admin", "groups": ["g"]}
    request_check = next(c for c in asked if c.verb == "get" and c.resource_request)
    assert (request_check.resource, request_check.api_version) == ("configmaps", "v1")
    path_check = next(c for c in asked if not c.resource_request)
    assert path_check.path == "/healthz"
    assert path_check.user["username"] == "system:serviceaccount:default:robot"


def test_binding_match_resources_narrow_the_policy(client: Client) -> None:
    bind(
        client,
        "narrow",
        {"validations": [{"expression": "false", "message": "refused"}]},
        binding={
            "matchResources": {
                "objectSelector": {"matchExpressions": [{"key": "guard", "operator": "Exists"}]},
                "excludeResourceRules": [{**CONFIGMAPS, "resourceNames": ["exempt"]}],
            }
        },
    )
    configmaps(client).create(cm("unguarded"))
    refused(configmaps(client).create, cm("guarded", labels={"guard": "1"}))
    configmaps(client).create(cm("exempt", labels={"guard": "1"}))


def test_a_policy_takes_effect_within_a_second_and_is_recompiled_on_change(
    client: Client,
) -> None:
    policies = client.resource(GROUP_VERSION, "validatingadmissionpolicies")
    bindings = client.resource(GROUP_VERSION, "validatingadmissionpolicybindings")
    rules = {"resourceRules": [CONFIGMAPS]}
    policies.create(
        {
            "metadata": {"name": "live"},
            "spec": {"matchConstraints": rules, "validations": [{"expression": "false"}]},
        }
    )
    bindings.create(
        {
            "metadata": {"name": "live"},
            "spec": {"policyName": "live", "validationActions": ["Deny"]},
        }
    )
    started = time.monotonic()
    n = 0

    def denied() -> bool:
        nonlocal n
        n += 1
        try:
            configmaps(client).create(cm(f"probe-{n}"))
        except Invalid:
            return True
        return False

    assert wait_for(denied, timeout=1.0)
    assert time.monotonic() - started < 1.0
    # A merge patch, not get-then-update: the policy's status controller writes its type
    # checking right after the create, and a read-modify-write may lose that race (409).
    policies.patch(
        "live", {"spec": {"validations": [{"expression": "object.metadata.name != 'x'"}]}}
    )
    assert wait_for(lambda: not denied(), timeout=1.0)
    refused(configmaps(client).create, cm("x"))
    status = policies.get("live")["status"]
    assert wait_for(
        lambda: policies.get("live")["status"].get("observedGeneration") == 2, timeout=2.0
    ), status
    assert policies.get("live")["status"]["typeChecking"] == {}
    bindings.delete("live")
    assert wait_for(lambda: not denied() and _admits(client, "x"), timeout=1.0)


def _admits(client: Client, name: str) -> bool:
    try:
        configmaps(client).create(cm(name))
    except KStoreError:
        return False
    return True


def test_a_binding_of_a_missing_policy_binds_nothing(client: Client) -> None:
    bindings = client.resource(GROUP_VERSION, "validatingadmissionpolicybindings")
    bindings.create(
        {
            "metadata": {"name": "orphan"},
            "spec": {"policyName": "nowhere", "validationActions": ["Deny"]},
        }
    )
    time.sleep(0.1)
    configmaps(client).create(cm("free"))


def test_equivalent_versions_see_the_object_in_the_rules_version(client: Client) -> None:
    rule = {
        "apiGroups": ["autoscaling"],
        "apiVersions": ["v1"],
        "operations": ["CREATE"],
        "resources": ["horizontalpodautoscalers"],
    }
    bind(
        client,
        "hpa",
        {
            "matchConstraints": {"resourceRules": [rule]},
            "validations": [
                {
                    "expression": "object.apiVersion == 'autoscaling/v1' && "
                    "object.spec.maxReplicas <= 5",
                    "message": "too many",
                }
            ],
        },
    )
    hpas = client.resource("autoscaling/v2", "horizontalpodautoscalers", namespace="default")
    spec = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
        "minReplicas": 1,
    }
    hpas.create({"metadata": {"name": "small"}, "spec": {**spec, "maxReplicas": 3}})
    error = refused(hpas.create, {"metadata": {"name": "big"}, "spec": {**spec, "maxReplicas": 9}})
    assert error.message.endswith("denied request: too many")


def test_status_type_checking_warns_of_undefined_fields_of_the_matched_kinds(
    client: Client,
) -> None:
    policies = client.resource(GROUP_VERSION, "validatingadmissionpolicies")
    rules = [
        {
            "apiGroups": ["apps"],
            "apiVersions": ["v1"],
            "operations": ["CREATE"],
            "resources": ["deployments", "replicasets"],
        },
        {
            "apiGroups": ["*"],
            "apiVersions": ["*"],
            "operations": ["CREATE"],
            "resources": ["*"],
        },
    ]
    policies.create(
        {
            "metadata": {"name": "typos"},
            "spec": {
                "matchConstraints": {"resourceRules": rules},
                "validations": [
                    {"expression": "object.spec.replicas >= 0"},
                    {
                        "expression": "object.spec.replicsa > 1",
                        "messageExpression": "'x' + object.spec.template.spec.containers"
                        ".map(c, c.imag).join(',')",
                    },
                ],
            },
        }
    )

    def checked() -> dict[str, Any] | None:
        status = policies.get("typos").get("status") or {}
        return status if status.get("observedGeneration") == 1 else None

    assert wait_for(lambda: checked() is not None, timeout=2.0)
    status = checked()
    assert status is not None
    replicsa = (
        "ERROR: <input>:1:12: undefined field 'replicsa'\n"
        " | object.spec.replicsa > 1\n"
        " | ...........^\n"
    )
    imag = (
        "ERROR: <input>:1:52: undefined field 'imag'\n"
        " | 'x' + object.spec.template.spec.containers.map(c, c.imag).join(',')\n"
        " | ...................................................^\n"
    )
    assert status["typeChecking"] == {
        "expressionWarnings": [
            {
                "fieldRef": "spec.validations[1].expression",
                "warning": f"apps/v1, Kind=Deployment: {replicsa}\n"
                f"apps/v1, Kind=ReplicaSet: {replicsa}",
            },
            {
                "fieldRef": "spec.validations[1].messageExpression",
                "warning": f"apps/v1, Kind=Deployment: {imag}\napps/v1, Kind=ReplicaSet: {imag}",
            },
        ]
    }


def test_evaluation_errors_follow_the_bindings_actions(client: Client) -> None:
    bind(
        client,
        "warn-errors",
        {"validations": [{"expression": "object.data.missing == 'x'"}]},
        binding={"validationActions": ["Warn"]},
    )
    configmaps(client).create(cm("admitted"))
    assert _warnings(client) == [
        "Validation failed for ValidatingAdmissionPolicy 'warn-errors' with binding "
        "'warn-errors-binding': expression 'object.data.missing == 'x'' resulted in error: "
        "no such key: missing"
    ]


def test_the_servers_authorizer_answers_the_authorizer_variable() -> None:
    from kstore.server.app import policy_authorizer
    from kstore.server.filters.authorization import AlwaysDeny, Attributes, Decision

    asked: list[Attributes] = []

    class Recording(AlwaysDeny):
        def authorize(self, attributes: Attributes) -> Decision:
            asked.append(attributes)
            return super().authorize(attributes)

    authorize = policy_authorizer(Recording())
    check = AuthorizationCheck(
        user={"username": "alice", "groups": ["dev"], "extra": {"k": ["v"]}},
        verb="create",
        resource_request=True,
        api_group="apps",
        api_version="*",
        resource="deployments",
        subresource="scale",
        namespace="ns",
        name="web",
    )
    assert authorize(check) == AuthorizationDecision(False, "Everything is forbidden.")
    seen = asked[0]
    assert (seen.user.name, seen.user.groups, seen.user.extra) == (
        "alice",
        ("dev",),
        (("k", ("v",)),),
    )
    assert (seen.verb, seen.api_group, seen.resource, seen.subresource, seen.namespace) == (
        "create",
        "apps",
        "deployments",
        "scale",
        "ns",
    )
    masters = AuthorizationCheck(
        user={"username": "root", "groups": ["system:masters"]}, verb="get", resource_request=False
    )
    assert authorize(masters).allowed
    assert len(asked) == 1


def test_type_checking_reads_a_custom_kinds_schema(client: Client) -> None:
    group = "vap.example.com"
    crds = client.resource("apiextensions.k8s.io/v1", "customresourcedefinitions")
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "size": {"type": "integer"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                },
            }
        },
    }
    crds.create(
        {
            "metadata": {"name": f"widgets.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {"openAPIV3Schema": schema},
                    }
                ],
            },
        }
    )
    assert wait_for(lambda: _serves(client, f"{group}/v1", "widgets"), timeout=5.0)
    rule = {
        "apiGroups": [group],
        "apiVersions": ["v1"],
        "operations": ["CREATE"],
        "resources": ["widgets"],
    }
    bind(
        client,
        "widgets",
        {
            "matchConstraints": {"resourceRules": [rule]},
            "validations": [
                {"expression": "object.spec.size < 10 && object.spec.labels.any == 'x'"},
                {"expression": "object.metadata.name != 'x' && object.spec.sise < 10"},
            ],
        },
    )
    policies = client.resource(GROUP_VERSION, "validatingadmissionpolicies")
    assert wait_for(
        lambda: (policies.get("widgets").get("status") or {}).get("observedGeneration") == 1,
        timeout=2.0,
    )
    assert policies.get("widgets")["status"]["typeChecking"] == {
        "expressionWarnings": [
            {
                "fieldRef": "spec.validations[1].expression",
                "warning": f"{group}/v1, Kind=Widget: ERROR: <input>:1:43: undefined field "
                "'sise'\n | object.metadata.name != 'x' && object.spec.sise < 10\n"
                f" | {'.' * 42}^\n",
            }
        ]
    }
    widgets = client.resource(f"{group}/v1", "widgets", namespace="default")
    body = {"metadata": {"name": "w"}, "spec": {"size": 20, "labels": {"any": "x"}}}
    error = refused(widgets.create, body)
    assert error.message.endswith(
        "failed expression: object.spec.size < 10 && object.spec.labels.any == 'x'"
    )


def _serves(client: Client, api_version: str, plural: str) -> bool:
    try:
        client.resource(api_version, plural, namespace="default")
    except KStoreError:
        return False
    return True


def test_an_unknown_param_kind_is_a_configuration_error(client: Client) -> None:
    bind(
        client,
        "unknown-kind",
        {
            "paramKind": {"apiVersion": "example.com/v1", "kind": "Limits"},
            "validations": [{"expression": "true"}],
        },
        binding={"paramRef": {"name": "x", "parameterNotFoundAction": "Allow"}},
    )
    error = refused(configmaps(client).create, cm("any"))
    assert error.message.endswith(
        "ValidatingAdmissionPolicy 'unknown-kind' with binding 'unknown-kind-binding' denied "
        "request: failed to configure binding: paramKind kind "
        "`&ParamKind{APIVersion:example.com/v1,Kind:Limits,}` not known"
    )
