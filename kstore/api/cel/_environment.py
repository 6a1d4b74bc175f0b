"""The CEL compile environment: cel-cpp parses and type-checks, with Kubernetes' libraries
declared so that the checker knows their names and signatures.

Only declarations live here; the implementations are Python (:mod:`._stdlib`,
:mod:`._k8s_library`) and run in :mod:`._interpreter`. ``self`` and ``oldSelf`` are declared
``dyn``: the schema's own field check is done by :mod:`._fields`, because cel-cpp can only
type objects as protobuf messages.

:func:`compile_expression` returns the checked AST or the checker's message, worded as cel-go
words it (``ERROR: <input>:1:6: ...`` with the caret lines), which Kubernetes prefixes with
``compilation failed: ``.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from cel_expr_python import cel
from cel_expr_python.ext.ext_optional import ExtOptional
from google.protobuf import descriptor_pool, struct_pb2

from kstore.api.cel._ast import (
    CheckedAst,
    Expr,
    Ident,
    decode_checked,
    iter_nodes,
)
from kstore.api.cel._decl import Decl, type_key
from kstore.api.cel._macros import expand_macros, has_unparsed_macros
from kstore.api.cel._object_types import ROOT_TYPE, ObjectTypes, object_types

__all__ = [
    "OPAQUE_TYPE_NAMES",
    "CompileError",
    "check_with_variables",
    "compile_expression",
    "compile_with_variables",
]

OPAQUE_TYPE_NAMES: Final = (
    "net.IP",
    "net.CIDR",
    "kubernetes.URL",
    "kubernetes.Quantity",
    "kubernetes.Semver",
    "kubernetes.NamedFormat",
)

_D: Final = cel.Type.DYN
_S: Final = cel.Type.STRING
_B: Final = cel.Type.BOOL
_I: Final = cel.Type.INT
_F: Final = cel.Type.DOUBLE
_LD: Final = cel.Type.List(cel.Type.DYN)
_LS: Final = cel.Type.List(cel.Type.STRING)
_Q: Final = cel.Type.AbstractType("kubernetes.Quantity")
_URL: Final = cel.Type.AbstractType("kubernetes.URL")
_IP: Final = cel.Type.AbstractType("net.IP")
_CIDR: Final = cel.Type.AbstractType("net.CIDR")
_SEMVER: Final = cel.Type.AbstractType("kubernetes.Semver")
_FMT: Final = cel.Type.AbstractType("kubernetes.NamedFormat")
_OPT_LS: Final = _D  # optional(list(string)): cel-cpp cannot name optionals here

# (function, overload id, parameter types (receiver first for members), result, is member)
_DECLS: Final[list[tuple[str, str, list[cel.Type], cel.Type, bool]]] = [
    # strings extension (declared here rather than taken from cel-cpp's ExtStrings, whose
    # indexOf/lastIndexOf would collide with the lists library's overloads of the same names)
    ("charAt", "string_char_at_int", [_S, _I], _S, True),
    ("indexOf", "string_index_of_string", [_S, _S], _I, True),
    ("indexOf", "string_index_of_string_int", [_S, _S, _I], _I, True),
    ("lastIndexOf", "string_last_index_of_string", [_S, _S], _I, True),
    ("lastIndexOf", "string_last_index_of_string_int", [_S, _S, _I], _I, True),
    ("lowerAscii", "string_lower_ascii", [_S], _S, True),
    ("upperAscii", "string_upper_ascii", [_S], _S, True),
    ("replace", "string_replace_string_string", [_S, _S, _S], _S, True),
    ("replace", "string_replace_string_string_int", [_S, _S, _S, _I], _S, True),
    ("split", "string_split_string", [_S, _S], _LS, True),
    ("split", "string_split_string_int", [_S, _S, _I], _LS, True),
    ("substring", "string_substring_int", [_S, _I], _S, True),
    ("substring", "string_substring_int_int", [_S, _I, _I], _S, True),
    ("trim", "string_trim", [_S], _S, True),
    ("join", "list_join", [_LS], _S, True),
    ("join", "list_join_string", [_LS, _S], _S, True),
    ("strings.quote", "strings_quote", [_S], _S, False),
    # Kubernetes' JSONPatch library (mutating admission policies)
    ("jsonpatch.escapeKey", "string_jsonpatch_escape_key", [_S], _S, False),
    ("format", "string_format", [_S, _LD], _S, True),
    # sets extension
    ("sets.contains", "list_sets_contains_list", [_LD, _LD], _B, False),
    ("sets.equivalent", "list_sets_equivalent_list", [_LD, _LD], _B, False),
    ("sets.intersects", "list_sets_intersects_list", [_LD, _LD], _B, False),
    # lists
    ("isSorted", "list_is_sorted", [_LD], _B, True),
    ("sum", "list_sum", [_LD], _D, True),
    ("min", "list_min", [_LD], _D, True),
    ("max", "list_max", [_LD], _D, True),
    ("slice", "list_slice", [_LD, _I, _I], _LD, True),
    ("flatten", "list_flatten", [_LD], _LD, True),
    ("flatten", "list_flatten_int", [_LD, _I], _LD, True),
    ("distinct", "list_distinct", [_LD], _LD, True),
    ("sort", "list_sort", [_LD], _LD, True),
    ("indexOf", "list_index_of", [_LD, _D], _I, True),
    ("lastIndexOf", "list_last_index_of", [_LD, _D], _I, True),
    ("reverse", "list_reverse", [_LD], _LD, True),
    ("lists.range", "lists_range", [_I], cel.Type.List(_I), False),
    # regex
    ("find", "string_find", [_S, _S], _S, True),
    ("findAll", "string_find_all", [_S, _S], _LS, True),
    ("findAll", "string_find_all_n", [_S, _S, _I], _LS, True),
    # URLs
    ("url", "string_to_url", [_S], _URL, False),
    ("isURL", "is_url_string", [_S], _B, False),
    ("getScheme", "url_get_scheme", [_URL], _S, True),
    ("getHost", "url_get_host", [_URL], _S, True),
    ("getHostname", "url_get_hostname", [_URL], _S, True),
    ("getPort", "url_get_port", [_URL], _S, True),
    ("getEscapedPath", "url_get_escaped_path", [_URL], _S, True),
    ("getQuery", "url_get_query", [_URL], cel.Type.Map(_S, _LS), True),
    # quantity
    ("quantity", "string_to_quantity", [_S], _Q, False),
    ("isQuantity", "is_quantity_string", [_S], _B, False),
    ("sign", "quantity_sign", [_Q], _I, True),
    ("isGreaterThan", "quantity_is_greater_than", [_Q, _Q], _B, True),
    ("isLessThan", "quantity_is_less_than", [_Q, _Q], _B, True),
    ("compareTo", "quantity_compare_to", [_Q, _Q], _I, True),
    ("add", "quantity_add", [_Q, _Q], _Q, True),
    ("add", "quantity_add_int", [_Q, _I], _Q, True),
    ("sub", "quantity_sub", [_Q, _Q], _Q, True),
    ("sub", "quantity_sub_int", [_Q, _I], _Q, True),
    ("asInteger", "quantity_get_integer", [_Q], _I, True),
    ("isInteger", "quantity_is_integer", [_Q], _B, True),
    ("asApproximateFloat", "quantity_get_float", [_Q], _F, True),
    # IP and CIDR
    ("ip", "string_to_ip", [_S], _IP, False),
    ("isIP", "is_ip", [_S], _B, False),
    ("ip.isCanonical", "ip_is_canonical", [_S], _B, False),
    ("family", "ip_family", [_IP], _I, True),
    ("isUnspecified", "ip_is_unspecified", [_IP], _B, True),
    ("isLoopback", "ip_is_loopback", [_IP], _B, True),
    ("isLinkLocalMulticast", "ip_is_link_local_multicast", [_IP], _B, True),
    ("isLinkLocalUnicast", "ip_is_link_local_unicast", [_IP], _B, True),
    ("isGlobalUnicast", "ip_is_global_unicast", [_IP], _B, True),
    ("cidr", "string_to_cidr", [_S], _CIDR, False),
    ("isCIDR", "is_cidr", [_S], _B, False),
    ("containsIP", "cidr_contains_ip_ip", [_CIDR, _IP], _B, True),
    ("containsIP", "cidr_contains_ip_string", [_CIDR, _S], _B, True),
    ("containsCIDR", "cidr_contains_cidr", [_CIDR, _CIDR], _B, True),
    ("containsCIDR", "cidr_contains_cidr_string", [_CIDR, _S], _B, True),
    ("ip", "cidr_ip", [_CIDR], _IP, True),
    ("masked", "cidr_masked", [_CIDR], _CIDR, True),
    ("prefixLength", "cidr_prefix_length", [_CIDR], _I, True),
    # semver
    ("semver", "string_to_semver", [_S], _SEMVER, False),
    ("semver", "string_bool_to_semver", [_S, _B], _SEMVER, False),
    ("isSemver", "is_semver", [_S], _B, False),
    ("isSemver", "is_semver_normalize", [_S, _B], _B, False),
    ("major", "semver_major", [_SEMVER], _I, True),
    ("minor", "semver_minor", [_SEMVER], _I, True),
    ("patch", "semver_patch", [_SEMVER], _I, True),
    ("isGreaterThan", "semver_is_greater_than", [_SEMVER, _SEMVER], _B, True),
    ("isLessThan", "semver_is_less_than", [_SEMVER, _SEMVER], _B, True),
    ("compareTo", "semver_compare_to", [_SEMVER, _SEMVER], _I, True),
    # format
    ("format.named", "format_named", [_S], _D, False),
    ("validate", "format_validate", [_FMT, _S], _OPT_LS, True),
]
# Kubernetes enables cel-go's CrossTypeNumericComparisons: int, uint and double order against
# each other. cel-cpp's standard ordering functions are replaced by this full overload set.
_ORDERING: Final = {
    "_<_": "less",
    "_<=_": "less_equals",
    "_>_": "greater",
    "_>=_": "greater_equals",
}
_ORDERED: Final = [
    ("int64", cel.Type.INT),
    ("uint64", cel.Type.UINT),
    ("double", cel.Type.DOUBLE),
    ("string", cel.Type.STRING),
    ("bytes", cel.Type.BYTES),
    ("bool", cel.Type.BOOL),
    ("timestamp", cel.Type.TIMESTAMP),
    ("duration", cel.Type.DURATION),
]
_NUMERIC: Final = _ORDERED[:3]


def _ordering_decls() -> list[cel.FunctionDecl]:
    decls = []
    for function, stem in _ORDERING.items():
        overloads = [cel.Overload(f"{stem}_{name}", _B, [t, t]) for name, t in _ORDERED]
        for left, lt in _NUMERIC:
            for right, rt in _NUMERIC:
                if left != right:
                    overloads.append(cel.Overload(f"{stem}_{left}_{right}", _B, [lt, rt]))
        decls.append(cel.FunctionDecl(function, overloads))
    return decls


_STDLIB_EXCLUSIONS: Final = "stdlib:\n  exclude_functions:\n" + "".join(
    f'    - name: "{name}"\n' for name in _ORDERING
)

_FORMAT_NAMES: Final = (
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
)


_FUNCTION_NAMES: Final = frozenset(
    [name for name, *_ in _DECLS]
    + [f"format.{name}" for name in _FORMAT_NAMES]
    + ["optional.of", "optional.none", "optional.ofNonZeroValue"]
)


class CompileError(Exception):
    """The checker's message for a rule, in cel-go's words (``ERROR: <input>:1:6: ...``)."""


_SCALAR_TYPES: Final = {
    "bool": cel.Type.BOOL,
    "int": cel.Type.INT,
    "double": cel.Type.DOUBLE,
    "string": cel.Type.STRING,
    "bytes": cel.Type.BYTES,
    "google.protobuf.Duration": cel.Type.DURATION,
    "google.protobuf.Timestamp": cel.Type.TIMESTAMP,
}


def _type_of(key: str) -> cel.Type:
    """``list(int)``, ``map(string, double)``, ``string``... as a cel-cpp type (else dyn)."""
    if key.startswith("list(") and key.endswith(")"):
        return cel.Type.List(_type_of(key[5:-1]))
    if key.startswith("map(string, ") and key.endswith(")"):
        return cel.Type.Map(cel.Type.STRING, _type_of(key[len("map(string, ") : -1]))
    return _SCALAR_TYPES.get(key, _D)


def _function_decls() -> list[cel.FunctionDecl]:
    groups: dict[str, list[cel.Overload]] = {}
    for name, oid, params, result, member in _DECLS:
        groups.setdefault(name, []).append(cel.Overload(oid, result, params, is_member=member))
    for fmt in _FORMAT_NAMES:
        groups[f"format.{fmt}"] = [cel.Overload(f"format_{fmt}", _FMT, [])]
    decls = [cel.FunctionDecl(name, overloads) for name, overloads in groups.items()]
    decls.extend(_ordering_decls())
    return decls


@functools.lru_cache(maxsize=64)
def _env(optional_old_self: bool, self_type: str = "dyn", objects: bytes = b"") -> cel.Env:
    """The environment with ``self`` of type ``self_type``: a :func:`_type_of` key, or, with
    ``objects`` (an :class:`ObjectTypes` file), ``selfType0``, ``list(selfType0)`` or
    ``map(string, selfType0)``."""
    decls = _function_decls()
    # ``self`` is typed when the schema gives it a CEL type cel-cpp can name (scalars, lists
    # and maps of them); objects stay ``dyn`` (their fields are checked by _fields).
    # cel-cpp cannot declare an optional variable here; ``dyn`` accepts the optional API.
    pool = None
    if objects:
        pool = ObjectTypes(objects).pool()
        message = cel.Type(ROOT_TYPE)
        typed = {
            "object": message,
            "list": cel.Type.List(message),
            "map": cel.Type.Map(cel.Type.STRING, message),
        }[self_type]
    else:
        typed = _type_of(self_type)
    old = _D if optional_old_self else typed
    # The libraries' type names are values (``type(ip('1.2.3.4')) == net.IP``).
    type_names = dict.fromkeys(OPAQUE_TYPE_NAMES, _D)
    return cel.NewEnv(
        descriptor_pool=pool,
        config=cel.NewEnvConfigFromYaml(_STDLIB_EXCLUSIONS),
        variables={"self": typed, "oldSelf": old, **type_names},
        extensions=[ExtOptional()],
        functions=decls,
    )


#: Kubernetes' authorizer library (``k8s.io/apiserver/pkg/cel/library/authz.go``): member
#: functions of the authorizer and its checks, declared on ``dyn`` receivers.
_AUTHZ_MEMBERS: Final = (
    ("path", 1),
    ("group", 1),
    ("serviceAccount", 2),
    ("resource", 1),
    ("subresource", 1),
    ("namespace", 1),
    ("name", 1),
    ("check", 1),
    ("allowed", 0),
    ("reason", 0),
    ("errored", 0),
    ("error", 0),
    ("fieldSelector", 1),
    ("labelSelector", 1),
)


@functools.lru_cache(maxsize=256)
def _variables_env(names: frozenset[str], authorizer: bool, types: bytes = b"") -> cel.Env:
    """``names`` declared ``dyn``; ``types``: a serialized descriptor file whose messages
    (fields of well-known types only) struct literals may name."""
    decls = _function_decls()
    if authorizer:
        for name, arity in _AUTHZ_MEMBERS:
            params = [_D] + [_S] * arity
            decls.append(
                cel.FunctionDecl(name, [cel.Overload(f"authz_{name}", _D, params, is_member=True)])
            )
    type_names = dict.fromkeys(OPAQUE_TYPE_NAMES, _D)
    pool = None
    if types:
        pool = descriptor_pool.DescriptorPool()
        pool.AddSerializedFile(struct_pb2.DESCRIPTOR.serialized_pb)
        pool.AddSerializedFile(types)
    return cel.NewEnv(
        descriptor_pool=pool,
        config=cel.NewEnvConfigFromYaml(_STDLIB_EXCLUSIONS),
        variables={**dict.fromkeys(names, _D), **type_names},
        extensions=[ExtOptional()],
        functions=decls,
    )


def check_with_variables(source: str, names: frozenset[str], *, authorizer: bool) -> None:
    """Parse and check ``source`` with ``names`` declared as ``dyn`` variables (and, with
    ``authorizer``, the authorizer library's functions). Raises :class:`CompileError`."""
    env = _variables_env(names, authorizer)
    try:
        env.compile(source)
    except RuntimeError as exc:
        _expand_unchecked(env, source, _clean(str(exc)))


def compile_with_variables(
    source: str, names: frozenset[str], *, authorizer: bool, types: bytes = b""
) -> tuple[CheckedAst, str]:
    """As :func:`check_with_variables`, returning the checked AST and its result type's name
    (``DYN`` for the two-variable macros cel-cpp cannot check). ``types``: a serialized
    descriptor file of the messages struct literals may name."""
    env = _variables_env(names, authorizer, types)
    try:
        compiled = env.compile(source)
    except RuntimeError as exc:
        return _expand_unchecked(env, source, _clean(str(exc))), "DYN"
    return decode_checked(compiled.serialize()), compiled.return_type().name()


def compile_expression(
    source: str, *, optional_old_self: bool = False, self_decl: Decl | None = None
) -> tuple[CheckedAst, str]:
    """Parse and check ``source``; returns the AST and its result type's name.

    ``self_decl`` declares ``self`` (``dyn`` without it). Raises :class:`CompileError` with
    cel-go's wording when the source does not compile.
    """
    env = _self_env(optional_old_self, self_decl)
    try:
        compiled = env.compile(source)
    except RuntimeError as exc:
        message = _clean(str(exc))
        if _UNUSABLE_TYPES in message:
            # The checker could not load the object's messages (protobuf refused a name):
            # check ``self`` as the untyped form, as before objects were typed.
            return compile_expression_untyped(source, optional_old_self, self_decl)
        return _expand_unchecked(env, source, message), "DYN"
    return decode_checked(compiled.serialize()), compiled.return_type().name()


def _expand_unchecked(env: cel.Env, source: str, message: str) -> CheckedAst:
    """Two-variable comprehensions and sortBy: cel-cpp parses them but cannot check them, so
    they are expanded unchecked; any other failure raises :class:`CompileError`."""
    try:
        parsed = decode_checked(env.compile(source, disable_check=True).serialize())
    except RuntimeError:
        raise CompileError(message) from None
    if not has_unparsed_macros(parsed):
        raise CompileError(message) from None
    qualified = {n for n in _FUNCTION_NAMES if "." in n}
    expanded = expand_macros(parsed, qualified)
    names = {e.name for e in _idents(expanded.expr)}
    # Stand-in references so that a transition rule is still recognised as one.
    for i, name in enumerate(sorted(names & {"self", "oldSelf"})):
        expanded.references[-(10**9) - i] = name
    return expanded


_UNUSABLE_TYPES: Final = f"type '{ROOT_TYPE}' cannot be the operand of a select operation"
_UNDEFINED_FIELD: Final = re.compile(r"(undefined field '[^']*') not found in struct '[^']*'")


def compile_expression_untyped(
    source: str, optional_old_self: bool, self_decl: Decl | None
) -> tuple[CheckedAst, str]:
    env = _env(optional_old_self, type_key(self_decl))
    try:
        compiled = env.compile(source)
    except RuntimeError as exc:
        raise CompileError(_clean(str(exc))) from None
    return decode_checked(compiled.serialize()), compiled.return_type().name()


def _self_env(optional_old_self: bool, decl: Decl | None) -> cel.Env:
    if decl is not None:
        shape = decl.kind
        held = decl if shape == "object" else decl.elem if shape in ("list", "map") else None
        if held is not None and held.kind == "object":
            return _env(optional_old_self, shape, object_types(held).serialized)
    return _env(optional_old_self, type_key(decl))


def _idents(e: Expr) -> list[Ident]:
    return [node for node in iter_nodes(e) if isinstance(node, Ident)]


def _clean(message: str) -> str:
    # cel-cpp wraps cel-go's text in an absl status: "INVALID_ARGUMENT: <text> [INVALID_ARGUMENT]".
    head, sep, rest = message.partition(": ")
    if sep and head.isupper():
        message = rest
    if message.endswith("]") and " [" in message:
        message = message[: message.rindex(" [")]
    # cel-go names no struct in this message.
    return _UNDEFINED_FIELD.sub(r"\1", message)


def parse_expression(source: str) -> CheckedAst:
    """``source`` parsed, not checked (no references, no types). Raises :class:`CompileError`
    with the parser's message."""
    env = _variables_env(frozenset(), False)
    try:
        return decode_checked(env.compile(source, disable_check=True).serialize())
    except RuntimeError as exc:
        raise CompileError(_clean(str(exc))) from None
