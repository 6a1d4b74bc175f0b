"""certificates.k8s.io CertificateSigningRequest: Kubernetes' strategies of
``pkg/registry/certificates/certificates`` (the main resource, ``status`` and ``approval``).

- create: ``status`` emptied; ``spec.username``, ``uid``, ``groups`` and ``extra`` are the
  requesting user's (whatever the body said), as Kubernetes records who asked; no generation;
- update of the object: only metadata changes, ``spec`` and ``status`` are kept;
- ``status`` writes: ``spec`` kept, existing Approved/Denied conditions kept as stored, the
  certificate may be set once;
- ``approval`` writes (``kubectl certificate approve|deny``): ``spec`` and the certificate
  kept, the conditions may gain Approved or Denied;
- on both subresources a condition without ``lastUpdateTime`` gets now, and one without
  ``lastTransitionTime`` keeps the stored time of a condition of the same type and status, or
  gets now.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kstore.api.gvk import Object
from kstore.api.kinds.certificates import APPROVAL, validate_csr_update
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import STATUS, BuiltinStrategy, keep

__all__ = ["CertificateSigningRequestStrategy"]


def _conditions(obj: Object) -> list[Any]:
    status = obj.get(STATUS)
    conditions = status.get("conditions") if isinstance(status, dict) else None
    return conditions if isinstance(conditions, list) else []


def _preserve_instances(obj: Object, old: Object, kind: str) -> None:
    """``preserveConditionInstances``: same count of ``kind`` conditions, the stored ones."""
    new_list = _conditions(obj)
    stored = [c for c in _conditions(old) if isinstance(c, dict) and c.get("type") == kind]
    positions = [i for i, c in enumerate(new_list) if isinstance(c, dict) and c.get("type") == kind]
    if len(positions) != len(stored):
        return
    for i, condition in zip(positions, stored, strict=True):
        new_list[i] = dict(condition)


def _populate_timestamps(obj: Object, old: Object) -> None:
    # metav1.Now() as Kubernetes writes it: RFC 3339, UTC, whole seconds.
    moment = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for condition in _conditions(obj):
        if not isinstance(condition, dict):
            continue
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = moment
        if not condition.get("lastTransitionTime"):
            transition = moment
            for previous in _conditions(old):
                if (
                    isinstance(previous, dict)
                    and previous.get("type") == condition.get("type")
                    and previous.get("status") == condition.get("status")
                    and previous.get("lastTransitionTime")
                ):
                    transition = previous["lastTransitionTime"]
                    break
            condition["lastTransitionTime"] = transition


class CertificateSigningRequestStrategy(BuiltinStrategy):
    tracks_generation = False

    def subresources(self) -> tuple[str, ...]:
        return (STATUS, APPROVAL)

    def reset_fields(self, subresource: str) -> frozenset[tuple[str, ...]]:
        # Kubernetes' GetResetFields of the three strategies.
        if subresource == STATUS:
            return frozenset({("spec",), ("status", "conditions")})
        if subresource == APPROVAL:
            return frozenset({("spec",), ("status", "certificate")})
        return frozenset({("spec",), ("status",)})

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        warnings = super().prepare_for_create(ctx, obj)
        obj[STATUS] = {}
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            for key in ("username", "uid", "groups", "extra"):
                spec.pop(key, None)
            user = ctx.user
            if user is not None:
                spec.update(user.fields())
        return warnings

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        keep(obj, old, "spec")
        if subresource == STATUS:
            _preserve_instances(obj, old, "Approved")
            _preserve_instances(obj, old, "Denied")
            _populate_timestamps(obj, old)
        elif subresource == APPROVAL:
            status = obj.get(STATUS)
            if not isinstance(status, dict):
                status = obj[STATUS] = {}
            old_status = old.get(STATUS)
            certificate = old_status.get("certificate") if isinstance(old_status, dict) else None
            if certificate is None:
                status.pop("certificate", None)
            else:
                status["certificate"] = certificate
            _populate_timestamps(obj, old)
        else:
            keep(obj, old, STATUS)

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        return validate_csr_update(obj, old, subresource)
