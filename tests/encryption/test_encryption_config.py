"""EncryptionConfiguration files: what is accepted, which resource gets which transformer, and
Kubernetes' validation errors for what is not accepted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kstore.errors import BadRequest, CorruptObject
from kstore.storage.encryption import (
    EncryptionConfig,
    GroupResource,
    load_encryption_config,
    parse_encryption_config,
)
from tests.encryption.configs import AES128_KEY, KEY1, KEY2, KEY3, b64, config, document, provider

KEY = "/secrets/default/s"
PLAIN = b'{"kind":"Secret"}'

FULL_YAML = f"""\
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources:
      - secrets
      - deployments.apps
    providers:
      - aesgcm:
          keys:
            - name: gcm1
              secret: {b64(KEY1)}
      - aescbc:
          keys:
            - name: cbc1
              secret: {b64(KEY2)}
            - name: cbc0
              secret: {b64(AES128_KEY)}
      - secretbox:
          keys:
            - name: box1
              secret: {b64(KEY3)}
      - identity: {{}}
  - resources:
      - "*.apps"
    providers:
      - secretbox:
          keys:
            - name: apps
              secret: {b64(KEY3)}
"""


def written(cfg: EncryptionConfig, group: str, resource: str) -> bytes:
    return cfg.transformer_for(group, resource).to_storage(PLAIN, KEY)


def test_a_kubernetes_configuration_file_is_accepted() -> None:
    cfg = parse_encryption_config(FULL_YAML)
    assert [r.resources for r in cfg.rules] == [("secrets", "deployments.apps"), ("*.apps",)]
    assert [p.type for p in cfg.rules[0].providers] == ["aesgcm", "aescbc", "secretbox", "identity"]
    assert [k.name for k in cfg.rules[0].providers[1].keys] == ["cbc1", "cbc0"]
    assert cfg.rules[0].providers[1].keys[1].secret == AES128_KEY


def test_the_first_provider_and_key_encrypt() -> None:
    cfg = parse_encryption_config(FULL_YAML)
    assert written(cfg, "", "secrets").startswith(b"k8s:enc:aesgcm:v1:gcm1:")


def test_json_files_are_accepted_too() -> None:
    text = json.dumps(document((["configmaps"], [provider("secretbox", ("k", KEY1))])))
    cfg = parse_encryption_config(text)
    assert written(cfg, "", "configmaps").startswith(b"k8s:enc:secretbox:v1:k:")


@pytest.mark.parametrize(
    ("group", "resource", "rule"),
    [
        ("", "secrets", "exact"),
        ("apps", "deployments", "exact"),
        ("apps", "replicasets", "group"),
        ("", "configmaps", None),
        ("example.com", "widgets", None),
    ],
)
def test_resources_find_their_rule_exact_name_first_then_group_wildcard(
    group: str, resource: str, rule: str | None
) -> None:
    cfg = parse_encryption_config(FULL_YAML)
    assert cfg.covers(group, resource) is (rule is not None)
    stored = cfg.transformer_for(group, resource).to_storage(PLAIN, KEY)
    expected = {
        "exact": b"k8s:enc:aesgcm:v1:gcm1:",
        "group": b"k8s:enc:secretbox:v1:apps:",
        None: PLAIN,
    }[rule]
    assert stored.startswith(expected)


def test_core_and_global_wildcards() -> None:
    cfg = config(
        (["secrets"], [provider("aescbc", ("s", KEY1))]),
        (["*."], [provider("aesgcm", ("core", KEY1))]),
        (["*.*"], [provider("secretbox", ("all", KEY1))]),
    )
    assert written(cfg, "", "secrets").startswith(b"k8s:enc:aescbc:v1:s:")
    assert written(cfg, "", "pods").startswith(b"k8s:enc:aesgcm:v1:core:")
    assert written(cfg, "apps", "deployments").startswith(b"k8s:enc:secretbox:v1:all:")
    assert cfg.covers("example.com", "widgets")


def test_resources_no_rule_names_keep_plain_data_but_refuse_encrypted_data() -> None:
    cfg = config((["secrets"], [provider("aescbc", ("k", KEY1))]))
    unnamed = cfg.transformer_for("", "configmaps")
    assert unnamed.to_storage(PLAIN, KEY) == PLAIN
    assert unnamed.from_storage(PLAIN, KEY) == (PLAIN, False)
    encrypted = cfg.transformer_for("", "secrets").to_storage(PLAIN, KEY)
    with pytest.raises(CorruptObject, match="identity transformer tried to read encrypted data"):
        unnamed.from_storage(encrypted, KEY)


def test_a_resource_named_in_two_rules_gets_the_providers_of_both_in_order() -> None:
    old = config((["secrets"], [provider("aescbc", ("old", KEY1))]))
    both = config(
        (["secrets"], [provider("secretbox", ("new", KEY2))]),
        (["secrets"], [provider("aescbc", ("old", KEY1))]),
    )
    stored = old.transformer_for("", "secrets").to_storage(PLAIN, KEY)
    assert both.transformer_for("", "secrets").from_storage(stored, KEY) == (PLAIN, True)
    assert written(both, "", "secrets").startswith(b"k8s:enc:secretbox:v1:new:")


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("secrets", GroupResource("", "secrets")),
        ("deployments.apps", GroupResource("apps", "deployments")),
        ("widgets.example.com", GroupResource("example.com", "widgets")),
        ("*.apps", GroupResource("apps", "*")),
        ("*.", GroupResource("", "*")),
        ("*.*", GroupResource("*", "*")),
    ],
)
def test_resource_names_parse_as_kubernetes_group_resources(
    text: str, parsed: GroupResource
) -> None:
    assert GroupResource.parse(text) == parsed
    assert str(parsed) == text


def test_kms_is_refused_with_a_clear_error() -> None:
    doc = document((["secrets"], [{"kms": {"name": "vault", "endpoint": "unix:///tmp/kms.sock"}}]))
    with pytest.raises(BadRequest) as info:
        parse_encryption_config(json.dumps(doc))
    assert info.value.message == (
        'resources[0].providers[0].kms: Invalid value: "vault": kms providers are not '
        "supported by kstore (use aescbc, aesgcm or secretbox)"
    )


def _with_rules(rules: list[Any]) -> str:
    doc = document()
    doc["resources"] = rules
    return json.dumps(doc)


def _cbc(*keys: dict[str, Any]) -> dict[str, Any]:
    return {"aescbc": {"keys": list(keys)}}


GOOD = {"name": "k", "secret": b64(KEY1)}

INVALID: list[tuple[str, list[Any], str]] = [
    ("no rules", [], "resources: Required value: at least one resources is required"),
    (
        "no resources",
        [{"resources": [], "providers": [_cbc(GOOD)]}],
        "resources[0].resources: Required value: at least one resources[0].resources is required",
    ),
    (
        "no providers",
        [{"resources": ["secrets"], "providers": []}],
        "resources[0].providers: Required value: at least one resources[0].providers is required",
    ),
    (
        "no keys",
        [{"resources": ["secrets"], "providers": [{"aesgcm": {"keys": None}}]}],
        "resources[0].providers[0].aesgcm.keys: Required value: at least one keys is required",
    ),
    (
        "unnamed key",
        [{"resources": ["secrets"], "providers": [_cbc({"secret": b64(KEY1)})]}],
        "resources[0].providers[0].aescbc.keys[0].name: Required value: name is a mandatory "
        "field for a key",
    ),
    (
        "no secret",
        [{"resources": ["secrets"], "providers": [_cbc({"name": "k"})]}],
        "resources[0].providers[0].aescbc.keys[0].secret: Required value: secret is a "
        "mandatory field for a key",
    ),
    (
        "not base64",
        [{"resources": ["secrets"], "providers": [_cbc({"name": "k", "secret": "not base64!"})]}],
        'resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secrets '
        "must be base64 encoded",
    ),
    (
        "short aes key",
        [{"resources": ["secrets"], "providers": [_cbc({"name": "k", "secret": b64(bytes(8))})]}],
        'resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret '
        "is not of the expected length, got 8, expected one of [16 24 32]",
    ),
    (
        "short secretbox key",
        [
            {
                "resources": ["secrets"],
                "providers": [{"secretbox": {"keys": [{"name": "k", "secret": b64(AES128_KEY)}]}}],
            }
        ],
        'resources[0].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": '
        "secret is not of the expected length, got 16, expected one of [32]",
    ),
    (
        "two providers in one element",
        [{"resources": ["secrets"], "providers": [{"identity": {}, **_cbc(GOOD)}]}],
        'resources[0].providers[0]: Invalid value: []string{"aescbc", "identity"}: more than '
        "one provider specified in a single element, should split into different list elements",
    ),
    (
        "unknown provider",
        [{"resources": ["secrets"], "providers": [{"aescbcx": {}}]}],
        'resources[0].providers[0]: Invalid value: []string{"aescbcx"}: provider does not '
        "contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity",
    ),
    (
        "duplicate resource",
        [{"resources": ["secrets", "secrets"], "providers": [_cbc(GOOD)]}],
        'resources[0].resources: Invalid value: []string{"secrets", "secrets"}: the same '
        "resource cannot be specified multiple times",
    ),
    (
        "overlap",
        [{"resources": ["secrets", "*."], "providers": [_cbc(GOOD)]}],
        'resources[0].resources: Invalid value: []string{"secrets", "*."}: using overlapping '
        "resources such as 'secrets' and '*.' in the same resource list is not allowed as "
        "they will be masked",
    ),
    (
        "capital letters",
        [{"resources": ["Secrets"], "providers": [_cbc(GOOD)]}],
        'resources[0].resources[0]: Invalid value: "Secrets": resource name should not '
        "contain capital letters",
    ),
    (
        "bare star",
        [{"resources": ["*"], "providers": [_cbc(GOOD)]}],
        "resources[0].resources[0]: Invalid value: \"*\": use '*.' to encrypt all the resources "
        "from core API group or *.* to encrypt all resources",
    ),
    (
        "across groups",
        [{"resources": ["secrets.*"], "providers": [_cbc(GOOD)]}],
        'resources[0].resources[0]: Invalid value: "secrets.*": encrypting the same resource '
        "across groups is not supported",
    ),
    (
        "events group",
        [{"resources": ["events.events.k8s.io"], "providers": [_cbc(GOOD)]}],
        "objects are stored using the 'events' API group in etcd",
    ),
    (
        "extensions group",
        [{"resources": ["ingresses.extensions"], "providers": [_cbc(GOOD)]}],
        "'extensions' group has been removed and cannot be used for encryption",
    ),
    (
        "non-REST resource",
        [{"resources": ["serviceipallocations"], "providers": [_cbc(GOOD)]}],
        "resources which do not have REST API/s cannot be encrypted",
    ),
]


@pytest.mark.parametrize(
    ("rules", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_configurations_get_kubernetes_validation_errors(
    rules: list[Any], message: str
) -> None:
    with pytest.raises(BadRequest) as info:
        parse_encryption_config(_with_rules(rules))
    assert message in info.value.message
    assert b64(KEY1) not in info.value.message


def test_every_problem_is_reported_at_once() -> None:
    rules = [
        {"resources": ["Secrets"], "providers": [_cbc({"name": "k", "secret": "%%"})]},
        {"resources": ["configmaps"], "providers": []},
    ]
    with pytest.raises(BadRequest) as info:
        parse_encryption_config(_with_rules(rules))
    message = info.value.message
    assert message.startswith("[") and message.endswith("]")
    assert "resources[0].resources[0]" in message
    assert "resources[0].providers[0].aescbc.keys[0].secret" in message
    assert "resources[1].providers: Required value" in message


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        (
            [(["*."], "a"), (["secrets"], "b")],
            'resource "secrets" is masked by earlier rule "*."',
        ),
        (
            [(["*.apps"], "a"), (["deployments.apps"], "b")],
            'resource "deployments.apps" is masked by earlier rule "*.apps"',
        ),
        ([(["*.*"], "a"), (["*.apps"], "b")], 'resource "*.apps" is masked by earlier rule "*.*"'),
    ],
)
def test_a_rule_masked_by_an_earlier_wildcard_is_refused(
    rules: list[tuple[list[str], str]], message: str
) -> None:
    with pytest.raises(BadRequest, match="masked") as info:
        config(*[(names, [provider("aescbc", (name, KEY1))]) for names, name in rules])
    assert info.value.message == message


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ({"apiVersion": "v1", "kind": "EncryptionConfig"}, 'got apiVersion "v1"'),
        ({"apiVersion": "apiserver.config.k8s.io/v1"}, 'and kind ""'),
    ],
)
def test_other_kinds_are_refused(header: dict[str, str], message: str) -> None:
    doc = {**header, "resources": [{"resources": ["secrets"], "providers": [{"identity": {}}]}]}
    with pytest.raises(BadRequest, match=message):
        parse_encryption_config(json.dumps(doc))


def test_secrets_stay_out_of_reprs() -> None:
    cfg = parse_encryption_config(FULL_YAML)
    shown = repr(cfg.rules)
    assert "gcm1" in shown
    assert b64(KEY1) not in shown and repr(KEY1) not in shown


def test_load_reads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "encryption.yaml"
    path.write_text(FULL_YAML)
    assert load_encryption_config(path).covers("", "secrets")


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    with pytest.raises(BadRequest, match="error opening encryption provider configuration file"):
        load_encryption_config(missing)
    empty = tmp_path / "empty.yaml"
    empty.write_text("\n")
    with pytest.raises(BadRequest, match=r'configuration file ".*empty.yaml" is empty'):
        load_encryption_config(empty)
    bad = tmp_path / "bad.yaml"
    bad.write_text(FULL_YAML.replace(b64(KEY2), "c2hvcnQ="))
    with pytest.raises(BadRequest, match=r"^error while parsing file: .*got 5, expected"):
        load_encryption_config(bad)
