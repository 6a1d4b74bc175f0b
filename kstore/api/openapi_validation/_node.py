"""One compiled schema node, validating a value as kube-openapi's ``SchemaValidator`` does.

A node is built once per schema node (:func:`compile_node`) with everything that does not depend
on the value precomputed: the type list, the format that survives apiextensions' format
stripping, the compiled pattern, the numeric bounds converted to the forms Go compares with.

``Node.run(value, path, errors) -> match_count`` appends kube-openapi errors to ``errors`` in
kube-openapi's order and returns kube-openapi's ``MatchCount`` for the value, which decides
whose errors an ``anyOf``/``oneOf`` failure reports (the branch with the most checks passed;
the first such branch on a tie). The order for one value is: type, then ``anyOf`` (summary,
then the best branch's errors), ``oneOf`` (same), ``allOf`` (each branch's errors, then the
summary), ``not``; then string checks (only the first failing of ``maxLength``, ``minLength``,
``pattern``), format, numeric checks (value range for the format, ``multipleOf``, ``minimum``,
``maximum``), array checks (items, then ``minItems``, ``maxItems``, ``uniqueItems``), ``enum``,
and object checks (``minProperties``, ``maxProperties``, additional properties, properties,
``required`` in the schema's order). Every check runs even after an earlier one failed, so one
bad value can yield several errors (a type error and an enum error, say).

A ``null`` value gets only the type check (allowed when ``nullable`` or untyped) and the enum
check, which ``null`` always fails: no other keyword, ``anyOf`` included, looks at it.

``Node.run_update(value, old, path, errors)`` is the same walk for an update, with Kubernetes'
ratcheting (apiextensions' ``RatchetingSchemaValidator``): the old value is carried along where
it correlates (an object's property or key; a ``map`` list's item with the same key values; an
untyped list's item at the same index; ``set`` and ``atomic`` lists do not correlate by item),
and every error of a value equal to its correlated old value is dropped, those below it
included. A value with no correlated old value is validated as on create.

Where kube-openapi walks a Go map (schema properties, object keys) the order is random in
Kubernetes; here properties are checked in sorted name order and object keys in the object's
own order, so the output is deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.openapi_validation import _errors as e
from kstore.api.openapi_validation._formats import FORMAT_CHECKS, SUPPORTED_FORMATS, normalize
from kstore.api.openapi_validation._pattern import Matcher, PatternError, compile_pattern
from kstore.api.openapi_validation._values import (
    ARRAY,
    BOOLEAN,
    INTEGER,
    NULL,
    NUMBER,
    OBJECT,
    STRING,
    deep_equal,
    float_to_int64,
    format_f,
    go_v,
    int_to_go_string,
    is_json_integer,
    kind_of,
    overflows_float32,
)
from kstore.api.validation._render import go_quote, render_value

__all__ = ["NO_OLD", "Node", "compile_node"]

#: No old value correlates with the value being validated.
NO_OLD: Final[Any] = object()

_IN: Final = "body"
_INT32: Final = (-(1 << 31), (1 << 31) - 1)
_INT64: Final = (-(1 << 63), (1 << 63) - 1)

# Keywords that a CRD schema may not hold (apiextensions rejects the CRD), so never validated.
_UNSUPPORTED: Final = (
    "patternProperties",
    "dependencies",
    "additionalItems",
    "$ref",
    "definitions",
)


_TWO_63: Final = 1 << 63
_PLAIN_KINDS: Final[dict[type, str]] = {
    dict: OBJECT,
    str: STRING,
    int: INTEGER,
    float: NUMBER,
    bool: BOOLEAN,
    list: ARRAY,
}


class _Bound:
    """A ``minimum``/``maximum``/``multipleOf`` constraint, checked as kube-openapi checks it."""

    __slots__ = ("as_int", "native", "range_error", "value")

    def __init__(self, value: float, num_type: str, num_format: str, prefix: str) -> None:
        self.value = value
        # Is the constraint itself representable in the schema's type and format? When it is,
        # an int64 value is compared with the constraint truncated to int64 (Go's int64(f)).
        self.range_error = _range_error(value, num_type, num_format, prefix)
        self.native = self.range_error is None
        self.as_int = float_to_int64(value)


def _range_error(value: int | float, num_type: str, num_format: str, prefix: str) -> str | None:
    """``IsValueValidAgainstRange``: the message template (``{path}`` left open) or ``None``."""
    ok = True
    if num_type == INTEGER:
        lo, hi = _INT32 if num_format == "int32" else _INT64
        if isinstance(value, float) and not float(value).is_integer():
            ok = False
        else:
            try:
                ok = lo <= int(format_f(value)) <= hi
            except ValueError:
                ok = False
    elif num_format == "float":
        ok = not overflows_float32(value)
    if ok:
        return None
    type_name = num_type or NUMBER
    if num_format:
        return f"{prefix} value must be of type {type_name} with format {num_format} in {{path}}"
    return f"{prefix} value must be of type {type_name} (default format) in {{path}}"


def _type_error(path: str, type_name: str, value: str) -> e.OpenAPIError:
    message = f"{path} in {_IN} must be of type {type_name}: {go_quote(value)}"
    return e.OpenAPIError(e.TYPE, path, message, value)


class Node:
    """A compiled schema node; see the module docstring for what :meth:`run` guarantees."""

    __slots__ = (
        "_matcher",
        "additional",
        "additional_forbidden",
        "all_of",
        "any_of",
        "enum",
        "enum_text",
        "format",
        "format_check",
        "has_combinators",
        "has_number_checks",
        "has_string_checks",
        "items",
        "list_keys",
        "list_type",
        "max_items",
        "max_length",
        "max_properties",
        "maximum",
        "maximum_exclusive",
        "min_items",
        "min_length",
        "min_properties",
        "minimum",
        "minimum_exclusive",
        "multiple_of",
        "not_",
        "nullable",
        "num_format",
        "num_type",
        "one_of",
        "pattern",
        "pattern_error",
        "properties",
        "required",
        "type_applies",
        "type_passes",
        "type_text",
        "types",
        "unique_items",
        "value_range",
    )

    def __init__(self, schema: Mapping[str, Any]) -> None:
        for key in _UNSUPPORTED:
            if key in schema:
                raise ValueError(f"{key} is not supported in a CustomResourceDefinition schema")
        type_ = schema.get("type") or ""
        types: tuple[str, ...] = (type_,) if type_ else ()
        if schema.get("x-kubernetes-int-or-string"):
            types = (INTEGER, STRING)
        self.types = types
        self.type_text = ",".join(types)
        self.nullable = bool(schema.get("nullable"))
        self.format = _surviving_format(str(schema.get("format") or ""), types)
        self.type_applies = bool(types) or bool(self.format)
        check = FORMAT_CHECKS.get(normalize(self.format)) if self.format else None
        self.format_check = check

        self.any_of = tuple(Node(s) for s in schema.get("anyOf") or ())
        self.all_of = tuple(Node(s) for s in schema.get("allOf") or ())
        self.one_of = tuple(Node(s) for s in schema.get("oneOf") or ())
        not_ = schema.get("not")
        self.not_ = Node(not_) if not_ is not None else None

        self.max_length = _int_or_none(schema.get("maxLength"))
        self.min_length = _int_or_none(schema.get("minLength"))
        pattern = schema.get("pattern") or ""
        self.pattern: str = pattern
        self.pattern_error: str | None = None
        self._matcher: Matcher | None = None
        self._compile_pattern(pattern)

        # Numeric checks know the type and format only when exactly one type is declared.
        num_type = types[0] if len(types) == 1 and types[0] in (INTEGER, NUMBER) else ""
        num_format = ""
        if self.format in (("int32", "int64") if num_type == INTEGER else ("float", "double")):
            num_format = self.format
        self.num_type = num_type
        self.num_format = num_format
        self.value_range = (num_type, num_format)
        self.multiple_of = _bound(schema.get("multipleOf"), num_type, num_format, "MultipleOf")
        self.maximum = _bound(schema.get("maximum"), num_type, num_format, "Maximum boundary")
        self.maximum_exclusive = bool(schema.get("exclusiveMaximum"))
        self.minimum = _bound(schema.get("minimum"), num_type, num_format, "Minimum boundary")
        self.minimum_exclusive = bool(schema.get("exclusiveMinimum"))

        items = schema.get("items")
        if isinstance(items, list):
            raise ValueError("items must be a schema object and not an array")
        self.items = Node(items) if items is not None else None
        self.max_items = _int_or_none(schema.get("maxItems"))
        self.min_items = _int_or_none(schema.get("minItems"))
        self.unique_items = bool(schema.get("uniqueItems"))
        self.list_type: str = schema.get("x-kubernetes-list-type") or ""
        self.list_keys: tuple[str, ...] = tuple(schema.get("x-kubernetes-list-map-keys") or ())

        enum = schema.get("enum")
        self.enum: tuple[Any, ...] | None = tuple(enum) if enum else None
        self.enum_text = go_v(list(enum)) if enum else ""

        # Shortcuts decided once: which value kinds pass the type check outright, and whether a
        # value of a kind has any check of that kind to run at all.
        passes = set(types)
        if NUMBER in types:
            passes.add(INTEGER)
        if self.format and INTEGER not in types and NUMBER not in types:
            passes.update((STRING, ARRAY))
        self.type_passes = frozenset(passes)
        self.has_combinators = bool(self.any_of or self.one_of or self.all_of or self.not_)
        self.has_string_checks = (
            self.max_length is not None or self.min_length is not None or bool(pattern)
        )
        self.has_number_checks = (
            num_type == INTEGER
            or num_format == "float"
            or self.multiple_of is not None
            or self.maximum is not None
            or self.minimum is not None
        )

        self.max_properties = _int_or_none(schema.get("maxProperties"))
        self.min_properties = _int_or_none(schema.get("minProperties"))
        self.required: tuple[str, ...] = tuple(schema.get("required") or ())
        props = schema.get("properties") or {}
        self.properties = {name: Node(props[name]) for name in sorted(props)}
        additional = schema.get("additionalProperties")
        self.additional_forbidden = additional is False
        self.additional = Node(additional) if isinstance(additional, Mapping) else None

    def _compile_pattern(self, pattern: str) -> None:
        self._matcher = None
        if not pattern:
            return
        try:
            self._matcher = compile_pattern(pattern)
        except PatternError as exc:
            self.pattern_error = f"{pattern}, but pattern is invalid: {exc}"

    # --- validation ---------------------------------------------------------------------------

    def run(self, value: Any, path: str, errors: list[e.OpenAPIError]) -> int:
        if value is None:
            ok = True
            if self.types and NULL not in self.types and not self.nullable:
                errors.append(_type_error(path, self.type_text, NULL))
                ok = False
            if self.enum is not None:
                self._check_enum(None, path, errors)
            return 1 if ok else 0
        kind = _PLAIN_KINDS.get(type(value))
        if kind is None or (kind == INTEGER and not -_TWO_63 <= value < _TWO_63):
            kind = kind_of(value)
            if kind == NUMBER and not isinstance(value, float):
                value = float(value)  # an integer beyond int64 decodes as float64 in Go
        count = 1
        if self.type_applies:
            if kind in self.type_passes:
                count += 2
            else:
                count += 2 if self._check_type(value, kind, path, errors) else 1
        count += 2
        if self.has_combinators:
            count += self._run_combinators(value, path, errors)
        if kind == STRING:
            count += 1
            if self.has_string_checks:
                self._check_string(value, path, errors)
            if self.format_check is not None:
                count += 1
                if not self.format_check(value):
                    message = f"{path} in {_IN} must be of type {self.format}: {go_quote(value)}"
                    errors.append(e.OpenAPIError(e.TYPE, path, message, value))
        elif kind in (INTEGER, NUMBER):
            count += 2
            if self.has_number_checks:
                self._check_number(value, path, errors)
        elif kind == ARRAY:
            count += 2 + self._run_array(value, path, errors)
        count += 1
        if self.enum is not None:
            self._check_enum(value, path, errors)
        if kind == OBJECT:
            count += 1 + self._run_object(value, path, errors)
        return count

    def run_update(self, value: Any, old: Any, path: str, errors: list[e.OpenAPIError]) -> int:
        """As :meth:`run` for an update, ``old`` the correlated old value (see the module).

        The value is compared with its old value only when it (or something below it) has
        errors, as Kubernetes compares: an update's valid parts cost no comparison."""
        before = len(errors)
        if value is None or (
            type(value) is not dict and type(value) is not list and not self.has_combinators
        ):
            count = self.run(value, path, errors)
        else:
            count = self._run_update_body(value, old, path, errors)
        if len(errors) != before and self.unchanged(value, old):
            del errors[before:]
        return count

    def _run_update_body(
        self, value: Any, old: Any, path: str, errors: list[e.OpenAPIError]
    ) -> int:
        kind = _PLAIN_KINDS.get(type(value))
        if kind is None or (kind == INTEGER and not -_TWO_63 <= value < _TWO_63):
            kind = kind_of(value)
            if kind == NUMBER and not isinstance(value, float):
                value = float(value)
        count = 1
        if self.type_applies:
            if kind in self.type_passes:
                count += 2
            else:
                count += 2 if self._check_type(value, kind, path, errors) else 1
        count += 2
        if self.has_combinators:
            count += self._run_combinators(value, path, errors, old)
        if kind == STRING:
            count += 1
            if self.has_string_checks:
                self._check_string(value, path, errors)
            if self.format_check is not None:
                count += 1
                if not self.format_check(value):
                    message = f"{path} in {_IN} must be of type {self.format}: {go_quote(value)}"
                    errors.append(e.OpenAPIError(e.TYPE, path, message, value))
        elif kind in (INTEGER, NUMBER):
            count += 2
            if self.has_number_checks:
                self._check_number(value, path, errors)
        elif kind == ARRAY:
            count += 2 + self._run_array(value, path, errors, old)
        count += 1
        if self.enum is not None:
            self._check_enum(value, path, errors)
        if kind == OBJECT:
            count += 1 + self._run_object(value, path, errors, old)
        return count

    def unchanged(self, value: Any, old: Any) -> bool:
        """Whether ``value`` equals its correlated ``old`` value (``reflect.DeepEqual``, but a
        ``map`` list equals one holding the same items by key, in any order)."""
        if old is NO_OLD:
            return False
        if type(value) is list and type(old) is list:
            if self.list_type != "map" or not self.list_keys or self.items is None:
                return deep_equal(value, old)
            if len(value) != len(old):
                return False
            find = self._correlate(old)
            items = self.items
            return all(items.unchanged(item, find(i, item)) for i, item in enumerate(value))
        if type(value) is dict and type(old) is dict:
            if len(value) != len(old):
                return False
            properties, additional = self.properties, self.additional
            for key, item in value.items():
                if key not in old:
                    return False
                sub = properties.get(key) or additional
                if sub is None:
                    if not deep_equal(item, old[key]):
                        return False
                elif not sub.unchanged(item, old[key]):
                    return False
            return True
        return deep_equal(value, old)

    def _correlate(self, old: Any) -> Any:
        """``find(index, item)``: the old item an array item correlates with, or NO_OLD."""
        if type(old) is not list or self.list_type in ("set", "atomic"):
            return lambda i, item: NO_OLD
        if self.list_type != "map":
            return lambda i, item: old[i] if i < len(old) and old[i] is not None else NO_OLD
        keys = self.list_keys
        index: dict[tuple[Any, ...], Any] = {}
        for item in old:
            if type(item) is dict:
                index.setdefault(tuple(_key_part(item.get(k)) for k in keys), item)

        def find(i: int, item: Any) -> Any:
            if type(item) is not dict:
                return NO_OLD
            return index.get(tuple(_key_part(item.get(k)) for k in keys), NO_OLD)

        return find

    def _check_type(self, value: Any, kind: str, path: str, errors: list[e.OpenAPIError]) -> bool:
        types = self.types
        fmt = self.format
        is_float_int = kind == NUMBER and INTEGER in types and is_json_integer(value)
        is_int_float = kind == INTEGER and NUMBER in types
        if fmt and kind not in (STRING, ARRAY):
            value_format = "int64" if kind == INTEGER else "float64" if kind == NUMBER else ""
            if not (kind in types or value_format == fmt or is_float_int or is_int_float):
                errors.append(_type_error(path, fmt, value_format))
                return False
        if fmt and kind in (STRING, ARRAY) and INTEGER not in types and NUMBER not in types:
            return True  # a string format on a string (or an array!) skips the type check
        if not (kind in types or is_float_int or is_int_float):
            errors.append(_type_error(path, self.type_text, kind))
            return False
        return True

    def _run_combinators(
        self, value: Any, path: str, errors: list[e.OpenAPIError], old: Any = NO_OLD
    ) -> int:
        count = 0
        fresh = old is NO_OLD
        if self.any_of:
            best: list[e.OpenAPIError] | None = None
            best_count = -1
            chosen = 0
            succeeded = False
            for node in self.any_of:
                branch: list[e.OpenAPIError] = []
                n = (
                    node.run(value, path, branch)
                    if fresh
                    else node.run_update(value, old, path, branch)
                )
                if not branch:
                    succeeded = True
                    best = None
                    chosen = n
                    break
                if best is None or n > best_count:
                    best, best_count, chosen = branch, n, n
            if not succeeded:
                message = f"{go_quote(path)} must validate at least one schema (anyOf)"
                errors.append(e.OpenAPIError(e.PLAIN, path, message))
            if best is not None:
                errors.extend(best)
            count += chosen
        if self.one_of:
            best = None
            best_count = -1
            first_success = -1
            validated = 0
            for node in self.one_of:
                branch = []
                n = (
                    node.run(value, path, branch)
                    if fresh
                    else node.run_update(value, old, path, branch)
                )
                if not branch:
                    validated += 1
                    best = None
                    if first_success < 0:
                        first_success = n
                    continue
                if validated == 0 and (best is None or n > best_count):
                    best, best_count = branch, n
            if validated != 1:
                detail = (
                    "Found none valid"
                    if validated == 0
                    else f"Found {validated} valid alternatives"
                )
                message = (
                    f"{go_quote(path)} must validate one and only one schema (oneOf). {detail}"
                )
                errors.append(e.OpenAPIError(e.PLAIN, path, message))
                if best is not None:
                    errors.extend(best)
                    count += best_count
            else:
                count += first_success
        if self.all_of:
            validated = 0
            for node in self.all_of:
                before = len(errors)
                count += (
                    node.run(value, path, errors)
                    if fresh
                    else node.run_update(value, old, path, errors)
                )
                if len(errors) == before:
                    validated += 1
            if validated != len(self.all_of):
                detail = ". None validated" if validated == 0 else ""
                message = f"{go_quote(path)} must validate all the schemas (allOf){detail}"
                errors.append(e.OpenAPIError(e.PLAIN, path, message))
        if self.not_ is not None:
            branch = []
            if fresh:
                self.not_.run(value, path, branch)
            else:
                self.not_.run_update(value, old, path, branch)
            if not branch:
                message = f"{go_quote(path)} must not validate the schema (not)"
                errors.append(e.OpenAPIError(e.PLAIN, path, message))
        return count

    def _sub(self, value: Any, old: Any, path: str, errors: list[e.OpenAPIError]) -> int:
        """A child's walk: :meth:`run_update` when ``old`` correlates, else :meth:`run`; a
        scalar is validated in place and compared only when it has errors."""
        if old is NO_OLD:
            return self.run(value, path, errors)
        if type(value) is dict or type(value) is list or self.has_combinators:
            return self.run_update(value, old, path, errors)
        before = len(errors)
        count = self.run(value, path, errors)
        if len(errors) != before and deep_equal(value, old):
            del errors[before:]
        return count

    def _check_string(self, value: str, path: str, errors: list[e.OpenAPIError]) -> None:
        if self.max_length is not None and len(value) > self.max_length:
            message = f"{path} in {_IN} should be at most {self.max_length} chars long"
            errors.append(e.OpenAPIError(e.TOO_LONG, path, message, value, self.max_length))
            return
        if self.min_length is not None and len(value) < self.min_length:
            message = f"{path} in {_IN} should be at least {self.min_length} chars long"
            errors.append(e.OpenAPIError(e.INVALID, path, message, value))
            return
        if self.pattern_error is not None:
            message = f"{path} in {_IN} should match '{self.pattern_error}'"
            errors.append(e.OpenAPIError(e.INVALID, path, message, value))
        elif self._matcher is not None and not self._matcher(value):
            message = f"{path} in {_IN} should match '{self.pattern}'"
            errors.append(e.OpenAPIError(e.INVALID, path, message, value))

    def _check_number(self, value: int | float, path: str, errors: list[e.OpenAPIError]) -> None:
        num_type, num_format = self.value_range
        problem = None
        # An int64 always fits int64 and a float64 always fits double: skip those checks.
        if num_format in ("int32", "float") or (num_type == INTEGER and type(value) is float):
            problem = _range_error(value, num_type, num_format, "Checked")
        if problem is not None:
            errors.append(e.OpenAPIError(e.PLAIN, path, problem.format(path=path)))
        is_int = isinstance(value, int)
        bound = self.multiple_of
        if bound is not None:
            if bound.range_error is not None:
                errors.append(e.OpenAPIError(e.PLAIN, path, bound.range_error.format(path=path)))
            factor: int | float
            if is_int and bound.native:
                factor = bound.as_int
                bad = factor <= 0 or value % factor != 0
            else:
                factor = bound.value
                value = float(value)
                if factor <= 0:
                    bad = True
                else:
                    mult = (1 / factor * value) if factor < 1 else (value / factor)
                    bad = not is_json_integer(mult)
            if bad and factor <= 0:
                shown = render_value(factor)
                message = f"factor MultipleOf declared for {path} must be positive: {shown}"
                errors.append(e.OpenAPIError(e.INVALID, path, message, factor))
            elif bad:
                message = f"{path} in {_IN} should be a multiple of {render_value(factor)}"
                errors.append(e.OpenAPIError(e.INVALID, path, message, value))
        bound = self.minimum
        if bound is not None:
            self._check_bound(bound, value, is_int, path, errors, self.minimum_exclusive, False)
        bound = self.maximum
        if bound is not None:
            self._check_bound(bound, value, is_int, path, errors, self.maximum_exclusive, True)

    @staticmethod
    def _check_bound(
        bound: _Bound,
        value: int | float,
        is_int: bool,
        path: str,
        errors: list[e.OpenAPIError],
        exclusive: bool,
        upper: bool,
    ) -> None:
        if bound.range_error is not None:
            errors.append(e.OpenAPIError(e.PLAIN, path, bound.range_error.format(path=path)))
        limit: int | float = bound.value
        if is_int and bound.native:
            limit = bound.as_int
        else:
            value = float(value)  # kube-openapi compares (and reports) the value as float64
        if upper:
            bad = value >= limit if exclusive else value > limit
            words = "less than" if exclusive else "less than or equal to"
        else:
            bad = value <= limit if exclusive else value < limit
            words = "greater than" if exclusive else "greater than or equal to"
        if bad:
            message = f"{path} in {_IN} should be {words} {render_value(limit)}"
            errors.append(e.OpenAPIError(e.INVALID, path, message, value))

    def _run_array(
        self, value: list[Any], path: str, errors: list[e.OpenAPIError], old: Any = NO_OLD
    ) -> int:
        count = 0
        items = self.items
        if items is not None:
            if old is NO_OLD:
                for i, item in enumerate(value):
                    count += items.run(item, f"{path}[{i}]", errors)
            else:
                find = self._correlate(old)
                for i, item in enumerate(value):
                    count += items._sub(item, find(i, item), f"{path}[{i}]", errors)
        size = len(value)
        if self.min_items is not None and size < self.min_items:
            message = f"{path} in {_IN} should have at least {self.min_items} items"
            errors.append(e.OpenAPIError(e.INVALID, path, message, size))
        if self.max_items is not None and size > self.max_items:
            message = f"{path} in {_IN} should have at most {self.max_items} items"
            errors.append(e.OpenAPIError(e.MAX_ITEMS, path, message, size, self.max_items))
        if self.unique_items and _has_duplicates(value):
            message = f"{path} in {_IN} shouldn't contain duplicates"
            errors.append(e.OpenAPIError(e.INVALID, path, message))
        return count

    def _check_enum(self, value: Any, path: str, errors: list[e.OpenAPIError]) -> None:
        assert self.enum is not None
        for allowed in self.enum:
            if _enum_matches(value, allowed):
                return
        message = f"{path} in {_IN} should be one of {self.enum_text}"
        errors.append(e.OpenAPIError(e.ENUM, path, message, value, values=self.enum))

    def _run_object(
        self, value: dict[str, Any], path: str, errors: list[e.OpenAPIError], old: Any = NO_OLD
    ) -> int:
        count = 0
        size = len(value)
        if self.min_properties is not None and size < self.min_properties:
            message = f"{path} in {_IN} should have at least {self.min_properties} properties"
            errors.append(e.OpenAPIError(e.INVALID, path, message, size))
        if self.max_properties is not None and size > self.max_properties:
            message = f"{path} in {_IN} should have at most {self.max_properties} properties"
            errors.append(
                e.OpenAPIError(e.MAX_PROPERTIES, path, message, size, self.max_properties)
            )
        properties = self.properties
        if self.additional_forbidden:
            for key in value:
                if key not in properties:
                    message = f"{path}.{key} in {_IN} is a forbidden property"
                    errors.append(e.OpenAPIError(e.INVALID, path, message, key))
        elif self.additional is not None and old is NO_OLD:
            additional = self.additional
            for key, item in value.items():
                if key not in properties:
                    count += additional.run(item, f"{path}.{key}", errors)
        if old is not NO_OLD:
            count += self._run_children_update(value, path, errors, old)
        elif properties:
            prefix = f"{path}." if path else ""
            for name, node in properties.items():
                if name in value:
                    count += node.run(value[name], prefix + name, errors)
        for name in self.required:
            if name not in value:
                child = f"{path}.{name}"
                errors.append(e.OpenAPIError(e.REQUIRED, child, f"{child} in {_IN} is required"))
        return count

    def _run_children_update(
        self, value: dict[str, Any], path: str, errors: list[e.OpenAPIError], old: Any
    ) -> int:
        """The additional properties and properties of an update, each with its old value."""
        count = 0
        prior: dict[str, Any] = old if type(old) is dict else {}
        properties = self.properties
        additional = self.additional
        if additional is not None:
            for key, item in value.items():
                if key not in properties:
                    where = f"{path}.{key}"
                    count += additional._sub(item, prior.get(key, NO_OLD), where, errors)
        prefix = f"{path}." if path else ""
        for name, node in properties.items():
            if name in value:
                count += node._sub(value[name], prior.get(name, NO_OLD), prefix + name, errors)
        return count


