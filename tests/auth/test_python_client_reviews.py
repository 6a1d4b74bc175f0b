"""The official ``kubernetes`` Python client asking the review APIs, as a bearer-token user
against RBAC: SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview and a
LocalSubjectAccessReview decoded into the client's typed models."""

from __future__ import annotations

from kubernetes import client

from tests.auth.conftest import ADMIN, ALICE, BOB
from tests.server.harness import RunningServer


def _api(server: RunningServer, token: str) -> client.ApiClient:
    configuration = client.Configuration()
    configuration.host = server.url
    configuration.api_key = {"authorization": token}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    return client.ApiClient(configuration)


def _can(server: RunningServer, token: str, **attributes: str) -> bool:
    review = client.V1SelfSubjectAccessReview(
        spec=client.V1SelfSubjectAccessReviewSpec(
            resource_attributes=client.V1ResourceAttributes(**attributes)
        )
    )
    answer = client.AuthorizationV1Api(_api(server, token)).create_self_subject_access_review(
        review
    )
    assert isinstance(answer, client.V1SelfSubjectAccessReview)
    return bool(answer.status.allowed)


def test_self_access_review_answers_per_binding(rbac_server: RunningServer) -> None:
    assert _can(rbac_server, ALICE, namespace="team-a", verb="list", resource="configmaps")
    assert not _can(rbac_server, ALICE, namespace="team-b", verb="list", resource="configmaps")
    assert _can(rbac_server, BOB, namespace="team-b", verb="delete", resource="configmaps")


def test_rules_review_lists_the_namespace_rules(rbac_server: RunningServer) -> None:
    review = client.V1SelfSubjectRulesReview(
        spec=client.V1SelfSubjectRulesReviewSpec(namespace="team-b")
    )
    answer = client.AuthorizationV1Api(_api(rbac_server, BOB)).create_self_subject_rules_review(
        review
    )
    assert answer.status.incomplete is False
    rules = [(r.resources, r.verbs) for r in answer.status.resource_rules]
    assert (["configmaps"], ["*"]) in rules


def test_local_access_review_about_another_user(rbac_server: RunningServer) -> None:
    review = client.V1LocalSubjectAccessReview(
        metadata=client.V1ObjectMeta(namespace="team-a"),
        spec=client.V1SubjectAccessReviewSpec(
            user="alice",
            resource_attributes=client.V1ResourceAttributes(
                namespace="team-a", verb="get", resource="configmaps"
            ),
        ),
    )
    api = client.AuthorizationV1Api(_api(rbac_server, ADMIN))
    answer = api.create_namespaced_local_subject_access_review("team-a", review)
    assert answer.status.allowed is True
    assert answer.metadata.namespace == "team-a"


def test_self_subject_review_names_the_token_user(rbac_server: RunningServer) -> None:
    api = client.AuthenticationV1Api(_api(rbac_server, BOB))
    answer = api.create_self_subject_review(client.V1SelfSubjectReview())
    assert answer.status.user_info.username == "bob"
    assert answer.status.user_info.groups == ["dev", "qa", "system:authenticated"]


def test_token_review_authenticates_a_token_as_a_request_would(
    rbac_server: RunningServer,
) -> None:
    api = client.AuthenticationV1Api(_api(rbac_server, ADMIN))
    review = client.V1TokenReview(
        spec=client.V1TokenReviewSpec(token=BOB, audiences=["https://example.test"])
    )
    answer = api.create_token_review(review)
    assert isinstance(answer, client.V1TokenReview)
    assert answer.status.authenticated is True
    assert answer.status.user.username == "bob"
    assert answer.status.user.uid == "uid-bob"
    assert answer.status.user.groups == ["dev", "qa", "system:authenticated"]
    assert answer.status.audiences == ["https://example.test"]
    refused = api.create_token_review(
        client.V1TokenReview(spec=client.V1TokenReviewSpec(token="not-a-listed-token"))
    )
    assert not refused.status.authenticated
    assert refused.status.error == "invalid bearer token"
