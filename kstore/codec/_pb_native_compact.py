"""The compact form of the compiled converters: shared C helpers and the rewrites that call them.

The Python path's generated bodies (:mod:`kstore.codec._pb_encode`, :mod:`kstore.codec._pb_decode`)
unroll every step inline, which is what interpreted code wants: a helper call costs more
bytecode than the few lines it would replace. Compiled, the same lines cost C code instead:
Cython turns each of them into tens of lines with their own error exits, so a length prefix
read inline in 780 places, or a wrapper with its own argument parsing for each of 225
messages, made most of ~26 MB of C (measured by attributing the generated C to .pyx lines).
Compiled, a call to one shared C function is as fast as the inline steps, and C is what costs.

So this module holds, as Cython text:

- the shared helpers (:data:`DECODE_HELPERS`, :data:`ENCODE_HELPERS`): reading a length or a
  varint after a tag, the next tag, the end of a message, opening and closing a nested
  message, the leaf caches, one Python-callable converter class per direction, and the call
  into the Python converter of a message left out (:func:`decode_python`,
  :func:`encode_python`);
- :func:`compact_decoder` and :func:`compact_encoder`, which replace the generated bodies'
  unrolled runs by calls to those helpers. A rewrite matches a run of lines exactly as the
  generators write it and leaves anything else as it is; each helper does what the run did,
  step for step (same reads, same errors), so the tests that run both paths hold it to that.

Invariant: the rewritten body behaves exactly as the unrewritten one (the Python path's).
"""

from __future__ import annotations

import re

from kstore.codec._pb_plan import LEAF_CACHE_SIZE

__all__ = [
    "DECODE_HELPERS",
    "ENCODE_HELPERS",
    "compact_decoder",
    "compact_encoder",
    "decode_leaf",
    "decode_python",
    "encode_leaf",
    "encode_python",
]

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def _rewrite(lines: list[str], pattern: list[str], replace: list[str]) -> list[str]:
    """Replace every run of ``lines`` that matches ``pattern`` (one regex per line, all at the
    same indentation; a group named in several lines must match the same text in each, and
    ``k1``, where there is one, must be ``k`` + 1), by ``replace`` formatted with the groups
    and indented alike."""
    compiled = [re.compile(p + r"\Z") for p in pattern]
    size = len(pattern)
    out: list[str] = []
    i = 0
    while i < len(lines):
        groups = _match(lines, i, compiled)
        if groups is not None and "k1" in groups and int(groups["k1"]) != int(groups["k"]) + 1:
            groups = None
        if groups is None:
            out.append(lines[i])
            i += 1
            continue
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        out.extend(indent + line.format(**groups) for line in replace)
        i += size
    return out


def _match(lines: list[str], i: int, pattern: list[re.Pattern[str]]) -> dict[str, str] | None:
    if i + len(pattern) > len(lines):
        return None
    indent = len(lines[i]) - len(lines[i].lstrip())
    groups: dict[str, str] = {}
    for offset, regex in enumerate(pattern):
        line = lines[i + offset]
        m = regex.match(line[indent:])
        if m is None or (line[:indent].strip()):
            return None
        for key, value in m.groupdict().items():
            if groups.setdefault(key, value) != value:
                return None
    return groups


# --- decoders ------------------------------------------------------------------------------

# A length prefix after a tag (``_pb_decode._payload``), then the payload's end.
_LENGTH = [
    r"n = b\[p \+ (?P<k>\d+)\]",
    r"if n < 128:",
    r"    s = p \+ (?P<k1>\d+)",
    r"else:",
    r"    n, s = _uvr\(b, p \+ (?P<k1>\d+), n\)",
]
# A varint after a tag (``_pb_decode._varint``).
_VARINT = [
    r"v = b\[p \+ (?P<k>\d+)\]",
    r"if v < 128:",
    r"    p \+= (?P<k1>\d+)",
    r"else:",
    rf"    v, p = (?P<reader>{_IDENT})\(b, p \+ (?P<k1>\d+), v\)",
]
_NEXT_TAG = [r"t = b\[p\] if p < e else 0"]
# The end of a decoder: an overrun, or what is left for the slow path (``message_source``).
_REST = [
    r"if p > e:",
    r"    _over\(\)",
    rf"_slow\((?P<plan>{_IDENT}), b, p, e, r\)",
]


