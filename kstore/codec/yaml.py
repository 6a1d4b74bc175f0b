"""YAML serializer: safe, iterative, and JSON-shaped, like Kubernetes' YAML-to-JSON path.

Documents are built from the parser's event stream with an explicit stack, so deep YAML cannot
exhaust the interpreter's stack (it crashes recursive loaders). Nesting is bounded by libyaml's
own cap, :data:`MAX_YAML_DEPTH` levels, lower than JSON's 10,000: past it the pure-Python
parser would go on, but in time quadratic in the depth (a 10,000-level flow sequence takes
half a minute), so a deeper YAML body is a BadRequest; JSON carries deeper objects.

Plain scalars resolve as YAML 1.1 (the rules Kubernetes' YAML library follows) except
timestamps, which stay strings so that an unquoted ``creationTimestamp: 2008-01-01T01:01:01Z``
means the same as in JSON. Mapping keys become strings. Only JSON values come out:
NaN/Infinity, integers outside int64, binary and other non-JSON tags are rejected, and alias
expansion is capped (billion-laughs documents are refused).
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from kstore.api.gvk import Object
from kstore.codec.json import join_path
from kstore.codec.serializer import DecodeResult
from kstore.errors import BadRequest

__all__ = ["MAX_YAML_DEPTH", "MEDIA_TYPE_YAML", "YamlSerializer", "load_yaml"]

MEDIA_TYPE_YAML = "application/yaml"

#: How many times aliases may be dereferenced in one document.
MAX_ALIASES = 1000
#: How many values (scalars and containers) one document may expand to, aliases included.
MAX_NODES = 1_000_000

#: libyaml's nesting cap (its parser refuses the level past it).
MAX_YAML_DEPTH = 1000

_TOO_DEEP = (
    f"invalid YAML: the object is nested deeper than the limit of {MAX_YAML_DEPTH} levels "
    "for YAML (JSON allows 10000)"
)

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1

# The C event parser when libyaml is present; it is iterative, like the pure-Python one.
_EventLoader: Any = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader


class _Dumper(yaml.SafeDumper):
    """Emits what Kubernetes' YAML writer emits: sorted keys, block style, and double quotes
    where a string needs quoting (PyYAML would pick single quotes)."""

    def choose_scalar_style(self) -> Any:
        style = super().choose_scalar_style()
        return '"' if style == "'" else style


class _Resolver(yaml.resolver.Resolver):
    """YAML 1.1 implicit tags without the timestamp rule."""


_Resolver.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}

_RESOLVER: Any = _Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_STR = "tag:yaml.org,2002:str"


def _scalar(event: yaml.ScalarEvent) -> Any:
    tag = event.tag
    if tag is None or tag == "!":
        tag = _RESOLVER.resolve(yaml.ScalarNode, event.value, event.implicit)
    node = yaml.ScalarNode(tag, event.value, None, None, event.style)
    if tag == _STR:
        return event.value
    if tag in ("tag:yaml.org,2002:null", "tag:yaml.org,2002:bool"):
        return _CONSTRUCTOR.construct_object(node)
    if tag == "tag:yaml.org,2002:int":
        value = _CONSTRUCTOR.construct_yaml_int(node)
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise BadRequest(f"invalid YAML: the integer {event.value} is outside the int64 range")
        return value
    if tag == "tag:yaml.org,2002:float":
        number: float = _CONSTRUCTOR.construct_yaml_float(node)
        if number != number or number in (float("inf"), float("-inf")):
            raise BadRequest(f"invalid YAML: {event.value} is not a valid JSON number")
        return number
    raise BadRequest(f"invalid YAML: the tag {tag} has no JSON equivalent")


class _Builder:
    """Builds one JSON-shaped document from parser events, tracking duplicates by path."""

    def __init__(self) -> None:
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.aliases = 0
        self.nodes = 0
        self.duplicates: list[str] = []
        # Each frame: [container, path, pending key, anchor name, values inside]
        self.stack: list[list[Any]] = []
        self.result: Any = None
        self.done = False

    def add(self, value: Any, size: int = 1) -> None:
        self.nodes += size
        if self.nodes > MAX_NODES:
            raise BadRequest(f"invalid YAML: the document expands to more than {MAX_NODES} values")
        if not self.stack:
            self.result = value
            self.done = True
            return
        frame = self.stack[-1]
        frame[4] += size
        container, path, key, _, _ = frame
        if isinstance(container, list):
            container.append(value)
            return
        if key is _NO_KEY:
            if isinstance(value, dict | list):
                raise BadRequest("invalid YAML: a mapping key must be a scalar")
            frame[2] = _key_text(value)
            return
        if key in container:
            problem = f'duplicate field "{join_path(path, key)}"'
            if problem not in self.duplicates:
                self.duplicates.append(problem)
        container[key] = value
        frame[2] = _NO_KEY

    def child_path(self) -> str:
        if not self.stack:
            return ""
        container, path, key, _, _ = self.stack[-1]
        if isinstance(container, list):
            return f"{path}[{len(container)}]"
        return join_path(path, str(key))

    def open(self, container: Any, anchor: str | None) -> None:
        if len(self.stack) >= MAX_YAML_DEPTH:
            raise BadRequest(_TOO_DEEP)
        path = self.child_path()
        key = _NO_KEY if isinstance(container, dict) else None
        self.stack.append([container, path, key, anchor, 1])

    def close(self) -> None:
        container, _, _, anchor, size = self.stack.pop()
        if anchor is not None:
            self.anchors[anchor] = (container, size)
        # Sizes were counted when the values went in; only the container itself is new here.
        self.nodes -= size - 1
        self.add(container, size)

    def alias(self, anchor: str) -> None:
        self.aliases += 1
        if self.aliases > MAX_ALIASES:
            raise BadRequest(f"invalid YAML: more than {MAX_ALIASES} aliases")
        if anchor not in self.anchors:
            raise BadRequest(f"invalid YAML: unknown anchor {anchor!r}")
        value, size = self.anchors[anchor]
        # A copy, so that the caller may change one occurrence without changing the others.
        self.add(copy.deepcopy(value) if size > 1 else value, size)


_NO_KEY: Any = object()


def _check_collection_tag(tag: str | None, plain: str) -> None:
    if tag not in (None, "!", plain):
        raise BadRequest(f"invalid YAML: the tag {tag} has no JSON equivalent")


def _key_text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def load_yaml(data: bytes | str) -> DecodeResult:
    """Parse exactly one YAML document into a JSON-shaped value (not necessarily an object)."""
    builder = _Builder()
    try:
        for event in yaml.parse(data, Loader=_EventLoader):
            if isinstance(event, yaml.ScalarEvent):
                value = _scalar(event)
                if event.anchor is not None:
                    builder.anchors[event.anchor] = (value, 1)
                builder.add(value)
            elif isinstance(event, yaml.MappingStartEvent):
                _check_collection_tag(event.tag, "tag:yaml.org,2002:map")
                builder.open({}, event.anchor)
            elif isinstance(event, yaml.SequenceStartEvent):
                _check_collection_tag(event.tag, "tag:yaml.org,2002:seq")
                builder.open([], event.anchor)
            elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                builder.close()
            elif isinstance(event, yaml.AliasEvent):
                builder.alias(event.anchor or "")
            elif isinstance(event, yaml.DocumentStartEvent) and builder.done:
                raise BadRequest("invalid YAML: expected a single document, found several")
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(exc):  # libyaml's own cap
            raise BadRequest(_TOO_DEEP) from None
        raise BadRequest(f"invalid YAML: {_one_line(exc)}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadRequest(f"invalid YAML: {exc}") from None
    return DecodeResult(builder.result, builder.duplicates)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


class YamlSerializer:
    """``application/yaml`` <-> object dicts."""

    @property
    def media_type(self) -> str:
        return MEDIA_TYPE_YAML

    def decode(self, data: bytes) -> Object:
        return self.decode_strict(data).obj

    def decode_strict(self, data: bytes) -> DecodeResult:
        result = load_yaml(data)
        if not isinstance(result.obj, dict):
            raise BadRequest("the body must be a YAML mapping (an object)")
        return result

    def encode(self, obj: Object) -> bytes:
        text: str = yaml.dump(
            obj, Dumper=_Dumper, sort_keys=True, allow_unicode=True, default_flow_style=False
        )
        return text.encode()
