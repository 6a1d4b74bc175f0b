"""rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding.

The hub has v1's shape. Defaulting is ``pkg/apis/rbac/v1/defaults.go``: a binding's
``roleRef.apiGroup`` and a User or Group subject's ``apiGroup`` default to
``rbac.authorization.k8s.io``. Validation is ``pkg/apis/rbac/validation``:

- names (and ``roleRef.name``) are path segment names (not ``.``/``..``, no ``/`` or ``%``);
- a rule needs ``verbs``; a resource rule needs ``apiGroups`` and ``resources``; a rule with
  ``nonResourceURLs`` may name no resources and only belongs to a ClusterRole;
- a binding's ``roleRef`` names a Role or ClusterRole (a ClusterRoleBinding only a ClusterRole)
  in this group, and never changes after creation (``cannot change roleRef``);
- a subject is a User or Group of this group, or a ServiceAccount (DNS subdomain name, no
  group, and a namespace when the binding is cluster-wide).

What a rule *means* (how the authorizer matches it) lives in the server's RBAC authorizer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import (
    Defaulter,
    KindDefinition,
    KindVersion,
    ResourceInfo,
    UpdateValidator,
    Validator,
)
from kstore.api.validation._render import GoStruct
from kstore.api.validation.field import JSONValue, Path, invalid, not_supported, required
from kstore.api.validation.names import name_is_dns_subdomain, validate_path_segment_name
from kstore.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from kstore.errors import Cause

__all__ = [
    "CLUSTER_ROLE",
    "CLUSTER_ROLE_BINDING",
    "DEFINITIONS",
    "GROUP",
    "ROLE",
    "ROLE_BINDING",
]

GROUP: Final = "rbac.authorization.k8s.io"

_SUBJECT_KINDS: Final = ("ServiceAccount", "User", "Group")


def _list(obj: Mapping[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else []


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


# ---------------------------------------------------------------------------- defaults


def _default_subjects(obj: dict[str, Any]) -> None:
    for subject in _list(obj, "subjects"):
        kind = subject.get("kind") if isinstance(subject, dict) else None
        if kind in ("User", "Group") and not subject.get("apiGroup"):
            subject["apiGroup"] = GROUP


def _default_binding(obj: dict[str, Any]) -> None:
    role_ref = obj.get("roleRef")
    if isinstance(role_ref, dict) and not role_ref.get("apiGroup"):
        role_ref["apiGroup"] = GROUP
    _default_subjects(obj)


# ---------------------------------------------------------------------------- validation


def _rbac_name(name: str, prefix: bool) -> list[str]:
    """``ValidateRBACName``: role and binding names only have to be safe in a URL path."""
    return validate_path_segment_name(name, prefix)


def _validate_rule(rule: Mapping[str, Any], namespaced: bool, path: Path) -> list[Cause]:
    causes: list[Cause] = []
    if not _list(rule, "verbs"):
        causes.append(required(path.child("verbs"), "verbs must contain at least one value"))
    urls = _list(rule, "nonResourceURLs")
    if urls:
        if namespaced:
            causes.append(
                invalid(
                    path.child("nonResourceURLs"),
                    JSONValue(urls),
                    "namespaced rules cannot apply to non-resource URLs",
                )
            )
        if _list(rule, "apiGroups") or _list(rule, "resources") or _list(rule, "resourceNames"):
            causes.append(
                invalid(
                    path.child("nonResourceURLs"),
                    JSONValue(urls),
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return causes
    if not _list(rule, "apiGroups"):
        causes.append(
            required(path.child("apiGroups"), "resource rules must supply at least one api group")
        )
    if not _list(rule, "resources"):
        causes.append(
            required(path.child("resources"), "resource rules must supply at least one resource")
        )
    return causes


def _validate_rules(obj: Mapping[str, Any], namespaced: bool) -> list[Cause]:
    causes: list[Cause] = []
    rules = Path("rules")
    for i, rule in enumerate(_list(obj, "rules")):
        causes.extend(
            _validate_rule(rule if isinstance(rule, Mapping) else {}, namespaced, rules.index(i))
        )
    return causes


def validate_role(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateRole``."""
    return [*validate_object_meta(obj, True, _rbac_name), *_validate_rules(obj, True)]