def compact_decoder(lines: list[str]) -> list[str]:
    """A generated decoder body with its unrolled reads replaced by the shared helpers."""
    lines = _rewrite(lines, _LENGTH, ["n = _len(b, p + {k}, &s)"])
    lines = _rewrite(lines, _VARINT, ["v = _vint({reader}, b, p + {k}, &p)"])
    lines = _rewrite(lines, _NEXT_TAG, ["t = _tag(b, p, e)"])
    return _rewrite(lines, _REST, ["_rest({plan}, b, p, e, r)"])


DECODE_HELPERS = f"""\
ctypedef int (*decode_fn)(bytes, Py_ssize_t, Py_ssize_t, dict) except -1


cdef Py_ssize_t _tag(bytes b, Py_ssize_t p, Py_ssize_t e) except -1:
    # The first byte of the next tag, 0 at the end of the message.
    return b[p] if p < e else 0


cdef Py_ssize_t _len(bytes b, Py_ssize_t p, Py_ssize_t* s) except -1:
    # The length prefix at p; *s becomes the payload's start.
    cdef Py_ssize_t n = b[p], start
    if n < 128:
        s[0] = p + 1
        return n
    n, start = _uvr(b, p + 1, n)
    s[0] = start
    return n


cdef object _vint(object reader, bytes b, Py_ssize_t p, Py_ssize_t* after):
    # The varint at p (read by ``reader`` past its first byte); *after becomes its end.
    cdef Py_ssize_t end
    v = b[p]
    if v < 128:
        after[0] = p + 1
        return v
    v, end = reader(b, p + 1, v)
    after[0] = end
    return v


cdef int _rest(object plan, bytes b, Py_ssize_t p, Py_ssize_t e, dict r) except -1:
    # Past the fields in order: an overrun, or the rest of the message for the slow path.
    if p > e:
        _over()
    _slow(plan, b, p, e, r)
    return 0


cdef dict _leaf(dict cache, decode_fn decode, bytes b, Py_ssize_t p, Py_ssize_t q):
    # A flat message through its cache (the logic of _pb_decode._leaf_decoder).
    cdef dict hit, r
    key = b[p:q]
    hit = cache.get(key)
    if hit is not None:
        return hit.copy()
    r = {{}}
    decode(b, p, q, r)
    if not _unknown_seen():
        if len(cache) >= {LEAF_CACHE_SIZE}:
            cache.clear()
        cache[key] = r.copy()
    return r


cdef class Decoder:
    # The Python-callable face of one compiled decoder (what CONVERTERS holds).
    cdef decode_fn decode

    def __call__(self, b, Py_ssize_t p, Py_ssize_t e, dict r):
        if type(b) is not bytes:
            b = bytes(b)
        self.decode(b, p, e, r)


cdef Decoder _decoder(decode_fn decode):
    cdef Decoder wrapper = Decoder.__new__(Decoder)
    wrapper.decode = decode
    return wrapper


cdef dict _PYTHON = {{}}


cdef object _python(str full_name):
    # The Python path's decoder of a message this module does not compile.
    fn = _PYTHON.get(full_name)
    if fn is None:
        from kstore.codec._pb_decode import decoder_for
        fn = _PYTHON[full_name] = decoder_for(full_name)
    return fn"""


def decode_leaf(fn: str) -> str:
    """The leaf cache of a compiled flat message's decoder ``fn``."""
    return (
        f"cdef dict K_{fn} = {{}}\n\n\n"
        f"cdef dict C_{fn}(bytes b, Py_ssize_t p, Py_ssize_t q):\n"
        f"    return _leaf(K_{fn}, {fn}, b, p, q)"
    )


