"""The Cython sources of the compiled converters (``_pb_native_{encode,decode}.pyx``).

Which messages are compiled is decided here, in one place: :data:`HOT_KINDS` (the kinds a
control plane writes and watches most, the meta types on every request and watch, and their
lists) and everything they nest, except :data:`COLD` (parts of those kinds that real objects
rarely carry: exotic volume sources, ephemeral containers, alpha fields) and what only those
reach. Compiling everything cost a ~3 minute build for code most objects never run; a message
left out runs on the Python converters, also when a compiled one nests it (the compiled module
calls the Python converter for it), and a kind left out is selected per message by
:mod:`kstore.codec._pb_native` as any uncompiled message is. So the selection changes speed,
never results.

The function bodies are the ones :mod:`kstore.codec._pb_encode` and
:mod:`kstore.codec._pb_decode` generate for the Python path, with their unrolled runs replaced
by calls to shared C helpers (:mod:`kstore.codec._pb_native_compact`, which says why); the
``def`` lines become ``cdef`` functions whose buffer, positions and lengths have C types, so
calls between converters are C calls. Around them this module writes what the Python path
builds at run time: the leaf caches of flat messages, the Python-callable converters
(``CONVERTERS``), the digest of the plans each was generated from (``DIGESTS``, see
:func:`kstore.codec._pb_native.digest`) and a ``bind`` function through which
:func:`kstore.codec._pb_native.load` hands over the Python helpers the bodies call by name.

The output depends only on the descriptors and this code (sorted order, no timestamps):
``scripts/gen-proto`` writes it, and a test fails when the committed files differ from a fresh
generation.

Compiler directives: ``overflowcheck`` makes a wire length too large for a C integer an
``OverflowError`` (reported as malformed data, as the Python path reports it) instead of a
wrapped-around position; bounds checks and negative indexes keep Python's semantics; no copy
of the .pyx lines in the C (``emit_code_comments``), which only made it larger.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from kstore.api.proto_schema import kind_messages
from kstore.codec import _pb_decode, _pb_encode
from kstore.codec._pb_native import digest
from kstore.codec._pb_native_compact import (
    DECODE_HELPERS,
    ENCODE_HELPERS,
    compact_decoder,
    compact_encoder,
    decode_leaf,
    decode_python,
    encode_leaf,
    encode_python,
)
from kstore.codec._pb_plan import JsonKind, is_flat, plan_for

__all__ = [
    "COLD",
    "DECODE_PYX",
    "ENCODE_PYX",
    "HOT_KINDS",
    "decode_source",
    "encode_source",
    "messages",
    "python_messages",
    "write",
]

ENCODE_PYX = Path(__file__).with_name("_pb_native_encode.pyx")
DECODE_PYX = Path(__file__).with_name("_pb_native_decode.pyx")

_CORE = "k8s.io.api.core.v1."
_META = "k8s.io.apimachinery.pkg.apis.meta.v1."

#: The compiled roots: the kinds a control plane writes most (with their lists, for LIST
#: responses) and the meta messages of every request and watch. A kind named here without a
#: protobuf schema yet (Node, Endpoints, EndpointSlice, the other workloads) is compiled once
#: it gets one.
HOT_KINDS: tuple[str, ...] = (
    *(
        f"{_CORE}{kind}{suffix}"
        for kind in (
            "Pod",
            "ConfigMap",
            "Secret",
            "Service",
            "Endpoints",
            "Event",
            "Node",
            "Namespace",
        )
        for suffix in ("", "List")
    ),
    *(
        f"{group}{kind}{suffix}"
        for group, kind in (
            ("k8s.io.api.discovery.v1.", "EndpointSlice"),
            ("k8s.io.api.events.v1.", "Event"),
            ("k8s.io.api.coordination.v1.", "Lease"),
            ("k8s.io.api.apps.v1.", "Deployment"),
            ("k8s.io.api.apps.v1.", "ReplicaSet"),
            ("k8s.io.api.apps.v1.", "StatefulSet"),
            ("k8s.io.api.apps.v1.", "DaemonSet"),
            ("k8s.io.api.batch.v1.", "Job"),
        )
        for suffix in ("", "List")
    ),
    f"{_META}WatchEvent",
    f"{_META}Status",
    f"{_META}DeleteOptions",
    f"{_META}PartialObjectMetadata",
    f"{_META}PartialObjectMetadataList",
)

#: Messages the hot kinds nest that stay on the Python path: volume sources other than the
#: common ones (ConfigMap, Secret, EmptyDir, HostPath, PVC, projected, downward API),
#: ephemeral containers (debugging only), and fields behind alpha or rarely enabled features.
COLD: frozenset[str] = frozenset(
    _CORE + name
    for name in (
        "AWSElasticBlockStoreVolumeSource",
        "AzureDiskVolumeSource",
        "AzureFileVolumeSource",
        "CSIVolumeSource",
        "CephFSVolumeSource",
        "CinderVolumeSource",
        "ClusterTrustBundleProjection",
        "ContainerResizePolicy",
        "ContainerRestartRule",
        "ContainerUser",
        "EphemeralContainer",
        "EphemeralVolumeSource",
        "EvictionResponder",
        "FCVolumeSource",
        "FileKeySelector",
        "FlexVolumeSource",
        "FlockerVolumeSource",
        "GCEPersistentDiskVolumeSource",
        "GitRepoVolumeSource",
        "GlusterfsVolumeSource",
        "ISCSIVolumeSource",
        "ImageVolumeSource",
        "NFSVolumeSource",
        "NodeAllocatableResourceClaimStatus",
        "PhotonPersistentDiskVolumeSource",
        "PodCertificateProjection",
        "PodExtendedResourceClaimStatus",
        "PodResourceClaim",
        "PodResourceClaimStatus",
        "PodSchedulingGroup",
        "PodVolumeHealth",
        "PortworxVolumeSource",
        "QuobyteVolumeSource",
        "RBDVolumeSource",
        "ResourceStatus",
        "ScaleIOVolumeSource",
        "StorageOSVolumeSource",
        "VolumeDevice",
        "VolumeStatus",
        "VsphereVirtualDiskVolumeSource",
        "WindowsSecurityContextOptions",
    )
)

_PROLOGUE = """\
# cython: language_level=3, overflowcheck=True, binding=False, embedsignature=False
# cython: emit_code_comments=False
# Generated by kstore.codec._pb_native_source (run scripts/gen-proto); do not edit.
# The bodies are those of the Python path ({module}); see that module for what they do.
"""

_BIND = '''

def bind(helpers):
    """Bind the Python helpers the converters call by name (before any converter runs)."""
    globals().update(helpers)
'''


def messages() -> list[str]:
    """Every message the compiled converters cover, sorted: the hot kinds that have a schema
    and what they nest, short of :data:`COLD`."""
    known = set(kind_messages()) | {f"{_META}WatchEvent"}
    found: set[str] = set()
    pending = [name for name in HOT_KINDS if name in known]
    while pending:
        name = pending.pop()
        if name in found or name in COLD:
            continue
        found.add(name)
        pending.extend(_nested(name))
    return sorted(found)


def python_messages() -> list[str]:
    """The messages compiled converters nest but leave to the Python path, sorted."""
    compiled = set(messages())
    return sorted({m for name in compiled for m in _nested(name)} - compiled)


def _nested(full_name: str) -> list[str]:
    return [
        f.message
        for f in plan_for(full_name).fields
        if f.message and plan_for(f.message).form == JsonKind.OBJECT
    ]


def decode_source() -> str:
    names = messages()
    out = [_PROLOGUE.format(module="kstore.codec._pb_decode"), _DECODE_HELPERS, DECODE_HELPERS]
    for full_name in python_messages():
        out.append(
            decode_python(_pb_decode.function_name(full_name), full_name, is_flat(full_name))
        )
    for full_name in names:
        fn = _pb_decode.function_name(full_name)
        header = (
            f"cdef int {fn}(bytes b, Py_ssize_t p, Py_ssize_t e, dict r) except -1:  # {full_name}"
        )
        lines = compact_decoder(_pb_decode.message_source(plan_for(full_name), header))
        out.append("\n".join([lines[0], "    cdef Py_ssize_t t, n, s, q", *lines[1:]]))
        if is_flat(full_name):
            out.append(decode_leaf(fn))
    out.append(_tables(names, _pb_decode.function_name, "_decoder"))
    out.append(_BIND)
    body = "\n\n".join(out)
    bound = [*_helper_names(_pb_decode), "_unknown_seen", "_entry_ss_py", "_entry_sq_py"]
    bound += [f"P_{_pb_decode.function_name(n)}" for n in names]
    return _declare(body, [name for name in bound if name not in _DECODE_NATIVE])


def encode_source() -> str:
    names = messages()
    out = [_PROLOGUE.format(module="kstore.codec._pb_encode"), _ENCODE_HELPERS, ENCODE_HELPERS]
    for full_name in python_messages():
        out.append(
            encode_python(_pb_encode.function_name(full_name), full_name, is_flat(full_name))
        )
    for full_name in names:
        fn = _pb_encode.function_name(full_name)
        header = f"cdef int {fn}(bytearray w, dict d) except -1:  # {full_name}"
        lines = compact_encoder(_pb_encode.message_source(plan_for(full_name), header))
        declare = "    cdef Py_ssize_t s, n" if _uses_n(lines) else "    cdef Py_ssize_t s"
        out.append("\n".join([lines[0], declare, *lines[1:]]))
        if is_flat(full_name):
            out.append(encode_leaf(fn))
    out.append(_tables(names, _pb_encode.function_name, "_encoder"))
    body = "\n\n".join(out)
    keys = sorted({int(k) for k in re.findall(r"\bL_(\d+)\b", body)})
    body += "\n\nTABLES = (" + "".join(f"{k}, " for k in keys) + ")\n" + _BIND
    bound = [*_helper_names(_pb_encode), "_not_a_map", *(f"L_{k}" for k in keys)]
    return _declare(body, [name for name in bound if name not in _ENCODE_NATIVE])


def _uses_n(lines: list[str]) -> bool:
    return any(re.search(r"\bn\b", line) for line in lines[1:])


def write(directory: Path | None = None) -> list[Path]:
    """Write both ``.pyx`` files (beside this module, or into ``directory``); return them."""
    encode = ENCODE_PYX if directory is None else directory / ENCODE_PYX.name
    decode = DECODE_PYX if directory is None else directory / DECODE_PYX.name
    encode.write_text(encode_source())
    decode.write_text(decode_source())
    return [encode, decode]


def _helper_names(module: ModuleType) -> list[str]:
    namespace: dict[str, object] = module._ns
    return sorted(k for k in namespace if k.startswith("_") and not k.startswith("__"))


def _declare(body: str, bound: list[str]) -> str:
    """Insert, after the prologue, the module globals that ``bind`` fills (Cython refuses a
    name it cannot see defined)."""
    head, rest = body.split("\n\n", 1)
    declared = "".join(f"{name} = None\n" for name in sorted(set(bound)))
    return f"{head}\n# Bound by bind() to the Python path's helpers.\n{declared}\n{rest}"


def _tables(names: list[str], function_name: Callable[[str], str], wrap: str) -> str:
    converters = "".join(f"    {n!r}: {wrap}({function_name(n)}),\n" for n in names)
    digests = "".join(f"    {n!r}: {digest(n)!r},\n" for n in names)
    return f"CONVERTERS = {{\n{converters}}}\n\nDIGESTS = {{\n{digests}}}"


# Compiled twins of the hottest Python helpers (same logic as in _pb_encode/_pb_decode; the
# tests that compare both paths hold them to it). Unusual shapes go to the Python helper.
_DECODE_NATIVE = {"_entry_ss", "_entry_sq"}
_DECODE_HELPERS = """\
cdef tuple _entry_ss(bytes b, Py_ssize_t p, Py_ssize_t q):
    cdef Py_ssize_t kn, kq, vn
    if b[p] == 0x0A:
        kn = b[p + 1]
        kq = p + 2 + kn
        if kn < 0x80 and kq + 1 < q and b[kq] == 0x12:
            vn = b[kq + 1]
            if vn < 0x80 and kq + 2 + vn == q:
                return b[p + 2 : kq].decode(), b[kq + 2 : q].decode()
    return _entry_ss_py(b, p, q)


