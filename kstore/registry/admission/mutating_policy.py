"""MutatingAdmissionPolicy: CEL mutations bound to requests by their bindings.

kube-apiserver's ``MutatingAdmissionPolicy`` plugin (``k8s.io/apiserver/pkg/admission/plugin/
policy/mutating``), first of the mutating phase's dynamic plugins (before
MutatingAdmissionWebhook). Policies, bindings and params come from the
:class:`~kstore.registry.admission.policy_source.PolicySource` ValidatingAdmissionPolicy uses;
what differs:

- only creates and updates are mutated (a delete has no object to change), and the
  admission configuration kinds are never mutated (Kubernetes' exemption);
- each invocation (policy, binding, param) whose ``matchConditions`` hold runs the policy's
  ``mutations`` in order on the object at the version the policy matched: an
  ``ApplyConfiguration`` expression builds an ``Object{...}`` merged into the object with
  server-side apply's structured merge (fields the kind does not declare are refused, and so
  is any atomic list, map or struct: ``may not mutate atomic arrays, maps or structs``); a
  ``JSONPatch`` expression builds the operations applied to it (a failed ``test`` leaves the
  object as it was). The result is defaulted and converted back;
- an error (an expression's, a type mismatch, a patch that does not apply, a configuration
  error) is the policy's failure: ignored under ``failurePolicy: Ignore``; otherwise, after
  every invocation ran, the request is refused with the first (403, reason Invalid,
  ``policy '<p>' with binding '<b>' denied request: <error>``);
- reinvocation (Kubernetes' rules): an invocation that changed the object asks the chain for a
  second pass and marks the invocations of ``reinvocationPolicy: IfNeeded`` policies that ran
  before it; a change by another plugin since this plugin last ran marks them all. On the
  second pass only the marked invocations run again.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from kstore.api.cel.admission import (
    RUNTIME_COST_BUDGET,
    Activation,
    AdmissionCelError,
    CompiledExpression,
    allow_all,
    match_conditions,
)
from kstore.api.cel.mutation import APPLY_CONFIGURATION, MutationExpression, compile_mutation
from kstore.api.gvk import HUB_VERSION, GroupVersionKind, Object
from kstore.api.patch_meta import DEDUCED, NodeKind, TypeNode, type_for_gvk
from kstore.errors import Cause, Forbidden, KStoreError
from kstore.registry.admission.matching import (
    EXEMPT_KINDS,
    Match,
    MatchRequest,
    constraints_match,
    match_request,
)
from kstore.registry.admission.policy_source import (
    ConfigError,
    PolicyExpressions,
    PolicySource,
    authorizer_of,
    in_version,
    labels_of,
    namespace_object,
    object_name,
)
from kstore.registry.admission.request import admission_request
from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Operation, Registry
from kstore.registry.patch.json_patch import JsonPatchError, apply_operations
from kstore.registry.patch.typed import SchemaError, merge, validate

__all__ = ["MutatingPolicies", "hooks", "plugin_of"]

_PLUGIN: Final = "MutatingAdmissionPolicy"


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True, slots=True)
class _Mutation:
    patch_type: str
    expression: MutationExpression


@dataclass(frozen=True, slots=True)
class _Policy:
    name: str
    generation: int
    failure_policy: str
    reinvocation_policy: str
    param_kind: tuple[str, str] | None
    constraints: Mapping[str, Any]
    match_conditions: tuple[tuple[str, CompiledExpression], ...]
    variables: Mapping[str, CompiledExpression]
    mutations: tuple[_Mutation, ...]


def _compile_policy(policy: Object) -> _Policy:
    spec = _map(policy.get("spec"))
    cel = PolicyExpressions(spec)
    mutations = []
    for m in _list(spec.get("mutations")):
        m = _map(m)
        patch_type = str(m.get("patchType") or "")
        member = "applyConfiguration" if patch_type == APPLY_CONFIGURATION else "jsonPatch"
        text = str(_map(m.get(member)).get("expression") or "")
        compiled = compile_mutation(text, patch_type, params=cel.has_params, variables=cel.names)
        mutations.append(_Mutation(patch_type, compiled))
    return _Policy(
        name=object_name(policy),
        generation=int(_map(policy.get("metadata")).get("generation") or 0),
        failure_policy=str(spec.get("failurePolicy") or "Fail"),
        reinvocation_policy=str(spec.get("reinvocationPolicy") or "Never"),
        param_kind=cel.param_kind_key(),
        constraints=_map(spec.get("matchConstraints")),
        match_conditions=cel.match_conditions(spec),
        variables=cel.variables,
        mutations=tuple(mutations),
    )


#: (policy, binding, param namespace, param name): one invocation, as Kubernetes keys it.
_Key = tuple[str, str, str, str]


@dataclass(slots=True)
class _Reinvocation:
    """The plugin's notes on one request between the chain's passes."""

    #: IfNeeded invocations run since the object last changed.
    invoked: set[_Key] = field(default_factory=set)
    #: Invocations to run again on the second pass.
    reinvoke: set[_Key] = field(default_factory=set)
    #: The object as this plugin left it on the first pass (JSON).
    last: bytes | None = None

    def require_reinvoking(self) -> None:
        self.reinvoke |= self.invoked
        self.invoked = set()


def _snapshot(obj: Object | None) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


class _PolicyFailure(Exception):
    """A mutation that could not be made (the failure policy decides)."""


@dataclass(frozen=True, slots=True)
class _Error:
    policy: str
    binding: str
    message: str


class _Refusal(Forbidden):
    """Kubernetes' refusal by policy: a 403 whose reason is Invalid."""

    reason = "Invalid"


