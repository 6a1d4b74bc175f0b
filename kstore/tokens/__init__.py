"""Signed service-account tokens: JSON Web Tokens as kube-apiserver issues them.

The one package beside the encryption providers that uses a crypto library: it signs and
verifies compact JWS tokens (RS256 with an RSA key, ES256 with a P-256 key) and knows nothing
of the registry; what a token's claims must still match (the ServiceAccount, a bound Pod or
Secret) is checked by the server, which reads the registry.
"""

from kstore.tokens.jwt import (
    SigningKey,
    TokenError,
    VerifyingKeys,
    ensure_key_file,
    generate_signing_key,
    load_signing_key,
    load_verifying_keys,
)

__all__ = [
    "SigningKey",
    "TokenError",
    "VerifyingKeys",
    "ensure_key_file",
    "generate_signing_key",
    "load_signing_key",
    "load_verifying_keys",
]
