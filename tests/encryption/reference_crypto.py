"""Independent, pure-Python implementations of the ciphers behind Kubernetes' providers.

Written from the published specifications (FIPS-197 for AES, SP 800-38A for CBC, SP 800-38D
for GCM, Bernstein's Salsa20/XSalsa20 and Poly1305 papers for NaCl's secretbox) and sharing
no code with ``cryptography`` or PyNaCl, so bytes kstore writes can be checked against the
published layouts by something other than the libraries that wrote them. Slow and not
constant-time: for tests only. ``test_reference_crypto.py`` checks each one against the
specifications' own test vectors.
"""

from __future__ import annotations

from collections.abc import Sequence

# -- AES (FIPS-197) ---------------------------------------------------------------------------


def _xtime(a: int) -> int:
    a <<= 1
    return a ^ 0x11B if a & 0x100 else a


def _gf_mul(a: int, b: int) -> int:
    out = 0
    while b:
        if b & 1:
            out ^= a
        a, b = _xtime(a), b >> 1
    return out


def _make_sboxes() -> tuple[list[int], list[int]]:
    sbox, inverse = [0] * 256, [0] * 256
    for x in range(256):
        inv = 0
        if x:
            # x^254 is x's multiplicative inverse in GF(2^8).
            inv, power, exponent = 1, x, 254
            while exponent:
                if exponent & 1:
                    inv = _gf_mul(inv, power)
                power, exponent = _gf_mul(power, power), exponent >> 1
        s = inv
        for shift in range(1, 5):
            s ^= ((inv << shift) | (inv >> (8 - shift))) & 0xFF
        s ^= 0x63
        sbox[x], inverse[s] = s, x
    return sbox, inverse


_SBOX, _INV_SBOX = _make_sboxes()


def _expand_key(key: bytes) -> list[list[int]]:
    nk = len(key) // 4
    if len(key) not in (16, 24, 32):
        raise ValueError("AES keys are 16, 24 or 32 bytes")
    rounds = nk + 6
    words = [list(key[4 * i : 4 * i + 4]) for i in range(nk)]
    rcon = 1
    for i in range(nk, 4 * (rounds + 1)):
        temp = list(words[i - 1])
        if i % nk == 0:
            temp = [_SBOX[b] for b in temp[1:] + temp[:1]]
            temp[0] ^= rcon
            rcon = _xtime(rcon)
        elif nk > 6 and i % nk == 4:
            temp = [_SBOX[b] for b in temp]
        words.append([a ^ b for a, b in zip(words[i - nk], temp, strict=True)])
    return [[b for word in words[4 * r : 4 * r + 4] for b in word] for r in range(rounds + 1)]


def _mix(state: list[int], matrix: Sequence[int]) -> list[int]:
    out = [0] * 16
    for c in range(4):
        column = state[4 * c : 4 * c + 4]
        for r in range(4):
            value = 0
            for k in range(4):
                value ^= _gf_mul(matrix[4 * r + k], column[k])
            out[4 * c + r] = value
    return out


_MIX = (2, 3, 1, 1, 1, 2, 3, 1, 1, 1, 2, 3, 3, 1, 1, 2)
_INV_MIX = (14, 11, 13, 9, 9, 14, 11, 13, 13, 9, 14, 11, 11, 13, 9, 14)


def aes_encrypt_block(key: bytes, block: bytes) -> bytes:
    round_keys = _expand_key(key)
    state = [b ^ k for b, k in zip(block, round_keys[0], strict=True)]
    for rnd in range(1, len(round_keys)):
        state = [_SBOX[b] for b in state]
        state = [state[r + 4 * ((c + r) % 4)] for c in range(4) for r in range(4)]
        if rnd != len(round_keys) - 1:
            state = _mix(state, _MIX)
        state = [b ^ k for b, k in zip(state, round_keys[rnd], strict=True)]
    return bytes(state)


