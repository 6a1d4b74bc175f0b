"""wire -> dict: one straight-line Python function per message type, generated once.

:func:`decoder_for` generates, from the field plans, a function ``d(b, p, e, r)`` that reads the
message body ``b[p:e]`` and stores its JSON members into the dict ``r``. It walks the wire
itself (no upb message is built): building a message and reading it back costs a C call per
field on top of the same Python work.

The generated code expects fields in field-number order, which is how Kubernetes (and kstore)
write them: each field is one comparison of the current tag, so a message costs one test per
schema field plus the work for the fields present. Anything else (fields out of order, fields
this schema does not know, packed repeated scalars) is handed, from that point on, to a slow
interpretive loop that accepts any valid encoding. Unknown fields are skipped, as Go's
generated code skips them; :func:`unknown_seen` tells a strict caller that one was met.

Flat messages (only scalar members) keep a small cache from their bytes to their decoded dict
and hand out shallow copies, which are fresh objects since every value is immutable.

The dict is what Kubernetes' JSON encoding of the Go struct would give:

- a non-pointer scalar with omitempty is left out when zero, without omitempty kept;
- a non-pointer struct is always present: absent on the wire it is its zero JSON value
  (``{...}`` with its own non-omitempty members, Time null, Quantity ``"0"``, IntOrString 0);
- a pointer absent is left out (or null, without omitempty); present it is kept, zero or not;
- repeated and map fields absent are left out (or null, without omitempty).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

from kstore.codec import _pb_native
from kstore.codec._pb_json_schema import dec_json_schema_props
from kstore.codec._pb_plan import (
    LEAF_CACHE_SIZE,
    WIRE_LEN,
    WIRE_VARINT,
    FieldPlan,
    JsonKind,
    MessagePlan,
    Scalar,
    is_flat,
    plan_for,
)
from kstore.codec._pb_values import (
    Malformed,
    b64_encode,
    dec_duration,
    dec_int_or_string,
    dec_micro_time,
    dec_quantity,
    dec_time,
    read_int32,
    read_int64,
    read_uvarint,
    skip_field,
)
from kstore.codec.json import loads as json_loads

__all__ = [
    "Decoder",
    "RawExtensionReader",
    "decoder_for",
    "reset_unknown_seen",
    "set_raw_extension_reader",
    "unknown_seen",
]

#: Reads the message body ``b[p:e]`` into the dict ``r``.
Decoder = Callable[[bytes, int, int, dict[str, Any]], None]
#: Turns the bytes of a RawExtension into its JSON value (set by the serializer module).
RawExtensionReader = Callable[[bytes], Any]

_lock = threading.Lock()
_ns: dict[str, Any] = {}
_generated: set[str] = set()  # messages whose decoder is compiled or being compiled (under _lock)
# Full name -> decoder, filled only once a batch is compiled: a generated function calls the
# others by name, so none may be used before all of its batch exists.
_ready: dict[str, Decoder] = {}
# Full name -> decoder when compiled converters are enabled: the compiled one where it is built
# and current, else the Python one (see kstore.codec._pb_native). Filled on first use.
_native: dict[str, Decoder] = {}
_native_bound = False
_state = threading.local()


def decoder_for(full_name: str) -> Decoder:
    """The decoder of one message type (generated with everything it reaches, on first use)."""
    fn = (_native if _pb_native.enabled else _ready).get(full_name)
    if fn is None:
        fn = _first_use(full_name)
    return fn


def _first_use(full_name: str) -> Decoder:
    global _native_bound
    native = _pb_native.enabled
    with _lock:
        if native and not _native_bound:
            _native.update(_pb_native.load(_pb_native.DECODE_MODULE, _native_helpers))
            _native_bound = True
        fn = _native.get(full_name) if native else None
        if fn is None:
            if full_name not in _ready:
                _generate(full_name)
            fn = _ready[full_name]
            if native:
                _native[full_name] = fn
    return fn


def _native_helpers(module: ModuleType) -> dict[str, Any]:
    """What the compiled decoders look up by name: the helpers and the plans (for ``_slow``)."""
    helpers = {k: v for k, v in _ns.items() if k.startswith("_") and not k.startswith("__")}
    helpers["_unknown_seen"] = unknown_seen
    # The compiled module reads the usual map entries itself and hands the rest to these.
    helpers["_entry_ss_py"] = _entry_ss
    helpers["_entry_sq_py"] = _entry_sq
    for full_name in module.CONVERTERS:
        with contextlib.suppress(KeyError):  # a message gone from the schema: never selected
            helpers[f"P_{function_name(full_name)}"] = plan_for(full_name)
    return helpers


def reset_unknown_seen() -> None:
    """Start a new top-level decode (every decode calls this first)."""
    _state.unknown = False


def unknown_seen() -> bool:
    """Whether a field unknown to the schema was skipped since :func:`reset_unknown_seen`."""
    return bool(getattr(_state, "unknown", False))


def set_raw_extension_reader(reader: RawExtensionReader) -> None:
    """How RawExtension bytes become JSON (the serializer also decodes embedded protobuf)."""
    _ns["_rawx_reader"] = reader


# --- helpers the generated code calls ------------------------------------------------------


def _over() -> None:
    raise Malformed("a field runs past the end of its message, or a tag is invalid")


def _raw_json(raw: bytes) -> Any:
    return json_loads(raw)


def _read_bytes_field(b: bytes, p: int, q: int) -> bytes | None:
    """The single bytes field (number 1) of RawExtension/FieldsV1; None when absent."""
    raw = None
    while p < q:
        t = b[p]
        p += 1
        if t > 0x7F:
            t, p = read_uvarint(b, p, t)
        if t == 0x0A:
            n = b[p]
            p += 1
            if n > 0x7F:
                n, p = read_uvarint(b, p, n)
            end = p + n
            if end > q:
                _over()
            raw = b[p:end]
            p = end
        else:
            p = skip_field(b, p, q, t)
    if p != q:
        _over()
    return raw


def _fields_v1(b: bytes, p: int, q: int) -> Any:
    raw = _read_bytes_field(b, p, q)
    if not raw:
        return None
    if raw[0] not in b"{n \t\r\n":
        raise Malformed("FieldsV1 holds CBOR, which kstore cannot read")
    return json_loads(raw)


def _raw_extension(b: bytes, p: int, q: int) -> Any:
    raw = _read_bytes_field(b, p, q)
    if raw is None:
        return None
    return _ns["_rawx_reader"](raw)


def _items_list(b: bytes, p: int, q: int) -> list[str]:
    items: list[str] = []
    while p < q:
        t = b[p]
        p += 1
        if t == 0x0A:
            n = b[p]
            p += 1
            if n > 0x7F:
                n, p = read_uvarint(b, p, n)
            end = p + n
            if end > q:
                _over()
            items.append(b[p:end].decode())
            p = end
        else:
            p = skip_field(b, p, q, t)
    if p != q:
        _over()
    return items


def _entry(b: bytes, p: int, q: int) -> tuple[str, int, int]:
    """The key of a map entry and the bounds of its value field's payload (-1 when absent)."""
    key = ""
    vp = vq = -1
    while p < q:
        t = b[p]
        p += 1
        if t == 0x0A or t == 0x12:
            n = b[p]
            p += 1
            if n > 0x7F:
                n, p = read_uvarint(b, p, n)
            end = p + n
            if end > q:
                _over()
            if t == 0x0A:
                key = b[p:end].decode()
            else:
                vp, vq = p, end
            p = end
        else:
            if t > 0x7F:
                t, p = read_uvarint(b, p, t)
            p = skip_field(b, p, q, t)
    if p != q:
        _over()
    return key, vp, vq


