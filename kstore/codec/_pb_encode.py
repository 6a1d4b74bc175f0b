"""dict -> wire: one straight-line Python function per message type, generated once.

For every message reachable from a kind, :func:`encoder_for` generates (from the field plans)
the source of a function ``e(w, d)`` that appends the message body for the object dict ``d`` to
the bytearray ``w``, compiles all of them together once, and caches them. Generated code beats
per-field closures because each field costs a handful of bytecodes: the tag bytes, the
"tag + one-byte length" prefixes and zero values are constants, and nested messages are written
in place, their length inserted in front afterwards (no intermediate bytes objects).

What the generated code does is what Kubernetes does when it unmarshals the JSON into a Go
struct and marshals that to protobuf:

- fields go out in field-number order; map entries sorted by key, key and value always written;
- a non-pointer field absent from the dict (or null) is written with its zero value
  (``""``, 0, false, an empty message, Time as an empty message, Quantity ``"0"``);
- pointer, repeated and map fields absent, null or empty are not written;
- members the schema does not know are ignored (Kubernetes' non-strict JSON decoding).

Flat messages (only scalar members, see :func:`~kstore.codec._pb_plan.is_flat`) keep a small
cache from their members to their bytes: Kubernetes objects repeat them (ports, mounts,
conditions), and a tuple of a dict's items is cheaper to hash than the message is to write.

A value of the wrong JSON type raises :class:`~kstore.errors.BadRequest`; an
``AttributeError``/``TypeError`` escaping the generated code means the same thing and is mapped
to BadRequest by the caller.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

from kstore.codec import _pb_native
from kstore.codec._pb_json_schema import enc_json_schema_props
from kstore.codec._pb_plan import (
    LEAF_CACHE_SIZE,
    FieldPlan,
    JsonKind,
    MessagePlan,
    Scalar,
    is_flat,
    plan_for,
)
from kstore.codec._pb_values import (
    b64_decode,
    enc_duration,
    enc_int_or_string,
    enc_micro_time,
    enc_quantity,
    enc_time,
    length_prefixed,
    uvarint,
    varint_int,
)
from kstore.codec.json import dumps as json_dumps
from kstore.errors import BadRequest

__all__ = ["Encoder", "encoder_for"]

#: Appends the body of one message for an object dict to a bytearray.
Encoder = Callable[[bytearray, Any], None]

_lock = threading.Lock()
_ns: dict[str, Any] = {}
_generated: set[str] = set()  # messages whose encoder is compiled or being compiled (under _lock)
# Full name -> encoder, filled only once a batch is compiled: a generated function calls the
# others by name, so none may be used before all of its batch exists.
_ready: dict[str, Encoder] = {}
# Full name -> encoder when compiled converters are enabled: the compiled one where it is built
# and current, else the Python one (see kstore.codec._pb_native). Filled on first use.
_native: dict[str, Encoder] = {}
_native_bound = False


def encoder_for(full_name: str) -> Encoder:
    """The encoder of one message type (generated with everything it reaches, on first use)."""
    fn = (_native if _pb_native.enabled else _ready).get(full_name)
    if fn is None:
        fn = _first_use(full_name)
    return fn


def _first_use(full_name: str) -> Encoder:
    global _native_bound
    native = _pb_native.enabled
    with _lock:
        if native and not _native_bound:
            _native.update(_pb_native.load(_pb_native.ENCODE_MODULE, _native_helpers))
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
    """What the compiled encoders look up by name: the helpers and the tag tables."""
    helpers = {k: v for k, v in _ns.items() if k.startswith("_") and not k.startswith("__")}
    helpers["_not_a_map"] = _not_a_map
    for key in module.TABLES:
        helpers[f"L_{key}"] = tag_table(key)
    return helpers


# --- helpers the generated code calls ------------------------------------------------------


def _bad(field: str, value: Any, expected: str) -> None:
    raise BadRequest(f'field "{field}": expected {expected}, got {type(value).__name__}')


def _list(field: str, value: Any) -> None:
    raise BadRequest(f'field "{field}": expected an array, got {type(value).__name__}')


def _varint32(value: Any) -> bytes:
    return varint_int(value, 32)


def _varint64(value: Any) -> bytes:
    return varint_int(value, 64)


def _fields_v1(value: Any) -> bytes:
    """FieldsV1 as written by Kubernetes: its JSON document, compact, keys in document order."""
    if value is None:
        return b"\x00"
    raw = json_dumps(value)
    return length_prefixed(b"\x0a" + uvarint(len(raw)) + raw)


def _raw_extension(value: Any) -> bytes:
    """RawExtension: the embedded object's JSON (compact, keys in document order)."""
    if value is None:
        return b"\x00"
    raw = json_dumps(value)
    return length_prefixed(b"\x0a" + uvarint(len(raw)) + raw)