def aes_decrypt_block(key: bytes, block: bytes) -> bytes:
    round_keys = _expand_key(key)
    last = len(round_keys) - 1
    state = [b ^ k for b, k in zip(block, round_keys[last], strict=True)]
    for rnd in range(last - 1, -1, -1):
        state = [state[r + 4 * ((c - r) % 4)] for c in range(4) for r in range(4)]
        state = [_INV_SBOX[b] for b in state]
        state = [b ^ k for b, k in zip(state, round_keys[rnd], strict=True)]
        if rnd:
            state = _mix(state, _INV_MIX)
    return bytes(state)


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=False))


# -- CBC with PKCS#7 (SP 800-38A, RFC 5652 section 6.3) ---------------------------------------


def cbc_encrypt(key: bytes, iv: bytes, plain: bytes, *, pad: bool = True) -> bytes:
    if pad:
        count = 16 - len(plain) % 16
        plain += bytes([count]) * count
    out, previous = b"", iv
    for i in range(0, len(plain), 16):
        previous = aes_encrypt_block(key, _xor(plain[i : i + 16], previous))
        out += previous
    return out


def cbc_decrypt(key: bytes, iv: bytes, body: bytes, *, unpad: bool = True) -> bytes:
    out, previous = b"", iv
    for i in range(0, len(body), 16):
        block = body[i : i + 16]
        out += _xor(aes_decrypt_block(key, block), previous)
        previous = block
    if not unpad:
        return out
    count = out[-1]
    if not 1 <= count <= 16 or out[-count:] != bytes([count]) * count:
        raise ValueError("bad PKCS#7 padding")
    return out[:-count]


# -- GCM (SP 800-38D) -------------------------------------------------------------------------

_GCM_R = 0xE1 << 120


def _gf128_mul(x: int, y: int) -> int:
    z, v = 0, y
    for i in range(127, -1, -1):
        if (x >> i) & 1:
            z ^= v
        v = (v >> 1) ^ _GCM_R if v & 1 else v >> 1
    return z


def _ghash(h: bytes, data: bytes) -> int:
    hk, y = int.from_bytes(h, "big"), 0
    for i in range(0, len(data), 16):
        y = _gf128_mul(y ^ int.from_bytes(data[i : i + 16], "big"), hk)
    return y


def _pad16(data: bytes) -> bytes:
    return data + bytes(-len(data) % 16)


def _gctr(key: bytes, counter: bytes, data: bytes) -> bytes:
    out = b""
    prefix, count = counter[:12], int.from_bytes(counter[12:], "big")
    for i in range(0, len(data), 16):
        stream = aes_encrypt_block(key, prefix + count.to_bytes(4, "big"))
        out += _xor(data[i : i + 16], stream)
        count = (count + 1) & 0xFFFFFFFF
    return out


def _gcm_tag(key: bytes, nonce: bytes, aad: bytes, ciphertext: bytes) -> bytes:
    h = aes_encrypt_block(key, bytes(16))
    lengths = (8 * len(aad)).to_bytes(8, "big") + (8 * len(ciphertext)).to_bytes(8, "big")
    s = _ghash(h, _pad16(aad) + _pad16(ciphertext) + lengths)
    j0 = nonce + b"\x00\x00\x00\x01"
    return _xor(aes_encrypt_block(key, j0), s.to_bytes(16, "big"))


def gcm_encrypt(key: bytes, nonce: bytes, plain: bytes, aad: bytes) -> bytes:
    """Ciphertext followed by the 16-byte tag; ``nonce`` is 12 bytes."""
    ciphertext = _gctr(key, nonce + b"\x00\x00\x00\x02", plain)
    return ciphertext + _gcm_tag(key, nonce, aad, ciphertext)


def gcm_decrypt(key: bytes, nonce: bytes, sealed: bytes, aad: bytes) -> bytes:
    ciphertext, tag = sealed[:-16], sealed[-16:]
    if _gcm_tag(key, nonce, aad, ciphertext) != tag:
        raise ValueError("GCM tag mismatch")
    return _gctr(key, nonce + b"\x00\x00\x00\x02", ciphertext)


