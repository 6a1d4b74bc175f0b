"""The prefix chain: the first provider and key write, every configured one reads, and a read
through any other one is stale (how key rotation and turning encryption off work)."""

from __future__ import annotations

import pytest

from kstore.errors import CorruptObject
from kstore.storage.encryption.prefix import PrefixedTransformer, PrefixTransformers
from kstore.storage.encryption.providers import IdentityCheckTransformer
from tests.encryption.configs import KEY1, KEY2, KEY3, provider, secrets_with

KEY = "/secrets/default/s"
PLAIN = b'{"kind":"Secret"}'


def written_by(*providers: dict[str, object]) -> bytes:
    return secrets_with(*providers).transformer_for("", "secrets").to_storage(PLAIN, KEY)


def read_with(stored: bytes, *providers: dict[str, object]) -> tuple[bytes, bool]:
    return secrets_with(*providers).transformer_for("", "secrets").from_storage(stored, KEY)


def test_data_of_the_first_key_is_not_stale() -> None:
    stored = written_by(provider("aescbc", ("key2", KEY2), ("key1", KEY1)))
    assert stored.startswith(b"k8s:enc:aescbc:v1:key2:")
    assert read_with(stored, provider("aescbc", ("key2", KEY2), ("key1", KEY1))) == (PLAIN, False)


def test_data_of_a_later_key_of_the_first_provider_is_stale() -> None:
    stored = written_by(provider("aescbc", ("key1", KEY1)))
    assert read_with(stored, provider("aescbc", ("key2", KEY2), ("key1", KEY1))) == (PLAIN, True)


def test_data_of_a_later_provider_is_stale() -> None:
    stored = written_by(provider("aescbc", ("key1", KEY1)))
    now = [provider("secretbox", ("box", KEY3)), provider("aescbc", ("key1", KEY1))]
    assert read_with(stored, *now) == (PLAIN, True)


def test_two_providers_of_one_kind_share_a_prefix_and_both_are_tried() -> None:
    stored = written_by(provider("aesgcm", ("old", KEY1)))
    now = [provider("aesgcm", ("new", KEY2)), provider("aesgcm", ("old", KEY1))]
    assert read_with(stored, *now) == (PLAIN, True)


def test_identity_first_writes_plain_data_and_still_reads_encrypted_data() -> None:
    encrypted = written_by(provider("aescbc", ("key1", KEY1)))
    now = [provider("identity"), provider("aescbc", ("key1", KEY1))]
    assert written_by(*now) == PLAIN
    assert read_with(PLAIN, *now) == (PLAIN, False)
    assert read_with(encrypted, *now) == (PLAIN, True)


def test_plain_data_read_after_encryption_is_turned_on_is_stale() -> None:
    now = [provider("aescbc", ("key1", KEY1)), provider("identity")]
    assert read_with(PLAIN, *now) == (PLAIN, True)


def test_plain_data_without_identity_configured_is_refused() -> None:
    with pytest.raises(CorruptObject, match=r"^no matching prefix found$"):
        read_with(PLAIN, provider("aescbc", ("key1", KEY1)))


def test_an_unknown_key_name_is_named_as_such() -> None:
    stored = written_by(provider("aescbc", ("gone", KEY1)))
    with pytest.raises(
        CorruptObject, match=r"^no matching key was found for the provided AES transformer$"
    ):
        read_with(stored, provider("aescbc", ("key1", KEY1)))
    stored = written_by(provider("secretbox", ("gone", KEY1)))
    with pytest.raises(CorruptObject, match="Secretbox transformer"):
        read_with(stored, provider("secretbox", ("key1", KEY1)))


def test_a_key_whose_secret_changed_fails_and_every_failure_is_reported() -> None:
    stored = written_by(provider("aesgcm", ("key1", KEY1)))
    with pytest.raises(CorruptObject, match=r"^cipher: message authentication failed$"):
        read_with(stored, provider("aesgcm", ("key1", KEY2)))
    with pytest.raises(CorruptObject) as info:
        read_with(stored, provider("aesgcm", ("key1", KEY2)), provider("aesgcm", ("key9", KEY3)))
    assert info.value.message == (
        "[cipher: message authentication failed, "
        "no matching key was found for the provided AES transformer]"
    )


def test_an_identity_refusal_does_not_hide_the_later_providers_errors() -> None:
    stored = written_by(provider("secretbox", ("key1", KEY1)))
    with pytest.raises(CorruptObject, match=r"^secretbox: message authentication failed$"):
        read_with(stored, provider("identity"), provider("secretbox", ("key1", KEY2)))


def test_a_stale_inner_read_stays_stale_through_the_outer_chain() -> None:
    class Stale(IdentityCheckTransformer):
        def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
            return data, True

    chain = PrefixTransformers([PrefixedTransformer(b"p:", Stale())], no_match="none")
    assert chain.from_storage(b"p:data", KEY) == (b"data", True)
    assert chain.to_storage(b"data", KEY) == b"p:data"


def test_an_empty_chain_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        PrefixTransformers([], no_match="none")