cdef tuple _entry_sq(bytes b, Py_ssize_t p, Py_ssize_t q):
    cdef Py_ssize_t kn, kq, sn
    if b[p] == 0x0A:
        kn = b[p + 1]
        kq = p + 2 + kn
        if kn < 0x80 and kq + 3 < q and b[kq] == 0x12 and b[kq + 2] == 0x0A:
            sn = b[kq + 3]
            if sn < 0x80 and b[kq + 1] == sn + 2 and kq + 4 + sn == q:
                return b[p + 2 : kq].decode(), b[kq + 4 : q].decode()
    return _entry_sq_py(b, p, q)"""

_ENCODE_NATIVE = {"_uv", "_map_ss", "_map_sq", "_put_str"}
_ENCODE_HELPERS = """\
from libc.string cimport memcpy


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*) except NULL
    char* PyBytes_AsString(object) except NULL
    int PyByteArray_Resize(object, Py_ssize_t) except -1
    char* PyByteArray_AS_STRING(object)
    Py_ssize_t PyByteArray_GET_SIZE(object)


cdef int _put_str(bytearray w, bytes tag, object v) except -1:
    # tag, varint length, UTF-8 bytes: what `w += tag + _uv(len(x)) + x` with x = v.encode()
    # appends, copied straight from the str's UTF-8 form (a non-str fails as v.encode() does).
    cdef Py_ssize_t n, size, i, k
    cdef unsigned long long u
    cdef const char* data
    cdef char* out
    cdef object x
    if type(v) is str:
        data = PyUnicode_AsUTF8AndSize(v, &n)
    else:
        x = v.encode()
        data = PyBytes_AsString(x)
        n = len(x)
    k = len(tag)
    size = PyByteArray_GET_SIZE(w)
    PyByteArray_Resize(w, size + k + 10 + n)
    out = PyByteArray_AS_STRING(w) + size
    memcpy(out, <const char*>tag, k)
    i = k
    u = <unsigned long long>n
    while u >= 0x80:
        out[i] = <char>((u & 0x7F) | 0x80)
        u >>= 7
        i += 1
    out[i] = <char>u
    i += 1
    memcpy(out + i, data, n)
    PyByteArray_Resize(w, size + i + n)
    return 0


