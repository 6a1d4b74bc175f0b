"""admissionregistration.k8s.io: Kubernetes' strategies of
``pkg/registry/admissionregistration`` for the webhook configurations, ValidatingAdmissionPolicy
and ValidatingAdmissionPolicyBinding. All are cluster-scoped; updates must name the
``resourceVersion`` they replace (none allows an unconditional update).

- webhook configurations and bindings: ``generation`` 1 on create, bumped when anything but
  metadata changes (the webhooks, the binding's spec);
- ValidatingAdmissionPolicy: ``status`` emptied on create, kept by updates of the policy,
  ``generation`` 1 and bumped when ``spec`` changes; ``status`` writes keep everything else and
  check the type-checking warnings and conditions. (Kubernetes' type-checking controller, which
  writes ``status.typeChecking``, does not run here.)

Kubernetes also asks the authorizer, on writes of a policy with a ``paramKind`` or a binding
with a ``paramRef``, whether the user may read the parameter resource; kstore has no
authorizer for that check.
"""

from __future__ import annotations

from kstore.api.gvk import Object
from kstore.api.kinds._admission_validation import validate_policy_status
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import STATUS, BuiltinStrategy

__all__ = ["AdmissionObjectStrategy", "ValidatingAdmissionPolicyStrategy"]


class AdmissionObjectStrategy(BuiltinStrategy):
    """Webhook configurations and policy bindings."""

    tracks_generation = True
    allow_unconditional_update = False


class ValidatingAdmissionPolicyStrategy(AdmissionObjectStrategy):
    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == STATUS:
            return validate_policy_status(obj, old)
        return super().validate_kind_update(ctx, obj, old, subresource)
