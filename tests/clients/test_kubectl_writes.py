"""kubectl writes against a real ``kstore serve`` (clients.md §6, scenarios 3, 6 to 12, 16 and
20), on LMDB and on etcd: create (JSON and protobuf bodies), client-side apply (strategic
merge, the last-applied annotation) on ConfigMaps and Deployments, server-side apply with
conflicts, every patch type, label/annotate, replace with optimistic concurrency, validation,
delete, and diff's dry run."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from kubernetes import client

from tests.clients.kubectl import Kubectl
from tests.clients.manifests import configmap, deployment

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _get(k: Kubectl, *args: str) -> Any:
    return json.loads(k.ok("get", *args, "-o", "json"))


# ---------------------------------------------------------------- 3. create -f (strict)


def test_create_from_file_then_already_exists(k: Kubectl) -> None:
    k.write("cm1.yaml", configmap("cm1", {"a": "1"}, labels={"app": "demo"}))
    # Default validation is strict: kubectl fetches the OpenAPI document and asks the server
    # to validate (fieldValidation=Strict) rather than failing to download a schema.
    assert k.ok("create", "-f", "cm1.yaml").strip() == "configmap/cm1 created"
    again = k.fails("create", "-f", "cm1.yaml")
    assert again.stderr.strip() == (
        'Error from server (AlreadyExists): error when creating "cm1.yaml": '
        'configmaps "cm1" already exists'
    )


def test_strict_validation_rejects_an_unknown_field(k: Kubectl) -> None:
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typo\ndatax:\n  a: '1'\n"
    k.write("typo.yaml", manifest)
    result = k.fails("create", "-f", "typo.yaml")
    assert 'strict decoding error: unknown field "datax"' in result.stderr
    assert k.ok("create", "-f", "typo.yaml", "--validate=false").strip() == (
        "configmap/typo created"
    )
    assert "data" not in _get(k, "cm", "typo")


def test_create_from_file_of_a_create_only_review_with_validation_on(k: Kubectl) -> None:
    # A review has no PATCH operation in OpenAPI v3, so kubectl's validation turns to
    # /openapi/v2 (as protobuf) before it sends the review.
    manifest = (
        "apiVersion: authorization.k8s.io/v1\n"
        "kind: SelfSubjectAccessReview\n"
        "spec:\n"
        "  resourceAttributes: {verb: get, resource: configmaps, namespace: default}\n"
    )
    k.write("ssar.yaml", manifest)
    answer = json.loads(k.ok("create", "-f", "ssar.yaml", "-o", "json"))
    assert answer["kind"] == "SelfSubjectAccessReview"
    assert answer["status"]["allowed"] is True
    assert answer["spec"]["resourceAttributes"]["resource"] == "configmaps"


# ------------------------------------------------------------ 6. client-side apply


def test_client_side_apply_lifecycle(k: Kubectl) -> None:
    k.write("cm3.yaml", configmap("cm3", {"a": "1", "b": "2"}))
    assert k.ok("apply", "-f", "cm3.yaml").strip() == "configmap/cm3 created"
    assert k.ok("apply", "-f", "cm3.yaml").strip() == "configmap/cm3 unchanged"
    k.write("cm3.yaml", configmap("cm3", {"a": "1", "c": "3"}))
    assert k.ok("apply", "-f", "cm3.yaml").strip() == "configmap/cm3 configured"

    assert json.loads(k.ok("get", "cm", "cm3", "-o", "jsonpath={.data}")) == {"a": "1", "c": "3"}
    live = _get(k, "cm", "cm3")
    applied = json.loads(live["metadata"]["annotations"][LAST_APPLIED])
    assert applied["data"] == {"a": "1", "c": "3"}


def test_client_side_apply_of_a_deployment_merges_containers_by_name(k: Kubectl) -> None:
    k.write("web.yaml", deployment("web", "nginx:1.25"))
    assert k.ok("apply", "-f", "web.yaml").strip() == "deployment.apps/web created"
    assert k.ok("apply", "-f", "web.yaml").strip() == "deployment.apps/web unchanged"
    first = _get(k, "deploy", "web")
    assert first["metadata"]["generation"] == 1

    # Another writer adds an env var to the first container: not in the manifest, so the
    # next apply must keep it (a list replace would drop it, and the ports too).
    k.ok(
        "patch",
        "deploy",
        "web",
        "--type",
        "json",
        "-p",
        '[{"op":"add","path":"/spec/template/spec/containers/0/env",'
        '"value":[{"name":"MODE","value":"blue"}]}]',
    )
    k.write("web.yaml", deployment("web", "nginx:1.26", replicas=3))
    assert k.ok("apply", "-f", "web.yaml").strip() == "deployment.apps/web configured"

    live = _get(k, "deploy", "web")
    containers = live["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["web", "sidecar"]
    web, sidecar = containers
    assert web["image"] == "nginx:1.26"
    assert web["env"] == [{"name": "MODE", "value": "blue"}]
    assert web["ports"] == [{"containerPort": 80, "name": "http", "protocol": "TCP"}]
    assert sidecar["command"] == ["sleep", "infinity"]
    assert live["spec"]["replicas"] == 3
    # Two spec changes since the create (the env patch and this apply).
    assert live["metadata"]["generation"] == 3
    applied = json.loads(live["metadata"]["annotations"][LAST_APPLIED])
    assert applied["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"

    # Dropping the sidecar from the manifest removes it (it was in the last-applied state).
    manifest = yaml.safe_load(deployment("web", "nginx:1.26", replicas=3))
    del manifest["spec"]["template"]["spec"]["containers"][1]
    k.write("web.yaml", yaml.safe_dump(manifest))
    assert k.ok("apply", "-f", "web.yaml").strip() == "deployment.apps/web configured"
    containers = _get(k, "deploy", "web")["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["web"]
    assert containers[0]["env"] == [{"name": "MODE", "value": "blue"}]


# ------------------------------------------------------------ 7. server-side apply


def _managers(obj: dict[str, Any]) -> dict[str, str]:
    return {e["manager"]: e["operation"] for e in obj["metadata"].get("managedFields", [])}


def test_server_side_apply_creates_updates_and_reports_conflicts(k: Kubectl) -> None:
    k.write("cm4.yaml", configmap("cm4", {"x": "1"}))
    created = k.run("apply", "--server-side", "-f", "cm4.yaml", "-v=6")
    assert created.code == 0, created
    assert created.stdout.strip() == "configmap/cm4 serverside-applied"
    assert 'verb="PATCH"' in created.stderr and 'status="201 Created"' in created.stderr
    updated = k.run("apply", "--server-side", "-f", "cm4.yaml", "-v=6")
    assert updated.stdout.strip() == "configmap/cm4 serverside-applied"
    assert 'verb="PATCH"' in updated.stderr and 'status="200 OK"' in updated.stderr
    live = _get(k, "cm", "cm4", "--show-managed-fields")
    assert _managers(live) == {"kubectl": "Apply"}

    k.write("cm4.yaml", configmap("cm4", {"x": "2"}))
    conflict = k.fails("apply", "--server-side", "-f", "cm4.yaml", "--field-manager=other")
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .data.x' in conflict.stderr
    forced = k.ok(
        "apply", "--server-side", "-f", "cm4.yaml", "--field-manager=other", "--force-conflicts"
    )
    assert forced.strip() == "configmap/cm4 serverside-applied"
    live = _get(k, "cm", "cm4", "--show-managed-fields")
    assert live["data"] == {"x": "2"}
    # kubectl lost its only field to the forced apply, so its entry is gone.
    assert _managers(live) == {"other": "Apply"}


def test_server_side_apply_of_a_deployment(k: Kubectl) -> None:
    k.write("web.yaml", deployment("web", "nginx:1.25"))
    assert k.ok("apply", "--server-side", "-f", "web.yaml").strip() == (
        "deployment.apps/web serverside-applied"
    )
    k.ok("scale", "deploy", "web", "--replicas=5")
    # The scale's manager now owns replicas; applying the manifest's 2 conflicts.
    conflict = k.fails("apply", "--server-side", "-f", "web.yaml")
    assert ".spec.replicas" in conflict.stderr
    k.write("web.yaml", deployment("web", "nginx:1.26", replicas=5))
    k.ok("apply", "--server-side", "--force-conflicts", "-f", "web.yaml")
    live = _get(k, "deploy", "web")
    assert live["spec"]["replicas"] == 5
    images = [c["image"] for c in live["spec"]["template"]["spec"]["containers"]]
    assert images == ["nginx:1.26", "busybox:1.36"]


# ------------------------------------------------------------------- 8. patch types


def test_every_patch_type(k: Kubectl) -> None:
    k.write("cm1.yaml", configmap("cm1", {"a": "1"}))
    k.ok("create", "-f", "cm1.yaml")
    merge = k.ok("patch", "cm", "cm1", "--type", "merge", "-p", '{"data":{"m":"1"}}')
    assert merge.strip() == "configmap/cm1 patched"
    json_patch = k.ok(
        "patch", "cm", "cm1", "--type", "json", "-p", '[{"op":"add","path":"/data/j","value":"2"}]'
    )
    assert json_patch.strip() == "configmap/cm1 patched"
    strategic = k.ok("patch", "cm", "cm1", "-p", '{"data":{"s":"3"}}')
    assert strategic.strip() == "configmap/cm1 patched"
    assert sorted(_get(k, "cm", "cm1")["data"]) == ["a", "j", "m", "s"]

    bad = k.fails(
        "patch",
        "cm",
        "cm1",
        "--type",
        "json",
        "-p",
        '[{"op":"replace","path":"/data/missing/deeper","value":"x"}]',
    )
    assert bad.stderr.startswith("The request is invalid")
    assert sorted(_get(k, "cm", "cm1")["data"]) == ["a", "j", "m", "s"]


def test_edit_with_an_editor_script(k: Kubectl) -> None:
    k.write("cm1.yaml", configmap("cm1", {"a": "1"}))
    k.ok("create", "-f", "cm1.yaml")
    editor = k.write("editor.sh", '#!/bin/sh\nsed -i \'s/a: "1"/a: "2"/\' "$1"\n')
    editor.chmod(0o755)
    edited = k.run("edit", "cm", "cm1", env={"EDITOR": str(editor)})
    assert edited.code == 0, edited
    assert edited.stdout.strip() == "configmap/cm1 edited"
    assert _get(k, "cm", "cm1")["data"] == {"a": "2"}


# ----------------------------------------------------------------- 9. label/annotate


def test_label_annotate_and_selectors(k: Kubectl) -> None:
    k.write("cm1.yaml", configmap("cm1", {"a": "1"}))
    k.write("cm2.yaml", configmap("cm2", {"a": "2"}))
    k.ok("create", "-f", "cm1.yaml", "-f", "cm2.yaml")
    assert k.ok("label", "cm", "cm1", "env=prod").strip() == "configmap/cm1 labeled"
    assert k.ok("get", "cm", "-l", "env=prod", "-o", "name").split() == ["configmap/cm1"]
    assert k.ok("get", "cm", "-l", "env!=prod", "-o", "name").split() == ["configmap/cm2"]
    assert k.ok("label", "cm", "cm1", "env-").strip() == "configmap/cm1 unlabeled"
    assert k.run("get", "cm", "-l", "env=prod", "-o", "name").stdout == ""
    assert k.ok("annotate", "cm", "cm1", "note=hi").strip() == "configmap/cm1 annotated"
    assert k.ok("get", "cm", "cm1", "-o", "jsonpath={.metadata.annotations.note}") == "hi"
    selected = k.ok("get", "cm", "--field-selector", "metadata.name=cm1", "-o", "name")
    assert selected.split() == ["configmap/cm1"]
    unsupported = k.fails("get", "cm", "--field-selector", "data.a=1")
    assert "field label not supported: data.a" in unsupported.stderr


# -------------------------------------------------------- 10. replace + concurrency


def test_replace_and_optimistic_concurrency(k: Kubectl) -> None:
    k.write("cm1.yaml", configmap("cm1", {"a": "1"}))
    k.ok("create", "-f", "cm1.yaml")
    live = yaml.safe_load(k.ok("get", "cm", "cm1", "-o", "yaml"))
    live["data"]["a"] = "changed"
    k.write("f.yaml", yaml.safe_dump(live))
    assert k.ok("replace", "-f", "f.yaml").strip() == "configmap/cm1 replaced"
    stale = k.fails("replace", "-f", "f.yaml")
    assert stale.stderr.strip() == (
        'Error from server (Conflict): error when replacing "f.yaml": Operation cannot be '
        'fulfilled on configmaps "cm1": the object has been modified; please apply your '
        "changes to the latest version and try again"
    )
    assert _get(k, "cm", "cm1")["data"] == {"a": "changed"}


# ------------------------------------------------------------------- 11. invalid


def test_missing_name_is_invalid_and_generate_name_works(k: Kubectl) -> None:
    k.write("noname.yaml", configmap(data={"a": "1"}))
    result = k.fails("create", "-f", "noname.yaml")
    assert result.stderr.strip() == (
        'The ConfigMap "" is invalid: metadata.name: Required value: '
        "name or generateName is required"
    )
    k.write("gen.yaml", configmap(data={"a": "1"}, generate_name="gen-"))
    out = k.ok("create", "-f", "gen.yaml").strip()
    assert out.startswith("configmap/gen-") and out.endswith(" created")
    name = out.split()[0].split("/")[1]
    assert len(name) == len("gen-") + 5
    assert k.ok("get", "cm", "-o", "name").split() == [f"configmap/{name}"]


def test_invalid_data_key_lists_the_field_cause(k: Kubectl) -> None:
    k.write("bad.yaml", configmap("bad", {"bad key": "1"}))
    result = k.fails("create", "-f", "bad.yaml")
    assert result.stderr.startswith('The ConfigMap "bad" is invalid: data[bad key]: Invalid value')


# -------------------------------------------------------------------- 12. delete


def test_delete_forms(k: Kubectl, namespace: str) -> None:
    for name in ("cm1", "cm2", "cm3"):
        k.write(f"{name}.yaml", configmap(name, {"a": "1"}))
        k.ok("create", "-f", f"{name}.yaml")
    deleted = k.ok("delete", "cm", "cm1")
    assert deleted.strip() == f'configmap "cm1" deleted from {namespace} namespace'
    assert k.fails("get", "cm", "cm1").stderr.strip() == (
        'Error from server (NotFound): configmaps "cm1" not found'
    )
    again = k.fails("delete", "cm", "cm1")
    assert again.stderr.strip() == 'Error from server (NotFound): configmaps "cm1" not found'
    by_file = k.ok("delete", "-f", "cm3.yaml")
    assert by_file.strip() == f'configmap "cm3" deleted from {namespace} namespace'
    k.write("cm4.yaml", configmap("cm4", {"a": "1"}))
    k.ok("create", "-f", "cm4.yaml")
    every = k.ok("delete", "cm", "--all").strip().splitlines()
    assert sorted(every) == [
        f'configmap "cm2" deleted from {namespace} namespace',
        f'configmap "cm4" deleted from {namespace} namespace',
    ]
    assert k.run("get", "cm").stderr.strip() == f"No resources found in {namespace} namespace."


def test_delete_namespace_removes_its_contents(kubectl: Kubectl, core: client.CoreV1Api) -> None:
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="doomed")))
    k = kubectl.in_namespace("doomed")
    k.write("cm1.yaml", configmap("cm1", {"a": "1"}))
    k.ok("create", "-f", "cm1.yaml")
    out = kubectl.ok("delete", "namespace", "doomed", "--timeout=30s")
    assert out.strip() == 'namespace "doomed" deleted'
    assert kubectl.fails("get", "ns", "doomed").stderr.strip() == (
        'Error from server (NotFound): namespaces "doomed" not found'
    )
    assert core.list_namespaced_config_map("doomed").items == []


def test_multi_document_manifest_with_its_namespace(kubectl: Kubectl) -> None:
    manifest = "---\n".join(
        [
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
            configmap("conf", {"a": "1"}).replace("name: conf", "name: conf\n  namespace: shop"),
            deployment("api", "api:1").replace("name: api\n", "name: api\n  namespace: shop\n", 1),
        ]
    )
    kubectl.write("shop.yaml", manifest)
    created = kubectl.ok("apply", "-f", "shop.yaml").splitlines()
    assert created == [
        "namespace/shop created",
        "configmap/conf created",
        "deployment.apps/api created",
    ]
    applied = kubectl.ok("apply", "--server-side", "-f", "shop.yaml").splitlines()
    assert applied == [
        "namespace/shop serverside-applied",
        "configmap/conf serverside-applied",
        "deployment.apps/api serverside-applied",
    ]
    listed = kubectl.ok("get", "all,cm", "-n", "shop", "-o", "name").split()
    assert listed == ["deployment.apps/api", "configmap/conf"]
    # The namespace goes first and takes its contents with it, so the other two may already be
    # gone when kubectl gets to them.
    deleted = kubectl.ok("delete", "-f", "shop.yaml", "--ignore-not-found").splitlines()
    assert deleted[0] == 'namespace "shop" deleted'
    assert kubectl.fails("get", "ns", "shop").stderr.strip() == (
        'Error from server (NotFound): namespaces "shop" not found'
    )


# ----------------------------------------------------------------- 16. diff (dry run)


def test_diff_shows_changes_without_applying_them(k: Kubectl) -> None:
    k.write("cm3.yaml", configmap("cm3", {"a": "1", "b": "2"}))
    k.ok("apply", "-f", "cm3.yaml")
    before = _get(k, "cm", "cm3")
    assert k.run("diff", "-f", "cm3.yaml").code == 0

    k.write("cm3.yaml", configmap("cm3", {"a": "1", "c": "3"}))
    diff = k.run("diff", "-f", "cm3.yaml")
    assert diff.code == 1, diff
    lines = diff.stdout.splitlines()
    assert lines[0].startswith("diff -u -N")
    assert '-  b: "2"' in lines and '+  c: "3"' in lines
    after = _get(k, "cm", "cm3")
    assert after == before


def _changed_images(diff: str) -> list[str]:
    """The image lines a unified diff removes or adds, as ``-image``/``+image``."""
    found = re.findall(r"^([-+])\s+(?:- )?image: (\S+)$", diff, re.MULTILINE)
    return [sign + image for sign, image in found]


def test_diff_of_a_deployment_and_server_side_diff(k: Kubectl) -> None:
    k.write("web.yaml", deployment("web", "nginx:1.25"))
    k.ok("apply", "-f", "web.yaml")
    before = _get(k, "deploy", "web")
    k.write("web.yaml", deployment("web", "nginx:1.26"))
    diff = k.run("diff", "-f", "web.yaml")
    assert diff.code == 1, diff
    assert _changed_images(diff.stdout) == ["-nginx:1.25", "+nginx:1.26"]
    server_side = k.run("diff", "--server-side", "-f", "web.yaml")
    assert server_side.code == 1, server_side
    assert _changed_images(server_side.stdout) == ["-nginx:1.25", "+nginx:1.26"]
    assert _get(k, "deploy", "web") == before


# ---------------------------------------------------- 20. protobuf bodies (generators)


@pytest.mark.parametrize(
    ("args", "created"),
    [
        (("configmap", "x", "--from-literal=a=b"), "configmap/x created"),
        (("secret", "generic", "s", "--from-literal=k=v"), "secret/s created"),
        (("deployment", "d", "--image=nginx:1.27", "--replicas=2"), "deployment.apps/d created"),
        (("serviceaccount", "robot"), "serviceaccount/robot created"),
    ],
)
def test_generator_commands_send_protobuf(k: Kubectl, args: tuple[str, ...], created: str) -> None:
    result = k.run("create", *args, "-v=8")
    assert result.code == 0, result
    assert result.stdout.strip() == created
    # The typed clients behind the generators write Kubernetes protobuf, not JSON.
    assert "Content-Type: application/vnd.kubernetes.protobuf" in result.stderr


def test_created_from_protobuf_reads_back_as_json(k: Kubectl) -> None:
    k.ok("create", "configmap", "x", "--from-literal=a=b", "--from-literal=c=d")
    obj = _get(k, "cm", "x")
    assert obj["data"] == {"a": "b", "c": "d"}
    manifest = k.ok("create", "configmap", "y", "--from-literal=a=b", "--dry-run=client", "-o=yaml")
    assert k.ok("create", "-f", "-", stdin=manifest).strip() == "configmap/y created"
    k.ok("create", "secret", "generic", "s", "--from-literal=k=v")
    secret = _get(k, "secret", "s")
    assert secret["type"] == "Opaque"
    assert secret["data"] == {"k": "dg=="}


def test_service_accounts_apply_list_and_keep_only_secret_names(k: Kubectl) -> None:
    manifest = (
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: deployer\n"
        "secrets:\n- name: s1\n  namespace: elsewhere\n"
        "imagePullSecrets:\n- name: registry\nautomountServiceAccountToken: false\n"
    )
    k.write("sa.yaml", manifest)
    assert k.ok("apply", "-f", "sa.yaml").strip() == "serviceaccount/deployer created"
    sa = _get(k, "sa", "deployer")
    # The API server keeps only the name of each secret reference.
    assert sa["secrets"] == [{"name": "s1"}]
    assert sa["imagePullSecrets"] == [{"name": "registry"}]
    assert sa["automountServiceAccountToken"] is False
    rows = [line.split() for line in k.ok("get", "serviceaccounts").splitlines()]
    assert rows[0] == ["NAME", "SECRETS", "AGE"]
    # Beside the namespace's ``default`` account, which the serviceaccount controller makes.
    by_name = {row[0]: row for row in rows[1:]}
    assert by_name["deployer"][:2] == ["deployer", "1"]
    assert set(by_name) <= {"default", "deployer"}


def test_create_job_then_get_prints_the_job_table(k: Kubectl) -> None:
    assert k.ok("create", "job", "pi", "--image=perl:5.34").strip() == "job.batch/pi created"
    job = _get(k, "job", "pi")
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = job["spec"]["template"]["metadata"]["labels"]
    assert labels["job-name"] == labels["batch.kubernetes.io/job-name"] == "pi"
    assert labels["controller-uid"] == uid
    assert job["spec"]["backoffLimit"] == 6
    assert job["spec"]["completionMode"] == "NonIndexed"
    rows = [line.split() for line in k.ok("get", "jobs").splitlines()]
    assert rows[0] == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert rows[1][:3] == ["pi", "Running", "0/1"]
    wide = [line.split() for line in k.ok("get", "job", "pi", "-o", "wide").splitlines()]
    assert wide[0][-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1][-3:] == ["pi", "perl:5.34", f"batch.kubernetes.io/controller-uid={uid}"]


def test_apply_cron_job_then_get_prints_the_cron_job_table(k: Kubectl) -> None:
    manifest = (
        "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: nightly\n"
        "spec:\n  schedule: '0 3 * * *'\n  timeZone: Etc/UTC\n  jobTemplate:\n    spec:\n"
        "      template:\n        spec:\n          restartPolicy: OnFailure\n"
        "          containers:\n          - name: backup\n            image: busybox\n"
    )
    k.write("cj.yaml", manifest)
    assert k.ok("apply", "-f", "cj.yaml").strip() == "cronjob.batch/nightly created"
    cron_job = _get(k, "cj", "nightly")
    assert cron_job["spec"]["concurrencyPolicy"] == "Allow"
    assert cron_job["spec"]["successfulJobsHistoryLimit"] == 3
    rows = [line.split() for line in k.ok("get", "cronjobs").splitlines()]
    assert rows[0] == [
        "NAME",
        "SCHEDULE",
        "TIMEZONE",
        "SUSPEND",
        "ACTIVE",
        "LAST",
        "SCHEDULE",
        "AGE",
    ]
    assert rows[1][:8] == ["nightly", "0", "3", "*", "*", "*", "Etc/UTC", "False"]
    bad = manifest.replace("'0 3 * * *'", "'0 3 * *'").replace("nightly", "broken")
    k.write("bad.yaml", bad)
    failed = k.fails("apply", "-f", "bad.yaml")
    assert "expected exactly 5 fields, found 4: [0 3 * *]" in failed.stderr


def test_create_cron_job_and_a_job_from_it(k: Kubectl) -> None:
    created = k.ok("create", "cronjob", "tick", "--image=busybox", "--schedule=*/1 * * * *")
    assert created.strip() == "cronjob.batch/tick created"
    cron_job = _get(k, "cronjob", "tick")
    assert cron_job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] == (
        "OnFailure"
    )
    assert k.ok("create", "job", "manual", "--from=cronjob/tick").strip() == (
        "job.batch/manual created"
    )
    job = _get(k, "job", "manual")
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    owner = job["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("CronJob", "tick")
    assert owner["uid"] == cron_job["metadata"]["uid"]


def test_create_pdb_then_get_prints_the_disruption_budget_table(k: Kubectl) -> None:
    created = k.ok("create", "pdb", "web", "--selector=app=web", "--min-available=2")
    assert created.strip() == "poddisruptionbudget.policy/web created"
    pdb = _get(k, "pdb", "web")
    assert pdb["spec"] == {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}
    assert pdb["status"]["disruptionsAllowed"] == 0
    manifest = (
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: api\n"
        "spec:\n  maxUnavailable: 25%\n  selector:\n    matchLabels:\n      app: api\n"
    )
    k.write("pdb.yaml", manifest)
    assert k.ok("apply", "-f", "pdb.yaml").strip() == "poddisruptionbudget.policy/api created"
    rows = [line.split() for line in k.ok("get", "poddisruptionbudgets").splitlines()]
    assert rows[0] == [
        "NAME",
        "MIN",
        "AVAILABLE",
        "MAX",
        "UNAVAILABLE",
        "ALLOWED",
        "DISRUPTIONS",
        "AGE",
    ]
    assert [row[:4] for row in rows[1:]] == [["api", "N/A", "25%", "0"], ["web", "2", "N/A", "0"]]
    both = manifest.replace("  maxUnavailable: 25%\n", "  maxUnavailable: 1\n  minAvailable: 1\n")
    k.write("both.yaml", both.replace("name: api", "name: both"))
    failed = k.fails("apply", "-f", "both.yaml")
    assert "minAvailable and maxUnavailable cannot be both set" in failed.stderr


def test_apply_ingress_then_get_prints_the_ingress_table(k: Kubectl) -> None:
    manifest = (
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\n"
        "spec:\n  ingressClassName: nginx\n  tls:\n  - hosts: [www.example.com]\n"
        "    secretName: web-tls\n  rules:\n  - host: www.example.com\n    http:\n"
        "      paths:\n      - path: /\n        pathType: Prefix\n        backend:\n"
        "          service:\n            name: web\n            port:\n              number: 80\n"
    )
    k.write("ing.yaml", manifest)
    assert k.ok("apply", "-f", "ing.yaml").strip() == "ingress.networking.k8s.io/web created"
    ingress = _get(k, "ing", "web")
    assert ingress["metadata"]["generation"] == 1
    assert ingress["spec"]["rules"][0]["http"]["paths"][0]["pathType"] == "Prefix"
    rows = [line.split() for line in k.ok("get", "ingresses").splitlines()]
    assert rows[0] == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert rows[1][:3] == ["web", "nginx", "www.example.com"]
    assert rows[1][3:5] == ["80,", "443"]
    k.write("bad.yaml", manifest.replace("        pathType: Prefix\n", ""))
    result = k.fails("apply", "-f", "bad.yaml")
    assert "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified" in (
        result.stderr
    )


def test_apply_ingress_class_then_get_prints_its_table(k: Kubectl) -> None:
    manifest = (
        "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: nginx\n"
        "spec:\n  controller: k8s.io/ingress-nginx\n  parameters:\n"
        "    apiGroup: k8s.example.com\n    kind: IngressParameters\n    name: external-lb\n"
    )
    k.write("ingclass.yaml", manifest)
    assert k.ok("apply", "-f", "ingclass.yaml").strip() == (
        "ingressclass.networking.k8s.io/nginx created"
    )
    assert _get(k, "ingressclass", "nginx")["spec"]["parameters"]["scope"] == "Cluster"
    rows = [line.split() for line in k.ok("get", "ingressclasses").splitlines()]
    assert rows[0] == ["NAME", "CONTROLLER", "PARAMETERS", "AGE"]
    assert rows[1][:3] == [
        "nginx",
        "k8s.io/ingress-nginx",
        "IngressParameters.k8s.example.com/external-lb",
    ]
    k.ok("delete", "ingressclass", "nginx")
