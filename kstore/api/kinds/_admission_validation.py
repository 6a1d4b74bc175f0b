"""admissionregistration.k8s.io/v1 validation, with the field paths and messages of Kubernetes
v1.36's ``pkg/apis/admissionregistration/validation``.

- webhook configurations (:func:`validate_webhook_configuration`): a DNS-1123 subdomain name;
  each webhook's name a fully qualified domain name (three segments at least) and unique, its
  rules (operations, API groups, versions, resources with their wildcard and subresource rules,
  scope), failure and match policies, side effects (``None`` or ``NoneOnDryRun`` for new
  objects), a timeout of 1 to 30 seconds, label selectors, exactly one of ``url`` and
  ``service`` in the client config, admission review versions (DNS-1035 labels without
  duplicates, ``v1`` or ``v1beta1`` among them), and up to 64 match conditions with qualified,
  unique names;
- policies (:func:`validate_policy`): ``failurePolicy``, ``paramKind``, ``matchConstraints``
  (match policy, both selectors, named rules, one resource rule at least), match conditions,
  variables (CEL identifiers), validations (message, message expression, reason) and audit
  annotations (at most 20, qualified ``<policy name>/<key>``, unique keys, value expressions of
  at most 5 KiB); the status's type-checking warnings and conditions;
- bindings (:func:`validate_binding`): ``policyName``, ``paramRef`` (name or selector, the
  not-found action), ``matchResources`` and ``validationActions``.

An update relaxes what Kubernetes relaxes for objects that were stored under older rules:
side effects, review versions, unique names and selector label values are only enforced when
the stored object already obeyed them, and match conditions are not re-checked when unchanged.

CEL: expressions are parsed and checked by :mod:`kstore.api.cel.admission` in the variables
Kubernetes declares for each (``object``, ``oldObject``, ``request``, ``namespaceObject``,
``authorizer``, ``params`` where the policy has a ``paramKind``, ``variables`` where it declares
some); a failure is reported at the expression's path with cel-go's message. Differences from
Kubernetes: the variables are typed ``dyn`` (Kubernetes types ``request`` and
``authorizer``), so a wrong field of ``request`` compiles here; no cost limit is estimated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kstore.api.cel.admission import admission_compile_error
from kstore.api.kinds._crd_conversion import validate_webhook_service, validate_webhook_url
from kstore.api.kinds._selector import validate_label_selector
from kstore.api.validation._access import get_list, get_map, get_str, maps, opt_int, opt_str
from kstore.api.validation.field import (
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from kstore.api.validation.names import (
    is_dns1035_label,
    is_dns1123_subdomain,
    is_path_segment_name,
    is_qualified_name,
    name_is_dns_subdomain,
)
from kstore.api.validation.objectmeta import validate_object_meta
from kstore.errors import Cause

__all__ = [
    "FAILURE_POLICIES",
    "MATCH_POLICIES",
    "REINVOCATION_POLICIES",
    "REVIEW_VERSIONS",
    "WebhookOptions",
    "create_options",
    "update_options",
    "validate_binding",
    "validate_conditions",
    "validate_conditions_and_variables",
    "validate_match_conditions",
    "validate_match_resources",
    "validate_param_kind",
    "validate_param_ref",
    "validate_policy",
    "validate_policy_head",
    "validate_policy_name",
    "validate_policy_status",
    "validate_policy_update",
    "validate_variables",
    "validate_webhook_configuration",
]

#: The sets Kubernetes lists in sorted order in its messages.
FAILURE_POLICIES: Final = ("Fail", "Ignore")
MATCH_POLICIES: Final = ("Equivalent", "Exact")
REINVOCATION_POLICIES: Final = ("IfNeeded", "Never")
_SIDE_EFFECTS: Final = ("None", "NoneOnDryRun", "Some", "Unknown")
_NO_SIDE_EFFECTS: Final = ("None", "NoneOnDryRun")
_OPERATIONS: Final = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
_SCOPES: Final = ("*", "Cluster", "Namespaced")
_REASONS: Final = ("Forbidden", "Invalid", "RequestEntityTooLarge")
_VALIDATION_ACTIONS: Final = ("Audit", "Deny", "Warn")
_NOT_FOUND_ACTIONS: Final = ("Deny", "Allow")
#: The AdmissionReview versions the previous release understands.
REVIEW_VERSIONS: Final = ("v1", "v1beta1")
_MAX_MATCH_CONDITIONS: Final = 64
_MAX_AUDIT_ANNOTATIONS: Final = 20
_MAX_VALUE_EXPRESSION_BYTES: Final = 5 * 1024
_CEL_IDENT: Final = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
_CEL_RESERVED: Final = frozenset(
    [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)
_NEWLINE: Final = re.compile(r"[\n\r]")
_WEBHOOKS: Final = Path("webhooks")
_SPEC: Final = Path("spec")


@dataclass(frozen=True, slots=True)
class WebhookOptions:
    """Kubernetes' ``validationOptions``: what a create enforces, relaxed on update for rules
    the stored object did not obey yet."""

    check_match_conditions: bool = True
    require_no_side_effects: bool = True
    require_recognized_review_version: bool = True
    require_unique_names: bool = True
    allow_invalid_label_values: bool = False
    #: Expressions already stored (compiled as stored expressions; here: same checks).
    stored_expressions: frozenset[str] = field(default_factory=frozenset)


def create_options() -> WebhookOptions:
    return WebhookOptions()


def _webhooks(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return maps(get_list(obj, "webhooks"))


def _selector_has_invalid_values(hook: Mapping[str, Any]) -> bool:
    for key in ("namespaceSelector", "objectSelector"):
        selector = hook.get(key)
        if isinstance(selector, Mapping) and validate_label_selector(selector, Path(key)):
            return True
    return False


def update_options(new: Mapping[str, Any], old: Mapping[str, Any]) -> WebhookOptions:
    """The options of ``Validate*WebhookConfigurationUpdate`` for ``new`` replacing ``old``."""
    new_hooks, old_hooks = _webhooks(new), _webhooks(old)
    unchanged_conditions = len(new_hooks) == len(old_hooks) and all(
        n.get("matchConditions") == o.get("matchConditions")
        for n, o in zip(new_hooks, old_hooks, strict=True)
    )
    names = [get_str(h, "name") for h in old_hooks]
    recognized = all(
        not get_list(h, "admissionReviewVersions")
        or any(v in REVIEW_VERSIONS for v in get_list(h, "admissionReviewVersions"))
        for h in old_hooks
    )
    return WebhookOptions(
        check_match_conditions=not unchanged_conditions,
        require_no_side_effects=all(
            opt_str(h, "sideEffects") in _NO_SIDE_EFFECTS for h in old_hooks
        ),
        require_recognized_review_version=recognized,
        require_unique_names=len(set(names)) == len(names),
        allow_invalid_label_values=any(_selector_has_invalid_values(h) for h in old_hooks),
    )


# ------------------------------------------------------------------------------ rules


def _strings(value: Any) -> list[str]:
    return [v if isinstance(v, str) else "" for v in value] if isinstance(value, list) else []


def _validate_resources(resources: list[str], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    if not resources:
        causes.append(required(path))
    wildcard_sub_of: set[str] = set()
    wildcard_res_of: set[str] = set()
    double_wildcard = single_wildcard = plain_resource = False
    for i, item in enumerate(resources):
        if not item:
            causes.append(required(path.index(i)))
            continue
        if item == "*/*":
            double_wildcard = True
        if item == "*":
            single_wildcard = True
        res, slash, sub = item.partition("/")
        if not slash:
            plain_resource = item != "*"
            continue
        if res in wildcard_sub_of:
            causes.append(
                invalid(path.index(i), item, f"if '{res}/*' is present, must not specify {item}")
            )
        if sub in wildcard_res_of:
            causes.append(
                invalid(path.index(i), item, f"if '*/{sub}' is present, must not specify {item}")
            )
        if sub == "*":
            wildcard_sub_of.add(res)
        if res == "*":
            wildcard_res_of.add(sub)
    if len(resources) > 1 and double_wildcard:
        causes.append(
            invalid(path, resources, "if '*/*' is present, must not specify other resources")
        )
    if single_wildcard and plain_resource:
        causes.append(
            invalid(
                path,
                resources,
                "if '*' is present, must not specify other resources without subresources",
            )
        )
    return causes


def _validate_rule(rule: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    groups = _strings(rule.get("apiGroups"))
    if not groups:
        causes.append(required(path.child("apiGroups")))
    if len(groups) > 1 and "*" in groups:
        causes.append(
            invalid(
                path.child("apiGroups"),
                groups,
                "if '*' is present, must not specify other API groups",
            )
        )
    versions = _strings(rule.get("apiVersions"))
    if not versions:
        causes.append(required(path.child("apiVersions")))
    if len(versions) > 1 and "*" in versions:
        causes.append(
            invalid(
                path.child("apiVersions"),
                versions,
                "if '*' is present, must not specify other API versions",
            )
        )
    causes.extend(
        required(path.child("apiVersions").index(i)) for i, v in enumerate(versions) if not v
    )
    causes.extend(_validate_resources(_strings(rule.get("resources")), path.child("resources")))
    scope = opt_str(rule, "scope")
    if scope is not None and scope not in _SCOPES:
        causes.append(not_supported(path.child("scope"), scope, _SCOPES))
    return causes


def _validate_rule_with_operations(rule: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    operations = _strings(rule.get("operations"))
    where = path.child("operations")
    if not operations:
        causes.append(required(where))
    if len(operations) > 1 and "*" in operations:
        causes.append(
            invalid(where, operations, "if '*' is present, must not specify other operations")
        )
    for i, operation in enumerate(operations):
        if operation not in _OPERATIONS:
            causes.append(not_supported(where.index(i), operation, _OPERATIONS))
    causes.extend(_validate_rule(rule, path))
    return causes


def _validate_named_rule(rule: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    seen: set[str] = set()
    where = path.child("resourceNames")
    for i, name in enumerate(_strings(rule.get("resourceNames"))):
        causes.extend(invalid(where.index(i), name, m) for m in is_path_segment_name(name))
        if name in seen:
            causes.append(duplicate(where.index(i), name))
        seen.add(name)
    causes.extend(_validate_rule_with_operations(rule, path))
    return causes


# ------------------------------------------------------------------------- webhooks


def _validate_fully_qualified_name(name: str, path: Path) -> list[Cause]:
    if not name:
        return [required(path)]
    errs = is_dns1123_subdomain(name)
    if errs:
        return [invalid(path, name, ",".join(errs))]
    if len(name.split(".")) < 3:
        return [
            invalid(path, name, "should be a domain with at least three segments separated by dots")
        ]
    return []


def _validate_review_versions(versions: list[str], opts: WebhookOptions, path: Path) -> list[Cause]:
    if not versions:
        return [required(path, "must specify one of " + ", ".join(REVIEW_VERSIONS))]
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            causes.append(invalid(path.index(i), version, "duplicate version"))
            continue
        seen.add(version)
        causes.extend(invalid(path.index(i), version, m) for m in is_dns1035_label(version))
    if opts.require_recognized_review_version and not seen.intersection(REVIEW_VERSIONS):
        causes.append(
            invalid(path, versions, "must include at least one of " + ", ".join(REVIEW_VERSIONS))
        )
    return causes


def validate_match_conditions(
    conditions: Sequence[Any], opts: WebhookOptions, has_params: bool, path: Path
) -> list[Cause]:
    causes: list[Cause] = []
    if len(conditions) > _MAX_MATCH_CONDITIONS:
        causes.append(too_many(path, len(conditions), _MAX_MATCH_CONDITIONS))
    names: set[str] = set()
    for i, condition in enumerate(maps(conditions)):
        where = path.index(i)
        expression = get_str(condition, "expression").strip()
        if not expression:
            causes.append(required(where.child("expression")))
        else:
            causes.extend(
                _compile(expression, where.child("expression"), params=has_params, authorizer=True)
            )
        name = get_str(condition, "name")
        if not name:
            causes.append(required(where.child("name")))
        else:
            causes.extend(invalid(where.child("name"), name, m) for m in is_qualified_name(name))
            if name in names:
                causes.append(duplicate(where.child("name"), name))
            names.add(name)
    return causes


def _compile(
    expression: str,
    path: Path,
    *,
    params: bool,
    authorizer: bool,
    variables: frozenset[str] | None = None,
    shown: str | None = None,
) -> list[Cause]:
    error = admission_compile_error(
        expression, params=params, authorizer=authorizer, variables=variables
    )
    if error is None:
        return []
    return [invalid(path, expression if shown is None else shown, error)]


def _validate_webhook(
    hook: Mapping[str, Any], opts: WebhookOptions, path: Path, *, mutating: bool
) -> list[Cause]:
    causes = _validate_fully_qualified_name(get_str(hook, "name"), path.child("name"))
    for i, rule in enumerate(maps(get_list(hook, "rules"))):
        causes.extend(_validate_rule_with_operations(rule, path.child("rules").index(i)))
    failure = opt_str(hook, "failurePolicy")
    if failure is not None and failure not in FAILURE_POLICIES:
        causes.append(not_supported(path.child("failurePolicy"), failure, FAILURE_POLICIES))
    match = opt_str(hook, "matchPolicy")
    if match is not None and match not in MATCH_POLICIES:
        causes.append(not_supported(path.child("matchPolicy"), match, MATCH_POLICIES))
    allowed = _NO_SIDE_EFFECTS if opts.require_no_side_effects else _SIDE_EFFECTS
    side_effects = opt_str(hook, "sideEffects")
    if side_effects is None:
        causes.append(
            required(path.child("sideEffects"), "must specify one of " + ", ".join(allowed))
        )
    elif side_effects not in allowed:
        causes.append(not_supported(path.child("sideEffects"), side_effects, allowed))
    timeout = opt_int(hook, "timeoutSeconds")
    if timeout is not None and not 1 <= timeout <= 30:
        causes.append(
            invalid(
                path.child("timeoutSeconds"),
                timeout,
                "the timeout value must be between 1 and 30 seconds",
            )
        )
    for key in ("namespaceSelector", "objectSelector"):
        selector = hook.get(key)
        if isinstance(selector, Mapping):
            causes.extend(
                validate_label_selector(
                    selector,
                    path.child(key),
                    allow_invalid_label_values=opts.allow_invalid_label_values,
                )
            )
    if mutating:
        policy = opt_str(hook, "reinvocationPolicy")
        if policy is not None and policy not in REINVOCATION_POLICIES:
            causes.append(
                not_supported(path.child("reinvocationPolicy"), policy, REINVOCATION_POLICIES)
            )
    causes.extend(
        _validate_client_config(get_map(hook, "clientConfig"), path.child("clientConfig"))
    )
    if opts.check_match_conditions:
        causes.extend(
            validate_match_conditions(
                get_list(hook, "matchConditions"), opts, False, path.child("matchConditions")
            )
        )
    return causes


def _validate_client_config(config: Mapping[str, Any], path: Path) -> list[Cause]:
    url = opt_str(config, "url")
    service = config.get("service")
    service = service if isinstance(service, Mapping) else None
    if (url is None) == (service is None):
        return [required(path, "exactly one of url or service is required")]
    if url is not None:
        return validate_webhook_url(url, path.child("url"))
    assert service is not None
    return validate_webhook_service(service, path.child("service"))


def validate_webhook_configuration(
    obj: Mapping[str, Any], opts: WebhookOptions, *, mutating: bool
) -> list[Cause]:
    """``validate{Validating,Mutating}WebhookConfiguration``: metadata, then every webhook."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    names: set[str] = set()
    for i, hook in enumerate(_webhooks(obj)):
        where = _WEBHOOKS.index(i)
        causes.extend(_validate_webhook(hook, opts, where, mutating=mutating))
        causes.extend(
            _validate_review_versions(
                _strings(hook.get("admissionReviewVersions")),
                opts,
                where.child("admissionReviewVersions"),
            )
        )
        name = get_str(hook, "name")
        if opts.require_unique_names and name:
            if name in names:
                causes.append(duplicate(where.child("name"), name))
            names.add(name)
    return causes