def _items_list(value: Any) -> bytes:
    """A named Go slice of strings (e.g. ``Verbs``) wrapped in a message with ``items``."""
    if value.__class__ is not list:
        _list("items", value)
    body = bytearray()
    for item in value:
        s = item.encode()
        body += b"\x0a" + uvarint(len(s)) + s
    return length_prefixed(bytes(body))


def _duration(value: Any) -> bytes:
    if value is None:
        return b"\x02\x08\x00"
    return enc_duration(value)


def _not_a_map(m: Any) -> None:
    raise BadRequest(f"expected an object (a map), got {type(m).__name__}")


def _map_ss(w: bytearray, tag: bytes, m: Any) -> None:
    """map<string, string>: entries sorted by key, key and value always written."""
    if m.__class__ is not dict:
        _not_a_map(m)
    for k in sorted(m):
        key = k.encode()
        x = m[k]
        value = b"" if x is None else x.encode()
        kn = len(key)
        vn = len(value)
        if kn + vn < 124:  # every length fits in one byte
            w += tag + bytes((kn + vn + 4, 0x0A, kn)) + key + bytes((0x12, vn)) + value
        else:
            body = b"\x0a" + uvarint(kn) + key + b"\x12" + uvarint(vn) + value
            w += tag + uvarint(len(body)) + body


def _map_sb(w: bytearray, tag: bytes, m: Any) -> None:
    """map<string, bytes>: base64 values; a null value is a nil []byte, written as no value."""
    if m.__class__ is not dict:
        _not_a_map(m)
    for k in sorted(m):
        key = k.encode()
        x = m[k]
        body = b"\x0a" + uvarint(len(key)) + key
        if x is not None:
            raw = b64_decode(x)
            body += b"\x12" + uvarint(len(raw)) + raw
        w += tag + uvarint(len(body)) + body


def _map_sq(w: bytearray, tag: bytes, m: Any) -> None:
    """map<string, Quantity>: the value is a Quantity message holding its string."""
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
        body = b"\x0a" + uvarint(len(key)) + key + b"\x12" + enc_quantity(x)
        w += tag + uvarint(len(body)) + body


def _map_st(w: bytearray, tag: bytes, m: Any) -> None:
    """map<string, Time>: every value written, a null one as an empty Timestamp (as Go writes
    a zero Time)."""
    if m.__class__ is not dict:
        _not_a_map(m)
    for k in sorted(m):
        key = k.encode()
        body = b"\x0a" + uvarint(len(key)) + key + b"\x12" + enc_time(m[k])
        w += tag + uvarint(len(body)) + body


def _map_sl(w: bytearray, tag: bytes, m: Any) -> None:
    """map<string, named []string> (CertificateSigningRequestSpec.extra): every value written,
    a null one as an empty message."""
    if m.__class__ is not dict:
        _not_a_map(m)
    for k in sorted(m):
        key = k.encode()
        x = m[k]
        body = b"\x0a" + uvarint(len(key)) + key + b"\x12" + _items_list([] if x is None else x)
        w += tag + uvarint(len(body)) + body


