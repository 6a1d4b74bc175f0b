"""``kstore.open(..., admission_control_config_file=...)``: the AdmissionConfiguration file's
PodSecurity defaults and exemptions apply to an embedded client, inline or through ``path``,
and what kstore would not follow is refused before the store opens."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from kstore.embedded import Client, open
from kstore.errors import AlreadyExists, BadRequest, Forbidden

HEADER = "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"
POD_SECURITY = """\
apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
defaults:
  enforce: baseline
exemptions:
  namespaces: [tools]
"""


def _namespace(client: Client, name: str) -> None:
    client.resource("v1", "namespaces").create({"metadata": {"name": name}})
    with contextlib.suppress(AlreadyExists):
        client.resource("v1", "serviceaccounts").namespace(name).create(
            {"metadata": {"name": "default"}}
        )


def _host_pod(client: Client, namespace: str) -> None:
    client.resource("v1", "pods").namespace(namespace).create(
        {
            "metadata": {"name": "host"},
            "spec": {"hostNetwork": True, "containers": [{"name": "c", "image": "x"}]},
        }
    )


def test_default_enforce_level_and_exempt_namespace(tmp_path: Path) -> None:
    (tmp_path / "ps.yaml").write_text(POD_SECURITY)
    config = tmp_path / "admission.yaml"
    config.write_text(HEADER + "plugins:\n- name: PodSecurity\n  path: ps.yaml\n")
    url = f"lmdb://{tmp_path / 'store'}?durable=false"
    with open(url, admission_control_config_file=config) as client:
        for name in ("team", "tools"):
            _namespace(client, name)
        with pytest.raises(Forbidden) as caught:
            _host_pod(client, "team")
        assert 'violates PodSecurity "baseline:latest": host namespaces' in caught.value.message
        _host_pod(client, "tools")


def test_refusals_name_the_entry(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'store'}"
    config = tmp_path / "admission.yaml"
    cases = [
        (HEADER + "plugins:\n- name: PodSecurity\n", "has neither configuration nor path"),
        (HEADER + "plugins:\n- name: PodSecurity\n  path: missing.yaml\n", "unable to read"),
        ("kind: Other\n", "kind must be AdmissionConfiguration"),
        (
            HEADER.replace("/v1", "/v2") + "plugins: []\n",
            'apiVersion "apiserver.config.k8s.io/v2" is not one of',
        ),
    ]
    for text, message in cases:
        config.write_text(text)
        with pytest.raises(BadRequest) as caught:
            open(url, admission_control_config_file=config)
        assert message in caught.value.message
    assert not (tmp_path / "store").exists()