# -- XSalsa20-Poly1305: NaCl's crypto_secretbox ------------------------------------------------

_SIGMA = (0x61707865, 0x3320646E, 0x79622D32, 0x6B206574)  # "expand 32-byte k"


def _rotl32(v: int, c: int) -> int:
    return ((v << c) & 0xFFFFFFFF) | (v >> (32 - c))


def _salsa_rounds(state: list[int]) -> list[int]:
    x = list(state)
    quarters = (
        (0, 4, 8, 12), (5, 9, 13, 1), (10, 14, 2, 6), (15, 3, 7, 11),
        (0, 1, 2, 3), (5, 6, 7, 4), (10, 11, 8, 9), (15, 12, 13, 14),
    )  # fmt: skip
    for _ in range(10):
        for a, b, c, d in quarters:
            x[b] ^= _rotl32((x[a] + x[d]) & 0xFFFFFFFF, 7)
            x[c] ^= _rotl32((x[b] + x[a]) & 0xFFFFFFFF, 9)
            x[d] ^= _rotl32((x[c] + x[b]) & 0xFFFFFFFF, 13)
            x[a] ^= _rotl32((x[d] + x[c]) & 0xFFFFFFFF, 18)
    return x


def _words(data: bytes) -> list[int]:
    return [int.from_bytes(data[i : i + 4], "little") for i in range(0, len(data), 4)]


def _salsa_state(key: bytes, sixteen: bytes) -> list[int]:
    k, n = _words(key), _words(sixteen)
    return [
        _SIGMA[0], *k[:4], _SIGMA[1], *n, _SIGMA[2], *k[4:], _SIGMA[3],
    ]  # fmt: skip


def _hsalsa20(key: bytes, nonce16: bytes) -> bytes:
    x = _salsa_rounds(_salsa_state(key, nonce16))
    return b"".join(x[i].to_bytes(4, "little") for i in (0, 5, 10, 15, 6, 7, 8, 9))


def _xsalsa20_stream(key: bytes, nonce24: bytes, length: int) -> bytes:
    subkey = _hsalsa20(key, nonce24[:16])
    out = b""
    counter = 0
    while len(out) < length:
        state = _salsa_state(subkey, nonce24[16:] + counter.to_bytes(8, "little"))
        mixed = _salsa_rounds(state)
        out += b"".join(
            ((m + s) & 0xFFFFFFFF).to_bytes(4, "little") for m, s in zip(mixed, state, strict=True)
        )
        counter += 1
    return out[:length]


def poly1305(key: bytes, message: bytes) -> bytes:
    r = int.from_bytes(key[:16], "little") & 0x0FFFFFFC0FFFFFFC0FFFFFFC0FFFFFFF
    s = int.from_bytes(key[16:], "little")
    p, acc = (1 << 130) - 5, 0
    for i in range(0, len(message), 16):
        acc = (acc + int.from_bytes(message[i : i + 16] + b"\x01", "little")) * r % p
    return ((acc + s) & ((1 << 128) - 1)).to_bytes(16, "little")


def secretbox_seal(key: bytes, nonce: bytes, plain: bytes) -> bytes:
    """Tag (16 bytes) followed by the ciphertext, as NaCl's secretbox and Go's Seal."""
    stream = _xsalsa20_stream(key, nonce, 32 + len(plain))
    ciphertext = _xor(plain, stream[32:])
    return poly1305(stream[:32], ciphertext) + ciphertext


def secretbox_open(key: bytes, nonce: bytes, sealed: bytes) -> bytes:
    tag, ciphertext = sealed[:16], sealed[16:]
    stream = _xsalsa20_stream(key, nonce, 32 + len(ciphertext))
    if poly1305(stream[:32], ciphertext) != tag:
        raise ValueError("Poly1305 tag mismatch")
    return _xor(ciphertext, stream[32:])
