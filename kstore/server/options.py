"""Query parameters and option bodies, read and validated as the API server reads them.

Each reader returns the registry's or storage's option value, or raises the error Kubernetes
gives for the same input:

- a parameter of the wrong type (``limit=x``, ``watch=yes``) or an integer outside int64
  (``limit=99999999999999999999``: ``strconv.ParseInt`` fails) is 400 BadRequest;
- an invalid combination is 422 Invalid on the options kind (``ListOptions.meta.k8s.io ""
  is invalid: resourceVersionMatch: Forbidden: ...``), with one cause per problem, in the
  order of apimachinery's ``ValidateListOptions``/``ValidateDeleteOptions``;
- a field selector on a field the kind does not index is 400 ``field label not supported``;
- ``fieldValidation`` outside Ignore/Warn/Strict is 422 on the options kind of the write
  (``CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus"``),
  raised by :func:`create_options`/:func:`update_options`, so :func:`field_validation` may be
  read first without knowing which kind to name.

Watches are defaulted as with the WatchList feature on (``SetListOptionsDefaults``): a watch
from "" or "0" with neither ``sendInitialEvents`` nor ``resourceVersionMatch`` becomes
``sendInitialEvents=true&resourceVersionMatch=NotOlderThan``, so the initial ADDED events are
followed by the initial-events-end bookmark whenever bookmarks are allowed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from kstore.api.gvk import Object
from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.api.validation.field import Path, forbidden, invalid, not_supported, too_long
from kstore.codec.strict import FieldValidation
from kstore.errors import BadRequest, Cause, Invalid
from kstore.registry.interface import CreateOptions, DeleteOptions, UpdateOptions
from kstore.registry.patch import manager_from_user_agent
from kstore.server.request_info import query_bool
from kstore.storage.interface import ListOptions, Preconditions, ResourceVersionMatch

__all__ = [
    "ListRequest",
    "create_options",
    "delete_options",
    "field_validation",
    "list_request",
    "update_options",
]

_META = "meta.k8s.io"
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
# apimachinery's allowedFieldValidationValues, listed sorted as sets.List does.
_FIELD_VALIDATIONS = ("", "Ignore", "Strict", "Warn")
_PROPAGATION = ("Foreground", "Background", "Orphan")
_FIELD_MANAGER_MAX = 128

Query = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ListRequest:
    """A list or watch request: storage options, whether it is a watch, its timeout (seconds,
    0 = the server's default) and whether the client allows bookmarks."""

    options: ListOptions
    watch: bool
    timeout_seconds: int


def _int(query: Query, name: str) -> int | None:
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f'strconv.ParseInt: parsing "{raw}": invalid syntax for {name}') from None
    if not _INT64_MIN <= value <= _INT64_MAX:
        # Every integer option is an int64 in apimachinery; ParseInt refuses the rest.
        raise BadRequest(f'strconv.ParseInt: parsing "{raw}": value out of range for {name}')
    return value


def _bool(query: Query, name: str) -> bool | None:
    raw = query.get(name)
    return None if raw is None else query_bool(raw)


def _invalid(kind: str, causes: list[Cause]) -> Invalid:
    return Invalid.for_object(kind, "", causes, group=_META)


@functools.lru_cache(maxsize=512)
def _label_selector(text: str) -> LabelSelector:
    # Selectors are immutable: the few a client repeats (an informer's, a page's) are parsed
    # once. A text that fails is not kept, and fails again.
    return LabelSelector.parse(text)


@functools.lru_cache(maxsize=512)
def _field_selector(text: str) -> FieldSelector:
    return FieldSelector.parse(text)