_ns.update(
    _bad=_bad,
    _list=_list,
    _uv=uvarint,
    _v32=_varint32,
    _v64=_varint64,
    _b64d=b64_decode,
    _E={},
    _map_ss=_map_ss,
    _map_sb=_map_sb,
    _map_sq=_map_sq,
    _map_st=_map_st,
    _map_sl=_map_sl,
)
_SPECIAL = {
    JsonKind.TIME: ("_time", enc_time),
    JsonKind.MICRO_TIME: ("_micro", enc_micro_time),
    JsonKind.DURATION: ("_dur", _duration),
    JsonKind.INT_OR_STRING: ("_ios", enc_int_or_string),
    JsonKind.QUANTITY: ("_qty", enc_quantity),
    JsonKind.FIELDS_V1: ("_fv1", _fields_v1),
    JsonKind.RAW_EXTENSION: ("_rawx", _raw_extension),
    JsonKind.ITEMS_LIST: ("_items", _items_list),
    JsonKind.JSON_SCHEMA_PROPS: ("_jsp", enc_json_schema_props),
}
for _helper, _fn in _SPECIAL.values():
    _ns[_helper] = _fn
_MAP_HELPERS = {Scalar.STRING: "_map_ss", Scalar.BYTES: "_map_sb", Scalar.MESSAGE: "_map_sq"}


# --- generation ----------------------------------------------------------------------------


def _generate(root: str) -> str:
    """Generate and compile encoders for ``root`` and every message it reaches; return its name."""
    pending = [root]
    order: list[MessagePlan] = []
    while pending:
        full_name = pending.pop()
        if full_name in _generated:
            continue
        plan = plan_for(full_name)
        _generated.add(full_name)
        order.append(plan)
        for f in plan.fields:
            if f.message and plan_for(f.message).form == JsonKind.OBJECT:
                pending.append(f.message)
    source: list[str] = []
    for plan in order:
        source.extend(message_source(plan))
    code = compile("\n".join(source) + "\n", f"<kstore protobuf encoders for {root}>", "exec")
    exec(code, _ns)
    for plan in order:
        if is_flat(plan.full_name):
            name = function_name(plan.full_name)
            _ns[f"C_{name}"] = _leaf_encoder(_ns[name])
    for plan in order:
        _ready[plan.full_name] = _ns[function_name(plan.full_name)]
    return function_name(root)


def _leaf_encoder(encode: Encoder) -> Encoder:
    """Wrap a flat message's encoder with a cache keyed by the object's members.

    The key holds every (name, value) pair and every value's type (so ``True`` and ``1``, or
    ``1`` and ``1.0``, which compare equal, never share an entry); equal keys encode to equal
    bytes. A dict with an unhashable value is not flat after all: it is encoded directly, which
    raises the error it deserves.
    """
    cache: dict[tuple[Any, ...], bytes] = {}

    def leaf(w: bytearray, d: Any) -> None:
        try:
            key = (*d.items(), *map(type, d.values()))
            hit = cache.get(key)
        except (AttributeError, TypeError):
            encode(w, d)
            return
        if hit is not None:
            w += hit
            return
        start = len(w)
        encode(w, d)
        if len(cache) >= LEAF_CACHE_SIZE:
            cache.clear()
        cache[key] = bytes(w[start:])

    return leaf


def tag_table(key: int) -> tuple[bytes, ...]:
    """The ``tag + one byte`` constants of a tag (for lengths or small ints < 128)."""
    tag = uvarint(key)
    return tuple(tag + bytes((i,)) for i in range(128))


def _tag_table(f: FieldPlan) -> str:
    """Name of the table of ``tag + one byte`` constants for ``f`` (created on first use)."""
    name = f"L_{f.key}"
    if name not in _ns:
        _ns[name] = tag_table(f.key)
    return name


#: Fields per "all absent?" test (see :func:`message_source`).
_GROUP = 5


