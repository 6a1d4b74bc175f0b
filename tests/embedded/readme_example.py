"""The README's embedding example, run as it is by tests/embedded/test_readme_example.py."""

import tempfile

import kstore
from kstore.errors import Conflict

path = tempfile.mkdtemp()  # any directory: kstore keeps its LMDB files there
with kstore.open(f"lmdb://{path}") as client:
    deployments = client.resource("apps/v1", "deployments", namespace="default")
    web = deployments.create(
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
                },
            },
        }
    )
    print(web["metadata"]["generation"], web["spec"]["strategy"]["type"])  # 1 RollingUpdate

    with deployments.watch(resource_version=web["metadata"]["resourceVersion"]) as watch:
        web = deployments.patch("web", {"spec": {"replicas": 3}})  # JSON merge patch
        event = watch.next(timeout=5)
        print(event.type, event.object["spec"]["replicas"])  # MODIFIED 3

    web["status"] = {"replicas": 3, "readyReplicas": 3}
    web = deployments.update_status(web)  # the status subresource
    print(web["metadata"]["generation"], web["status"]["readyReplicas"])  # 2 3

    stale = {**web, "metadata": {**web["metadata"], "resourceVersion": "1"}}
    try:
        deployments.update(stale)
    except Conflict as err:
        print(err.code, err.message)  # 409 Operation cannot be fulfilled on deployments.apps ...

    old_api = client.resource("apps/v1beta1", "deployments", namespace="default")
    print(old_api.get("web")["apiVersion"])  # apps/v1beta1: any served version, one object

    gone = deployments.delete("web")
    print("deleted", gone["metadata"]["name"])  # deleted web
