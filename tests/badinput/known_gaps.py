"""Corpus cases kstore still answers differently from kube-apiserver: bugs to fix next.

Each entry maps a case id of :mod:`tests.badinput.corpus` to (what kstore answers today,
what kube-apiserver answers and why). The corpus runs these as strict xfails: a fix makes the
case pass, the xfail fails, and the entry must then be removed. None of them is a 5xx.
"""

from __future__ import annotations

__all__ = ["KNOWN_GAPS"]

_INT_FIELD = (
    "201 Created",
    "400 BadRequest: the typed decode fails ('cannot unmarshal ... into Go struct field ... of "
    "type int32/int64'); kstore accepts a non-integer in an integer field",
)
_TYPED = (
    "201 Created",
    "400 BadRequest: the typed decode fails (cannot unmarshal array/object/number into a "
    "string field, or illegal base64 data)",
)
_NAME_TYPE = (
    "422 Invalid 'metadata.name: Required value'",
    "400 BadRequest: a non-string name fails the typed decode before validation",
)
_PATCH_TYPE = (
    "200 OK (the patched object keeps a non-map data)",
    "422 Invalid '\"\" is invalid: patch: Invalid value: ...': the patched JSON does not decode "
    "into the kind",
)


KNOWN_GAPS: dict[str, tuple[str, str]] = {
    "number-replicas-float": _INT_FIELD,
    "number-replicas-string": _INT_FIELD,
    "number-replicas-bool": _INT_FIELD,
    "number-replicas-neg-exp-huge": _INT_FIELD,
    "number-generation-float": _INT_FIELD,
    "number-grace-float": _INT_FIELD,
    "dup-merge-patch": (
        "422 Invalid 'patch: Invalid value' (the duplicate is ignored, the patched object fails)",
        "400 BadRequest: with fieldValidation=Strict a merge patch is decoded strictly first and "
        "a duplicate field is a strict decoding error",
    ),
    "shape-data-array": _TYPED,
    "shape-data-value-object": _TYPED,
    "shape-labels-array": _TYPED,
    "shape-annotation-number": _TYPED,
    "shape-binarydata-not-base64": _TYPED,
    "shape-secret-data-not-base64": _TYPED,
    "shape-name-number": _NAME_TYPE,
    "shape-name-object": _NAME_TYPE,
    "patch-merge-data-array": _PATCH_TYPE,
    "patch-strategic-data-array": _PATCH_TYPE,
}