def function_name(full_name: str) -> str:
    """The generated encoder's name: a function of the message name only, so that the compiled
    module (see :mod:`kstore.codec._pb_native_source`) and this one generate the same code."""
    return "e_" + full_name.replace("_", "__").replace(".", "_")


def message_source(plan: MessagePlan, header: str = "") -> list[str]:
    """The encoder of one message.

    Object dicts usually carry a few of a message's fields, and every field looked up costs a
    dict lookup and a test, plus a constant write for an absent non-pointer field. So runs of
    fields whose absence writes a constant (everything but non-pointer or inline objects) are
    grouped: when none of a group's names is in the dict, its constant is written at once.

    ``header`` replaces the ``def`` line: the compiled module declares ``d`` a dict there, and
    its field reads call ``d.get`` directly (compiled, that is a C call; interpreted, a bound
    method kept in a local is cheaper).
    """
    lines = [header or f"def {function_name(plan.full_name)}(w, d):  # {plan.full_name}"]
    if not plan.fields:
        lines.append("    return 0" if header else "    return")
        return lines
    get = "d.get"
    if not header:
        lines.append("    g = d.get")
        get = "g"
    run: list[FieldPlan] = []
    for f in [*plan.fields, None]:
        if f is not None and _absent_bytes(f) is not None and len(run) < _GROUP:
            run.append(f)
            continue
        lines.extend("    " + line for line in _group_source(run, get))
        run = []
        if f is not None and _absent_bytes(f) is not None:
            run.append(f)
        elif f is not None:
            lines.extend("    " + line for line in _field_source(f, get))
    return lines


def _group_source(run: list[FieldPlan], get: str) -> list[str]:
    if len(run) < 2:
        return [line for f in run for line in _field_source(f, get)]
    absent = " and ".join(f"{f.name!r} not in d" for f in run)
    zero = b"".join(_absent_bytes(f) or b"" for f in run)
    lines = [f"if {absent}:", f"    w += {zero!r}" if zero else "    pass", "else:"]
    return lines + ["    " + line for f in run for line in _field_source(f, get)]


def _absent_bytes(f: FieldPlan) -> bytes | None:
    """What the encoder writes when ``f`` is absent, if that is a constant (else None)."""
    if f.inline:
        return None
    if f.repeated or f.is_map or f.nullable:
        return b""
    if f.scalar is not Scalar.MESSAGE:
        return f.tag + b"\x00"
    if f.form == JsonKind.OBJECT:
        return None
    if f.form == JsonKind.ITEMS_LIST:
        return b""
    return f.tag + _SPECIAL[f.form][1](None)


def _field_source(f: FieldPlan, getter: str) -> list[str]:
    tag = f.tag
    t = repr(tag)
    get = "v = d" if f.inline else f"v = {getter}({f.name!r})"
    if f.is_map:
        helper = _MAP_HELPERS[f.map_value]
        if f.map_value is Scalar.MESSAGE and f.form == JsonKind.TIME:
            helper = "_map_st"
        elif f.map_value is Scalar.MESSAGE and f.form == JsonKind.ITEMS_LIST:
            helper = "_map_sl"
        return [get, "if v:", f"    {helper}(w, {t}, v)"]
    if f.repeated:
        return [
            get,
            "if v:",
            "    if v.__class__ is not list:",
            f"        _list({f.name!r}, v)",
        ] + ["    " + line for line in _repeated_source(f, t, getter)]
    if f.scalar is Scalar.MESSAGE:
        return [get, *_message_value_source(f, t)]
    return [get, *_scalar_value_source(f, t, getter)]


def _string_source(f: FieldPlan, t: str, value: str, getter: str) -> list[str]:
    """Write the string ``value`` with its tag and length.

    Compiled (``getter`` is ``d.get``), one C helper copies the tag, the length and the
    str's UTF-8 form into ``w`` (no intermediate bytes); interpreted, one concatenation costs
    the fewest bytecodes.
    """
    if getter == "d.get":
        return [f"_put_str(w, {t}, {value})"]
    table = _tag_table(f)
    return [
        f"x = {value}.encode()",
        "n = len(x)",
        f"w += ({table}[n] + x) if n < 128 else ({t} + _uv(n) + x)",
    ]