def _entry_ss(b: bytes, p: int, q: int) -> tuple[str, str]:
    # The usual shape (key then value, each with a one-byte length) is read directly.
    if b[p] == 0x0A:
        kn = b[p + 1]
        kq = p + 2 + kn
        if kn < 0x80 and kq + 1 < q and b[kq] == 0x12:
            vn = b[kq + 1]
            if vn < 0x80 and kq + 2 + vn == q:
                return b[p + 2 : kq].decode(), b[kq + 2 : q].decode()
    key, vp, vq = _entry(b, p, q)
    return key, ("" if vp < 0 else b[vp:vq].decode())


def _entry_sb(b: bytes, p: int, q: int) -> tuple[str, str | None]:
    key, vp, vq = _entry(b, p, q)
    return key, (None if vp < 0 else b64_encode(b[vp:vq]))


def _entry_sq(b: bytes, p: int, q: int) -> tuple[str, str]:
    # Usual shape: 0a <kl> key 12 <ql> (0a <sl> text), all lengths one byte.
    if b[p] == 0x0A:
        kn = b[p + 1]
        kq = p + 2 + kn
        if kn < 0x80 and kq + 3 < q and b[kq] == 0x12 and b[kq + 2] == 0x0A:
            sn = b[kq + 3]
            if sn < 0x80 and b[kq + 1] == sn + 2 and kq + 4 + sn == q:
                return b[p + 2 : kq].decode(), b[kq + 4 : q].decode()
    key, vp, vq = _entry(b, p, q)
    return key, ("0" if vp < 0 else dec_quantity(b, vp, vq))


