"""kubectl and CustomResourceDefinitions against a real ``kstore serve``: Flux
source-controller's published CRDs (``../shared/crd-corpus``) apply, list as kubectl lists them,
re-apply unchanged, and delete; and the Python client's ApiextensionsV1Api. The custom resources
they describe are not served yet."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl
from tests.fixtures_path import REPO_ROOT

FLUX = (REPO_ROOT / ".." / "shared" / "crd-corpus" / "flux-source-controller" / "crds").resolve()
FLUX_NAMES = sorted(
    f"{p.name.split('_')[1].removesuffix('.yaml')}.source.toolkit.fluxcd.io"
    for p in FLUX.glob("*.yaml")
)


@pytest.fixture
def flux() -> Path:
    if not FLUX.is_dir():
        pytest.skip(f"the CRD corpus is not at {FLUX}")
    return FLUX


def test_apply_flux_crds_then_get_and_delete_them(kubectl: Kubectl, flux: Path) -> None:
    created = kubectl.ok("apply", "-f", str(flux)).splitlines()
    assert sorted(created) == sorted(
        f"customresourcedefinition.apiextensions.k8s.io/{n} created" for n in FLUX_NAMES
    )
    again = kubectl.ok("apply", "-f", str(flux)).splitlines()
    assert sorted(again) == sorted(
        f"customresourcedefinition.apiextensions.k8s.io/{n} unchanged" for n in FLUX_NAMES
    )
    rows = [line.split() for line in kubectl.ok("get", "crds").splitlines()]
    assert rows[0] == ["NAME", "CREATED", "AT"]
    assert [r[0] for r in rows[1:]] == FLUX_NAMES
    git = json.loads(
        kubectl.ok("get", "crd", "gitrepositories.source.toolkit.fluxcd.io", "-o", "json")
    )
    assert git["spec"]["names"]["shortNames"] == ["gitrepo"]
    assert git["status"]["storedVersions"] == ["v1"]
    served = [v["name"] for v in git["spec"]["versions"] if v["served"]]
    assert "v1" in served
    assert kubectl.ok("delete", "-f", str(flux)).count("deleted") == len(FLUX_NAMES)
    assert kubectl.ok("get", "crds", "-o", "name").strip() == ""


def test_python_client_crd_crud_and_status(api_client: client.ApiClient) -> None:
    api = client.ApiextensionsV1Api(api_client)
    schema = client.V1JSONSchemaProps(
        type="object",
        properties={
            "spec": client.V1JSONSchemaProps(
                type="object", x_kubernetes_preserve_unknown_fields=True
            )
        },
    )
    body = client.V1CustomResourceDefinition(
        metadata=client.V1ObjectMeta(name="gizmos.example.org"),
        spec=client.V1CustomResourceDefinitionSpec(
            group="example.org",
            scope="Cluster",
            names=client.V1CustomResourceDefinitionNames(plural="gizmos", kind="Gizmo"),
            versions=[
                client.V1CustomResourceDefinitionVersion(
                    name="v1",
                    served=True,
                    storage=True,
                    schema=client.V1CustomResourceValidation(open_apiv3_schema=schema),
                    subresources=client.V1CustomResourceSubresources(status={}),
                )
            ],
        ),
    )
    created = api.create_custom_resource_definition(body)
    assert created.spec.names.list_kind == "GizmoList"
    assert created.status.stored_versions == ["v1"]
    spec_schema = created.spec.versions[0].schema.open_apiv3_schema.properties["spec"]
    assert spec_schema.x_kubernetes_preserve_unknown_fields is True
    accepted = {"status": {"acceptedNames": {"plural": "gizmos", "kind": "Gizmo"}}}
    patched = api.patch_custom_resource_definition_status("gizmos.example.org", accepted)
    assert patched.status.accepted_names.kind == "Gizmo"
    assert patched.metadata.generation == 1
    with pytest.raises(ApiException) as refused:
        api.patch_custom_resource_definition(
            "gizmos.example.org", {"spec": {"group": "example.com"}}
        )
    assert refused.value.status == 422
    assert "spec.group: Invalid value: " in json.loads(refused.value.body)["message"]
    api.delete_custom_resource_definition("gizmos.example.org")

    def gone() -> bool:
        # A CRD may wait for the cleanup of its objects (a finalizer) before it goes.
        names = [c.metadata.name for c in api.list_custom_resource_definition().items]
        return "gizmos.example.org" not in names

    deadline = time.monotonic() + 20
    while not gone() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert gone()
