"""Corpus cases kstore still answers differently from kube-apiserver: bugs to fix next.

Each entry maps a case id of :mod:`tests.badinput.corpus` to (what kstore answers today,
what kube-apiserver answers and why). The corpus runs these as strict xfails: a fix makes the
case pass, the xfail fails, and the entry must then be removed. None of them is a 5xx.
"""

from __future__ import annotations

__all__ = ["KNOWN_GAPS"]

_PATCH_TYPE = (
    "200 OK (the patched object keeps a non-map data)",
    "422 Invalid '\"\" is invalid: patch: Invalid value: ...': the patched JSON does not decode "
    "into the kind",
)


KNOWN_GAPS: dict[str, tuple[str, str]] = {
    "dup-merge-patch": (
        "422 Invalid 'patch: Invalid value' (the duplicate is ignored, the patched object fails)",
        "400 BadRequest: with fieldValidation=Strict a merge patch is decoded strictly first and "
        "a duplicate field is a strict decoding error",
    ),
    "patch-merge-data-array": _PATCH_TYPE,
    "patch-strategic-data-array": _PATCH_TYPE,
}
