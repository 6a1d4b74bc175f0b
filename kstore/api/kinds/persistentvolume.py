"""core/v1 PersistentVolume: one external version with the hub's shape; cluster-scoped
``persistentvolumes``, short name ``pv``, a ``status`` subresource, no category.

Defaulting (``SetDefaults_PersistentVolume`` and the volume sources' defaulters): ``status.phase``
``Pending``, ``persistentVolumeReclaimPolicy`` ``Retain``, ``volumeMode`` ``Filesystem``; a
``hostPath`` without a type gets ``""``, ``iscsi`` the ``default`` interface, ``rbd`` pool
``rbd``, user ``admin`` and keyring ``/etc/ceph/keyring``, ``azureDisk`` caching ``ReadWrite``,
kind ``Shared``, ``ext4`` and ``readOnly`` false, ``scaleIO`` ``ThinProvisioned`` and ``xfs``.
:func:`default_volume_sources` is also what a VolumeAttachment's inline spec gets.

Validation (``ValidatePersistentVolume``/``Update``/``StatusUpdate`` with Kubernetes' paths and
messages): ObjectMeta (a DNS-1123 subdomain name); :func:`validate_persistent_volume_spec` for
a volume's spec and, with ``inline``, for a VolumeAttachment's inline spec: access modes
(ReadWriteOncePod alone), a positive ``storage`` capacity and nothing else, the reclaim policy,
node affinity (required terms, operators and values, ``metadata.name`` fields only; required
for ``local`` volumes), exactly one volume source (each further one ``Forbidden`` at
Kubernetes' path, ``cephFS`` included), the storage and volume attributes class names, the
volume mode, and each source's own fields (required ones, paths without ``..``, CSI driver
names and secret references, iSCSI names, LUNs and partitions, Azure disk kinds and URIs,
reserved flexVolume option namespaces). On update the volume source is
immutable (a CSI ``controllerExpandSecretRef`` may be added), so are ``volumeMode`` and a set
``nodeAffinity``; a volume attributes class may not be removed.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.quantity import parse_quantity
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation._access import get_list, get_map, get_str, maps
from kstore.api.validation._render import go_json
from kstore.api.validation.core._common import dns_label, dns_subdomain
from kstore.api.validation.field import (
    JSONValue,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from kstore.api.validation.names import (
    byte_len,
    inclusive_range_error,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    name_is_dns_subdomain,
    validate_namespace_name,
)
from kstore.api.validation.objectmeta import (
    metadata_of,
    validate_immutable_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "PERSISTENT_VOLUME",
    "VOLUME_SOURCES",
    "default_persistent_volume",
    "default_volume_sources",
    "validate_persistent_volume",
    "validate_persistent_volume_spec",
    "validate_persistent_volume_status_update",
    "validate_persistent_volume_update",
]

#: ``supportedAccessModes``, ``supportedReclaimPolicy``, ``supportedVolumeModes``, sorted.
_ACCESS_MODES: Final = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_RECLAIM_POLICIES: Final = ("Delete", "Recycle", "Retain")
_VOLUME_MODES: Final = ("Block", "Filesystem")
_HOST_PATH_TYPES: Final = (
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
)
_MAX_CSI_DRIVER_NAME: Final = 63
_SPEC: Final = Path("spec")
_STORAGE: Final = "storage"
_INLINE: Final = "may not be specified in the context of inline volumes"


def _set_if_none(source: MutableMapping[str, Any], key: str, value: Any) -> None:
    if source.get(key) is None:
        source[key] = value


def _set_if_empty(source: MutableMapping[str, Any], key: str, value: Any) -> None:
    if not source.get(key):
        source[key] = value


def _default_rbd(source: MutableMapping[str, Any]) -> None:
    _set_if_empty(source, "pool", "rbd")
    _set_if_empty(source, "user", "admin")
    _set_if_empty(source, "keyring", "/etc/ceph/keyring")


def _default_azure_disk(source: MutableMapping[str, Any]) -> None:
    _set_if_none(source, "cachingMode", "ReadWrite")
    _set_if_none(source, "kind", "Shared")
    _set_if_none(source, "fsType", "ext4")
    _set_if_none(source, "readOnly", False)


def _default_scale_io(source: MutableMapping[str, Any]) -> None:
    _set_if_empty(source, "storageMode", "ThinProvisioned")
    _set_if_empty(source, "fsType", "xfs")


_SOURCE_DEFAULTERS: Final[dict[str, Callable[[MutableMapping[str, Any]], None]]] = {
    "hostPath": lambda s: _set_if_none(s, "type", ""),
    "iscsi": lambda s: _set_if_empty(s, "iscsiInterface", "default"),
    "rbd": _default_rbd,
    "azureDisk": _default_azure_disk,
    "scaleIO": _default_scale_io,
}


def default_volume_sources(spec: MutableMapping[str, Any]) -> None:
    """The defaults of the volume sources a PersistentVolumeSpec holds, in place."""
    for key, defaulter in _SOURCE_DEFAULTERS.items():
        source = spec.get(key)
        if isinstance(source, dict):
            defaulter(source)


def default_persistent_volume(pv: Object) -> None:
    """``SetDefaults_PersistentVolume`` and its sources' defaults, in place."""
    spec = pv.get("spec")
    if not isinstance(spec, dict):
        spec = pv["spec"] = {}
    status = pv.get("status")
    if not isinstance(status, dict):
        status = pv["status"] = {}
    _set_if_empty(status, "phase", "Pending")
    _set_if_empty(spec, "persistentVolumeReclaimPolicy", "Retain")
    _set_if_none(spec, "volumeMode", "Filesystem")
    default_volume_sources(spec)


