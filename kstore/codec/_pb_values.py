"""Wire primitives and the messages with a JSON form of their own, as Kubernetes writes them.

Every ``enc_*`` function returns the *length-prefixed* body of one message (ready to follow a
tag), every ``dec_*`` function reads a message body ``b[p:q]`` and returns its JSON value.
Semantics follow Kubernetes' Go types:

- ``metav1.Time``: RFC 3339 in UTC with whole seconds; the wire carries seconds and nanos=0
  (Kubernetes drops sub-second precision in both directions); the zero time is JSON null and
  an empty message on the wire.
- ``metav1.MicroTime``: RFC 3339 with exactly 6 fractional digits; nanos truncated to
  microseconds.
- ``metav1.Duration``: Go's ``time.Duration`` string (``1h2m3.5s``), nanoseconds on the wire.
- ``intstr.IntOrString``: a JSON int or string; on the wire type (0 int, 1 string), intVal and
  strVal, all three always written.
- ``resource.Quantity``: its string, written as is (canonicalisation is not the codec's job).
- ``[]byte``: base64 (standard alphabet, padded) in JSON.

Conversions of times are cached (bounded): the same timestamps recur across an object and
across the objects of one list.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from kstore.codec.json import dumps as json_dumps
from kstore.errors import BadRequest

__all__ = [
    "Malformed",
    "b64_decode",
    "b64_encode",
    "dec_duration",
    "dec_int_or_string",
    "dec_micro_time",
    "dec_quantity",
    "dec_time",
    "enc_duration",
    "enc_int_or_string",
    "enc_micro_time",
    "enc_quantity",
    "enc_time",
    "format_duration",
    "length_prefixed",
    "parse_duration",
    "read_int32",
    "read_int64",
    "read_uvarint",
    "uvarint",
]

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_CACHE_LIMIT = 4096


class Malformed(ValueError):
    """The wire data is not a valid encoding of the expected message."""


# --- varints ---------------------------------------------------------------------------------


def uvarint(value: int) -> bytes:
    """Base-128 varint of an unsigned 64-bit value."""
    if value < 0x80:
        return bytes((value,))
    if value < 0x4000:
        return bytes(((value & 0x7F) | 0x80, value >> 7))
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def length_prefixed(body: bytes) -> bytes:
    n = len(body)
    return (bytes((n,)) if n < 0x80 else uvarint(n)) + body


def read_uvarint(b: bytes, p: int, first: int) -> tuple[int, int]:
    """Continue a varint whose first byte ``first`` (> 127) was read at ``p - 1``."""
    value = first & 0x7F
    shift = 7
    while True:
        c = b[p]
        p += 1
        value |= (c & 0x7F) << shift
        if c < 0x80:
            break
        shift += 7
        if shift >= 70:
            raise Malformed("varint overflows 64 bits")
    if value >> 64:
        raise Malformed("varint overflows 64 bits")
    return value, p


def read_int64(b: bytes, p: int, first: int) -> tuple[int, int]:
    value, p = read_uvarint(b, p, first)
    return (value - (1 << 64) if value >> 63 else value), p


def read_int32(b: bytes, p: int, first: int) -> tuple[int, int]:
    # Go's generated code keeps the low 32 bits of the varint, as a signed int32.
    value, p = read_uvarint(b, p, first)
    value &= 0xFFFFFFFF
    return (value - (1 << 32) if value >> 31 else value), p


def varint_int(value: Any, bits: int) -> bytes:
    """The varint of a JSON integer for an int32/int64 field (negatives use 10 bytes)."""
    if value.__class__ is int and 0 <= value < 0x4000:
        return bytes((value,)) if value < 0x80 else bytes(((value & 0x7F) | 0x80, value >> 7))
    if type(value) is not int:
        raise BadRequest(f"expected an integer, got {_json_type(value)}")
    low, high = (_INT32_MIN, _INT32_MAX) if bits == 32 else (_INT64_MIN, _INT64_MAX)
    if not low <= value <= high:
        raise BadRequest(f"the integer {value} does not fit in int{bits}")
    return uvarint(value if value >= 0 else value + (1 << 64))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _timestamp_body(seconds: int, nanos: int) -> bytes:
    # Timestamp{seconds=1, nanos=2}, both always written (non-pointer Go fields).
    s = seconds if seconds >= 0 else seconds + (1 << 64)
    body = b"\x08" + uvarint(s) + b"\x10" + uvarint(nanos)
    return length_prefixed(body)


def _read_timestamp(b: bytes, p: int, q: int) -> tuple[int, int]:
    seconds = nanos = 0
    while p < q:
        t = b[p]
        p += 1
        if t == 0x08 or t == 0x10:
            v = b[p]
            p += 1
            if v > 0x7F:
                v, p = read_int64(b, p, v) if t == 0x08 else read_int32(b, p, v)
            if t == 0x08:
                seconds = v
            else:
                nanos = v
        else:
            p = skip_field(b, p, q, t)
    if p != q:
        raise Malformed("truncated Timestamp")
    return seconds, nanos


# --- Time and MicroTime --------------------------------------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The zero Go time (0001-01-01T00:00:00Z) in Unix seconds: Kubernetes writes it as null.
_ZERO_TIME_SECONDS = -62135596800
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})\Z"
)

_time_text: dict[bytes, str | None] = {}
_time_wire: dict[str, bytes] = {}
_micro_text: dict[bytes, str | None] = {}
_micro_wire: dict[str, bytes] = {}


def _parse_rfc3339(text: Any, what: str) -> tuple[int, int]:
    """Seconds since the epoch and nanoseconds of an RFC 3339 timestamp (any UTC offset)."""
    if type(text) is not str:
        raise BadRequest(f"{what}: expected an RFC 3339 string, got {_json_type(text)}")
    m = _RFC3339.match(text)
    if m is None:
        raise BadRequest(f'{what}: cannot parse "{text}" as RFC 3339')
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    frac, zone = m.group(7), m.group(8)
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError as exc:
        raise BadRequest(f'{what}: cannot parse "{text}" as RFC 3339: {exc}') from None
    seconds = int((moment - _EPOCH).total_seconds())
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        offset = int(zone[1:3]) * 3600 + int(zone[4:6]) * 60
        if int(zone[1:3]) > 23 or int(zone[4:6]) > 59:
            raise BadRequest(f'{what}: cannot parse "{text}" as RFC 3339: bad time zone')
        seconds -= sign * offset
    nanos = int((frac or "0")[:9].ljust(9, "0"))
    return seconds, nanos


def _format(seconds: int, micros: int | None) -> str | None:
    if seconds == _ZERO_TIME_SECONDS and not micros:
        return None
    try:
        moment = _EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        raise BadRequest(f"time {seconds}s since the epoch is outside years 1-9999") from None
    text = (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    )
    if micros is None:
        return text + "Z"
    return f"{text}.{micros:06d}Z"


def enc_time(value: Any) -> bytes:
    """A JSON Time (string or null) as a length-prefixed Timestamp body."""
    cached = _time_wire.get(value) if type(value) is str else None
    if cached is not None:
        return cached
    if value is None:
        return b"\x00"
    seconds, _ = _parse_rfc3339(value, "Time")
    out = b"\x00" if seconds == _ZERO_TIME_SECONDS else _timestamp_body(seconds, 0)
    if len(_time_wire) >= _CACHE_LIMIT:
        _time_wire.clear()
    _time_wire[value] = out
    return out


def dec_time(b: bytes, p: int, q: int) -> str | None:
    """A Timestamp body as Kubernetes' Time JSON (nanos ignored, as Kubernetes does)."""
    if p == q:
        return None
    raw = b[p:q]
    try:
        return _time_text[raw]
    except KeyError:
        pass
    seconds, _ = _read_timestamp(b, p, q)
    text = _format(seconds, None)
    if len(_time_text) >= _CACHE_LIMIT:
        _time_text.clear()
    _time_text[raw] = text
    return text


