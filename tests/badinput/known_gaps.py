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
_DUP_NAME = (
    "400 BadRequest 'duplicate field \"<dotted path>\"'",
    "400 BadRequest 'strict decoding error: duplicate field \"<key>\"' (sigs.k8s.io/json names "
    "only the repeated key; message-only difference)",
)
_UTF8 = (
    "400 BadRequest 'invalid JSON: the body is not valid UTF-8'",
    "422 Invalid: Go's JSON decoder replaces invalid UTF-8 and lone surrogates with U+FFFD, so "
    "the object decodes and name/key validation rejects it",
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
_PCT = (
    "404 NotFound 'configmaps \"a%b\" not found'",
    "400 BadRequest 'Name parameter invalid: \"a%b\": may not contain '%''"
    " (IsValidPathSegmentName in the store's key function)",
)
_DOT = (
    "400 BadRequest 'invalid key: \"/configmaps/corpus/..\"'",
    "400 BadRequest 'Name parameter invalid: \"..\": may not be '..'' (message-only difference)",
)
_NUL = (
    "400 BadRequest 'invalid key: ... contains a NUL character'",
    "404 NotFound: NUL passes IsValidPathSegmentName and the lookup finds nothing",
)
_SEGMENTS = (
    "400 BadRequest 'the server could not parse the request path'",
    "404 NotFound: no route has that many segments",
)
_METHOD = (
    "400/404/409/422 (the request is treated as another verb or as an unknown path)",
    "405 MethodNotAllowed Status: go-restful has no route for that method on that path and the "
    "API server's service-error handler answers with a Status of that code",
)
_INT_QUERY = (
    "200 OK",
    "400 BadRequest: the int64 query parameter does not parse (strconv.ParseInt out of range)",
)
_PATCH_TYPE = (
    "200 OK (the patched object keeps a non-map data)",
    "422 Invalid '\"\" is invalid: patch: Invalid value: ...': the patched JSON does not decode "
    "into the kind",
)

_FIELD_VALIDATION = (
    "400 BadRequest",
    '422 Invalid \'<Kind>Options.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: '
    "\"Bogus\"' (ValidateFieldValidation in apimachinery's options validation)",
)

KNOWN_GAPS: dict[str, tuple[str, str]] = {
    "number-replicas-float": _INT_FIELD,
    "number-replicas-string": _INT_FIELD,
    "number-replicas-bool": _INT_FIELD,
    "number-replicas-neg-exp-huge": _INT_FIELD,
    "number-generation-float": _INT_FIELD,
    "number-grace-float": _INT_FIELD,
    "dup-json-name": _DUP_NAME,
    "dup-json-data-key": _DUP_NAME,
    "dup-json-label": _DUP_NAME,
    "dup-json-put-data-key": _DUP_NAME,
    "dup-json-put-label": _DUP_NAME,
    "dup-deployment-replicas": _DUP_NAME,
    "dup-merge-patch": (
        "422 Invalid 'patch: Invalid value' (the duplicate is ignored, the patched object fails)",
        "400 BadRequest: with fieldValidation=Strict a merge patch is decoded strictly first and "
        "a duplicate field is a strict decoding error",
    ),
    "utf8-invalid-name": _UTF8,
    "utf8-overlong-name": _UTF8,
    "utf8-lone-surrogate-name": _UTF8,
    "utf8-invalid-data-key": _UTF8,
    "utf8-surrogate-data-key": _UTF8,
    "utf8-invalid-label-key": _UTF8,
    "shape-data-array": _TYPED,
    "shape-data-value-object": _TYPED,
    "shape-labels-array": _TYPED,
    "shape-annotation-number": _TYPED,
    "shape-binarydata-not-base64": _TYPED,
    "shape-secret-data-not-base64": _TYPED,
    "shape-name-number": _NAME_TYPE,
    "shape-name-object": _NAME_TYPE,
    "path-get-pct": _PCT,
    "path-delete-pct": _PCT,
    "path-put-pct": _PCT,
    "path-patch-pct": _PCT,
    "path-get-encoded-dotdot": _DOT,
    "path-delete-encoded-dotdot": _DOT,
    "path-put-encoded-dotdot": _DOT,
    "path-patch-encoded-dotdot": _DOT,
    "path-get-encoded-dot": _DOT,
    "path-delete-encoded-dot": _DOT,
    "path-put-encoded-dot": _DOT,
    "path-patch-encoded-dot": _DOT,
    "path-get-raw-dotdot": _DOT,
    "path-delete-raw-dotdot": _DOT,
    "path-get-nul": _NUL,
    "path-delete-nul": _NUL,
    "path-put-nul": _NUL,
    "path-patch-nul": _NUL,
    "path-get-raw-traversal-to-secret": _SEGMENTS,
    "path-put-raw-traversal": _SEGMENTS,
    "res-too-many-segments": _SEGMENTS,
    "path-post-raw-namespace-dotdot": (
        "400 BadRequest 'invalid key: \"/namespaces/..\"'",
        "404 NotFound 'namespaces \"..\" not found' from namespace lifecycle admission "
        "(medium confidence)",
    ),
    "res-cluster-in-namespace": (
        "200 OK (lists namespaces)",
        "404 NotFound: namespaces is cluster-scoped; /namespaces/<ns>/namespaces has no route",
    ),
    "path-post-with-name": _METHOD,
    "method-put-collection": _METHOD,
    "method-patch-collection": _METHOD,
    "method-trace": _METHOD,
    "method-foo": _METHOD,
    "method-connect-like": _METHOD,
    "method-post-cluster-name": _METHOD,
    "list-limit-huge": _INT_QUERY,
    "list-timeout-huge": _INT_QUERY,
    "delete-grace-huge": _INT_QUERY,
    "patch-merge-data-array": _PATCH_TYPE,
    "patch-strategic-data-array": _PATCH_TYPE,
    "patch-field-validation-bogus": _FIELD_VALIDATION,
    "put-field-validation-bogus": _FIELD_VALIDATION,
    "post-field-validation-bogus": _FIELD_VALIDATION,
}