cdef bytes _uv(unsigned long long v):
    cdef unsigned char buf[10]
    cdef int i = 0
    while v >= 0x80:
        buf[i] = (v & 0x7F) | 0x80
        v >>= 7
        i += 1
    buf[i] = <unsigned char>v
    return buf[: i + 1]


cdef int _map_ss(bytearray w, bytes tag, object m) except -1:
    cdef Py_ssize_t kn, vn
    if m.__class__ is not dict:
        _not_a_map(m)
    for k in sorted(m):
        key = k.encode()
        x = m[k]
        value = b"" if x is None else x.encode()
        kn = len(key)
        vn = len(value)
        if kn + vn < 124:
            w += tag + bytes((kn + vn + 4, 0x0A, kn)) + key + bytes((0x12, vn)) + value
        else:
            body = b"\\x0a" + _uv(kn) + key + b"\\x12" + _uv(vn) + value
            w += tag + _uv(len(body)) + body
    return 0


cdef int _map_sq(bytearray w, bytes tag, object m) except -1:
    cdef Py_ssize_t kn, vn
    if m.__class__ is not dict:
        _not_a_map(m)
    for k in sorted(m):
        key = k.encode()
        x = m[k]
        if x.__class__ is str:
            value = x.encode()
            kn = len(key)
            vn = len(value)
            if kn + vn < 120:
                w += tag + bytes((kn + vn + 6, 0x0A, kn)) + key
                w += bytes((0x12, vn + 2, 0x0A, vn)) + value
                continue
        body = b"\\x0a" + _uv(len(key)) + key + b"\\x12" + _qty(x)
        w += tag + _uv(len(body)) + body
    return 0"""
