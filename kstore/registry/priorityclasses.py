"""The priorityclasses resource: the two system classes exist from start and stay.

As kube-apiserver's scheduling storage does:

- :func:`ensure_system_priority_classes` creates ``system-node-critical`` and
  ``system-cluster-critical`` when missing (its ``scheduling/bootstrap-system-priority-classes``
  post-start hook), leaving existing ones as they are;
- :class:`PriorityClassStore` refuses to delete either (403, ``this is a system priority class
  and cannot be deleted``); a delete of the collection is not checked, as in Kubernetes.
"""

from __future__ import annotations

from kstore.api.kinds.priorityclass import SYSTEM_PRIORITY_CLASSES, system_priority_classes
from kstore.api.scheme import Scheme
from kstore.errors import AlreadyExists, Forbidden
from kstore.registry.interface import CreateOptions, DeleteOptions, DeleteResult, RequestContext
from kstore.registry.store import GenericStore

__all__ = ["PriorityClassStore", "ensure_system_priority_classes"]


class PriorityClassStore(GenericStore):
    """PriorityClasses: the system classes cannot be deleted."""

    def delete(self, ctx: RequestContext, name: str, opts: DeleteOptions) -> DeleteResult:
        if name in SYSTEM_PRIORITY_CLASSES:
            raise Forbidden(
                f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: this is a system '
                "priority class and cannot be deleted",
                name=name,
                kind="priorityclasses",
                group="scheduling.k8s.io",
            )
        return super().delete(ctx, name, opts)


def ensure_system_priority_classes(scheme: Scheme, store: GenericStore) -> None:
    """Create the system priority classes that do not exist yet."""
    for obj in system_priority_classes():
        scheme.default(obj)
        try:
            store.create(RequestContext(), scheme.to_hub(obj), CreateOptions())
        except AlreadyExists:
            continue