def validate_cluster_role(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateClusterRole`` (label selectors of an aggregation rule are not checked)."""
    causes = [*validate_object_meta(obj, False, _rbac_name), *_validate_rules(obj, False)]
    aggregation = obj.get("aggregationRule")
    if isinstance(aggregation, Mapping) and not _list(aggregation, "clusterRoleSelectors"):
        causes.append(
            required(
                Path("aggregationRule").child("clusterRoleSelectors"),
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            )
        )
    return causes


def _validate_subject(subject: Mapping[str, Any], namespaced: bool, path: Path) -> list[Cause]:
    causes: list[Cause] = []
    name = _str(subject, "name")
    if not name:
        causes.append(required(path.child("name")))
    kind = _str(subject, "kind")
    api_group = _str(subject, "apiGroup")
    if kind == "ServiceAccount":
        if name:
            causes.extend(
                invalid(path.child("name"), name, msg) for msg in name_is_dns_subdomain(name, False)
            )
        if api_group:
            causes.append(not_supported(path.child("apiGroup"), api_group, [""]))
        if not namespaced and not _str(subject, "namespace"):
            causes.append(required(path.child("namespace")))
    elif kind in ("User", "Group"):
        if api_group != GROUP:
            causes.append(not_supported(path.child("apiGroup"), api_group, [GROUP]))
    else:
        causes.append(not_supported(path.child("kind"), kind, _SUBJECT_KINDS))
    return causes


def _validate_binding(
    obj: Mapping[str, Any], namespaced: bool, role_kinds: Sequence[str]
) -> list[Cause]:
    causes = validate_object_meta(obj, namespaced, _rbac_name)
    role_ref = _map(obj, "roleRef")
    where = Path("roleRef")
    api_group = _str(role_ref, "apiGroup")
    if api_group != GROUP:
        causes.append(not_supported(where.child("apiGroup"), api_group, [GROUP]))
    kind = _str(role_ref, "kind")
    if kind not in role_kinds:
        causes.append(not_supported(where.child("kind"), kind, role_kinds))
    name = _str(role_ref, "name")
    if not name:
        causes.append(required(where.child("name")))
    else:
        causes.extend(invalid(where.child("name"), name, msg) for msg in _rbac_name(name, False))
    subjects = Path("subjects")
    for i, subject in enumerate(_list(obj, "subjects")):
        causes.extend(
            _validate_subject(
                subject if isinstance(subject, Mapping) else {}, namespaced, subjects.index(i)
            )
        )
    return causes


def _role_ref_struct(role_ref: Mapping[str, Any]) -> GoStruct:
    # The internal rbac.RoleRef has no JSON tags, so Go prints its field names as they are.
    return GoStruct(
        APIGroup=_str(role_ref, "apiGroup"),
        Kind=_str(role_ref, "kind"),
        Name=_str(role_ref, "name"),
    )


def _role_ref_unchanged(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    new_ref = _role_ref_struct(_map(new, "roleRef"))
    if new_ref == _role_ref_struct(_map(old, "roleRef")):
        return []
    return [invalid(Path("roleRef"), new_ref, "cannot change roleRef")]


def validate_role_binding(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateRoleBinding``: a Role or a ClusterRole, subjects may omit a namespace."""
    return _validate_binding(obj, True, ("Role", "ClusterRole"))


def validate_cluster_role_binding(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateClusterRoleBinding``: only a ClusterRole; ServiceAccounts need a namespace."""
    return _validate_binding(obj, False, ("ClusterRole",))


def _update(create: Validator) -> UpdateValidator:
    def validate_update(new: Object, old: Object) -> list[Cause]:
        return [*create(new), *validate_object_meta_update(new, old)]

    return validate_update


def _binding_update(create: Validator) -> UpdateValidator:
    def validate_update(new: Object, old: Object) -> list[Cause]:
        return [
            *create(new),
            *validate_object_meta_update(new, old),
            *_role_ref_unchanged(new, old),
        ]

    return validate_update


def _definition(
    kind: str,
    plural: str,
    *,
    namespaced: bool,
    validate: Validator,
    validate_update: UpdateValidator,
    default: Defaulter | None = None,
) -> KindDefinition:
    return KindDefinition(
        group=GROUP,
        kind=kind,
        versions=(KindVersion(version="v1", default=default),),
        storage_version="v1",
        validate=validate,
        validate_update=validate_update,
        resource=ResourceInfo(plural=plural, singular=kind.lower(), namespaced=namespaced),
        list_kind=f"{kind}List",
    )


ROLE = _definition(
    "Role",
    "roles",
    namespaced=True,
    validate=validate_role,
    validate_update=_update(validate_role),
)
CLUSTER_ROLE = _definition(
    "ClusterRole",
    "clusterroles",
    namespaced=False,
    validate=validate_cluster_role,
    validate_update=_update(validate_cluster_role),
)
ROLE_BINDING = _definition(
    "RoleBinding",
    "rolebindings",
    namespaced=True,
    validate=validate_role_binding,
    validate_update=_binding_update(validate_role_binding),
    default=_default_binding,
)
CLUSTER_ROLE_BINDING = _definition(
    "ClusterRoleBinding",
    "clusterrolebindings",
    namespaced=False,
    validate=validate_cluster_role_binding,
    validate_update=_binding_update(validate_cluster_role_binding),
    default=_default_binding,
)

DEFINITIONS: tuple[KindDefinition, ...] = tuple(
    d
    for item in (ROLE, CLUSTER_ROLE, ROLE_BINDING, CLUSTER_ROLE_BINDING)
    for d in (item, list_definition(item))
)
