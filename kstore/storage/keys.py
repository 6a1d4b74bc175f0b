"""Storage keys: validation as Kubernetes' ``PrepareKey``, and the names derived from a key.

A key is ``<resource prefix>/<namespace>/<name>`` or ``<resource prefix>/<name>``. Every
storage method passes its key through :func:`prepare_key` first, so a traversal segment
(``.``/``..``), an empty key, or a key outside the resource's prefix never reaches a backend.
A recursive request's key gets a trailing ``/`` so ``/pods/a`` never matches ``/pods/ab``.
"""

from __future__ import annotations

from kstore.errors import BadRequest

__all__ = ["name_of_key", "prepare_key", "qualified_resource", "resource_prefix_with_slash"]


def resource_prefix_with_slash(resource_prefix: str) -> str:
    """The resource prefix as keys must start with it (``/pods`` -> ``/pods/``).

    Raises BadRequest for a prefix that is empty, ``/``, or does not start with ``/``
    (Kubernetes refuses such a store at construction)."""
    if not resource_prefix:
        raise BadRequest("resourcePrefix cannot be empty")
    if resource_prefix == "/":
        raise BadRequest("resourcePrefix cannot be /")
    if not resource_prefix.startswith("/"):
        raise BadRequest("resourcePrefix needs to start from /")
    return resource_prefix if resource_prefix.endswith("/") else resource_prefix + "/"


def prepare_key(key: str, resource_prefix: str, *, recursive: bool) -> str:
    """Validate ``key`` for a resource whose keys start with ``resource_prefix`` (with its
    trailing slash, see :func:`resource_prefix_with_slash`); return the key to use.

    Raises BadRequest with Kubernetes' messages: ``invalid key: "<k>"`` for traversal segments,
    ``empty key: "<k>"``, and ``invalid key: "<k>" lacks resource prefix: "<prefix>"``.
    """
    # Every traversal form starts with "." or contains "/."; most keys have neither.
    if (key.startswith(".") or "/." in key) and (
        key == ".."
        or key.startswith("../")
        or key.endswith("/..")
        or "/../" in key
        or key == "."
        or key.startswith("./")
        or key.endswith("/.")
        or "/./" in key
    ):
        raise BadRequest(f"invalid key: {_go_quote(key)}")
    if key in ("", "/"):
        raise BadRequest(f"empty key: {_go_quote(key)}")
    if recursive and not key.endswith("/"):
        key += "/"
    if not key.startswith(resource_prefix):
        raise BadRequest(
            f"invalid key: {_go_quote(key)} lacks resource prefix: {_go_quote(resource_prefix)}"
        )
    return key


def qualified_resource(resource_prefix: str) -> str:
    """The resource as Kubernetes names it in messages: ``/pods`` -> ``pods``,
    ``/example.com/widgets`` -> ``widgets.example.com``."""
    parts = [p for p in resource_prefix.split("/") if p]
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return f"{parts[-1]}.{'.'.join(parts[:-1])}"


def name_of_key(key: str) -> str:
    """The object name a key ends with (its last path segment)."""
    return key.rstrip("/").rpartition("/")[2]


def _go_quote(text: str) -> str:
    # %q of a Go string: double quotes with backslash escapes; enough for error messages.
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch < " " or ch == "\x7f":
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
