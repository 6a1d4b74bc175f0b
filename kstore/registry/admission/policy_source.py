"""What ValidatingAdmissionPolicy and MutatingAdmissionPolicy share: the policies and bindings
in force (two informers, each policy compiled once per generation), the quick test of whether
any binding may match a request's resource, params, and namespaces.

kube-apiserver builds both plugins on one generic policy source and dispatcher
(``k8s.io/apiserver/pkg/admission/plugin/policy/generic``); so does kstore:

- the policies and bindings in force are those two informers hold (list + watch of the
  ``admissionregistration.k8s.io`` resources), so a policy written through any server of the
  store takes effect on every server within the watch's delay; a binding of a policy that does
  not exist binds nothing;
- params: with a ``paramKind`` and a binding's ``paramRef``, the objects ``name`` or
  ``selector`` picks (in ``namespace``, else the request's, for a namespaced kind); none found
  is ``parameterNotFoundAction`` (Allow: nothing to evaluate; Deny: an error); no
  ``paramRef``: ``params`` is null. Param objects are held by an informer per kind; one
  missing from it is read from the store (as Kubernetes falls back to a direct read);
- configuration errors (:class:`ConfigError`) are for the failure policy to decide.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Final, Generic, Protocol, TypeVar

from kstore.api.cel.admission import Authorize, CompiledExpression, compile_admission_expression
from kstore.api.gvk import HUB_VERSION, GroupVersion, Object
from kstore.api.scheme import KindDefinition, Scheme
from kstore.api.selectors import LabelSelector
from kstore.errors import KStoreError, NotFound
from kstore.registry.informer import Informer
from kstore.registry.interface import AdmissionAttributes, Registry, RequestContext, ResourceStore

__all__ = [
    "ConfigError",
    "PolicyExpressions",
    "PolicySource",
    "authorizer_of",
    "in_version",
    "labels_of",
    "namespace_object",
    "object_name",
    "set_registry_authorizer",
]

_GROUP: Final = "admissionregistration.k8s.io"
_CONTEXT: Final = RequestContext()


_AUTHORIZERS: Final[weakref.WeakKeyDictionary[Any, Authorize]] = weakref.WeakKeyDictionary()


def set_registry_authorizer(registry: Registry, authorize: Authorize | None) -> None:
    """What the ``authorizer`` variable of every policy plugin asks on ``registry``."""
    if authorize is None:
        _AUTHORIZERS.pop(registry, None)
    else:
        _AUTHORIZERS[registry] = authorize


def authorizer_of(registry: Registry) -> Authorize | None:
    return _AUTHORIZERS.get(registry)


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def object_name(obj: Mapping[str, Any]) -> str:
    return str(_map(obj.get("metadata")).get("name") or "")


_name = object_name


def labels_of(obj: Any) -> dict[str, Any]:
    return _map(_map(_map(obj).get("metadata")).get("labels"))


_labels = labels_of


class PolicyExpressions:
    """The CEL context of one policy's spec: whether it has params, the variables it declares
    (compiled, in order), and how its other expressions are compiled."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.param_kind = _map(spec.get("paramKind"))
        self.has_params = bool(self.param_kind)
        declared = [
            _map(v) for v in _list(spec.get("variables")) if isinstance(_map(v).get("name"), str)
        ]
        self.names = frozenset(str(v["name"]) for v in declared) if declared else None
        self.variables = {str(v["name"]): self.compile(v.get("expression")) for v in declared}

    def compile(self, text: Any, *, authorizer: bool = True) -> CompiledExpression:
        return compile_admission_expression(
            str(text or ""), params=self.has_params, authorizer=authorizer, variables=self.names
        )

    def param_kind_key(self) -> tuple[str, str] | None:
        """(apiVersion, kind) of the ``paramKind``; None without one."""
        if not self.has_params:
            return None
        kind = self.param_kind
        return str(kind.get("apiVersion") or ""), str(kind.get("kind") or "")

    def match_conditions(
        self, spec: Mapping[str, Any]
    ) -> tuple[tuple[str, CompiledExpression], ...]:
        return tuple(
            (str(_map(c).get("name") or ""), self.compile(_map(c).get("expression")))
            for c in _list(spec.get("matchConditions"))
        )


class CompiledPolicy(Protocol):
    """What the source needs of a compiled policy."""

    @property
    def generation(self) -> int: ...

    @property
    def param_kind(self) -> tuple[str, str] | None: ...  # (apiVersion, kind)

    @property
    def constraints(self) -> Mapping[str, Any]: ...


P = TypeVar("P", bound=CompiledPolicy)


class ConfigError(Exception):
    """A binding or policy that cannot be applied (the failure policy decides)."""


