"""The ``kstore`` command: ``convert`` (like ``kubectl convert``) and the admin verbs.

Every verb prints a one-line reason and exits with status 1 on input it cannot handle; nothing
prints a traceback for a user error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

import orjson

from kstore.api.gvk import GroupVersion, gvk_of
from kstore.api.kinds import builtin_scheme
from kstore.codec.recognizer import (
    MEDIA_TYPE_PROTOBUF,
    PROTOBUF_MAGIC,
    serializer_for_content,
    serializer_for_media_type,
)
from kstore.codec.yaml import MEDIA_TYPE_YAML
from kstore.errors import BadRequest, KStoreError

__all__ = ["main"]

_OUTPUT_MEDIA_TYPES = {
    "json": "application/json",
    "yaml": MEDIA_TYPE_YAML,
    "protobuf": MEDIA_TYPE_PROTOBUF,
}


def _read_input(path: str, stdin: BinaryIO) -> bytes:
    if path == "-":
        return stdin.read()
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise BadRequest(f"cannot read {path}: {exc.strerror}") from None


def _input_format(data: bytes) -> str:
    if data.startswith(PROTOBUF_MAGIC):
        return "protobuf"
    return "json" if data.lstrip()[:1] == b"{" else "yaml"


def convert(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Read one object, convert it through the hub, write it in the requested version/format."""
    scheme = builtin_scheme()
    data = _read_input(args.filename, stdin)
    if not data.strip():
        raise BadRequest("no object in the input")
    obj = serializer_for_content(data).decode(data)
    gvk = gvk_of(obj)
    if not scheme.recognizes(gvk):
        raise BadRequest(f'no kind "{gvk.kind}" is registered for version "{gvk.api_version}"')
    target = args.output_version or gvk.api_version
    if GroupVersion.parse(target).group != gvk.group:
        raise BadRequest(f"{gvk.kind} of group {gvk.group!r} cannot be converted to {target}")
    if args.validate:
        scheme.default(obj)
        scheme.validate(scheme.to_hub(obj))
    out = scheme.convert(obj, target)
    output = args.output or ("json" if _input_format(data) == "protobuf" else _input_format(data))
    if output == "json":
        stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        stdout.write(serializer_for_media_type(_OUTPUT_MEDIA_TYPES[output]).encode(out))


