"""Continue tokens in Kubernetes' exact format, and their validation."""

from __future__ import annotations

import base64

import orjson
import pytest

from kstore.storage.continue_token import (
    InvalidContinueToken,
    decode_continue,
    encode_continue,
)


def _raw(payload: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(payload)).rstrip(b"=").decode()


def test_token_is_raw_url_base64_of_kubernetes_json() -> None:
    token = encode_continue("/pods/second/bar\x00", "/pods/second/", 8)
    assert "=" not in token
    decoded = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    # Byte-identical to Go's encoding/json output for the same struct.
    assert decoded == b'{"v":"meta.k8s.io/v1","rv":8,"start":"bar\\u0000"}'


def test_go_html_escaping_is_mirrored() -> None:
    token = encode_continue("/pods/a<b>&c", "/pods/", 3)
    decoded = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    assert decoded == b'{"v":"meta.k8s.io/v1","rv":3,"start":"a\\u003cb\\u003e\\u0026c"}'
    assert decode_continue(token, "/pods/").start_key == "/pods/a<b>&c"


def test_round_trip_keeps_key_and_revision() -> None:
    token = encode_continue("/pods/ns/name\x00", "/pods/", 12)
    decoded = decode_continue(token, "/pods/")
    assert decoded.start_key == "/pods/ns/name\x00"
    assert decoded.resource_version == 12


def test_minus_one_means_latest_and_round_trips() -> None:
    token = encode_continue("/pods/ns/x\x00", "/pods/", -1)
    assert decode_continue(token, "/pods/").resource_version == -1


def test_start_is_relative_to_the_prefix_it_is_used_with() -> None:
    token = _raw({"v": "meta.k8s.io/v1", "rv": 5, "start": "foo"})
    assert decode_continue(token, "/pods/second/").start_key == "/pods/second/foo"


def test_encode_refuses_a_key_outside_the_prefix() -> None:
    with pytest.raises(ValueError, match="do not match"):
        encode_continue("/other/x", "/pods/", 1)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (
            {"v": "meta.k8s.io/v1", "rv": 0, "start": "a"},
            "continue key is not valid: incorrect encoded start resourceVersion "
            "(version meta.k8s.io/v1)",
        ),
        (
            {"v": "meta.k8s.io/v1", "rv": 3, "start": ""},
            "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)",
        ),
        (
            {"v": "v1alpha9", "rv": 3, "start": "a"},
            "continue key is not valid: server does not recognize this encoded version v1alpha9",
        ),
    ],
)
def test_invalid_tokens_have_kubernetes_messages(payload: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidContinueToken) as caught:
        decode_continue(_raw(payload), "/pods/")
    assert str(caught.value) == message


@pytest.mark.parametrize("start", ["../secrets/x", "a/../../b", "a//b", "//x", "a/./b"])
def test_path_traversal_in_start_is_rejected(start: str) -> None:
    with pytest.raises(InvalidContinueToken, match="continue key is not valid"):
        decode_continue(_raw({"v": "meta.k8s.io/v1", "rv": 3, "start": start}), "/pods/ns/")


@pytest.mark.parametrize("token", ["not base64!", "eyJ2Ijo", "W10", "bnVsbA", "e30="])
def test_garbage_is_rejected(token: str) -> None:
    with pytest.raises(InvalidContinueToken, match=r"^continue key is not valid"):
        decode_continue(token, "/pods/")