class PolicySource(Generic[P]):
    """The policies (compiled by ``compile``), bindings and params in force for one registry
    (see the module docstring). ``policies`` and ``bindings`` name the two resources."""

    def __init__(
        self,
        registry: Registry,
        *,
        policies: str,
        bindings: str,
        compile: Callable[[Object], P],
    ) -> None:
        self._registry = registry
        self._policy_resource = policies
        self._binding_resource = bindings
        self._compile = compile
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._params_lock = threading.Lock()
        self._compiled: dict[str, P] = {}
        self._bindings: dict[str, Object] = {}
        # policy name -> (policy, its bindings), replaced whole on every change.
        self._active: dict[str, tuple[P, tuple[Object, ...]]] = {}
        # Every (group, resource) some policy's rules may match ("*" for any).
        self._resources: frozenset[tuple[str, str]] = frozenset()
        self._params: dict[tuple[str, str], Informer] = {}
        self._policy_informer: Informer | None = None
        self._binding_informer: Informer | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        try:
            policies = self._registry.store(_GROUP, self._policy_resource)
            bindings = self._registry.store(_GROUP, self._binding_resource)
        except NotFound:
            return  # the group is not served: nothing can be bound
        self._policy_informer = Informer(policies, self._on_policy, stopping=self._stopping)
        self._binding_informer = Informer(bindings, self._on_binding, stopping=self._stopping)
        self._policy_informer.start()
        self._binding_informer.start()

    def stop(self) -> None:
        self._stopping.set()
        informers = [self._policy_informer, self._binding_informer, *self._params.values()]
        for informer in informers:
            if informer is not None:
                informer.interrupt()
        for informer in informers:
            if informer is not None:
                informer.join(2.0)

    def _on_policy(self, key: str, obj: Object | None) -> None:
        with self._lock:
            if obj is None:
                self._compiled.pop(key, None)
            else:
                known = self._compiled.get(key)
                generation = int(_map(obj.get("metadata")).get("generation") or 0)
                if known is None or known.generation != generation or generation == 0:
                    self._compiled[key] = self._compile(obj)
            self._rebuild()
        if obj is not None and self._policy_informer is not None:
            self._policy_seen(self._policy_informer.store, obj)

    def _policy_seen(self, store: ResourceStore, policy: Object) -> None:
        """Called with each policy written (a subclass may report on it)."""

    def _on_binding(self, key: str, obj: Object | None) -> None:
        with self._lock:
            if obj is None:
                self._bindings.pop(key, None)
            else:
                self._bindings[key] = obj
            self._rebuild()

    def _rebuild(self) -> None:
        by_policy: dict[str, list[Object]] = {}
        for binding in self._bindings.values():
            name = str(_map(binding.get("spec")).get("policyName") or "")
            by_policy.setdefault(name, []).append(binding)
        active = {}
        resources: set[tuple[str, str]] = set()
        for name, bindings in by_policy.items():
            policy = self._compiled.get(name)
            if policy is None:
                continue  # a binding of a policy that does not exist binds nothing
            active[name] = (policy, tuple(sorted(bindings, key=_name)))
            for rule in _list(policy.constraints.get("resourceRules")):
                rule = _map(rule)
                for group in _list(rule.get("apiGroups")):
                    for resource in _list(rule.get("resources")):
                        resources.add((str(group), str(resource).partition("/")[0]))
        self._active = dict(sorted(active.items()))
        self._resources = frozenset(resources)

    def in_force(self) -> frozenset[tuple[str, str]]:
        """The (policy, binding) names bound now (a binding of a missing policy binds
        nothing)."""
        return frozenset(
            (name, _name(b)) for name, (_, bindings) in self._active.items() for b in bindings
        )

    def may_match(self, attributes: AdmissionAttributes) -> bool:
        """Whether any binding may match the request's resource (one dictionary read when
        none can)."""
        if not self._active:
            return False
        definition = attributes.definition
        if definition.resource is None:
            return False
        resource = definition.resource.plural
        resources = self._resources
        group = definition.group
        return (
            (group, resource) in resources
            or (group, "*") in resources
            or ("*", resource) in resources
            or ("*", "*") in resources
        )

    def namespace(self, name: str, cache: dict[str, Object | None]) -> Object | None:
        if not name:
            return None
        if name not in cache:
            # From the watch cache (as Kubernetes reads its namespace informer), then, for a
            # namespace the cache does not have yet, from storage.
            found: Object | None = None
            try:
                store = self._registry.store("", "namespaces")
                try:
                    found = store.get(_CONTEXT, name, resource_version="0")
                except NotFound:
                    found = store.get(_CONTEXT, name)
            except NotFound:
                found = None
            cache[name] = found
        return cache[name]

    def params_for(
        self, policy: P, spec: Mapping[str, Any], request_namespace: str, scheme: Scheme
    ) -> list[Any]:
        """The params a binding (its ``spec``) gives ``policy`` for a request in
        ``request_namespace``: [None] without params; [] when none are found and that is
        allowed. Raises :class:`ConfigError`."""
        if policy.param_kind is None:
            return [None]
        ref = spec.get("paramRef")
        if not isinstance(ref, dict):
            return [None]
        api_version, kind = policy.param_kind
        try:
            gv = GroupVersion.parse(api_version)
            definition = scheme.definition(gv.group, kind)
        except KStoreError:
            raise ConfigError(_unknown_param_kind(api_version, kind)) from None
        if definition.resource is None:
            raise ConfigError(_unknown_param_kind(api_version, kind))
        namespaced = definition.resource.namespaced
        namespace = ""
        ref_namespace = str(ref.get("namespace") or "")
        if namespaced:
            namespace = ref_namespace or request_namespace
            if not namespace:
                raise ConfigError(
                    "cannot use namespaced paramRef in policy binding that matches "
                    "cluster-scoped resources"
                )
        elif ref_namespace:
            raise ConfigError(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
            )
        informer = self._param_informer(definition)
        name = str(ref.get("name") or "")
        found: list[Object] = []
        if name:
            key = f"{namespace}/{name}" if namespace else name
            obj = informer.get(key) if informer is not None else None
            if obj is None:
                obj = _read(informer.store if informer is not None else None, namespace, name)
            if obj is not None:
                found.append(obj)
        elif isinstance(ref.get("selector"), dict):
            try:
                parsed = LabelSelector.from_dict(ref["selector"])
            except KStoreError as exc:
                raise ConfigError(str(exc)) from None
            items = informer.items() if informer is not None else []
            for obj in sorted(
                items, key=lambda o: (str(_map(o.get("metadata")).get("namespace") or ""), _name(o))
            ):
                obj_namespace = str(_map(obj.get("metadata")).get("namespace") or "")
                if namespaced and obj_namespace != namespace:
                    continue
                if parsed.matches(_labels(obj)):
                    found.append(obj)
        else:
            raise ConfigError("one of name or selector must be provided")
        if not found:
            if ref.get("parameterNotFoundAction") == "Deny":
                raise ConfigError(
                    "no params found for policy binding with `Deny` parameterNotFoundAction"
                )
            return []
        return [_param_value(scheme, obj, gv.version) for obj in found]

    def _param_informer(self, definition: KindDefinition) -> Informer | None:
        assert definition.resource is not None
        key = (definition.group, definition.resource.plural)
        try:
            store = self._registry.store(*key)
        except NotFound:
            return None
        with self._params_lock:
            informer = self._params.get(key)
            if informer is not None and informer.store is store:
                return informer
            if informer is not None:
                informer.interrupt()  # the kind's store was replaced (its CRD changed)
            informer = Informer(store, _ignore, stopping=self._stopping)
            # Listed before any request reads it (under the lock: others wait for the list).
            informer.start()
            self._params[key] = informer
        return informer


