"""Where the unknown fields of a protobuf message are, as JSON paths (for strict decoding).

Kubernetes' own protobuf decoder skips unknown fields silently; kstore also reports them when a
request body is decoded strictly, like unknown JSON members. A wire field has no name, only a
number, so it is reported by number under its parent's JSON path: ``spec.containers[0].#99``
(list items as ``[i]``, map values as ``.key``; fields of inline messages under their parent,
as in JSON). The fast decoders only note *that* something unknown was skipped; this slower
walk runs only then, to say *where*.

Only plain-object messages are inspected: the inside of Time, Quantity, IntOrString and the
other messages with a JSON form of their own, and embedded objects (RawExtension), are not.
"""

from __future__ import annotations

from kstore.codec._pb_plan import WIRE_LEN, JsonKind, MessagePlan, plan_for
from kstore.codec._pb_values import Malformed, read_uvarint, skip_field

__all__ = ["unknown_field_paths"]


def unknown_field_paths(full_name: str, b: bytes, p: int, e: int) -> list[str]:
    """JSON paths of the fields of message ``b[p:e]`` (and its children) that are not in the
    schema, in wire order."""
    found: list[str] = []
    _walk(plan_for(full_name), b, p, e, "", found)
    return found


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _walk(plan: MessagePlan, b: bytes, p: int, e: int, path: str, found: list[str]) -> None:
    index: dict[str, int] = {}
    while p < e:
        t = b[p]
        p += 1
        if t > 0x7F:
            t, p = read_uvarint(b, p, t)
        f = plan.field_by_number(t >> 3)
        if f is None:
            found.append(_join(path, f"#{t >> 3}"))
            p = skip_field(b, p, e, t)
            continue
        if t & 7 != WIRE_LEN or not f.message or plan_for(f.message).form != JsonKind.OBJECT:
            p = skip_field(b, p, e, t)
            continue
        n = b[p]
        p += 1
        if n > 0x7F:
            n, p = read_uvarint(b, p, n)
        q = p + n
        if q > e:
            raise Malformed("a field runs past the end of its message")
        child = plan_for(f.message)
        if f.inline:
            _walk(child, b, p, q, path, found)
        elif f.is_map:
            key, vp, vq = _map_entry(b, p, q)
            if vp >= 0:
                _walk(child, b, vp, vq, _join(_join(path, f.name), key), found)
        elif f.repeated:
            i = index.get(f.name, 0)
            index[f.name] = i + 1
            _walk(child, b, p, q, f"{_join(path, f.name)}[{i}]", found)
        else:
            _walk(child, b, p, q, _join(path, f.name), found)
        p = q
    if p != e:
        raise Malformed("a field runs past the end of its message")


def _map_entry(b: bytes, p: int, q: int) -> tuple[str, int, int]:
    key = ""
    vp = vq = -1
    while p < q:
        t = b[p]
        p += 1
        if t > 0x7F:
            t, p = read_uvarint(b, p, t)
        if t in (0x0A, 0x12):
            n = b[p]
            p += 1
            if n > 0x7F:
                n, p = read_uvarint(b, p, n)
            if t == 0x0A:
                key = b[p : p + n].decode()
            else:
                vp, vq = p, p + n
            p += n
        else:
            p = skip_field(b, p, q, t)
    return key, vp, vq