def _repeated_source(f: FieldPlan, t: str, getter: str) -> list[str]:
    if f.scalar is Scalar.STRING:
        return ["for x in v:", *("    " + line for line in _string_source(f, t, "x", getter))]
    if f.scalar in (Scalar.INT32, Scalar.INT64):
        conv = "_v32" if f.scalar is Scalar.INT32 else "_v64"
        return ["for x in v:", f"    w += {t} + {conv}(x)"]
    if f.scalar is Scalar.BOOL:
        return [
            "for x in v:",
            f"    w += {t} + (b'\\x01' if x is True else b'\\x00' if x is False"
            f" else _bad({f.name!r}, x, 'a boolean'))",
        ]
    if f.scalar is Scalar.BYTES:
        return ["for x in v:", "    x = _b64d(x)", f"    w += {t} + _uv(len(x)) + x"]
    form = f.form
    if form == JsonKind.OBJECT:
        return ["for x in v:", *("    " + line for line in _nested_source(f, t, "x"))]
    helper = _SPECIAL[form][0]
    return ["for x in v:", f"    w += {t} + {helper}(x)"]


def _nested_source(f: FieldPlan, t: str, value: str) -> list[str]:
    name = function_name(f.message)
    if is_flat(f.message) and not f.inline:
        name = f"C_{name}"
    # The length is not known before the body is written: write a one-byte placeholder, and
    # widen it in the rare case the body is 128 bytes or more.
    placeholder = repr(f.tag + b"\x00")
    return [
        f"w += {placeholder}",
        "s = len(w)",
        f"{name}(w, {value})",
        "n = len(w) - s",
        "if n < 128:",
        "    w[s - 1] = n",
        "else:",
        "    w[s - 1 : s] = _uv(n)",
    ]


def _message_value_source(f: FieldPlan, t: str) -> list[str]:
    if f.form == JsonKind.OBJECT:
        if f.inline:
            return _nested_source(f, t, "v")
        if f.always:
            return ["if v is None:", "    v = _E", *_nested_source(f, t, "v")]
        return ["if v is not None:", *("    " + line for line in _nested_source(f, t, "v"))]
    helper = _SPECIAL[f.form][0]
    if f.always and f.form != JsonKind.ITEMS_LIST:
        return [f"w += {t} + {helper}(v)"]
    return ["if v is not None:", f"    w += {t} + {helper}(v)"]


def _scalar_value_source(f: FieldPlan, t: str, getter: str) -> list[str]:
    tag = f.tag
    zero = {
        Scalar.STRING: tag + b"\x00",
        Scalar.BYTES: tag + b"\x00",
        Scalar.BOOL: tag + b"\x00",
        Scalar.INT32: tag + b"\x00",
        Scalar.INT64: tag + b"\x00",
    }[f.scalar]
    lines = ["if v is None:", f"    {'w += ' + repr(zero) if f.always else 'pass'}"]
    if f.scalar is Scalar.STRING:
        lines += ["else:", *("    " + line for line in _string_source(f, t, "v", getter))]
    elif f.scalar is Scalar.BYTES:
        lines += ["else:", "    x = _b64d(v)", f"    w += {t} + _uv(len(x)) + x"]
    elif f.scalar is Scalar.BOOL:
        true = tag + b"\x01"
        lines += [
            "elif v is True:",
            f"    w += {true!r}",
            "elif v is False:",
            f"    w += {zero!r}",
            "else:",
            f"    _bad({f.name!r}, v, 'a boolean')",
        ]
    else:
        table = _tag_table(f)
        conv = "_v32" if f.scalar is Scalar.INT32 else "_v64"
        lines += [
            "elif v.__class__ is int and 0 <= v < 128:",
            f"    w += {table}[v]",
            "else:",
            f"    w += {t} + {conv}(v)",
        ]
    return lines