def enc_micro_time(value: Any) -> bytes:
    cached = _micro_wire.get(value) if type(value) is str else None
    if cached is not None:
        return cached
    if value is None:
        return b"\x00"
    seconds, nanos = _parse_rfc3339(value, "MicroTime")
    nanos -= nanos % 1000
    if seconds == _ZERO_TIME_SECONDS and nanos == 0:
        out = b"\x00"
    else:
        out = _timestamp_body(seconds, nanos)
    if len(_micro_wire) >= _CACHE_LIMIT:
        _micro_wire.clear()
    _micro_wire[value] = out
    return out


def dec_micro_time(b: bytes, p: int, q: int) -> str | None:
    if p == q:
        return None
    raw = b[p:q]
    try:
        return _micro_text[raw]
    except KeyError:
        pass
    seconds, nanos = _read_timestamp(b, p, q)
    if not 0 <= nanos < 1_000_000_000:
        raise Malformed(f"MicroTime nanos {nanos} out of range")
    text = _format(seconds, nanos // 1000)
    if len(_micro_text) >= _CACHE_LIMIT:
        _micro_text.clear()
    _micro_text[raw] = text
    return text


# --- Duration ------------------------------------------------------------------------------

_UNITS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,
    "\u03bcs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_DURATION_PART = re.compile(r"(\d*)(?:\.(\d*))?([a-z\u00b5\u03bc]+)")


def format_duration(nanos: int) -> str:
    """Go's ``time.Duration.String``."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    u = -nanos if nanos < 0 else nanos
    if u < 1_000_000_000:
        if u < 1_000:
            return f"{sign}{u}ns"
        unit, scale = ("\u00b5s", 1_000) if u < 1_000_000 else ("ms", 1_000_000)
        return f"{sign}{_fraction(u, scale)}{unit}"
    seconds_part = _fraction(u % 60_000_000_000, 1_000_000_000)
    minutes = u // 60_000_000_000
    if minutes == 0:
        return f"{sign}{seconds_part}s"
    hours, minutes = divmod(minutes, 60)
    if hours == 0:
        return f"{sign}{minutes}m{seconds_part}s"
    return f"{sign}{hours}h{minutes}m{seconds_part}s"


def _fraction(value: int, scale: int) -> str:
    whole, rest = divmod(value, scale)
    if not rest:
        return str(whole)
    digits = len(str(scale)) - 1
    return f"{whole}.{str(rest).rjust(digits, '0').rstrip('0')}"


def parse_duration(text: Any) -> int:
    """Go's ``time.ParseDuration``, in nanoseconds."""
    if type(text) is not str:
        raise BadRequest(f"Duration: expected a string, got {_json_type(text)}")
    s = text
    sign = 1
    if s[:1] in ("-", "+"):
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise BadRequest(f'time: invalid duration "{text}"')
    total = 0
    pos = 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if m is None or (not m.group(1) and not m.group(2)) or m.group(3) not in _UNITS:
            raise BadRequest(f'time: invalid duration "{text}"')
        scale = _UNITS[m.group(3)]
        total += int(m.group(1) or "0") * scale
        frac = m.group(2) or ""
        if frac:
            total += int(frac) * scale // 10 ** len(frac)
        pos = m.end()
    total *= sign
    if not _INT64_MIN <= total <= _INT64_MAX:
        raise BadRequest(f'time: invalid duration "{text}"')
    return total


def enc_duration(value: Any) -> bytes:
    nanos = parse_duration(value)
    return length_prefixed(b"\x08" + uvarint(nanos if nanos >= 0 else nanos + (1 << 64)))


def dec_duration(b: bytes, p: int, q: int) -> str:
    nanos = 0
    while p < q:
        t = b[p]
        p += 1
        if t == 0x08:
            v = b[p]
            p += 1
            if v > 0x7F:
                v, p = read_int64(b, p, v)
            nanos = v
        else:
            p = skip_field(b, p, q, t)
    if p != q:
        raise Malformed("truncated Duration")
    return format_duration(nanos)


# --- IntOrString and Quantity --------------------------------------------------------------

_INT_OR_STRING_ZERO = length_prefixed(b"\x08\x00\x10\x00\x1a\x00")


def enc_int_or_string(value: Any) -> bytes:
    if type(value) is str:
        s = value.encode()
        return length_prefixed(b"\x08\x01\x10\x00\x1a" + uvarint(len(s)) + s)
    if type(value) is int:
        if not _INT32_MIN <= value <= _INT32_MAX:
            raise BadRequest(f"IntOrString: the integer {value} does not fit in int32")
        if value == 0:
            return _INT_OR_STRING_ZERO
        v = value if value >= 0 else value + (1 << 64)
        return length_prefixed(b"\x08\x00\x10" + uvarint(v) + b"\x1a\x00")
    if value is None:
        return _INT_OR_STRING_ZERO
    raise BadRequest(f"IntOrString: expected an integer or a string, got {_json_type(value)}")


def dec_int_or_string(b: bytes, p: int, q: int) -> int | str:
    kind = 0
    int_val = 0
    str_val = ""
    while p < q:
        t = b[p]
        p += 1
        if t == 0x08 or t == 0x10:
            v = b[p]
            p += 1
            if v > 0x7F:
                v, p = read_int64(b, p, v) if t == 0x08 else read_int32(b, p, v)
            if t == 0x08:
                kind = v
            else:
                int_val = v
        elif t == 0x1A:
            n = b[p]
            p += 1
            if n > 0x7F:
                n, p = read_uvarint(b, p, n)
            end = p + n
            if end > q:
                raise Malformed("truncated IntOrString")
            str_val = b[p:end].decode()
            p = end
        else:
            p = skip_field(b, p, q, t)
    if p != q:
        raise Malformed("truncated IntOrString")
    return str_val if kind == 1 else int_val


_QUANTITY_ZERO = length_prefixed(b"\x0a\x010")


def enc_quantity(value: Any) -> bytes:
    if type(value) is not str:
        if value is None:
            return _QUANTITY_ZERO
        # Kubernetes accepts JSON numbers for quantities and prints them as strings.
        if type(value) is int or type(value) is float:
            value = json_dumps(value).decode()
        else:
            raise BadRequest(f"Quantity: expected a string, got {_json_type(value)}")
    s: bytes = value.encode()
    n = len(s)
    if n < 126:  # the body (2 + n bytes) still has a one-byte length
        return bytes((n + 2, 0x0A, n)) + s
    return length_prefixed(b"\x0a" + uvarint(n) + s)


def dec_quantity(b: bytes, p: int, q: int) -> str:
    if q - p >= 2 and b[p] == 0x0A and b[p + 1] == q - p - 2:
        return b[p + 2 : q].decode()
    text = "0"
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
                raise Malformed("truncated Quantity")
            text = b[p:end].decode()
            p = end
        else:
            p = skip_field(b, p, q, t)
    if p != q:
        raise Malformed("truncated Quantity")
    return text


# --- bytes ---------------------------------------------------------------------------------


def b64_encode(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def b64_decode(value: Any) -> bytes:
    if type(value) is not str:
        raise BadRequest(f"expected a base64 string, got {_json_type(value)}")
    try:
        # Go's decoder ignores line breaks and nothing else.
        return base64.b64decode(value.replace("\n", "").replace("\r", ""), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadRequest(f"illegal base64 data: {exc}") from None


# --- skipping ------------------------------------------------------------------------------


def skip_field(b: bytes, p: int, e: int, key: int) -> int:
    """Skip the value of a field whose tag (``key``, possibly multi-byte) was just read."""
    wire = key & 7
    if key >> 3 == 0:
        raise Malformed(f"illegal tag 0 (wire type {wire})")
    if wire == 0:
        while b[p] & 0x80:
            p += 1
        return p + 1
    if wire == 2:
        n = b[p]
        p += 1
        if n > 0x7F:
            n, p = read_uvarint(b, p, n)
        if p + n > e:
            raise Malformed("a length-delimited field runs past its message")
        return p + n
    if wire == 1:
        return p + 8
    if wire == 5:
        return p + 4
    if wire == 3:  # a group: skip fields up to the matching end-group tag
        number = key >> 3
        while True:
            t = b[p]
            p += 1
            if t > 0x7F:
                t, p = read_uvarint(b, p, t)
            if t & 7 == 4:
                if t >> 3 != number:
                    raise Malformed("unmatched end-group tag")
                return p
            p = skip_field(b, p, e, t)
    raise Malformed(f"invalid wire type {wire}")