def _entry_st(b: bytes, p: int, q: int) -> tuple[str, str | None]:
    # map<string, Time>: a zero Time (no value, or an empty Timestamp) is JSON null.
    key, vp, vq = _entry(b, p, q)
    return key, (None if vp < 0 else dec_time(b, vp, vq))


def _entry_sl(b: bytes, p: int, q: int) -> tuple[str, list[str] | None]:
    # map<string, named []string> (CertificateSigningRequestSpec.extra): an absent or empty
    # value decodes, as in Go, to a nil slice, JSON null.
    key, vp, vq = _entry(b, p, q)
    items = None if vp < 0 else _items_list(b, vp, vq)
    return key, (items or None)


_ns.update(
    _over=_over,
    _uvr=read_uvarint,
    _i32=read_int32,
    _i64=read_int64,
    _b64=b64_encode,
    _entry_ss=_entry_ss,
    _entry_sb=_entry_sb,
    _entry_sq=_entry_sq,
    _entry_st=_entry_st,
    _entry_sl=_entry_sl,
    _rawx_reader=_raw_json,
)
_SPECIAL: dict[int, tuple[str, Callable[[bytes, int, int], Any], Any]] = {
    # form: (helper name, decoder, JSON value when the non-pointer field is absent)
    JsonKind.TIME: ("_time", dec_time, None),
    JsonKind.MICRO_TIME: ("_micro", dec_micro_time, None),
    JsonKind.DURATION: ("_dur", dec_duration, "0s"),
    JsonKind.INT_OR_STRING: ("_ios", dec_int_or_string, 0),
    JsonKind.QUANTITY: ("_qty", dec_quantity, "0"),
    JsonKind.FIELDS_V1: ("_fv1", _fields_v1, None),
    JsonKind.RAW_EXTENSION: ("_rawx", _raw_extension, None),
    JsonKind.ITEMS_LIST: ("_items", _items_list, None),
    JsonKind.JSON_SCHEMA_PROPS: ("_jsp", dec_json_schema_props, None),
}
for _helper, _fn, _zero in _SPECIAL.values():
    _ns[_helper] = _fn
_ENTRY_HELPERS = {
    Scalar.STRING: "_entry_ss",
    Scalar.BYTES: "_entry_sb",
    Scalar.MESSAGE: "_entry_sq",
}


def _entry_helper(f: FieldPlan) -> str:
    """The helper reading one entry of map ``f``: by value scalar, and for message values by
    their JSON form (Quantity, Time as in PodDisruptionBudgetStatus.disruptedPods, a string list
    as in CertificateSigningRequestSpec.extra)."""
    if f.map_value is Scalar.MESSAGE and f.form == JsonKind.TIME:
        return "_entry_st"
    if f.map_value is Scalar.MESSAGE and f.form == JsonKind.ITEMS_LIST:
        return "_entry_sl"
    return _ENTRY_HELPERS[f.map_value]


# --- generation ----------------------------------------------------------------------------
#
# Shape of the generated code. ``t`` holds the first byte of the next tag (0 at the end of the
# message), ``p`` its position, ``e`` the end of the message. Per field, in number order:
#
#     if t == <tag>:                       # and b[p + 1] == <2nd byte> for numbers >= 16
#         <read the value, store it>
#         p = <after the value>
#         t = b[p] if p < e else 0
#     else:
#         <the JSON value of an absent field, if the JSON has one>
#
# and, at the end, ``if p != e:`` hands what is left to the slow path (or reports an overrun).
# A length-delimited value's bounds are not checked field by field: a length that runs past
# its message leaves ``p`` beyond ``e``, which the final test reports (an index past the
# whole buffer raises IndexError, also reported as malformed data).

