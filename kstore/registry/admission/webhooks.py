"""Admission webhooks: kube-apiserver's MutatingAdmissionWebhook and ValidatingAdmissionWebhook.

The webhooks in force are those of the Mutating/ValidatingWebhookConfigurations an informer
holds (list + watch), configurations in name order and webhooks in their order, so a
configuration written through any server of the store takes effect on every server within the
watch's delay. For each request each webhook is matched (:mod:`.matching`: selectors, rules,
``matchPolicy``), then called with an AdmissionReview (v1, or v1beta1 when that is the first
version it accepts) over HTTPS through the registry's :class:`.webhook_client.WebhookClient`,
the objects shown in the version its rules matched:

- a dry-run request to a webhook whose ``sideEffects`` is not None/NoneOnDryRun is refused
  (400 ``admission webhook "<name>" does not support dry run``), whatever its failure policy;
- a call that fails (connection, TLS, timeout, error answer, garbage, an invalid response or
  patch) is skipped under ``failurePolicy: Ignore`` and otherwise refuses the request with a
  500 ``failed calling webhook "<name>": ...``;
- a denial is the webhook's Status (``admission webhook "<name>" denied the request: <message>``,
  its code, 400 when it gives none below 400); ``warnings`` become ``Warning`` headers;
- a mutating webhook's JSONPatch is applied to the object at its version, which is then
  defaulted and converted back; once a webhook has changed the object, every mutating plugin
  runs once more (the chain's reinvocation), and of the webhooks only those with
  ``reinvocationPolicy: IfNeeded`` that ran before the change are called again;
- validating webhooks are called in parallel; the first refusal, in their order, wins;
- ``matchConditions`` (CEL, with ``object``, ``oldObject``, ``request``, ``namespaceObject`` and
  an ``authorizer`` that allows everything) are evaluated after the rules match, with
  Kubernetes' budget: one false skips the webhook; errors skip it under ``Ignore`` and refuse
  the request (403) otherwise;
- the admission configuration kinds themselves are never sent to webhooks (Kubernetes'
  exemption, so that a broken webhook cannot lock its own configuration in).

A call blocks its thread (up to the webhook's ``timeoutSeconds``). The hooks therefore tell the
admission chain that they may block while any webhook is configured (:meth:`Webhooks.blocking`):
writes then leave the event loop for worker threads, and a hung webhook delays only the
requests it is called for.
"""

from __future__ import annotations

import base64
import binascii
import logging
import threading
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from kstore.api.cel.admission import (
    MATCH_CONDITIONS_BUDGET,
    Activation,
    AdmissionCelError,
    CompiledExpression,
    allow_all,
    compile_admission_expression,
)
from kstore.api.gvk import HUB_VERSION, GroupVersionKind, Object
from kstore.codec.json import dumps as json_dumps
from kstore.codec.json import loads as json_loads
from kstore.errors import BadRequest, Cause, Forbidden, InternalError, KStoreError, NotFound
from kstore.registry.admission.matching import (
    EXEMPT_KINDS,
    Match,
    MatchRequest,
    match_request,
    webhook_match,
)
from kstore.registry.admission.request import admission_request
from kstore.registry.admission.webhook_client import WebhookCallError, WebhookClient
from kstore.registry.informer import Informer
from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Registry, RequestContext
from kstore.registry.patch.json_patch import JsonPatchError, apply_operations

__all__ = ["Webhooks", "mutating_hooks", "validating_hooks"]

_log = logging.getLogger("kstore.admission.webhooks")

_GROUP: Final = "admissionregistration.k8s.io"
_CONTEXT: Final = RequestContext()
_REVIEW_VERSIONS: Final = ("v1", "v1beta1")


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class _Webhook:
    configuration: str
    index: int
    spec: Mapping[str, Any]
    #: The ``matchConditions``, compiled when the configuration was seen: (name, expression).
    conditions: tuple[tuple[str, CompiledExpression], ...] = ()

    @property
    def name(self) -> str:
        return str(self.spec.get("name") or "")

    @property
    def key(self) -> tuple[str, int]:
        return (self.configuration, self.index)

    @property
    def ignore_failures(self) -> bool:
        return self.spec.get("failurePolicy") == "Ignore"


_PLUGIN: Final = "MutatingAdmissionWebhook"


