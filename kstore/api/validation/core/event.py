"""core/v1 Event validation: Kubernetes' legacy event rules (v1.36), for create and update.

Events written through core/v1 get only these checks (events.k8s.io/v1 adds stricter ones; that
group is not served here). An event without ``eventTime`` must sit in its involved object's
namespace (or in ``default`` / no namespace when the object is cluster-scoped); an event with
``eventTime`` needs ``reportingComponent`` (a qualified name), ``reportingInstance``, ``action``
and ``reason`` within their lengths. The event's namespace must be a DNS-1123 subdomain (reported
at ``namespace``). Paths use Kubernetes' internal field names (``reportingController``).

The object's name is not checked here: Kubernetes leaves it to the API server's generic metadata
check (path-segment names), which the registry runs for every kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.validation._access import get_map, get_str
from kstore.api.validation.field import Path, invalid, required
from kstore.api.validation.names import byte_len, is_dns1123_subdomain, is_qualified_name
from kstore.api.validation.objectmeta import metadata_of
from kstore.errors import Cause

__all__ = ["validate_event", "validate_event_update"]

_REPORTING_INSTANCE_LIMIT: Final = 128
_ACTION_LIMIT: Final = 128
_REASON_LIMIT: Final = 128
_NOTE_LIMIT: Final = 1024
_MISMATCH: Final = "does not match event.namespace"


def validate_event(event: Mapping[str, Any]) -> list[Cause]:
    namespace = get_str(metadata_of(event), "namespace")
    involved_namespace = get_str(get_map(event, "involvedObject"), "namespace")
    involved_path = Path("involvedObject", "namespace")
    causes: list[Cause] = []
    if not event.get("eventTime"):
        if not involved_namespace:
            if namespace not in ("", "default"):
                causes.append(invalid(involved_path, involved_namespace, _MISMATCH))
        elif namespace != involved_namespace:
            causes.append(invalid(involved_path, involved_namespace, _MISMATCH))
    else:
        if not involved_namespace and namespace not in ("default", "kube-system"):
            causes.append(invalid(involved_path, involved_namespace, _MISMATCH))
        controller = get_str(event, "reportingComponent")
        if not controller:
            causes.append(required(Path("reportingController")))
        causes.extend(
            invalid(Path("reportingController"), controller, m)
            for m in is_qualified_name(controller)
        )
        for key, limit in (
            ("reportingInstance", _REPORTING_INSTANCE_LIMIT),
            ("action", _ACTION_LIMIT),
            ("reason", _REASON_LIMIT),
        ):
            value = get_str(event, key)
            if not value:
                causes.append(required(Path(key)))
            if byte_len(value) > limit:
                causes.append(invalid(Path(key), "", f"can have at most {limit} characters"))
        if byte_len(get_str(event, "message")) > _NOTE_LIMIT:
            causes.append(
                invalid(Path("message"), "", f"can have at most {_NOTE_LIMIT} characters")
            )
    causes.extend(invalid(Path("namespace"), namespace, m) for m in is_dns1123_subdomain(namespace))
    return causes


def validate_event_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """core/v1 updates get the same legacy checks as creates, on the new object only."""
    return validate_event(new)