def serve(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Serve the Kubernetes REST API until SIGTERM/SIGINT (see kstore.server.serve)."""
    from kstore.server.serve import serve as run_server

    run_server(_serve_config(args))


def _serve_config(args: argparse.Namespace, **overrides: Any) -> Any:
    """The ServeConfig the serve flags describe (shared by serve and the admin verbs)."""
    from pathlib import Path

    from kstore.controllers import enabled_controllers
    from kstore.controllers.leader import LeaderElectionConfig
    from kstore.server.filters import FilterConfig
    from kstore.server.filters.authentication import load_token_file
    from kstore.server.filters.authorization import parse_authorization_modes
    from kstore.server.serve import ServeConfig, parse_duration, parse_runtime_config

    if args.storage_backend == "etcd" and not args.etcd_servers:
        raise BadRequest("--etcd-servers must be given with --storage-backend etcd")
    fields: dict[str, Any] = {
        "data_dir": Path(args.data_dir),
        "storage_backend": args.storage_backend,
        "etcd_servers": tuple(s for s in args.etcd_servers.split(",") if s),
        "etcd_prefix": args.etcd_prefix,
        "storage_media_type": args.storage_media_type,
        "runtime_config": parse_runtime_config(args.runtime_config),
        "encryption_provider_config": (
            Path(args.encryption_provider_config) if args.encryption_provider_config else None
        ),
    }
    if args.verb == "serve":
        if args.token_auth_file:
            # Read once here so that a bad file stops the server before the store opens.
            load_token_file(Path(args.token_auth_file))
        fields.update(
            bind_address=args.bind_address,
            port=args.port,
            advertise_address=args.advertise_address or None,
            endpoint_reconciler_type=args.endpoint_reconciler_type,
            workers=args.workers,
            watch_cache=args.watch_cache,
            event_ttl_seconds=parse_duration(args.event_ttl),
            service_cluster_ip_range=args.service_cluster_ip_range,
            service_node_port_range=args.service_node_port_range,
            compaction_interval_seconds=parse_duration(args.etcd_compaction_interval),
            log_level=args.log_level,
            filters=FilterConfig(
                max_requests_inflight=args.max_requests_inflight,
                max_mutating_requests_inflight=args.max_mutating_requests_inflight,
                request_timeout_seconds=parse_duration(args.request_timeout),
                cors_allowed_origins=tuple(o for o in args.cors_allowed_origins.split(",") if o),
                token_auth_file=Path(args.token_auth_file) if args.token_auth_file else None,
                anonymous_auth=args.anonymous_auth,
                service_account_signing_key_file=(
                    Path(args.service_account_signing_key_file)
                    if args.service_account_signing_key_file
                    else None
                ),
                service_account_key_files=tuple(Path(p) for p in args.service_account_key_file),
                service_account_issuers=tuple(args.service_account_issuer),
                api_audiences=tuple(a for a in args.api_audiences.split(",") if a),
                service_account_max_token_expiration_seconds=int(
                    parse_duration(args.service_account_max_token_expiration)
                ),
                authorization_modes=parse_authorization_modes(args.authorization_mode),
                verbosity=args.v,
            ),
            audit_log_path=args.audit_log_path or None,
            tls_cert_file=Path(args.tls_cert_file) if args.tls_cert_file else None,
            tls_private_key_file=(
                Path(args.tls_private_key_file) if args.tls_private_key_file else None
            ),
            secure_port=args.secure_port,
            enable_admission_plugins=_names(args.enable_admission_plugins),
            disable_admission_plugins=_names(args.disable_admission_plugins),
            admission_control_config_file=(
                Path(args.admission_control_config_file)
                if args.admission_control_config_file
                else None
            ),
            webhook_service_resolver=tuple(
                rule for value in args.webhook_service_resolver for rule in _names(value)
            ),
            conversion_webhook_timeout_seconds=parse_duration(args.conversion_webhook_timeout),
            controllers=tuple(c for c in args.controllers.split(",") if c),
            root_ca_file=Path(args.root_ca_file) if args.root_ca_file else None,
            leader_election=LeaderElectionConfig(
                lease_duration_seconds=parse_duration(args.leader_elect_lease_duration),
                renew_deadline_seconds=parse_duration(args.leader_elect_renew_deadline),
                retry_period_seconds=parse_duration(args.leader_elect_retry_period),
            ),
        )
        enabled_controllers(fields["controllers"])  # unknown names stop the server here
    fields.update(overrides)
    return ServeConfig(**fields)


def encryption_rewrite(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Re-encrypt every object of the resources the EncryptionConfiguration names with its
    current first key (objects already written with it are left alone): the storage
    migration of those resources."""
    from kstore.storage.encryption import load_encryption_config

    encryption = load_encryption_config(args.encryption_provider_config)
    _run_storage_migration(args, encryption.covers, stdout)


def migrate(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Copy a store into another (an empty one) and follow its changes (see
    kstore.storage.migrate)."""
    import signal
    import tempfile
    import threading
    from pathlib import Path

    from kstore.embedded import storage_location
    from kstore.storage.maintenance import migrate_between

    source, target = storage_location(args.source), storage_location(args.target)
    stop = threading.Event()
    previous = {
        sig: signal.signal(sig, lambda _signum, _frame: stop.set())
        for sig in (signal.SIGINT, signal.SIGTERM)
    }

    def say(line: str) -> None:
        stdout.write(line.encode() + b"\n")
        stdout.flush()

    try:
        result = migrate_between(
            source,
            target,
            work_dir=Path(args.work_dir or tempfile.gettempdir()),
            force=args.force,
            follow=args.follow,
            stop=stop,
            on_progress=say,
            verify=args.verify,
        )
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if result.verified:
        for difference in result.differences[:100]:
            say(f"differs: {difference.key}: {difference.reason}")
        if result.differences:
            raise BadRequest(
                f"{len(result.differences)} keys differ between the source and the target"
            )
        say("verified: the source and the target hold the same objects")


def storage_migrate(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Rewrite every object not stored in its current version, media type or key."""
    resources = {r.strip() for r in args.resource if r.strip()}

    def covers(group: str, plural: str) -> bool:
        return not resources or plural in resources or f"{plural}.{group}" in resources

    _run_storage_migration(args, covers, stdout)


def _run_storage_migration(args: argparse.Namespace, covers: Any, stdout: BinaryIO) -> None:
    from kstore.registry.registry import StoreRegistry
    from kstore.registry.storage_migration import migrate_storage, serve_custom_resources
    from kstore.server.serve import open_registry
    from kstore.storage.encryption import RewriteResult

    # No watch cache and no compaction: the rewrite only reads and rewrites through storage.
    registry, backend = open_registry(
        _serve_config(args, watch_cache=False, compaction_interval_seconds=0.0)
    )
    try:
        assert isinstance(registry, StoreRegistry)
        serve_custom_resources(registry)

        def done(r: RewriteResult) -> None:
            name = f"{r.resource}.{r.group}" if r.group else r.resource
            line = f"{name}: {r.examined} examined, {r.rewritten} rewritten, {r.gone} gone\n"
            stdout.write(line.encode())
            stdout.flush()

        def stored(name: str, version: str) -> None:
            stdout.write(f"{name}: status.storedVersions set to [{version}]\n".encode())

        migrate_storage(registry, covers, on_done=done, on_stored_versions=stored)
    finally:
        registry.close()
        backend.close()


def check(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Decode every stored value through its resource's transformer and codec."""
    from kstore.registry.registry import StoreRegistry
    from kstore.registry.storage_migration import check_values, serve_custom_resources
    from kstore.server.serve import open_registry
    from kstore.storage.lmdb import LmdbConfig
    from kstore.storage.maintenance import stored_values

    config = _serve_config(args, watch_cache=False, compaction_interval_seconds=0.0)
    if args.storage_backend == "lmdb":
        location: tuple[str, Any] = ("lmdb", LmdbConfig(path=args.data_dir))
    else:
        location = ("etcd", _snapshot_store(args)[1])
    registry, backend = open_registry(config)
    backend_open = True
    try:
        assert isinstance(registry, StoreRegistry)
        serve_custom_resources(registry)
        if args.storage_backend == "lmdb":
            # One process opens an LMDB store once: the values are read after the backend is
            # closed (decoding needs only the registry's codecs and transformers).
            registry.close()
            backend.close()
            backend_open = False
        result = check_values(registry, stored_values(location))
    finally:
        registry.close()
        if backend_open:
            backend.close()
    lines = [f"{'RESOURCE':<48} KEYS"]
    lines += [f"{name:<48} {count}" for name, count in sorted(result.resources.items())]
    lines += [f"undecodable: {key}: {reason}" for key, reason in result.undecodable]
    lines += [f"outside the layout: {key}" for key in result.outside]
    lines.append(
        f"{result.keys} keys, {len(result.undecodable)} undecodable, "
        f"{len(result.outside)} outside the layout"
    )
    stdout.write(("\n".join(lines) + "\n").encode())
    if not result.ok:
        raise BadRequest("the store has values that do not decode or keys outside its layout")


def defrag(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Compact the store's files (LMDB: a compacted copy swapped in; etcd: each member)."""
    from kstore.storage.lmdb import LmdbConfig
    from kstore.storage.maintenance import defragment

    backend, where = _snapshot_store(args)
    location = (backend, LmdbConfig(path=where) if backend == "lmdb" else where)
    for name, before, after in defragment(location):
        stdout.write(f"{name}: {before} bytes before, {after} after\n".encode())


def _snapshot_store(args: argparse.Namespace) -> tuple[str, Any]:
    """("lmdb", data directory) or ("etcd", EtcdConfig) from the snapshot verbs' flags."""
    from pathlib import Path

    from kstore.storage.etcd import EtcdConfig

    backend = args.storage_backend or ("etcd" if args.etcd_servers else "lmdb")
    if backend == "lmdb":
        return backend, Path(args.data_dir)
    servers = tuple(s for s in args.etcd_servers.split(",") if s)
    if not servers:
        raise BadRequest("--etcd-servers must be given with --storage-backend etcd")
    return backend, EtcdConfig(endpoints=servers, prefix=args.etcd_prefix, compaction_interval=0)


def _print_snapshot(info: Any, output: str, stdout: BinaryIO) -> None:
    if output == "json":
        stdout.write(orjson.dumps(info.as_dict(), option=orjson.OPT_INDENT_2) + b"\n")
        return
    lines = [
        f"file:           {info.path}",
        f"format version: {info.version}",
        f"revision:       {info.revision}",
        f"source:         {info.source}"
        + (f" (key prefix {info.key_prefix})" if info.key_prefix else ""),
        f"created:        {info.created}",
        f"size:           {info.size} bytes",
        f"keys:           {info.entries} ({info.value_bytes} bytes of values, "
        f"{info.with_ttl} with a TTL)",
        f"sha256:         {info.sha256}",
        "",
        f"{'RESOURCE':<40} KEYS",
    ]
    lines += [f"{name:<40} {count}" for name, count in sorted(info.resources.items())]
    stdout.write(("\n".join(lines) + "\n").encode())


def _file_errors(run: Any) -> Any:
    """``run`` with the operating system's errors (a missing directory, no permission) as a
    one-line BadRequest."""

    def wrapped(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
        try:
            run(args, stdin, stdout)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise BadRequest(f"{where}{exc.strerror or exc}") from None

    return wrapped


@_file_errors
def snapshot_save(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Save every key of a store at one revision to a snapshot file."""
    from kstore.storage.snapshot import save_snapshot

    backend, where = _snapshot_store(args)
    if backend == "lmdb":
        from kstore.storage.lmdb import LmdbSnapshotSource

        info = save_snapshot(args.file, LmdbSnapshotSource(where))
    else:
        from kstore.storage.etcd import EtcdSnapshotSource

        with EtcdSnapshotSource(where) as source:
            info = save_snapshot(args.file, source)
    stdout.write(
        f"saved {info.entries} keys at revision {info.revision} to {info.path} "
        f"({info.size} bytes)\n".encode()
    )


@_file_errors
def snapshot_status(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Check a snapshot file whole and print what it holds."""
    from kstore.storage.snapshot import verify_snapshot

    _print_snapshot(verify_snapshot(args.file), args.output, stdout)


@_file_errors
def snapshot_restore(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Restore a snapshot file into an empty store (any store with --force)."""
    from kstore.storage.snapshot import restore_snapshot

    backend, where = _snapshot_store(args)
    target: Any
    if backend == "lmdb":
        from kstore.storage.lmdb import LmdbSnapshotTarget

        target = LmdbSnapshotTarget(where)
    else:
        from kstore.storage.etcd import EtcdSnapshotTarget

        target = EtcdSnapshotTarget(where)
    with target:
        info, revision = restore_snapshot(args.file, target, force=args.force)
    stdout.write(
        f"restored {info.entries} keys from {info.path} (revision {info.revision}) into "
        f"{backend}; the store is at revision {revision}\n".encode()
    )


def _add_snapshot_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    snap = verbs.add_parser("snapshot", help="save, check and restore snapshots of a store")
    actions = snap.add_subparsers(dest="action", required=True, metavar="ACTION")

    def store_flags(p: argparse.ArgumentParser) -> None:
        p.add_argument("file", metavar="FILE", help="the snapshot file")
        p.add_argument("--data-dir", default="kstore-data", help="LMDB directory (lmdb backend)")
        p.add_argument(
            "--storage-backend",
            choices=["lmdb", "etcd"],
            default="",
            help="the store's backend (default: etcd when --etcd-servers is given, else lmdb)",
        )
        p.add_argument(
            "--etcd-servers", default="", help="comma-separated etcd URLs (etcd backend)"
        )
        p.add_argument("--etcd-prefix", default="/registry", help="key prefix in etcd")

    p = actions.add_parser(
        "save",
        help="save every key of a store at one revision to FILE",
        description=(
            "Copy every key of the store, as stored (encrypted values stay encrypted), with "
            "its TTL left, at one revision, into FILE. On LMDB it runs beside a kstore serve "
            "on the same directory without stopping its writes; on etcd it reads the prefix "
            "at one revision."
        ),
    )
    store_flags(p)
    p.set_defaults(run=snapshot_save)
    p = actions.add_parser(
        "status",
        help="check FILE and print its revision, size and keys per resource",
        description="Read FILE whole, check its checksum, and print what it holds.",
    )
    p.add_argument("file", metavar="FILE", help="the snapshot file")
    p.add_argument("-o", "--output", choices=["text", "json"], default="text")
    p.set_defaults(run=snapshot_status)
    p = actions.add_parser(
        "restore",
        help="restore FILE into an empty store",
        description=(
            "Check FILE whole, then write its keys into an empty LMDB directory (stop kstore "
            "serve first: the store is locked) or an empty etcd prefix. On LMDB the "
            "resourceVersions are kept; on etcd they are etcd's new revisions, and etcd is "
            "compacted at the end so that older resourceVersions get 410 and clients re-list."
        ),
    )
    store_flags(p)
    p.add_argument("--force", action="store_true", help="replace what the target store holds")
    p.set_defaults(run=snapshot_restore)


def _add_storage_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", default="kstore-data", help="LMDB directory (lmdb backend)")
    p.add_argument("--storage-backend", choices=["lmdb", "etcd"], default="lmdb")
    p.add_argument("--etcd-servers", default="", help="comma-separated etcd URLs (etcd backend)")
    p.add_argument("--etcd-prefix", default="/registry", help="key prefix in etcd")
    p.add_argument(
        "--storage-media-type",
        default="application/json",
        choices=["application/json", "application/vnd.kubernetes.protobuf"],
        help="encoding of stored objects",
    )
    p.add_argument(
        "--runtime-config",
        default="",
        help="enable or disable API versions, e.g. apps/v1beta1=false,api/alpha=true",
    )


def _add_encryption_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    enc = verbs.add_parser("encryption", help="encryption at rest: admin verbs")
    actions = enc.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = actions.add_parser(
        "rewrite",
        help="re-encrypt every object with the current first key",
        description=(
            "Read every object of the resources the EncryptionConfiguration names and write "
            "back those stored with an older key or provider. On LMDB, stop kstore serve "
            "first (the store is locked); on etcd it may run beside serving. Pass the same "
            "--storage-media-type as serve."
        ),
    )
    _add_storage_flags(p)
    p.add_argument(
        "--encryption-provider-config", required=True, help="the EncryptionConfiguration file"
    )
    p.set_defaults(run=encryption_rewrite)


def _add_maintenance_parsers(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = verbs.add_parser(
        "migrate",
        help="copy a store into another backend while it keeps serving, then follow it",
        description=(
            "Copy every key of the source (a kstore.open url: lmdb:///path or "
            "etcd://host:port[,host:port]/prefix) at one revision into the empty target, "
            "then apply the source's changes since until the target has caught up. With "
            "--follow keep following until SIGINT/SIGTERM or, for an LMDB source, until its "
            "kstore serve stops (the source is then locked, caught up one last time, and the "
            "migration ends): stop the old server, then start the new one on the target."
        ),
    )
    p.add_argument("--from", dest="source", required=True, metavar="URL", help="the source")
    p.add_argument("--to", dest="target", required=True, metavar="URL", help="the target")
    p.add_argument("--force", action="store_true", help="replace what the target holds")
    p.add_argument("--follow", action="store_true", help="keep following the source (see above)")
    p.add_argument(
        "--verify",
        action="store_true",
        help="compare both stores object by object at the end; exit 1 on any difference",
    )
    p.add_argument(
        "--work-dir",
        default="",
        help="where the copy's snapshot file is written meanwhile (default: the temp dir)",
    )
    p.set_defaults(run=migrate)

    storage = verbs.add_parser("storage", help="stored objects: admin verbs")
    actions = storage.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = actions.add_parser(
        "migrate",
        help="rewrite objects stored in an old version, media type or encryption key",
        description=(
            "Read every object and write back those whose stored bytes are not what would be "
            "stored now (storage version, --storage-media-type, encryption key), with a "
            "compare-and-swap that never overwrites a concurrent write; then set each fully "
            "migrated CRD's status.storedVersions to its storage version. Rerun it after an "
            "interruption: current objects are skipped. On LMDB stop kstore serve first."
        ),
    )
    _add_storage_flags(p)
    p.add_argument(
        "--resource",
        action="append",
        default=[],
        help="only this resource (plural or plural.group; may repeat; default: every one)",
    )
    p.add_argument(
        "--encryption-provider-config", default="", help="the EncryptionConfiguration file"
    )
    p.set_defaults(run=storage_migrate)

    p = verbs.add_parser(
        "check",
        help="decode every stored value; counts per resource",
        description=(
            "Read every stored key and decode its value through its resource's transformer "
            "and codec (as serve would, with the same flags); report values that do not "
            "decode and keys outside the layout. Exit 1 on any. On LMDB stop kstore serve "
            "first."
        ),
    )
    _add_storage_flags(p)
    p.add_argument(
        "--encryption-provider-config", default="", help="the EncryptionConfiguration file"
    )
    p.set_defaults(run=check)

    p = verbs.add_parser(
        "defrag",
        help="compact a store's files",
        description=(
            "LMDB: copy the store with compaction beside it and swap the copy in (refused "
            "while kstore serve holds the directory). etcd: defragment each member in turn."
        ),
    )
    p.add_argument("--data-dir", default="kstore-data", help="LMDB directory (lmdb backend)")
    p.add_argument("--storage-backend", choices=["lmdb", "etcd"], default="")
    p.add_argument("--etcd-servers", default="", help="comma-separated etcd URLs (etcd backend)")
    p.add_argument("--etcd-prefix", default="/registry", help="key prefix in etcd")
    p.set_defaults(run=_file_errors(defrag))


def _flag_bool(value: str) -> bool:
    if value.lower() in ("true", "1", "t"):
        return True
    if value.lower() in ("false", "0", "f"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean {value!r}")


def _cpu_count() -> int:
    """The CPUs this process may run on."""
    import os

    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _add_serve_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = verbs.add_parser(
        "serve",
        help="serve the Kubernetes REST API (kubectl and client libraries work against it)",
        description="Serve the Kubernetes REST API over HTTP or HTTPS; flags as kube-apiserver's.",
    )
    p.add_argument("--bind-address", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=int, default=8080, help="port to listen on (0: any free one)")
    p.add_argument(
        "--advertise-address",
        default="",
        help="the address the kubernetes Service's endpoints give for this server "
        "(default: the bind address; 127.0.0.1 when binding every address)",
    )
    p.add_argument(
        "--endpoint-reconciler-type",
        default="lease",
        choices=("lease", "none"),
        help="lease: each server keeps its address in the kubernetes Service's endpoints "
        "through a Lease of its own; none: the endpoints are not kept",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=_cpu_count(),
        help="server processes sharing the port and the store (default: the CPU count; "
        "1: this process alone)",
    )
    _add_storage_flags(p)
    p.add_argument(
        "--watch-cache",
        type=_flag_bool,
        nargs="?",
        const=True,
        default=True,
        help="serve reads and watches from the watch cache (default true)",
    )
    p.add_argument("--event-ttl", default="1h", help="how long Events are kept (Go duration)")
    p.add_argument(
        "--service-cluster-ip-range",
        default="10.0.0.0/24",
        help="CIDR Services' cluster IPs are allocated from (two of different families: a,b)",
    )
    p.add_argument(
        "--service-node-port-range",
        default="30000-32767",
        help="node ports of NodePort and LoadBalancer Services (low-high, both inclusive)",
    )
    p.add_argument(
        "--etcd-compaction-interval",
        default="5m",
        help="how often storage history is compacted, on either backend (Go duration; 0: never)",
    )
    p.add_argument(
        "--encryption-provider-config",
        default="",
        help="EncryptionConfiguration file: resources encrypted at rest "
        "(aescbc, aesgcm, secretbox, identity; kms is not supported)",
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="info logs every write and error, debug every request",
    )
    p.add_argument(
        "-v",
        "--v",
        dest="v",
        type=_non_negative_int,
        default=0,
        help="request log verbosity, as kube-apiserver's -v: 2 and above log every request "
        "(verb, URI, latency, user agent, source, code) at info level",
    )
    p.add_argument(
        "--max-requests-inflight",
        type=_non_negative_int,
        default=400,
        help="most non-mutating requests served at once; more get 429 (0: no limit)",
    )
    p.add_argument(
        "--max-mutating-requests-inflight",
        type=_non_negative_int,
        default=200,
        help="most mutating requests served at once; more get 429 (0: no limit)",
    )
    p.add_argument(
        "--request-timeout",
        default="1m0s",
        help="longest a non-long-running request may take before it gets 504 (Go duration)",
    )
    p.add_argument(
        "--cors-allowed-origins",
        default="",
        help="comma-separated regular expressions of origins allowed by CORS (empty: off)",
    )
    p.add_argument(
        "--audit-log-path",
        default="",
        help="append one audit.k8s.io/v1 Event (Metadata level) per request to this file "
        "('-': stdout; empty: no audit log)",
    )
    p.add_argument(
        "--tls-cert-file",
        default="",
        help="PEM certificate (chain) to serve HTTPS with, TLS 1.2 at least (with "
        "--tls-private-key-file; then --secure-port is served instead of --port)",
    )
    p.add_argument("--tls-private-key-file", default="", help="PEM private key of --tls-cert-file")
    p.add_argument(
        "--controllers",
        default="*",
        help="comma-separated controllers to run, as kube-controller-manager's: '*' every one "
        "(garbagecollector, root-ca-cert-publisher, serviceaccount, ...), 'name' turns one on, "
        "'-name' off",
    )
    p.add_argument(
        "--root-ca-file",
        default="",
        help="PEM CA published as ca.crt in every namespace's kube-root-ca.crt ConfigMap "
        "(default: the last certificate of --tls-cert-file; without either none is published)",
    )
    p.add_argument(
        "--leader-elect-lease-duration",
        default="15s",
        help="how long the controllers' leader lease lasts without a renewal (Go duration)",
    )
    p.add_argument(
        "--leader-elect-renew-deadline",
        default="10s",
        help="how long the leader keeps trying to renew before it stops leading (Go duration)",
    )
    p.add_argument(
        "--leader-elect-retry-period",
        default="2s",
        help="how often the lease is tried for or renewed (Go duration)",
    )
    p.add_argument(
        "--secure-port",
        type=int,
        default=6443,
        help="HTTPS port when serving TLS (0: any free one)",
    )
    p.add_argument(
        "--token-auth-file",
        default="",
        help='CSV file of bearer tokens: token,user,uid[,"group1,group2"] (empty: none)',
    )
    p.add_argument(
        "--anonymous-auth",
        type=_flag_bool,
        nargs="?",
        const=True,
        default=True,
        help="requests without credentials are system:anonymous (true) or refused with 401",
    )
    p.add_argument(
        "--service-account-signing-key-file",
        default="",
        help="PEM private key (RSA or P-256) that signs service-account tokens (empty: "
        "service-account.key in --data-dir, made on first start)",
    )
    p.add_argument(
        "--service-account-key-file",
        action="append",
        default=[],
        help="PEM file of keys that verify service-account tokens (may repeat; none: the "
        "signing key)",
    )
    p.add_argument(
        "--service-account-issuer",
        action="append",
        default=[],
        help="issuer of service-account tokens (may repeat: the first issues, all are "
        "accepted; none: https://kubernetes.default.svc.cluster.local)",
    )
    p.add_argument(
        "--api-audiences",
        default="",
        help="comma-separated audiences service-account tokens must name (empty: the issuer)",
    )
    p.add_argument(
        "--service-account-max-token-expiration",
        default="0s",
        help="longest lifetime a TokenRequest is granted (0s: no cap)",
    )
    p.add_argument(
        "--authorization-mode",
        default="AlwaysAllow",
        help="comma-separated authorizers in order: AlwaysAllow, AlwaysDeny, RBAC",
    )
    p.add_argument(
        "--enable-admission-plugins",
        default="",
        help="comma-separated admission plugins to run besides the default-on ones "
        "(kube-apiserver's names)",
    )
    p.add_argument(
        "--disable-admission-plugins",
        default="",
        help="comma-separated admission plugins not to run, default-on ones included",
    )
    p.add_argument(
        "--admission-control-config-file",
        default="",
        metavar="FILE",
        help="kube-apiserver's AdmissionConfiguration file: the admission plugins' "
        "configuration (kstore reads PodSecurity's)",
    )
    p.add_argument(
        "--webhook-service-resolver",
        action="append",
        default=[],
        metavar="NAMESPACE/NAME=HOST:PORT",
        help="where to reach a service that a webhook configuration names (repeatable or "
        "comma-separated); without a rule a service is reached at its clusterIP",
    )
    p.add_argument(
        "--conversion-webhook-timeout",
        default="30s",
        help="how long a CRD conversion webhook call may take (Go duration; kube-apiserver "
        "gives 30s)",
    )
    p.set_defaults(run=serve)


def _names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {value}")
    return value


def _load_through_client(
    url: str, namespace: str, resource: str, objects: Iterator[dict[str, Any]]
) -> None:
    """Fill the store at ``url`` through the embedding API (``kstore bench memory``)."""
    import kstore

    with kstore.open(url, controllers=()) as client:
        client.resource("v1", "namespaces").create({"metadata": {"name": namespace}})
        # The ServiceAccount admission plugin wants the namespace's default account for Pods.
        accounts = client.resource("v1", "serviceaccounts", namespace=namespace)
        accounts.create({"metadata": {"name": "default"}})
        target = client.resource("v1", resource, namespace=namespace)
        for obj in objects:
            target.create(obj)


def bench(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Run one benchmark and print its table (medians and ratios against the raw backend)."""
    if args.subject == "rest" and args.workers:
        from kstore.benchmarks.workers import run_workers_bench

        report = run_workers_bench(
            workers=args.workers,
            clients=args.writers or 16,
            requests=args.requests,
            repeats=args.repeats,
            kind="configmap" if args.kind == "custom" else args.kind,
        ).report()
    elif args.subject == "rest":
        from kstore.benchmarks.rest import run_rest_bench

        result = run_rest_bench(
            clients=args.writers or 16,
            requests=args.requests,
            repeats=args.repeats,
            kind=args.kind,
            admission_plugins=not args.no_admission_plugins,
            plugins_compare=args.compare_admission_plugins,
            policy=args.policy,
            webhook=args.webhook,
            map_policy=args.map,
            controllers=args.controllers,
        )
        report = result.report()
    elif args.subject == "memory" and args.workers:
        from kstore.benchmarks.memory import run_workers_memory_bench

        report = run_workers_memory_bench(
            _load_through_client, workers=args.workers, count=args.objects
        ).report()
    elif args.subject == "memory":
        from kstore.benchmarks.memory import run_memory_bench

        report = run_memory_bench(_load_through_client, count=args.objects).report()
    elif args.subject == "watch":
        from kstore.benchmarks.watch import run_watch_bench

        report = run_watch_bench(
            duration=args.duration,
            durable=not args.non_durable,
            gc_policy=not args.default_gc,
            list_objects=args.objects,
        )
    elif args.backend == "etcd":
        from kstore.benchmarks.etcd import run_etcd_bench

        endpoints = args.etcd_servers.split(",") if args.etcd_servers else None
        report = run_etcd_bench(
            endpoints, objects=args.objects, writers=args.writers or 32, repeats=args.repeats
        )
    elif args.backend == "lmdb":
        from kstore.benchmarks.storage import run_storage_bench

        report = run_storage_bench(
            "lmdb", objects=args.objects, writers=args.writers or 16, repeats=args.repeats
        )
    else:
        raise BadRequest(f"unknown storage backend {args.backend!r} (known: lmdb, etcd)")
    stdout.write(report.encode() + b"\n")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kstore", description="A versioned object store engine for control planes."
    )
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    conv = verbs.add_parser(
        "convert",
        help="convert an object between API versions (like kubectl convert)",
        description=(
            "Read one object (JSON, YAML or Kubernetes protobuf, detected from the content), "
            "convert it through its kind's hub version and print it in the requested version. "
            "Neither defaults nor validates unless --validate is given."
        ),
    )
    conv.add_argument("-f", "--filename", required=True, help="the input file, or - for stdin")
    conv.add_argument(
        "--output-version",
        metavar="GROUP/VERSION",
        help="the version to print (default: the input's own)",
    )
    conv.add_argument(
        "-o",
        "--output",
        choices=sorted(_OUTPUT_MEDIA_TYPES),
        help="output format (default: the input's; json for protobuf input)",
    )
    conv.add_argument(
        "--validate", action="store_true", help="apply defaults and validate the object"
    )
    conv.set_defaults(run=convert)

    bench_parser = verbs.add_parser(
        "bench",
        help="run a benchmark beside the raw backend and print a table",
        description="Measure kstore beside the raw engine under it, in the same run.",
    )
    bench_parser.add_argument(
        "subject", choices=["storage", "watch", "rest", "memory"], help="what to measure"
    )
    bench_parser.add_argument(
        "--backend", default="lmdb", choices=["lmdb", "etcd"], help="storage backend (storage)"
    )
    bench_parser.add_argument(
        "--etcd-servers",
        default="",
        help="etcd endpoints for --backend etcd (default: start a throwaway local member)",
    )
    bench_parser.add_argument(
        "--objects",
        type=int,
        default=10_000,
        help="objects to list (storage, watch) or to cache, of each shape (memory)",
    )
    bench_parser.add_argument(
        "--writers",
        type=_positive_int,
        default=0,
        help="concurrent creators (storage; default 16 on lmdb, 32 on etcd) "
        "or clients (rest; default 16)",
    )
    bench_parser.add_argument("--repeats", type=int, default=3, help="runs per figure (median)")
    bench_parser.add_argument(
        "--no-admission-plugins",
        action="store_true",
        help="serve with every admission plugin off, for the figure without them (rest)",
    )
    bench_parser.add_argument(
        "--compare-admission-plugins",
        action="store_true",
        help="also create on a second server with every admission plugin off, in the same "
        "rounds, and compare (rest)",
    )
    bench_parser.add_argument(
        "--requests", type=int, default=2000, help="requests per figure and round (rest)"
    )
    bench_parser.add_argument(
        "--policy",
        action="store_true",
        help="also create through one ValidatingAdmissionPolicy of three validations and "
        "compare (rest; pod or configmap)",
    )
    bench_parser.add_argument(
        "--map",
        action="store_true",
        help="also create through one MutatingAdmissionPolicy of one ApplyConfiguration "
        "mutation and compare (rest; pod or configmap)",
    )
    bench_parser.add_argument(
        "--webhook",
        action="store_true",
        help="also create through one no-op mutating admission webhook and compare "
        "(rest; pod or configmap)",
    )
    bench_parser.add_argument(
        "--controllers",
        default="*",
        help="the served controllers, as kstore serve's --controllers (rest): e.g. "
        "'*,-garbagecollector' for the figure without the garbage collector",
    )
    bench_parser.add_argument(
        "--kind",
        default="pod",
        choices=["pod", "configmap", "custom"],
        help="object created (rest): a ~5 KiB Pod, a small ConfigMap, or a custom resource "
        "whose CRD has 20 CEL rules (measured beside ConfigMap creates)",
    )
    bench_parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="compare a server of this many worker processes with one, in the same run: "
        "creates, gets, watch delivery latency (rest); memory of the workers together "
        "(memory)",
    )
    bench_parser.add_argument(
        "--duration", type=float, default=5.0, help="seconds per fan-out scenario (watch)"
    )
    bench_parser.add_argument(
        "--non-durable", action="store_true", help="write without fsync (watch)"
    )
    bench_parser.add_argument(
        "--default-gc",
        action="store_true",
        help="leave Python's garbage collector as it is (watch)",
    )
    bench_parser.set_defaults(run=bench)
    _add_serve_parser(verbs)
    _add_encryption_parser(verbs)
    _add_snapshot_parser(verbs)
    _add_maintenance_parsers(verbs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        args.run(args, sys.stdin.buffer, sys.stdout.buffer)
    except KStoreError as exc:
        print(f"error: {' '.join(exc.message.split())}", file=sys.stderr)
        return 1
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