@dataclass(slots=True)
class _Reinvocation:
    """The mutating webhooks' notes on one request between the chain's passes."""

    #: IfNeeded webhooks called since the object last changed.
    invoked: set[tuple[str, int]] = field(default_factory=set)
    #: Webhooks to call again on the second pass.
    reinvoke: set[tuple[str, int]] = field(default_factory=set)
    #: The object as the webhooks left it on the last pass (JSON).
    last: bytes | None = None

    def require_reinvoking(self) -> None:
        self.reinvoke |= self.invoked
        self.invoked = set()


def _snapshot(attributes: AdmissionAttributes) -> bytes:
    return json_dumps(attributes.object, option=orjson.OPT_SORT_KEYS)


class _Failure(Exception):
    """A webhook could not be called or answered nonsense (Kubernetes' ErrCallingWebhook):
    subject to the failure policy."""

    def __init__(self, webhook: str, reason: str) -> None:
        super().__init__(f'failed calling webhook "{webhook}": {reason}')


def _error_class(code: int, reason: str) -> type[KStoreError]:
    cls = _ERROR_CLASSES.get((code, reason))
    if cls is None:
        cls = type("WebhookRefusal", (KStoreError,), {"code": code, "reason": reason})
        _ERROR_CLASSES[(code, reason)] = cls
    return cls


_ERROR_CLASSES: dict[tuple[int, str], type[KStoreError]] = {}


def _denial(webhook: str, status: Any) -> KStoreError:
    """Kubernetes' ``ToStatusErr``: the webhook's Status with its message prefixed."""
    status = _map(status)
    denied = f'admission webhook "{webhook}" denied the request'
    code = status.get("code")
    code = code if isinstance(code, int) and code >= 400 else 400
    message = str(status.get("message") or "")
    reason = str(status.get("reason") or "")
    if message:
        text = f"{denied}: {message}"
    elif reason:
        text = f"{denied}: {reason}"
    else:
        text = f"{denied} without explanation"
    details = status.get("details")
    detail = _map(details)
    causes = [
        Cause(str(c.get("reason") or ""), str(c.get("message") or ""), str(c.get("field") or ""))
        for c in detail.get("causes") or []
        if isinstance(c, dict)
    ]
    retry = detail.get("retryAfterSeconds")
    return _error_class(code, reason)(
        text,
        group=str(detail.get("group") or ""),
        kind=str(detail.get("kind") or ""),
        name=str(detail.get("name") or ""),
        causes=causes,
        retry_after_seconds=retry if isinstance(retry, int) else 0,
        details=isinstance(details, dict),
    )


def _failed_closed(failure: _Failure) -> InternalError:
    text = str(failure)
    return InternalError(
        f"Internal error occurred: {text}", causes=(Cause("", text),), details=True
    )


