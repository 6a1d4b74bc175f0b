"""TLS serving: ``--tls-cert-file`` and ``--tls-private-key-file``, TLS 1.2 at least.

Not an ASGI filter but the transport under all of them: the server's ``SSLContext``, built
once at start so a missing or mismatched certificate or key fails ``kstore serve`` with a
clear message before it listens. As kube-apiserver, no protocol older than TLS 1.2 is
accepted, whatever the local OpenSSL would allow; clients are not asked for certificates.
"""

from __future__ import annotations

import ssl
from pathlib import Path

from kstore.errors import BadRequest

__all__ = ["server_tls_context"]


def server_tls_context(cert_file: Path, key_file: Path) -> ssl.SSLContext:
    """A server context serving ``cert_file`` (PEM, chain allowed) with ``key_file``."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(certfile=str(cert_file), keyfile=str(key_file))
    except (OSError, ssl.SSLError) as exc:
        raise BadRequest(
            f"unable to load server certificate {cert_file} with key {key_file}: {exc}"
        ) from None
    return context