# --------------------------------------------------------------------------- volume sources


def _no_backsteps(value: str, path: Path) -> list[Cause]:
    if ".." in value.replace("\\", "/").split("/"):
        return [invalid(path, value, "must not contain '..'")]
    return []


def _host_path(source: Mapping[str, Any], path: Path) -> list[Cause]:
    where = get_str(source, "path")
    if not where:
        return [required(path.child("path"))]
    causes = _no_backsteps(where, path.child("path"))
    kind = source.get("type")
    if isinstance(kind, str) and kind not in _HOST_PATH_TYPES:
        causes.append(not_supported(path.child("type"), kind, _HOST_PATH_TYPES))
    return causes


def _nfs(source: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    if not get_str(source, "server"):
        causes.append(required(path.child("server")))
    where = get_str(source, "path")
    if not where:
        causes.append(required(path.child("path")))
    if not where.startswith("/"):
        causes.append(invalid(path.child("path"), where, "must be an absolute path"))
    return causes


def _local(source: Mapping[str, Any], path: Path) -> list[Cause]:
    where = get_str(source, "path")
    if not where:
        return [required(path.child("path"))]
    return _no_backsteps(where, path.child("path"))


def _glusterfs(source: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    for key in ("endpoints", "path"):
        if not get_str(source, key):
            causes.append(required(path.child(key)))
    namespace = source.get("endpointsNamespace")
    if isinstance(namespace, str):
        where = path.child("endpointsNamespace")
        if not namespace:
            message = "if the endpointnamespace is set, it must be a valid namespace name"
            causes.append(invalid(where, namespace, message))
        else:
            causes.extend(
                invalid(where, namespace, m) for m in validate_namespace_name(namespace, False)
            )
    return causes


def _flocker(source: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    name, uuid = get_str(source, "datasetName"), get_str(source, "datasetUUID")
    if not name and not uuid:
        causes.append(required(path, "one of datasetName and datasetUUID is required"))
    if name and uuid:
        message = "datasetName and datasetUUID can not be specified simultaneously"
        causes.append(invalid(path, "resource", message))
    if "/" in name:
        causes.append(invalid(path.child("datasetName"), name, "must not contain '/'"))
    return causes


def _one_required(*keys: str) -> Callable[[Mapping[str, Any], Path], list[Cause]]:
    def check(source: Mapping[str, Any], path: Path) -> list[Cause]:
        return [required(path.child(key)) for key in keys if not get_str(source, key)]

    return check


def _one_required_list(*keys: str) -> Callable[[Mapping[str, Any], Path], list[Cause]]:
    """Required fields that may be lists (an empty list counts as missing)."""

    def check(source: Mapping[str, Any], path: Path) -> list[Cause]:
        return [required(path.child(key)) for key in keys if not source.get(key)]

    return check


def _storage_os(source: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    name = get_str(source, "volumeName")
    if not name:
        causes.append(required(path.child("volumeName")))
    else:
        causes.extend(dns_label(name, path.child("volumeName")))
    namespace = get_str(source, "volumeNamespace")
    if namespace:
        causes.extend(dns_label(namespace, path.child("volumeNamespace")))
    secret = source.get("secretRef")
    if isinstance(secret, Mapping):
        for key in ("name", "namespace"):
            if not get_str(secret, key):
                causes.append(required(path.child("secretRef", key)))
    return causes


def _csi_driver_name(name: str, path: Path) -> list[Cause]:
    """Core's ``ValidateCSIDriverName``."""
    causes: list[Cause] = []
    if not name:
        causes.append(required(path))
    if byte_len(name) > _MAX_CSI_DRIVER_NAME:
        causes.append(too_long(path, _MAX_CSI_DRIVER_NAME))
    causes.extend(invalid(path, name, m) for m in is_dns1123_subdomain(name.lower()))
    return causes


def _secret_reference(ref: Mapping[str, Any], path: Path) -> list[Cause]:
    """``validatePVSecretReference``."""
    causes: list[Cause] = []
    name, namespace = get_str(ref, "name"), get_str(ref, "namespace")
    if not name:
        causes.append(required(path.child("name")))
    else:
        causes.extend(dns_subdomain(name, path.child("name")))
    if not namespace:
        causes.append(required(path.child("namespace")))
    else:
        causes.extend(dns_label(namespace, path.child("namespace")))
    return causes


def _csi(source: Mapping[str, Any], path: Path) -> list[Cause]:
    causes = _csi_driver_name(get_str(source, "driver"), path.child("driver"))
    if not get_str(source, "volumeHandle"):
        causes.append(required(path.child("volumeHandle")))
    for key in (
        "controllerPublishSecretRef",
        "controllerExpandSecretRef",
        "nodePublishSecretRef",
        "nodeExpandSecretRef",
    ):
        ref = source.get(key)
        if isinstance(ref, Mapping):
            causes.extend(_secret_reference(ref, path.child(key)))
    return causes


_IQN: Final = re.compile(r"iqn\.[0-9]{4}-[0-9]{2}\.([A-Za-z0-9.\-]+)(:[^,;*&$|\t\n\f\r ]+)$")
_EUI: Final = re.compile(r"^eui.[A-Za-z0-9]{16}$")
_NAA: Final = re.compile(r"^naa.[A-Za-z0-9]{32}$")
#: ``pdPartitionErrorMsg``: the message says 1, the check allows 0.
_PARTITION: Final = inclusive_range_error(1, 255)
_BYTE_RANGE: Final = inclusive_range_error(0, 255)


def _int(obj: Mapping[str, Any], key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _iscsi_name_ok(value: str) -> bool:
    for prefix, pattern in (("iqn", _IQN), ("eui", _EUI), ("naa", _NAA)):
        if value.startswith(prefix):
            return pattern.search(value) is not None
    return False


def _iscsi(source: Mapping[str, Any], path: Path, pv_name: str) -> list[Cause]:
    """``validateISCSIPersistentVolumeSource`` (Kubernetes spells two of its paths in lower
    case)."""
    causes: list[Cause] = []
    portal = get_str(source, "targetPortal")
    if not portal:
        causes.append(required(path.child("targetPortal")))
    initiator = source.get("initiatorName")
    if isinstance(initiator, str) and len(f"{pv_name}:{portal}") > 64:
        message = (
            "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if "
            "iscsi.initiatorName is specified."
        )
        causes.append(invalid(path.child("targetportal"), portal, message))
    iqn = get_str(source, "iqn")
    if not iqn:
        causes.append(required(path.child("iqn")))
    elif not _iscsi_name_ok(iqn):
        causes.append(invalid(path.child("iqn"), iqn, "must be valid format"))
    lun = _int(source, "lun")
    if not 0 <= lun <= 255:
        causes.append(invalid(path.child("lun"), lun, _BYTE_RANGE))
    secret = source.get("secretRef")
    if (source.get("chapAuthDiscovery") or source.get("chapAuthSession")) and secret is None:
        causes.append(required(path.child("secretRef")))
    if isinstance(secret, Mapping) and not get_str(secret, "name"):
        causes.append(required(path.child("secretRef", "name")))
    if isinstance(initiator, str) and not _iscsi_name_ok(initiator):
        causes.append(invalid(path.child("initiatorname"), initiator, "must be valid format"))
    return causes


def _disk(key: str) -> Callable[[Mapping[str, Any], Path], list[Cause]]:
    """``validateGCEPersistentDiskVolumeSource`` / ``validateAWSElasticBlockStoreVolumeSource``."""

    def check(source: Mapping[str, Any], path: Path) -> list[Cause]:
        causes: list[Cause] = []
        if not get_str(source, key):
            causes.append(required(path.child(key)))
        partition = _int(source, "partition")
        if not 0 <= partition <= 255:
            causes.append(invalid(path.child("partition"), partition, _PARTITION))
        return causes

    return check


def _fc(source: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    wwns, wwids = get_list(source, "targetWWNs"), get_list(source, "wwids")
    if not wwns and not wwids:
        message = "must specify either targetWWNs or wwids, but not both"
        causes.append(required(path.child("targetWWNs"), message))
    if wwns and wwids:
        message = "targetWWNs and wwids can not be specified simultaneously"
        causes.append(invalid(path.child("targetWWNs"), JSONValue(list(wwns)), message))
    if wwns:
        lun = source.get("lun")
        if not isinstance(lun, int) or isinstance(lun, bool):
            message = "lun is required if targetWWNs is specified"
            causes.append(required(path.child("lun"), message))
        elif not 0 <= lun <= 255:
            causes.append(invalid(path.child("lun"), lun, _BYTE_RANGE))
    return causes


def _flex(source: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    if not get_str(source, "driver"):
        causes.append(required(path.child("driver")))
    for key in get_map(source, "options"):
        namespace = key.split("/", 1)[0] if "/" in key else key
        normalized = "." + namespace.lower()
        if normalized.endswith((".kubernetes.io", ".k8s.io")):
            message = "kubernetes.io and k8s.io namespaces are reserved"
            causes.append(invalid(path.child("options").key(key), key, message))
    return causes


def _azure_file(source: Mapping[str, Any], path: Path) -> list[Cause]:
    causes = [
        required(path.child(key)) for key in ("secretName", "shareName") if not get_str(source, key)
    ]
    namespace = source.get("secretNamespace")
    if isinstance(namespace, str) and not namespace:
        causes.append(required(path.child("secretNamespace")))
    return causes


_CACHING_MODES: Final = ("None", "ReadOnly", "ReadWrite")
_DISK_KINDS: Final = ("Dedicated", "Managed", "Shared")


def _azure_disk(source: Mapping[str, Any], path: Path) -> list[Cause]:
    causes = [
        required(path.child(key)) for key in ("diskName", "diskURI") if not get_str(source, key)
    ]
    caching = source.get("cachingMode")
    if isinstance(caching, str) and caching not in _CACHING_MODES:
        causes.append(not_supported(path.child("cachingMode"), caching, _CACHING_MODES))
    kind = source.get("kind")
    if isinstance(kind, str) and kind not in _DISK_KINDS:
        causes.append(not_supported(path.child("kind"), kind, _DISK_KINDS))
    uri = get_str(source, "diskURI")
    if kind == "Managed" and not uri.startswith("/subscriptions/"):
        managed = (
            "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/"
            "disks/{disk-id}",
        )
        causes.append(not_supported(path.child("diskURI"), uri, managed))
    if isinstance(kind, str) and kind != "Managed" and not uri.startswith("https://"):
        blob = ("https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd",)
        causes.append(not_supported(path.child("diskURI"), uri, blob))
    return causes


def _quobyte(source: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    registry = get_str(source, "registry")
    if not registry:
        message = "must be a host:port pair or multiple pairs separated by commas"
        causes.append(required(path.child("registry"), message))
    elif len(get_str(source, "tenant")) >= 65:
        message = "must be a UUID and may not exceed a length of 64 characters"
        causes.append(required(path.child("tenant"), message))
    else:
        for pair in registry.split(","):
            if not _host_port(pair):
                message = "must be a host:port pair or multiple pairs separated by commas"
                causes.append(invalid(path.child("registry"), registry, message))
    if not get_str(source, "volume"):
        causes.append(required(path.child("volume")))
    return causes


def _host_port(pair: str) -> bool:
    """Whether Go's ``net.SplitHostPort`` accepts ``pair``."""
    if pair.startswith("["):
        end = pair.find("]")
        return end > 0 and pair[end + 1 : end + 2] == ":" and "]" not in pair[end + 1 :]
    return pair.count(":") == 1 and "[" not in pair and "]" not in pair


def _cinder(source: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    if not get_str(source, "volumeID"):
        causes.append(required(path.child("volumeID")))
    secret = source.get("secretRef")
    if isinstance(secret, Mapping):
        for key in ("name", "namespace"):
            if not get_str(secret, key):
                causes.append(required(path.child("secretRef", key)))
    return causes


def _unchecked(source: Mapping[str, Any], path: Path) -> list[Cause]:
    # iscsi is checked with the volume's name (see validate_persistent_volume_spec).
    return []


_Check = Callable[[Mapping[str, Any], Path], list[Cause]]

#: Every source of a PersistentVolumeSpec in the order ``ValidatePersistentVolumeSpec`` visits
#: them: (JSON field, the path of its "more than 1" error, the path of its own checks, checks).
_SOURCES: Final[tuple[tuple[str, str, str, _Check], ...]] = (
    ("hostPath", "hostPath", "hostPath", _host_path),
    ("gcePersistentDisk", "gcePersistentDisk", "persistentDisk", _disk("pdName")),
    ("awsElasticBlockStore", "awsElasticBlockStore", "awsElasticBlockStore", _disk("volumeID")),
    ("glusterfs", "glusterfs", "glusterfs", _glusterfs),
    ("flocker", "flocker", "flocker", _flocker),
    ("nfs", "nfs", "nfs", _nfs),
    ("rbd", "rbd", "rbd", _one_required_list("monitors", "image")),
    ("quobyte", "quobyte", "quobyte", _quobyte),
    ("cephfs", "cephFS", "cephfs", _one_required_list("monitors")),
    ("iscsi", "iscsi", "iscsi", _unchecked),
    ("cinder", "cinder", "cinder", _cinder),
    ("fc", "fc", "fc", _fc),
    # Kubernetes counts a flexVolume without checking for an earlier source.
    ("flexVolume", "", "flexVolume", _flex),
    ("azureFile", "azureFile", "azureFile", _azure_file),
    ("vsphereVolume", "vsphereVolume", "vsphereVolume", _one_required("volumePath")),
    ("photonPersistentDisk", "photonPersistentDisk", "photonPersistentDisk", _one_required("pdID")),
    ("portworxVolume", "portworxVolume", "portworxVolume", _one_required("volumeID")),
    ("azureDisk", "azureDisk", "azureDisk", _azure_disk),
    ("scaleIO", "scaleIO", "scaleIO", _one_required("gateway", "system", "volumeName")),
    ("local", "local", "local", _local),
    ("storageos", "storageos", "storageos", _storage_os),
    ("csi", "csi", "csi", _csi),
)
#: The JSON fields of the volume sources (``PersistentVolumeSource``, inlined in the spec).
VOLUME_SOURCES: Final = tuple(source[0] for source in _SOURCES)


# ------------------------------------------------------------------------------ node affinity


def _node_selector_requirement(requirement: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    operator = requirement.get("operator")
    values = get_list(requirement, "values")
    if operator in ("In", "NotIn"):
        if not values:
            message = "must be specified when `operator` is 'In' or 'NotIn'"
            causes.append(required(path.child("values"), message))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            message = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            causes.append(forbidden(path.child("values"), message))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            message = "must be specified single value when `operator` is 'Lt' or 'Gt'"
            causes.append(required(path.child("values"), message))
    else:
        causes.append(invalid(path.child("operator"), operator, "not a valid selector operator"))
    key = get_str(requirement, "key")
    causes.extend(invalid(path.child("key"), key, m) for m in is_qualified_name(key))
    for i, value in enumerate(values):
        text = value if isinstance(value, str) else ""
        causes.extend(invalid(path.child("values").index(i), text, m) for m in is_label_value(text))
    return causes


def _node_field_requirement(requirement: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    operator = requirement.get("operator")
    if operator in ("In", "NotIn"):
        if len(get_list(requirement, "values")) != 1:
            message = (
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
            )
            causes.append(required(path.child("values"), message))
    else:
        causes.append(invalid(path.child("operator"), operator, "not a valid selector operator"))
    key = get_str(requirement, "key")
    if key != "metadata.name":
        causes.append(not_supported(path.child("key"), key, ("metadata.name",)))
    return causes


def _node_affinity(affinity: Mapping[str, Any], path: Path) -> list[Cause]:
    """``validateVolumeNodeAffinity``: the required node selector."""
    selector = affinity.get("required")
    if not isinstance(selector, Mapping):
        return [required(path.child("required"), "must specify required node constraints")]
    terms_path = path.child("required", "nodeSelectorTerms")
    terms = maps(get_list(selector, "nodeSelectorTerms"))
    if not terms:
        return [required(terms_path, "must have at least one node selector term")]
    causes: list[Cause] = []
    for i, term in enumerate(terms):
        term_path = terms_path.index(i)
        for j, requirement in enumerate(maps(get_list(term, "matchExpressions"))):
            where = term_path.child("matchExpressions").index(j)
            causes.extend(_node_selector_requirement(requirement, where))
        for j, requirement in enumerate(maps(get_list(term, "matchFields"))):
            where = term_path.child("matchFields").index(j)
            causes.extend(_node_field_requirement(requirement, where))
    return causes


# ------------------------------------------------------------------------------------- spec


def _capacity(capacity: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    if not capacity:
        causes.append(required(path))
    if _STORAGE not in capacity or len(capacity) > 1:
        causes.append(not_supported(path, JSONValue(dict(capacity)), (_STORAGE,)))
    for key, value in capacity.items():
        where = path.key(key)
        amount = parse_quantity(value) if isinstance(value, (str, int, float)) else None
        if amount is None:
            causes.append(invalid(where, value, "must be a valid resource quantity"))
            continue
        if amount < 0:
            causes.append(invalid(where, -math.ceil(-amount), "must be a valid resource quantity"))
        if amount <= 0:
            shown = "0" if amount == 0 else str(value).strip()
            causes.append(invalid(where, shown, "must be greater than zero"))
    return causes


def validate_persistent_volume_spec(
    spec: Mapping[str, Any], path: Path, *, pv_name: str = "", inline: bool = False
) -> list[Cause]:
    """``ValidatePersistentVolumeSpec``; ``inline`` for a VolumeAttachment's inline spec
    (``pv_name`` is the volume's name, which an iSCSI portal's length limit counts)."""
    causes: list[Cause] = []
    if inline:
        if spec.get("claimRef") is not None:
            causes.append(forbidden(path.child("claimRef"), _INLINE))
        if get_map(spec, "capacity"):
            causes.append(forbidden(path.child("capacity"), _INLINE))
        if spec.get("csi") is None:
            message = "has to be specified in the context of inline volumes"
            causes.append(required(path.child("csi"), message))
    modes = get_list(spec, "accessModes")
    if not modes:
        causes.append(required(path.child("accessModes")))
    once_pod = other = False
    for mode in modes:
        if mode not in _ACCESS_MODES:
            causes.append(not_supported(path.child("accessModes"), mode, _ACCESS_MODES))
        elif mode == "ReadWriteOncePod":
            once_pod = True
        else:
            other = True
    if once_pod and other:
        message = "may not use ReadWriteOncePod with other access modes"
        causes.append(forbidden(path.child("accessModes"), message))
    if not inline:
        causes.extend(_capacity(get_map(spec, "capacity"), path.child("capacity")))
    policy = get_str(spec, "persistentVolumeReclaimPolicy")
    if policy:
        where = path.child("persistentVolumeReclaimPolicy")
        if inline and policy != "Retain":
            causes.append(forbidden(where, "may only be Retain in the context of inline volumes"))
        elif not inline and policy not in _RECLAIM_POLICIES:
            causes.append(not_supported(where, policy, _RECLAIM_POLICIES))
    affinity = spec.get("nodeAffinity")
    has_affinity = False
    if isinstance(affinity, Mapping):
        if inline:
            causes.append(forbidden(path.child("nodeAffinity"), _INLINE))
        else:
            has_affinity = True
            causes.extend(_node_affinity(affinity, path.child("nodeAffinity")))
    count = 0
    for key, more_path, own_path, check in _SOURCES:
        source = spec.get(key)
        if not isinstance(source, Mapping):
            continue
        if count > 0 and more_path:
            message = "may not specify more than 1 volume type"
            causes.append(forbidden(path.child(more_path), message))
            continue
        count += 1
        if key == "iscsi":
            causes.extend(_iscsi(source, path.child(own_path), pv_name))
        else:
            causes.extend(check(source, path.child(own_path)))
        if key == "local" and not has_affinity:
            message = "Local volume requires node affinity"
            causes.append(required(path.child("nodeAffinity"), message))
    if count == 0:
        causes.append(required(path, "must specify a volume type"))
    host_path = spec.get("hostPath")
    if (
        isinstance(host_path, Mapping)
        and posixpath.normpath(get_str(host_path, "path") or ".") == "/"
        and policy == "Recycle"
    ):
        message = "may not be 'recycle' for a hostPath mount of '/'"
        causes.append(forbidden(path.child("persistentVolumeReclaimPolicy"), message))
    class_name = get_str(spec, "storageClassName")
    if class_name:
        where = path.child("storageClassName")
        if inline:
            causes.append(forbidden(where, _INLINE))
        else:
            causes.extend(invalid(where, class_name, m) for m in is_dns1123_subdomain(class_name))
    mode = spec.get("volumeMode")
    if isinstance(mode, str):
        where = path.child("volumeMode")
        if inline and mode != "Filesystem":
            message = (
                "may not specify volumeMode other than Filesystem in the context of inline volumes"
            )
            causes.append(forbidden(where, message))
        elif not inline and mode not in _VOLUME_MODES:
            causes.append(not_supported(where, mode, _VOLUME_MODES))
    attributes_class = spec.get("volumeAttributesClassName")
    if isinstance(attributes_class, str):
        where = path.child("volumeAttributesClassName")
        if not attributes_class:
            causes.append(required(where, "an empty string is disallowed"))
        else:
            causes.extend(
                invalid(where, attributes_class, m) for m in is_dns1123_subdomain(attributes_class)
            )
        if spec.get("csi") is None:
            message = "has to be specified when using volumeAttributesClassName"
            causes.append(required(path.child("csi"), message))
    return causes


def validate_persistent_volume(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidatePersistentVolume``."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    name = get_str(metadata_of(obj), "name")
    causes.extend(validate_persistent_volume_spec(get_map(obj, "spec"), _SPEC, pv_name=name))
    return causes


def _sources(spec: Mapping[str, Any]) -> dict[str, Any]:
    return {key: spec[key] for key in VOLUME_SOURCES if spec.get(key) is not None}


def _source_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """The changed sources, one ``-``/``+`` pair each, in the shape of Go's ``cmp.Diff``."""
    lines = ["  core.PersistentVolumeSource{"]
    for key in VOLUME_SOURCES:
        if old.get(key) != new.get(key):
            lines.append(f"- \t{key}: {go_json(old.get(key))},")
            lines.append(f"+ \t{key}: {go_json(new.get(key))},")
    lines.append("  }")
    return "\n".join(lines) + "\n"


def validate_persistent_volume_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidatePersistentVolumeUpdate`` (with metadata's update rules)."""
    causes = validate_object_meta_update(new, old)
    causes.extend(validate_persistent_volume(new))
    new_spec, old_spec = get_map(new, "spec"), get_map(old, "spec")
    new_sources, old_sources = _sources(new_spec), _sources(old_spec)
    old_csi, new_csi = old_sources.get("csi"), new_sources.get("csi")
    if (
        isinstance(old_csi, Mapping)
        and isinstance(new_csi, Mapping)
        and old_csi.get("controllerExpandSecretRef") is None
    ):
        # A volume may gain the secret its expansion needs.
        new_sources["csi"] = {k: v for k, v in new_csi.items() if k != "controllerExpandSecretRef"}
    if new_sources != old_sources:
        message = "spec.persistentvolumesource is immutable after creation\n" + _source_diff(
            old_sources, new_sources
        )
        causes.append(forbidden(Path("spec", "persistentvolumesource"), message))
    causes.extend(
        validate_immutable_field(
            new_spec.get("volumeMode"), old_spec.get("volumeMode"), Path("volumeMode")
        )
    )
    if old_spec.get("nodeAffinity") is not None:
        causes.extend(
            validate_immutable_field(
                new_spec.get("nodeAffinity"), old_spec.get("nodeAffinity"), Path("nodeAffinity")
            )
        )
    old_class = old_spec.get("volumeAttributesClassName")
    if old_class is not None and new_spec.get("volumeAttributesClassName") is None:
        causes.append(
            forbidden(
                Path("spec", "volumeAttributesClassName"),
                "update from non-nil value to nil is forbidden",
            )
        )
    return causes


def validate_persistent_volume_status_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidatePersistentVolumeStatusUpdate``: metadata, and a resourceVersion."""
    causes = validate_object_meta_update(new, old)
    if not get_str(metadata_of(new), "resourceVersion"):
        causes.append(required(Path("resourceVersion")))
    return causes


PERSISTENT_VOLUME: Final = KindDefinition(
    group="",
    kind="PersistentVolume",
    versions=(KindVersion(version="v1", default=default_persistent_volume),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="persistentvolumes",
        singular="persistentvolume",
        namespaced=False,
        short_names=("pv",),
        subresources=("status",),
    ),
    validate=validate_persistent_volume,
    validate_update=validate_persistent_volume_update,
    list_kind="PersistentVolumeList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (
    PERSISTENT_VOLUME,
    list_definition(PERSISTENT_VOLUME),
)
