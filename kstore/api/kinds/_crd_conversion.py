"""A CustomResourceDefinition's ``spec.conversion``, as ``validateCustomResourceConversion``
(Kubernetes v1.36) and the webhook client checks of ``k8s.io/apiserver/pkg/util/webhook`` word
it, on the internal shape (``spec.conversion.webhookClientConfig``,
``spec.conversion.conversionReviewVersions``).

Differences from Kubernetes: a URL is split by :func:`urllib.parse.urlsplit`, which accepts some
strings Go's ``url.Parse`` refuses (those get no "url must be a valid URL" cause), and the CA
bundle is not parsed as PEM.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from kstore.api.kinds._crd_internal import InternalSpec
from kstore.api.validation._access import get_str, opt_str
from kstore.api.validation.field import Path, forbidden, invalid, not_supported, required
from kstore.api.validation.names import is_dns1035_label, is_dns1123_subdomain, is_valid_port_num
from kstore.errors import Cause

__all__ = [
    "REVIEW_VERSIONS",
    "validate_conversion",
    "validate_webhook_service",
    "validate_webhook_url",
]

_STRATEGIES: Final = ("None", "Webhook")
#: The ConversionReview versions the previous release understands.
REVIEW_VERSIONS: Final = ("v1", "v1beta1")
_URL_FORM: Final = "; desired format: https://host[/path]"


def validate_webhook_url(url: str, path: Path) -> list[Cause]:
    parts = urlsplit(url)
    causes: list[Cause] = []
    if parts.scheme != "https":
        causes.append(
            invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + _URL_FORM)
        )
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        host = parts.netloc
    if not host:
        causes.append(invalid(path, host, "host must be specified" + _URL_FORM))
    if at:
        causes.append(invalid(path, userinfo, "user information is not permitted in the URL"))
    if parts.fragment:
        causes.append(invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        causes.append(invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return causes


def validate_webhook_service(service: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    if not get_str(service, "name"):
        causes.append(required(path.child("name")))
    if not get_str(service, "namespace"):
        causes.append(required(path.child("namespace")))
    port = service.get("port")
    port = port if isinstance(port, int) and not isinstance(port, bool) else 0
    errs = is_valid_port_num(port)
    if errs:
        causes.append(invalid(path.child("port"), port, "port is not valid: " + ", ".join(errs)))
    url_path = opt_str(service, "path")
    if url_path is None or url_path in ("", "/"):
        return causes
    where = path.child("path")
    if url_path == "//":
        return [*causes, invalid(where, url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        causes.append(invalid(where, url_path, "must start with a '/'"))
    check = url_path[1:]
    if check.endswith("/"):
        check = check[:-1]
    for i, step in enumerate(check.split("/")):
        if not step:
            causes.append(invalid(where, url_path, f"segment[{i}] may not be empty"))
            continue
        causes.extend(
            invalid(where, url_path, f"segment[{i}]: {err}") for err in is_dns1123_subdomain(step)
        )
    return causes


def _validate_review_versions(
    versions: Sequence[Any], require_recognized: bool, path: Path
) -> list[Cause]:
    if not versions:
        return [required(path)]
    causes: list[Cause] = []
    seen: set[str] = set()
    recognized = False
    for i, value in enumerate(versions):
        text = value if isinstance(value, str) else ""
        if text in seen:
            causes.append(invalid(path.index(i), text, "duplicate version"))
            continue
        seen.add(text)
        causes.extend(invalid(path.index(i), text, err) for err in is_dns1035_label(text))
        recognized = recognized or text in REVIEW_VERSIONS
    if require_recognized and not recognized:
        causes.append(
            invalid(
                path, list(versions), "must include at least one of " + ", ".join(REVIEW_VERSIONS)
            )
        )
    return causes


def validate_conversion(
    spec: InternalSpec, path: Path, *, require_recognized_review_version: bool
) -> list[Cause]:
    """``validateCustomResourceConversion`` of the internal ``spec.conversion``."""
    if spec.conversion is None:
        return []
    strategy = get_str(spec.conversion, "strategy")
    causes: list[Cause] = []
    if not strategy:
        causes.append(required(path.child("strategy")))
    elif strategy not in _STRATEGIES:
        causes.append(not_supported(path.child("strategy"), strategy, _STRATEGIES))
    config = spec.webhook_client_config
    review = spec.conversion_review_versions
    if strategy == "Webhook":
        where = path.child("webhookClientConfig")
        if config is None:
            causes.append(required(where, "required when strategy is set to Webhook"))
        else:
            url = opt_str(config, "url")
            service = config.get("service")
            service = service if isinstance(service, Mapping) else None
            if (url is None) == (service is None):
                causes.append(required(where, "exactly one of url or service is required"))
            elif url is not None:
                causes.extend(validate_webhook_url(url, where.child("url")))
            elif service is not None:
                causes.extend(validate_webhook_service(service, where.child("service")))
        causes.extend(
            _validate_review_versions(
                review or (),
                require_recognized_review_version,
                path.child("conversionReviewVersions"),
            )
        )
    else:
        detail = "should not be set when strategy is not set to Webhook"
        if config is not None:
            causes.append(forbidden(path.child("webhookClientConfig"), detail))
        if review:
            causes.append(forbidden(path.child("conversionReviewVersions"), detail))
    return causes