def decode_python(fn: str, full_name: str, flat: bool) -> str:
    """``fn`` (and its leaf form for a flat message) for a message left to the Python path."""
    text = (
        f"cdef int {fn}(bytes b, Py_ssize_t p, Py_ssize_t e, dict r) except -1:"
        f"  # {full_name}\n"
        f"    _python({full_name!r})(b, p, e, r)\n"
        f"    return 0"
    )
    if flat:
        text += (
            f"\n\n\ncdef dict C_{fn}(bytes b, Py_ssize_t p, Py_ssize_t q):\n"
            f"    cdef dict r = {{}}\n"
            f"    {fn}(b, p, q, r)\n"
            f"    return r"
        )
    return text


# --- encoders ------------------------------------------------------------------------------

# A nested message written in place, its length set afterwards (``_pb_encode._nested_source``).
_NESTED = [
    r"w \+= (?P<placeholder>b'[^']*')",
    r"s = len\(w\)",
    rf"(?P<call>{_IDENT}\(w, {_IDENT}\))",
    r"n = len\(w\) - s",
    r"if n < 128:",
    r"    w\[s - 1\] = n",
    r"else:",
    r"    w\[s - 1 : s\] = _uv\(n\)",
]


def compact_encoder(lines: list[str]) -> list[str]:
    """A generated encoder body with its nested-message framing done by the shared helpers."""
    return _rewrite(lines, _NESTED, ["s = _open(w, {placeholder})", "{call}", "_close(w, s)"])


ENCODE_HELPERS = f"""\
ctypedef int (*encode_fn)(bytearray, dict) except -1


cdef Py_ssize_t _open(bytearray w, bytes placeholder) except -1:
    # Write a nested message's tag and a one-byte length placeholder; return where it starts.
    w += placeholder
    return len(w)


cdef int _close(bytearray w, Py_ssize_t s) except -1:
    # Set the length of the nested message written since s (widening the placeholder).
    cdef Py_ssize_t n = len(w) - s
    if n < 128:
        w[s - 1] = n
    else:
        w[s - 1 : s] = _uv(n)
    return 0


cdef int _leaf(dict cache, encode_fn encode, bytearray w, object d) except -1:
    # A flat message through its cache (the logic of _pb_encode._leaf_encoder).
    cdef Py_ssize_t start
    try:
        key = (*d.items(), *map(type, d.values()))
        hit = cache.get(key)
    except (AttributeError, TypeError):
        encode(w, d)
        return 0
    if hit is not None:
        w += hit
        return 0
    start = len(w)
    encode(w, d)
    if len(cache) >= {LEAF_CACHE_SIZE}:
        cache.clear()
    cache[key] = bytes(w[start:])
    return 0


cdef class Encoder:
    # The Python-callable face of one compiled encoder (what CONVERTERS holds).
    cdef encode_fn encode

    def __call__(self, bytearray w, d):
        self.encode(w, d)


cdef Encoder _encoder(encode_fn encode):
    cdef Encoder wrapper = Encoder.__new__(Encoder)
    wrapper.encode = encode
    return wrapper


cdef dict _PYTHON = {{}}


cdef object _python(str full_name):
    # The Python path's encoder of a message this module does not compile.
    fn = _PYTHON.get(full_name)
    if fn is None:
        from kstore.codec._pb_encode import encoder_for
        fn = _PYTHON[full_name] = encoder_for(full_name)
    return fn"""


def encode_leaf(fn: str) -> str:
    """The leaf cache of a compiled flat message's encoder ``fn``."""
    return (
        f"cdef dict K_{fn} = {{}}\n\n\n"
        f"cdef int C_{fn}(bytearray w, object d) except -1:\n"
        f"    return _leaf(K_{fn}, {fn}, w, d)"
    )


def encode_python(fn: str, full_name: str, flat: bool) -> str:
    """``fn`` (and its leaf form for a flat message) for a message left to the Python path."""
    text = (
        f"cdef int {fn}(bytearray w, dict d) except -1:  # {full_name}\n"
        f"    _python({full_name!r})(w, d)\n"
        f"    return 0"
    )
    if flat:
        text += (
            f"\n\n\ncdef int C_{fn}(bytearray w, object d) except -1:\n"
            f"    _python({full_name!r})(w, d)\n"
            f"    return 0"
        )
    return text