def _ignore(key: str, obj: Object | None) -> None:
    return None


def _unknown_param_kind(api_version: str, kind: str) -> str:
    # The ParamKind as Go's generated String() prints it.
    return f"paramKind kind `&ParamKind{{APIVersion:{api_version},Kind:{kind},}}` not known"


def _read(store: ResourceStore | None, namespace: str, name: str) -> Object | None:
    if store is None:
        return None
    try:
        return store.get(RequestContext(namespace=namespace), name)
    except NotFound:
        return None


def in_version(scheme: Scheme, obj: Object | None, version: str) -> Any:
    if obj is None:
        return None
    api_version = str(obj.get("apiVersion") or "")
    if api_version.rpartition("/")[2] != HUB_VERSION:
        return obj
    return scheme.from_hub(obj, version)


def _param_value(scheme: Scheme, obj: Object, version: str) -> Any:
    return in_version(scheme, obj, version)


def namespace_object(namespace: Object | None) -> Any:
    """The namespace as the policy sees it: its spec, status and the metadata Kubernetes
    copies (no managedFields, no owner references), without apiVersion and kind."""
    if namespace is None:
        return None
    meta = _map(namespace.get("metadata"))
    kept = (
        "name",
        "generateName",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "finalizers",
    )
    out: dict[str, Any] = {"metadata": {k: meta[k] for k in kept if k in meta}}
    for key in ("spec", "status"):
        if key in namespace:
            out[key] = namespace[key]
    return out
