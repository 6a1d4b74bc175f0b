"""ServiceAccount: every pod runs as a service account, and gets its API credentials mounted.

On pod create (kube-apiserver's ``ServiceAccount`` plugin):

- a mirror pod (annotation ``kubernetes.io/config.mirror``) is left as it is, and refused when
  it names a service account or mounts secrets, config maps or projected volumes;
- ``spec.serviceAccountName`` (and its deprecated twin ``serviceAccount``) defaults to
  ``default``; the account must exist (the ``default`` one is waited for up to about a
  second and a half, as its controller makes it after the namespace; on a worker thread,
  never on the event loop): 403 ``error looking up service account <ns>/<name>:
  serviceaccount "<name>" not found`` otherwise;
- unless ``automountServiceAccountToken`` is false on the pod (or, when the pod does not say,
  on the account), a projected volume ``kube-api-access-<5 random characters>`` (a bound token
  expiring after 3607 seconds at ``token``, ``ca.crt`` from the ``kube-root-ca.crt`` config
  map, the pod's namespace at ``namespace``; mode 0644) is added, and mounted read-only at
  ``/var/run/secrets/kubernetes.io/serviceaccount`` in every init container and container
  that mounts nothing there yet;
- a pod without ``imagePullSecrets`` gets the account's.
"""

from __future__ import annotations

import random
import time
from typing import Any, Final

from kstore.registry.interface import (
    AdmissionAttributes,
    AdmissionHook,
    NeedsWorkerThread,
    Operation,
    Registry,
    writing_on_loop,
)
from kstore.registry.names import generate_name
from kstore.registry.plugins._common import forbidden, is_resource, read_object

__all__ = ["MOUNT_PATH", "VOLUME_PREFIX", "hooks"]

#: Its own generator: the process's shared one stays the application's (seeded runs, tests).
_JITTER = random.Random()


DEFAULT_ACCOUNT: Final = "default"
_DEFAULT_TRIES: Final = 10
MOUNT_PATH: Final = "/var/run/secrets/kubernetes.io/serviceaccount"
VOLUME_PREFIX: Final = "kube-api-access-"
_MIRROR: Final = "kubernetes.io/config.mirror"
#: A bound token's lifetime as the plugin asks it (an hour and seven seconds: kube-apiserver
#: warns on, but accepts, a token used past the hour).
TOKEN_EXPIRATION_SECONDS: Final = 3607


def _volume(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "projected": {
            "sources": [
                {
                    "serviceAccountToken": {
                        "expirationSeconds": TOKEN_EXPIRATION_SECONDS,
                        "path": "token",
                    }
                },
                {
                    "configMap": {
                        "name": "kube-root-ca.crt",
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            }
                        ]
                    }
                },
            ],
            "defaultMode": 0o644,
        },
    }


def _mirror_check(attributes: AdmissionAttributes, spec: dict[str, Any]) -> None:
    if spec.get("serviceAccountName") or spec.get("serviceAccount"):
        raise forbidden(attributes, "a mirror pod may not reference service accounts")
    for volume in spec.get("volumes") or ():
        if not isinstance(volume, dict):
            continue
        if volume.get("secret") is not None:
            raise forbidden(attributes, "a mirror pod may not reference secrets")
        if volume.get("configMap") is not None:
            raise forbidden(attributes, "a mirror pod may not reference configmaps")
        if volume.get("projected") is not None:
            raise forbidden(attributes, "a mirror pod may not use projected volumes")


def _mount(spec: dict[str, Any]) -> None:
    volumes = spec.get("volumes")
    volumes = volumes if isinstance(volumes, list) else []
    existing = next(
        (
            v["name"]
            for v in volumes
            if isinstance(v, dict) and str(v.get("name") or "").startswith(VOLUME_PREFIX)
        ),
        None,
    )
    name = existing or generate_name(VOLUME_PREFIX)
    needed = False
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or ():
            if not isinstance(container, dict):
                continue
            mounts = container.get("volumeMounts")
            if not isinstance(mounts, list):
                mounts = []
            if any(isinstance(m, dict) and m.get("mountPath") == MOUNT_PATH for m in mounts):
                continue
            mounts.append({"name": name, "readOnly": True, "mountPath": MOUNT_PATH})
            container["volumeMounts"] = mounts
            needed = True
    if needed and existing is None:
        spec["volumes"] = [*volumes, _volume(name)]


def hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    def admit(attributes: AdmissionAttributes) -> None:
        if not is_resource(attributes, "", "Pod", Operation.CREATE):
            return
        pod = attributes.object
        assert isinstance(pod, dict)
        spec = pod.get("spec")
        if not isinstance(spec, dict):
            return
        meta = pod.get("metadata")
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        if isinstance(annotations, dict) and _MIRROR in annotations:
            _mirror_check(attributes, spec)
            return
        account_name = str(spec.get("serviceAccountName") or DEFAULT_ACCOUNT)
        spec["serviceAccountName"] = account_name
        spec["serviceAccount"] = account_name
        namespace = attributes.namespace
        account = read_object(registry, "", "serviceaccounts", namespace, account_name)
        # The default account is made by the service account controller soon after its
        # namespace: wait for it a little, as kube-apiserver does (10 tries, 100-200 ms apart),
        # but never on an event loop's thread (every other request there would wait too): the
        # write is run again on a worker thread, which waits.
        tries = _DEFAULT_TRIES if account_name == DEFAULT_ACCOUNT else 1
        if account is None and tries > 1 and writing_on_loop():
            raise NeedsWorkerThread(
                f"waiting for service account {namespace}/{account_name} on the event loop"
            )
        for _ in range(tries - 1):
            if account is not None:
                break
            time.sleep(0.1 + _JITTER.random() / 10)
            account = read_object(registry, "", "serviceaccounts", namespace, account_name)
        if account is None:
            raise forbidden(
                attributes,
                f"error looking up service account {namespace}/{account_name}: "
                f'serviceaccount "{account_name}" not found',
            )
        automount = spec.get("automountServiceAccountToken")
        if automount is None:
            automount = account.get("automountServiceAccountToken")
        if automount is not False:
            _mount(spec)
        pull = account.get("imagePullSecrets")
        if not spec.get("imagePullSecrets") and isinstance(pull, list) and pull:
            spec["imagePullSecrets"] = [dict(p) for p in pull if isinstance(p, dict)]

    return admit, None
