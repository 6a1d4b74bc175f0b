"""storage.k8s.io/v1 VolumeAttachment: defaults and validation as Kubernetes' storage API does
them (v1's extra attacher and volume name checks included)."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.storage import (
    validate_volume_attachment,
    validate_volume_attachment_update,
)
from kstore.errors import Cause

SCHEME = builtin_scheme()


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def _attachment(source: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": "csi-0123", "resourceVersion": "1"},
        "spec": {
            "attacher": "ebs.csi.aws.com",
            "nodeName": "node-1",
            "source": {"persistentVolumeName": "pv-1"} if source is None else source,
            **spec,
        },
    }
    SCHEME.default(body)
    return body


_INLINE = {
    "accessModes": ["ReadWriteOnce"],
    "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
}


def test_valid_attachments_and_inline_defaults() -> None:
    assert validate_volume_attachment(_attachment()) == []
    inline = _attachment({"inlineVolumeSpec": {**_INLINE, "rbd": None}})
    assert validate_volume_attachment(inline) == []
    defaulted = _attachment({"inlineVolumeSpec": {**_INLINE, "hostPath": {"path": "/x"}}})
    assert defaulted["spec"]["source"]["inlineVolumeSpec"]["hostPath"]["type"] == ""


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            _attachment({}),
            [
                "spec.source: Required value: must specify exactly one of inlineVolumeSpec "
                "and persistentVolumeName"
            ],
        ),
        (
            _attachment({"persistentVolumeName": "pv-1", "inlineVolumeSpec": _INLINE}),
            [
                "spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and "
                "persistentVolumeName"
            ],
        ),
        (
            _attachment({"persistentVolumeName": "PV_1"}),
            [
                'spec.source.persistentVolumeName: Invalid value: "PV_1": a lowercase RFC 1123 '
                "subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'example.com', regex "
                "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
                "[a-z0-9])?)*')"
            ],
        ),
        (
            _attachment(
                {
                    "inlineVolumeSpec": {
                        "accessModes": ["ReadWriteOnce"],
                        "capacity": {"storage": "1Gi"},
                        "nfs": {"server": "s", "path": "/p"},
                        "persistentVolumeReclaimPolicy": "Delete",
                    }
                }
            ),
            [
                "spec.source.inlineVolumeSpec.capacity: Forbidden: may not be specified in the "
                "context of inline volumes",
                "spec.source.inlineVolumeSpec.csi: Required value: has to be specified in the "
                "context of inline volumes",
                "spec.source.inlineVolumeSpec.persistentVolumeReclaimPolicy: Forbidden: may "
                "only be Retain in the context of inline volumes",
            ],
        ),
        (
            _attachment(attacher="x" * 64),
            ["spec.attacher: Too long: may not be more than 63 bytes"],
        ),
    ],
)
def test_invalid_attachments(body: dict[str, Any], expected: list[str]) -> None:
    assert _rendered(validate_volume_attachment(body)) == expected


def test_status_errors() -> None:
    body = _attachment()
    body["status"] = {
        "attached": False,
        "attachError": {"message": "m" * 1025},
        "detachError": {"errorCode": -1},
    }
    assert _rendered(validate_volume_attachment(body)) == [
        "status.attachError.message: Too long: may not be more than 262144 bytes",
        "status.detachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, "
        "inclusive",
    ]


def test_the_spec_is_immutable() -> None:
    old = _attachment()
    assert validate_volume_attachment_update(_attachment(), old) == []
    assert _rendered(validate_volume_attachment_update(_attachment(nodeName="node-2"), old)) == [
        'spec: Invalid value: {"Attacher":"ebs.csi.aws.com","Source":{"PersistentVolumeName":'
        '"pv-1","InlineVolumeSpec":null},"NodeName":"node-2"}: field is immutable'
    ]