_NEXT = "t = b[p] if p < e else 0"


def _generate(root: str) -> str:
    pending = [root]
    order: list[MessagePlan] = []
    while pending:
        full_name = pending.pop()
        if full_name in _generated:
            continue
        plan = plan_for(full_name)
        _generated.add(full_name)
        _ns[f"P_{function_name(full_name)}"] = plan
        order.append(plan)
        for f in plan.fields:
            if f.message and plan_for(f.message).form == JsonKind.OBJECT:
                pending.append(f.message)
    source: list[str] = []
    for plan in order:
        source.extend(message_source(plan))
    code = compile("\n".join(source) + "\n", f"<kstore protobuf decoders for {root}>", "exec")
    exec(code, _ns)
    for plan in order:
        if is_flat(plan.full_name):
            name = function_name(plan.full_name)
            _ns[f"C_{name}"] = _leaf_decoder(_ns[name])
    for plan in order:
        _ready[plan.full_name] = _ns[function_name(plan.full_name)]
    return function_name(root)


def _leaf_decoder(decode: Decoder) -> Callable[[bytes, int, int], dict[str, Any]]:
    """Wrap a flat message's decoder with a cache keyed by the message's bytes.

    The same bytes always decode to the same dict, so a hit hands out a copy (the values are
    immutable, a shallow copy is a fresh object). Nothing decoded while an unknown field has
    been seen is cached, so a cached leaf never hides one from a strict decode.
    """
    cache: dict[bytes, dict[str, Any]] = {}

    def leaf(b: bytes, p: int, q: int) -> dict[str, Any]:
        key = b[p:q]
        hit = cache.get(key)
        if hit is not None:
            return hit.copy()
        r: dict[str, Any] = {}
        decode(b, p, q, r)
        if not getattr(_state, "unknown", False):
            if len(cache) >= LEAF_CACHE_SIZE:
                cache.clear()
            cache[key] = r.copy()
        return r

    return leaf


def function_name(full_name: str) -> str:
    """The generated decoder's name: a function of the message name only, so that the compiled
    module (see :mod:`kstore.codec._pb_native_source`) and this one generate the same code."""
    return "d_" + full_name.replace("_", "__").replace(".", "_")


def message_source(plan: MessagePlan, header: str = "") -> list[str]:
    """The source of one message's decoder; ``header`` replaces the ``def`` line (the compiled
    module declares C types there, the body is the same)."""
    name = function_name(plan.full_name)
    lines = [header or f"def {name}(b, p, e, r):  # {plan.full_name}", f"    {_NEXT}"]
    for f in plan.fields:
        lines.extend("    " + x for x in _field_source(f))
    lines += [
        "    if p != e:",
        "        if p > e:",
        "            _over()",
        f"        _slow(P_{name}, b, p, e, r)",
    ]
    return lines


def _test(f: FieldPlan) -> str:
    tag = f.tag
    if len(tag) == 1:
        return f"t == {tag[0]}"
    if len(tag) == 2:
        return f"t == {tag[0]} and b[p + 1] == {tag[1]}"
    return f"t == {tag[0]} and b[p:p + {len(tag)}] == {tag!r}"


def _payload(f: FieldPlan, use: list[str]) -> list[str]:
    """Read a length after the tag, run ``use`` on the payload ``b[s:q]``; ``p = q`` after.

    The usual one-byte length is computed inline; ``use`` is emitted for both cases.
    """
    skip = len(f.tag)
    return [
        f"n = b[p + {skip}]",
        "if n < 128:",
        f"    s = p + {skip + 1}",
        "else:",
        f"    n, s = _uvr(b, p + {skip + 1}, n)",
        "q = s + n",
        *use,
        "p = q",
    ]


def _varint(f: FieldPlan) -> list[str]:
    """Read a varint after the tag into ``v``; leave ``p`` after it."""
    skip = len(f.tag)
    reader = {Scalar.INT32: "_i32", Scalar.INT64: "_i64", Scalar.BOOL: "_uvr"}[f.scalar]
    lines = [
        f"v = b[p + {skip}]",
        "if v < 128:",
        f"    p += {skip + 1}",
        "else:",
        f"    v, p = {reader}(b, p + {skip + 1}, v)",
    ]
    if f.scalar is Scalar.BOOL:
        lines.append("v = v != 0")
    return lines


