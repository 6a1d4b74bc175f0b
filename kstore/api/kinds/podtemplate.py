"""core/v1 PodTemplate: a named pod template, stored for others to use (``podtemplates``).

One external version, ``v1``, shaped as the hub. Defaulting is ``SetObjectDefaults_PodTemplate``:
the template's pod spec gets the pod spec defaults (the template is a Go struct, so it is always
there to be defaulted). Validation is ``ValidatePodTemplate`` (ObjectMeta with a DNS-subdomain
name, then ``ValidatePodTemplateSpec`` at ``template``) and, on update,
``ValidatePodTemplateUpdate`` (ObjectMeta update rules, then the template again).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.kinds._workload import default_pod_template
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation.core.podspec import validate_pod_template_spec
from kstore.api.validation.field import Path
from kstore.api.validation.names import name_is_dns_subdomain
from kstore.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "POD_TEMPLATE",
    "default_pod_template_v1",
    "validate_pod_template",
    "validate_pod_template_update",
]

_TEMPLATE: Final = Path("template")


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def default_pod_template_v1(obj: Object) -> None:
    """v1 ``SetObjectDefaults_PodTemplate``, in place."""
    default_pod_template(obj)


def validate_pod_template(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidatePodTemplate``."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    causes.extend(validate_pod_template_spec(_map(obj, "template"), _TEMPLATE))
    return causes


def validate_pod_template_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidatePodTemplateUpdate``: the ObjectMeta update rules, then the template."""
    causes = validate_object_meta_update(new, old)
    causes.extend(validate_pod_template_spec(_map(new, "template"), _TEMPLATE))
    return causes


POD_TEMPLATE = KindDefinition(
    group="",
    kind="PodTemplate",
    versions=(KindVersion(version="v1", default=default_pod_template_v1),),
    storage_version="v1",
    validate=validate_pod_template,
    validate_update=validate_pod_template_update,
    resource=ResourceInfo(
        plural="podtemplates", singular="podtemplate", namespaced=True, short_names=()
    ),
    list_kind="PodTemplateList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (POD_TEMPLATE, list_definition(POD_TEMPLATE))
