"""Service-account tokens: the ``serviceaccounts/token`` subresource (TokenRequest) and the
authenticator that accepts the tokens it issues, as kube-apiserver's ``TokenREST`` and its
service-account token authenticator.

Issuing (``POST .../serviceaccounts/<name>/token``, ``authentication.k8s.io/v1``
``TokenRequest``):

- ``spec.expirationSeconds`` defaults to 3600; less than 600 or more than 2^32 is Invalid
  with Kubernetes' words; ``--service-account-max-token-expiration`` (when set) caps it, the
  answer saying the capped value;
- ``spec.audiences`` defaults to the API audiences (``--api-audiences``, else the issuer);
- ``spec.boundObjectRef`` may name a Pod (which must run as this ServiceAccount) or a Secret
  of the namespace; the object must exist and, when the reference carries a uid, have it
  (409 otherwise); any other kind is 400;
- the token is a JWT signed with ``--service-account-signing-key-file``: ``iss``, ``sub``
  ``system:serviceaccount:<ns>:<name>``, ``aud``, ``exp``, ``iat``, ``nbf``, ``jti``, and the
  private ``kubernetes.io`` claim (namespace, serviceaccount {name, uid}, pod or secret).

Authenticating: a bearer token whose ``iss`` is one of ``--service-account-issuer`` is this
authenticator's; it must be signed by one of the verifying keys, be within its validity, list
one of the API audiences, and its ServiceAccount (and bound object) must still exist with the
uid of the claim and not be deleting. The user is ``system:serviceaccount:<ns>:<name>`` (uid the
ServiceAccount's) in ``system:serviceaccounts``, ``system:serviceaccounts:<ns>`` and
``system:authenticated``; a pod-bound token adds the pod name and uid to ``extra``, and every
token its ``credential-id``. Refusals carry the validator's words (``service account token has
expired``, ``serviceaccounts "x" not found``, ``service account token has been
invalidated``...), which TokenReview reports after ``invalid bearer token`` as the API server's
union of token authenticators does.

Invariant: a token is accepted only while everything it was bound to is still the same object
(same uid): deleting and re-creating a ServiceAccount of the same name revokes its tokens.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import orjson

from kstore.api.gvk import Object
from kstore.api.validation.field import Path, invalid
from kstore.errors import BadRequest, Conflict, Invalid, NotFound
from kstore.registry.interface import Registry, RequestContext, UserInfo
from kstore.tokens import SigningKey, TokenError, VerifyingKeys

__all__ = [
    "DEFAULT_ISSUER",
    "ServiceAccountTokens",
    "service_account_user",
]

#: The issuer of a server given no ``--service-account-issuer`` (kubeadm's default).
DEFAULT_ISSUER: Final = "https://kubernetes.default.svc.cluster.local"
_DEFAULT_EXPIRATION: Final = 3600
_MIN_EXPIRATION: Final = 600
_MAX_EXPIRATION: Final = 1 << 32
#: go-jose's default leeway for exp/nbf/iat, which the validator uses.
_LEEWAY: Final = 60
_PREFIX: Final = "system:serviceaccount:"
_INVALIDATED: Final = "service account token has been invalidated"
_API_VERSION: Final = "authentication.k8s.io/v1"


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    """The user a ServiceAccount's token stands for."""
    return UserInfo(
        name=f"{_PREFIX}{namespace}:{name}",
        uid=uid,
        groups=(
            "system:serviceaccounts",
            f"system:serviceaccounts:{namespace}",
            "system:authenticated",
        ),
    )