def list_request(
    query: Query,
    *,
    name: str,
    watch: bool,
    selectable_fields: Collection[str],
) -> ListRequest:
    """Read a list/watch request; ``name`` comes from a ``/watch/.../<name>`` path.

    ``selectable_fields`` are the field-selector fields the kind supports.
    """
    rv = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    send_initial = _bool(query, "sendInitialEvents")
    continue_token = query.get("continue", "")
    limit = _int(query, "limit") or 0
    timeout = _int(query, "timeoutSeconds") or 0
    bookmarks = bool(_bool(query, "allowWatchBookmarks"))
    label_selector = _label_selector(query.get("labelSelector", ""))
    field_selector = _field_selector(query.get("fieldSelector", ""))

    if watch and send_initial is None and not match and rv in ("", "0"):
        send_initial, match = True, ResourceVersionMatch.NOT_OLDER_THAN.value
    causes = (
        _watch_option_causes(match, send_initial, continue_token)
        if watch
        else _list_option_causes(rv, match, send_initial, continue_token)
    )
    if causes:
        raise _invalid("ListOptions", causes)

    for field in field_selector.fields:
        if field not in selectable_fields:
            raise BadRequest(f"field label not supported: {field}")
    if name:
        selected = field_selector.exact_value("metadata.name")
        if field_selector.empty():
            field_selector = FieldSelector.parse(f"metadata.name={name}")
        elif selected != name:
            raise BadRequest("fieldSelector metadata.name doesn't match requested name")
    options = ListOptions(
        resource_version=rv,
        resource_version_match=ResourceVersionMatch(match),
        label_selector=label_selector,
        field_selector=field_selector,
        limit=max(limit, 0),
        continue_token=continue_token,
        send_initial_events=send_initial,
        allow_bookmarks=bookmarks,
    )
    return ListRequest(options, watch, max(timeout, 0))