class MutatingPolicies(PolicySource[_Policy]):
    """The mutating policies in force for one registry, and the hook applying them."""

    def __init__(self, registry: Registry) -> None:
        super().__init__(
            registry,
            policies="mutatingadmissionpolicies",
            bindings="mutatingadmissionpolicybindings",
            compile=_compile_policy,
        )

    def admit(self, attributes: AdmissionAttributes) -> None:
        """The mutating phase (see the module docstring)."""
        if attributes.operation not in (Operation.CREATE, Operation.UPDATE):
            return
        if attributes.object is None or not self.may_match(attributes):
            return
        definition = attributes.definition
        if (definition.group, definition.kind) in EXEMPT_KINDS:
            return
        state = attributes.plugin_state.setdefault(_PLUGIN, _Reinvocation())
        last = state.last
        if attributes.reinvoking and last is not None and last != _snapshot(attributes.object):
            state.require_reinvoking()
        try:
            errors = self._dispatch(attributes, state)
        finally:
            if not attributes.reinvoking:
                state.last = _snapshot(attributes.object)
        if errors:
            raise _refusal(attributes, errors)

    def _dispatch(self, attributes: AdmissionAttributes, state: _Reinvocation) -> list[_Error]:
        scheme = self._registry.scheme
        matching = match_request(attributes, scheme.is_served)
        namespaces: dict[str, Object | None] = {}
        errors: list[_Error] = []

        def labels(name: str) -> Mapping[str, str] | None:
            namespace = self.namespace(name, namespaces)
            return None if namespace is None else labels_of(namespace)

        def fail(policy: _Policy, binding: str, message: str) -> None:
            if policy.failure_policy != "Ignore":
                errors.append(_Error(policy.name, binding, message))

        for policy, bindings in self._active.values():
            try:
                found = constraints_match(policy.constraints, matching, labels)
            except KStoreError as exc:
                fail(policy, "", f"failed to configure policy: {exc}")
                continue
            if found is None:
                continue
            for binding in bindings:
                spec = _map(binding.get("spec"))
                binding_name = object_name(binding)
                match = spec.get("matchResources")
                try:
                    if constraints_match(_map(match) if match else None, matching, labels) is None:
                        continue
                    params = self.params_for(policy, spec, attributes.namespace, scheme)
                except (KStoreError, ConfigError) as exc:
                    fail(policy, binding_name, f"failed to configure binding: {exc}")
                    continue
                for param in params:
                    key = (policy.name, binding_name, *_param_key(param))
                    if attributes.reinvoking and key not in state.reinvoke:
                        continue
                    try:
                        changed = self._invoke(policy, found, matching, attributes, param, labels)
                    except _PolicyFailure as exc:
                        fail(policy, binding_name, str(exc))
                        continue
                    if changed:
                        state.require_reinvoking()
                        attributes.reinvoke = True
                    if policy.reinvocation_policy == "IfNeeded":
                        state.invoked.add(key)
        return errors

    def _invoke(
        self,
        policy: _Policy,
        found: Match,
        matching: MatchRequest,
        attributes: AdmissionAttributes,
        param: Any,
        labels: Any,
    ) -> bool:
        """Run one invocation's mutations; whether the object changed."""
        scheme = self._registry.scheme
        kind = found.kind
        obj = _versioned(scheme, attributes.object, kind)
        old = _versioned(scheme, attributes.old_object, kind)
        request = admission_request(found, matching, attributes)
        namespace_value = None
        if attributes.namespace and not (kind.group == "" and kind.kind == "Namespace"):
            namespace_value = namespace_object(self.namespace(attributes.namespace, {}))
        authorize = authorizer_of(self._registry) or allow_all

        def activation(current: Any) -> Activation:
            return Activation(
                object=current,
                old_object=old,
                request=request,
                params=param,
                namespace_object=namespace_value,
                authorize=authorize,
                variables=policy.variables,
            )

        if policy.match_conditions:
            matched = match_conditions(policy.match_conditions, activation(obj))
            if isinstance(matched, str):
                raise _PolicyFailure(matched)
            if not matched:
                return False
        current = obj
        for mutation in policy.mutations:
            current = _mutate(mutation, current, activation(current), self._type_node(kind))
        if current is obj:
            return False
        patched = dict(current)
        patched["apiVersion"] = kind.group_version.api_version
        patched["kind"] = kind.kind
        try:
            scheme.default(patched)
            hub = scheme.to_hub(patched) if kind.version != HUB_VERSION else patched
        except KStoreError as exc:
            raise _PolicyFailure(exc.message) from None
        assert attributes.object is not None
        changed = _snapshot(hub) != _snapshot(attributes.object)
        attributes.object.clear()
        attributes.object.update(hub)
        return changed

    def _type_node(self, kind: GroupVersionKind) -> TypeNode:
        node = type_for_gvk(kind)
        if node is not None:
            return node
        try:
            version = self._registry.scheme.definition(kind.group, kind.kind).version(kind.version)
        except KStoreError:
            return DEDUCED
        rules = version.schema_rules
        return rules.type_node if rules is not None and rules.type_node is not None else DEDUCED


