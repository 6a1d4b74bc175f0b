"""admissionregistration.k8s.io/v1 MutatingAdmissionPolicy and its binding: validation with
the field paths and messages of Kubernetes v1.36's ``pkg/apis/admissionregistration/
validation``, sharing the rules it shares with ValidatingAdmissionPolicy
(:mod:`._admission_validation`: param kind and ref, match resources, match conditions,
variables).

What differs from a ValidatingAdmissionPolicy: ``reinvocationPolicy`` is required (``Never``
or ``IfNeeded``, no default); ``mutations`` must hold one at least, each with a ``patchType``
(``ApplyConfiguration`` or ``JSONPatch``) and exactly the member that type names, whose
expression compiles (:func:`kstore.api.cel.mutation.compile_mutation`, which also checks it
evaluates to ``Object`` or ``list(JSONPatch)``); rules may not name DELETE (nothing to mutate),
reported once per such operation at ``<rules>.operations``, without an index, as Kubernetes
reports it. A binding has no ``validationActions``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.cel.mutation import compile_mutation
from kstore.api.kinds._admission_validation import (
    REINVOCATION_POLICIES,
    validate_conditions_and_variables,
    validate_match_resources,
    validate_param_ref,
    validate_policy_head,
    validate_policy_name,
)
from kstore.api.validation._access import get_list, get_map, get_str, maps
from kstore.api.validation.field import Path, invalid, not_supported, required
from kstore.api.validation.names import name_is_dns_subdomain
from kstore.api.validation.objectmeta import validate_object_meta
from kstore.errors import Cause

__all__ = ["validate_mutating_binding", "validate_mutating_policy"]

_SPEC: Final = Path("spec")
_PATCH_TYPES: Final = ("ApplyConfiguration", "JSONPatch")
_MUTATING_OPERATIONS: Final = ("*", "CONNECT", "CREATE", "UPDATE")
_MEMBERS: Final = {"ApplyConfiguration": "applyConfiguration", "JSONPatch": "jsonPatch"}


def _operations(rules: Any, path: Path) -> list[Cause]:
    causes: list[Cause] = []
    for rule in maps(rules if isinstance(rules, list) else []):
        for operation in get_list(rule, "operations"):
            if operation not in _MUTATING_OPERATIONS:
                causes.append(not_supported(path, str(operation), _MUTATING_OPERATIONS))
    return causes


def _mutation(
    mutation: Mapping[str, Any],
    has_params: bool,
    variables: frozenset[str] | None,
    path: Path,
) -> list[Cause]:
    patch_type = get_str(mutation, "patchType")
    if not patch_type:
        return [required(path.child("patchType"))]
    if patch_type not in _PATCH_TYPES:
        return [not_supported(path.child("patchType"), patch_type, _PATCH_TYPES)]
    causes: list[Cause] = []
    member = _MEMBERS[patch_type]
    other = next(m for t, m in _MEMBERS.items() if t != patch_type)
    body = mutation.get(member)
    if not isinstance(body, Mapping):
        causes.append(
            required(path.child(member), f"must be specified when patchType is {patch_type}")
        )
    else:
        where = path.child(member, "expression")
        expression = get_str(body, "expression").strip()
        if not expression:
            causes.append(required(where))
        else:
            compiled = compile_mutation(
                expression, patch_type, params=has_params, variables=variables
            ).compiled
            if compiled.error:
                causes.append(invalid(where, expression, compiled.error))
    if isinstance(mutation.get(other), Mapping):
        causes.append(
            invalid(
                path.child(other),
                "{" + other + "}",
                f"must not be specified when patchType is {patch_type}",
            )
        )
    return causes


def validate_mutating_policy(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateMutatingAdmissionPolicy``: metadata, then the spec."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    spec = get_map(obj, "spec")
    causes.extend(validate_policy_head(spec))
    has_params = isinstance(spec.get("paramKind"), Mapping)
    constraints = spec.get("matchConstraints")
    if isinstance(constraints, Mapping):
        where = _SPEC.child("matchConstraints", "resourceRules", "operations")
        causes.extend(_operations(constraints.get("resourceRules"), where))
    found, variables = validate_conditions_and_variables(spec, has_params)
    causes.extend(found)
    mutations = maps(get_list(spec, "mutations"))
    if not mutations:
        causes.append(
            required(_SPEC.child("mutations"), "mutations must contain at least one item")
        )
    for i, mutation in enumerate(mutations):
        causes.extend(_mutation(mutation, has_params, variables, _SPEC.child("mutations").index(i)))
    reinvocation = get_str(spec, "reinvocationPolicy")
    if not reinvocation:
        causes.append(required(_SPEC.child("reinvocationPolicy")))
    elif reinvocation not in REINVOCATION_POLICIES:
        causes.append(
            not_supported(_SPEC.child("reinvocationPolicy"), reinvocation, REINVOCATION_POLICIES)
        )
    return causes


def validate_mutating_binding(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateMutatingAdmissionPolicyBinding``: metadata, the policy's name, the param
    reference and the match resources (no DELETE among their operations)."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    spec = get_map(obj, "spec")
    causes.extend(validate_policy_name(spec))
    ref = spec.get("paramRef")
    causes.extend(
        validate_param_ref(ref if isinstance(ref, Mapping) else None, _SPEC.child("paramRef"))
    )
    match = spec.get("matchResources")
    if isinstance(match, Mapping):
        where = _SPEC.child("matchResources")
        causes.extend(validate_match_resources(match, where))
        causes.extend(
            _operations(match.get("resourceRules"), where.child("resourceRules", "operations"))
        )
    return causes
