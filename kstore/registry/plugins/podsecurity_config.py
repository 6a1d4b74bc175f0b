"""PodSecurityConfiguration: the PodSecurity plugin's defaults and exemptions.

kube-apiserver reads it from its admission configuration file (the ``configuration`` of the
plugin ``PodSecurity``, kind ``PodSecurityConfiguration`` of
``pod-security.admission.config.k8s.io`` ``v1``, ``v1beta1`` or ``v1alpha1``):

- ``defaults``: ``enforce``, ``audit`` and ``warn`` levels (``privileged``, ``baseline``,
  ``restricted``) and their ``-version`` (``latest`` or ``v1.<minor>``), used for a namespace
  without the matching label (every one ``privileged`` / ``latest`` when unset);
- ``exemptions``: ``usernames`` (the requesting user's name), ``namespaces`` and
  ``runtimeClasses`` (a pod's ``spec.runtimeClassName``) that are never checked. An exempt
  request's audit event records why (``pod-security.kubernetes.io/exempt``).

A configuration Kubernetes would refuse is refused here with its field path
(:class:`~kstore.errors.BadRequest`, so ``kstore serve`` does not start).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from kstore.errors import BadRequest

__all__ = ["LEVELS", "PodSecurityConfig", "parse_pod_security_configuration"]

GROUP: Final = "pod-security.admission.config.k8s.io"
_VERSIONS: Final = ("v1", "v1beta1", "v1alpha1")
#: The levels, least restrictive first.
LEVELS: Final = ("privileged", "baseline", "restricted")
_VERSION: Final = re.compile(r"^(latest|v1\.(0|[1-9][0-9]*))$")
_MODES: Final = ("enforce", "audit", "warn")


@dataclass(frozen=True, kw_only=True, slots=True)
class PodSecurityConfig:
    """The defaults as ``mode -> (level, version)`` and the exemptions."""

    defaults: Mapping[str, tuple[str, str]]
    exempt_usernames: frozenset[str] = frozenset()
    exempt_namespaces: frozenset[str] = frozenset()
    exempt_runtime_classes: frozenset[str] = frozenset()

    @classmethod
    def kubernetes_default(cls) -> PodSecurityConfig:
        """kube-apiserver's without a configuration: privileged everywhere, nothing exempt."""
        return cls(defaults={mode: ("privileged", "latest") for mode in _MODES})


def _strings(value: Any, where: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise BadRequest(f"{where}: Invalid value: must be a list of non-empty strings")
    return frozenset(value)


def parse_pod_security_configuration(config: Any) -> PodSecurityConfig:
    """The PodSecurityConfiguration object ``config`` (decoded JSON or YAML)."""
    if not isinstance(config, Mapping):
        raise BadRequest("PodSecurity configuration: must be a PodSecurityConfiguration object")
    api_version = config.get("apiVersion")
    group, _, version = str(api_version or "").rpartition("/")
    if (
        config.get("kind") != "PodSecurityConfiguration"
        or group != GROUP
        or (version not in _VERSIONS)
    ):
        raise BadRequest(
            f'PodSecurity configuration: kind "{config.get("kind")}" of "{api_version}" is not '
            f"PodSecurityConfiguration of {GROUP}/{'|'.join(_VERSIONS)}"
        )
    known = {"apiVersion", "kind", "defaults", "exemptions"}
    unknown = sorted(set(config) - known)
    if unknown:
        raise BadRequest(f'PodSecurity configuration: unknown field "{unknown[0]}"')
    defaults_in = config.get("defaults") or {}
    if not isinstance(defaults_in, Mapping):
        raise BadRequest("defaults: Invalid value: must be an object")
    defaults: dict[str, tuple[str, str]] = {}
    for mode in _MODES:
        level = defaults_in.get(mode, "privileged")
        if level not in LEVELS:
            raise BadRequest(
                f'defaults.{mode}: Unsupported value: "{level}": supported values: '
                + ", ".join(f'"{x}"' for x in LEVELS)
            )
        version = defaults_in.get(f"{mode}-version", "latest")
        if not isinstance(version, str) or not _VERSION.match(version):
            raise BadRequest(
                f'defaults.{mode}-version: Invalid value: "{version}": must be "latest" or '
                '"v1.<minor>"'
            )
        defaults[mode] = (str(level), version)
    unknown = sorted(set(defaults_in) - {*_MODES, *(f"{m}-version" for m in _MODES)})
    if unknown:
        raise BadRequest(f'defaults: unknown field "{unknown[0]}"')
    exemptions = config.get("exemptions") or {}
    if not isinstance(exemptions, Mapping):
        raise BadRequest("exemptions: Invalid value: must be an object")
    unknown = sorted(set(exemptions) - {"usernames", "namespaces", "runtimeClasses"})
    if unknown:
        raise BadRequest(f'exemptions: unknown field "{unknown[0]}"')
    return PodSecurityConfig(
        defaults=defaults,
        exempt_usernames=_strings(exemptions.get("usernames"), "exemptions.usernames"),
        exempt_namespaces=_strings(exemptions.get("namespaces"), "exemptions.namespaces"),
        exempt_runtime_classes=_strings(
            exemptions.get("runtimeClasses"), "exemptions.runtimeClasses"
        ),
    )