def _versioned(scheme: Any, obj: Object | None, kind: GroupVersionKind) -> Any:
    if obj is None:
        return None
    return in_version(scheme, obj, kind.version)


def _param_key(param: Any) -> tuple[str, str]:
    meta = _map(_map(param).get("metadata"))
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _mutate(mutation: _Mutation, current: Any, activation: Activation, node: TypeNode) -> Any:
    """The object after one mutation (``current`` itself when nothing applied)."""
    compiled = mutation.expression.compiled
    try:
        value, _ = activation.evaluate(compiled, RUNTIME_COST_BUDGET)
    except AdmissionCelError as exc:
        raise _PolicyFailure(str(exc)) from None
    if mutation.expression.mismatch:
        raise _PolicyFailure(f"type mismatch: {mutation.expression.mismatch}")
    if mutation.patch_type == APPLY_CONFIGURATION:
        return _apply_configuration(current, value, node)
    return _json_patch(current, value)


def _apply_configuration(current: Any, config: Any, node: TypeNode) -> Any:
    if not isinstance(config, dict):
        raise _PolicyFailure(f"invalid return type: {type(config).__name__}")
    problems = validate(config, node)
    if problems:
        text = problems[0] if len(problems) == 1 else "errors:\n  " + "\n  ".join(problems)
        raise _PolicyFailure(
            f"error applying patch: failed to convert patch object to typed object: {text}"
        )
    atomics = _atomics(config, node, "")
    if atomics:
        raise _PolicyFailure(
            "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, "
            f"maps or structs: {', '.join(atomics)}"
        )
    try:
        merged = merge(current, config, node)
    except SchemaError as exc:
        raise _PolicyFailure(f"error applying patch: failed to merge patch: {exc}") from None
    return current if merged == current else merged