def _list_option_causes(
    rv: str, match: str, send_initial: bool | None, continue_token: str
) -> list[Cause]:
    causes: list[Cause] = []
    path = Path("resourceVersionMatch")
    if match:
        if not rv:
            causes.append(
                forbidden(
                    path, "resourceVersionMatch is forbidden unless resourceVersion is provided"
                )
            )
        if continue_token:
            causes.append(
                forbidden(path, "resourceVersionMatch is forbidden when continue is provided")
            )
        if match not in ("Exact", "NotOlderThan"):
            causes.append(not_supported(path, match, ["Exact", "NotOlderThan", ""]))
        if match == "Exact" and rv == "0":
            causes.append(
                forbidden(path, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
            )
    if send_initial is not None:
        causes.append(
            forbidden(Path("sendInitialEvents"), "sendInitialEvents is forbidden for list")
        )
    return causes


def _watch_option_causes(match: str, send_initial: bool | None, continue_token: str) -> list[Cause]:
    causes: list[Cause] = []
    path = Path("resourceVersionMatch")
    if send_initial is not None and match != "NotOlderThan":
        causes.append(
            forbidden(
                path, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
            )
        )
    if match:
        if send_initial is None:
            causes.append(
                forbidden(
                    path,
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                    "provided",
                )
            )
        if match != "NotOlderThan":
            causes.append(not_supported(path, match, ["NotOlderThan"]))
        if continue_token:
            causes.append(
                forbidden(path, "resourceVersionMatch is forbidden when continue is provided")
            )
    return causes


def _dry_run_causes(values: list[str]) -> list[Cause]:
    if any(v != "All" for v in values):
        return [not_supported(Path("dryRun"), values, ["All"])]
    return []


def _field_manager_causes(manager: str) -> list[Cause]:
    if len(manager) > _FIELD_MANAGER_MAX:
        return [too_long(Path("fieldManager"), _FIELD_MANAGER_MAX)]
    if manager and not manager.isprintable():
        return [invalid(Path("fieldManager"), manager, "must be a printable string")]
    return []


def _dry_run(query_values: list[str]) -> list[str]:
    return [v for v in query_values if v != ""]


def field_validation(query: Query) -> FieldValidation:
    """The ``fieldValidation`` parameter (Warn when absent, as Kubernetes defaults it).

    An unsupported value reads as Warn here: the 422 naming the options kind comes from
    :func:`create_options`/:func:`update_options`, which every write calls before decoding.
    """
    raw = query.get("fieldValidation")
    if raw not in _FIELD_VALIDATIONS:
        return FieldValidation.WARN
    return FieldValidation.parse(raw)


def _field_validation_causes(query: Query) -> list[Cause]:
    raw = query.get("fieldValidation", "")
    if raw in _FIELD_VALIDATIONS:
        return []
    return [not_supported(Path("fieldValidation"), raw, _FIELD_VALIDATIONS)]


def _manager(manager: str, user_agent: str) -> str:
    # As Kubernetes' managerOrUserAgent: a write without fieldManager is recorded in
    # managedFields under the client's product name (``kubectl/v1.37.1 (...)`` -> ``kubectl``).
    return manager or manager_from_user_agent(user_agent)


def create_options(query: Query, dry_run_values: list[str], user_agent: str = "") -> CreateOptions:
    """Options of a create; ``field_manager`` falls back to the User-Agent's product."""
    dry_run = _dry_run(dry_run_values)
    manager = query.get("fieldManager", "")
    causes = (
        _dry_run_causes(dry_run) + _field_manager_causes(manager) + _field_validation_causes(query)
    )
    if causes:
        raise _invalid("CreateOptions", causes)
    return CreateOptions(dry_run=bool(dry_run), field_manager=_manager(manager, user_agent))


def update_options(
    query: Query,
    dry_run_values: list[str],
    *,
    subresource: str,
    kind: str = "UpdateOptions",
    user_agent: str = "",
) -> UpdateOptions:
    """Options of an update, or (``kind="PatchOptions"``) of a patch with its ``force``;
    ``field_manager`` falls back to the User-Agent's product."""
    dry_run = _dry_run(dry_run_values)
    manager = query.get("fieldManager", "")
    causes = (
        _dry_run_causes(dry_run) + _field_manager_causes(manager) + _field_validation_causes(query)
    )
    force = _bool(query, "force")
    if force is not None and kind != "PatchOptions":
        force = None
    if causes:
        raise _invalid(kind, causes)
    return UpdateOptions(
        dry_run=bool(dry_run),
        field_manager=_manager(manager, user_agent),
        subresource=subresource,
        force=bool(force),
    )


def delete_options(body: Object | None, query: Query, dry_run_values: list[str]) -> DeleteOptions:
    """DeleteOptions from the body when there is one, else from the query (as Kubernetes:
    the two are never merged)."""
    grace: Any
    preconditions: Preconditions | None = None
    if body is not None:
        grace = body.get("gracePeriodSeconds")
        propagation = body.get("propagationPolicy")
        orphan = body.get("orphanDependents")
        dry_run = body.get("dryRun") or []
        pre = body.get("preconditions")
        if isinstance(pre, dict) and (pre.get("uid") is not None or pre.get("resourceVersion")):
            preconditions = Preconditions(
                uid=_optional_str(pre.get("uid")),
                resource_version=_optional_str(pre.get("resourceVersion")),
            )
        if not isinstance(dry_run, list) or not all(isinstance(v, str) for v in dry_run):
            raise BadRequest("DeleteOptions.dryRun must be a list of strings")
        if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool)):
            raise BadRequest("DeleteOptions.gracePeriodSeconds must be an integer")
        if orphan is not None and not isinstance(orphan, bool):
            raise BadRequest("DeleteOptions.orphanDependents must be a boolean")
        if propagation is not None and not isinstance(propagation, str):
            raise BadRequest("DeleteOptions.propagationPolicy must be a string")
    else:
        grace = _int(query, "gracePeriodSeconds")
        propagation = query.get("propagationPolicy") or None
        orphan = _bool(query, "orphanDependents")
        dry_run = _dry_run(dry_run_values)
    causes: list[Cause] = []
    if orphan is not None and propagation is not None:
        causes.append(
            invalid(
                Path("propagationPolicy"),
                propagation,
                "orphanDependents and deletionPropagation cannot be both set",
            )
        )
    if propagation is not None and propagation not in _PROPAGATION:
        causes.append(not_supported(Path("propagationPolicy"), propagation, [*_PROPAGATION, "nil"]))
    causes.extend(_dry_run_causes(dry_run))
    if causes:
        raise _invalid("DeleteOptions", causes)
    return DeleteOptions(
        dry_run=bool(dry_run),
        grace_period_seconds=grace,
        preconditions=preconditions,
        propagation_policy=propagation,
        orphan_dependents=orphan,
    )


def _optional_str(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest("DeleteOptions.preconditions values must be strings")
    return value


#: How the handlers see a kind's field-selector support.
SelectableFields = Callable[[], Collection[str]]
