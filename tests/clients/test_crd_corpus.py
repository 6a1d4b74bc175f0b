"""Real CRD bundles (``../shared/crd-corpus``: Flux source-controller, cert-manager, Kyverno, up
to 1.4 MB a schema) install with ``kubectl apply --server-side``, are served at once, their
published samples apply, and objects that break their schemas are refused with the messages a
Kubernetes cluster gives."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.clients.kubectl import Kubectl
from tests.fixtures_path import crd_corpus


@pytest.fixture(scope="module")
def corpus(kubectl: Kubectl) -> Path:
    root = crd_corpus()
    for project in ("flux-source-controller", "cert-manager", "kyverno"):
        out = kubectl.ok("apply", "--server-side", "-f", str(root / project / "crds"), timeout=120)
        assert out and all(line.endswith("serverside-applied") for line in out.splitlines())
    names = kubectl.ok("get", "crds", "-o", "name").split()
    for name in names:
        kubectl.ok("wait", "--for", "condition=Established", name, "--timeout", "20s")
    return root


def test_every_crd_of_the_corpus_is_established_and_served(kubectl: Kubectl, corpus: Path) -> None:
    files = sorted(p for p in corpus.glob("*/crds/*.yaml"))
    names = kubectl.ok("get", "crds", "-o", "name").split()
    assert len(names) >= len(files) > 30
    groups = kubectl.ok("api-versions")
    for group in ("source.toolkit.fluxcd.io/v1", "cert-manager.io/v1", "kyverno.io/v1"):
        assert group in groups


def test_the_flux_samples_apply_and_print_their_columns(k: Kubectl, corpus: Path) -> None:
    samples = corpus / "flux-source-controller" / "samples"
    applied = k.ok("apply", "-f", str(samples)).splitlines()
    assert len(applied) == len(list(samples.glob("*.yaml")))
    assert all(line.endswith(" created") for line in applied)
    header = k.ok("get", "gitrepositories").splitlines()[0].split()
    assert header == ["NAME", "URL", "AGE", "READY", "STATUS"]
    # A second apply of the same files changes nothing.
    again = k.ok("apply", "-f", str(samples)).splitlines()
    assert all(line.endswith(" unchanged") for line in again)


def test_objects_breaking_the_schema_are_refused_with_kubernetes_messages(
    k: Kubectl, corpus: Path
) -> None:
    bad = (
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: bad}\n"
        "spec: {interval: 5x, url: 'https://example.com/r', ref: {branch: main}, provider: nope}\n"
    )
    refused = k.fails("apply", "-f", "-", stdin=bad).stderr
    assert refused.splitlines() == [
        'The GitRepository "bad" is invalid: ',
        '* spec.interval: Invalid value: "5x": spec.interval in body should match '
        "'^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$'",
        '* spec.provider: Unsupported value: "nope": supported values: "generic", "aws", '
        '"azure", "github"',
        # GitRepository has CEL rules: an unsupported value keeps them from running.
        "* <nil>: Invalid value: null: some validation rules were not checked because the "
        "object was invalid; correct the existing errors to complete validation",
    ]
    missing = (
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: bad}\n"
        "spec: {interval: 5m}\n"
    )
    assert k.fails("apply", "-f", "-", stdin=missing).stderr.splitlines() == [
        'The GitRepository "bad" is invalid: ',
        "* spec.url: Required value",
        "* <nil>: Invalid value: null: some validation rules were not checked because the "
        "object was invalid; correct the existing errors to complete validation",
    ]
    unknown = (
        "apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: i}\n"
        "spec: {selfSigned: {}, colour: red}\n"
    )
    assert (
        'strict decoding error: unknown field "spec.colour"'
        in k.fails("apply", "-f", "-", stdin=unknown).stderr
    )


def test_a_cel_rule_of_the_corpus_refuses_what_it_says(k: Kubectl, corpus: Path) -> None:
    body = (
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: sa}\n"
        "spec: {interval: 5m, url: 'https://example.com/r', provider: generic,"
        " serviceAccountName: robot}\n"
    )
    assert k.fails("apply", "-f", "-", stdin=body).stderr.strip() == (
        'The GitRepository "sa" is invalid: spec: Invalid value: serviceAccountName can only '
        "be set when provider is 'azure' or 'aws'"
    )


def test_a_large_crd_is_served_quickly(kubectl: Kubectl, corpus: Path) -> None:
    """Kyverno's ClusterPolicy (the corpus's largest schema) answers lists at once."""
    started = time.monotonic()
    kubectl.ok("get", "clusterpolicies.kyverno.io")
    assert time.monotonic() - started < 30  # a bound on the loop, not a speed goal