def _store(f: FieldPlan, value: str, zero_test: str) -> list[str]:
    """Store a present singular value: zero values of omitempty non-pointer fields are left out."""
    if f.always and f.omitempty and f.scalar is not Scalar.MESSAGE:
        return [f"if {zero_test}:", f"    r[{f.name!r}] = {value}"]
    return [f"r[{f.name!r}] = {value}"]


def _absent_default(f: FieldPlan) -> list[str]:
    """What an absent field becomes in the dict (nothing, when the JSON would omit it)."""
    key = repr(f.name)
    if f.repeated or f.is_map or f.nullable:
        return [] if f.omitempty else [f"r[{key}] = None"]
    if f.scalar is Scalar.MESSAGE:
        if f.form == JsonKind.OBJECT:
            dec = function_name(f.message)
            if f.inline:
                return [f"{dec}(b'', 0, 0, r)"]
            return ["x = {}", f"{dec}(b'', 0, 0, x)", f"r[{key}] = x"]
        if f.form == JsonKind.ITEMS_LIST:
            return [] if f.omitempty else [f"r[{key}] = None"]
        return [f"r[{key}] = {_SPECIAL[f.form][2]!r}"]
    if f.omitempty:
        return []
    zero = {Scalar.STRING: '""', Scalar.BYTES: '""', Scalar.BOOL: "False"}.get(f.scalar, "0")
    return [f"r[{key}] = {zero}"]


def _field_source(f: FieldPlan) -> list[str]:
    test = _test(f)
    if f.is_map or f.repeated:
        body = [
            "l = {}" if f.is_map else "l = []",
            f"while {test}:",
            *("    " + x for x in _element_source(f)),
            f"    {_NEXT}",
            f"r[{f.name!r}] = l",
        ]
    else:
        body = [*_singular_source(f), _NEXT]
    default = _absent_default(f)
    lines = [f"if {test}:", *("    " + x for x in body)]
    if default:
        lines += ["else:", *("    " + x for x in default)]
    return lines


def _element_source(f: FieldPlan) -> list[str]:
    """One element of a repeated or map field, added to ``l``; ``p`` left after it."""
    if f.scalar in (Scalar.INT32, Scalar.INT64, Scalar.BOOL):
        return [*_varint(f), "l.append(v)"]
    if f.is_map:
        use = [f"k, v = {_entry_helper(f)}(b, s, q)", "l[k] = v"]
    elif f.scalar is Scalar.STRING:
        use = ["l.append(b[s:q].decode())"]
    elif f.scalar is Scalar.BYTES:
        use = ["l.append(_b64(b[s:q]))"]
    elif f.form == JsonKind.OBJECT and is_flat(f.message):
        use = [f"l.append(C_{function_name(f.message)}(b, s, q))"]
    elif f.form == JsonKind.OBJECT:
        use = ["x = {}", f"{function_name(f.message)}(b, s, q, x)", "l.append(x)"]
    else:
        use = [f"l.append({_SPECIAL[f.form][0]}(b, s, q))"]
    return _payload(f, use)


def _singular_source(f: FieldPlan) -> list[str]:
    if f.scalar in (Scalar.INT32, Scalar.INT64, Scalar.BOOL):
        return [*_varint(f), *_store(f, "v", "v")]
    key = repr(f.name)
    if f.scalar is Scalar.STRING:
        if f.always and f.omitempty:
            # Kubernetes writes every non-pointer string, most of them empty: skip those first.
            skip = len(f.tag)
            return [
                f"if b[p + {skip}] == 0:",
                f"    p += {skip + 1}",
                "else:",
                *("    " + x for x in _payload(f, [f"r[{key}] = b[s:q].decode()"])),
            ]
        use = [f"r[{key}] = b[s:q].decode()"]
    elif f.scalar is Scalar.BYTES:
        use = _store(f, "_b64(b[s:q])", "n")
    elif f.form == JsonKind.OBJECT:
        dec = function_name(f.message)
        if f.inline:
            use = [f"{dec}(b, s, q, r)"]
        elif is_flat(f.message):
            use = [f"r[{key}] = C_{dec}(b, s, q)"]
        else:
            use = ["x = {}", f"{dec}(b, s, q, x)", f"r[{key}] = x"]
    elif f.form == JsonKind.ITEMS_LIST and f.omitempty:
        use = [f"v = {_SPECIAL[f.form][0]}(b, s, q)", "if v:", f"    r[{key}] = v"]
    else:
        use = [f"r[{key}] = {_SPECIAL[f.form][0]}(b, s, q)"]
    return _payload(f, use)