# ------------------------------------------------------------------------- policies


def _parse_group_version(text: str) -> tuple[str, str] | None:
    if not text or text == "/":
        return "", ""
    count = text.count("/")
    if count == 0:
        return "", text
    if count == 1:
        group, _, version = text.partition("/")
        return group, version
    return None


def validate_param_kind(kind: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    api_version = get_str(kind, "apiVersion")
    where = path.child("apiVersion")
    parsed = _parse_group_version(api_version)
    if not api_version:
        causes.append(required(where))
    elif parsed is None:
        causes.append(invalid(where, api_version, f"unexpected GroupVersion string: {api_version}"))
    else:
        group, version = parsed
        if group:
            errs = is_dns1123_subdomain(group)
            if errs:
                causes.append(invalid(where, group, ",".join(errs)))
        if not version:
            causes.append(invalid(where, api_version, "version must be specified"))
        else:
            errs = is_dns1035_label(version)
            if errs:
                causes.append(invalid(where, version, ",".join(errs)))
    name = get_str(kind, "kind")
    if not name:
        causes.append(required(path.child("kind")))
    else:
        errs = is_dns1035_label(name.lower())
        if errs:
            causes.append(
                invalid(
                    path.child("kind"),
                    name,
                    "may have mixed case, but should otherwise match: " + ",".join(errs),
                )
            )
    return causes


def validate_match_resources(match: Mapping[str, Any] | None, path: Path) -> list[Cause]:
    if match is None:
        return []
    causes: list[Cause] = []
    policy = opt_str(match, "matchPolicy")
    if policy is None:
        causes.append(required(path.child("matchPolicy")))
    elif policy not in MATCH_POLICIES:
        causes.append(not_supported(path.child("matchPolicy"), policy, MATCH_POLICIES))
    for key in ("namespaceSelector", "objectSelector"):
        selector = match.get(key)
        if not isinstance(selector, Mapping):
            causes.append(required(path.child(key)))
        else:
            causes.extend(validate_label_selector(selector, path.child(key)))
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(maps(get_list(match, key))):
            causes.extend(_validate_named_rule(rule, path.child(key).index(i)))
    return causes


def _is_cel_identifier(name: str) -> bool:
    return _CEL_IDENT.fullmatch(name) is not None and name not in _CEL_RESERVED


def _validate_validation(
    item: Mapping[str, Any], has_params: bool, variables: frozenset[str] | None, path: Path
) -> list[Cause]:
    causes: list[Cause] = []
    expression = get_str(item, "expression")
    if not expression.strip():
        causes.append(required(path.child("expression"), "expression is not specified"))
    else:
        causes.extend(
            _compile(
                expression,
                path.child("expression"),
                params=has_params,
                authorizer=True,
                variables=variables,
            )
        )
    message_expression = get_str(item, "messageExpression")
    if message_expression and not message_expression.strip():
        causes.append(
            invalid(
                path.child("messageExpression"),
                message_expression,
                "must be non-empty if specified",
            )
        )
    elif message_expression.strip():
        causes.extend(
            _compile(
                message_expression,
                path.child("messageExpression"),
                params=has_params,
                authorizer=False,
                variables=variables,
            )
        )
    message = get_str(item, "message")
    if message and not message.strip():
        causes.append(
            invalid(path.child("message"), message, "message must be non-empty if specified")
        )
    elif _NEWLINE.search(message.strip()):
        causes.append(
            invalid(path.child("message"), message, "message must not contain line breaks")
        )
    reason = opt_str(item, "reason")
    if reason is not None and reason not in _REASONS:
        causes.append(not_supported(path.child("reason"), reason, _REASONS))
    return causes


def _validate_audit_annotation(
    policy_name: str,
    item: Mapping[str, Any],
    has_params: bool,
    variables: frozenset[str] | None,
    path: Path,
) -> list[Cause]:
    causes: list[Cause] = []
    key = get_str(item, "key")
    if policy_name:
        qualified = f"{policy_name}/{key}"
        causes.extend(
            invalid(path.child("key"), qualified, m) for m in is_qualified_name(qualified)
        )
    else:
        causes.append(invalid(path.child("key"), key, "requires metadata.name be non-empty"))
    value = get_str(item, "valueExpression")
    trimmed = value.strip()
    where = path.child("valueExpression")
    if not trimmed:
        causes.append(required(where, "valueExpression is not specified"))
    elif len(trimmed.encode()) > _MAX_VALUE_EXPRESSION_BYTES:
        causes.append(
            required(where, f"must not exceed {_MAX_VALUE_EXPRESSION_BYTES} bytes in length")
        )
    else:
        causes.extend(
            _compile(
                trimmed,
                where,
                params=has_params,
                authorizer=True,
                variables=variables,
                shown=value,
            )
        )
    return causes


def validate_variables(spec: Mapping[str, Any], has_params: bool) -> list[Cause]:
    """A policy's ``variables``: CEL identifiers as names, and expressions that compile with
    the variables declared before them."""
    causes: list[Cause] = []
    declared = maps(get_list(spec, "variables"))
    for i, variable in enumerate(declared):
        where = _SPEC.child("variables").index(i)
        name = get_str(variable, "name")
        if not name.strip():
            causes.append(required(where.child("name"), "name is not specified"))
        elif not _is_cel_identifier(name):
            causes.append(invalid(where.child("name"), name, "name is not a valid CEL identifier"))
        expression = get_str(variable, "expression")
        if not expression.strip():
            causes.append(required(where.child("expression"), "expression is not specified"))
        else:
            # A variable sees the ones declared before it.
            earlier = frozenset(get_str(v, "name") for v in declared[:i])
            causes.extend(
                _compile(
                    expression,
                    where.child("expression"),
                    params=has_params,
                    authorizer=True,
                    variables=earlier,
                )
            )
    return causes


def validate_conditions_and_variables(
    spec: Mapping[str, Any], has_params: bool, *, check_match_conditions: bool = True
) -> tuple[list[Cause], frozenset[str] | None]:
    """A policy's ``matchConditions`` (unless not to be checked again) and ``variables``;
    with the names of the variables declared (None when there are none), which the policy's
    other expressions may read."""
    causes: list[Cause] = []
    if check_match_conditions:
        causes.extend(
            validate_match_conditions(
                get_list(spec, "matchConditions"),
                create_options(),
                has_params,
                _SPEC.child("matchConditions"),
            )
        )
    causes.extend(validate_variables(spec, has_params))
    declared = maps(get_list(spec, "variables"))
    return causes, frozenset(get_str(v, "name") for v in declared) if declared else None


def validate_policy_name(spec: Mapping[str, Any]) -> list[Cause]:
    """A binding's ``policyName``: required, a DNS subdomain."""
    policy = get_str(spec, "policyName")
    if not policy:
        return [required(_SPEC.child("policyName"))]
    return [
        invalid(_SPEC.child("policyName"), policy, m) for m in name_is_dns_subdomain(policy, False)
    ]


def validate_policy_head(spec: Mapping[str, Any]) -> list[Cause]:
    """What every policy's spec starts with: ``failurePolicy``, ``paramKind`` and
    ``matchConstraints`` (with one resource rule at least)."""
    causes: list[Cause] = []
    failure = opt_str(spec, "failurePolicy")
    if failure is None:
        causes.append(required(_SPEC.child("failurePolicy")))
    elif failure not in FAILURE_POLICIES:
        causes.append(not_supported(_SPEC.child("failurePolicy"), failure, FAILURE_POLICIES))
    param_kind = spec.get("paramKind")
    if isinstance(param_kind, Mapping):
        causes.extend(validate_param_kind(param_kind, _SPEC.child("paramKind")))
    constraints = spec.get("matchConstraints")
    if not isinstance(constraints, Mapping):
        causes.append(required(_SPEC.child("matchConstraints")))
    else:
        causes.extend(validate_match_resources(constraints, _SPEC.child("matchConstraints")))
        if not get_list(constraints, "resourceRules"):
            causes.append(required(_SPEC.child("matchConstraints", "resourceRules")))
    return causes


def validate_policy(obj: Mapping[str, Any], *, check_match_conditions: bool = True) -> list[Cause]:
    """``validateValidatingAdmissionPolicy``: metadata, then the spec."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    spec = get_map(obj, "spec")
    causes.extend(validate_policy_head(spec))
    has_params = isinstance(spec.get("paramKind"), Mapping)
    found, variables = validate_conditions_and_variables(
        spec, has_params, check_match_conditions=check_match_conditions
    )
    causes.extend(found)
    validations = get_list(spec, "validations")
    annotations = get_list(spec, "auditAnnotations")
    if not validations and not annotations:
        detail = "validations or auditAnnotations must contain at least one item"
        causes.append(required(_SPEC.child("validations"), detail))
        causes.append(required(_SPEC.child("auditAnnotations"), detail))
        return causes
    for i, item in enumerate(maps(validations)):
        causes.extend(
            _validate_validation(item, has_params, variables, _SPEC.child("validations").index(i))
        )
    if isinstance(spec.get("auditAnnotations"), list):
        where = _SPEC.child("auditAnnotations")
        if len(annotations) > _MAX_AUDIT_ANNOTATIONS:
            causes.append(
                invalid(
                    where,
                    list(annotations),
                    f"must not have more than {_MAX_AUDIT_ANNOTATIONS} auditAnnotations",
                )
            )
        keys: set[str] = set()
        policy_name = get_str(get_map(obj, "metadata"), "name")
        for i, item in enumerate(maps(annotations)):
            causes.extend(
                _validate_audit_annotation(policy_name, item, has_params, variables, where.index(i))
            )
            key = get_str(item, "key")
            if key in keys:
                causes.append(duplicate(where.index(i).child("key"), key))
            keys.add(key)
    return causes


def validate_policy_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateValidatingAdmissionPolicyUpdate``: match conditions are not checked again when
    neither they nor ``paramKind`` changed."""
    new_spec, old_spec = get_map(new, "spec"), get_map(old, "spec")
    unchanged = new_spec.get("paramKind") == old_spec.get("paramKind") and new_spec.get(
        "matchConditions"
    ) == old_spec.get("matchConditions")
    return validate_policy(new, check_match_conditions=not unchanged)


def validate_policy_status(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateValidatingAdmissionPolicyStatusUpdate``: the type-checking warnings (a
    warning and a field reference each) and the conditions."""
    status = get_map(new, "status")
    path = Path("status")
    causes: list[Cause] = []
    checking = status.get("typeChecking")
    if isinstance(checking, Mapping):
        where = path.child("typeChecking", "expressionWarnings")
        for i, warning in enumerate(maps(get_list(checking, "expressionWarnings"))):
            if not get_str(warning, "warning"):
                causes.append(required(where.index(i).child("warning")))
            if not get_str(warning, "fieldRef").strip():
                causes.append(required(where.index(i).child("fieldRef")))
    causes.extend(validate_conditions(get_list(status, "conditions"), path.child("conditions")))
    return causes


_CONDITION_STATUSES: Final = ("False", "True", "Unknown")
_REASON: Final = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
_REASON_ERROR: Final = (
    "a condition reason must start with alphabetic character, optionally followed by a string "
    "of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' "
    "(e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or "
    "'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"
)


def validate_conditions(conditions: Sequence[Any], path: Path) -> list[Cause]:
    """``metav1validation.ValidateConditions``: types unique qualified names, a known status,
    a non-negative observed generation, a transition time and a reason (its format and at
    most 1024 bytes), a message of at most 32768 bytes."""
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, condition in enumerate(maps(conditions)):
        where = path.index(i)
        kind = get_str(condition, "type")
        causes.extend(invalid(where.child("type"), kind, m) for m in is_qualified_name(kind))
        status = get_str(condition, "status")
        if status not in _CONDITION_STATUSES:
            causes.append(not_supported(where.child("status"), status, _CONDITION_STATUSES))
        generation = opt_int(condition, "observedGeneration")
        if generation is not None and generation < 0:
            causes.append(
                invalid(
                    where.child("observedGeneration"),
                    generation,
                    "must be greater than or equal to zero",
                )
            )
        if not condition.get("lastTransitionTime"):
            causes.append(required(where.child("lastTransitionTime"), "must be set"))
        reason = get_str(condition, "reason")
        if not reason:
            causes.append(required(where.child("reason"), "must be set"))
        else:
            if _REASON.fullmatch(reason) is None:
                causes.append(invalid(where.child("reason"), reason, _REASON_ERROR))
            if len(reason.encode()) > 1024:
                causes.append(too_long(where.child("reason"), 1024))
        if len(get_str(condition, "message").encode()) > 32768:
            causes.append(too_long(where.child("message"), 32768))
        if kind in seen:
            causes.append(duplicate(where.child("type"), kind))
        seen.add(kind)
    return causes


# ------------------------------------------------------------------------- bindings


def validate_param_ref(ref: Mapping[str, Any] | None, path: Path) -> list[Cause]:
    if ref is None:
        return []
    causes: list[Cause] = []
    name = get_str(ref, "name")
    selector = ref.get("selector")
    has_selector = isinstance(selector, Mapping)
    exclusive = "name and selector are mutually exclusive"
    if name:
        causes.extend(invalid(path.child("name"), name, m) for m in is_path_segment_name(name))
        if has_selector:
            causes.append(forbidden(path.child("name"), exclusive))
    if isinstance(selector, Mapping):
        causes.extend(validate_label_selector(selector, path.child("selector")))
        if name:
            causes.append(forbidden(path.child("selector"), exclusive))
    if not name and not has_selector:
        causes.append(required(path, "one of name or selector must be specified"))
    action = opt_str(ref, "parameterNotFoundAction")
    where = path.child("parameterNotFoundAction")
    if not action:
        causes.append(required(where))
    elif action not in _NOT_FOUND_ACTIONS:
        causes.append(not_supported(where, action, _NOT_FOUND_ACTIONS))
    return causes


def _validate_actions(actions: list[str], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, action in enumerate(actions):
        if action not in _VALIDATION_ACTIONS:
            causes.append(not_supported(path.index(i), action, _VALIDATION_ACTIONS))
        if action in seen:
            causes.append(duplicate(path.index(i), action))
        seen.add(action)
    if {"Deny", "Warn"} <= seen:
        causes.append(
            invalid(
                path,
                actions,
                "must not contain both Deny and Warn (repeating the same validation failure "
                "information in the API response and headers serves no purpose)",
            )
        )
    if not seen:
        causes.append(required(path, "at least one validation action is required"))
    return causes


def _opt_map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else None


def validate_binding(obj: Mapping[str, Any]) -> list[Cause]:
    """``validateValidatingAdmissionPolicyBinding``: metadata, then the spec. (Kubernetes
    reports the match resources at ``spec.matchResouces``, misspelt; so does kstore.)"""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    spec = get_map(obj, "spec")
    causes.extend(validate_policy_name(spec))
    causes.extend(validate_param_ref(_opt_map(spec, "paramRef"), _SPEC.child("paramRef")))
    causes.extend(
        validate_match_resources(_opt_map(spec, "matchResources"), _SPEC.child("matchResouces"))
    )
    causes.extend(
        _validate_actions(_strings(spec.get("validationActions")), _SPEC.child("validationActions"))
    )
    return causes
