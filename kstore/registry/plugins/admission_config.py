"""``--admission-control-config-file``: kube-apiserver's AdmissionConfiguration, the
configuration of each admission plugin.

The file (YAML or JSON) is an ``AdmissionConfiguration`` of ``apiserver.config.k8s.io/v1``
(or ``v1alpha1``, or the older ``apiserver.k8s.io/v1alpha1``) whose ``plugins`` list names a
plugin and gives its configuration, either inline (``configuration``) or in another file
(``path``, relative to the configuration file's directory). What kstore reads:

- PodSecurity's ``PodSecurityConfiguration`` (defaults and exemptions,
  :mod:`.podsecurity_config`).

Every other entry is refused with a clear message, so that a configuration kstore would ignore
never passes for one it follows: a name kube-apiserver does not know, a plugin whose
configuration kstore does not read (EventRateLimit, ImagePolicyWebhook, ResourceQuota, the
webhook plugins' kubeconfig files...), a name given twice, or an entry with neither
``configuration`` nor ``path``. All errors are :class:`~kstore.errors.BadRequest`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import yaml

from kstore.errors import BadRequest
from kstore.registry.plugins import CONFIGURABLE_PLUGINS, ORDERED_PLUGINS

__all__ = ["read_admission_config_file"]

_API_VERSIONS: Final = (
    "apiserver.config.k8s.io/v1",
    "apiserver.config.k8s.io/v1alpha1",
    "apiserver.k8s.io/v1alpha1",
)


def _load(path: Path, what: str) -> Any:
    try:
        text = path.read_text()
    except OSError as exc:
        raise BadRequest(f"unable to read {what} {str(path)!r}: {exc.strerror}") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise BadRequest(f"unable to decode {what} {str(path)!r}: {exc}") from exc


def read_admission_config_file(path: Path) -> dict[str, Any]:
    """Plugin name -> its configuration object (decoded, not yet checked by the plugin)."""
    document = _load(path, "admission configuration file")
    where = f"admission configuration file {str(path)!r}"
    if not isinstance(document, Mapping) or document.get("kind") != "AdmissionConfiguration":
        raise BadRequest(f"{where}: kind must be AdmissionConfiguration")
    if document.get("apiVersion") not in _API_VERSIONS:
        raise BadRequest(
            f'{where}: apiVersion "{document.get("apiVersion")}" is not one of '
            + ", ".join(_API_VERSIONS)
        )
    plugins = document.get("plugins") or []
    if not isinstance(plugins, list):
        raise BadRequest(f"{where}: plugins must be a list")
    configurations: dict[str, Any] = {}
    for index, entry in enumerate(plugins):
        if not isinstance(entry, Mapping):
            raise BadRequest(f"{where}: plugins[{index}] must be an object")
        name = entry.get("name")
        if name not in ORDERED_PLUGINS:
            raise BadRequest(f'{where}: plugins[{index}]: admission plugin "{name}" is unknown')
        if name not in CONFIGURABLE_PLUGINS:
            raise BadRequest(
                f'{where}: plugins[{index}]: kstore does not read the configuration of "{name}" '
                f"(it reads {', '.join(CONFIGURABLE_PLUGINS)})"
            )
        if name in configurations:
            raise BadRequest(f'{where}: plugins[{index}]: "{name}" is configured twice')
        if entry.get("configuration") is not None:
            configurations[str(name)] = entry["configuration"]
        elif entry.get("path"):
            nested = Path(str(entry["path"]))
            if not nested.is_absolute():
                nested = path.parent / nested
            configurations[str(name)] = _load(nested, f"{name} configuration file")
        else:
            raise BadRequest(
                f'{where}: plugins[{index}]: "{name}" has neither configuration nor path'
            )
    return configurations