def _rfc3339(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _get(registry: Registry, resource: str, namespace: str, name: str) -> Object:
    return registry.store("", resource).get(RequestContext(namespace=namespace), name)


def _ref(obj: Object) -> dict[str, str]:
    meta = obj.get("metadata") or {}
    return {"name": str(meta.get("name", "")), "uid": str(meta.get("uid", ""))}


@dataclass(frozen=True, slots=True)
class ServiceAccountTokens:
    """What issues and verifies service-account tokens (kube-apiserver's flags)."""

    signing_key: SigningKey
    verifying_keys: VerifyingKeys
    #: ``--service-account-issuer`` (may repeat): the first issues, all are accepted.
    issuers: tuple[str, ...] = (DEFAULT_ISSUER,)
    #: ``--api-audiences``; empty: the first issuer.
    api_audiences: tuple[str, ...] = ()
    #: ``--service-account-max-token-expiration`` in seconds; 0: no cap.
    max_expiration_seconds: int = 0
    _clock: Any = field(default=time.time, repr=False)

    @property
    def audiences(self) -> tuple[str, ...]:
        return self.api_audiences or self.issuers[:1]

    # ------------------------------------------------------------------ issuing

    def token_request(
        self, registry: Registry, namespace: str, name: str, body: Any, *, dry_run: bool = False
    ) -> Object:
        """The answered TokenRequest ``body`` for ServiceAccount ``name`` (NotFound when it
        does not exist; BadRequest, Invalid or Conflict as kube-apiserver words them)."""
        request = _decoded(body)
        meta = request.setdefault("metadata", {})
        for key, value, words in (("namespace", namespace, "namespace"), ("name", name, "name")):
            given = meta.get(key)
            if given and given != value:
                raise BadRequest(
                    f"{words} of the provided object does not match the {words} sent on the request"
                )
            meta[key] = value
        spec = request.setdefault("spec", {})
        # Unset or null: the v1 default.
        expiration = spec.get("expirationSeconds")
        if expiration is None:
            expiration = _DEFAULT_EXPIRATION
        if not isinstance(expiration, int) or isinstance(expiration, bool):
            raise BadRequest('TokenRequest in version "v1" cannot be handled as a TokenRequest')
        spec["expirationSeconds"] = expiration
        causes = []
        path = Path("spec", "expirationSeconds")
        if expiration < _MIN_EXPIRATION:
            causes.append(
                invalid(path, expiration, "may not specify a duration less than 10 minutes")
            )
        if expiration > _MAX_EXPIRATION:
            causes.append(
                invalid(path, expiration, "may not specify a duration larger than 2^32 seconds")
            )
        if causes:
            raise Invalid.for_object("TokenRequest", "", causes, group="authentication.k8s.io")
        account = _get(registry, "serviceaccounts", namespace, name)
        bound: dict[str, Any] = {}
        ref = spec.get("boundObjectRef")
        if ref:
            bound = self._bound_object(registry, namespace, name, ref)
        if not spec.get("audiences"):
            spec["audiences"] = list(self.audiences)
        if self.max_expiration_seconds and expiration > self.max_expiration_seconds:
            expiration = self.max_expiration_seconds
            spec["expirationSeconds"] = expiration
        now = int(self._clock())
        private: dict[str, Any] = {"namespace": namespace, **bound}
        private["serviceaccount"] = _ref(account)
        claims = {
            "aud": list(spec["audiences"]),
            "exp": now + expiration,
            "iat": now,
            "iss": self.issuers[0],
            "jti": str(uuid.uuid4()),
            "kubernetes.io": dict(sorted(private.items())),
            "nbf": now,
            "sub": f"{_PREFIX}{namespace}:{name}",
        }
        token = "" if dry_run else self.signing_key.sign(claims)
        request["status"] = {"token": token, "expirationTimestamp": _rfc3339(now + expiration)}
        meta.setdefault("creationTimestamp", None)
        return {"kind": "TokenRequest", "apiVersion": _API_VERSION, **request}

    def _bound_object(
        self, registry: Registry, namespace: str, account: str, ref: Any
    ) -> dict[str, Any]:
        if not isinstance(ref, dict):
            raise BadRequest('TokenRequest in version "v1" cannot be handled as a TokenRequest')
        api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
        version = api_version.rpartition("/")[2]
        ref_name, ref_uid = str(ref.get("name") or ""), str(ref.get("uid") or "")
        if group == "" and kind == "Pod":
            obj = _get(registry, "pods", namespace, ref_name)
            running_as = (obj.get("spec") or {}).get("serviceAccountName") or ""
            if running_as != account:
                raise BadRequest(
                    f'cannot bind token for serviceaccount "{account}" to pod running with '
                    f'serviceaccount "{running_as}"'
                )
            claim = "pod"
        elif group == "" and kind == "Secret":
            obj = _get(registry, "secrets", namespace, ref_name)
            claim = "secret"
        else:
            gvk = f"{group}/{version}, Kind={kind}"
            raise BadRequest(f"cannot bind token to object of type {gvk}")
        uid = str((obj.get("metadata") or {}).get("uid", ""))
        if ref_uid and ref_uid != uid:
            raise Conflict(
                f'Operation cannot be fulfilled on {kind} "{ref_name}": the UID in the bound '
                f"object reference ({ref_uid}) does not match the UID in record ({uid}). The "
                "object might have been deleted and then recreated",
                kind=kind,
                name=ref_name,
            )
        return {claim: _ref(obj)}

    # ------------------------------------------------------------------ authenticating

    def claims(self, token: str) -> bool:
        """Whether ``token`` is this authenticator's to judge (a JWT of one of the issuers)."""
        if not VerifyingKeys.looks_like_jwt(token):
            return False
        try:
            issuer = VerifyingKeys.unverified_claims(token).get("iss")
        except TokenError:
            return False
        return issuer in self.issuers

    def authenticate(
        self, registry: Registry, token: str, audiences: tuple[str, ...] = ()
    ) -> tuple[UserInfo | None, str]:
        """(the user of a token :meth:`claims`, "") or (None, why it is refused). The token
        must name one of ``audiences`` (a TokenReview's), else one of the API audiences."""
        try:
            claims = self.verifying_keys.verify(token)
        except TokenError as exc:
            return None, str(exc)
        now = int(self._clock())
        expiry, not_before, issued = (_number(claims.get(k)) for k in ("exp", "nbf", "iat"))
        if expiry is not None and now > expiry + _LEEWAY:
            return None, "service account token has expired"
        if not_before is not None and now + _LEEWAY < not_before:
            return None, "service account token is not valid yet"
        if issued is not None and now + _LEEWAY < issued:
            return None, "service account token is issued in the future"
        named = claims.get("aud")
        if isinstance(named, str):
            named = [named]
        if not isinstance(named, list):
            named = []
        wanted = audiences or self.audiences
        if not set(named) & set(wanted):
            return None, (
                f"token audiences {_go_strings(named)} is invalid for the target audiences "
                f"{_go_strings(wanted)}"
            )
        private = claims.get("kubernetes.io")
        if not isinstance(private, dict):
            return None, "service account token claims could not be validated"
        jti = claims.get("jti")
        return self._still_bound(registry, private, jti if isinstance(jti, str) else "")

    def _still_bound(
        self, registry: Registry, private: dict[str, Any], jti: str
    ) -> tuple[UserInfo | None, str]:
        namespace = str(private.get("namespace", ""))
        account_ref = private.get("serviceaccount") or {}
        name, uid = str(account_ref.get("name", "")), str(account_ref.get("uid", ""))
        try:
            account = _get(registry, "serviceaccounts", namespace, name)
        except NotFound as exc:
            return None, exc.message
        meta = account.get("metadata") or {}
        if meta.get("uid") != uid:
            return None, f"service account UID ({meta.get('uid')}) does not match claim ({uid})"
        if meta.get("deletionTimestamp"):
            return None, f"service account {namespace}/{name} has been deleted"
        extra: list[tuple[str, tuple[str, ...]]] = []
        if jti:
            extra.append(("authentication.kubernetes.io/credential-id", (f"JTI={jti}",)))
        for claim, resource, words in (("secret", "secrets", "secret"), ("pod", "pods", "pod")):
            ref = private.get(claim)
            if not isinstance(ref, dict):
                continue
            try:
                obj = _get(registry, resource, namespace, str(ref.get("name", "")))
            except NotFound:
                return None, _INVALIDATED
            obj_meta = obj.get("metadata") or {}
            if obj_meta.get("uid") != ref.get("uid"):
                return None, (
                    f"{words} UID ({obj_meta.get('uid')}) does not match service account "
                    f"{words} ref claim ({ref.get('uid')})"
                )
            if obj_meta.get("deletionTimestamp"):
                return None, _INVALIDATED
            if claim == "pod":
                extra += [
                    ("authentication.kubernetes.io/pod-name", (str(ref.get("name", "")),)),
                    ("authentication.kubernetes.io/pod-uid", (str(ref.get("uid", "")),)),
                ]
        user = service_account_user(namespace, name, uid)
        return UserInfo(name=user.name, uid=user.uid, groups=user.groups, extra=tuple(extra)), ""


def _go_strings(values: Any) -> str:
    """A list of strings as Go's ``%q`` prints a ``[]string``."""
    return "[" + " ".join(orjson.dumps(str(v)).decode() for v in values) + "]"


def _number(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _decoded(body: Any) -> dict[str, Any]:
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise BadRequest("the body of the request must be a TokenRequest object")
    kind, api_version = body.get("kind"), body.get("apiVersion")
    if kind and kind != "TokenRequest":
        raise BadRequest(f'{kind} in version "v1" cannot be handled as a TokenRequest')
    if api_version and api_version != _API_VERSION:
        raise BadRequest(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({_API_VERSION})"
        )
    out = {k: v for k, v in body.items() if k in ("metadata", "spec")}
    out["metadata"] = dict(out.get("metadata") or {})
    out["spec"] = dict(out.get("spec") or {})
    return out


class ServiceAccountAuthenticator:
    """:class:`ServiceAccountTokens` checking bound objects in one registry (the token
    authenticator the request authenticator and TokenReview ask)."""

    def __init__(self, tokens: ServiceAccountTokens, registry: Registry) -> None:
        self.tokens = tokens
        self.registry = registry

    def claims(self, token: str) -> bool:
        return self.tokens.claims(token)

    def authenticate(
        self, token: str, audiences: tuple[str, ...] = ()
    ) -> tuple[UserInfo | None, str]:
        return self.tokens.authenticate(self.registry, token, audiences)