class Webhooks:
    """The admission webhooks of one kind (mutating or validating) in force for a registry."""

    def __init__(self, registry: Registry, *, mutating: bool) -> None:
        self._registry = registry
        self._mutating = mutating
        self._plural = (
            "mutatingwebhookconfigurations" if mutating else "validatingwebhookconfigurations"
        )
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._configurations: dict[str, Object] = {}
        self._webhooks: tuple[_Webhook, ...] = ()
        self._informer: Informer | None = None
        self._pool: ThreadPoolExecutor | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        try:
            store = self._registry.store(_GROUP, self._plural)
        except NotFound:
            return  # the group is not served: no webhook can be configured
        self._informer = Informer(store, self._on_change, stopping=self._stopping)
        self._informer.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._informer is not None:
            self._informer.interrupt()
            self._informer.join(2.0)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def _on_change(self, key: str, obj: Object | None) -> None:
        with self._lock:
            if obj is None:
                self._configurations.pop(key, None)
            else:
                self._configurations[key] = obj
            known = {(w.configuration, w.index): w for w in self._webhooks}
            webhooks = []
            for name, config in sorted(self._configurations.items()):
                for i, hook in enumerate(config.get("webhooks") or []):
                    if not isinstance(hook, dict):
                        continue
                    previous = known.get((name, i))
                    if previous is not None and previous.spec == hook:
                        webhooks.append(previous)  # compiled already
                    else:
                        webhooks.append(_Webhook(name, i, hook, _compile_conditions(hook)))
            self._webhooks = tuple(webhooks)

    def blocking(self) -> bool:
        """Whether a request may call a webhook now (any is configured)."""
        return bool(self._webhooks)

    @property
    def client(self) -> WebhookClient:
        client = getattr(self._registry, "webhook_client", None)
        if not isinstance(client, WebhookClient):
            client = WebhookClient()
        return client

    # -- matching --------------------------------------------------------------------------

    def _namespace_labels(self, name: str) -> Mapping[str, str] | None:
        try:
            namespace = self._registry.store("", "namespaces").get(_CONTEXT, name)
        except NotFound:
            return None
        labels = _map(namespace.get("metadata")).get("labels")
        return labels if isinstance(labels, dict) else {}

    def _matching(
        self, attributes: AdmissionAttributes
    ) -> tuple[MatchRequest, list[tuple[_Webhook, Match]]]:
        request = match_request(attributes, self._registry.scheme.is_served)
        matched: list[tuple[_Webhook, Match]] = []
        definition = attributes.definition
        if (definition.group, definition.kind) in EXEMPT_KINDS:
            return request, matched
        for hook in self._webhooks:
            found = webhook_match(hook.spec, request, self._namespace_labels)
            if found is not None and self._conditions_hold(hook, found, request, attributes):
                matched.append((hook, found))
        return request, matched

    def _conditions_hold(
        self,
        hook: _Webhook,
        found: Match,
        request: MatchRequest,
        attributes: AdmissionAttributes,
    ) -> bool:
        """The webhook's ``matchConditions``: all true (or none) calls it, one false skips it;
        errors skip it under failurePolicy Ignore and otherwise refuse the request (403)."""
        if not hook.conditions:
            return True
        review = self._review(hook, found, request, attributes, "", "v1")["request"]
        # As CEL reads Kubernetes' typed AdmissionRequest: absent strings are "".
        cel_request = {
            "name": "",
            "namespace": "",
            "subResource": "",
            "requestSubResource": "",
            **{k: v for k, v in review.items() if k not in ("object", "oldObject")},
            "userInfo": {
                "username": "",
                "uid": "",
                "groups": [],
                "extra": {},
                **review["userInfo"],
            },
        }
        namespace = None
        if request.namespace:
            try:
                namespace = self._registry.store("", "namespaces").get(_CONTEXT, request.namespace)
            except NotFound:
                namespace = None
        activation = Activation(
            object=review["object"],
            old_object=review["oldObject"],
            request=cel_request,
            namespace_object=namespace,
            authorize=allow_all,
        )
        budget = MATCH_CONDITIONS_BUDGET
        errors: list[str] = []
        for _, compiled in hook.conditions:
            try:
                value, budget = activation.evaluate(compiled, budget)
            except AdmissionCelError as exc:
                errors.append(str(exc))
                continue
            if value is False:
                return False
        if not errors:
            return True
        if hook.ignore_failures:
            return False
        resource = request.resource
        qualified = f"{resource.resource}.{resource.group}" if resource.group else resource.resource
        detail = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
        prefix = f'{qualified} "{request.name}"' if request.name else qualified
        raise Forbidden(
            f"{prefix} is forbidden: {detail}",
            group=resource.group,
            kind=resource.resource,
            name=request.name,
            details=True,
        )

    # -- the hooks -------------------------------------------------------------------------

    def admit(self, attributes: AdmissionAttributes) -> None:
        """The mutating phase (Kubernetes' reinvocation rules): on the first pass each
        matching webhook in order; a change to the object asks the chain for a second pass
        and marks the IfNeeded webhooks called before it for reinvocation (all of them when
        the other plugins changed the object since). On the second pass only those marked
        are called again; a webhook is reinvoked, never called first then."""
        if not self._webhooks:
            return
        state = attributes.plugin_state.setdefault(_PLUGIN, _Reinvocation())
        if attributes.reinvoking and state.last is not None and state.last != _snapshot(attributes):
            state.require_reinvoking()
        try:
            request, matched = self._matching(attributes)
            for hook, found in matched:
                if attributes.reinvoking and hook.key not in state.reinvoke:
                    continue
                if self._mutate(hook, found, request, attributes):
                    state.require_reinvoking()
                    attributes.reinvoke = True
                if hook.spec.get("reinvocationPolicy") == "IfNeeded":
                    state.invoked.add(hook.key)
        finally:
            if attributes.reinvoke and not attributes.reinvoking:
                state.last = _snapshot(attributes)  # to tell the other plugins' changes

    def validate(self, attributes: AdmissionAttributes) -> None:
        """The validating phase: every matching webhook, in parallel."""
        if not self._webhooks:
            return
        request, matched = self._matching(attributes)
        if not matched:
            return
        if len(matched) == 1:
            self._validate_one(*matched[0], request, attributes)
            return
        pool = self._executor()
        futures = [
            pool.submit(self._validate_one, hook, found, request, attributes)
            for hook, found in matched
        ]
        errors = []
        for future in futures:
            error = future.exception()
            if error is not None:
                errors.append(error)
        if errors:
            raise errors[0]

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(16, thread_name_prefix="validating-webhook")
            return self._pool

    def _validate_one(
        self,
        hook: _Webhook,
        found: Match,
        request: MatchRequest,
        attributes: AdmissionAttributes,
    ) -> None:
        try:
            response = self._call(hook, found, request, attributes)
        except _Failure as failure:
            if hook.ignore_failures:
                _log.warning("failed calling webhook, failing open %s: %s", hook.name, failure)
                return
            raise _failed_closed(failure) from None
        self._conclude(hook, response, attributes)

    def _mutate(
        self,
        hook: _Webhook,
        found: Match,
        request: MatchRequest,
        attributes: AdmissionAttributes,
    ) -> bool:
        """Call one mutating webhook and apply its patch; whether the object changed."""
        try:
            response = self._call(hook, found, request, attributes)
            self._conclude(hook, response, attributes)
            return self._apply_patch(hook, found, response, attributes)
        except _Failure as failure:
            if hook.ignore_failures:
                _log.warning("failed calling webhook, failing open %s: %s", hook.name, failure)
                return False
            raise _failed_closed(failure) from None

    # -- one call --------------------------------------------------------------------------

    def _versioned(self, obj: Object | None, kind: GroupVersionKind) -> Object | None:
        if obj is None:
            return None
        if kind.version == HUB_VERSION:
            return obj
        return self._registry.scheme.from_hub(obj, kind.version)

    def _review(
        self,
        hook: _Webhook,
        found: Match,
        request: MatchRequest,
        attributes: AdmissionAttributes,
        uid: str,
        review_version: str,
    ) -> dict[str, Any]:
        objects = (
            self._versioned(attributes.object, found.kind),
            self._versioned(attributes.old_object, found.kind),
        )
        body = admission_request(found, request, attributes, uid, objects)
        return {
            "kind": "AdmissionReview",
            "apiVersion": f"admission.k8s.io/{review_version}",
            "request": body,
        }

    def _call(
        self,
        hook: _Webhook,
        found: Match,
        request: MatchRequest,
        attributes: AdmissionAttributes,
    ) -> dict[str, Any]:
        """Send the review; the verified response. BadRequest for a dry run the webhook
        cannot take; _Failure for everything the failure policy decides."""
        spec = hook.spec
        if attributes.dry_run:
            effects = spec.get("sideEffects")
            if effects is None:
                raise _Failure(hook.name, "Webhook SideEffects is nil")
            if effects not in ("None", "NoneOnDryRun"):
                raise BadRequest(f'admission webhook "{hook.name}" does not support dry run')
        versions = [v for v in spec.get("admissionReviewVersions") or [] if v in _REVIEW_VERSIONS]
        if not versions:
            raise _Failure(
                hook.name,
                "could not create admission objects: webhook does not accept known "
                "AdmissionReview versions (v1, v1beta1)",
            )
        uid = str(uuid.uuid4())
        review = self._review(hook, found, request, attributes, uid, versions[0])
        timeout = spec.get("timeoutSeconds")
        seconds = float(timeout) if isinstance(timeout, int) and timeout > 0 else 10.0
        config = _map(spec.get("clientConfig"))
        try:
            answer = self.client.post(config, review, timeout=seconds)
        except WebhookCallError as exc:
            raise _Failure(hook.name, f"failed to call webhook: {exc}") from None
        try:
            return _verify(answer, uid, versions[0], mutating=self._mutating)
        except ValueError as exc:
            raise _Failure(hook.name, f"received invalid webhook response: {exc}") from None

    def _conclude(
        self, hook: _Webhook, response: Mapping[str, Any], attributes: AdmissionAttributes
    ) -> None:
        """Warnings, then the verdict."""
        for warning in response.get("warnings") or []:
            if isinstance(warning, str) and warning:
                attributes.warnings.append(warning)
        if response.get("allowed") is not True:
            raise _denial(hook.name, response.get("status"))

    def _apply_patch(
        self,
        hook: _Webhook,
        found: Match,
        response: Mapping[str, Any],
        attributes: AdmissionAttributes,
    ) -> bool:
        encoded = response.get("patch")
        if not encoded:
            return False
        try:
            ops = json_loads(base64.b64decode(str(encoded), validate=True))
        except (binascii.Error, ValueError) as exc:
            raise _Failure(
                hook.name, f"received undecodable patch in webhook response: {exc}"
            ) from None
        if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
            raise _Failure(
                hook.name,
                "received undecodable patch in webhook response: json: cannot unmarshal "
                "object into Go value of type jsonpatch.Patch",
            )
        if not ops:
            return False
        if attributes.object is None:
            raise InternalError(
                f'Internal error occurred: admission webhook "{hook.name}" attempted to modify '
                "the object, which is not supported for this operation"
            )
        scheme = self._registry.scheme
        before = self._versioned(attributes.object, found.kind)
        try:
            patched = apply_operations(before, ops)
        except JsonPatchError as exc:
            raise InternalError(f"Internal error occurred: {exc}") from None
        if not isinstance(patched, dict):
            raise InternalError("Internal error occurred: the patched object is not an object")
        patched["apiVersion"] = found.kind.group_version.api_version
        patched["kind"] = found.kind.kind
        try:
            scheme.default(patched)
            hub = scheme.to_hub(patched)
        except KStoreError as exc:
            raise InternalError(f"Internal error occurred: {exc.message}") from None
        changed = json_dumps(hub, option=orjson.OPT_SORT_KEYS) != json_dumps(
            attributes.object, option=orjson.OPT_SORT_KEYS
        )
        attributes.object.clear()
        attributes.object.update(hub)
        return changed


