"""ValidatingAdmissionPolicy: CEL policies bound to requests by their bindings.

kube-apiserver's ``ValidatingAdmissionPolicy`` plugin (``k8s.io/apiserver/pkg/admission/plugin/
policy/validating``), run in the validating phase after the built-in validating plugins:

- the policies and bindings in force are those two informers hold (list + watch of the
  ``admissionregistration.k8s.io`` resources), so a policy written through any server of the
  store takes effect on every server within the watch's delay; each policy is compiled once per
  generation (its expressions, variables, match conditions, audit annotations);
- a request is judged by each policy whose ``matchConstraints`` match it, for each binding of
  that policy whose ``matchResources`` match it too; the objects are shown in the version the
  policy's rules name (``matchPolicy: Equivalent``: another version of the same resource);
- params: with a ``paramKind`` and a binding's ``paramRef``, the objects ``name`` or
  ``selector`` picks (in ``namespace``, else the request's, for a namespaced kind), each
  evaluated in turn; none found is ``parameterNotFoundAction`` (Allow: nothing to check; Deny:
  an error); no ``paramRef``: ``params`` is null. Param objects are held by an informer per kind;
  one missing from it is read from the store (as Kubernetes falls back to a direct read);
- ``matchConditions`` all true (else the binding is skipped; an error is the failure policy),
  then every validation: false → its ``messageExpression``, ``message`` or ``failed expression:
  <expression>``, with its ``reason`` (Invalid when unset; Forbidden, Unauthorized,
  RequestEntityTooLarge); an evaluation error (a match condition's, a validation's, the cost
  budget spent) is a failure too, worded as Kubernetes words it, unless ``failurePolicy:
  Ignore``; a configuration error (unknown param kind, a param required and missing) or an
  audit annotation's error refuses the request unless ``failurePolicy: Ignore``;
- the binding's ``validationActions`` act on each failure: Deny → the request is refused with
  the first denial (``ValidatingAdmissionPolicy '<p>' with binding '<b>' denied request:
  <message>``, the status code of its reason), Warn → a ``Warning`` (``Validation failed for
  ValidatingAdmissionPolicy '<p>' with binding '<b>': <message>``), Audit → the audit annotation
  ``validation.policy.admission.k8s.io/validation_failure``; ``auditAnnotations`` add
  ``<policy>/<key>`` annotations.

The ``authorizer`` variable asks what :func:`set_authorizer` gave (the server's authorization
mode); without one (``kstore.open``) every check is allowed.

Cost: a request none of whose resources any binding may match costs one dictionary read.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from kstore.api.cel.admission import (
    RUNTIME_COST_BUDGET,
    Activation,
    AdmissionCelError,
    Authorize,
    CompiledExpression,
    OutOfBudget,
    allow_all,
    match_conditions,
    openapi_field_schema,
    undefined_field_error,
)
from kstore.api.gvk import GroupVersion, GroupVersionKind, Object
from kstore.api.proto_schema import schema_for_gvk
from kstore.api.schema import FieldSchema
from kstore.api.scheme import KindDefinition, Scheme
from kstore.errors import (
    Cause,
    Conflict,
    Forbidden,
    Invalid,
    KStoreError,
    NotFound,
    RequestEntityTooLarge,
    Unauthorized,
)
from kstore.registry.admission.matching import (
    Match,
    MatchRequest,
    NamespaceLabels,
    constraints_match,
    match_request,
)
from kstore.registry.admission.policy_source import (
    ConfigError,
    PolicyExpressions,
    PolicySource,
    in_version,
    namespace_object,
    set_registry_authorizer,
)
from kstore.registry.admission.request import admission_request
from kstore.registry.interface import (
    AdmissionAttributes,
    AdmissionHook,
    Registry,
    RequestContext,
    ResourceStore,
    UpdateOptions,
)

__all__ = [
    "VALIDATION_FAILURE_ANNOTATION",
    "ValidatingPolicies",
    "hooks",
    "set_authorizer",
    "type_warnings",
]

_log = logging.getLogger("kstore.admission.policy")

_GROUP: Final = "admissionregistration.k8s.io"
VALIDATION_FAILURE_ANNOTATION: Final = "validation.policy.admission.k8s.io/validation_failure"
_MAX_MESSAGE_BYTES: Final = 5 * 1024
_MAX_AUDIT_VALUE: Final = 10 * 1024
_CONTEXT: Final = RequestContext()
_FIELD_MANAGER: Final = "validatingadmissionpolicy-status-controller"
_REASONS: Final[dict[str, type[KStoreError]]] = {
    "Forbidden": Forbidden,
    "Unauthorized": Unauthorized,
    "RequestEntityTooLarge": RequestEntityTooLarge,
    "Invalid": Invalid,
}


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _name(obj: Mapping[str, Any]) -> str:
    return str(_map(obj.get("metadata")).get("name") or "")


# -- type checking ----------------------------------------------------------------------------


def _matched_kinds(
    policy: Mapping[str, Any], scheme: Scheme
) -> list[tuple[GroupVersionKind, FieldSchema]]:
    """The kinds the policy's rules name exactly (no wildcard, no subresource) that are
    served, with their schemas, sorted by group, version and kind."""
    constraints = _map(_map(policy.get("spec")).get("matchConstraints"))
    found: dict[GroupVersionKind, FieldSchema] = {}
    for rule in _list(constraints.get("resourceRules")):
        rule = _map(rule)
        for group in _list(rule.get("apiGroups")):
            for version in _list(rule.get("apiVersions")):
                for resource in _list(rule.get("resources")):
                    names = (group, version, resource)
                    if not all(isinstance(n, str) and n != "*" for n in names):
                        continue
                    if "/" in resource:
                        continue
                    try:
                        registered = scheme.resource(GroupVersion(group, version), resource)
                    except KStoreError:
                        continue
                    gvk = registered.gvk
                    schema = _kind_schema(registered.definition, gvk)
                    if schema is not None:
                        found[gvk] = schema
    return sorted(found.items(), key=lambda item: (item[0].group, item[0].version, item[0].kind))


def _kind_schema(definition: KindDefinition, gvk: GroupVersionKind) -> FieldSchema | None:
    try:
        kind_version = definition.version(gvk.version)
    except KStoreError:
        return None
    if kind_version.openapi_schema is not None:
        return openapi_field_schema(kind_version.openapi_schema)
    return schema_for_gvk(gvk)


def _gvk_text(gvk: GroupVersionKind) -> str:
    # Go's GroupVersionKind.String().
    return f"{gvk.group}/{gvk.version}, Kind={gvk.kind}"


def type_warnings(policy: Mapping[str, Any], scheme: Scheme) -> list[dict[str, str]]:
    """``status.typeChecking.expressionWarnings`` of a policy: for each validation's
    ``expression`` and ``messageExpression``, the matched kinds whose schema lacks a field it
    selects on ``object`` or ``oldObject``, worded as Kubernetes words them."""
    kinds = _matched_kinds(policy, scheme)
    if not kinds:
        return []
    spec = _map(policy.get("spec"))
    params = bool(_map(spec.get("paramKind")))
    declared = [_map(v).get("name") for v in _list(spec.get("variables"))]
    variables = frozenset(str(n) for n in declared if isinstance(n, str)) if declared else None
    warnings = []
    for i, validation in enumerate(_list(spec.get("validations"))):
        validation = _map(validation)
        for key in ("expression", "messageExpression"):
            expression = validation.get(key)
            if not isinstance(expression, str) or not expression:
                continue
            issues = []
            for gvk, schema in kinds:
                error = undefined_field_error(
                    expression, schema, params=params, variables=variables
                )
                if error:
                    issues.append(f"{_gvk_text(gvk)}: {error}\n")
            if issues:
                warnings.append(
                    {"fieldRef": f"spec.validations[{i}].{key}", "warning": "\n".join(issues)}
                )
    return warnings


# -- the request ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Request:
    """What the ``request`` variable is built from."""

    group: str
    version: str  # the version the client spoke
    resource: str
    subresource: str
    operation: str
    namespace: str
    name: str
    kind: str


def _labels(obj: Any) -> dict[str, Any]:
    return _map(_map(_map(obj).get("metadata")).get("labels"))


# -- compiled policies ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Validation:
    expression: CompiledExpression
    message: str
    message_expression: CompiledExpression | None
    reason: str


@dataclass(frozen=True, slots=True)
class _Policy:
    name: str
    generation: int
    failure_policy: str
    param_kind: tuple[str, str] | None  # (apiVersion, kind)
    constraints: Mapping[str, Any]
    match_conditions: tuple[tuple[str, CompiledExpression], ...]
    variables: Mapping[str, CompiledExpression]
    validations: tuple[_Validation, ...]
    audit_annotations: tuple[tuple[str, CompiledExpression], ...]


def _compile_policy(policy: Object) -> _Policy:
    spec = _map(policy.get("spec"))
    meta = _map(policy.get("metadata"))
    cel = PolicyExpressions(spec)
    compile_one = cel.compile
    validations = []
    for v in _list(spec.get("validations")):
        v = _map(v)
        message_expression = v.get("messageExpression")
        validations.append(
            _Validation(
                expression=compile_one(v.get("expression")),
                message=str(v.get("message") or ""),
                message_expression=compile_one(message_expression, authorizer=False)
                if message_expression
                else None,
                reason=str(v.get("reason") or "Invalid"),
            )
        )
    audits = tuple(
        (
            str(_map(a).get("key") or ""),
            compile_one(_map(a).get("valueExpression"), authorizer=False),
        )
        for a in _list(spec.get("auditAnnotations"))
    )
    return _Policy(
        name=_name(policy),
        generation=int(meta.get("generation") or 0),
        failure_policy=str(spec.get("failurePolicy") or "Fail"),
        param_kind=cel.param_kind_key(),
        constraints=_map(spec.get("matchConstraints")),
        match_conditions=cel.match_conditions(spec),
        variables=cel.variables,
        validations=tuple(validations),
        audit_annotations=audits,
    )


# -- one request ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Denial:
    policy: str
    binding: str | None
    message: str
    reason: str = "Invalid"


@dataclass(slots=True)
class _Outcome:
    denials: list[_Denial] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


class _Stale(Exception):
    """The policy changed or its status is already current: nothing to write."""


class ValidatingPolicies(PolicySource[_Policy]):
    """The policies, bindings and params in force for one registry, and the hook judging
    requests by them (see the module docstring)."""

    def __init__(self, registry: Registry) -> None:
        super().__init__(
            registry,
            policies="validatingadmissionpolicies",
            bindings="validatingadmissionpolicybindings",
            compile=_compile_policy,
        )
        self.authorize: Authorize | None = None

    def _policy_seen(self, store: ResourceStore, policy: Object) -> None:
        observed = _map(policy.get("status")).get("observedGeneration")
        if observed != _map(policy.get("metadata")).get("generation"):
            self._write_status(store, policy)

    def _write_status(self, store: ResourceStore, policy: Object) -> None:
        """Kubernetes' type-checking controller: ``status.observedGeneration`` and
        ``status.typeChecking`` with a warning for each validation expression or message
        expression selecting a field the matched kinds do not have (:func:`type_warnings`)."""
        generation = _map(policy.get("metadata")).get("generation")
        uid = _map(policy.get("metadata")).get("uid")
        checking: dict[str, Any] = {}
        warnings = type_warnings(policy, self._registry.scheme)
        if warnings:
            checking["expressionWarnings"] = warnings

        def updated(current: Object) -> Object:
            meta = _map(current.get("metadata"))
            if meta.get("uid") != uid or meta.get("generation") != generation:
                raise _Stale()
            status = dict(_map(current.get("status")))
            if status.get("observedGeneration") == generation:
                raise _Stale()
            status["observedGeneration"] = generation
            status["typeChecking"] = checking
            return {**current, "status": status}

        options = UpdateOptions(subresource="status", field_manager=_FIELD_MANAGER)
        try:
            store.update(RequestContext(), _name(policy), updated, options)
        except (_Stale, NotFound, Conflict):
            pass  # a newer generation, another server or a deletion got there first
        except KStoreError:
            _log.exception("writing the status of policy %s failed", _name(policy))

    # -- the hook --------------------------------------------------------------------------

    def validate(self, attributes: AdmissionAttributes) -> None:
        if not self.may_match(attributes):
            return
        self._judge(attributes, self._active)

    def _judge(
        self,
        attributes: AdmissionAttributes,
        active: Mapping[str, tuple[_Policy, tuple[Object, ...]]],
    ) -> None:
        definition = attributes.definition
        assert definition.resource is not None
        scheme = self._registry.scheme
        matching = match_request(attributes, scheme.is_served)
        request = _Request(
            group=definition.group,
            version=matching.kind.version,
            resource=definition.resource.plural,
            subresource=attributes.subresource,
            operation=str(attributes.operation),
            namespace=attributes.namespace,
            name=attributes.name or _name(_map(attributes.object or attributes.old_object)),
            kind=definition.kind,
        )
        outcome = _Outcome()
        namespaces: dict[str, Object | None] = {}

        def labels(name: str) -> Mapping[str, str] | None:
            namespace = self.namespace(name, namespaces)
            return None if namespace is None else _labels(namespace)

        for policy, bindings in active.values():
            try:
                found = constraints_match(policy.constraints, matching, labels)
            except KStoreError:
                found = None  # as Kubernetes, a policy that cannot be matched is passed over
            if found is None:
                continue
            self._run_policy(
                policy,
                bindings,
                found,
                request,
                matching,
                labels,
                attributes,
                scheme,
                namespaces,
                outcome,
            )
        attributes.warnings.extend(w for w in outcome.warnings if w not in attributes.warnings)
        attributes.audit_annotations.update(outcome.annotations)
        if outcome.denials:
            raise _denied(attributes, outcome.denials[0])

    def _run_policy(
        self,
        policy: _Policy,
        bindings: Sequence[Object],
        found: Match,
        request: _Request,
        matching: MatchRequest,
        labels: NamespaceLabels,
        attributes: AdmissionAttributes,
        scheme: Scheme,
        namespaces: dict[str, Object | None],
        outcome: _Outcome,
    ) -> None:
        annotations: dict[str, list[str]] = {}
        versioned: tuple[Any, Any, dict[str, Any]] | None = None
        for binding in bindings:
            spec = _map(binding.get("spec"))
            binding_name = _name(binding)
            match = spec.get("matchResources")
            try:
                matched = constraints_match(
                    match if isinstance(match, dict) else None, matching, labels
                )
            except KStoreError as exc:
                if policy.failure_policy != "Ignore":
                    outcome.denials.append(
                        _Denial(policy.name, binding_name, f"failed to configure binding: {exc}")
                    )
                continue
            if matched is None:
                continue
            try:
                params = self.params_for(policy, spec, request.namespace, scheme)
            except ConfigError as exc:
                if policy.failure_policy != "Ignore":
                    outcome.denials.append(
                        _Denial(policy.name, binding_name, f"failed to configure binding: {exc}")
                    )
                continue
            if versioned is None:
                versioned = self._versioned(found, matching, attributes, scheme)
            obj, old, request_value = versioned
            namespace_value = None
            if request.namespace and not (request.kind == "Namespace" and request.group == ""):
                namespace_value = namespace_object(self.namespace(request.namespace, namespaces))
            actions = [str(a) for a in _list(spec.get("validationActions"))]
            for param in params:
                activation = Activation(
                    object=obj,
                    old_object=old,
                    request=request_value,
                    params=param,
                    namespace_object=namespace_value,
                    authorize=self.authorize or allow_all,
                    variables=policy.variables,
                )
                self._evaluate(
                    policy, binding, binding_name, actions, activation, outcome, annotations
                )
        for key, values in annotations.items():
            outcome.annotations[f"{policy.name}/{key}"] = ", ".join(values)

    def _evaluate(
        self,
        policy: _Policy,
        binding: Object,
        binding_name: str,
        actions: list[str],
        activation: Activation,
        outcome: _Outcome,
        annotations: dict[str, list[str]],
    ) -> None:
        fail = policy.failure_policy != "Ignore"

        def error(message: str) -> None:
            if fail:
                outcome.denials.append(_Denial(policy.name, binding_name, message))

        decisions = self._decisions(policy, activation, fail)
        if decisions is None:
            return  # a match condition is false: the binding does not apply
        for index, message, reason in decisions:
            for action in actions:
                if action == "Deny":
                    outcome.denials.append(_Denial(policy.name, binding_name, message, reason))
                elif action == "Warn":
                    warning = (
                        f"Validation failed for ValidatingAdmissionPolicy '{policy.name}' "
                        f"with binding '{binding_name}': {message}"
                    )
                    if warning not in outcome.warnings:
                        outcome.warnings.append(warning)
                elif action == "Audit":
                    value = [
                        {
                            "message": message,
                            "policy": str(_map(binding.get("spec")).get("policyName") or ""),
                            "binding": binding_name,
                            "expressionIndex": max(index, 0),
                            "validationActions": actions,
                        }
                    ]
                    # As Kubernetes' AddAnnotation: the first value of a key stays.
                    outcome.annotations.setdefault(
                        VALIDATION_FAILURE_ANNOTATION, orjson.dumps(value).decode()
                    )
        if decisions and decisions[0][0] < 0:
            return  # the validations did not run to their end: no audit annotations
        budget = RUNTIME_COST_BUDGET
        for key, compiled in policy.audit_annotations:
            try:
                value, budget = activation.evaluate(compiled, budget)
            except AdmissionCelError as exc:
                error(str(exc))
                continue
            if value is None:
                continue
            if type(value) is not str:
                error(
                    f"valueExpression '{compiled.source}' resulted in unsupported return type: "
                    f"{_cel_type_name(value)}. Return type must be either string or null."
                )
                continue
            text = value.strip()[:_MAX_AUDIT_VALUE]
            if text and text not in annotations.setdefault(key, []):
                annotations[key].append(text)

    def _decisions(
        self, policy: _Policy, activation: Activation, fail: bool
    ) -> list[tuple[int, str, str]] | None:
        """The failed validations as (index, message, reason), in order; an evaluation error
        is one (reason Invalid) unless the failure policy is Ignore. None when a match
        condition is false; a single decision of index -1 when evaluation stopped (a match
        condition's error, the budget spent)."""
        if policy.match_conditions:
            matched = match_conditions(policy.match_conditions, activation)
            if isinstance(matched, str):
                return [(-1, matched, "Invalid")] if fail else []
            if not matched:
                return None
        budget = RUNTIME_COST_BUDGET
        results: list[tuple[int, str | None, str]] = []  # message None: failed, unworded
        try:
            for index, validation in enumerate(policy.validations):
                try:
                    value, budget = activation.evaluate(validation.expression, budget)
                except OutOfBudget:
                    raise
                except AdmissionCelError as exc:
                    if fail:
                        results.append((index, str(exc), "Invalid"))
                    continue
                if value is not True:
                    results.append((index, None, validation.reason))
        except OutOfBudget as exc:
            return [(-1, str(exc), "Invalid")] if fail else []
        decisions: list[tuple[int, str, str]] = []
        for index, message, reason in results:
            if message is None:
                try:
                    message, budget = _message(policy.validations[index], activation, budget)
                except OutOfBudget as exc:
                    # Kubernetes: every validation is then an error of its message.
                    gone = f"failed messageExpression: {exc}"
                    return (
                        [(i, gone, "Invalid") for i in range(len(policy.validations))]
                        if (fail)
                        else []
                    )
            decisions.append((index, message, reason))
        return decisions

    def _versioned(
        self,
        found: Match,
        matching: MatchRequest,
        attributes: AdmissionAttributes,
        scheme: Scheme,
    ) -> tuple[Any, Any, dict[str, Any]]:
        version = found.kind.version
        obj = in_version(scheme, attributes.object, version)
        old = in_version(scheme, attributes.old_object, version)
        return obj, old, admission_request(found, matching, attributes)


def _message(validation: _Validation, activation: Activation, budget: int) -> tuple[str, int]:
    text = ""
    if validation.message_expression is not None:
        try:
            value, budget = activation.evaluate(validation.message_expression, budget)
        except OutOfBudget:
            raise
        except AdmissionCelError:
            value = None
        if type(value) is str:
            text = value.strip()
            if len(text.encode()) > _MAX_MESSAGE_BYTES or "\n" in text:
                text = ""
    if not text:
        text = validation.message.strip()
    if not text:
        text = f"failed expression: {validation.expression.source.strip()}"
    return text, budget


def _cel_type_name(value: Any) -> str:
    t = type(value)
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is float:
        return "double"
    if t is list:
        return "list"
    if t is dict:
        return "map"
    return t.__name__


def _denied(attributes: AdmissionAttributes, denial: _Denial) -> KStoreError:
    if denial.binding is not None:
        text = (
            f"ValidatingAdmissionPolicy '{denial.policy}' with binding '{denial.binding}' "
            f"denied request: {denial.message}"
        )
    else:
        text = f"ValidatingAdmissionPolicy '{denial.policy}' denied request: {denial.message}"
    name = attributes.name
    if not name and isinstance(attributes.object, dict):
        meta = _map(attributes.object.get("metadata"))
        name = str(meta.get("name") or meta.get("generateName") or "")
    name = name or "Unknown"
    definition = attributes.definition
    resource = definition.resource.plural if definition.resource is not None else ""
    qualified = f"{resource}.{definition.group}" if definition.group else resource
    error_class = _REASONS.get(denial.reason, Invalid)
    return error_class(
        f'{qualified} "{name}" is forbidden: {text}',
        name=name,
        group=definition.group,
        kind=resource,
        causes=(Cause("", text),),
        details=True,
    )


# -- installation -----------------------------------------------------------------------------

_PLUGINS: Final[weakref.WeakKeyDictionary[Any, ValidatingPolicies]] = weakref.WeakKeyDictionary()


def hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    """The plugin's validating hook for ``registry`` (its informers started, stopped when
    the registry closes)."""
    plugin = ValidatingPolicies(registry)
    plugin.start()
    registry.on_close(plugin.stop)
    _PLUGINS[registry] = plugin

    return None, plugin.validate


def set_authorizer(registry: Registry, authorize: Authorize | None) -> None:
    """What the ``authorizer`` variable asks on ``registry`` (None: everything allowed)."""
    set_registry_authorizer(registry, authorize)
    plugin = _PLUGINS.get(registry)
    if plugin is not None:
        plugin.authorize = authorize


def plugin_of(registry: Registry) -> ValidatingPolicies | None:
    return _PLUGINS.get(registry)
