"""List, watch and delete options: Kubernetes' validation messages and defaults."""

from __future__ import annotations

import pytest

from kstore.errors import BadRequest, Invalid
from kstore.server.options import create_options, delete_options, list_request
from kstore.storage.interface import ResourceVersionMatch

FIELDS = frozenset({"metadata.name", "metadata.namespace"})


def _list(query: dict[str, str], *, watch: bool = False, name: str = "") -> object:
    return list_request(query, name=name, watch=watch, selectable_fields=FIELDS)


def test_resource_version_match_without_resource_version_is_invalid() -> None:
    with pytest.raises(Invalid) as err:
        _list({"resourceVersionMatch": "NotOlderThan"})
    assert err.value.message == (
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden unless resourceVersion is provided"
    )


def test_unknown_resource_version_match_lists_supported_values() -> None:
    with pytest.raises(Invalid) as err:
        _list({"resourceVersion": "1", "resourceVersionMatch": "bogus"})
    assert err.value.causes[0].message == (
        'Unsupported value: "bogus": supported values: "Exact", "NotOlderThan", ""'
    )


def test_exact_at_zero_and_send_initial_events_on_list_are_forbidden() -> None:
    with pytest.raises(Invalid) as err:
        _list(
            {"resourceVersion": "0", "resourceVersionMatch": "Exact", "sendInitialEvents": "true"}
        )
    fields = [c.field for c in err.value.causes]
    assert fields == ["resourceVersionMatch", "sendInitialEvents"]


def test_watch_send_initial_events_requires_not_older_than() -> None:
    with pytest.raises(Invalid) as err:
        _list({"sendInitialEvents": "true"}, watch=True)
    assert "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan" in (
        err.value.message
    )


def test_legacy_watch_is_defaulted_to_send_initial_events() -> None:
    request = list_request({}, name="", watch=True, selectable_fields=FIELDS)
    assert request.options.send_initial_events is True
    assert request.options.resource_version_match is ResourceVersionMatch.NOT_OLDER_THAN
    later = list_request({"resourceVersion": "5"}, name="", watch=True, selectable_fields=FIELDS)
    assert later.options.send_initial_events is None


def test_unsupported_field_label_is_a_bad_request() -> None:
    with pytest.raises(BadRequest) as err:
        _list({"fieldSelector": "spec.nodeName=x"})
    assert err.value.message == "field label not supported: spec.nodeName"


def test_repeated_name_term_is_accepted_and_name_from_path_selects() -> None:
    request = list_request(
        {"fieldSelector": "metadata.name=a,metadata.name=a"},
        name="",
        watch=False,
        selectable_fields=FIELDS,
    )
    assert request.options.field_selector.exact_value("metadata.name") == "a"
    named = list_request({}, name="b", watch=True, selectable_fields=FIELDS)
    assert named.options.field_selector.exact_value("metadata.name") == "b"
    with pytest.raises(BadRequest):
        list_request(
            {"fieldSelector": "metadata.name=c"}, name="b", watch=True, selectable_fields=FIELDS
        )


def test_bad_limit_is_a_bad_request() -> None:
    with pytest.raises(BadRequest):
        _list({"limit": "many"})


def test_delete_options_from_body_or_query_never_both() -> None:
    from_body = delete_options(
        {"propagationPolicy": "Background", "preconditions": {"uid": "u1"}},
        {"gracePeriodSeconds": "5"},
        [],
    )
    assert from_body.propagation_policy == "Background"
    assert from_body.grace_period_seconds is None
    assert from_body.preconditions is not None and from_body.preconditions.uid == "u1"
    from_query = delete_options(None, {"gracePeriodSeconds": "5", "dryRun": "All"}, ["All"])
    assert from_query.grace_period_seconds == 5
    assert from_query.dry_run


def test_delete_options_validation_messages() -> None:
    with pytest.raises(Invalid) as err:
        delete_options({"propagationPolicy": "Sideways"}, {}, [])
    assert err.value.message == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
        '"Sideways": supported values: "Foreground", "Background", "Orphan", "nil"'
    )
    with pytest.raises(Invalid):
        delete_options({"propagationPolicy": "Orphan", "orphanDependents": True}, {}, [])


def test_dry_run_accepts_only_all() -> None:
    assert create_options({}, ["All"]).dry_run
    with pytest.raises(Invalid) as err:
        create_options({}, ["Some"])
    assert err.value.message.startswith('CreateOptions.meta.k8s.io "" is invalid: dryRun:')