def _key_part(value: Any) -> Any:
    return value if value is None or isinstance(value, (str, int, float, bool)) else repr(value)


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def _bound(value: Any, num_type: str, num_format: str, prefix: str) -> _Bound | None:
    return None if value is None else _Bound(float(value), num_type, num_format, prefix)


def _surviving_format(fmt: str, types: tuple[str, ...]) -> str:
    """apiextensions' format stripping: the format kept for validation, or ``""``."""
    if not fmt:
        return ""
    single = types[0] if len(types) == 1 else ""
    if single in ("", STRING):
        return fmt if normalize(fmt) in SUPPORTED_FORMATS else ""
    if single == INTEGER:
        return fmt if fmt in ("int32", "int64") else ""
    if single == NUMBER:
        return fmt if fmt in ("float", "double") else ""
    return ""


def _enum_matches(value: Any, allowed: Any) -> bool:
    """Whether ``value`` equals ``allowed`` after Go's conversion to the enum value's type."""
    if value is None or allowed is None:
        return False
    allowed_kind = kind_of(allowed)
    kind = kind_of(value)
    if allowed_kind == STRING:
        if kind == STRING:
            return bool(value == allowed)
        return kind == INTEGER and int_to_go_string(value) == allowed
    if allowed_kind == INTEGER:
        if kind == INTEGER:
            return bool(value == allowed)
        return kind == NUMBER and float_to_int64(float(value)) == allowed
    if allowed_kind == NUMBER:
        return kind in (INTEGER, NUMBER) and float(value) == float(allowed)
    if allowed_kind == "boolean":
        return kind == "boolean" and value is allowed
    if allowed_kind == kind:
        return deep_equal(value, allowed)
    return False


def _has_duplicates(values: list[Any]) -> bool:
    for i in range(1, len(values)):
        for j in range(i):
            if deep_equal(values[i], values[j]):
                return True
    return False


def compile_node(schema: Mapping[str, Any]) -> Node:
    return Node(schema)
