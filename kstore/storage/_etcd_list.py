"""Lists on etcd as Kubernetes' etcd3 store reads them (``GetList``): ranges pinned at one
revision, paged with Kubernetes continue tokens.

- The first range fixes the revision every later page is read at (``with_rev``); a continue
  token carries it (or -1: "latest", from the 410 of an expired token).
- ``limit`` counts *matching* items: when selectors filter items out, the next range asks for
  twice as many keys, up to 10,000 (Kubernetes' ``maxLimit``), until the limit is met or the
  range is exhausted. ``remaining_item_count`` is given only without selectors.
- resourceVersion rules (``ValidateListOptions``): ``Exact`` (or the legacy form: a revision
  with a limit on a recursive list) reads at that revision; otherwise the latest revision is
  read and must not be older than the one asked (else TooLargeResourceVersion).
- A revision below the compacted one is 410 Expired, with a fresh token that resumes at the
  latest revision when it was a continue; one above the store's is TooLargeResourceVersion.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from etcd3 import etcdrpc

from kstore.api.gvk import Object
from kstore.errors import BadRequest, Expired, InternalError, TooLargeResourceVersion
from kstore.storage._etcd_client import (
    CompactedError,
    EtcdClient,
    FutureRevisionError,
    prefix_range_end,
)
from kstore.storage.continue_token import InvalidContinueToken, decode_continue, encode_continue
from kstore.storage.interface import ListOptions, ListResult, ResourceVersionMatch
from kstore.storage.versioner import parse_list_resource_version

__all__ = ["MAX_LIST_PAGE", "read_list"]

#: Largest page a filtered list grows to while looking for matching items (Kubernetes'
#: ``maxLimit``).
MAX_LIST_PAGE = 10_000

_LIST_EXPIRED = "The resourceVersion for the provided list is too old."
_CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter."
)
_INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter, or use the continue token in "
    "this response to retrieve the remainder of the results. Continuing with the provided "
    "token results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list."
)
_MATCH_VALUES = {m.value for m in ResourceVersionMatch}


def _expired(paging_continue: bool, start: str, etcd_prefix: str) -> Expired:
    if not paging_continue:
        return Expired(_LIST_EXPIRED)
    try:
        token = encode_continue(start, etcd_prefix, -1)
    except ValueError:
        return Expired(_CONTINUE_EXPIRED)
    return Expired(_INCONSISTENT_CONTINUE, continue_token=token)


def _start(etcd_prefix: str, opts: ListOptions) -> tuple[int, str, bool, int]:
    """Where the list starts: (revision to read at, 0 for latest; first key; whether it is a
    continue; the minimum revision a latest read must reach)."""
    match = str(opts.resource_version_match)
    if match not in _MATCH_VALUES:
        raise BadRequest(f"unknown ResourceVersionMatch value: {match}")
    if opts.recursive and opts.continue_token:
        try:
            token = decode_continue(opts.continue_token, etcd_prefix)
        except InvalidContinueToken as exc:
            raise BadRequest(f"invalid continue token: {exc}") from None
        if opts.resource_version not in ("", "0"):
            raise BadRequest("specifying resource version is not allowed when using continue")
        with_rev = max(token.resource_version, 0)
        return with_rev, token.start_key, True, 0
    if not opts.resource_version:
        return 0, etcd_prefix, False, 0
    parsed = parse_list_resource_version(opts.resource_version)
    exact = match == ResourceVersionMatch.EXACT or (
        match == ResourceVersionMatch.UNSET and opts.recursive and opts.limit > 0 and parsed > 0
    )
    if exact:
        return parsed, etcd_prefix, False, 0
    return 0, etcd_prefix, False, parsed


def read_list(
    client: EtcdClient,
    etcd_prefix: str,
    opts: ListOptions,
    *,
    decode: Callable[[Any], Object],
    matches: Callable[[Object], bool] | None,
    current_revision: Callable[[], int],
) -> ListResult:
    """List ``etcd_prefix`` (a prefix when ``opts.recursive``, else one key) per ``opts``.

    ``decode`` turns a KeyValue into an object with its resourceVersion; ``matches`` (None:
    no selectors) filters them."""
    with_rev, start, paging_continue, minimum = _start(etcd_prefix, opts)
    limit = max(opts.limit, 0)
    paging = limit > 0
    page_limit = limit
    range_end = prefix_range_end(etcd_prefix.encode()) if opts.recursive else b""
    raw_start = start.encode()
    items: list[Object] = []
    last_key: bytes | None = None
    has_more = False
    count = 0
    while True:
        request = etcdrpc.RangeRequest(
            key=raw_start, range_end=range_end, limit=page_limit, revision=with_rev
        )
        try:
            response = client.range(request)
        except CompactedError:
            raise _expired(paging_continue, start, etcd_prefix) from None
        except FutureRevisionError:
            raise TooLargeResourceVersion(with_rev, current_revision()) from None
        if with_rev == 0:
            revision = int(response.header.revision)
            if minimum > revision:
                raise TooLargeResourceVersion(minimum, revision)
            with_rev = revision
        kvs = response.kvs
        count = int(response.count)
        chunk_more = len(kvs) < count
        if not kvs and chunk_more:
            raise InternalError(
                "no results were found, but etcd indicated there were more values remaining"
            )
        limit_reached = False
        for kv in kvs:
            if paging and len(items) >= limit:
                limit_reached = True
                break
            last_key = kv.key
            obj = decode(kv)
            if matches is None or matches(obj):
                items.append(obj)
        has_more = chunk_more or limit_reached
        if limit_reached or not chunk_more or (paging and len(items) >= limit):
            break
        raw_start = bytes(kvs[-1].key) + b"\x00"
        if page_limit < MAX_LIST_PAGE:
            page_limit = min(page_limit * 2, MAX_LIST_PAGE)

    continue_token = ""
    remaining: int | None = None
    if has_more and last_key is not None:
        last = bytes(last_key).decode("utf-8", "surrogateescape")
        continue_token = encode_continue(last + "\x00", etcd_prefix, with_rev)
        if matches is None:
            # etcd counted the keys from the page's start; Kubernetes reports that minus the
            # limit, and nothing when selectors make the count meaningless.
            remaining = count - limit
    return ListResult(
        items=items,
        resource_version=with_rev,
        continue_token=continue_token,
        remaining_item_count=remaining,
    )