def _atomics(value: Any, node: TypeNode, path: str) -> list[str]:
    """The paths of atomic lists, maps and structs the configuration sets (structured-merge-
    diff's path notation)."""
    found: list[str] = []
    if isinstance(value, dict) and node.kind in (NodeKind.STRUCT, NodeKind.MAP):
        if node.atomic:
            found.append(path)
        for key, child in value.items():
            meta = node.field(key)
            if meta is not None:
                found.extend(_atomics(child, meta.type, f"{path}.{key}"))
    elif isinstance(value, list) and node.kind is NodeKind.LIST and node.item is not None:
        if node.list_type.value == "atomic":
            found.append(path)
        for i, item in enumerate(value):
            found.extend(_atomics(item, node.item, f"{path}[{i}]"))
    return found


def _json_patch(current: Any, operations: Any) -> Any:
    ops: list[dict[str, Any]] = []
    for op in _list(operations):
        op = _map(op)
        out: dict[str, Any] = {"op": str(op.get("op") or ""), "path": str(op.get("path") or "")}
        if op.get("from"):
            out["from"] = op["from"]
        if "value" in op:
            out["value"] = op["value"]
        ops.append(out)
    if not ops:
        return current
    try:
        patched = apply_operations(orjson.loads(orjson.dumps(current)), ops)
    except JsonPatchError as exc:
        if str(exc).endswith("test failed"):
            return current  # a failed test: the patch is not applied
        raise _PolicyFailure(f"JSONPath: {exc}") from None
    if not isinstance(patched, dict):
        raise _PolicyFailure("JSONPath: the patched object is not an object")
    return current if patched == current else patched


def _refusal(attributes: AdmissionAttributes, errors: list[_Error]) -> KStoreError:
    """Kubernetes' refusal: the first error's text as the message, each as a cause."""
    texts = [
        f"policy '{e.policy}' with binding '{e.binding}' denied request: {e.message}"
        if e.binding
        else f'policy "{e.policy}" denied request: {e.message}'
        for e in errors
    ]
    name = attributes.name
    if not name and isinstance(attributes.object, dict):
        meta = _map(attributes.object.get("metadata"))
        name = str(meta.get("name") or meta.get("generateName") or "")
    definition = attributes.definition
    resource = definition.resource.plural if definition.resource is not None else ""
    return _Refusal(
        texts[0],
        name=name,
        group=definition.group,
        kind=resource,
        causes=tuple(Cause("", t) for t in texts),
        details=True,
    )


# -- installation -----------------------------------------------------------------------------

_PLUGINS: Final[weakref.WeakKeyDictionary[Any, MutatingPolicies]] = weakref.WeakKeyDictionary()


def hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    """The plugin's mutating hook for ``registry`` (its informers started, stopped when the
    registry closes)."""
    plugin = MutatingPolicies(registry)
    plugin.start()
    registry.on_close(plugin.stop)
    _PLUGINS[registry] = plugin
    return plugin.admit, None


def plugin_of(registry: Registry) -> MutatingPolicies | None:
    return _PLUGINS.get(registry)
