"""Kubernetes' validation rules, field paths and messages, for objects held as dicts.

Layout:

- :mod:`~kstore.api.validation.field`: :class:`Path` and the cause constructors (``required``,
  ``invalid``, ``not_supported``, ``duplicate``, ``forbidden``, ``too_long``, ``too_many``,
  ``type_invalid``, ``not_found``, ``internal_error``), worded as ``field.Error`` words them;
- :mod:`~kstore.api.validation.names`: format checks (DNS-1123 label and subdomain, DNS-1035
  label, qualified names, label values, config keys, port names) and the name rules a kind
  picks from (:data:`NameValidator`: ``name_is_dns_subdomain``, ``name_is_dns_label``,
  ``name_is_dns1035_label``, ``validate_path_segment_name``);
- :mod:`~kstore.api.validation.objectmeta`: ``validate_object_meta(obj, namespaced, name_fn)``
  and ``validate_object_meta_update(new, old)``;
- :mod:`~kstore.api.validation.core`: the core/v1 kinds, including the pod spec and pod template
  rules that workload kinds embed.

Every function returns ``list[Cause]`` (empty when valid); callers raise
:meth:`kstore.errors.Invalid.for_object` with them. The messages are those of Kubernetes v1.36.

A kind's validator on top of these::

    def validate_lease(lease):
        causes = validate_object_meta(lease, True, name_is_dns_subdomain)
        spec_path = Path("spec")
        ...
        return causes
"""

from __future__ import annotations

from kstore.api.validation.field import (
    GoStruct,
    JSONValue,
    Path,
    duplicate,
    forbidden,
    internal_error,
    invalid,
    not_found,
    not_supported,
    required,
    too_long,
    too_many,
    type_invalid,
)
from kstore.api.validation.names import (
    NameValidator,
    is_config_map_key,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_namespace_name,
    validate_path_segment_name,
)
from kstore.api.validation.objectmeta import (
    FIELD_IMMUTABLE,
    METADATA,
    validate_annotations,
    validate_finalizers,
    validate_immutable_field,
    validate_labels,
    validate_nonnegative_field,
    validate_object_meta,
    validate_object_meta_update,
    validate_owner_references,
)

__all__ = [
    "FIELD_IMMUTABLE",
    "METADATA",
    "GoStruct",
    "JSONValue",
    "NameValidator",
    "Path",
    "duplicate",
    "forbidden",
    "internal_error",
    "invalid",
    "is_config_map_key",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_label_value",
    "is_qualified_name",
    "is_valid_port_name",
    "is_valid_port_num",
    "name_is_dns1035_label",
    "name_is_dns_label",
    "name_is_dns_subdomain",
    "not_found",
    "not_supported",
    "required",
    "too_long",
    "too_many",
    "type_invalid",
    "validate_annotations",
    "validate_finalizers",
    "validate_immutable_field",
    "validate_labels",
    "validate_namespace_name",
    "validate_nonnegative_field",
    "validate_object_meta",
    "validate_object_meta_update",
    "validate_owner_references",
    "validate_path_segment_name",
]