# --- the slow path: any field order, unknown fields, packed repeated scalars ---------------


def _slow(plan: MessagePlan, b: bytes, p: int, e: int, r: dict[str, Any]) -> None:
    while p < e:
        t = b[p]
        p += 1
        if t > 0x7F:
            t, p = read_uvarint(b, p, t)
        number = t >> 3
        f = plan.field_by_number(number)
        if number == 0:
            raise Malformed(f"illegal tag 0 (wire type {t & 7})")
        if f is None:
            _state.unknown = True
            p = skip_field(b, p, e, t)
        elif t & 7 == f.wire_type:
            p = _slow_value(f, b, p, e, r)
        elif f.repeated and f.wire_type == WIRE_VARINT and t & 7 == WIRE_LEN:
            p = _slow_packed(f, b, p, e, r)
        else:
            raise Malformed(f"wrong wire type {t & 7} for field {f.name}")
    if p != e:
        _over()


def _read_length(b: bytes, p: int, e: int) -> tuple[int, int]:
    n = b[p]
    p += 1
    if n > 0x7F:
        n, p = read_uvarint(b, p, n)
    if p + n > e:
        _over()
    return p, p + n


def _read_varint(f: FieldPlan, b: bytes, p: int) -> tuple[Any, int]:
    v = b[p]
    p += 1
    if v > 0x7F:
        reader = read_int32 if f.scalar is Scalar.INT32 else read_int64
        v, p = reader(b, p, v)
    return (v != 0 if f.scalar is Scalar.BOOL else v), p


def _slow_packed(f: FieldPlan, b: bytes, p: int, e: int, r: dict[str, Any]) -> int:
    p, q = _read_length(b, p, e)
    items = _list_in(r, f.name)
    while p < q:
        v, p = _read_varint(f, b, p)
        items.append(v)
    if p != q:
        _over()
    return q


def _list_in(r: dict[str, Any], name: str) -> list[Any]:
    items = r.get(name)
    if not isinstance(items, list):
        items = r[name] = []
    return items


def _slow_value(f: FieldPlan, b: bytes, p: int, e: int, r: dict[str, Any]) -> int:
    """Decode one occurrence of ``f`` at ``p`` into ``r``; return the position after it."""
    if f.wire_type == WIRE_VARINT:
        value, p = _read_varint(f, b, p)
        if f.repeated:
            _list_in(r, f.name).append(value)
        elif value or not (f.always and f.omitempty):
            r[f.name] = value
        return p
    p, q = _read_length(b, p, e)
    if f.is_map:
        key, value = _ns[_entry_helper(f)](b, p, q)
        found = r.get(f.name)
        if found.__class__ is not dict:
            found = r[f.name] = {}
        found[key] = value
        return q
    value = _slow_payload(f, b, p, q, r)
    if f.repeated:
        _list_in(r, f.name).append(value)
    elif f.inline:
        pass
    elif value is _NOTHING:
        r.pop(f.name, None)
    else:
        r[f.name] = value
    return q


_NOTHING = object()


def _slow_payload(f: FieldPlan, b: bytes, p: int, q: int, r: dict[str, Any]) -> Any:
    if f.scalar is Scalar.STRING:
        text = b[p:q].decode()
        return text if text or f.repeated or not (f.always and f.omitempty) else _NOTHING
    if f.scalar is Scalar.BYTES:
        raw = b[p:q]
        return b64_encode(raw) if raw or f.repeated or not f.omitempty else _NOTHING
    if f.form == JsonKind.OBJECT:
        decode = decoder_for(f.message)
        if f.inline:
            decode(b, p, q, r)
            return None
        target = r.get(f.name) if not f.repeated else None
        if target.__class__ is not dict:
            target = {}
        decode(b, p, q, target)  # a repeated singular message merges, as in Go
        return target
    return _SPECIAL[f.form][1](b, p, q)


_ns["_slow"] = _slow