def _compile_conditions(hook: Mapping[str, Any]) -> tuple[tuple[str, CompiledExpression], ...]:
    conditions = hook.get("matchConditions")
    return tuple(
        (
            str(c.get("name") or ""),
            compile_admission_expression(
                str(c.get("expression") or ""), params=False, authorizer=True
            ),
        )
        for c in (conditions if isinstance(conditions, list) else [])
        if isinstance(c, dict)
    )


def _verify(answer: Any, uid: str, version: str, *, mutating: bool) -> dict[str, Any]:
    """Kubernetes' ``VerifyAdmissionResponse``: the response, or ValueError with its words."""
    review = _map(answer)
    response = review.get("response")
    if not isinstance(response, dict):
        raise ValueError("webhook response was absent")
    got_uid = str(response.get("uid") or "")
    if got_uid != uid:
        raise ValueError(f'expected response.uid="{uid}", got "{got_uid}"')
    if version == "v1":
        api_version = str(review.get("apiVersion") or "")
        kind = str(review.get("kind") or "")
        if (api_version, kind) != ("admission.k8s.io/v1", "AdmissionReview"):
            raise ValueError(
                "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got "
                f"{api_version}, Kind={kind}"
            )
    patch_type = str(response.get("patchType") or "")
    patch = response.get("patch")
    if patch and not patch_type:
        raise ValueError("webhook returned response.patch but not response.patchType")
    if patch_type and not patch:
        raise ValueError("webhook returned response.patchType but not response.patch")
    if patch_type and not mutating:
        raise ValueError("validating webhook may not return response.patchType")
    if patch_type and patch_type != "JSONPatch":
        raise ValueError(f'webhook returned invalid response.patchType of "{patch_type}"')
    return response


def mutating_hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    """MutatingAdmissionWebhook for ``registry``: its informer started, stopped on close."""
    plugin = Webhooks(registry, mutating=True)
    plugin.start()
    registry.on_close(plugin.stop)
    return plugin.admit, None


def validating_hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    """ValidatingAdmissionWebhook for ``registry``: its informer started, stopped on close."""
    plugin = Webhooks(registry, mutating=False)
    plugin.start()
    registry.on_close(plugin.stop)
    return None, plugin.validate
